// RUN: tile-opt %s -split-input-file -tilegpu-optimize-dot-operands | FileCheck %s

// P @ V as attention leaves it after remove-layout-conversions: P reaches the
// dot in registers (converted from the mma layout of the first dot), V
// comes from a blocked load. V is stored once into a swizzled buffer (rows
// of 64 f16 = 128 bytes: a new phase every row, eight phases), and the
// 64-deep dot becomes four 16-deep dots chained through the accumulator,
// each reading its k-slice of V from the buffer and of P from registers
// just before it.

#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
#a = #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
#bop = #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
// CHECK-DAG: #[[MMA:.*]] = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
// CHECK-DAG: #[[BLK:.*]] = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-DAG: #[[SHARED:.*]] = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
// CHECK-DAG: #[[A:.*]] = #tilegpu.dot_operand<opIdx = 0, parent = #[[MMA]], kWidth = 2>
// CHECK-DAG: #[[B:.*]] = #tilegpu.dot_operand<opIdx = 1, parent = #[[MMA]], kWidth = 2>
// CHECK-LABEL: func.func @p_times_v
// CHECK-SAME: (%[[S:.*]]: tensor<128x64xf32, #[[MMA]]>, %[[V:.*]]: tensor<64x64xf16, #[[BLK]]>, %[[ACC:.*]]: tensor<128x64xf32, #[[MMA]]>)
// CHECK: %[[P:.*]] = arith.truncf %[[S]]
// CHECK: %[[PA:.*]] = tilegpu.convert_layout %[[P]] : tensor<128x64xf16, #[[MMA]]> -> tensor<128x64xf16, #[[A]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: %[[BUF:.*]] = tilegpu.local_alloc %[[V]] : tensor<64x64xf16, #[[BLK]]> -> !tilegpu.memdesc<64x64xf16, #[[SHARED]]>
// CHECK-NOT: tile.dot
// CHECK: %[[A0:.*]] = tilegpu.extract_slice %[[PA]] [0, 0] : tensor<128x64xf16, #[[A]]> -> tensor<128x16xf16, #[[A]]>
// CHECK: %[[B0:.*]] = tilegpu.local_load %[[BUF]] [0, 0] : !tilegpu.memdesc<64x64xf16, #[[SHARED]]> -> tensor<16x64xf16, #[[B]]>
// CHECK: %[[D0:.*]] = tile.dot %[[A0]], %[[B0]], %[[ACC]] : tensor<128x16xf16, #[[A]]>, tensor<16x64xf16, #[[B]]> -> tensor<128x64xf32, #[[MMA]]>
// CHECK: %[[A1:.*]] = tilegpu.extract_slice %[[PA]] [0, 16] : tensor<128x64xf16, #[[A]]> -> tensor<128x16xf16, #[[A]]>
// CHECK: %[[B1:.*]] = tilegpu.local_load %[[BUF]] [16, 0] : !tilegpu.memdesc<64x64xf16, #[[SHARED]]> -> tensor<16x64xf16, #[[B]]>
// CHECK: %[[D1:.*]] = tile.dot %[[A1]], %[[B1]], %[[D0]] : tensor<128x16xf16, #[[A]]>, tensor<16x64xf16, #[[B]]> -> tensor<128x64xf32, #[[MMA]]>
// CHECK: %[[A2:.*]] = tilegpu.extract_slice %[[PA]] [0, 32] : tensor<128x64xf16, #[[A]]> -> tensor<128x16xf16, #[[A]]>
// CHECK: %[[B2:.*]] = tilegpu.local_load %[[BUF]] [32, 0] : !tilegpu.memdesc<64x64xf16, #[[SHARED]]> -> tensor<16x64xf16, #[[B]]>
// CHECK: %[[D2:.*]] = tile.dot %[[A2]], %[[B2]], %[[D1]] : tensor<128x16xf16, #[[A]]>, tensor<16x64xf16, #[[B]]> -> tensor<128x64xf32, #[[MMA]]>
// CHECK: %[[A3:.*]] = tilegpu.extract_slice %[[PA]] [0, 48] : tensor<128x64xf16, #[[A]]> -> tensor<128x16xf16, #[[A]]>
// CHECK: %[[B3:.*]] = tilegpu.local_load %[[BUF]] [48, 0] : !tilegpu.memdesc<64x64xf16, #[[SHARED]]> -> tensor<16x64xf16, #[[B]]>
// CHECK: %[[D3:.*]] = tile.dot %[[A3]], %[[B3]], %[[D2]] : tensor<128x16xf16, #[[A]]>, tensor<16x64xf16, #[[B]]> -> tensor<128x64xf32, #[[MMA]]>
// CHECK-NOT: tile.dot
// CHECK-NOT: tilegpu.local_load
// CHECK: return %[[D3]]
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @p_times_v(%s: tensor<128x64xf32, #mma>, %v: tensor<64x64xf16, #b>, %acc: tensor<128x64xf32, #mma>) -> tensor<128x64xf32, #mma> {
    %p = arith.truncf %s : tensor<128x64xf32, #mma> to tensor<128x64xf16, #mma>
    %pa = tilegpu.convert_layout %p : tensor<128x64xf16, #mma> -> tensor<128x64xf16, #a>
    %vb = tilegpu.convert_layout %v : tensor<64x64xf16, #b> -> tensor<64x64xf16, #bop>
    %o = tile.dot %pa, %vb, %acc : tensor<128x64xf16, #a>, tensor<64x64xf16, #bop> -> tensor<128x64xf32, #mma>
    return %o : tensor<128x64xf32, #mma>
  }
}

// -----

// A already in the operand layout (a function argument); K^T held with
// dimension 0 contiguous (order [0, 1]) keeps that order in shared memory,
// so its slices are still windows [k, 0] of a column-major buffer.

#bt = #tilegpu.blocked<sizePerThread = [8, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
#a = #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
#bop = #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
// CHECK-DAG: #[[SHARED:.*]] = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [0, 1]>
// CHECK-LABEL: func.func @argument_operand
// CHECK-SAME: (%[[Q:[^:]*]]: tensor<128x64xf16, #{{[a-z_0-9]+}}>, %[[KT:[^:]*]]: tensor<64x64xf16, #{{[a-z_0-9]+}}>, %[[ACC:[^:]*]]:
// CHECK: %[[BUF:.*]] = tilegpu.local_alloc %[[KT]] : {{.*}} -> !tilegpu.memdesc<64x64xf16, #[[SHARED]]>
// CHECK: %[[A0:.*]] = tilegpu.extract_slice %[[Q]] [0, 0]
// CHECK: %[[B0:.*]] = tilegpu.local_load %[[BUF]] [0, 0]
// CHECK: %[[D0:.*]] = tile.dot %[[A0]], %[[B0]], %[[ACC]]
// CHECK: %[[A1:.*]] = tilegpu.extract_slice %[[Q]] [0, 16]
// CHECK: %[[B1:.*]] = tilegpu.local_load %[[BUF]] [16, 0]
// CHECK: %[[D1:.*]] = tile.dot %[[A1]], %[[B1]], %[[D0]]
// CHECK: %[[A2:.*]] = tilegpu.extract_slice %[[Q]] [0, 32]
// CHECK: %[[B2:.*]] = tilegpu.local_load %[[BUF]] [32, 0]
// CHECK: %[[D2:.*]] = tile.dot %[[A2]], %[[B2]], %[[D1]]
// CHECK: %[[A3:.*]] = tilegpu.extract_slice %[[Q]] [0, 48]
// CHECK: %[[B3:.*]] = tilegpu.local_load %[[BUF]] [48, 0]
// CHECK: %[[D3:.*]] = tile.dot %[[A3]], %[[B3]], %[[D2]]
// CHECK-NOT: tile.dot
// CHECK: return %[[D3]]
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @argument_operand(%q: tensor<128x64xf16, #a>, %kt: tensor<64x64xf16, #bt>, %acc: tensor<128x64xf32, #mma>) -> tensor<128x64xf32, #mma> {
    %kb = tilegpu.convert_layout %kt : tensor<64x64xf16, #bt> -> tensor<64x64xf16, #bop>
    %s = tile.dot %q, %kb, %acc : tensor<128x64xf16, #a>, tensor<64x64xf16, #bop> -> tensor<128x64xf32, #mma>
    return %s : tensor<128x64xf32, #mma>
  }
}

// -----

// Both operands from blocked layouts: both are staged, and A's k-slices are
// windows [0, k] of its buffer. Q's rows are 32 f16 = 64 bytes: two rows
// per phase, four phases.

#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
#a = #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
#bop = #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
// CHECK-DAG: #[[QS:.*]] = #tilegpu.shared<vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]>
// CHECK-DAG: #[[KS:.*]] = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
// CHECK-LABEL: func.func @both_staged
// CHECK-DAG: %[[QBUF:.*]] = tilegpu.local_alloc %{{.*}} : tensor<128x32xf16, {{.*}}> -> !tilegpu.memdesc<128x32xf16, #[[QS]]>
// CHECK-DAG: %[[KBUF:.*]] = tilegpu.local_alloc %{{.*}} : tensor<32x64xf16, {{.*}}> -> !tilegpu.memdesc<32x64xf16, #[[KS]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: tilegpu.local_load %[[QBUF]] [0, 0] : !tilegpu.memdesc<128x32xf16, #[[QS]]> -> tensor<128x16xf16,
// CHECK: tilegpu.local_load %[[KBUF]] [0, 0] : !tilegpu.memdesc<32x64xf16, #[[KS]]> -> tensor<16x64xf16,
// CHECK: tile.dot
// CHECK: tilegpu.local_load %[[QBUF]] [0, 16] : !tilegpu.memdesc<128x32xf16, #[[QS]]> -> tensor<128x16xf16,
// CHECK: tilegpu.local_load %[[KBUF]] [16, 0] : !tilegpu.memdesc<32x64xf16, #[[KS]]> -> tensor<16x64xf16,
// CHECK: tile.dot
// CHECK-NOT: tile.dot
// CHECK-NOT: tilegpu.local_load
// CHECK: return
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @both_staged(%q: tensor<128x32xf16, #b>, %k: tensor<32x64xf16, #b>, %acc: tensor<128x64xf32, #mma>) -> tensor<128x64xf32, #mma> {
    %qa = tilegpu.convert_layout %q : tensor<128x32xf16, #b> -> tensor<128x32xf16, #a>
    %kb = tilegpu.convert_layout %k : tensor<32x64xf16, #b> -> tensor<32x64xf16, #bop>
    %s = tile.dot %qa, %kb, %acc : tensor<128x32xf16, #a>, tensor<32x64xf16, #bop> -> tensor<128x64xf32, #mma>
    return %s : tensor<128x64xf32, #mma>
  }
}

// -----

// A dot 16 deep is one mma step: its operand is staged but read whole, and
// the dot is kept.

#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
#a = #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
#bop = #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
// CHECK-DAG: #[[SHARED16:.*]] = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
// CHECK-LABEL: func.func @one_step
// CHECK: %[[BUF:.*]] = tilegpu.local_alloc %{{.*}} -> !tilegpu.memdesc<16x64xf16, #[[SHARED16]]>
// CHECK: %[[K:.*]] = tilegpu.local_load %[[BUF]] [0, 0] : !tilegpu.memdesc<16x64xf16, #[[SHARED16]]> -> tensor<16x64xf16,
// CHECK-NOT: tilegpu.extract_slice
// CHECK: tile.dot %{{.*}}, %[[K]], %{{.*}} : tensor<128x16xf16,
// CHECK-NOT: tile.dot
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @one_step(%q: tensor<128x16xf16, #a>, %k: tensor<16x64xf16, #b>, %acc: tensor<128x64xf32, #mma>) -> tensor<128x64xf32, #mma> {
    %kb = tilegpu.convert_layout %k : tensor<16x64xf16, #b> -> tensor<16x64xf16, #bop>
    %s = tile.dot %q, %kb, %acc : tensor<128x16xf16, #a>, tensor<16x64xf16, #bop> -> tensor<128x64xf32, #mma>
    return %s : tensor<128x64xf32, #mma>
  }
}

// -----

// f32 operands (kWidth = 1, m16n8k8 on TF32) are not 16-bit: nothing changes.

#b = #tilegpu.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
#a = #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 1>
#bop = #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 1>
// CHECK-LABEL: func.func @tf32_unchanged
// CHECK-NOT: tilegpu.local_alloc
// CHECK: %[[QA:.*]] = tilegpu.convert_layout %{{.*}} : tensor<128x64xf32, #{{.*}}> -> tensor<128x64xf32, #[[A32:[a-z_0-9]+]]>
// CHECK: %[[KB:.*]] = tilegpu.convert_layout %{{.*}} : tensor<64x64xf32, #{{.*}}> -> tensor<64x64xf32, #[[B32:[a-z_0-9]+]]>
// CHECK: tile.dot %[[QA]], %[[KB]], %{{.*}} : tensor<128x64xf32, #[[A32]]>, tensor<64x64xf32, #[[B32]]> -> tensor<128x64xf32,
// CHECK-NOT: tile.dot
// CHECK-NOT: tilegpu.local_load
// CHECK-NOT: tilegpu.extract_slice
// CHECK: return
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @tf32_unchanged(%q: tensor<128x64xf32, #b>, %k: tensor<64x64xf32, #b>, %acc: tensor<128x64xf32, #mma>) -> tensor<128x64xf32, #mma> {
    %qa = tilegpu.convert_layout %q : tensor<128x64xf32, #b> -> tensor<128x64xf32, #a>
    %kb = tilegpu.convert_layout %k : tensor<64x64xf32, #b> -> tensor<64x64xf32, #bop>
    %s = tile.dot %qa, %kb, %acc : tensor<128x64xf32, #a>, tensor<64x64xf32, #bop> -> tensor<128x64xf32, #mma>
    return %s : tensor<128x64xf32, #mma>
  }
}

// -----

// The attention backward's dV += Pᵀ dO and dP = V dOᵀ: dO is loaded once
// and feeds one dot as it is and another transposed (through a conversion
// between blocked layouts that remove-layout-conversions left for the
// trans). Both read the one buffer dO is stored in: the transposed operand
// through a memdesc_trans view (order reversed), with no conversion of dO
// in registers and no second buffer.
#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [2, 16], warpsPerCTA = [8, 1], order = [1, 0]>
#b3 = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [8, 1], order = [1, 0]>
#b4 = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 8], order = [0, 1]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [8, 1]>
#a = #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
#bop = #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
// CHECK-DAG: #[[SHARED:.*]] = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
// CHECK-DAG: #[[SHARED_T:.*]] = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [0, 1]>
// CHECK-LABEL: func.func @shared_transpose
// CHECK-SAME: %[[DO:[^:]*]]: tensor<32x128xf16
// CHECK: %[[BUF:.*]] = tilegpu.local_alloc %[[DO]] : tensor<32x128xf16, #{{.*}}> -> !tilegpu.memdesc<32x128xf16, #[[SHARED]]>
// CHECK-NOT: tilegpu.local_alloc
// CHECK: tilegpu.local_load %[[BUF]] [0, 0] : !tilegpu.memdesc<32x128xf16, #[[SHARED]]> -> tensor<16x128xf16
// CHECK: tilegpu.local_load %[[BUF]] [16, 0] : !tilegpu.memdesc<32x128xf16, #[[SHARED]]> -> tensor<16x128xf16
// CHECK-NOT: tilegpu.convert_layout
// CHECK-NOT: tile.trans
// CHECK: %[[VIEW:.*]] = tilegpu.memdesc_trans %[[BUF]] : !tilegpu.memdesc<32x128xf16, #[[SHARED]]> -> !tilegpu.memdesc<128x32xf16, #[[SHARED_T]]>
// CHECK-NOT: tilegpu.local_alloc
// CHECK: tilegpu.local_load %[[VIEW]] [0, 0] : !tilegpu.memdesc<128x32xf16, #[[SHARED_T]]> -> tensor<16x32xf16
// CHECK-COUNT-7: tilegpu.local_load %[[VIEW]]
// CHECK-NOT: tilegpu.local_load
// CHECK-NOT: tilegpu.local_alloc
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @shared_transpose(%do: tensor<32x128xf16, #b>, %pt: tensor<128x32xf16, #a>, %v: tensor<128x128xf16, #a>, %acc: tensor<128x128xf32, #mma>, %zero: tensor<128x32xf32, #mma>) -> (tensor<128x128xf32, #mma>, tensor<128x32xf32, #mma>) {
    %dob = tilegpu.convert_layout %do : tensor<32x128xf16, #b> -> tensor<32x128xf16, #bop>
    %dv = tile.dot %pt, %dob, %acc : tensor<128x32xf16, #a>, tensor<32x128xf16, #bop> -> tensor<128x128xf32, #mma>
    %do3 = tilegpu.convert_layout %do : tensor<32x128xf16, #b> -> tensor<32x128xf16, #b3>
    %dot = tile.trans %do3 {order = array<i32: 1, 0>} : tensor<32x128xf16, #b3> -> tensor<128x32xf16, #b4>
    %dotb = tilegpu.convert_layout %dot : tensor<128x32xf16, #b4> -> tensor<128x32xf16, #bop>
    %dp = tile.dot %v, %dotb, %zero : tensor<128x128xf16, #a>, tensor<128x32xf16, #bop> -> tensor<128x32xf32, #mma>
    return %dv, %dp : tensor<128x128xf32, #mma>, tensor<128x32xf32, #mma>
  }
}

// -----

// The attention backward's dQ = dS K: dSᵀ, a dot's result, reaches the dot
// transposed. Its buffer is filled straight from the mma layout (two
// neighbouring columns per register pair, so the columns are the contiguous
// dimension) and read through a transposed view; the conversion to a
// blocked layout that remove-layout-conversions left for the trans, a
// second trip through shared memory, goes.
#b2 = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [8, 1], order = [1, 0]>
#b3 = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 8], order = [0, 1]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [8, 1]>
#mma1 = #tilegpu.mma<version = 2, warpsPerCTA = [4, 2]>
#a1 = #tilegpu.dot_operand<opIdx = 0, parent = #mma1, kWidth = 2>
#b1 = #tilegpu.dot_operand<opIdx = 1, parent = #mma1, kWidth = 2>
// CHECK-DAG: #[[SHARED:.*]] = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
// CHECK-DAG: #[[SHARED_T:.*]] = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [0, 1]>
// CHECK-LABEL: func.func @transposed_result
// CHECK-SAME: %[[DST:[^:]*]]: tensor<128x64xf16, #mma>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: %[[BUF:.*]] = tilegpu.local_alloc %[[DST]] : tensor<128x64xf16, #mma> -> !tilegpu.memdesc<128x64xf16, #[[SHARED]]>
// CHECK: %[[VIEW:.*]] = tilegpu.memdesc_trans %[[BUF]] : !tilegpu.memdesc<128x64xf16, #[[SHARED]]> -> !tilegpu.memdesc<64x128xf16, #[[SHARED_T]]>
// CHECK: tilegpu.local_load %[[VIEW]] [0, 0] : !tilegpu.memdesc<64x128xf16, #[[SHARED_T]]> -> tensor<64x16xf16
// CHECK-NOT: tilegpu.convert_layout
// CHECK-NOT: tile.trans
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @transposed_result(%dst: tensor<128x64xf16, #mma>, %k: tensor<128x64xf16, #b1>, %zero: tensor<64x64xf32, #mma1>) -> tensor<64x64xf32, #mma1> {
    %c = tilegpu.convert_layout %dst : tensor<128x64xf16, #mma> -> tensor<128x64xf16, #b2>
    %t = tile.trans %c {order = array<i32: 1, 0>} : tensor<128x64xf16, #b2> -> tensor<64x128xf16, #b3>
    %ds = tilegpu.convert_layout %t : tensor<64x128xf16, #b3> -> tensor<64x128xf16, #a1>
    %dq = tile.dot %ds, %k, %zero : tensor<64x128xf16, #a1>, tensor<128x64xf16, #b1> -> tensor<64x64xf32, #mma1>
    return %dq : tensor<64x64xf32, #mma1>
  }
}

// -----

// The attention backward on FlashAttention-2's warp grids: dSᵀ, a dot's
// result on 4 x 2 warps, is the A operand of dK = dSᵀ Q, whose warps each
// need 32 whole rows, and, transposed, of dQ = dS K. Neither can take it
// from registers, so it is stored once from the mma layout and both dots
// read the one buffer, dQ through a transposed view.
#b2 = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [8, 1], order = [1, 0]>
#b3 = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [32, 1], warpsPerCTA = [1, 8], order = [0, 1]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [4, 2]>
#mma1 = #tilegpu.mma<version = 2, warpsPerCTA = [2, 4]>
#a = #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
#bop = #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
#a1 = #tilegpu.dot_operand<opIdx = 0, parent = #mma1, kWidth = 2>
#b1 = #tilegpu.dot_operand<opIdx = 1, parent = #mma1, kWidth = 2>
// CHECK-DAG: #[[SHARED:.*]] = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
// CHECK-DAG: #[[SHARED_T:.*]] = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [0, 1]>
// CHECK-DAG: #[[GRID:.*]] = #tilegpu.mma<version = 2, warpsPerCTA = [4, 2]>
// CHECK-DAG: #[[GRID_T:.*]] = #tilegpu.mma<version = 2, warpsPerCTA = [2, 4]>
// CHECK-DAG: #[[A:.*]] = #tilegpu.dot_operand<opIdx = 0, parent = #[[GRID]], kWidth = 2>
// CHECK-DAG: #[[A_T:.*]] = #tilegpu.dot_operand<opIdx = 0, parent = #[[GRID_T]], kWidth = 2>
// CHECK-LABEL: func.func @exchanged_result
// CHECK-SAME: %[[DST:[^:]*]]: tensor<128x64xf16, #[[GRID]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: %[[BUF:.*]] = tilegpu.local_alloc %[[DST]] : tensor<128x64xf16, #[[GRID]]> -> !tilegpu.memdesc<128x64xf16, #[[SHARED]]>
// CHECK: tilegpu.local_load %[[BUF]] [0, 0] : !tilegpu.memdesc<128x64xf16, #[[SHARED]]> -> tensor<128x16xf16, #[[A]]>
// CHECK: %[[VIEW:.*]] = tilegpu.memdesc_trans %[[BUF]] : !tilegpu.memdesc<128x64xf16, #[[SHARED]]> -> !tilegpu.memdesc<64x128xf16, #[[SHARED_T]]>
// CHECK: tilegpu.local_load %[[VIEW]] [0, 0] : !tilegpu.memdesc<64x128xf16, #[[SHARED_T]]> -> tensor<64x16xf16, #[[A_T]]>
// CHECK-NOT: tilegpu.local_alloc
// CHECK-NOT: tilegpu.convert_layout
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @exchanged_result(%dst: tensor<128x64xf16, #mma>, %q: tensor<64x128xf16, #bop>, %k: tensor<128x64xf16, #b1>, %dk: tensor<128x128xf32, #mma>, %zero: tensor<64x64xf32, #mma1>) -> (tensor<128x128xf32, #mma>, tensor<64x64xf32, #mma1>) {
    %ds_a = tilegpu.convert_layout %dst : tensor<128x64xf16, #mma> -> tensor<128x64xf16, #a>
    %dk2 = tile.dot %ds_a, %q, %dk : tensor<128x64xf16, #a>, tensor<64x128xf16, #bop> -> tensor<128x128xf32, #mma>
    %c = tilegpu.convert_layout %dst : tensor<128x64xf16, #mma> -> tensor<128x64xf16, #b2>
    %t = tile.trans %c {order = array<i32: 1, 0>} : tensor<128x64xf16, #b2> -> tensor<64x128xf16, #b3>
    %ds = tilegpu.convert_layout %t : tensor<64x128xf16, #b3> -> tensor<64x128xf16, #a1>
    %dq = tile.dot %ds, %k, %zero : tensor<64x128xf16, #a1>, tensor<128x64xf16, #b1> -> tensor<64x64xf32, #mma1>
    return %dk2, %dq : tensor<128x128xf32, #mma>, tensor<64x64xf32, #mma1>
  }
}
