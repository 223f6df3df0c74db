// RUN: tile-opt %s -inline -symbol-dce | FileCheck %s

// Helpers called from a kernel inline into it, tile ops included, and the
// helpers left unused disappear.

func.func private @scaled_exp2(%x: tensor<64xf32>, %scale: f32) -> tensor<64xf32> {
  %s = tile.splat %scale : tensor<64xf32>
  %y = arith.mulf %x, %s : tensor<64xf32>
  %e = tile.exp2 %y : tensor<64xf32>
  return %e : tensor<64xf32>
}

// CHECK-NOT: func.func private @scaled_exp2
// CHECK-LABEL: func.func @kernel
// CHECK-NOT: call
// CHECK: tile.splat
// CHECK: arith.mulf
// CHECK: tile.exp2
// CHECK: tile.store
func.func @kernel(%p: !tile.ptr<f32>, %scale: f32) attributes {tile.kernel} {
  %r = tile.arange 0 to 64 : tensor<64xi32>
  %ps = tile.splat %p : tensor<64x!tile.ptr<f32>>
  %ptrs = tile.addptr %ps, %r : tensor<64x!tile.ptr<f32>>, tensor<64xi32>
  %x = tile.load %ptrs : tensor<64x!tile.ptr<f32>>
  %y = func.call @scaled_exp2(%x, %scale) : (tensor<64xf32>, f32) -> tensor<64xf32>
  tile.store %ptrs, %y : tensor<64x!tile.ptr<f32>>
  return
}
