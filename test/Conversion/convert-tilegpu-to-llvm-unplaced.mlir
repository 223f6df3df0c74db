// RUN: tile-opt %s -split-input-file -verify-diagnostics -convert-tilegpu-to-llvm

// convert-tilegpu-to-llvm lowers what the passes before it decided, and
// decides nothing itself: without their attributes it stops, naming the
// pass to run (tilegpu-allocate-shared-memory, tilegpu-place-barriers).

// expected-error @below {{convert-tilegpu-to-llvm needs the shared memory tilegpu-allocate-shared-memory places (run it first): the module has no tilegpu.shared_bytes}}
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @nothing_placed() attributes {tile.kernel} {
    return
  }
}

// -----

#b = #tilegpu.blocked<sizePerThread = [1, 2], threadsPerWarp = [16, 2], warpsPerCTA = [1, 1], order = [1, 0]>
#s = #tilegpu.shared<vec = 8, perPhase = 8, maxPhase = 1, order = [1, 0]>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.shared_bytes = 512 : i64, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @buffer_not_placed(%x: tensor<32x8xf16, #b>) {
    // expected-error @below {{convert-tilegpu-to-llvm needs the shared memory tilegpu-allocate-shared-memory places (run it first): this op has no tilegpu.allocation_offset}}
    %a = tilegpu.local_alloc %x : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
    return
  }
}

// -----

#b = #tilegpu.blocked<sizePerThread = [1, 2], threadsPerWarp = [16, 2], warpsPerCTA = [1, 1], order = [1, 0]>
#s = #tilegpu.shared<vec = 8, perPhase = 8, maxPhase = 1, order = [1, 0]>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.shared_bytes = 256 : i64, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @placed_past_the_total(%x: tensor<32x8xf16, #b>) {
    // expected-error @below {{convert-tilegpu-to-llvm needs the shared memory tilegpu-allocate-shared-memory places (run it first): its 512 bytes at tilegpu.allocation_offset = 0 pass the module's tilegpu.shared_bytes = 256}}
    %a = tilegpu.local_alloc %x {tilegpu.allocation_offset = 0 : i64} : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
    return
  }
}

// -----

#b = #tilegpu.blocked<sizePerThread = [1, 2], threadsPerWarp = [16, 2], warpsPerCTA = [1, 1], order = [1, 0]>
#s = #tilegpu.shared<vec = 8, perPhase = 8, maxPhase = 1, order = [1, 0]>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.shared_bytes = 512 : i64, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @barrier_not_placed(%x: tensor<32x8xf16, #b>) {
    // expected-error @below {{convert-tilegpu-to-llvm needs the barriers and fences tilegpu-place-barriers places (run it first): this op has no tilegpu.leading_barrier}}
    %a = tilegpu.local_alloc %x {tilegpu.allocation_offset = 0 : i64} : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
    return
  }
}

// -----

#acc = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
#nvmma = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#kmajor = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [0, 1]>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.shared_bytes = 16384 : i64, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @fence_not_placed(%acc: tensor<64x64xf32, #acc>) -> tensor<64x64xf32, #acc> {
    %a = tilegpu.local_alloc {tilegpu.allocation_offset = 0 : i64} : !tilegpu.memdesc<64x64xf16, #nvmma>
    %b = tilegpu.local_alloc {tilegpu.allocation_offset = 8192 : i64} : !tilegpu.memdesc<64x64xf16, #kmajor>
    // expected-error @below {{convert-tilegpu-to-llvm needs the barriers and fences tilegpu-place-barriers places (run it first): this op has no tilegpu.proxy_fence}}
    %d = tilegpu.warpgroup_dot %a, %b, %acc : !tilegpu.memdesc<64x64xf16, #nvmma>, !tilegpu.memdesc<64x64xf16, #kmajor>, tensor<64x64xf32, #acc> -> tensor<64x64xf32, #acc>
    return %d : tensor<64x64xf32, #acc>
  }
}
