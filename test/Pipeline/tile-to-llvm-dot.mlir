// RUN: not tile-opt %s -tile-to-llvm 2>&1 | FileCheck %s

// Until the tensor-core lowering exists, a dot is a clear error, never
// scalar multiply-add loops.


// CHECK: error: tile.dot lowers to tensor-core instructions only, and that lowering (mma.sync / wgmma) is not implemented yet
func.func @matmul(%x: f16, %p: !tile.ptr<f32>) attributes {tile.kernel} {
  %a = tile.splat %x : tensor<16x16xf16>
  %c = arith.constant dense<0.0> : tensor<16x16xf32>
  %d = tile.dot %a, %a, %c : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
  %s = tile.reduce sum %d axis 0 : tensor<16x16xf32> -> tensor<16xf32>
  %t = tile.reduce sum %s axis 0 : tensor<16xf32> -> f32
  tile.store %p, %t : !tile.ptr<f32>
  return
}
