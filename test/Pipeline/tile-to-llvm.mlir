// RUN: tile-opt %s -tile-to-llvm="num-warps=2" | FileCheck %s

// The named pipeline takes tile kernels, helpers included, to LLVM + NVVM
// only: no tile, tilegpu, arith, scf or func op survives.

// CHECK-NOT: tile.
// CHECK-NOT: scf.
// CHECK-NOT: func.
// CHECK-LABEL: llvm.func @scaled_copy
// CHECK-SAME: nvvm.maxntid = array<i32: 64, 1, 1>
// CHECK: llvm.cond_br
// CHECK-NOT: tile.
// CHECK-NOT: arith.

func.func private @scale(%x: tensor<64xf32>, %s: f32) -> tensor<64xf32> {
  %ss = tile.splat %s : tensor<64xf32>
  %y = arith.mulf %x, %ss : tensor<64xf32>
  return %y : tensor<64xf32>
}

func.func @scaled_copy(%src: !tile.ptr<f32>, %dst: !tile.ptr<f32>, %n: i32, %s: f32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c64 = arith.constant 64 : i32
  scf.for %i = %c0 to %n step %c64 : i32 {
    %r = tile.arange 0 to 64 : tensor<64xi32>
    %is = tile.splat %i : tensor<64xi32>
    %offs = arith.addi %is, %r : tensor<64xi32>
    %ns = tile.splat %n : tensor<64xi32>
    %mask = arith.cmpi slt, %offs, %ns : tensor<64xi32>
    %ps = tile.splat %src : tensor<64x!tile.ptr<f32>>
    %p = tile.addptr %ps, %offs : tensor<64x!tile.ptr<f32>>, tensor<64xi32>
    %x = tile.load %p mask %mask : tensor<64x!tile.ptr<f32>>
    %y = func.call @scale(%x, %s) : (tensor<64xf32>, f32) -> tensor<64xf32>
    %qs = tile.splat %dst : tensor<64x!tile.ptr<f32>>
    %q = tile.addptr %qs, %offs : tensor<64x!tile.ptr<f32>>, tensor<64xi32>
    tile.store %q, %y mask %mask : tensor<64x!tile.ptr<f32>>
  }
  return
}
