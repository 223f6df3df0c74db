// RUN: tile-opt %s -split-input-file -convert-tilegpu-to-llvm -verify-diagnostics

// 16 elements over 32 lanes: two threads hold each one, and only one of
// them would get the old value.
#b = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @atomic_old_values_of_copies(%p: !tile.ptr<f32>) attributes {tile.kernel} {
    %ps = tile.splat %p : tensor<16x!tile.ptr<f32>, #b>
    %ones = arith.constant dense<1.0> : tensor<16xf32, #b>
    // expected-error @below {{tile.atomic_rmw whose result is used, on a layout that holds elements more than once, is not supported on the GPU yet}}
    %old = tile.atomic_rmw add %ps, %ones : tensor<16x!tile.ptr<f32>, #b>
    tile.store %ps, %old : tensor<16x!tile.ptr<f32>, #b>
    return
  }
}
