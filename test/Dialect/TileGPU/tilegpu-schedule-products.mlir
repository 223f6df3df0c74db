// RUN: tile-opt %s -split-input-file -tilegpu-schedule-products | FileCheck %s

// Attention's backward step: dP^T = V dO^T comes first in the source, but
// S^T = K Q^T is needed first (by exp2), so S^T overtakes it; both are
// issued back to back, asynchronously, and S^T is waited for with dP^T
// still running (pendings 1). dV, accumulating into the loop's sum, stays
// where it is and runs asynchronously: dP^T is waited for beside it. S^T
// moves past the global load of LSE (tile ops touch global memory only); dQ
// stays below the store of dS^T to shared memory it reads, and is waited
// for at the atomic add, with dK, a sum issued after it, still running: dK
// is waited for at the yield, and dV after it, counted from dK's wait
// (pendings 0, not 2: ptxas serialises the wgmmas otherwise).
#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#mma = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
#n = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#nt = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [0, 1]>
#a = #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
// CHECK-LABEL: func.func @backward_step
// CHECK: scf.for
// CHECK: %[[ST:.*]] = tilegpu.warpgroup_dot %{{.*}}, %[[QT:.*]], %{{.*}} {is_async}
// CHECK-NEXT: %[[DPT:.*]] = tilegpu.warpgroup_dot %{{.*}}, %[[DOT:.*]], %{{.*}} {is_async}
// CHECK-NEXT: %[[LSE:.*]] = tile.load
// CHECK-NEXT: %[[STDONE:.*]] = tilegpu.warpgroup_dot_wait %[[ST]] {pendings = 1 : i32}
// CHECK-NEXT: math.exp2 %[[STDONE]]
// CHECK: %[[DV:.*]] = tilegpu.warpgroup_dot {{.*}} {is_async}
// CHECK-NEXT: %[[DPTDONE:.*]] = tilegpu.warpgroup_dot_wait %[[DPT]] {pendings = 1 : i32}
// CHECK: arith.subf %[[DPTDONE]]
// CHECK: %[[DST:.*]] = tilegpu.local_alloc
// CHECK-NEXT: %[[DS:.*]] = tilegpu.memdesc_trans %[[DST]]
// CHECK-NEXT: %[[DQ:.*]] = tilegpu.warpgroup_dot %[[DS]], %{{.*}}, %{{.*}} {is_async}
// CHECK-NEXT: %[[DK:.*]] = tilegpu.warpgroup_dot %[[DST]], %{{.*}}, %{{.*}} {is_async}
// CHECK-NEXT: %[[DQDONE:.*]] = tilegpu.warpgroup_dot_wait %[[DQ]] {pendings = 1 : i32}
// CHECK-NEXT: tile.atomic_rmw add %{{.*}}, %[[DQDONE]]
// CHECK-NEXT: %[[DKDONE:.*]] = tilegpu.warpgroup_dot_wait %[[DK]] {pendings = 0 : i32}
// CHECK-NEXT: %[[DVDONE:.*]] = tilegpu.warpgroup_dot_wait %[[DV]] {pendings = 0 : i32}
// CHECK-NEXT: scf.yield %[[DVDONE]], %[[DKDONE]]
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @backward_step(%k: !tilegpu.memdesc<64x64xf16, #n>, %v: !tilegpu.memdesc<64x64xf16, #n>, %qt: !tilegpu.memdesc<64x64xf16, #nt>, %do: !tilegpu.memdesc<64x64xf16, #n>, %dot: !tilegpu.memdesc<64x64xf16, #nt>, %q: !tilegpu.memdesc<64x64xf16, #n>, %lse_ptr: tensor<64x64x!tile.ptr<f32>, #mma>, %dq_ptr: tensor<64x64x!tile.ptr<f32>, #mma>, %n: i32) -> tensor<64x64xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
    %r:2 = scf.for %j = %c0 to %n step %c64 iter_args(%dv = %zero, %dk = %zero) -> (tensor<64x64xf32, #mma>, tensor<64x64xf32, #mma>) : i32 {
      %dpt = tilegpu.warpgroup_dot %v, %dot, %zero : !tilegpu.memdesc<64x64xf16, #n>, !tilegpu.memdesc<64x64xf16, #nt>, tensor<64x64xf32, #mma> -> tensor<64x64xf32, #mma>
      %lse = tile.load %lse_ptr : tensor<64x64x!tile.ptr<f32>, #mma>
      %st = tilegpu.warpgroup_dot %k, %qt, %zero : !tilegpu.memdesc<64x64xf16, #n>, !tilegpu.memdesc<64x64xf16, #nt>, tensor<64x64xf32, #mma> -> tensor<64x64xf32, #mma>
      %e = math.exp2 %st : tensor<64x64xf32, #mma>
      %pt = arith.subf %e, %lse : tensor<64x64xf32, #mma>
      %pt16 = arith.truncf %pt : tensor<64x64xf32, #mma> to tensor<64x64xf16, #mma>
      %pta = tilegpu.convert_layout %pt16 : tensor<64x64xf16, #mma> -> tensor<64x64xf16, #a>
      %dvn = tilegpu.warpgroup_dot %pta, %do, %dv : tensor<64x64xf16, #a>, !tilegpu.memdesc<64x64xf16, #n>, tensor<64x64xf32, #mma> -> tensor<64x64xf32, #mma>
      %d = arith.subf %dpt, %pt : tensor<64x64xf32, #mma>
      %dst = arith.mulf %pt, %d : tensor<64x64xf32, #mma>
      %dst16 = arith.truncf %dst : tensor<64x64xf32, #mma> to tensor<64x64xf16, #mma>
      %dsbuf = tilegpu.local_alloc %dst16 : tensor<64x64xf16, #mma> -> !tilegpu.memdesc<64x64xf16, #n>
      %ds = tilegpu.memdesc_trans %dsbuf : !tilegpu.memdesc<64x64xf16, #n> -> !tilegpu.memdesc<64x64xf16, #nt>
      %dq = tilegpu.warpgroup_dot %ds, %k, %zero : !tilegpu.memdesc<64x64xf16, #nt>, !tilegpu.memdesc<64x64xf16, #n>, tensor<64x64xf32, #mma> -> tensor<64x64xf32, #mma>
      %dkn = tilegpu.warpgroup_dot %dsbuf, %q, %dk : !tilegpu.memdesc<64x64xf16, #n>, !tilegpu.memdesc<64x64xf16, #n>, tensor<64x64xf32, #mma> -> tensor<64x64xf32, #mma>
      %old = tile.atomic_rmw add %dq_ptr, %dq : tensor<64x64x!tile.ptr<f32>, #mma>
      scf.yield %dvn, %dkn : tensor<64x64xf32, #mma>, tensor<64x64xf32, #mma>
    }
    return %r#1 : tensor<64x64xf32, #mma>
  }
}

// -----

// One fresh product (attention's forward: S, then O += P V) leaves the
// block as it is: the tensor cores have nothing to run beside S.
#mma = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
#n = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#nt = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [0, 1]>
#a = #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
// CHECK-LABEL: func.func @forward_step
// CHECK-NOT: is_async
// CHECK-NOT: warpgroup_dot_wait
// CHECK: return
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @forward_step(%q: !tilegpu.memdesc<64x64xf16, #n>, %k: !tilegpu.memdesc<64x64xf16, #nt>, %v: !tilegpu.memdesc<64x64xf16, #n>, %o: tensor<64x64xf32, #mma>) -> tensor<64x64xf32, #mma> {
    %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
    %s = tilegpu.warpgroup_dot %q, %k, %zero : !tilegpu.memdesc<64x64xf16, #n>, !tilegpu.memdesc<64x64xf16, #nt>, tensor<64x64xf32, #mma> -> tensor<64x64xf32, #mma>
    %p = math.exp2 %s : tensor<64x64xf32, #mma>
    %p16 = arith.truncf %p : tensor<64x64xf32, #mma> to tensor<64x64xf16, #mma>
    %pa = tilegpu.convert_layout %p16 : tensor<64x64xf16, #mma> -> tensor<64x64xf16, #a>
    %out = tilegpu.warpgroup_dot %pa, %v, %o : tensor<64x64xf16, #a>, !tilegpu.memdesc<64x64xf16, #n>, tensor<64x64xf32, #mma> -> tensor<64x64xf32, #mma>
    return %out : tensor<64x64xf32, #mma>
  }
}

// -----

// Two fresh products whose results are both returned: the second is waited
// for first (nothing after it), the first after, counted from that wait
// (nothing pending). Neither
// moves above the store to shared memory of the tile the second reads.
#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#mma = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
#n = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#nt = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [0, 1]>
// CHECK-LABEL: func.func @two_results
// CHECK: %[[BUF:.*]] = tilegpu.local_alloc
// CHECK-NEXT: %[[X:.*]] = tilegpu.warpgroup_dot %{{.*}}, %[[BUF]], %{{.*}} {is_async}
// CHECK-NEXT: %[[Y:.*]] = tilegpu.warpgroup_dot %{{.*}}, %[[BUF]], %{{.*}} {is_async}
// CHECK-NEXT: %[[YDONE:.*]] = tilegpu.warpgroup_dot_wait %[[Y]] {pendings = 0 : i32}
// CHECK-NEXT: %[[XDONE:.*]] = tilegpu.warpgroup_dot_wait %[[X]] {pendings = 0 : i32}
// CHECK-NEXT: return %[[XDONE]], %[[YDONE]]
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @two_results(%a: !tilegpu.memdesc<64x64xf16, #n>, %t: tensor<64x64xf16, #b>) -> (tensor<64x64xf32, #mma>, tensor<64x64xf32, #mma>) {
    %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
    %buf = tilegpu.local_alloc %t : tensor<64x64xf16, #b> -> !tilegpu.memdesc<64x64xf16, #nt>
    %x = tilegpu.warpgroup_dot %a, %buf, %zero : !tilegpu.memdesc<64x64xf16, #n>, !tilegpu.memdesc<64x64xf16, #nt>, tensor<64x64xf32, #mma> -> tensor<64x64xf32, #mma>
    %y = tilegpu.warpgroup_dot %a, %buf, %zero : !tilegpu.memdesc<64x64xf16, #n>, !tilegpu.memdesc<64x64xf16, #nt>, tensor<64x64xf32, #mma> -> tensor<64x64xf32, #mma>
    return %x, %y : tensor<64x64xf32, #mma>, tensor<64x64xf32, #mma>
  }
}

// -----

// dQ in two halves (the d256 backward): each half is added to memory before
// the next is made. The second product stays below the first's atomic add,
// which frees the first's registers; issued above it, both accumulators
// would be held at once.
#mma = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
#n = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#nt = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [0, 1]>
// CHECK-LABEL: func.func @halves_added_in_turn
// CHECK: %[[LO:.*]] = tilegpu.warpgroup_dot %{{.*}}, %{{.*}}, %{{.*}} {is_async}
// CHECK-NEXT: %[[LODONE:.*]] = tilegpu.warpgroup_dot_wait %[[LO]] {pendings = 0 : i32}
// CHECK-NEXT: tilegpu.convert_layout %[[LODONE]]
// CHECK-NEXT: tile.atomic_rmw add
// CHECK-NEXT: %[[HI:.*]] = tilegpu.warpgroup_dot %{{.*}}, %{{.*}}, %{{.*}} {is_async}
// CHECK-NEXT: %[[HIDONE:.*]] = tilegpu.warpgroup_dot_wait %[[HI]] {pendings = 0 : i32}
// CHECK-NEXT: tile.atomic_rmw add %{{.*}}, %[[HIDONE]]
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @halves_added_in_turn(%ds: !tilegpu.memdesc<64x64xf16, #nt>, %klo: !tilegpu.memdesc<64x64xf16, #n>, %khi: !tilegpu.memdesc<64x64xf16, #n>, %lo_ptr: tensor<64x64x!tile.ptr<f32>, #mma>, %hi_ptr: tensor<64x64x!tile.ptr<f32>, #mma>) {
    %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
    %lo = tilegpu.warpgroup_dot %ds, %klo, %zero : !tilegpu.memdesc<64x64xf16, #nt>, !tilegpu.memdesc<64x64xf16, #n>, tensor<64x64xf32, #mma> -> tensor<64x64xf32, #mma>
    %lo_c = tilegpu.convert_layout %lo : tensor<64x64xf32, #mma> -> tensor<64x64xf32, #mma>
    %old_lo = tile.atomic_rmw add %lo_ptr, %lo_c : tensor<64x64x!tile.ptr<f32>, #mma>
    %hi = tilegpu.warpgroup_dot %ds, %khi, %zero : !tilegpu.memdesc<64x64xf16, #nt>, !tilegpu.memdesc<64x64xf16, #n>, tensor<64x64xf32, #mma> -> tensor<64x64xf32, #mma>
    %old_hi = tile.atomic_rmw add %hi_ptr, %hi : tensor<64x64x!tile.ptr<f32>, #mma>
    return
  }
}
