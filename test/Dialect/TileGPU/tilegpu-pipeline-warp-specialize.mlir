// RUN: tile-opt %s -split-input-file -tilegpu-pipeline="num-stages=3 use-tma=true warp-specialize=true" | FileCheck %s
// RUN: tile-opt %s -split-input-file -tilegpu-pipeline="num-stages=3 use-tma=true" | FileCheck %s --check-prefix=PLAIN

// A GEMM loop whose product stays in flight: the producer warps copy A and
// B for every iteration, each into a three-stage ring of its own, each copy
// after its stage's "empty" mbarrier completed the phase before (parity
// phase ^ 1); the consumer waits on "full" before the dot and releases the
// stage of the iteration before once this iteration's product leaves one
// in flight, the last one after the loop. No barrier of all threads opens
// the iteration.
#ba = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#na = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#acc = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
// CHECK-LABEL: func.func @gemm
// CHECK-SAME: %[[ADESC:arg[0-9]+]]: !tilegpu.tensormap, %[[BDESC:arg[0-9]+]]: !tilegpu.tensormap) attributes {tile.kernel}
// CHECK-NEXT: %[[ASTACK:.*]] = tilegpu.local_alloc : !tilegpu.memdesc<3x64x64xf16, #nvmma>
// CHECK-NEXT: %[[AFULL:.*]] = tilegpu.local_alloc : !tilegpu.memdesc<3x1x1xi64, #shared>
// CHECK-NEXT: %[[AEMPTY:.*]] = tilegpu.local_alloc : !tilegpu.memdesc<3x1x1xi64, #shared>
// CHECK-NEXT: %[[BSTACK:.*]] = tilegpu.local_alloc : !tilegpu.memdesc<3x64x64xf16, #nvmma>
// CHECK-NEXT: %[[BFULL:.*]] = tilegpu.local_alloc : !tilegpu.memdesc<3x1x1xi64, #shared>
// CHECK-NEXT: %[[BEMPTY:.*]] = tilegpu.local_alloc : !tilegpu.memdesc<3x1x1xi64, #shared>
// CHECK-NEXT: tilegpu.init_barriers %[[AFULL]], %[[BFULL]], %[[AEMPTY]], %[[BEMPTY]] arrivals [1, 1, 128, 128] :
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT: tilegpu.warp_specialize {
// CHECK: %[[PID:.*]] = tile.program_id y
// CHECK: scf.for {{.*}} iter_args(%[[APTR:.*]] = %{{.*}}, %[[BPTR:.*]] = %{{.*}}, %[[ASLOT:.*]] = %[[ZERO]], %[[BSLOT:.*]] = %[[ZERO]], %[[APHASE:.*]] = %[[ZERO]], %[[BPHASE:.*]] = %[[ZERO]])
// CHECK: %[[EMPTYPHASE:.*]] = arith.xori %[[APHASE]], %c1
// CHECK-NEXT: %[[AE:.*]] = tilegpu.memdesc_index %[[AEMPTY]][%[[ASLOT]]]
// CHECK-NEXT: tilegpu.wait_barrier %[[AE]], %[[EMPTYPHASE]]
// CHECK-NEXT: %[[ABUF:.*]] = tilegpu.memdesc_index %[[ASTACK]][%[[ASLOT]]]
// CHECK-NEXT: %[[AF:.*]] = tilegpu.memdesc_index %[[AFULL]][%[[ASLOT]]]
// CHECK-NEXT: tilegpu.async_tma_copy_block %[[APTR]], %[[ADESC]][%[[PID]]], %[[ABUF]], %[[AF]] :
// CHECK: tilegpu.wait_barrier
// CHECK: tilegpu.async_tma_copy_block %[[BPTR]], %[[BDESC]][],
// CHECK: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: } {consumer_registers = 232 : i32, ctas_per_sm = 2 : i32, producer_registers = 24 : i32, producer_warps = 4 : i32}
// CHECK-NOT: tilegpu.async_tma_copy_block
// CHECK: %[[LOOP:.*]]:7 = scf.for %[[IV:.*]] = %[[LB:[^ ]*]] to %[[UB:[^ ]*]] step {{.*}} iter_args({{.*}}, %[[SLOT:.*]] = %[[ZERO]], %{{.*}} = %[[ZERO]], %[[PHASE:.*]] = %[[ZERO]], %{{.*}} = %[[ZERO]])
// CHECK-NOT: tilegpu.barrier
// CHECK: %[[AF:.*]] = tilegpu.memdesc_index %[[AFULL]][%[[SLOT]]]
// CHECK-NEXT: tilegpu.wait_barrier %[[AF]], %[[PHASE]]
// CHECK: tilegpu.wait_barrier
// CHECK-NEXT: %[[D:.*]] = tilegpu.warpgroup_dot {{.*}} {is_async}
// CHECK-NEXT: tilegpu.warpgroup_dot_wait %[[D]] {pendings = 1 : i32}
// CHECK: %[[NOTFIRST:.*]] = arith.cmpi ne, %[[IV]], %[[LB]]
// CHECK-NEXT: %[[AE:.*]] = tilegpu.memdesc_index %[[AEMPTY]]
// CHECK-NEXT: tilegpu.arrive_barrier %[[AE]] if %[[NOTFIRST]]
// CHECK: %[[BE:.*]] = tilegpu.memdesc_index %[[BEMPTY]]
// CHECK-NEXT: tilegpu.arrive_barrier %[[BE]] if
// CHECK: scf.yield
// The last iteration's stages, released once its product is done.
// CHECK: tilegpu.warpgroup_dot_wait %[[LOOP]]#2 {pendings = 0 : i32}
// CHECK: %[[RAN:.*]] = arith.cmpi slt, %[[LB]], %[[UB]]
// CHECK: tilegpu.arrive_barrier %{{.*}} if %[[RAN]]
// CHECK: tilegpu.arrive_barrier %{{.*}} if %[[RAN]]
// CHECK: tilegpu.inval_barriers %[[AFULL]], %[[BFULL]], %[[AEMPTY]], %[[BEMPTY]] :
// CHECK-NEXT: return
// Without warp-specialize, thread 0 issues the copies in the loop.
// PLAIN-LABEL: func.func @gemm
// PLAIN-NOT: tilegpu.warp_specialize
// PLAIN: scf.for
// PLAIN-NEXT: tilegpu.barrier
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @gemm(%A: !tile.ptr<f16> {tile.divisibility = 16 : i32} loc("A"), %B: !tile.ptr<f16> {tile.divisibility = 16 : i32} loc("B"), %M: i32 loc("M"), %K: i32 loc("K"), %stride: i32 {tile.divisibility = 16 : i32} loc("stride_m"), %stride_z: i32 {tile.divisibility = 8 : i32} loc("stride_z")) attributes {tile.kernel} {
    %zero = arith.constant dense<0.0> : tensor<64x64xf32, #acc>
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %c1_i64 = arith.constant 1 : i64
    %pid = tile.program_id y
    %z = arith.extsi %pid : i32 to i64
    %sz = arith.extsi %stride_z : i32 to i64
    %off = arith.muli %z, %sz : i64
    %a0 = tile.addptr %A, %off : !tile.ptr<f16>, i64
    %m = arith.extsi %M : i32 to i64
    %k = arith.extsi %K : i32 to i64
    %s = arith.extsi %stride : i32 to i64
    %ap = tile.make_block_ptr %a0, [%m, %k], [%s, %c1_i64], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf16, #ba>>
    %bp = tile.make_block_ptr %B, [%k, %m], [%s, %c1_i64], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf16, #ba>>
    %r:3 = scf.for %i = %c0 to %K step %c64 iter_args(%a_ptr = %ap, %b_ptr = %bp, %c = %zero) -> (!tile.block_ptr<tensor<64x64xf16, #ba>>, !tile.block_ptr<tensor<64x64xf16, #ba>>, tensor<64x64xf32, #acc>) : i32 {
      %a = tile.load_block %a_ptr boundary_check [0] padding zero {tilegpu.vector_width = 8 : i32} : !tile.block_ptr<tensor<64x64xf16, #ba>>
      %b = tile.load_block %b_ptr {tilegpu.vector_width = 8 : i32} : !tile.block_ptr<tensor<64x64xf16, #ba>>
      %ab = tilegpu.local_alloc %a : tensor<64x64xf16, #ba> -> !tilegpu.memdesc<64x64xf16, #na>
      %bb = tilegpu.local_alloc %b : tensor<64x64xf16, #ba> -> !tilegpu.memdesc<64x64xf16, #na>
      %d = tilegpu.warpgroup_dot %ab, %bb, %c : !tilegpu.memdesc<64x64xf16, #na>, !tilegpu.memdesc<64x64xf16, #na>, tensor<64x64xf32, #acc> -> tensor<64x64xf32, #acc>
      %next_a = tile.advance %a_ptr, [%c0, %c64] : !tile.block_ptr<tensor<64x64xf16, #ba>>
      %next_b = tile.advance %b_ptr, [%c64, %c0] : !tile.block_ptr<tensor<64x64xf16, #ba>>
      scf.yield %next_a, %next_b, %d : !tile.block_ptr<tensor<64x64xf16, #ba>>, !tile.block_ptr<tensor<64x64xf16, #ba>>, tensor<64x64xf32, #acc>
    }
    return
  }
}

// -----

// Two loops reading the same tensor (attention's unmasked and masked key
// blocks) share its ring: the second starts from the slot and phase the
// first ends at, in the producer and in the consumer. A product waited for
// at once releases its stage right after it.
#bk = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#nk = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#acc = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
// CHECK-LABEL: func.func @two_loops
// CHECK: %[[STACK:.*]] = tilegpu.local_alloc : !tilegpu.memdesc<3x64x64xf16, #nvmma>
// CHECK-NEXT: %[[FULL:.*]] = tilegpu.local_alloc
// CHECK-NEXT: %[[EMPTY:.*]] = tilegpu.local_alloc
// CHECK-NOT: tilegpu.local_alloc :
// CHECK: tilegpu.warp_specialize {
// CHECK: %[[FIRST:.*]]:3 = scf.for
// CHECK: tilegpu.async_tma_copy_block
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %[[FIRST]]#1, %{{.*}} = %[[FIRST]]#2)
// CHECK: tilegpu.async_tma_copy_block
// CHECK: } {consumer_registers
// CHECK: %[[LOOP1:.*]]:4 = scf.for
// CHECK: tilegpu.wait_barrier
// CHECK-NEXT: %[[S:.*]] = tilegpu.warpgroup_dot
// CHECK-NEXT: %[[E:.*]] = tilegpu.memdesc_index %[[EMPTY]]
// CHECK-NEXT: tilegpu.arrive_barrier %[[E]] :
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[LOOP1]]#0, %{{.*}} = %{{.*}}, %{{.*}} = %[[LOOP1]]#2, %{{.*}} = %[[LOOP1]]#3)
// CHECK: tilegpu.arrive_barrier
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @two_loops(%K: !tile.ptr<f16> {tile.divisibility = 16 : i32} loc("K"), %N: i32 loc("N"), %stride: i32 {tile.divisibility = 16 : i32} loc("stride_n"), %mid: i32) attributes {tile.kernel} {
    %zero = arith.constant dense<0.0> : tensor<64x64xf32, #acc>
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %c1_i64 = arith.constant 1 : i64
    %n = arith.extsi %N : i32 to i64
    %s = arith.extsi %stride : i32 to i64
    %q = tilegpu.local_alloc : !tilegpu.memdesc<64x64xf16, #nk>
    %kp = tile.make_block_ptr %K, [%n, %c1_i64], [%s, %c1_i64], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf16, #bk>>
    %r1:2 = scf.for %i = %c0 to %mid step %c64 iter_args(%acc = %zero, %k_ptr = %kp) -> (tensor<64x64xf32, #acc>, !tile.block_ptr<tensor<64x64xf16, #bk>>) : i32 {
      %k = tile.load_block %k_ptr {tilegpu.vector_width = 8 : i32} : !tile.block_ptr<tensor<64x64xf16, #bk>>
      %kb = tilegpu.local_alloc %k : tensor<64x64xf16, #bk> -> !tilegpu.memdesc<64x64xf16, #nk>
      %d = tilegpu.warpgroup_dot %q, %kb, %zero : !tilegpu.memdesc<64x64xf16, #nk>, !tilegpu.memdesc<64x64xf16, #nk>, tensor<64x64xf32, #acc> -> tensor<64x64xf32, #acc>
      %sum = arith.addf %acc, %d : tensor<64x64xf32, #acc>
      %next = tile.advance %k_ptr, [%c64, %c0] : !tile.block_ptr<tensor<64x64xf16, #bk>>
      scf.yield %sum, %next : tensor<64x64xf32, #acc>, !tile.block_ptr<tensor<64x64xf16, #bk>>
    }
    %kp2 = tile.advance %kp, [%mid, %c0] : !tile.block_ptr<tensor<64x64xf16, #bk>>
    %r2:2 = scf.for %i = %mid to %N step %c64 iter_args(%acc = %r1#0, %k_ptr = %kp2) -> (tensor<64x64xf32, #acc>, !tile.block_ptr<tensor<64x64xf16, #bk>>) : i32 {
      %k = tile.load_block %k_ptr boundary_check [0] padding zero {tilegpu.vector_width = 8 : i32} : !tile.block_ptr<tensor<64x64xf16, #bk>>
      %kb = tilegpu.local_alloc %k : tensor<64x64xf16, #bk> -> !tilegpu.memdesc<64x64xf16, #nk>
      %d = tilegpu.warpgroup_dot %q, %kb, %zero : !tilegpu.memdesc<64x64xf16, #nk>, !tilegpu.memdesc<64x64xf16, #nk>, tensor<64x64xf32, #acc> -> tensor<64x64xf32, #acc>
      %sum = arith.addf %acc, %d : tensor<64x64xf32, #acc>
      %next = tile.advance %k_ptr, [%c64, %c0] : !tile.block_ptr<tensor<64x64xf16, #bk>>
      scf.yield %sum, %next : tensor<64x64xf32, #acc>, !tile.block_ptr<tensor<64x64xf16, #bk>>
    }
    return
  }
}

// -----

// A loop under a branch: the producer mirrors the branch, on the same
// condition, and both sides carry the ring's slot and phase out of it.
#bk = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#nk = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#acc = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
// CHECK-LABEL: func.func @under_branch
// CHECK-SAME: %[[FLAG:arg[0-9]+]]: i1
// CHECK: tilegpu.warp_specialize {
// CHECK: scf.if %[[FLAG]] -> (i32, i32) {
// CHECK: scf.for
// CHECK: tilegpu.async_tma_copy_block
// CHECK: } else {
// CHECK-NEXT: scf.yield %[[ZERO:.*]], %[[ZERO]] : i32, i32
// CHECK: } {consumer_registers
// CHECK: scf.if %[[FLAG]] -> (i32, i32) {
// CHECK: scf.for
// CHECK-NOT: tilegpu.barrier
// CHECK: tilegpu.wait_barrier
// CHECK: tilegpu.arrive_barrier
// CHECK: } else {
// CHECK-NEXT: scf.yield
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @under_branch(%K: !tile.ptr<f16> {tile.divisibility = 16 : i32} loc("K"), %N: i32 loc("N"), %stride: i32 {tile.divisibility = 16 : i32} loc("stride_n"), %flag: i1) attributes {tile.kernel} {
    %zero = arith.constant dense<0.0> : tensor<64x64xf32, #acc>
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %c1_i64 = arith.constant 1 : i64
    %n = arith.extsi %N : i32 to i64
    %s = arith.extsi %stride : i32 to i64
    %q = tilegpu.local_alloc : !tilegpu.memdesc<64x64xf16, #nk>
    %kp = tile.make_block_ptr %K, [%n, %c1_i64], [%s, %c1_i64], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf16, #bk>>
    scf.if %flag {
      %r:2 = scf.for %i = %c0 to %N step %c64 iter_args(%acc = %zero, %k_ptr = %kp) -> (tensor<64x64xf32, #acc>, !tile.block_ptr<tensor<64x64xf16, #bk>>) : i32 {
        %k = tile.load_block %k_ptr {tilegpu.vector_width = 8 : i32} : !tile.block_ptr<tensor<64x64xf16, #bk>>
        %kb = tilegpu.local_alloc %k : tensor<64x64xf16, #bk> -> !tilegpu.memdesc<64x64xf16, #nk>
        %d = tilegpu.warpgroup_dot %q, %kb, %zero : !tilegpu.memdesc<64x64xf16, #nk>, !tilegpu.memdesc<64x64xf16, #nk>, tensor<64x64xf32, #acc> -> tensor<64x64xf32, #acc>
        %sum = arith.addf %acc, %d : tensor<64x64xf32, #acc>
        %next = tile.advance %k_ptr, [%c64, %c0] : !tile.block_ptr<tensor<64x64xf16, #bk>>
        scf.yield %sum, %next : tensor<64x64xf32, #acc>, !tile.block_ptr<tensor<64x64xf16, #bk>>
      }
    }
    return
  }
}

// -----

// Two warps are half a warpgroup: the producer warps would share theirs,
// and setmaxnreg acts on whole warpgroups. Pipelined as without
// warp-specialize.
#bk = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [2, 1], order = [1, 0]>
#nk = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
// CHECK-LABEL: func.func @half_warpgroup
// CHECK-NOT: tilegpu.warp_specialize
// CHECK: scf.for
// CHECK-NEXT: tilegpu.barrier
module attributes {tilegpu.num_warps = 2 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @half_warpgroup(%K: !tile.ptr<f16> {tile.divisibility = 16 : i32} loc("K"), %N: i32 loc("N"), %stride: i32 {tile.divisibility = 16 : i32} loc("stride_n")) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %c1_i64 = arith.constant 1 : i64
    %n = arith.extsi %N : i32 to i64
    %s = arith.extsi %stride : i32 to i64
    %kp = tile.make_block_ptr %K, [%n, %c1_i64], [%s, %c1_i64], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf16, #bk>>
    %r = scf.for %i = %c0 to %N step %c64 iter_args(%k_ptr = %kp) -> (!tile.block_ptr<tensor<64x64xf16, #bk>>) : i32 {
      %k = tile.load_block %k_ptr {tilegpu.vector_width = 8 : i32} : !tile.block_ptr<tensor<64x64xf16, #bk>>
      %kb = tilegpu.local_alloc %k : tensor<64x64xf16, #bk> -> !tilegpu.memdesc<64x64xf16, #nk>
      %l = tilegpu.local_load %kb [0, 0] : !tilegpu.memdesc<64x64xf16, #nk> -> tensor<64x64xf16, #bk>
      %next = tile.advance %k_ptr, [%c64, %c0] : !tile.block_ptr<tensor<64x64xf16, #bk>>
      scf.yield %next : !tile.block_ptr<tensor<64x64xf16, #bk>>
    }
    return
  }
}

// -----

// An asynchronous product waited for only after its loop: the buffer it
// reads could not be released on time. Pipelined as without
// warp-specialize.
#bk = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#nk = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#acc = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
// CHECK-LABEL: func.func @waited_after_the_loop
// CHECK-NOT: tilegpu.warp_specialize
// CHECK: scf.for
// CHECK-NEXT: tilegpu.barrier
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @waited_after_the_loop(%K: !tile.ptr<f16> {tile.divisibility = 16 : i32} loc("K"), %N: i32 loc("N"), %stride: i32 {tile.divisibility = 16 : i32} loc("stride_n")) attributes {tile.kernel} {
    %zero = arith.constant dense<0.0> : tensor<64x64xf32, #acc>
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %c1_i64 = arith.constant 1 : i64
    %n = arith.extsi %N : i32 to i64
    %s = arith.extsi %stride : i32 to i64
    %q = tilegpu.local_alloc : !tilegpu.memdesc<64x64xf16, #nk>
    %kp = tile.make_block_ptr %K, [%n, %c1_i64], [%s, %c1_i64], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf16, #bk>>
    %r:2 = scf.for %i = %c0 to %N step %c64 iter_args(%last = %zero, %k_ptr = %kp) -> (tensor<64x64xf32, #acc>, !tile.block_ptr<tensor<64x64xf16, #bk>>) : i32 {
      %k = tile.load_block %k_ptr {tilegpu.vector_width = 8 : i32} : !tile.block_ptr<tensor<64x64xf16, #bk>>
      %kb = tilegpu.local_alloc %k : tensor<64x64xf16, #bk> -> !tilegpu.memdesc<64x64xf16, #nk>
      %d = tilegpu.warpgroup_dot %q, %kb, %zero {is_async} : !tilegpu.memdesc<64x64xf16, #nk>, !tilegpu.memdesc<64x64xf16, #nk>, tensor<64x64xf32, #acc> -> tensor<64x64xf32, #acc>
      %next = tile.advance %k_ptr, [%c64, %c0] : !tile.block_ptr<tensor<64x64xf16, #bk>>
      scf.yield %d, %next : tensor<64x64xf32, #acc>, !tile.block_ptr<tensor<64x64xf16, #bk>>
    }
    %done = tilegpu.warpgroup_dot_wait %r#0 {pendings = 0 : i32} : tensor<64x64xf32, #acc>
    return
  }
}

// -----

// A packed sequence: its length is read from memory (cu_seqlens), bounds
// the loop, and is the extent of Q's block. The producer reads the length
// again for its own loop; Q, read once and with an extent no descriptor
// made before launch can hold, stays with the kernel's warps (a load and a
// store to its buffer after the split) while the producer copies K.
#bk = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#nk = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#acc = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
// CHECK-LABEL: func.func @packed_sequence
// CHECK-SAME: %[[CU:arg2]]: !tile.ptr<i32>
// CHECK: tilegpu.warp_specialize {
// CHECK: %[[PLEN:.*]] = tile.load %[[CU]] : !tile.ptr<i32>
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[PLEN]]
// CHECK: tilegpu.async_tma_copy_block
// CHECK-NOT: tilegpu.async_tma_copy_block
// CHECK: } {consumer_registers
// CHECK: %[[LEN:.*]] = tile.load %[[CU]] : !tile.ptr<i32>
// CHECK: %[[Q:.*]] = tile.load_block %{{.*}} boundary_check [0]
// CHECK-NEXT: %[[QB:.*]] = tilegpu.local_alloc %[[Q]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[LEN]]
// CHECK: tilegpu.wait_barrier
// CHECK-NEXT: tilegpu.warpgroup_dot %[[QB]]
// CHECK: tilegpu.arrive_barrier
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @packed_sequence(%Q: !tile.ptr<f16> {tile.divisibility = 16 : i32} loc("Q"), %K: !tile.ptr<f16> {tile.divisibility = 16 : i32} loc("K"), %CU: !tile.ptr<i32> loc("CU_SEQLENS"), %N: i32 loc("N"), %stride: i32 {tile.divisibility = 16 : i32} loc("stride_n")) attributes {tile.kernel} {
    %zero = arith.constant dense<0.0> : tensor<64x64xf32, #acc>
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %c1_i64 = arith.constant 1 : i64
    %c64_i64 = arith.constant 64 : i64
    %len = tile.load %CU : !tile.ptr<i32>
    %l = arith.extsi %len : i32 to i64
    %n = arith.extsi %N : i32 to i64
    %s = arith.extsi %stride : i32 to i64
    %qp = tile.make_block_ptr %Q, [%l, %c64_i64], [%s, %c1_i64], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf16, #bk>>
    %q = tile.load_block %qp boundary_check [0] padding zero {tilegpu.vector_width = 8 : i32} : !tile.block_ptr<tensor<64x64xf16, #bk>>
    %qb = tilegpu.local_alloc %q : tensor<64x64xf16, #bk> -> !tilegpu.memdesc<64x64xf16, #nk>
    %kp = tile.make_block_ptr %K, [%n, %c64_i64], [%s, %c1_i64], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf16, #bk>>
    %r:2 = scf.for %i = %c0 to %len step %c64 iter_args(%acc = %zero, %k_ptr = %kp) -> (tensor<64x64xf32, #acc>, !tile.block_ptr<tensor<64x64xf16, #bk>>) : i32 {
      %k = tile.load_block %k_ptr {tilegpu.vector_width = 8 : i32} : !tile.block_ptr<tensor<64x64xf16, #bk>>
      %kb = tilegpu.local_alloc %k : tensor<64x64xf16, #bk> -> !tilegpu.memdesc<64x64xf16, #nk>
      %d = tilegpu.warpgroup_dot %qb, %kb, %zero : !tilegpu.memdesc<64x64xf16, #nk>, !tilegpu.memdesc<64x64xf16, #nk>, tensor<64x64xf32, #acc> -> tensor<64x64xf32, #acc>
      %sum = arith.addf %acc, %d : tensor<64x64xf32, #acc>
      %next = tile.advance %k_ptr, [%c64, %c0] : !tile.block_ptr<tensor<64x64xf16, #bk>>
      scf.yield %sum, %next : tensor<64x64xf32, #acc>, !tile.block_ptr<tensor<64x64xf16, #bk>>
    }
    return
  }
}

// -----

// The same in a persistent kernel, a loop over blocks of work around the
// loop over K: Q, read once a block with an extent no descriptor can hold,
// stays with the kernel's warps inside the outer loop, which the producer
// mirrors to copy each block's K.
#bk = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#nk = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#acc = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
// CHECK-LABEL: func.func @persistent_packed_sequence
// CHECK: tilegpu.warp_specialize {
// CHECK: scf.for
// CHECK: scf.for
// CHECK: tilegpu.async_tma_copy_block
// CHECK-NOT: tilegpu.async_tma_copy_block
// CHECK: } {consumer_registers
// CHECK: scf.for
// CHECK: %[[Q:.*]] = tile.load_block %{{.*}} boundary_check [0]
// CHECK-NEXT: %[[QB:.*]] = tilegpu.local_alloc %[[Q]]
// CHECK: scf.for
// CHECK: tilegpu.wait_barrier
// CHECK-NEXT: tilegpu.warpgroup_dot %[[QB]]
// PLAIN-LABEL: func.func @persistent_packed_sequence
// PLAIN-NOT: tilegpu.warp_specialize
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @persistent_packed_sequence(%Q: !tile.ptr<f16> {tile.divisibility = 16 : i32} loc("Q"), %K: !tile.ptr<f16> {tile.divisibility = 16 : i32} loc("K"), %CU: !tile.ptr<i32> loc("CU_SEQLENS"), %N: i32 loc("N"), %stride: i32 {tile.divisibility = 16 : i32} loc("stride_n"), %blocks: i32 loc("blocks")) attributes {tile.kernel} {
    %zero = arith.constant dense<0.0> : tensor<64x64xf32, #acc>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c64 = arith.constant 64 : i32
    %c1_i64 = arith.constant 1 : i64
    %c64_i64 = arith.constant 64 : i64
    %len = tile.load %CU : !tile.ptr<i32>
    %l = arith.extsi %len : i32 to i64
    %n = arith.extsi %N : i32 to i64
    %s = arith.extsi %stride : i32 to i64
    scf.for %b = %c0 to %blocks step %c1 : i32 {
      %qp = tile.make_block_ptr %Q, [%l, %c64_i64], [%s, %c1_i64], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf16, #bk>>
      %q = tile.load_block %qp boundary_check [0] padding zero {tilegpu.vector_width = 8 : i32} : !tile.block_ptr<tensor<64x64xf16, #bk>>
      %qb = tilegpu.local_alloc %q : tensor<64x64xf16, #bk> -> !tilegpu.memdesc<64x64xf16, #nk>
      %kp = tile.make_block_ptr %K, [%n, %c64_i64], [%s, %c1_i64], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf16, #bk>>
      %r:2 = scf.for %i = %c0 to %len step %c64 iter_args(%acc = %zero, %k_ptr = %kp) -> (tensor<64x64xf32, #acc>, !tile.block_ptr<tensor<64x64xf16, #bk>>) : i32 {
        %k = tile.load_block %k_ptr {tilegpu.vector_width = 8 : i32} : !tile.block_ptr<tensor<64x64xf16, #bk>>
        %kb = tilegpu.local_alloc %k : tensor<64x64xf16, #bk> -> !tilegpu.memdesc<64x64xf16, #nk>
        %d = tilegpu.warpgroup_dot %qb, %kb, %zero : !tilegpu.memdesc<64x64xf16, #nk>, !tilegpu.memdesc<64x64xf16, #nk>, tensor<64x64xf32, #acc> -> tensor<64x64xf32, #acc>
        %sum = arith.addf %acc, %d : tensor<64x64xf32, #acc>
        %next = tile.advance %k_ptr, [%c64, %c0] : !tile.block_ptr<tensor<64x64xf16, #bk>>
        scf.yield %sum, %next : tensor<64x64xf32, #acc>, !tile.block_ptr<tensor<64x64xf16, #bk>>
      }
    }
    return
  }
}

// -----

// A row of statistics the loop reads beside its product (the backward's
// LSE), in registers: the producer copies it too, into a ring of
// unswizzled buffers (a descriptor without swizzle, one box a row, its
// stride the kernel's padding of N to 16, which the runtime computes as
// cdiv), and the consumer reads it from there in the layout its broadcast
// is wanted in, with no conversion left.
#bk = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#br = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]>
#nk = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#acc = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
// CHECK-LABEL: module attributes
// CHECK-SAME: {base = "LSE", box = [64, 1, 1], dims = ["N", "1", "min(2147483648, cdiv(1099511627776, max(1, ((cdiv(N, 16) * 16) * 4))))"], strides = ["(cdiv(N, 16) * 16)", "(cdiv(N, 16) * 16)"], swizzle = 0 : i64}
// CHECK-LABEL: func.func @row_beside_product
// CHECK: %[[ROWS:.*]] = tilegpu.local_alloc : !tilegpu.memdesc<3x1x64xf32, #shared>
// CHECK: tilegpu.warp_specialize {
// CHECK: scf.for
// CHECK: tilegpu.async_tma_copy_block {{.*}} : !tile.block_ptr<tensor<64x64xf16, #blocked>>
// CHECK: %[[ROWBUF:.*]] = tilegpu.memdesc_index %[[ROWS]]
// CHECK: tilegpu.async_tma_copy_block %{{.*}}, %{{.*}}[%{{.*}}], %[[ROWBUF]], %{{.*}} : !tile.block_ptr<tensor<1x64xf32, #blocked1>>, !tilegpu.memdesc<1x64xf32, #shared>
// CHECK: } {consumer_registers
// CHECK: scf.for
// CHECK-NOT: tile.load_block
// CHECK: %[[ROW:.*]] = tilegpu.memdesc_index %[[ROWS]]
// CHECK: tilegpu.wait_barrier
// CHECK-NEXT: %[[LSE:.*]] = tilegpu.local_load %[[ROW]] [0, 0] : !tilegpu.memdesc<1x64xf32, #shared> -> tensor<1x64xf32, #mma>
// CHECK-NEXT: tilegpu.memdesc_index
// CHECK-NEXT: tilegpu.arrive_barrier
// CHECK-NOT: tilegpu.convert_layout
// CHECK: tile.broadcast %[[LSE]] : tensor<1x64xf32, #mma> -> tensor<64x64xf32, #mma>
// CHECK: scf.yield
// Without warp specialization the row stays a load of the kernel's warps.
// PLAIN-LABEL: func.func @row_beside_product
// PLAIN: tile.load_block {{.*}} : !tile.block_ptr<tensor<1x64xf32, #blocked1>>
// PLAIN-NOT: tilegpu.local_load
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @row_beside_product(%K: !tile.ptr<f16> {tile.divisibility = 16 : i32} loc("K"), %LSE: !tile.ptr<f32> {tile.divisibility = 16 : i32} loc("LSE"), %N: i32 loc("N"), %stride: i32 {tile.divisibility = 16 : i32} loc("stride_n")) attributes {tile.kernel} {
    %zero = arith.constant dense<0.0> : tensor<64x64xf32, #acc>
    %c0 = arith.constant 0 : i32
    %c15 = arith.constant 15 : i32
    %c16 = arith.constant 16 : i32
    %c64 = arith.constant 64 : i32
    %c1_i64 = arith.constant 1 : i64
    %c64_i64 = arith.constant 64 : i64
    %n = arith.extsi %N : i32 to i64
    %s = arith.extsi %stride : i32 to i64
    %kp = tile.make_block_ptr %K, [%n, %c64_i64], [%s, %c1_i64], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf16, #bk>>
    %qb = tilegpu.local_alloc : !tilegpu.memdesc<64x64xf16, #nk>
    // The row of program y: LSE + y * (cdiv(N, 16) * 16), N of them.
    %up = arith.addi %N, %c15 : i32
    %div = arith.divsi %up, %c16 : i32
    %padded = arith.muli %div, %c16 : i32
    %pid = tile.program_id y
    %y = arith.extsi %pid : i32 to i64
    %p = arith.extsi %padded : i32 to i64
    %off = arith.muli %y, %p : i64
    %row0 = tile.addptr %LSE, %off : !tile.ptr<f32>, i64
    %rp = tile.make_block_ptr %row0, [%c1_i64, %n], [%p, %c1_i64], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<1x64xf32, #br>>
    %r:3 = scf.for %i = %c0 to %N step %c64 iter_args(%acc = %zero, %k_ptr = %kp, %r_ptr = %rp) -> (tensor<64x64xf32, #acc>, !tile.block_ptr<tensor<64x64xf16, #bk>>, !tile.block_ptr<tensor<1x64xf32, #br>>) : i32 {
      %k = tile.load_block %k_ptr {tilegpu.vector_width = 8 : i32} : !tile.block_ptr<tensor<64x64xf16, #bk>>
      %kb = tilegpu.local_alloc %k : tensor<64x64xf16, #bk> -> !tilegpu.memdesc<64x64xf16, #nk>
      %d = tilegpu.warpgroup_dot %qb, %kb, %zero : !tilegpu.memdesc<64x64xf16, #nk>, !tilegpu.memdesc<64x64xf16, #nk>, tensor<64x64xf32, #acc> -> tensor<64x64xf32, #acc>
      %lse = tile.load_block %r_ptr boundary_check [1] padding zero : !tile.block_ptr<tensor<1x64xf32, #br>>
      %wide = tile.broadcast %lse : tensor<1x64xf32, #br> -> tensor<64x64xf32, #br>
      %cvt = tilegpu.convert_layout %wide : tensor<64x64xf32, #br> -> tensor<64x64xf32, #acc>
      %shifted = arith.subf %d, %cvt : tensor<64x64xf32, #acc>
      %sum = arith.addf %acc, %shifted : tensor<64x64xf32, #acc>
      %next = tile.advance %k_ptr, [%c64, %c0] : !tile.block_ptr<tensor<64x64xf16, #bk>>
      %next_r = tile.advance %r_ptr, [%c0, %c64] : !tile.block_ptr<tensor<1x64xf32, #br>>
      scf.yield %sum, %next, %next_r : tensor<64x64xf32, #acc>, !tile.block_ptr<tensor<64x64xf16, #bk>>, !tile.block_ptr<tensor<1x64xf32, #br>>
    }
    return
  }
}

// -----

// A column of statistics (the backward's LSE with queries as rows): loaded
// along its length, so coalesced in a layout of its own and converted
// before its broadcast. The consumer reads it from the ring in the layout
// the broadcast is wanted in, neither conversion left.
#bk = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#bc = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [2, 2], order = [0, 1]>
#br = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]>
#nk = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#acc = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
// CHECK-LABEL: func.func @column_converted_before_broadcast
// CHECK: %[[COLS:.*]] = tilegpu.local_alloc : !tilegpu.memdesc<3x64x1xf32, #shared1>
// CHECK: tilegpu.warp_specialize {
// CHECK: tilegpu.async_tma_copy_block {{.*}} : !tile.block_ptr<tensor<64x1xf32, #blocked1>>, !tilegpu.memdesc<64x1xf32, #shared1>
// CHECK: } {consumer_registers
// CHECK: scf.for
// CHECK-NOT: tilegpu.convert_layout
// CHECK: %[[LSE:.*]] = tilegpu.local_load %{{.*}} [0, 0] : !tilegpu.memdesc<64x1xf32, #shared1> -> tensor<64x1xf32, #mma>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: tile.broadcast %[[LSE]] : tensor<64x1xf32, #mma> -> tensor<64x64xf32, #mma>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: scf.yield
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @column_converted_before_broadcast(%K: !tile.ptr<f16> {tile.divisibility = 16 : i32} loc("K"), %LSE: !tile.ptr<f32> {tile.divisibility = 16 : i32} loc("LSE"), %N: i32 loc("N"), %stride: i32 {tile.divisibility = 16 : i32} loc("stride_n")) attributes {tile.kernel} {
    %zero = arith.constant dense<0.0> : tensor<64x64xf32, #acc>
    %c0 = arith.constant 0 : i32
    %c15 = arith.constant 15 : i32
    %c16 = arith.constant 16 : i32
    %c64 = arith.constant 64 : i32
    %c1_i64 = arith.constant 1 : i64
    %c64_i64 = arith.constant 64 : i64
    %n = arith.extsi %N : i32 to i64
    %s = arith.extsi %stride : i32 to i64
    %kp = tile.make_block_ptr %K, [%n, %c64_i64], [%s, %c1_i64], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf16, #bk>>
    %qb = tilegpu.local_alloc : !tilegpu.memdesc<64x64xf16, #nk>
    %up = arith.addi %N, %c15 : i32
    %div = arith.divsi %up, %c16 : i32
    %padded = arith.muli %div, %c16 : i32
    %pid = tile.program_id y
    %y = arith.extsi %pid : i32 to i64
    %p = arith.extsi %padded : i32 to i64
    %off = arith.muli %y, %p : i64
    %row0 = tile.addptr %LSE, %off : !tile.ptr<f32>, i64
    %cp = tile.make_block_ptr %row0, [%n, %c1_i64], [%c1_i64, %p], [%c0, %c0] order [0, 1] : !tile.block_ptr<tensor<64x1xf32, #bc>>
    %r:3 = scf.for %i = %c0 to %N step %c64 iter_args(%acc = %zero, %k_ptr = %kp, %c_ptr = %cp) -> (tensor<64x64xf32, #acc>, !tile.block_ptr<tensor<64x64xf16, #bk>>, !tile.block_ptr<tensor<64x1xf32, #bc>>) : i32 {
      %k = tile.load_block %k_ptr {tilegpu.vector_width = 8 : i32} : !tile.block_ptr<tensor<64x64xf16, #bk>>
      %kb = tilegpu.local_alloc %k : tensor<64x64xf16, #bk> -> !tilegpu.memdesc<64x64xf16, #nk>
      %d = tilegpu.warpgroup_dot %qb, %kb, %zero : !tilegpu.memdesc<64x64xf16, #nk>, !tilegpu.memdesc<64x64xf16, #nk>, tensor<64x64xf32, #acc> -> tensor<64x64xf32, #acc>
      %lse = tile.load_block %c_ptr boundary_check [0] padding zero : !tile.block_ptr<tensor<64x1xf32, #bc>>
      %col = tilegpu.convert_layout %lse : tensor<64x1xf32, #bc> -> tensor<64x1xf32, #br>
      %wide = tile.broadcast %col : tensor<64x1xf32, #br> -> tensor<64x64xf32, #br>
      %cvt = tilegpu.convert_layout %wide : tensor<64x64xf32, #br> -> tensor<64x64xf32, #acc>
      %shifted = arith.subf %d, %cvt : tensor<64x64xf32, #acc>
      %sum = arith.addf %acc, %shifted : tensor<64x64xf32, #acc>
      %next = tile.advance %k_ptr, [%c64, %c0] : !tile.block_ptr<tensor<64x64xf16, #bk>>
      %next_c = tile.advance %c_ptr, [%c64, %c0] : !tile.block_ptr<tensor<64x1xf32, #bc>>
      scf.yield %sum, %next, %next_c : tensor<64x64xf32, #acc>, !tile.block_ptr<tensor<64x64xf16, #bk>>, !tile.block_ptr<tensor<64x1xf32, #bc>>
    }
    return
  }
}

// -----

// A row the TMA cannot copy (its rows' stride, N elements, is not known to
// be a multiple of 16 bytes) stays a load of the kernel's warps; the
// producer still copies K.
#bk = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#br = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]>
#nk = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#acc = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
// CHECK-LABEL: func.func @row_left_to_the_kernel
// CHECK: tilegpu.warp_specialize {
// CHECK: tilegpu.async_tma_copy_block {{.*}} : !tile.block_ptr<tensor<64x64xf16, #blocked>>
// CHECK-NOT: tilegpu.async_tma_copy_block
// CHECK: } {consumer_registers
// CHECK: scf.for
// CHECK: tile.load_block {{.*}} : !tile.block_ptr<tensor<1x64xf32, #blocked1>>
// CHECK-NOT: tilegpu.local_load
// CHECK: scf.yield
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @row_left_to_the_kernel(%K: !tile.ptr<f16> {tile.divisibility = 16 : i32} loc("K"), %LSE: !tile.ptr<f32> {tile.divisibility = 16 : i32} loc("LSE"), %N: i32 loc("N"), %stride: i32 {tile.divisibility = 16 : i32} loc("stride_n")) attributes {tile.kernel} {
    %zero = arith.constant dense<0.0> : tensor<64x64xf32, #acc>
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %c1_i64 = arith.constant 1 : i64
    %c64_i64 = arith.constant 64 : i64
    %n = arith.extsi %N : i32 to i64
    %s = arith.extsi %stride : i32 to i64
    %kp = tile.make_block_ptr %K, [%n, %c64_i64], [%s, %c1_i64], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf16, #bk>>
    %qb = tilegpu.local_alloc : !tilegpu.memdesc<64x64xf16, #nk>
    %pid = tile.program_id y
    %rp = tile.make_block_ptr %LSE, [%n, %n], [%n, %c1_i64], [%pid, %c0] order [1, 0] : !tile.block_ptr<tensor<1x64xf32, #br>>
    %r:3 = scf.for %i = %c0 to %N step %c64 iter_args(%acc = %zero, %k_ptr = %kp, %r_ptr = %rp) -> (tensor<64x64xf32, #acc>, !tile.block_ptr<tensor<64x64xf16, #bk>>, !tile.block_ptr<tensor<1x64xf32, #br>>) : i32 {
      %k = tile.load_block %k_ptr {tilegpu.vector_width = 8 : i32} : !tile.block_ptr<tensor<64x64xf16, #bk>>
      %kb = tilegpu.local_alloc %k : tensor<64x64xf16, #bk> -> !tilegpu.memdesc<64x64xf16, #nk>
      %d = tilegpu.warpgroup_dot %qb, %kb, %zero : !tilegpu.memdesc<64x64xf16, #nk>, !tilegpu.memdesc<64x64xf16, #nk>, tensor<64x64xf32, #acc> -> tensor<64x64xf32, #acc>
      %lse = tile.load_block %r_ptr boundary_check [1] padding zero : !tile.block_ptr<tensor<1x64xf32, #br>>
      %wide = tile.broadcast %lse : tensor<1x64xf32, #br> -> tensor<64x64xf32, #br>
      %cvt = tilegpu.convert_layout %wide : tensor<64x64xf32, #br> -> tensor<64x64xf32, #acc>
      %shifted = arith.subf %d, %cvt : tensor<64x64xf32, #acc>
      %sum = arith.addf %acc, %shifted : tensor<64x64xf32, #acc>
      %next = tile.advance %k_ptr, [%c64, %c0] : !tile.block_ptr<tensor<64x64xf16, #bk>>
      %next_r = tile.advance %r_ptr, [%c0, %c64] : !tile.block_ptr<tensor<1x64xf32, #br>>
      scf.yield %sum, %next, %next_r : tensor<64x64xf32, #acc>, !tile.block_ptr<tensor<64x64xf16, #bk>>, !tile.block_ptr<tensor<1x64xf32, #br>>
    }
    return
  }
}

// -----

// Two loops reading rows of one tensor (the backward's stages of query
// blocks) share one ring for them, as the products' operands do.
#bk = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#br = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]>
#nk = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#acc = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
// CHECK-LABEL: func.func @rows_in_two_loops
// CHECK-COUNT-1: tilegpu.local_alloc : !tilegpu.memdesc<3x1x64xf32
// CHECK-NOT: tilegpu.local_alloc : !tilegpu.memdesc<3x1x64xf32
// CHECK: tilegpu.warp_specialize {
// CHECK-COUNT-2: tilegpu.async_tma_copy_block {{.*}} : !tile.block_ptr<tensor<1x64xf32, #blocked1>>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @rows_in_two_loops(%K: !tile.ptr<f16> {tile.divisibility = 16 : i32} loc("K"), %LSE: !tile.ptr<f32> {tile.divisibility = 16 : i32} loc("LSE"), %N: i32 {tile.divisibility = 16 : i32} loc("N"), %stride: i32 {tile.divisibility = 16 : i32} loc("stride_n")) attributes {tile.kernel} {
    %zero = arith.constant dense<0.0> : tensor<64x64xf32, #acc>
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %c1_i64 = arith.constant 1 : i64
    %c64_i64 = arith.constant 64 : i64
    %n = arith.extsi %N : i32 to i64
    %s = arith.extsi %stride : i32 to i64
    %qb = tilegpu.local_alloc : !tilegpu.memdesc<64x64xf16, #nk>
    %kp = tile.make_block_ptr %K, [%n, %c64_i64], [%s, %c1_i64], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf16, #bk>>
    %rp = tile.make_block_ptr %LSE, [%c1_i64, %n], [%n, %c1_i64], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<1x64xf32, #br>>
    %a:3 = scf.for %i = %c0 to %N step %c64 iter_args(%acc = %zero, %k_ptr = %kp, %r_ptr = %rp) -> (tensor<64x64xf32, #acc>, !tile.block_ptr<tensor<64x64xf16, #bk>>, !tile.block_ptr<tensor<1x64xf32, #br>>) : i32 {
      %k = tile.load_block %k_ptr {tilegpu.vector_width = 8 : i32} : !tile.block_ptr<tensor<64x64xf16, #bk>>
      %kb = tilegpu.local_alloc %k : tensor<64x64xf16, #bk> -> !tilegpu.memdesc<64x64xf16, #nk>
      %d = tilegpu.warpgroup_dot %qb, %kb, %zero : !tilegpu.memdesc<64x64xf16, #nk>, !tilegpu.memdesc<64x64xf16, #nk>, tensor<64x64xf32, #acc> -> tensor<64x64xf32, #acc>
      %lse = tile.load_block %r_ptr boundary_check [1] padding zero : !tile.block_ptr<tensor<1x64xf32, #br>>
      %wide = tile.broadcast %lse : tensor<1x64xf32, #br> -> tensor<64x64xf32, #br>
      %cvt = tilegpu.convert_layout %wide : tensor<64x64xf32, #br> -> tensor<64x64xf32, #acc>
      %shifted = arith.subf %d, %cvt : tensor<64x64xf32, #acc>
      %sum = arith.addf %acc, %shifted : tensor<64x64xf32, #acc>
      %next = tile.advance %k_ptr, [%c64, %c0] : !tile.block_ptr<tensor<64x64xf16, #bk>>
      %next_r = tile.advance %r_ptr, [%c0, %c64] : !tile.block_ptr<tensor<1x64xf32, #br>>
      scf.yield %sum, %next, %next_r : tensor<64x64xf32, #acc>, !tile.block_ptr<tensor<64x64xf16, #bk>>, !tile.block_ptr<tensor<1x64xf32, #br>>
    }
    %kp2 = tile.make_block_ptr %K, [%n, %c64_i64], [%s, %c1_i64], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf16, #bk>>
    %rp2 = tile.make_block_ptr %LSE, [%c1_i64, %n], [%n, %c1_i64], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<1x64xf32, #br>>
    %b:3 = scf.for %i = %c0 to %N step %c64 iter_args(%acc = %a#0, %k_ptr = %kp2, %r_ptr = %rp2) -> (tensor<64x64xf32, #acc>, !tile.block_ptr<tensor<64x64xf16, #bk>>, !tile.block_ptr<tensor<1x64xf32, #br>>) : i32 {
      %k = tile.load_block %k_ptr {tilegpu.vector_width = 8 : i32} : !tile.block_ptr<tensor<64x64xf16, #bk>>
      %kb = tilegpu.local_alloc %k : tensor<64x64xf16, #bk> -> !tilegpu.memdesc<64x64xf16, #nk>
      %d = tilegpu.warpgroup_dot %qb, %kb, %zero : !tilegpu.memdesc<64x64xf16, #nk>, !tilegpu.memdesc<64x64xf16, #nk>, tensor<64x64xf32, #acc> -> tensor<64x64xf32, #acc>
      %lse = tile.load_block %r_ptr boundary_check [1] padding zero : !tile.block_ptr<tensor<1x64xf32, #br>>
      %wide = tile.broadcast %lse : tensor<1x64xf32, #br> -> tensor<64x64xf32, #br>
      %cvt = tilegpu.convert_layout %wide : tensor<64x64xf32, #br> -> tensor<64x64xf32, #acc>
      %shifted = arith.subf %d, %cvt : tensor<64x64xf32, #acc>
      %sum = arith.addf %acc, %shifted : tensor<64x64xf32, #acc>
      %next = tile.advance %k_ptr, [%c64, %c0] : !tile.block_ptr<tensor<64x64xf16, #bk>>
      %next_r = tile.advance %r_ptr, [%c0, %c64] : !tile.block_ptr<tensor<1x64xf32, #br>>
      scf.yield %sum, %next, %next_r : tensor<64x64xf32, #acc>, !tile.block_ptr<tensor<64x64xf16, #bk>>, !tile.block_ptr<tensor<1x64xf32, #br>>
    }
    return
  }
}

// -----

// A persistent kernel: a loop over blocks, num_programs apart, around the
// loop of copies. The producer mirrors the outer loop, and both sides carry
// the ring's slot and phase through it, so the copies of one block's first
// keys may start while the consumer finishes the block before.
#bk = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#nk = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#acc = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
// CHECK-LABEL: func.func @persistent
// CHECK: tilegpu.warp_specialize {
// CHECK: %[[PID:.*]] = tile.program_id x
// CHECK: %[[PROGRAMS:.*]] = tile.num_programs x
// CHECK: scf.for %{{.*}} = %[[PID]] to %{{.*}} step %[[PROGRAMS]] iter_args(%{{.*}} = %{{.*}}, %[[SLOT:.*]] = %c0_i32, %[[PHASE:.*]] = %c0_i32)
// CHECK: %[[INNER:.*]]:3 = scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %[[SLOT]], %{{.*}} = %[[PHASE]])
// CHECK: tilegpu.wait_barrier
// CHECK: tilegpu.async_tma_copy_block
// CHECK: scf.yield %{{.*}}, %[[INNER]]#1, %[[INNER]]#2 :
// CHECK: } {consumer_registers
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %[[CSLOT:.*]] = %c0_i32, %[[CPHASE:.*]] = %c0_i32)
// CHECK: %[[CINNER:.*]]:4 = scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %[[CSLOT]], %{{.*}} = %[[CPHASE]])
// CHECK: tilegpu.wait_barrier
// CHECK: tilegpu.warpgroup_dot
// CHECK: scf.yield %{{.*}}, %[[CINNER]]#2, %[[CINNER]]#3 :
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @persistent(%K: !tile.ptr<f16> {tile.divisibility = 16 : i32} loc("K"), %N: i32 loc("N"), %stride: i32 {tile.divisibility = 16 : i32} loc("stride_n"), %blocks: i32, %O: !tile.ptr<f32> {tile.divisibility = 16 : i32} loc("O")) attributes {tile.kernel} {
    %zero = arith.constant dense<0.0> : tensor<64x64xf32, #acc>
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %c1_i64 = arith.constant 1 : i64
    %n = arith.extsi %N : i32 to i64
    %s = arith.extsi %stride : i32 to i64
    %q = tilegpu.local_alloc : !tilegpu.memdesc<64x64xf16, #nk>
    %pid = tile.program_id x
    %programs = tile.num_programs x
    scf.for %b = %pid to %blocks step %programs : i32 {
      %kp = tile.make_block_ptr %K, [%n, %c1_i64], [%s, %c1_i64], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf16, #bk>>
      %r:2 = scf.for %i = %c0 to %N step %c64 iter_args(%acc = %zero, %k_ptr = %kp) -> (tensor<64x64xf32, #acc>, !tile.block_ptr<tensor<64x64xf16, #bk>>) : i32 {
        %k = tile.load_block %k_ptr {tilegpu.vector_width = 8 : i32} : !tile.block_ptr<tensor<64x64xf16, #bk>>
        %kb = tilegpu.local_alloc %k : tensor<64x64xf16, #bk> -> !tilegpu.memdesc<64x64xf16, #nk>
        %d = tilegpu.warpgroup_dot %q, %kb, %zero : !tilegpu.memdesc<64x64xf16, #nk>, !tilegpu.memdesc<64x64xf16, #nk>, tensor<64x64xf32, #acc> -> tensor<64x64xf32, #acc>
        %sum = arith.addf %acc, %d : tensor<64x64xf32, #acc>
        %next = tile.advance %k_ptr, [%c64, %c0] : !tile.block_ptr<tensor<64x64xf16, #bk>>
        scf.yield %sum, %next : tensor<64x64xf32, #acc>, !tile.block_ptr<tensor<64x64xf16, #bk>>
      }
    }
    return
  }
}
