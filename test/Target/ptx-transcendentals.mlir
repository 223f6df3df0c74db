// RUN: tile-opt %s -tile-to-llvm="num-warps=1" | tile-translate --emit=ptx | FileCheck %s

// tl.tanh reaches PTX as the one-instruction approximation (llvm.tanh with
// afn), in fp32 and, widened and narrowed around it, in fp16; tl.sin and
// tl.cos as sin.approx / cos.approx after a reduction of the argument by
// 2pi (round to the nearest turn, subtract it in two parts).

// CHECK: .visible .entry tanh_kernel(
// CHECK: tanh.approx.f32
// CHECK: cvt.f32.f16
// CHECK: tanh.approx.f32
// CHECK: cvt.rn.f16.f32
// CHECK: cvt.rni.f32.f32
// CHECK: sin.approx.f32
// CHECK: cvt.rni.f32.f32
// CHECK: cos.approx.f32
func.func @tanh_kernel(%x: !tile.ptr<f32>, %h: !tile.ptr<f16>) attributes {tile.kernel} {
  %cols = tile.arange 0 to 32 : tensor<32xi32>
  %xs = tile.splat %x : tensor<32x!tile.ptr<f32>>
  %xp = tile.addptr %xs, %cols : tensor<32x!tile.ptr<f32>>, tensor<32xi32>
  %v = tile.load %xp : tensor<32x!tile.ptr<f32>>
  %t = math.tanh %v : tensor<32xf32>
  tile.store %xp, %t : tensor<32x!tile.ptr<f32>>
  %hs = tile.splat %h : tensor<32x!tile.ptr<f16>>
  %hp = tile.addptr %hs, %cols : tensor<32x!tile.ptr<f16>>, tensor<32xi32>
  %w = tile.load %hp : tensor<32x!tile.ptr<f16>>
  %u = math.tanh %w : tensor<32xf16>
  tile.store %hp, %u : tensor<32x!tile.ptr<f16>>
  %s = math.sin %t : tensor<32xf32>
  %c = math.cos %s : tensor<32xf32>
  tile.store %xp, %c : tensor<32x!tile.ptr<f32>>
  return
}
