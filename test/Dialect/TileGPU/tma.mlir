// RUN: tile-opt %s -split-input-file | FileCheck %s
// RUN: tile-opt %s -split-input-file | tile-opt -split-input-file | FileCheck %s

// The TMA and mbarrier ops round-trip: a stack of mbarriers set up and
// ended, a TMA copy of a block through a descriptor parameter (with and
// without coordinates past the block's, with and without a predicate),
// a wait on one mbarrier, a plain barrier, a TMA store.

#blocked = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#nvmma = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#bar = #tilegpu.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>, tilegpu.tensormaps = [{base = "K", box = [64, 64, 1], dims = ["64", "N", "min(2147483648, cdiv(1099511627776, max(1, (stride_h * 2))))"], strides = ["stride_n", "stride_h"], swizzle = 128 : i64}]} {
  // CHECK-LABEL: func.func @copy
  // CHECK-SAME: %[[DESC:arg[0-9]+]]: !tilegpu.tensormap
  func.func @copy(%p: !tile.block_ptr<tensor<64x64xf16, #blocked>>, %h: i32, %runs: i1, %phase: i32, %desc: !tilegpu.tensormap) {
    %c0 = arith.constant 0 : i32
    // CHECK: %[[BARS:.*]] = tilegpu.local_alloc : !tilegpu.memdesc<2x1x1xi64, #shared>
    %bars = tilegpu.local_alloc : !tilegpu.memdesc<2x1x1xi64, #bar>
    %stack = tilegpu.local_alloc : !tilegpu.memdesc<2x64x64xf16, #nvmma>
    // CHECK: tilegpu.init_barriers %[[BARS]] arrivals [1] : !tilegpu.memdesc<2x1x1xi64, #shared>
    tilegpu.init_barriers %bars arrivals [1] : !tilegpu.memdesc<2x1x1xi64, #bar>
    %buf = tilegpu.memdesc_index %stack[%c0] : !tilegpu.memdesc<2x64x64xf16, #nvmma> -> !tilegpu.memdesc<64x64xf16, #nvmma>
    %b = tilegpu.memdesc_index %bars[%c0] : !tilegpu.memdesc<2x1x1xi64, #bar> -> !tilegpu.memdesc<1x1xi64, #bar>
    // CHECK: tilegpu.async_tma_copy_block %arg0, %[[DESC]][%arg1], %{{.*}}, %[[B:[0-9]+]] if %arg2 : !tile.block_ptr<tensor<64x64xf16, #blocked>>, !tilegpu.memdesc<64x64xf16, #nvmma>, !tilegpu.memdesc<1x1xi64, #shared>
    tilegpu.async_tma_copy_block %p, %desc[%h], %buf, %b if %runs : !tile.block_ptr<tensor<64x64xf16, #blocked>>, !tilegpu.memdesc<64x64xf16, #nvmma>, !tilegpu.memdesc<1x1xi64, #bar>
    // CHECK: tilegpu.async_tma_copy_block %arg0, %[[DESC]][], %{{.*}}, %[[B]] :
    tilegpu.async_tma_copy_block %p, %desc[], %buf, %b : !tile.block_ptr<tensor<64x64xf16, #blocked>>, !tilegpu.memdesc<64x64xf16, #nvmma>, !tilegpu.memdesc<1x1xi64, #bar>
    // CHECK: tilegpu.wait_barrier %[[B]], %arg3 : !tilegpu.memdesc<1x1xi64, #shared>
    tilegpu.wait_barrier %b, %phase : !tilegpu.memdesc<1x1xi64, #bar>
    // CHECK: tilegpu.barrier
    tilegpu.barrier
    // CHECK: tilegpu.inval_barriers %[[BARS]] : !tilegpu.memdesc<2x1x1xi64, #shared>
    tilegpu.inval_barriers %bars : !tilegpu.memdesc<2x1x1xi64, #bar>
    // CHECK: tilegpu.async_tma_store_block %arg0, %[[DESC]][%arg1], %{{.*}} : !tile.block_ptr<tensor<64x64xf16, #blocked>>, !tilegpu.memdesc<64x64xf16, #nvmma>
    tilegpu.async_tma_store_block %p, %desc[%h], %buf : !tile.block_ptr<tensor<64x64xf16, #blocked>>, !tilegpu.memdesc<64x64xf16, #nvmma>
    return
  }
}

// -----

// A block update by the TMA from a wgmma accumulator, and the wait for its
// reads.
#mma = #tilegpu.mma<version = 3, warpsPerCTA = [4, 2], instrShape = [64, 64]>
#nvmma = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 32, order = [1, 0]>
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  // CHECK-LABEL: func.func @update
  func.func @update(%p: !tile.block_ptr<tensor<64x128xf32, #mma>>, %desc: !tilegpu.tensormap, %x: tensor<64x128xf32, #mma>) {
    // CHECK: %[[BUF:.*]] = tilegpu.local_alloc : !tilegpu.memdesc<64x128xf32, #nvmma>
    %buf = tilegpu.local_alloc : !tilegpu.memdesc<64x128xf32, #nvmma>
    // CHECK: tilegpu.async_tma_reduce_block add %arg0, %arg1[], %arg2, %[[BUF]] : !tile.block_ptr<tensor<64x128xf32, #mma>>, tensor<64x128xf32, #mma>, !tilegpu.memdesc<64x128xf32, #nvmma>
    tilegpu.async_tma_reduce_block add %p, %desc[], %x, %buf : !tile.block_ptr<tensor<64x128xf32, #mma>>, tensor<64x128xf32, #mma>, !tilegpu.memdesc<64x128xf32, #nvmma>
    // CHECK: tilegpu.async_tma_store_wait %[[BUF]] : !tilegpu.memdesc<64x128xf32, #nvmma>
    tilegpu.async_tma_store_wait %buf : !tilegpu.memdesc<64x128xf32, #nvmma>
    return
  }
}

// -----

// A block update by bulk reductions: the offsets' bits as DQ_ACC orders
// them (tilegpu-tma-stores bulk-reductions).
#mma = #tilegpu.mma<version = 3, warpsPerCTA = [4, 2], instrShape = [64, 64]>
#flat = #tilegpu.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]>
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  // CHECK-LABEL: func.func @bulk_update
  func.func @bulk_update(%p: tensor<64x128x!tile.ptr<f32>, #mma>, %x: tensor<64x128xf32, #mma>) {
    %buf = tilegpu.local_alloc : !tilegpu.memdesc<1x8192xf32, #flat>
    // CHECK: tilegpu.async_bulk_reduce add %arg0, %arg1, %{{.*}} {offset_bits = array<i64: 3, 4, 5, 10, 11, 12, 0, 1, 2, 6, 7, 8, 9>} : tensor<64x128x!tile.ptr<f32>, #mma>, tensor<64x128xf32, #mma>, !tilegpu.memdesc<1x8192xf32, #shared>
    tilegpu.async_bulk_reduce add %p, %x, %buf {offset_bits = array<i64: 3, 4, 5, 10, 11, 12, 0, 1, 2, 6, 7, 8, 9>} : tensor<64x128x!tile.ptr<f32>, #mma>, tensor<64x128xf32, #mma>, !tilegpu.memdesc<1x8192xf32, #flat>
    tilegpu.async_tma_store_wait %buf : !tilegpu.memdesc<1x8192xf32, #flat>
    return
  }
}
