// RUN: tile-opt %s -split-input-file -tilegpu-accelerate-matmul -verify-diagnostics | FileCheck %s

// A dot moves to the tensor-core layouts: operands to dot_operand layouts of
// an mma layout, the accumulator to that mma layout, and the result back to
// the layout its users expect. The mma layout's warp grid gives each warp
// the squarest tile, unless the dot is chained to another through an A
// operand that can stay in registers.
//
// These are mma.sync, on sm_80; the cases at the end are wgmma, on sm_90a.

#b = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-DAG: #[[MMA:.*]] = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
// CHECK-DAG: #[[A:.*]] = #tilegpu.dot_operand<opIdx = 0, parent = #[[MMA]], kWidth = 2>
// CHECK-DAG: #[[B:.*]] = #tilegpu.dot_operand<opIdx = 1, parent = #[[MMA]], kWidth = 2>
// CHECK-LABEL: func.func @attention_scores
// CHECK: %[[QA:.*]] = tilegpu.convert_layout %{{.*}} : tensor<128x64xf16, #blocked> -> tensor<128x64xf16, #[[A]]>
// CHECK: %[[KB:.*]] = tilegpu.convert_layout %{{.*}} : tensor<64x64xf16, #blocked> -> tensor<64x64xf16, #[[B]]>
// CHECK: %[[ACC:.*]] = tilegpu.convert_layout %{{.*}} : tensor<128x64xf32, #blocked> -> tensor<128x64xf32, #[[MMA]]>
// CHECK: %[[S:.*]] = tile.dot %[[QA]], %[[KB]], %[[ACC]] : tensor<128x64xf16, #[[A]]>, tensor<64x64xf16, #[[B]]> -> tensor<128x64xf32, #[[MMA]]>
// CHECK: tilegpu.convert_layout %[[S]] : tensor<128x64xf32, #[[MMA]]> -> tensor<128x64xf32, #blocked>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_80>} {
  func.func @attention_scores(%q: tensor<128x64xf16, #b>, %k: tensor<64x64xf16, #b>, %acc: tensor<128x64xf32, #b>) -> tensor<128x64xf32, #b> {
    %s = tile.dot %q, %k, %acc : tensor<128x64xf16, #b>, tensor<64x64xf16, #b> -> tensor<128x64xf32, #b>
    return %s : tensor<128x64xf32, #b>
  }
}

// -----

// With fewer 16-row tiles than warps, the other warps spread over columns.
#b = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [8, 1], order = [1, 0]>
// CHECK: #tilegpu.mma<version = 2, warpsPerCTA = [2, 4]>
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_80>} {
  func.func @wide(%a: tensor<32x64xbf16, #b>, %w: tensor<64x128xbf16, #b>, %acc: tensor<32x128xf32, #b>) -> tensor<32x128xf32, #b> {
    %s = tile.dot %a, %w, %acc : tensor<32x64xbf16, #b>, tensor<64x128xbf16, #b> -> tensor<32x128xf32, #b>
    return %s : tensor<32x128xf32, #b>
  }
}

// -----

// A lone dot gets the squarest warp tiles: 128x128 on 8 warps as 4 x 2,
// each warp 32x64.
#b = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [8, 1], order = [1, 0]>
// CHECK: #tilegpu.mma<version = 2, warpsPerCTA = [4, 2]>
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_80>} {
  func.func @square(%a: tensor<128x64xf16, #b>, %w: tensor<64x128xf16, #b>, %acc: tensor<128x128xf32, #b>) -> tensor<128x128xf32, #b> {
    %s = tile.dot %a, %w, %acc : tensor<128x64xf16, #b>, tensor<64x128xf16, #b> -> tensor<128x128xf32, #b>
    return %s : tensor<128x128xf32, #b>
  }
}

// -----

// Attention's forward: S's exponentials become the A operand of P·V. With
// 32 rows a warp the chain keeps all warps along the rows, so that P stays
// in registers, although P·V alone would get a 4 x 2 grid.
#b = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [8, 1], order = [1, 0]>
// CHECK-DAG: #[[ROWS:.*]] = #tilegpu.mma<version = 2, warpsPerCTA = [8, 1]>
// CHECK-LABEL: func.func @forward_chain
// CHECK: tile.dot {{.*}} -> tensor<256x64xf32, #[[ROWS]]>
// CHECK: tile.dot {{.*}} -> tensor<256x128xf32, #[[ROWS]]>
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_80>} {
  func.func @forward_chain(%q: tensor<256x128xf16, #b>, %kT: tensor<128x64xf16, #b>, %v: tensor<64x128xf16, #b>, %zs: tensor<256x64xf32, #b>, %acc: tensor<256x128xf32, #b>) -> tensor<256x128xf32, #b> {
    %s = tile.dot %q, %kT, %zs : tensor<256x128xf16, #b>, tensor<128x64xf16, #b> -> tensor<256x64xf32, #b>
    %e = tile.exp2 %s : tensor<256x64xf32, #b>
    %p = arith.truncf %e : tensor<256x64xf32, #b> to tensor<256x64xf16, #b>
    %o = tile.dot %p, %v, %acc : tensor<256x64xf16, #b>, tensor<64x128xf16, #b> -> tensor<256x128xf32, #b>
    return %o : tensor<256x128xf32, #b>
  }
}

// -----

// Attention's backward on 128 keys: all warps along the rows would leave
// each 16 of them, so the chain P^T -> dV gets balanced grids (4 x 2, as
// FlashAttention-2's) and hands P^T over through shared memory.
#b = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [8, 1], order = [1, 0]>
// CHECK-DAG: #[[GRID:.*]] = #tilegpu.mma<version = 2, warpsPerCTA = [4, 2]>
// CHECK-LABEL: func.func @backward_chain
// CHECK: tile.dot {{.*}} -> tensor<128x64xf32, #[[GRID]]>
// CHECK: tile.dot {{.*}} -> tensor<128x128xf32, #[[GRID]]>
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_80>} {
  func.func @backward_chain(%k: tensor<128x128xf16, #b>, %qT: tensor<128x64xf16, #b>, %do: tensor<64x128xf16, #b>, %zs: tensor<128x64xf32, #b>, %dv: tensor<128x128xf32, #b>) -> tensor<128x128xf32, #b> {
    %sT = tile.dot %k, %qT, %zs : tensor<128x128xf16, #b>, tensor<128x64xf16, #b> -> tensor<128x64xf32, #b>
    %e = tile.exp2 %sT : tensor<128x64xf32, #b>
    %pT = arith.truncf %e : tensor<128x64xf32, #b> to tensor<128x64xf16, #b>
    %r = tile.dot %pT, %do, %dv : tensor<128x64xf16, #b>, tensor<64x128xf16, #b> -> tensor<128x128xf32, #b>
    return %r : tensor<128x128xf32, #b>
  }
}

// -----

#b = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_80>} {
  func.func @int8(%a: tensor<32x32xi8, #b>, %acc: tensor<32x32xi32, #b>) -> tensor<32x32xi32, #b> {
    // expected-error @below {{tile.dot runs on the tensor cores with f16, bf16 or f32 operands; 'i8' operands are not supported on the GPU yet}}
    %s = tile.dot %a, %a, %acc : tensor<32x32xi8, #b>, tensor<32x32xi8, #b> -> tensor<32x32xi32, #b>
    return %s : tensor<32x32xi32, #b>
  }
}

// -----

// On sm_90a a dot becomes a warpgroup MMA: B (and A, loaded) stored to
// nvmma_shared buffers in the order they were loaded in, the accumulator
// in the wgmma layout of two warpgroups down the rows, one instruction as
// wide as the result.
#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [8, 1], order = [1, 0]>
#t = #tilegpu.blocked<sizePerThread = [8, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 8], order = [0, 1]>
// CHECK-DAG: #[[WG:.*]] = #tilegpu.mma<version = 3, warpsPerCTA = [8, 1], instrShape = [64, 128]>
// CHECK-DAG: #[[ROWMAJOR:.*]] = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
// CHECK-DAG: #[[KMAJOR:.*]] = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [0, 1]>
// CHECK-LABEL: func.func @hopper_gemm
// CHECK-DAG: %[[A:.*]] = tilegpu.local_alloc %arg0 : {{.*}} -> !tilegpu.memdesc<128x64xf16, #[[ROWMAJOR]]>
// CHECK-DAG: %[[B:.*]] = tilegpu.local_alloc %arg1 : {{.*}} -> !tilegpu.memdesc<64x128xf16, #[[KMAJOR]]>
// CHECK-DAG: %[[ACC:.*]] = tilegpu.convert_layout %arg2 {{.*}} -> tensor<128x128xf32, #[[WG]]>
// CHECK: tilegpu.warpgroup_dot %[[A]], %[[B]], %[[ACC]]
// CHECK-NOT: tile.dot
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @hopper_gemm(%a: tensor<128x64xf16, #b>, %k: tensor<64x128xf16, #t>, %acc: tensor<128x128xf32, #b>) -> tensor<128x128xf32, #b> {
    %s = tile.dot %a, %k, %acc : tensor<128x64xf16, #b>, tensor<64x128xf16, #t> -> tensor<128x128xf32, #b>
    return %s : tensor<128x128xf32, #b>
  }
}

// -----

// Attention's forward on sm_90a: P (S's exponentials) stays in the
// registers wgmma left S in, the A operand of P·V in its dot_operand layout.
#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-DAG: #[[S:.*]] = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
// CHECK-DAG: #[[O:.*]] = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 128]>
// CHECK-DAG: #[[P:.*]] = #tilegpu.dot_operand<opIdx = 0, parent = #[[O]], kWidth = 2>
// CHECK-LABEL: func.func @hopper_forward_chain
// CHECK: tilegpu.warpgroup_dot {{.*}} -> tensor<128x64xf32, #[[S]]>
// CHECK: %[[PA:[0-9]+]] = tilegpu.convert_layout {{.*}} -> tensor<128x64xf16, #[[P]]>
// CHECK: tilegpu.warpgroup_dot %[[PA]], {{.*}} -> tensor<128x128xf32, #[[O]]>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @hopper_forward_chain(%q: tensor<128x64xf16, #b>, %k: tensor<64x64xf16, #b>, %v: tensor<64x128xf16, #b>, %acc: tensor<128x64xf32, #b>, %o: tensor<128x128xf32, #b>) -> tensor<128x128xf32, #b> {
    %s = tile.dot %q, %k, %acc : tensor<128x64xf16, #b>, tensor<64x64xf16, #b> -> tensor<128x64xf32, #b>
    %p = arith.truncf %s : tensor<128x64xf32, #b> to tensor<128x64xf16, #b>
    %out = tile.dot %p, %v, %o : tensor<128x64xf16, #b>, tensor<64x128xf16, #b> -> tensor<128x128xf32, #b>
    return %out : tensor<128x128xf32, #b>
  }
}

// -----

// The same chain through a branch that masks S on some iterations (a
// window's left edge): P still stays in registers, the branch's result
// counted as S's own.
#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-DAG: #[[O:.*]] = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 128]>
// CHECK-DAG: #[[P:.*]] = #tilegpu.dot_operand<opIdx = 0, parent = #[[O]], kWidth = 2>
// CHECK-LABEL: func.func @hopper_masked_chain
// CHECK: scf.if
// CHECK: %[[PA:[0-9]+]] = tilegpu.convert_layout {{.*}} -> tensor<128x64xf16, #[[P]]>
// CHECK: tilegpu.warpgroup_dot %[[PA]], {{.*}} -> tensor<128x128xf32, #[[O]]>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @hopper_masked_chain(%q: tensor<128x64xf16, #b>, %k: tensor<64x64xf16, #b>, %v: tensor<64x128xf16, #b>, %acc: tensor<128x64xf32, #b>, %o: tensor<128x128xf32, #b>, %edge: i1, %keep: tensor<128x64xi1, #b>) -> tensor<128x128xf32, #b> {
    %s = tile.dot %q, %k, %acc : tensor<128x64xf16, #b>, tensor<64x64xf16, #b> -> tensor<128x64xf32, #b>
    %masked = scf.if %edge -> (tensor<128x64xf32, #b>) {
      %w = tile.where %keep, %s, %acc : tensor<128x64xf32, #b>
      scf.yield %w : tensor<128x64xf32, #b>
    } else {
      scf.yield %s : tensor<128x64xf32, #b>
    }
    %e = tile.exp2 %masked : tensor<128x64xf32, #b>
    %p = arith.truncf %e : tensor<128x64xf32, #b> to tensor<128x64xf16, #b>
    %out = tile.dot %p, %v, %o : tensor<128x64xf16, #b>, tensor<64x128xf16, #b> -> tensor<128x128xf32, #b>
    return %out : tensor<128x128xf32, #b>
  }
}

// -----

// Attention's backward on sm_90a, 64 queries a step: dQ's A operand, dS^T
// transposed in registers, is stored as it is and read through a transposed
// view; dV takes P^T from the registers S^T was left in.
#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-DAG: #[[KEYS:.*]] = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
// CHECK-DAG: #[[PT:.*]] = #tilegpu.dot_operand<opIdx = 0, parent = #[[KEYS]], kWidth = 2>
// CHECK-LABEL: func.func @hopper_backward
// CHECK: tilegpu.warpgroup_dot {{.*}} -> tensor<64x64xf32, #[[KEYS]]>
// CHECK: %[[PT16:.*]] = arith.truncf
// CHECK: %[[DST:.*]] = tilegpu.local_alloc %[[PT16]] : tensor<64x64xf16, #blocked> -> !tilegpu.memdesc<64x64xf16, #[[ROWS:.*]]>
// CHECK: %[[DS:.*]] = tilegpu.memdesc_trans %[[DST]] : !tilegpu.memdesc<64x64xf16, #[[ROWS]]> -> !tilegpu.memdesc<64x64xf16, #{{.*}}>
// CHECK: %[[PA:.*]] = tilegpu.convert_layout {{.*}} -> tensor<64x64xf16, #[[PT]]>
// CHECK: tilegpu.warpgroup_dot %[[PA]]
// CHECK: tilegpu.warpgroup_dot %[[DS]]
// CHECK-NOT: tile.dot
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @hopper_backward(%k: tensor<64x64xf16, #b>, %qt: tensor<64x64xf16, #b>, %do: tensor<64x64xf16, #b>, %acc: tensor<64x64xf32, #b>) -> (tensor<64x64xf32, #b>, tensor<64x64xf32, #b>) {
    %st = tile.dot %k, %qt, %acc : tensor<64x64xf16, #b>, tensor<64x64xf16, #b> -> tensor<64x64xf32, #b>
    %pt = arith.truncf %st : tensor<64x64xf32, #b> to tensor<64x64xf16, #b>
    %dv = tile.dot %pt, %do, %acc : tensor<64x64xf16, #b>, tensor<64x64xf16, #b> -> tensor<64x64xf32, #b>
    %ds = tile.trans %pt {order = array<i32: 1, 0>} : tensor<64x64xf16, #b> -> tensor<64x64xf16, #b>
    %dq = tile.dot %ds, %k, %acc : tensor<64x64xf16, #b>, tensor<64x64xf16, #b> -> tensor<64x64xf32, #b>
    return %dv, %dq : tensor<64x64xf32, #b>, tensor<64x64xf32, #b>
  }
}

// -----

// A chained A of 64 rows cannot stay in registers on two warpgroups (each
// would hold half of its columns but needs whole rows): it crosses shared
// memory, and the function stays on wgmma (the d256 backward's dV and dQ).
#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [8, 1], order = [1, 0]>
// CHECK-DAG: #[[O:.*]] = #tilegpu.mma<version = 3, warpsPerCTA = [4, 2], instrShape = [64, 128]>
// CHECK-LABEL: func.func @hopper_short_chain
// CHECK: tilegpu.warpgroup_dot {{.*}} -> tensor<64x128xf32, #{{.*}}>
// CHECK: %[[P:.*]] = arith.truncf
// CHECK: %[[PS:.*]] = tilegpu.local_alloc %[[P]] : tensor<64x128xf16, #blocked> -> !tilegpu.memdesc<64x128xf16, #{{.*}}>
// CHECK: tilegpu.warpgroup_dot %[[PS]], {{.*}} -> tensor<64x256xf32, #[[O]]>
// CHECK-NOT: tile.dot
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @hopper_short_chain(%q: tensor<64x64xf16, #b>, %k: tensor<64x128xf16, #b>, %v: tensor<128x256xf16, #b>, %acc: tensor<64x128xf32, #b>, %o: tensor<64x256xf32, #b>) -> tensor<64x256xf32, #b> {
    %s = tile.dot %q, %k, %acc : tensor<64x64xf16, #b>, tensor<64x128xf16, #b> -> tensor<64x128xf32, #b>
    %p = arith.truncf %s : tensor<64x128xf32, #b> to tensor<64x128xf16, #b>
    %out = tile.dot %p, %v, %o : tensor<64x128xf16, #b>, tensor<128x256xf16, #b> -> tensor<64x256xf32, #b>
    return %out : tensor<64x256xf32, #b>
  }
}
// -----

// On sm_90a a function with a dot warpgroups cannot take (M = 32: dQ of
// 32 queries) keeps mma.sync for all its dots, so that no layouts mix; a
// function of its own is not held back by it.
#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-LABEL: func.func @hopper_short
// CHECK-NOT: warpgroup_dot
// CHECK: tile.dot {{.*}} -> tensor<64x32xf32, #mma{{[0-9]*}}>
// CHECK: tile.dot {{.*}} -> tensor<32x64xf32, #mma{{[0-9]*}}>
// CHECK-LABEL: func.func @hopper_alone
// CHECK: tilegpu.warpgroup_dot
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @hopper_short(%k: tensor<64x64xf16, #b>, %qt: tensor<64x32xf16, #b>, %acc: tensor<64x32xf32, #b>, %dqacc: tensor<32x64xf32, #b>) -> tensor<32x64xf32, #b> {
    %st = tile.dot %k, %qt, %acc : tensor<64x64xf16, #b>, tensor<64x32xf16, #b> -> tensor<64x32xf32, #b>
    %pt = arith.truncf %st : tensor<64x32xf32, #b> to tensor<64x32xf16, #b>
    %ds = tile.trans %pt {order = array<i32: 1, 0>} : tensor<64x32xf16, #b> -> tensor<32x64xf16, #b>
    %dq = tile.dot %ds, %k, %dqacc : tensor<32x64xf16, #b>, tensor<64x64xf16, #b> -> tensor<32x64xf32, #b>
    return %dq : tensor<32x64xf32, #b>
  }
  func.func @hopper_alone(%a: tensor<64x64xf16, #b>, %w: tensor<64x64xf16, #b>, %acc: tensor<64x64xf32, #b>) -> tensor<64x64xf32, #b> {
    %s = tile.dot %a, %w, %acc : tensor<64x64xf16, #b>, tensor<64x64xf16, #b> -> tensor<64x64xf32, #b>
    return %s : tensor<64x64xf32, #b>
  }
}

// -----

// fp8 on sm_90a: wgmma reads 8-bit operands with k contiguous only, so B
// comes as an [N, K] tile, transposed: the tile is stored as it came and
// read through a transposed view (which the pipeliner's copy then fills).
#b = #tilegpu.blocked<sizePerThread = [1, 16], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]>
#t = #tilegpu.blocked<sizePerThread = [16, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 4], order = [0, 1]>
// CHECK-DAG: #[[ROWS8:.*]] = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 8, order = [1, 0]>
// CHECK-DAG: #[[COLS8:.*]] = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 8, order = [0, 1]>
// CHECK-LABEL: func.func @hopper_fp8
// CHECK-DAG: %[[A:.*]] = tilegpu.local_alloc %arg0 : {{.*}} -> !tilegpu.memdesc<128x128xf8E4M3FN, #[[ROWS8]]>
// CHECK-DAG: %[[BT:.*]] = tilegpu.local_alloc %arg1 : {{.*}} -> !tilegpu.memdesc<64x128xf8E4M3FN, #[[ROWS8]]>
// CHECK-DAG: %[[B:.*]] = tilegpu.memdesc_trans %[[BT]] : {{.*}} -> !tilegpu.memdesc<128x64xf8E4M3FN, #[[COLS8]]>
// CHECK: tilegpu.warpgroup_dot %[[A]], %[[B]], %{{.*}} : !tilegpu.memdesc<128x128xf8E4M3FN, #[[ROWS8]]>, !tilegpu.memdesc<128x64xf8E4M3FN, #[[COLS8]]>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @hopper_fp8(%a: tensor<128x128xf8E4M3FN, #b>, %bt: tensor<64x128xf8E4M3FN, #b>, %acc: tensor<128x64xf32, #b>) -> tensor<128x64xf32, #b> {
    %k = tile.trans %bt {order = array<i32: 1, 0>} : tensor<64x128xf8E4M3FN, #b> -> tensor<128x64xf8E4M3FN, #t>
    %s = tile.dot %a, %k, %acc : tensor<128x128xf8E4M3FN, #b>, tensor<128x64xf8E4M3FN, #t> -> tensor<128x64xf32, #b>
    return %s : tensor<128x64xf32, #b>
  }
}

// -----

// fp8 with B's n contiguous: no wgmma takes it, and mma.sync has no fp8;
// the error says what would run (tile-compile then ships the kernel for
// the interpreter only).
#b = #tilegpu.blocked<sizePerThread = [1, 16], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @hopper_fp8_n_major(%a: tensor<128x128xf8E4M3FN, #b>, %w: tensor<128x64xf8E4M3FN, #b>, %acc: tensor<128x64xf32, #b>) -> tensor<128x64xf32, #b> {
    // expected-error @below {{tile.dot of float8 operands runs on sm_90a's wgmma, with A's rows and B's columns contiguous (B loaded as an [N, K] tile and transposed: tl.dot(a, tl.trans(b))), M a multiple of 64 and K of 32; this one is not supported on the GPU yet}}
    %s = tile.dot %a, %w, %acc : tensor<128x128xf8E4M3FN, #b>, tensor<128x64xf8E4M3FN, #b> -> tensor<128x64xf32, #b>
    return %s : tensor<128x64xf32, #b>
  }
}

// -----

// dQ of the d64 backward: M = 64 rows, one warpgroup's worth, so the two
// warpgroups split N = 64 into instructions 32 wide. B is stored N-major
// (loaded row-major, [K, N]) and a wgmma reads whole swizzle spans of N:
// a 64-byte swizzle (32 columns), not the 128 bytes its rows would allow.
#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [8, 1], order = [1, 0]>
// CHECK-DAG: #[[WG:.*]] = #tilegpu.mma<version = 3, warpsPerCTA = [4, 2], instrShape = [64, 32]>
// CHECK-DAG: #[[NMAJOR:.*]] = #tilegpu.nvmma_shared<swizzle = 64, elementBits = 16, order = [1, 0]>
// CHECK-LABEL: func.func @narrow_n_major_b
// CHECK: %[[B:.*]] = tilegpu.local_alloc %arg1 : {{.*}} -> !tilegpu.memdesc<128x64xf16, #[[NMAJOR]]>
// CHECK: tilegpu.warpgroup_dot %{{.*}}, %[[B]], %{{.*}} -> tensor<64x64xf32, #[[WG]]>
// CHECK-NOT: tile.dot
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @narrow_n_major_b(%a: tensor<64x128xf16, #b>, %k: tensor<128x64xf16, #b>, %acc: tensor<64x64xf32, #b>) -> tensor<64x64xf32, #b> {
    %s = tile.dot %a, %k, %acc : tensor<64x128xf16, #b>, tensor<128x64xf16, #b> -> tensor<64x64xf32, #b>
    return %s : tensor<64x64xf32, #b>
  }
}
