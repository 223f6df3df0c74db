// MLIR 22's parser crashes (a segfault in its dense-array parser) on a
// dense array of index elements; found by scripts/fuzz.py ir. Every tool
// that reads IR refuses it first, with a located error and exit status 1.
// RUN: not tile-opt %s 2>&1 | FileCheck %s
// RUN: not tile-translate --emit=ptx %s 2>&1 | FileCheck %s
// CHECK: parser-hazards.mlir:11:31: error: dense arrays of 'index' elements are not supported (MLIR's parser cannot read them): use i32 or i64
// CHECK-NOT: Stack dump
func.func @f(%x: tensor<64x32xf16>) -> tensor<32x64xf16> {
  // The array below is what the fuzzer made of tile.trans's order.
  %0 = tile.trans %x {order = array<i32: 1, 0>} : tensor<64x32xf16> -> tensor<32x64xf16>
  %1 = tile.trans %0 {order = array<index: 1, 0>} : tensor<32x64xf16> -> tensor<64x32xf16>
  %2 = tile.trans %1 {order = array<i32: 1, 0>} : tensor<64x32xf16> -> tensor<32x64xf16>
  return %2 : tensor<32x64xf16>
}
