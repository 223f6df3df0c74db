// RUN: tile-opt %s -split-input-file -tilegpu-allocate-shared-memory -verify-diagnostics

// Shared memory past what a program may use on the target could not launch:
// an error at compile time (1 MiB of buffers on sm_90a, 227 KiB at most).
#s = #tilegpu.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]>
// expected-error @below {{the kernel needs 1048576 bytes of shared memory, more than the 232448 a program may use on sm_90a: use fewer stages or smaller blocks}}
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @too_big() attributes {tile.kernel} {
    %b = tilegpu.local_alloc : !tilegpu.memdesc<4x256x256xf32, #s>
    return
  }
}

// -----

// 192 KiB fits on sm_90a, not on sm_80 (163 KiB, 166912 bytes, there).
#s = #tilegpu.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]>
// expected-error @below {{the kernel needs 196608 bytes of shared memory, more than the 166912 a program may use on sm_80}}
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_80>} {
  func.func @too_big_for_ampere() attributes {tile.kernel} {
    %b = tilegpu.local_alloc : !tilegpu.memdesc<3x128x128xf32, #s>
    return
  }
}
