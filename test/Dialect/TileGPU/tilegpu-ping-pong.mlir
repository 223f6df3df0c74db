// RUN: tile-opt %s -split-input-file -tilegpu-ping-pong | FileCheck %s

// The forward's rotated loop on two warpgroups: each takes its turn at
// issuing S = Q K^T and O += P V. The waits for K's and V's copies and the
// rescale of O (an iter_arg times the carried factor) move before the
// turn, which holds only the issue; the softmax runs after the pass. The
// last warpgroup passes the first turn after the producer's region, and
// warpgroup 0 takes the last pass before the kernel returns.
#mma = #tilegpu.mma<version = 3, warpsPerCTA = [8, 1], instrShape = [64, 64]>
#n = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#nt = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [0, 1]>
#a = #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
#bar = #tilegpu.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]>
// CHECK-LABEL: func.func @rotated
// CHECK: tilegpu.warp_specialize
// CHECK: tilegpu.pass_turn {initial, warpgroups = 2 : i32}
// CHECK: scf.for
// CHECK: tilegpu.wait_barrier %[[KFULL:.*]], %
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: tilegpu.wait_barrier %[[VFULL:.*]], %
// CHECK-NEXT: tilegpu.wait_turn {warpgroups = 2 : i32}
// CHECK-NEXT: tilegpu.warpgroup_dot {{.*}} {is_async}
// CHECK-NEXT: tilegpu.warpgroup_dot {{.*}} {is_async}
// CHECK-NEXT: tilegpu.pass_turn {warpgroups = 2 : i32}
// CHECK-NEXT: tilegpu.warpgroup_dot_wait {{.*}} {pendings = 1 : i32}
// CHECK-NEXT: math.exp2
// CHECK: scf.yield
// CHECK: tilegpu.wait_turn {final, warpgroups = 2 : i32}
// CHECK-NEXT: return
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @rotated(%q: !tilegpu.memdesc<128x64xf16, #n>, %k: !tilegpu.memdesc<64x64xf16, #nt>, %v: !tilegpu.memdesc<64x64xf16, #n>, %kfull: !tilegpu.memdesc<1x1xi64, #bar>, %vfull: !tilegpu.memdesc<1x1xi64, #bar>, %p0: tensor<128x64xf16, #a>, %n: i32) -> tensor<128x64xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.0> : tensor<128x64xf32, #mma>
    %one = arith.constant dense<1.0> : tensor<128x64xf32, #mma>
    tilegpu.warp_specialize {
    } {consumer_registers = 240 : i32, ctas_per_sm = 1 : i32, producer_registers = 24 : i32, producer_warps = 4 : i32}
    %r:3 = scf.for %j = %c0 to %n step %c64 iter_args(%o = %zero, %alpha = %one, %p = %p0) -> (tensor<128x64xf32, #mma>, tensor<128x64xf32, #mma>, tensor<128x64xf16, #a>) : i32 {
      tilegpu.wait_barrier %kfull, %c0 : !tilegpu.memdesc<1x1xi64, #bar>
      %s = tilegpu.warpgroup_dot %q, %k, %zero {is_async} : !tilegpu.memdesc<128x64xf16, #n>, !tilegpu.memdesc<64x64xf16, #nt>, tensor<128x64xf32, #mma> -> tensor<128x64xf32, #mma>
      %scaled = arith.mulf %o, %alpha : tensor<128x64xf32, #mma>
      tilegpu.wait_barrier %vfull, %c0 : !tilegpu.memdesc<1x1xi64, #bar>
      %on = tilegpu.warpgroup_dot %p, %v, %scaled {is_async} : tensor<128x64xf16, #a>, !tilegpu.memdesc<64x64xf16, #n>, tensor<128x64xf32, #mma> -> tensor<128x64xf32, #mma>
      %sd = tilegpu.warpgroup_dot_wait %s {pendings = 1 : i32} : tensor<128x64xf32, #mma>
      %e = math.exp2 %sd : tensor<128x64xf32, #mma>
      %e16 = arith.truncf %e : tensor<128x64xf32, #mma> to tensor<128x64xf16, #mma>
      %pn = tilegpu.convert_layout %e16 : tensor<128x64xf16, #mma> -> tensor<128x64xf16, #a>
      %od = tilegpu.warpgroup_dot_wait %on {pendings = 0 : i32} : tensor<128x64xf32, #mma>
      scf.yield %od, %e, %pn : tensor<128x64xf32, #mma>, tensor<128x64xf32, #mma>, tensor<128x64xf16, #a>
    }
    return %r#0 : tensor<128x64xf32, #mma>
  }
}

// -----

// A program barrier between the products: a warpgroup holding the turn
// there would wait for one waiting for the turn. The loop is left alone,
// and with no turn anywhere the kernel takes none.
#mma = #tilegpu.mma<version = 3, warpsPerCTA = [8, 1], instrShape = [64, 64]>
#n = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#nt = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [0, 1]>
// CHECK-LABEL: func.func @barrier_between
// CHECK-NOT: turn
// CHECK: return
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @barrier_between(%q: !tilegpu.memdesc<128x64xf16, #n>, %k: !tilegpu.memdesc<64x64xf16, #nt>, %n: i32) -> tensor<128x64xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.0> : tensor<128x64xf32, #mma>
    %r = scf.for %j = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<128x64xf32, #mma>) : i32 {
      %s = tilegpu.warpgroup_dot %q, %k, %zero {is_async} : !tilegpu.memdesc<128x64xf16, #n>, !tilegpu.memdesc<64x64xf16, #nt>, tensor<128x64xf32, #mma> -> tensor<128x64xf32, #mma>
      tilegpu.barrier
      %t = tilegpu.warpgroup_dot %q, %k, %acc {is_async} : !tilegpu.memdesc<128x64xf16, #n>, !tilegpu.memdesc<64x64xf16, #nt>, tensor<128x64xf32, #mma> -> tensor<128x64xf32, #mma>
      %sd = tilegpu.warpgroup_dot_wait %s {pendings = 1 : i32} : tensor<128x64xf32, #mma>
      %td = tilegpu.warpgroup_dot_wait %t {pendings = 0 : i32} : tensor<128x64xf32, #mma>
      %sum = arith.addf %sd, %td : tensor<128x64xf32, #mma>
      scf.yield %sum : tensor<128x64xf32, #mma>
    }
    return %r : tensor<128x64xf32, #mma>
  }
}

// -----

// A synchronous product (waited for where it is issued) leaves nothing to
// run beside the other warpgroup's: no turns.
#mma = #tilegpu.mma<version = 3, warpsPerCTA = [8, 1], instrShape = [64, 64]>
#n = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#nt = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [0, 1]>
// CHECK-LABEL: func.func @synchronous
// CHECK-NOT: turn
// CHECK: return
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @synchronous(%q: !tilegpu.memdesc<128x64xf16, #n>, %k: !tilegpu.memdesc<64x64xf16, #nt>, %n: i32) -> tensor<128x64xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.0> : tensor<128x64xf32, #mma>
    %r = scf.for %j = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<128x64xf32, #mma>) : i32 {
      %s = tilegpu.warpgroup_dot %q, %k, %zero {is_async} : !tilegpu.memdesc<128x64xf16, #n>, !tilegpu.memdesc<64x64xf16, #nt>, tensor<128x64xf32, #mma> -> tensor<128x64xf32, #mma>
      %t = tilegpu.warpgroup_dot %q, %k, %acc : !tilegpu.memdesc<128x64xf16, #n>, !tilegpu.memdesc<64x64xf16, #nt>, tensor<128x64xf32, #mma> -> tensor<128x64xf32, #mma>
      %sd = tilegpu.warpgroup_dot_wait %s {pendings = 0 : i32} : tensor<128x64xf32, #mma>
      %sum = arith.addf %sd, %t : tensor<128x64xf32, #mma>
      scf.yield %sum : tensor<128x64xf32, #mma>
    }
    return %r : tensor<128x64xf32, #mma>
  }
}

// -----

// One warpgroup takes no turns.
#mma = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
#n = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#nt = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [0, 1]>
// CHECK-LABEL: func.func @one_warpgroup
// CHECK-NOT: turn
// CHECK: return
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @one_warpgroup(%q: !tilegpu.memdesc<64x64xf16, #n>, %k: !tilegpu.memdesc<64x64xf16, #nt>, %n: i32) -> tensor<64x64xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
    %r = scf.for %j = %c0 to %n step %c64 iter_args(%acc = %zero) -> (tensor<64x64xf32, #mma>) : i32 {
      %s = tilegpu.warpgroup_dot %q, %k, %zero {is_async} : !tilegpu.memdesc<64x64xf16, #n>, !tilegpu.memdesc<64x64xf16, #nt>, tensor<64x64xf32, #mma> -> tensor<64x64xf32, #mma>
      %t = tilegpu.warpgroup_dot %q, %k, %acc {is_async} : !tilegpu.memdesc<64x64xf16, #n>, !tilegpu.memdesc<64x64xf16, #nt>, tensor<64x64xf32, #mma> -> tensor<64x64xf32, #mma>
      %sd = tilegpu.warpgroup_dot_wait %s {pendings = 1 : i32} : tensor<64x64xf32, #mma>
      %td = tilegpu.warpgroup_dot_wait %t {pendings = 0 : i32} : tensor<64x64xf32, #mma>
      %sum = arith.addf %sd, %td : tensor<64x64xf32, #mma>
      scf.yield %sum : tensor<64x64xf32, #mma>
    }
    return %r : tensor<64x64xf32, #mma>
  }
}
