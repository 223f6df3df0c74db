// RUN: tile-opt %s -tile-to-llvm="num-warps=1" | FileCheck %s --check-prefix=LLVM
// RUN: tile-opt %s -tile-to-llvm="num-warps=1" | tile-translate --emit=ptx | FileCheck %s

// The math functions the GPU has no instruction for (tl.erf and
// libdevice's erfc, atan, ...; log1p and expm1 too) become approximations in
// fp32 (fp16 widened and narrowed around them): no math op and no call of
// a libm function is left.

// LLVM-NOT: math.
// LLVM-NOT: llvm.call @
// LLVM-NOT: llvm.intr.{{erf|log|expm1|atan|asin|acos|cbrt}}
// CHECK: .visible .entry approximated_kernel(
// CHECK-NOT: call
// CHECK: cvt.f32.f16
// CHECK: cvt.rn.f16.f32
// CHECK: ret;
func.func @approximated_kernel(%x: !tile.ptr<f32>, %h: !tile.ptr<f16>) attributes {tile.kernel} {
  %cols = tile.arange 0 to 32 : tensor<32xi32>
  %xs = tile.splat %x : tensor<32x!tile.ptr<f32>>
  %xp = tile.addptr %xs, %cols : tensor<32x!tile.ptr<f32>>, tensor<32xi32>
  %v = tile.load %xp : tensor<32x!tile.ptr<f32>>
  %a = math.erf %v : tensor<32xf32>
  %b = math.erfc %a : tensor<32xf32>
  %c = math.log1p %b : tensor<32xf32>
  %d = math.expm1 %c : tensor<32xf32>
  %e = math.atan %d : tensor<32xf32>
  %f = math.atan2 %e, %v : tensor<32xf32>
  %g = math.asin %f : tensor<32xf32>
  %i = math.acos %g : tensor<32xf32>
  %j = math.cbrt %i : tensor<32xf32>
  tile.store %xp, %j : tensor<32x!tile.ptr<f32>>
  %hs = tile.splat %h : tensor<32x!tile.ptr<f16>>
  %hp = tile.addptr %hs, %cols : tensor<32x!tile.ptr<f16>>, tensor<32xi32>
  %w = tile.load %hp : tensor<32x!tile.ptr<f16>>
  %u = math.erf %w : tensor<32xf16>
  tile.store %hp, %u : tensor<32x!tile.ptr<f16>>
  return
}
