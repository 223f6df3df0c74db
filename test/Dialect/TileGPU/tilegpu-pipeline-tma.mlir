// RUN: tile-opt %s -split-input-file -tilegpu-pipeline="num-stages=3 use-tma=true" | FileCheck %s
// RUN: tile-opt %s -split-input-file -tilegpu-pipeline="num-stages=3" | FileCheck %s --check-prefix=NOTMA

// A GEMM loop whose tiles the runtime can describe: A's tensor is offset per
// program by program_id(1) * stride_z (a descriptor dimension of its own,
// coordinate program_id(1), spanning 2^40 bytes), B's is a parameter as it is. Each
// becomes a descriptor parameter, listed in tilegpu.tensormaps; each stage
// of a buffer gets an mbarrier; a plain barrier opens the iteration, and the
// iteration waits on both mbarriers (the phase it carries) before the dot.
#ba = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#na = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#acc = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
// CHECK: module attributes {{{.*}}tilegpu.tensormaps = [{base = "A", box = [64, 64, 1], dims = ["K", "M", "min(2147483648, cdiv(1099511627776, max(1, (stride_z * 2))))"], strides = ["stride_m", "stride_z"], swizzle = 128 : i64}, {base = "B", box = [64, 64], dims = ["M", "K"], strides = ["stride_m"], swizzle = 128 : i64}]}
// CHECK-LABEL: func.func @gemm
// CHECK-SAME: %[[ADESC:arg[0-9]+]]: !tilegpu.tensormap, %[[BDESC:arg[0-9]+]]: !tilegpu.tensormap) attributes {tile.kernel}
// CHECK: %[[PID:.*]] = tile.program_id y
// CHECK: %[[ASTACK:.*]] = tilegpu.local_alloc : !tilegpu.memdesc<3x64x64xf16, #nvmma>
// CHECK: %[[ABARS:.*]] = tilegpu.local_alloc : !tilegpu.memdesc<3x1x1xi64, #shared>
// CHECK: %[[BSTACK:.*]] = tilegpu.local_alloc : !tilegpu.memdesc<3x64x64xf16, #nvmma>
// CHECK: %[[BBARS:.*]] = tilegpu.local_alloc : !tilegpu.memdesc<3x1x1xi64, #shared>
// CHECK: tilegpu.init_barriers %[[ABARS]], %[[BBARS]] arrivals [1, 1] :
// CHECK: tilegpu.async_tma_copy_block %{{.*}}, %[[ADESC]][%[[PID]]], %{{.*}}, %{{.*}} if
// CHECK: tilegpu.async_tma_copy_block %{{.*}}, %[[BDESC]][], %{{.*}}, %{{.*}} if
// CHECK-NOT: tilegpu.async_tma_copy_block
// CHECK: scf.for {{.*}} iter_args({{.*}}, %[[SLOT:.*]] = %{{.*}}, %[[PHASE:.*]] = %{{.*}})
// CHECK-NEXT: tilegpu.barrier
// CHECK: tilegpu.async_tma_copy_block %{{.*}}, %[[ADESC]][%[[PID]]]
// CHECK: tilegpu.async_tma_copy_block %{{.*}}, %[[BDESC]][]
// CHECK: %[[ABAR:.*]] = tilegpu.memdesc_index %[[ABARS]][%[[SLOT]]]
// CHECK-NEXT: tilegpu.wait_barrier %[[ABAR]], %[[PHASE]]
// CHECK: %[[BBAR:.*]] = tilegpu.memdesc_index %[[BBARS]][%[[SLOT]]]
// CHECK-NEXT: tilegpu.wait_barrier %[[BBAR]], %[[PHASE]]
// CHECK-NEXT: tilegpu.warpgroup_dot {{.*}} {is_async}
// The phase flips when the slot wraps around.
// CHECK: %[[LAST:.*]] = arith.cmpi eq, %[[SLOT]], %c2_i32
// CHECK: %[[FLIPPED:.*]] = arith.xori %[[PHASE]], %c1_i32
// CHECK: %[[NEXTPHASE:.*]] = arith.select %[[LAST]], %[[FLIPPED]], %[[PHASE]]
// CHECK: scf.yield {{.*}}, %[[NEXTPHASE]]
// CHECK: tilegpu.inval_barriers %[[ABARS]], %[[BBARS]] :
// Without use-tma, cp.async as before.
// NOTMA-NOT: tilegpu.tensormaps
// NOTMA-LABEL: func.func @gemm
// NOTMA-NOT: tensormap
// NOTMA: tilegpu.async_copy_block
// NOTMA-NOT: tilegpu.async_tma_copy_block
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

// What the runtime cannot describe stays on cp.async, in the same loop as
// the TMA copies (the iteration opens with async_wait, which is a barrier):
// A's base is offset by a stride of 4 elements (8 bytes; the TMA's strides
// are whole 16 bytes), B's stride is computed by the program.
#ba = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#na = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#acc = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
// CHECK-NOT: tilegpu.tensormaps
// CHECK-LABEL: func.func @undescribed
// CHECK-NOT: tensormap
// CHECK: scf.for
// CHECK-NEXT: tilegpu.async_wait {pending = 0 : i32}
// CHECK-NOT: tilegpu.async_tma_copy_block
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @undescribed(%A: !tile.ptr<f16> {tile.divisibility = 16 : i32} loc("A"), %M: i32 loc("M"), %K: i32 loc("K"), %stride: i32 {tile.divisibility = 16 : i32} loc("stride_m"), %stride_z: i32 {tile.divisibility = 4 : i32} loc("stride_z")) attributes {tile.kernel} {
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
    %ps = arith.muli %z, %s : i64
    %ap = tile.make_block_ptr %a0, [%m, %k], [%s, %c1_i64], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf16, #ba>>
    %bp = tile.make_block_ptr %A, [%k, %m], [%ps, %c1_i64], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf16, #ba>>
    %r:3 = scf.for %i = %c0 to %K step %c64 iter_args(%a_ptr = %ap, %b_ptr = %bp, %c = %zero) -> (!tile.block_ptr<tensor<64x64xf16, #ba>>, !tile.block_ptr<tensor<64x64xf16, #ba>>, tensor<64x64xf32, #acc>) : i32 {
      %a = tile.load_block %a_ptr {tilegpu.vector_width = 8 : i32} : !tile.block_ptr<tensor<64x64xf16, #ba>>
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
