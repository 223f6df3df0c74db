// RUN: tile-opt %s -split-input-file -tilegpu-pipeline | FileCheck %s
// RUN: tile-opt %s -split-input-file -tilegpu-pipeline="num-stages=3" | FileCheck %s --check-prefix=S3
// RUN: tile-opt %s -split-input-file -tilegpu-pipeline="num-stages=1" | FileCheck %s --check-prefix=OFF
// RUN: not tile-opt %s -split-input-file -tilegpu-pipeline="num-stages=0" 2>&1 | FileCheck %s --check-prefix=ZERO

// The forward attention loop: K and V are read through block pointers that
// advance by BLOCK_N each iteration, and only stored into shared memory for
// the dots. Both become asynchronous copies into stacks of buffers, issued
// one iteration (num-stages - 1) ahead.

#bk = #tilegpu.blocked<sizePerThread = [8, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]>
#bv = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#sk = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [0, 1]>
#sv = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
#opb = #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  // CHECK-LABEL: func.func @attention_loop
  // OFF-LABEL: func.func @attention_loop
  // ZERO: error: num-stages must be at least 1, not 0
  func.func @attention_loop(%kp: !tile.block_ptr<tensor<64x64xf16, #bk>>, %vp: !tile.block_ptr<tensor<64x64xf16, #bv>>, %n: i32) -> (tensor<16x64xf16, #opb>, tensor<16x64xf16, #opb>) {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.0> : tensor<16x64xf16, #opb>
    // Two stacks, then a barrier before the prologue.
    // CHECK: %[[KS:.*]] = tilegpu.local_alloc : !tilegpu.memdesc<2x64x64xf16, #{{.*}}>
    // CHECK: %[[VS:.*]] = tilegpu.local_alloc : !tilegpu.memdesc<2x64x64xf16, #{{.*}}>
    // CHECK: tilegpu.async_wait {pending = 0 : i32}
    // Iteration 0 runs if lower < upper; its copies go to buffer 0.
    // CHECK: %[[RUNS0:.*]] = arith.cmpi slt, %{{.*}}, %arg2 : i32
    // CHECK: %[[K0:.*]] = tilegpu.memdesc_index %[[KS]][%{{.*}}]
    // CHECK: tilegpu.async_copy_block %arg0, %[[K0]] if %[[RUNS0]] boundary_check [1]
    // CHECK: %[[V0:.*]] = tilegpu.memdesc_index %[[VS]][%{{.*}}]
    // CHECK: tilegpu.async_copy_block %arg1, %[[V0]] if %[[RUNS0]] boundary_check [0]
    // CHECK: tilegpu.async_commit_group
    // CHECK-NOT: tilegpu.async_copy_block
    // The loop carries the slot it reads, from 0.
    // CHECK: scf.for %[[IV:.*]] = %{{.*}} to %arg2 step %{{.*}} iter_args(%[[KP:.*]] = %arg0, %[[VP:.*]] = %arg1, %[[ACC:.*]] = %{{.*}}, %[[SLOT:.*]] = %{{.*}})
    // CHECK-NEXT: tilegpu.async_wait {pending = 0 : i32}
    // The buffer iteration k - 1 read, (slot + S - 1) mod S, takes iteration
    // k + 1's copy, if it runs.
    // CHECK: %[[SUM:.*]] = arith.addi %[[SLOT]], %{{.*}} : i32
    // CHECK: %[[WRAPS:.*]] = arith.cmpi sge, %[[SUM]], %{{.*}} : i32
    // CHECK: %[[WRAPPED:.*]] = arith.subi %[[SUM]], %{{.*}} : i32
    // CHECK: %[[WRITE:.*]] = arith.select %[[WRAPS]], %[[WRAPPED]], %[[SUM]] : i32
    // CHECK: %[[AHEAD:.*]] = arith.addi %[[IV]], %{{.*}} : i32
    // CHECK: %[[RUNS:.*]] = arith.cmpi slt, %[[AHEAD]], %arg2 : i32
    // CHECK: %[[KREAD:.*]] = tilegpu.memdesc_index %[[KS]][%[[SLOT]]]
    // CHECK: %[[KNEXT:.*]] = tile.advance %[[KP]], [%{{.*}}, %{{.*}}]
    // CHECK: %[[KW:.*]] = tilegpu.memdesc_index %[[KS]][%[[WRITE]]]
    // CHECK: tilegpu.async_copy_block %[[KNEXT]], %[[KW]] if %[[RUNS]] boundary_check [1]
    // CHECK: %[[VREAD:.*]] = tilegpu.memdesc_index %[[VS]][%[[SLOT]]]
    // CHECK: tilegpu.async_copy_block %{{.*}}, %{{.*}} if %[[RUNS]] boundary_check [0]
    // CHECK: tilegpu.async_commit_group
    // The loads are gone; the dots read the buffers of this iteration.
    // CHECK-NOT: tile.load_block
    // CHECK-NOT: tilegpu.local_alloc
    // CHECK: tilegpu.local_load %[[KREAD]] [0, 0]
    // CHECK: tilegpu.local_load %[[VREAD]] [0, 0]
    // The next slot wraps around.
    // CHECK: arith.cmpi eq, %[[SLOT]], %{{.*}} : i32
    // CHECK: %[[NEXT:.*]] = arith.select
    // CHECK: scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %[[NEXT]]
    // S3: tilegpu.local_alloc : !tilegpu.memdesc<3x64x64xf16
    // S3: tilegpu.async_wait {pending = 0 : i32}
    // S3-COUNT-2: tilegpu.async_commit_group
    // S3: scf.for
    // S3-NEXT: tilegpu.async_wait {pending = 1 : i32}
    // OFF-NOT: tilegpu.async
    // OFF: tile.load_block
    %r:3 = scf.for %i = %c0 to %n step %c64 iter_args(%k_ptr = %kp, %v_ptr = %vp, %acc = %zero) -> (!tile.block_ptr<tensor<64x64xf16, #bk>>, !tile.block_ptr<tensor<64x64xf16, #bv>>, tensor<16x64xf16, #opb>) : i32 {
      %k = tile.load_block %k_ptr boundary_check [1] {tilegpu.vector_width = 8 : i32} : !tile.block_ptr<tensor<64x64xf16, #bk>>
      %v = tile.load_block %v_ptr boundary_check [0] {tilegpu.vector_width = 8 : i32} : !tile.block_ptr<tensor<64x64xf16, #bv>>
      %kb = tilegpu.local_alloc %k : tensor<64x64xf16, #bk> -> !tilegpu.memdesc<64x64xf16, #sk>
      %k0 = tilegpu.local_load %kb [0, 0] : !tilegpu.memdesc<64x64xf16, #sk> -> tensor<16x64xf16, #opb>
      %vb = tilegpu.local_alloc %v : tensor<64x64xf16, #bv> -> !tilegpu.memdesc<64x64xf16, #sv>
      %v0 = tilegpu.local_load %vb [0, 0] : !tilegpu.memdesc<64x64xf16, #sv> -> tensor<16x64xf16, #opb>
      %sum = arith.addf %k0, %v0 : tensor<16x64xf16, #opb>
      %next_k = tile.advance %k_ptr, [%c0, %c64] : !tile.block_ptr<tensor<64x64xf16, #bk>>
      %next_v = tile.advance %v_ptr, [%c64, %c0] : !tile.block_ptr<tensor<64x64xf16, #bv>>
      scf.yield %next_k, %next_v, %sum : !tile.block_ptr<tensor<64x64xf16, #bk>>, !tile.block_ptr<tensor<64x64xf16, #bv>>, tensor<16x64xf16, #opb>
    }
    return %r#2, %zero : tensor<16x64xf16, #opb>, tensor<16x64xf16, #opb>
  }
}

// -----

// Triton's matmul loop: a tile of pointers the loop carries and advances by
// a loop-invariant amount, loaded under a mask of the keys left (computed
// from the induction variable) with zeros elsewhere. The load becomes an
// asynchronous copy of the pointers advanced one iteration, under the mask
// computed for that iteration, into a stack of buffers.

#bv = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#sv = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
#opb = #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  // CHECK-LABEL: func.func @pointer_loop
  // OFF-LABEL: func.func @pointer_loop
  func.func @pointer_loop(%p0: tensor<64x64x!tile.ptr<f16>, #bv>, %cols: tensor<64x64xi32, #bv>, %k: i32, %stride: i32) -> tensor<16x64xf16, #opb> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.0> : tensor<16x64xf16, #opb>
    %other = arith.constant dense<0.0> : tensor<64x64xf16, #bv>
    // CHECK: %[[STACK:.*]] = tilegpu.local_alloc : !tilegpu.memdesc<2x64x64xf16, #{{.*}}>
    // CHECK: tilegpu.async_wait {pending = 0 : i32}
    // Iteration 0: the initial pointers, the mask of k - 0 * 64 keys left.
    // CHECK: %[[DONE0:.*]] = arith.muli %{{.*}}, %{{.*}} : i32
    // CHECK: %[[LEFT0:.*]] = arith.subi %arg2, %[[DONE0]] : i32
    // CHECK: %[[LEFTS0:.*]] = tile.splat %[[LEFT0]]
    // CHECK: %[[M0:.*]] = arith.cmpi slt, %arg1, %[[LEFTS0]]
    // CHECK: tilegpu.async_copy %arg0, %{{.*}} mask %[[M0]] if %{{.*}} {vector_width = 8 : i32}
    // CHECK: tilegpu.async_commit_group
    // CHECK: scf.for %[[IV:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[P:.*]] = %arg0, %{{.*}} = %{{.*}}, %[[SLOT:.*]] = %{{.*}})
    // CHECK-NEXT: tilegpu.async_wait {pending = 0 : i32}
    // Iteration k + 1 (if it runs): the pointers advanced once, the mask at
    // iv + 1.
    // CHECK: %[[AHEAD:.*]] = arith.addi %[[IV]], %{{.*}} : i32
    // CHECK: arith.cmpi slt, %[[AHEAD]], %arg2 : i32
    // CHECK: %[[READ:.*]] = tilegpu.memdesc_index %[[STACK]][%[[SLOT]]]
    // CHECK: %[[STEP:.*]] = arith.muli %arg3, %{{.*}} : i32
    // CHECK: %[[STEPS:.*]] = tile.splat %[[STEP]]
    // CHECK: %[[TIMES:.*]] = arith.muli %[[STEPS]], %{{.*}} : tensor<64x64xi32, #{{.*}}>
    // CHECK: %[[NEXT:.*]] = tile.addptr %[[P]], %[[TIMES]]
    // CHECK: %[[DONE:.*]] = arith.muli %[[AHEAD]], %{{.*}} : i32
    // CHECK: %[[LEFT:.*]] = arith.subi %arg2, %[[DONE]] : i32
    // CHECK: %[[LEFTS:.*]] = tile.splat %[[LEFT]]
    // CHECK: %[[M:.*]] = arith.cmpi slt, %arg1, %[[LEFTS]]
    // CHECK: tilegpu.async_copy %[[NEXT]], %{{.*}} mask %[[M]] if %{{.*}} {vector_width = 8 : i32}
    // CHECK: tilegpu.async_commit_group
    // CHECK-NOT: tile.load
    // CHECK: tilegpu.local_load %[[READ]] [0, 0]
    // OFF-NOT: tilegpu.async
    // OFF: tile.load
    %r:2 = scf.for %i = %c0 to %k step %c1 iter_args(%p = %p0, %acc = %zero) -> (tensor<64x64x!tile.ptr<f16>, #bv>, tensor<16x64xf16, #opb>) : i32 {
      %done = arith.muli %i, %c64 : i32
      %left = arith.subi %k, %done : i32
      %lefts = tile.splat %left : tensor<64x64xi32, #bv>
      %m = arith.cmpi slt, %cols, %lefts : tensor<64x64xi32, #bv>
      %v = tile.load %p mask %m other %other {tilegpu.vector_width = 8 : i32} : tensor<64x64x!tile.ptr<f16>, #bv>
      %vb = tilegpu.local_alloc %v : tensor<64x64xf16, #bv> -> !tilegpu.memdesc<64x64xf16, #sv>
      %v0 = tilegpu.local_load %vb [0, 0] : !tilegpu.memdesc<64x64xf16, #sv> -> tensor<16x64xf16, #opb>
      %sum = arith.addf %acc, %v0 : tensor<16x64xf16, #opb>
      %step = arith.muli %stride, %c64 : i32
      %steps = tile.splat %step : tensor<64x64xi32, #bv>
      %pn = tile.addptr %p, %steps : tensor<64x64x!tile.ptr<f16>, #bv>, tensor<64x64xi32, #bv>
      scf.yield %pn, %sum : tensor<64x64x!tile.ptr<f16>, #bv>, tensor<16x64xf16, #opb>
    }
    return %r#1 : tensor<16x64xf16, #opb>
  }
}

// -----

// Paged attention's decoding loop: each key row's page is gathered from a
// block table, so the K tile's pointers are computed from a load of the
// table at the keys of this iteration. The loop writes no global memory,
// so that load is evaluated for the iteration ahead too (reading only if
// that iteration runs), and the K tile is copied ahead through the
// pointers it gives. A loop that stores keeps its loads.

#bk = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#rows = #tilegpu.slice<dim = 1, parent = #bk>
#sk = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
#opb = #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  // CHECK-LABEL: func.func @gathered_rows
  func.func @gathered_rows(%table: !tile.ptr<i32>, %k: !tile.ptr<f16>, %cols: tensor<64x64xi32, #bk>, %end: i32, %out: !tile.ptr<f16>) -> tensor<16x64xf16, #opb> {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.0> : tensor<16x64xf16, #opb>
    %other = arith.constant dense<0.0> : tensor<64x64xf16, #bk>
    // Iteration 0's table entries, read if it runs, then its copy.
    // CHECK: %[[RUNS0:.*]] = arith.cmpi slt, %{{.*}}, %arg3 : i32
    // CHECK: %[[GUARD0:.*]] = tile.splat %[[RUNS0]] : tensor<64xi1, #{{.*}}>
    // CHECK: %[[OK0:.*]] = arith.andi %{{.*}}, %[[GUARD0]] : tensor<64xi1, #{{.*}}>
    // CHECK: tile.load %{{.*}} mask %[[OK0]] other %{{.*}} : tensor<64x!tile.ptr<i32>, #{{.*}}>
    // CHECK: tilegpu.async_copy %{{.*}}, %{{.*}} mask %{{.*}} if %[[RUNS0]] {vector_width = 8 : i32}
    // CHECK: scf.for %[[IV:.*]] = %{{.*}} to %arg3 step %{{.*}} iter_args(
    // CHECK-NEXT: tilegpu.async_wait {pending = 0 : i32}
    // Iteration k + 1's table entries and copy, in iteration k.
    // CHECK: %[[RUNS:.*]] = arith.cmpi slt, %{{.*}}, %arg3 : i32
    // CHECK: %[[GUARD:.*]] = tile.splat %[[RUNS]] : tensor<64xi1, #{{.*}}>
    // CHECK: %[[OK:.*]] = arith.andi %{{.*}}, %[[GUARD]] : tensor<64xi1, #{{.*}}>
    // CHECK: tile.load %{{.*}} mask %[[OK]] other %{{.*}} : tensor<64x!tile.ptr<i32>, #{{.*}}>
    // CHECK: tilegpu.async_copy %{{.*}}, %{{.*}} mask %{{.*}} if %[[RUNS]] {vector_width = 8 : i32}
    // CHECK: tilegpu.async_commit_group
    // CHECK-NOT: tile.load {{.*}} tensor<64x64x!tile.ptr<f16>
    // CHECK: tilegpu.local_load
    %r = scf.for %i = %c0 to %end step %c64 iter_args(%acc = %zero) -> (tensor<16x64xf16, #opb>) : i32 {
      %starts = tile.splat %i : tensor<64xi32, #rows>
      %steps = tile.arange 0 to 64 : tensor<64xi32, #rows>
      %keys = arith.addi %starts, %steps : tensor<64xi32, #rows>
      %ends = tile.splat %end : tensor<64xi32, #rows>
      %ok = arith.cmpi slt, %keys, %ends : tensor<64xi32, #rows>
      %tables = tile.splat %table : tensor<64x!tile.ptr<i32>, #rows>
      %entries = tile.addptr %tables, %keys : tensor<64x!tile.ptr<i32>, #rows>, tensor<64xi32, #rows>
      %zeros = arith.constant dense<0> : tensor<64xi32, #rows>
      %pages = tile.load %entries mask %ok other %zeros : tensor<64x!tile.ptr<i32>, #rows>
      %rowstride = arith.constant dense<64> : tensor<64xi32, #rows>
      %rowoffs = arith.muli %pages, %rowstride : tensor<64xi32, #rows>
      %r2 = tile.expand_dims %rowoffs {axis = 1 : i32} : tensor<64xi32, #rows> -> tensor<64x1xi32, #bk>
      %rb = tile.broadcast %r2 : tensor<64x1xi32, #bk> -> tensor<64x64xi32, #bk>
      %offs = arith.addi %rb, %cols : tensor<64x64xi32, #bk>
      %ks = tile.splat %k : tensor<64x64x!tile.ptr<f16>, #bk>
      %ptrs = tile.addptr %ks, %offs : tensor<64x64x!tile.ptr<f16>, #bk>, tensor<64x64xi32, #bk>
      %ok2 = tile.expand_dims %ok {axis = 1 : i32} : tensor<64xi1, #rows> -> tensor<64x1xi1, #bk>
      %okb = tile.broadcast %ok2 : tensor<64x1xi1, #bk> -> tensor<64x64xi1, #bk>
      %kt = tile.load %ptrs mask %okb other %other {tilegpu.vector_width = 8 : i32} : tensor<64x64x!tile.ptr<f16>, #bk>
      %kb = tilegpu.local_alloc %kt : tensor<64x64xf16, #bk> -> !tilegpu.memdesc<64x64xf16, #sk>
      %k0 = tilegpu.local_load %kb [0, 0] : !tilegpu.memdesc<64x64xf16, #sk> -> tensor<16x64xf16, #opb>
      %sum = arith.addf %acc, %k0 : tensor<16x64xf16, #opb>
      scf.yield %sum : tensor<16x64xf16, #opb>
    }
    // CHECK-LABEL: func.func @gathered_rows_stored
    return %r : tensor<16x64xf16, #opb>
  }
  func.func @gathered_rows_stored(%table: !tile.ptr<i32>, %k: !tile.ptr<f16>, %cols: tensor<64x64xi32, #bk>, %end: i32, %out: tensor<64x!tile.ptr<i32>, #rows>) -> tensor<16x64xf16, #opb> {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.0> : tensor<16x64xf16, #opb>
    %other = arith.constant dense<0.0> : tensor<64x64xf16, #bk>
    // CHECK-NOT: tilegpu.async_copy
    // CHECK: scf.for
    // CHECK: tile.load {{.*}} tensor<64x64x!tile.ptr<f16>
    %r = scf.for %i = %c0 to %end step %c64 iter_args(%acc = %zero) -> (tensor<16x64xf16, #opb>) : i32 {
      %starts = tile.splat %i : tensor<64xi32, #rows>
      %steps = tile.arange 0 to 64 : tensor<64xi32, #rows>
      %keys = arith.addi %starts, %steps : tensor<64xi32, #rows>
      %tables = tile.splat %table : tensor<64x!tile.ptr<i32>, #rows>
      %entries = tile.addptr %tables, %keys : tensor<64x!tile.ptr<i32>, #rows>, tensor<64xi32, #rows>
      %pages = tile.load %entries : tensor<64x!tile.ptr<i32>, #rows>
      tile.store %out, %keys : tensor<64x!tile.ptr<i32>, #rows>
      %r2 = tile.expand_dims %pages {axis = 1 : i32} : tensor<64xi32, #rows> -> tensor<64x1xi32, #bk>
      %rb = tile.broadcast %r2 : tensor<64x1xi32, #bk> -> tensor<64x64xi32, #bk>
      %offs = arith.addi %rb, %cols : tensor<64x64xi32, #bk>
      %ks = tile.splat %k : tensor<64x64x!tile.ptr<f16>, #bk>
      %ptrs = tile.addptr %ks, %offs : tensor<64x64x!tile.ptr<f16>, #bk>, tensor<64x64xi32, #bk>
      %kt = tile.load %ptrs {tilegpu.vector_width = 8 : i32} : tensor<64x64x!tile.ptr<f16>, #bk>
      %kb = tilegpu.local_alloc %kt : tensor<64x64xf16, #bk> -> !tilegpu.memdesc<64x64xf16, #sk>
      %k0 = tilegpu.local_load %kb [0, 0] : !tilegpu.memdesc<64x64xf16, #sk> -> tensor<16x64xf16, #opb>
      %sum = arith.addf %acc, %k0 : tensor<16x64xf16, #opb>
      scf.yield %sum : tensor<16x64xf16, #opb>
    }
    return %r : tensor<16x64xf16, #opb>
  }
}

// -----

// Loads the pass leaves alone: one whose value is used in registers too,
// one without a 16-byte vector width, one whose pointer advances by an
// amount computed in the loop, and one checking its contiguous dimension.

#bv = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#sv = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  // CHECK-LABEL: func.func @not_pipelined
  // CHECK-NOT: tilegpu.async
  // CHECK-COUNT-4: tile.load_block
  func.func @not_pipelined(%p: !tile.block_ptr<tensor<64x64xf16, #bv>>, %n: i32) -> tensor<64x64xf16, #bv> {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf16, #bv>
    %r:5 = scf.for %i = %c0 to %n step %c64 iter_args(%a = %p, %b = %p, %c = %p, %d = %p, %acc = %zero) -> (!tile.block_ptr<tensor<64x64xf16, #bv>>, !tile.block_ptr<tensor<64x64xf16, #bv>>, !tile.block_ptr<tensor<64x64xf16, #bv>>, !tile.block_ptr<tensor<64x64xf16, #bv>>, tensor<64x64xf16, #bv>) : i32 {
      %x = tile.load_block %a {tilegpu.vector_width = 8 : i32} : !tile.block_ptr<tensor<64x64xf16, #bv>>
      %xb = tilegpu.local_alloc %x : tensor<64x64xf16, #bv> -> !tilegpu.memdesc<64x64xf16, #sv>
      %y = tile.load_block %b {tilegpu.vector_width = 4 : i32} : !tile.block_ptr<tensor<64x64xf16, #bv>>
      %yb = tilegpu.local_alloc %y : tensor<64x64xf16, #bv> -> !tilegpu.memdesc<64x64xf16, #sv>
      %z = tile.load_block %c {tilegpu.vector_width = 8 : i32} : !tile.block_ptr<tensor<64x64xf16, #bv>>
      %zb = tilegpu.local_alloc %z : tensor<64x64xf16, #bv> -> !tilegpu.memdesc<64x64xf16, #sv>
      %w = tile.load_block %d boundary_check [1] {tilegpu.vector_width = 8 : i32} : !tile.block_ptr<tensor<64x64xf16, #bv>>
      %wb = tilegpu.local_alloc %w : tensor<64x64xf16, #bv> -> !tilegpu.memdesc<64x64xf16, #sv>
      %sum = arith.addf %acc, %x : tensor<64x64xf16, #bv>
      %next_a = tile.advance %a, [%c64, %c0] : !tile.block_ptr<tensor<64x64xf16, #bv>>
      %next_b = tile.advance %b, [%c64, %c0] : !tile.block_ptr<tensor<64x64xf16, #bv>>
      %next_c = tile.advance %c, [%i, %c0] : !tile.block_ptr<tensor<64x64xf16, #bv>>
      %next_d = tile.advance %d, [%c64, %c0] : !tile.block_ptr<tensor<64x64xf16, #bv>>
      scf.yield %next_a, %next_b, %next_c, %next_d, %sum : !tile.block_ptr<tensor<64x64xf16, #bv>>, !tile.block_ptr<tensor<64x64xf16, #bv>>, !tile.block_ptr<tensor<64x64xf16, #bv>>, !tile.block_ptr<tensor<64x64xf16, #bv>>, tensor<64x64xf16, #bv>
    }
    return %r#4 : tensor<64x64xf16, #bv>
  }
}

// -----

// A GEMM's main loop on wgmma: its one product accumulates into the value
// the loop carries. With three stages it stays in flight into the next
// iteration (each iteration waits until only its own group is pending, the
// loop's result is waited for in full), and the copies go into the buffer
// of iteration k - 2 for iteration k + 1: one group in the prologue.
#ba = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#na = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#acc = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  // S3-LABEL: func.func @gemm_loop
  // S3: tilegpu.async_wait {pending = 0 : i32}
  // S3-COUNT-1: tilegpu.async_commit_group
  // S3-NOT: tilegpu.async_commit_group
  // S3: scf.for
  // S3-NEXT: tilegpu.async_wait {pending = 0 : i32}
  // S3: tilegpu.async_commit_group
  // S3: %[[D:.*]] = tilegpu.warpgroup_dot {{.*}} {is_async}
  // S3: %[[W:.*]] = tilegpu.warpgroup_dot_wait %[[D]] {pendings = 1 : i32}
  // S3: scf.yield {{.*}}%[[W]]
  // S3: tilegpu.warpgroup_dot_wait %{{.*}}#2 {pendings = 0 : i32}
  // S3-NEXT: return
  // With two stages the product waits for itself.
  // CHECK-LABEL: func.func @gemm_loop
  // CHECK-NOT: is_async
  // CHECK-NOT: warpgroup_dot_wait
  func.func @gemm_loop(%ap: !tile.block_ptr<tensor<64x64xf16, #ba>>, %bp: !tile.block_ptr<tensor<64x64xf16, #ba>>, %n: i32, %zero: tensor<64x64xf32, #acc>) -> tensor<64x64xf32, #acc> {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %r:3 = scf.for %i = %c0 to %n step %c64 iter_args(%a_ptr = %ap, %b_ptr = %bp, %c = %zero) -> (!tile.block_ptr<tensor<64x64xf16, #ba>>, !tile.block_ptr<tensor<64x64xf16, #ba>>, tensor<64x64xf32, #acc>) : i32 {
      %a = tile.load_block %a_ptr {tilegpu.vector_width = 8 : i32} : !tile.block_ptr<tensor<64x64xf16, #ba>>
      %b = tile.load_block %b_ptr {tilegpu.vector_width = 8 : i32} : !tile.block_ptr<tensor<64x64xf16, #ba>>
      %ab = tilegpu.local_alloc %a : tensor<64x64xf16, #ba> -> !tilegpu.memdesc<64x64xf16, #na>
      %bb = tilegpu.local_alloc %b : tensor<64x64xf16, #ba> -> !tilegpu.memdesc<64x64xf16, #na>
      %d = tilegpu.warpgroup_dot %ab, %bb, %c : !tilegpu.memdesc<64x64xf16, #na>, !tilegpu.memdesc<64x64xf16, #na>, tensor<64x64xf32, #acc> -> tensor<64x64xf32, #acc>
      %next_a = tile.advance %a_ptr, [%c0, %c64] : !tile.block_ptr<tensor<64x64xf16, #ba>>
      %next_b = tile.advance %b_ptr, [%c64, %c0] : !tile.block_ptr<tensor<64x64xf16, #ba>>
      scf.yield %next_a, %next_b, %d : !tile.block_ptr<tensor<64x64xf16, #ba>>, !tile.block_ptr<tensor<64x64xf16, #ba>>, tensor<64x64xf32, #acc>
    }
    return %r#2 : tensor<64x64xf32, #acc>
  }
}

// -----

// A block pointer made in each iteration at offsets linear in the induction
// variable (a descriptor's desc.load([m, k])) is made once before the loop,
// at the lower bound's offsets, and carried, advanced by the offsets' step;
// then its load is pipelined like any carried pointer's.
#bk = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#sk = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_80>} {
  // CHECK-LABEL: func.func @made_each_iteration
  // CHECK: %[[NEXT:.*]] = arith.addi %c16_i32, %c32_i32
  // CHECK: %[[STEP:.*]] = arith.subi %[[NEXT]], %c16_i32
  // CHECK: %[[FIRST:.*]] = tile.make_block_ptr %arg0, [%arg3, %arg3], [%arg4, %c1_i64], [%arg2, %c16_i32]
  // CHECK: tilegpu.async_copy_block %[[FIRST]]
  // CHECK: scf.for {{.*}} iter_args(%{{.*}}, %[[P:.*]] = %[[FIRST]],
  // CHECK-NOT: tile.make_block_ptr
  // CHECK: %[[ADV:.*]] = tile.advance %[[P]], [%{{.*}}, %[[STEP]]]
  // CHECK: scf.yield {{.*}}%[[ADV]]
  func.func @made_each_iteration(%base: !tile.ptr<f16>, %n: i32, %m: i32, %size: i64, %stride: i64) -> tensor<64x64xf16, #bk> {
    %c16 = arith.constant 16 : i32
    %c32 = arith.constant 32 : i32
    %c1_i64 = arith.constant 1 : i64
    %zero = arith.constant dense<0.0> : tensor<64x64xf16, #bk>
    %r = scf.for %k = %c16 to %n step %c32 iter_args(%acc = %zero) -> (tensor<64x64xf16, #bk>) : i32 {
      %p = tile.make_block_ptr %base, [%size, %size], [%stride, %c1_i64], [%m, %k] order [1, 0] : !tile.block_ptr<tensor<64x64xf16, #bk>>
      %x = tile.load_block %p boundary_check [0] padding zero {tilegpu.vector_width = 8 : i32} : !tile.block_ptr<tensor<64x64xf16, #bk>>
      %xb = tilegpu.local_alloc %x : tensor<64x64xf16, #bk> -> !tilegpu.memdesc<64x64xf16, #sk>
      %y = tilegpu.local_load %xb [0, 0] : !tilegpu.memdesc<64x64xf16, #sk> -> tensor<64x64xf16, #bk>
      %sum = arith.addf %acc, %y : tensor<64x64xf16, #bk>
      scf.yield %sum : tensor<64x64xf16, #bk>
    }
    return %r : tensor<64x64xf16, #bk>
  }
}

// -----

// In a loop that asks for stages of its own (tl.range's num_stages, which
// also overrides the option: OFF), a load whose tile goes to registers (a
// softmax's block of rows) is staged through shared memory so that it is
// copied ahead like a product's operand: a local_alloc that the pipeliner turns into a stack of cp.async
// buffers, read back in the load's own layout. cp.async fills masked
// elements with zeros, so the load's `other` (-inf) comes back by a
// tile.where. The loop writes through another argument than the one it
// reads (%y, not %x): the copy ahead reads what the load would have.
#b = #tilegpu.blocked<sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], order = [1, 0]>
// CHECK-LABEL: func.func @row_blocks
// CHECK: %[[STACK:.*]] = tilegpu.local_alloc : !tilegpu.memdesc<2x4x128xf32, #[[SHARED:.*]]>
// CHECK: tilegpu.async_copy %{{.*}}, %{{.*}} mask %{{.*}} if %{{.*}} {vector_width = 4 : i32}
// CHECK: scf.for
// CHECK: %[[READ:.*]] = tilegpu.memdesc_index %[[STACK]][%{{.*}}]
// CHECK: tilegpu.async_copy
// CHECK-NOT: tile.load
// CHECK: %[[ROW:.*]] = tilegpu.local_load %[[READ]] [0, 0] : !tilegpu.memdesc<4x128xf32, #[[SHARED]]> -> tensor<4x128xf32, #{{.*}}>
// CHECK: tile.where %{{.*}}, %[[ROW]], %{{.*}} : tensor<4x128xf32, #{{.*}}>
// CHECK: tile.store
// OFF-LABEL: func.func @row_blocks
// OFF: tilegpu.local_alloc : !tilegpu.memdesc<2x4x128xf32
// OFF: tilegpu.async_copy
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @row_blocks(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c128 = arith.constant 128 : i32
    %cols = arith.constant dense<7> : tensor<4x128xi32, #b>
    %ninf = arith.constant dense<0xFF800000> : tensor<4x128xf32, #b>
    %xs = tile.splat %x : tensor<4x128x!tile.ptr<f32>, #b>
    %ys = tile.splat %y : tensor<4x128x!tile.ptr<f32>, #b>
    %ns = tile.splat %n : tensor<4x128xi32, #b>
    %m = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %ninf) -> (tensor<4x128xf32, #b>) : i32 {
      %start = arith.muli %i, %c128 : i32
      %starts = tile.splat %start : tensor<4x128xi32, #b>
      %offs = arith.addi %starts, %cols : tensor<4x128xi32, #b>
      %ok = arith.cmpi slt, %offs, %ns : tensor<4x128xi32, #b>
      %p = tile.addptr %xs, %offs : tensor<4x128x!tile.ptr<f32>, #b>, tensor<4x128xi32, #b>
      %v = tile.load %p mask %ok other %ninf {tilegpu.vector_width = 4 : i32} : tensor<4x128x!tile.ptr<f32>, #b>
      %mx = arith.maximumf %acc, %v : tensor<4x128xf32, #b>
      %q = tile.addptr %ys, %offs : tensor<4x128x!tile.ptr<f32>, #b>, tensor<4x128xi32, #b>
      tile.store %q, %mx mask %ok : tensor<4x128x!tile.ptr<f32>, #b>
      scf.yield %mx : tensor<4x128xf32, #b>
    } {tile.num_stages = 2 : i32}
    return
  }
}

// -----

// The loop writes through the argument it reads: a copy ahead could read
// what an earlier iteration has not written yet, so the load stays.
#b = #tilegpu.blocked<sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [1, 1], order = [1, 0]>
// CHECK-LABEL: func.func @writes_what_it_reads
// CHECK-NOT: tilegpu.local_alloc
// CHECK-NOT: tilegpu.async_copy
// CHECK: tile.load
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @writes_what_it_reads(%x: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c64 = arith.constant 64 : i32
    %cols = arith.constant dense<7> : tensor<4x128xi32, #b>
    %xs = tile.splat %x : tensor<4x128x!tile.ptr<f32>, #b>
    scf.for %i = %c0 to %n step %c1 : i32 {
      %start = arith.muli %i, %c64 : i32
      %starts = tile.splat %start : tensor<4x128xi32, #b>
      %offs = arith.addi %starts, %cols : tensor<4x128xi32, #b>
      %p = tile.addptr %xs, %offs : tensor<4x128x!tile.ptr<f32>, #b>, tensor<4x128xi32, #b>
      %v = tile.load %p {tilegpu.vector_width = 4 : i32} : tensor<4x128x!tile.ptr<f32>, #b>
      %w = arith.addf %v, %v : tensor<4x128xf32, #b>
      tile.store %p, %w : tensor<4x128x!tile.ptr<f32>, #b>
    } {tile.num_stages = 2 : i32}
    return
  }
}

// -----

// A row (rank 1) is copied through a [1, N] view of it: its pointers and
// mask reshaped in registers (each element stays in its thread), the buffer
// a 1 x N matrix, read back and reshaped to the row. The loop's step is a
// run-time value (rows strided by the number of programs): the copy ahead
// is for the induction value one step on.
#r = #tilegpu.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [2], order = [0]>
// CHECK: #[[VIEW:.*]] = #tilegpu.blocked<sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [1, 2], order = [1, 0]>
// CHECK-LABEL: func.func @rows
// CHECK: %[[STACK:.*]] = tilegpu.local_alloc : !tilegpu.memdesc<2x1x256xf32, #[[SHARED:.*]]>
// CHECK: scf.for %[[IV:.*]] = %{{.*}} to %arg2 step %arg4
// CHECK: %[[ONE_STEP:.*]] = arith.muli %arg4, %{{.*}} : i32
// CHECK: arith.addi %[[IV]], %[[ONE_STEP]] : i32
// CHECK: %[[READ:.*]] = tilegpu.memdesc_index %[[STACK]][%{{.*}}]
// CHECK: %[[P:.*]] = tile.reshape %{{.*}} : tensor<256x!tile.ptr<f32>, #{{.*}}> -> tensor<1x256x!tile.ptr<f32>, #[[VIEW]]>
// CHECK: %[[M:.*]] = tile.reshape %{{.*}} : tensor<256xi1, #{{.*}}> -> tensor<1x256xi1, #[[VIEW]]>
// CHECK: tilegpu.async_copy %[[P]], %{{.*}} mask %[[M]] if %{{.*}} {vector_width = 4 : i32}
// CHECK-NOT: tile.load
// CHECK: %[[TILE:.*]] = tilegpu.local_load %[[READ]] [0, 0] : !tilegpu.memdesc<1x256xf32, #[[SHARED]]> -> tensor<1x256xf32, #[[VIEW]]>
// CHECK: %[[ROW:.*]] = tile.reshape %[[TILE]] : tensor<1x256xf32, #[[VIEW]]> -> tensor<256xf32, #{{.*}}>
// CHECK: tile.where %{{.*}}, %[[ROW]], %{{.*}} : tensor<256xf32, #{{.*}}>
module attributes {tilegpu.num_warps = 2 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @rows(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>, %rows: i32, %stride: i32, %programs: i32) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c200 = arith.constant dense<200> : tensor<256xi32, #r>
    %cols = tile.arange 0 to 256 : tensor<256xi32, #r>
    %ok = arith.cmpi slt, %cols, %c200 : tensor<256xi32, #r>
    %ninf = arith.constant dense<0xFF800000> : tensor<256xf32, #r>
    scf.for %i = %c0 to %rows step %programs : i32 {
      %start = arith.muli %i, %stride : i32
      %row = tile.addptr %x, %start : !tile.ptr<f32>, i32
      %rows_ = tile.splat %row : tensor<256x!tile.ptr<f32>, #r>
      %p = tile.addptr %rows_, %cols : tensor<256x!tile.ptr<f32>, #r>, tensor<256xi32, #r>
      %v = tile.load %p mask %ok other %ninf {tilegpu.vector_width = 4 : i32} : tensor<256x!tile.ptr<f32>, #r>
      %e = math.exp %v : tensor<256xf32, #r>
      %out = tile.addptr %y, %start : !tile.ptr<f32>, i32
      %outs = tile.splat %out : tensor<256x!tile.ptr<f32>, #r>
      %q = tile.addptr %outs, %cols : tensor<256x!tile.ptr<f32>, #r>, tensor<256xi32, #r>
      tile.store %q, %e mask %ok : tensor<256x!tile.ptr<f32>, #r>
    } {tile.num_stages = 2 : i32}
    return
  }
}

// -----

// The same loop without stages of its own: as in Triton, loads that feed no
// product stay where they are (their buffers would cost the kernel programs
// an SM).
#r = #tilegpu.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [2], order = [0]>
// CHECK-LABEL: func.func @rows_unasked
// CHECK-NOT: tilegpu.local_alloc
// CHECK-NOT: tilegpu.async_copy
// CHECK: tile.load
// S3-LABEL: func.func @rows_unasked
// S3-NOT: tilegpu.async_copy
module attributes {tilegpu.num_warps = 2 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @rows_unasked(%x: !tile.ptr<f32>, %y: !tile.ptr<f32>, %rows: i32, %stride: i32, %programs: i32) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %cols = tile.arange 0 to 256 : tensor<256xi32, #r>
    scf.for %i = %c0 to %rows step %programs : i32 {
      %start = arith.muli %i, %stride : i32
      %row = tile.addptr %x, %start : !tile.ptr<f32>, i32
      %rows_ = tile.splat %row : tensor<256x!tile.ptr<f32>, #r>
      %p = tile.addptr %rows_, %cols : tensor<256x!tile.ptr<f32>, #r>, tensor<256xi32, #r>
      %v = tile.load %p {tilegpu.vector_width = 4 : i32} : tensor<256x!tile.ptr<f32>, #r>
      %e = math.exp %v : tensor<256xf32, #r>
      %out = tile.addptr %y, %start : !tile.ptr<f32>, i32
      %outs = tile.splat %out : tensor<256x!tile.ptr<f32>, #r>
      %q = tile.addptr %outs, %cols : tensor<256x!tile.ptr<f32>, #r>, tensor<256xi32, #r>
      tile.store %q, %e : tensor<256x!tile.ptr<f32>, #r>
    }
    return
  }
}
