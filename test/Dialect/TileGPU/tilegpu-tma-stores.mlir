// RUN: tile-opt %s -split-input-file -tilegpu-tma-stores | FileCheck %s
// RUN: tile-opt %s -split-input-file -tilegpu-tma-stores="reductions=false" | FileCheck %s --check-prefix=NO-REDUCTIONS
// RUN: tile-opt %s -split-input-file -tilegpu-tma-stores="bulk-reductions=true" | FileCheck %s --check-prefix=BULK

// An epilogue store whose tensor the runtime can describe, with rows of
// whole 16 bytes (HEAD_DIM = 64 fp16), goes through an nvmma_shared buffer
// and a TMA store, its descriptor a parameter listed in tilegpu.tensormaps.
// A row whose length is a parameter without divisibility stays (the TMA
// would write past a ragged end), and so does a store in a loop.
#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK: tilegpu.tensormaps = [{base = "O", box = [64, 64, 1], dims = ["64", "N", "min(2147483648, cdiv(1099511627776, max(1, (stride_h * 2))))"], strides = ["stride_n", "stride_h"], swizzle = 128 : i64}]
// CHECK-LABEL: func.func @epilogue
// CHECK-SAME: %[[DESC:arg[0-9]+]]: !tilegpu.tensormap) attributes {tile.kernel}
// CHECK: %[[PID:.*]] = tile.program_id y
// CHECK: %[[BUF:.*]] = tilegpu.local_alloc %{{.*}} : tensor<64x64xf16, #blocked> -> !tilegpu.memdesc<64x64xf16, #nvmma>
// CHECK-NEXT: tilegpu.async_tma_store_block %{{.*}}, %[[DESC]][%[[PID]]], %[[BUF]]
// CHECK-NOT: tile.store_block %{{.*}}, %{{.*}} boundary_check [0]
// CHECK: scf.for
// CHECK: tile.store_block
// CHECK: tile.store_block %{{.*}}, %{{.*}} boundary_check [0, 1]
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @epilogue(%O: !tile.ptr<f16> {tile.divisibility = 16 : i32} loc("O"), %N: i32 loc("N"), %stride_n: i32 {tile.divisibility = 16 : i32} loc("stride_n"), %stride_h: i32 {tile.divisibility = 16 : i32} loc("stride_h")) attributes {tile.kernel} {
    %tile = arith.constant dense<1.0> : tensor<64x64xf16, #b>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c64 = arith.constant 64 : i32
    %c1_i64 = arith.constant 1 : i64
    %c64_i64 = arith.constant 64 : i64
    %h = tile.program_id y
    %h64 = arith.extsi %h : i32 to i64
    %sh = arith.extsi %stride_h : i32 to i64
    %off = arith.muli %h64, %sh : i64
    %base = tile.addptr %O, %off : !tile.ptr<f16>, i64
    %n = arith.extsi %N : i32 to i64
    %sn = arith.extsi %stride_n : i32 to i64
    %p = tile.make_block_ptr %base, [%n, %c64_i64], [%sn, %c1_i64], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf16, #b>>
    tile.store_block %p, %tile boundary_check [0] : !tile.block_ptr<tensor<64x64xf16, #b>>
    scf.for %i = %c0 to %N step %c64 : i32 {
      tile.store_block %p, %tile boundary_check [0] : !tile.block_ptr<tensor<64x64xf16, #b>>
    }
    %ragged = tile.make_block_ptr %O, [%n, %n], [%sn, %c1_i64], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf16, #b>>
    tile.store_block %ragged, %tile boundary_check [0, 1] : !tile.block_ptr<tensor<64x64xf16, #b>>
    return
  }
}

// -----

// On sm_80 stores stay as they are.
#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-NOT: tilegpu.tensormaps
// CHECK-LABEL: func.func @ampere
// CHECK: tile.store_block
// CHECK-NOT: tilegpu.async_tma_store_block
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_80>} {
  func.func @ampere(%O: !tile.ptr<f16> {tile.divisibility = 16 : i32} loc("O"), %N: i32 loc("N"), %stride_n: i32 {tile.divisibility = 16 : i32} loc("stride_n")) attributes {tile.kernel} {
    %tile = arith.constant dense<1.0> : tensor<64x64xf16, #b>
    %c0 = arith.constant 0 : i32
    %c1_i64 = arith.constant 1 : i64
    %c64_i64 = arith.constant 64 : i64
    %n = arith.extsi %N : i32 to i64
    %sn = arith.extsi %stride_n : i32 to i64
    %p = tile.make_block_ptr %O, [%n, %c64_i64], [%sn, %c1_i64], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf16, #b>>
    tile.store_block %p, %tile boundary_check [0] : !tile.block_ptr<tensor<64x64xf16, #b>>
    return
  }
}

// -----

// A block added to in a loop from a wgmma accumulator (each warp holds 16
// rows x 64 columns: two swizzle spans of f32) goes through a buffer
// allocated before the loop, each warp updating its box by the TMA (the
// descriptor's box one warp's span: 32 x 16), and a wait after the loop.
// A blocked tile (warps hold interleaved rows) and an i32 one keep their
// per-element atomics; so does everything with reductions off.
#mma = #tilegpu.mma<version = 3, warpsPerCTA = [4, 2], instrShape = [64, 64]>
#b = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [8, 1], order = [1, 0]>
// CHECK: tilegpu.tensormaps = [{base = "OUT", box = [32, 16], dims = ["N", "M"], strides = ["N"], swizzle = 128 : i64}]
// CHECK-LABEL: func.func @updates
// CHECK-SAME: %[[DESC:arg[0-9]+]]: !tilegpu.tensormap) attributes {tile.kernel}
// CHECK: %[[BUF:.*]] = tilegpu.local_alloc : !tilegpu.memdesc<64x128xf32, #nvmma>
// CHECK-NEXT: scf.for
// CHECK: tilegpu.async_tma_reduce_block add %{{.*}}, %[[DESC]][], %{{.*}}, %[[BUF]] : !tile.block_ptr<tensor<64x128xf32, #mma>>, tensor<64x128xf32, #mma>, !tilegpu.memdesc<64x128xf32, #nvmma>
// CHECK: tile.atomic_rmw_block add %{{.*}}, %{{.*}} : !tile.block_ptr<tensor<64x128xf32, #blocked>>
// CHECK: tile.atomic_rmw_block max %{{.*}}, %{{.*}} : !tile.block_ptr<tensor<64x128xi32, #mma>>
// CHECK: }
// CHECK-NEXT: tilegpu.async_tma_store_wait %[[BUF]] : !tilegpu.memdesc<64x128xf32, #nvmma>
// NO-REDUCTIONS-NOT: tilegpu.async_tma_reduce_block
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @updates(%OUT: !tile.ptr<f32> {tile.divisibility = 16 : i32} loc("OUT"), %IOUT: !tile.ptr<i32> {tile.divisibility = 16 : i32} loc("IOUT"), %M: i32 {tile.divisibility = 16 : i32} loc("M"), %N: i32 {tile.divisibility = 16 : i32} loc("N"), %steps: i32 loc("steps")) attributes {tile.kernel} {
    %acc = arith.constant dense<1.0> : tensor<64x128xf32, #mma>
    %blocked = arith.constant dense<1.0> : tensor<64x128xf32, #b>
    %ints = arith.constant dense<1> : tensor<64x128xi32, #mma>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c64 = arith.constant 64 : i32
    %c1_i64 = arith.constant 1 : i64
    %m = arith.extsi %M : i32 to i64
    %n = arith.extsi %N : i32 to i64
    scf.for %i = %c0 to %steps step %c1 : i32 {
      %row = arith.muli %i, %c64 : i32
      %p = tile.make_block_ptr %OUT, [%m, %n], [%n, %c1_i64], [%row, %c0] order [1, 0] : !tile.block_ptr<tensor<64x128xf32, #mma>>
      tile.atomic_rmw_block add %p, %acc : !tile.block_ptr<tensor<64x128xf32, #mma>>
      %q = tile.make_block_ptr %OUT, [%m, %n], [%n, %c1_i64], [%row, %c0] order [1, 0] : !tile.block_ptr<tensor<64x128xf32, #b>>
      tile.atomic_rmw_block add %q, %blocked : !tile.block_ptr<tensor<64x128xf32, #b>>
      %r = tile.make_block_ptr %IOUT, [%m, %n], [%n, %c1_i64], [%row, %c0] order [1, 0] : !tile.block_ptr<tensor<64x128xi32, #mma>>
      tile.atomic_rmw_block max %r, %ints : !tile.block_ptr<tensor<64x128xi32, #mma>>
    }
    return
  }
}

// -----

// Bulk reductions (bulk-reductions=true): a wgmma accumulator added at one
// base plus offsets that place each index bit at its own bit of 0 .. 8191
// goes through a buffer of the block, allocated before the loop, and a
// wait after it. `@dq_order` is the attention backward's DQ_ACC order
// (rows in groups of 8, each group's 8 x 8 tiles in turn); rows' bits go to
// offset bits 3-5 and 10-12, columns' to 0-2 and 6-9. A masked update, an
// acquiring one, one whose old values are read, and one whose offsets
// overlap (r * 64 + c: 64 x 128 elements over 0 .. 4095 + 127) stay.
#mma = #tilegpu.mma<version = 3, warpsPerCTA = [4, 2], instrShape = [64, 64]>
#rows = #tilegpu.slice<dim = 1, parent = #mma>
#cols = #tilegpu.slice<dim = 0, parent = #mma>
// BULK-LABEL: func.func @dq_order
// BULK: %[[BUF:.*]] = tilegpu.local_alloc : !tilegpu.memdesc<1x8192xf32, #shared>
// BULK-NEXT: scf.for
// BULK: tilegpu.async_bulk_reduce add %{{.*}}, %{{.*}}, %[[BUF]] {offset_bits = array<i64: 3, 4, 5, 10, 11, 12, 0, 1, 2, 6, 7, 8, 9>}
// BULK: tile.atomic_rmw add %{{.*}}, %{{.*}} mask
// BULK: tile.atomic_rmw add %{{.*}}, %{{.*}} sem acquire
// BULK: tile.atomic_rmw add %{{.*}}, %{{.*}} :
// BULK: tile.atomic_rmw add %{{.*}}, %{{.*}} :
// BULK: }
// BULK-NEXT: tilegpu.async_tma_store_wait %[[BUF]] : !tilegpu.memdesc<1x8192xf32, #shared>
// CHECK-LABEL: func.func @dq_order
// CHECK-NOT: tilegpu.async_bulk_reduce
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @dq_order(%ACC: !tile.ptr<f32> {tile.divisibility = 16 : i32} loc("ACC"), %steps: i32 loc("steps")) attributes {tile.kernel} {
    %dq = arith.constant dense<1.0> : tensor<64x128xf32, #mma>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c8192 = arith.constant 8192 : i32
    %three = arith.constant dense<3> : tensor<64xi32, #rows>
    %seven = arith.constant dense<7> : tensor<64xi32, #rows>
    %k1024 = arith.constant dense<1024> : tensor<64xi32, #rows>
    %k8 = arith.constant dense<8> : tensor<64xi32, #rows>
    %cthree = arith.constant dense<3> : tensor<128xi32, #cols>
    %cseven = arith.constant dense<7> : tensor<128xi32, #cols>
    %k64 = arith.constant dense<64> : tensor<128xi32, #cols>
    %k64r = arith.constant dense<64> : tensor<64xi32, #rows>
    %r = tile.arange 0 to 64 : tensor<64xi32, #rows>
    %c = tile.arange 0 to 128 : tensor<128xi32, #cols>
    %rg = arith.shrui %r, %three : tensor<64xi32, #rows>
    %rg1 = arith.muli %rg, %k1024 : tensor<64xi32, #rows>
    %rl = arith.andi %r, %seven : tensor<64xi32, #rows>
    %rl1 = arith.muli %rl, %k8 : tensor<64xi32, #rows>
    %rowoff = arith.addi %rg1, %rl1 : tensor<64xi32, #rows>
    %cg = arith.shrui %c, %cthree : tensor<128xi32, #cols>
    %cg1 = arith.muli %cg, %k64 : tensor<128xi32, #cols>
    %cl = arith.andi %c, %cseven : tensor<128xi32, #cols>
    %coloff = arith.ori %cg1, %cl : tensor<128xi32, #cols>
    %re = tile.expand_dims %rowoff {axis = 1 : i32} : tensor<64xi32, #rows> -> tensor<64x1xi32, #mma>
    %rb = tile.broadcast %re : tensor<64x1xi32, #mma> -> tensor<64x128xi32, #mma>
    %ce = tile.expand_dims %coloff {axis = 0 : i32} : tensor<128xi32, #cols> -> tensor<1x128xi32, #mma>
    %cb = tile.broadcast %ce : tensor<1x128xi32, #mma> -> tensor<64x128xi32, #mma>
    %tileoff = arith.addi %rb, %cb : tensor<64x128xi32, #mma>
    %rr = arith.muli %r, %k64r : tensor<64xi32, #rows>
    %rre = tile.expand_dims %rr {axis = 1 : i32} : tensor<64xi32, #rows> -> tensor<64x1xi32, #mma>
    %rrb = tile.broadcast %rre : tensor<64x1xi32, #mma> -> tensor<64x128xi32, #mma>
    %ce2 = tile.expand_dims %c {axis = 0 : i32} : tensor<128xi32, #cols> -> tensor<1x128xi32, #mma>
    %cb2 = tile.broadcast %ce2 : tensor<1x128xi32, #mma> -> tensor<64x128xi32, #mma>
    %overlap = arith.addi %rrb, %cb2 : tensor<64x128xi32, #mma>
    %mask = arith.constant dense<true> : tensor<64x128xi1, #mma>
    scf.for %i = %c0 to %steps step %c1 : i32 {
      %start = arith.muli %i, %c8192 : i32
      %s = tile.splat %start : tensor<64x128xi32, #mma>
      %offs = arith.addi %s, %tileoff : tensor<64x128xi32, #mma>
      %base = tile.splat %ACC : tensor<64x128x!tile.ptr<f32>, #mma>
      %p = tile.addptr %base, %offs : tensor<64x128x!tile.ptr<f32>, #mma>, tensor<64x128xi32, #mma>
      %0 = tile.atomic_rmw add %p, %dq : tensor<64x128x!tile.ptr<f32>, #mma>
      %1 = tile.atomic_rmw add %p, %dq mask %mask : tensor<64x128x!tile.ptr<f32>, #mma>
      %2 = tile.atomic_rmw add %p, %dq sem acquire : tensor<64x128x!tile.ptr<f32>, #mma>
      %3 = tile.atomic_rmw add %p, %dq : tensor<64x128x!tile.ptr<f32>, #mma>
      tile.print "old" : %3 : tensor<64x128xf32, #mma>
      %q = tile.addptr %base, %overlap : tensor<64x128x!tile.ptr<f32>, #mma>, tensor<64x128xi32, #mma>
      %4 = tile.atomic_rmw add %q, %dq : tensor<64x128x!tile.ptr<f32>, #mma>
    }
    return
  }
}

// -----

// A persistent kernel's update, in a loop inside the loop over its blocks
// of work: the buffer is the inner loop's, allocated before it and waited
// for after it, so that the next inner loop's buffer may take its place.
#mma = #tilegpu.mma<version = 3, warpsPerCTA = [4, 2], instrShape = [64, 64]>
#rows = #tilegpu.slice<dim = 1, parent = #mma>
#cols = #tilegpu.slice<dim = 0, parent = #mma>
// BULK-LABEL: func.func @persistent_dq
// BULK: scf.for
// BULK-NEXT: %[[BUF:.*]] = tilegpu.local_alloc : !tilegpu.memdesc<1x8192xf32, #shared>
// BULK-NEXT: scf.for
// BULK: tilegpu.async_bulk_reduce add %{{.*}}, %{{.*}}, %[[BUF]] {{.*}}memdesc<1x8192xf32, #shared>{{$}}
// BULK-NEXT: }
// BULK-NEXT: tilegpu.async_tma_store_wait %[[BUF]] : !tilegpu.memdesc<1x8192xf32, #shared>
// BULK-NEXT: }
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @persistent_dq(%ACC: !tile.ptr<f32> {tile.divisibility = 16 : i32} loc("ACC"), %steps: i32 loc("steps"), %blocks: i32 loc("blocks")) attributes {tile.kernel} {
    %dq = arith.constant dense<1.0> : tensor<64x128xf32, #mma>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c8192 = arith.constant 8192 : i32
    %three = arith.constant dense<3> : tensor<64xi32, #rows>
    %seven = arith.constant dense<7> : tensor<64xi32, #rows>
    %k1024 = arith.constant dense<1024> : tensor<64xi32, #rows>
    %k8 = arith.constant dense<8> : tensor<64xi32, #rows>
    %cthree = arith.constant dense<3> : tensor<128xi32, #cols>
    %cseven = arith.constant dense<7> : tensor<128xi32, #cols>
    %k64 = arith.constant dense<64> : tensor<128xi32, #cols>
    %r = tile.arange 0 to 64 : tensor<64xi32, #rows>
    %c = tile.arange 0 to 128 : tensor<128xi32, #cols>
    %rg = arith.shrui %r, %three : tensor<64xi32, #rows>
    %rg1 = arith.muli %rg, %k1024 : tensor<64xi32, #rows>
    %rl = arith.andi %r, %seven : tensor<64xi32, #rows>
    %rl1 = arith.muli %rl, %k8 : tensor<64xi32, #rows>
    %rowoff = arith.addi %rg1, %rl1 : tensor<64xi32, #rows>
    %cg = arith.shrui %c, %cthree : tensor<128xi32, #cols>
    %cg1 = arith.muli %cg, %k64 : tensor<128xi32, #cols>
    %cl = arith.andi %c, %cseven : tensor<128xi32, #cols>
    %coloff = arith.ori %cg1, %cl : tensor<128xi32, #cols>
    %re = tile.expand_dims %rowoff {axis = 1 : i32} : tensor<64xi32, #rows> -> tensor<64x1xi32, #mma>
    %rb = tile.broadcast %re : tensor<64x1xi32, #mma> -> tensor<64x128xi32, #mma>
    %ce = tile.expand_dims %coloff {axis = 0 : i32} : tensor<128xi32, #cols> -> tensor<1x128xi32, #mma>
    %cb = tile.broadcast %ce : tensor<1x128xi32, #mma> -> tensor<64x128xi32, #mma>
    %tileoff = arith.addi %rb, %cb : tensor<64x128xi32, #mma>
    scf.for %b = %c0 to %blocks step %c1 : i32 {
      scf.for %i = %c0 to %steps step %c1 : i32 {
        %start = arith.muli %i, %c8192 : i32
        %s = tile.splat %start : tensor<64x128xi32, #mma>
        %offs = arith.addi %s, %tileoff : tensor<64x128xi32, #mma>
        %base = tile.splat %ACC : tensor<64x128x!tile.ptr<f32>, #mma>
        %p = tile.addptr %base, %offs : tensor<64x128x!tile.ptr<f32>, #mma>, tensor<64x128xi32, #mma>
        %0 = tile.atomic_rmw add %p, %dq : tensor<64x128x!tile.ptr<f32>, #mma>
      }
    }
    return
  }
}
