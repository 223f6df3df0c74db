// RUN: tile-opt %s -tile-to-llvm="num-warps=8" | tile-translate --emit=ptx | FileCheck %s
// RUN: rm -rf %t && tile-compile %s --emit=ptx --options="num-warps=8" --name block_products --out-dir %t
// RUN: FileCheck %s --check-prefix=JSON < %t/block_products.json
// RUN: tile-opt %s -tile-to-llvm="num-warps=8 tma=false" | tile-translate --emit=ptx | FileCheck %s --check-prefix=ATOMIC

// desc.atomic_add of a product in a loop (tile.atomic_rmw_block on a block
// pointer made for it) on sm_90a: the pointer takes the accumulator's
// layout (no conversion through shared memory), and each warp, with no
// barrier among warps, waits until the TMA has read its previous box,
// writes its 16 x 64 box, fences, and its lane 0 has the TMA add the box,
// one 128-byte span at a time; after the loop every thread waits for the
// reads, then a barrier. Without the TMA, red.global adds each element.

// CHECK-LABEL: .visible .entry block_products(
// CHECK: wgmma.mma_async
// CHECK: cp.async.bulk.wait_group.read 0;
// CHECK-NEXT: bar.warp.sync -1;
// CHECK-COUNT-16: st.shared.v2.b32
// CHECK-NEXT: fence.proxy.async.shared::cta;
// CHECK-NEXT: bar.warp.sync -1;
// CHECK: cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group
// CHECK-NEXT: cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group
// CHECK-NEXT: cp.async.bulk.commit_group;
// CHECK: cp.async.bulk.wait_group.read 0;
// CHECK-NEXT: bar.sync 0;
// CHECK-NOT: red.global

// JSON: "tensormaps": [
// JSON: "base": "OUT",
// JSON-NEXT: "box": [
// JSON-NEXT: 32,
// JSON-NEXT: 16
// JSON-NEXT: ],

// ATOMIC-LABEL: .visible .entry block_products(
// ATOMIC-NOT: cp.reduce.async.bulk
// ATOMIC: red.global.add.f32
// ATOMIC-NOT: st.shared

module attributes {tile.metadata = {"kernel" = "block_products"}} {
  func.func @block_products(%A: !tile.ptr<f16> {tile.divisibility = 16 : i32} loc("A"), %B: !tile.ptr<f16> {tile.divisibility = 16 : i32} loc("B"), %OUT: !tile.ptr<f32> {tile.divisibility = 16 : i32} loc("OUT"), %M: i32 {tile.divisibility = 16 : i32} loc("M"), %N: i32 {tile.divisibility = 16 : i32} loc("N"), %STEPS: i32 loc("STEPS")) attributes {tile.kernel} {
    %m = arith.extsi %M : i32 to i64
    %n = arith.extsi %N : i32 to i64
    %c1 = arith.constant 1 : i64
    %c64 = arith.constant 64 : i64
    %c128 = arith.constant 128 : i64
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %c64_i32 = arith.constant 64 : i32
    %bp = tile.make_block_ptr %B, [%c64, %c128], [%c128, %c1], [%c0_i32, %c0_i32] order [1, 0] : !tile.block_ptr<tensor<64x128xf16>>
    %b = tile.load_block %bp : !tile.block_ptr<tensor<64x128xf16>>
    %zero = arith.constant dense<0.0> : tensor<64x128xf32>
    scf.for %step = %c0_i32 to %STEPS step %c1_i32 : i32 {
      %row = arith.muli %step, %c64_i32 : i32
      %ap = tile.make_block_ptr %A, [%m, %c64], [%c64, %c1], [%row, %c0_i32] order [1, 0] : !tile.block_ptr<tensor<64x64xf16>>
      %a = tile.load_block %ap boundary_check [0] : !tile.block_ptr<tensor<64x64xf16>>
      %prod = tile.dot %a, %b, %zero : tensor<64x64xf16>, tensor<64x128xf16> -> tensor<64x128xf32>
      %op = tile.make_block_ptr %OUT, [%m, %n], [%n, %c1], [%row, %c0_i32] order [1, 0] : !tile.block_ptr<tensor<64x128xf32>>
      tile.atomic_rmw_block add %op, %prod : !tile.block_ptr<tensor<64x128xf32>>
    }
    return
  }
}
