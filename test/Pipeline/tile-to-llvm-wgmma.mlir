// RUN: tile-opt %s -tile-to-llvm="num-warps=4" | tile-translate --emit=ptx | FileCheck %s

// On sm_90a a product goes from tile IR to Hopper's warpgroup MMA: A and B
// stored to 128-byte-swizzled shared memory, a proxy fence so the tensor
// cores see the stores, then per warpgroup one wgmma.mma_async m64n32k16 for
// each 16-deep k step (64x32x32: two), committed and waited for as one
// group. Each operand's descriptor start (its shared address in 16-byte
// units, masked to the field's bits) is computed once; the second k step
// adds to it. (tile-to-llvm-dot.mlir has the mma.sync path of sm_80.)

// CHECK: .target sm_90a
// CHECK-LABEL: .visible .entry matmul_f16(
// The warp's index shuffled from lane 0 at the entry: warp-uniform to ptxas,
// which then keeps the warpgroup's descriptors in uniform registers.
// CHECK: shfl.sync.idx.b32 {{%r[0-9]+}}, {{%r[0-9]+}}, 0, 31, -1;
// CHECK: st.shared
// CHECK: bar.sync 0
// CHECK-COUNT-2: and.b32 {{.*}}, 16320;
// CHECK-NOT: and.b32 {{.*}}, 16320;
// CHECK: fence.proxy.async.shared::cta
// CHECK: wgmma.fence.sync.aligned
// CHECK-COUNT-2: wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16
// CHECK-NOT: wgmma.mma_async
// CHECK: wgmma.commit_group.sync.aligned
// CHECK: wgmma.wait_group.sync.aligned 0
// CHECK-NOT: mma.sync
func.func @matmul_f16(%pa: !tile.ptr<f16>, %pb: !tile.ptr<f16>, %pc: !tile.ptr<f32>) attributes {tile.kernel} {
  %ra = tile.arange 0 to 64 : tensor<64xi32>
  %rk = tile.arange 0 to 32 : tensor<32xi32>
  %c32 = arith.constant dense<32> : tensor<64x1xi32>
  %row = tile.expand_dims %ra {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %rows = arith.muli %row, %c32 : tensor<64x1xi32>
  %col = tile.expand_dims %rk {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
  %rb = tile.broadcast %rows : tensor<64x1xi32> -> tensor<64x32xi32>
  %cb = tile.broadcast %col : tensor<1x32xi32> -> tensor<64x32xi32>
  %offs = arith.addi %rb, %cb : tensor<64x32xi32>
  %sa = tile.splat %pa : tensor<64x32x!tile.ptr<f16>>
  %a = tile.load %sa : tensor<64x32x!tile.ptr<f16>>
  %sb = tile.splat %pb : tensor<32x32x!tile.ptr<f16>>
  %b = tile.load %sb : tensor<32x32x!tile.ptr<f16>>
  %zero = arith.constant dense<0.0> : tensor<64x32xf32>
  %c = tile.dot %a, %b, %zero : tensor<64x32xf16>, tensor<32x32xf16> -> tensor<64x32xf32>
  %sc = tile.splat %pc : tensor<64x32x!tile.ptr<f32>>
  %pcs = tile.addptr %sc, %offs : tensor<64x32x!tile.ptr<f32>>, tensor<64x32xi32>
  tile.store %pcs, %c : tensor<64x32x!tile.ptr<f32>>
  return
}
