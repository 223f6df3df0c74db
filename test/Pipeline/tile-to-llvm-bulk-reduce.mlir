// RUN: tile-opt %s -tile-to-llvm="num-warps=8 bulk-reductions=true" | tile-translate --emit=ptx | FileCheck %s
// RUN: tile-opt %s -tile-to-llvm="num-warps=8" | tile-translate --emit=ptx | FileCheck %s --check-prefix=ATOMIC

// tl.atomic_add of a product in a loop, through pointers that cover a
// 64 x 128 block once each (the attention backward's DQ_ACC order: rows in
// groups of 8, each group's 8 x 8 tiles in turn), with bulk-reductions on
// sm_90a: each warp, alone, waits until its previous reductions have read
// the buffer, writes its elements in the block's order (16 stores of two),
// fences, and its lane 0 adds its two runs of 2 KiB (16 rows, its
// warpgroup's 64 columns); after the loop every thread waits for the
// reads, then a barrier. With the column halves outermost (@halves) a
// warpgroup's elements are one run of 16 KiB: its warps write between two
// barriers of the warpgroup (bar.sync 1 + warpgroup, 128 threads) and one
// thread adds it. Without the option, red.global adds each pair.

// CHECK-LABEL: .visible .entry dq_order(
// CHECK: wgmma.mma_async
// CHECK: cp.async.bulk.wait_group.read 0;
// CHECK: bar.warp.sync -1;
// CHECK-COUNT-16: st.shared.v2.b32
// CHECK-NEXT: fence.proxy.async.shared::cta;
// CHECK-NEXT: bar.warp.sync -1;
// CHECK: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%rd{{[0-9]+}}], [%r{{[0-9]+}}], 2048;
// CHECK: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%rd{{[0-9]+}}], [%r{{[0-9]+}}], 2048;
// CHECK: cp.async.bulk.commit_group;
// CHECK: cp.async.bulk.wait_group.read 0;
// CHECK-NEXT: bar.sync 0;
// CHECK-NOT: red.global
// CHECK-LABEL: .visible .entry halves(
// CHECK: cp.async.bulk.wait_group.read 0;
// CHECK: bar.sync %r{{[0-9]+}}, 128;
// CHECK: fence.proxy.async.shared::cta;
// CHECK-NEXT: bar.sync %r{{[0-9]+}}, 128;
// CHECK: cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%rd{{[0-9]+}}], [%r{{[0-9]+}}], 16384;
// CHECK: cp.async.bulk.commit_group;
// CHECK-NOT: red.global

// ATOMIC-LABEL: .visible .entry dq_order(
// ATOMIC-NOT: cp.reduce.async.bulk
// ATOMIC: red.global.add
// ATOMIC-NOT: cp.reduce.async.bulk

module {
  func.func @dq_order(%A: !tile.ptr<f16> {tile.divisibility = 16 : i32} loc("A"), %B: !tile.ptr<f16> {tile.divisibility = 16 : i32} loc("B"), %ACC: !tile.ptr<f32> {tile.divisibility = 16 : i32} loc("ACC"), %STEPS: i32 loc("STEPS")) attributes {tile.kernel} {
    %c1 = arith.constant 1 : i64
    %c64 = arith.constant 64 : i64
    %c128 = arith.constant 128 : i64
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %c8192 = arith.constant 8192 : i32
    %ap = tile.make_block_ptr %A, [%c64, %c64], [%c64, %c1], [%c0_i32, %c0_i32] order [1, 0] : !tile.block_ptr<tensor<64x64xf16>>
    %a = tile.load_block %ap : !tile.block_ptr<tensor<64x64xf16>>
    %bp = tile.make_block_ptr %B, [%c64, %c128], [%c128, %c1], [%c0_i32, %c0_i32] order [1, 0] : !tile.block_ptr<tensor<64x128xf16>>
    %b = tile.load_block %bp : !tile.block_ptr<tensor<64x128xf16>>
    %zero = arith.constant dense<0.0> : tensor<64x128xf32>
    %three = arith.constant dense<3> : tensor<64xi32>
    %seven = arith.constant dense<7> : tensor<64xi32>
    %k1024 = arith.constant dense<1024> : tensor<64xi32>
    %k8 = arith.constant dense<8> : tensor<64xi32>
    %cthree = arith.constant dense<3> : tensor<128xi32>
    %cseven = arith.constant dense<7> : tensor<128xi32>
    %k64 = arith.constant dense<64> : tensor<128xi32>
    %r = tile.arange 0 to 64 : tensor<64xi32>
    %c = tile.arange 0 to 128 : tensor<128xi32>
    %rg = arith.shrsi %r, %three : tensor<64xi32>
    %rg1 = arith.muli %rg, %k1024 : tensor<64xi32>
    %rl = arith.andi %r, %seven : tensor<64xi32>
    %rl1 = arith.muli %rl, %k8 : tensor<64xi32>
    %rowoff = arith.addi %rg1, %rl1 : tensor<64xi32>
    %cg = arith.shrsi %c, %cthree : tensor<128xi32>
    %cg1 = arith.muli %cg, %k64 : tensor<128xi32>
    %cl = arith.andi %c, %cseven : tensor<128xi32>
    %coloff = arith.addi %cg1, %cl : tensor<128xi32>
    %re = tile.expand_dims %rowoff {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %rb = tile.broadcast %re : tensor<64x1xi32> -> tensor<64x128xi32>
    %ce = tile.expand_dims %coloff {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
    %cb = tile.broadcast %ce : tensor<1x128xi32> -> tensor<64x128xi32>
    %tileoff = arith.addi %rb, %cb : tensor<64x128xi32>
    scf.for %step = %c0_i32 to %STEPS step %c1_i32 : i32 {
      %prod = tile.dot %a, %b, %zero : tensor<64x64xf16>, tensor<64x128xf16> -> tensor<64x128xf32>
      %start = arith.muli %step, %c8192 : i32
      %s = tile.splat %start : tensor<64x128xi32>
      %offs = arith.addi %s, %tileoff : tensor<64x128xi32>
      %base = tile.splat %ACC : tensor<64x128x!tile.ptr<f32>>
      %p = tile.addptr %base, %offs : tensor<64x128x!tile.ptr<f32>>, tensor<64x128xi32>
      %old = tile.atomic_rmw add %p, %prod : tensor<64x128x!tile.ptr<f32>>
    }
    return
  }

  func.func @halves(%A: !tile.ptr<f16> {tile.divisibility = 16 : i32} loc("A"), %B: !tile.ptr<f16> {tile.divisibility = 16 : i32} loc("B"), %ACC: !tile.ptr<f32> {tile.divisibility = 16 : i32} loc("ACC"), %STEPS: i32 loc("STEPS")) attributes {tile.kernel} {
    %c1 = arith.constant 1 : i64
    %c64 = arith.constant 64 : i64
    %c128 = arith.constant 128 : i64
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %c8192 = arith.constant 8192 : i32
    %ap = tile.make_block_ptr %A, [%c64, %c64], [%c64, %c1], [%c0_i32, %c0_i32] order [1, 0] : !tile.block_ptr<tensor<64x64xf16>>
    %a = tile.load_block %ap : !tile.block_ptr<tensor<64x64xf16>>
    %bp = tile.make_block_ptr %B, [%c64, %c128], [%c128, %c1], [%c0_i32, %c0_i32] order [1, 0] : !tile.block_ptr<tensor<64x128xf16>>
    %b = tile.load_block %bp : !tile.block_ptr<tensor<64x128xf16>>
    %zero = arith.constant dense<0.0> : tensor<64x128xf32>
    %k64 = arith.constant dense<64> : tensor<64xi32>
    %six = arith.constant dense<6> : tensor<128xi32>
    %k4096 = arith.constant dense<4096> : tensor<128xi32>
    %k63 = arith.constant dense<63> : tensor<128xi32>
    %r = tile.arange 0 to 64 : tensor<64xi32>
    %c = tile.arange 0 to 128 : tensor<128xi32>
    %rowoff = arith.muli %r, %k64 : tensor<64xi32>
    %half = arith.shrui %c, %six : tensor<128xi32>
    %half1 = arith.muli %half, %k4096 : tensor<128xi32>
    %within = arith.andi %c, %k63 : tensor<128xi32>
    %coloff = arith.addi %half1, %within : tensor<128xi32>
    %re = tile.expand_dims %rowoff {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
    %rb = tile.broadcast %re : tensor<64x1xi32> -> tensor<64x128xi32>
    %ce = tile.expand_dims %coloff {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
    %cb = tile.broadcast %ce : tensor<1x128xi32> -> tensor<64x128xi32>
    %tileoff = arith.addi %rb, %cb : tensor<64x128xi32>
    scf.for %step = %c0_i32 to %STEPS step %c1_i32 : i32 {
      %prod = tile.dot %a, %b, %zero : tensor<64x64xf16>, tensor<64x128xf16> -> tensor<64x128xf32>
      %start = arith.muli %step, %c8192 : i32
      %s = tile.splat %start : tensor<64x128xi32>
      %offs = arith.addi %s, %tileoff : tensor<64x128xi32>
      %base = tile.splat %ACC : tensor<64x128x!tile.ptr<f32>>
      %p = tile.addptr %base, %offs : tensor<64x128x!tile.ptr<f32>>, tensor<64x128xi32>
      %old = tile.atomic_rmw add %p, %prod : tensor<64x128x!tile.ptr<f32>>
    }
    return
  }
}
