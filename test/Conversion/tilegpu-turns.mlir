// RUN: tile-opt %s | tile-opt | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: tile-opt %s -convert-tilegpu-to-llvm | FileCheck %s

// Warpgroup k (thread index / 128) waits for its turn at named barrier
// 1 + k and passes it at barrier 1 + (k + 1) mod 2, 256 threads each (its
// own and the passing warpgroup's). The first turn is passed by the last
// warpgroup alone, the last one taken by warpgroup 0 alone.

// ROUNDTRIP-LABEL: func.func @turns
// ROUNDTRIP: tilegpu.pass_turn {initial, warpgroups = 2 : i32}
// ROUNDTRIP: tilegpu.wait_turn {warpgroups = 2 : i32}
// ROUNDTRIP: tilegpu.pass_turn {warpgroups = 2 : i32}
// ROUNDTRIP: tilegpu.wait_turn {final, warpgroups = 2 : i32}

// CHECK-LABEL: llvm.func @turns
// CHECK: %[[WARP:.*]] = llvm.lshr %{{.*}}, %{{.*}} : i32
// CHECK: %[[GROUP:.*]] = llvm.lshr %[[WARP]], %{{.*}} : i32
// CHECK: %[[LAST:.*]] = llvm.mlir.constant(1 : i32)
// CHECK: %[[IS_LAST:.*]] = llvm.icmp "eq" %[[GROUP]], %[[LAST]]
// CHECK: scf.if %[[IS_LAST]] {
// CHECK: %[[FIRST:.*]] = llvm.mlir.constant(1 : i32)
// CHECK: %[[THREADS:.*]] = llvm.mlir.constant(256 : i32)
// CHECK: nvvm.barrier.arrive id = %[[FIRST]] number_of_threads = %[[THREADS]]
// CHECK: %[[W2:.*]] = llvm.lshr %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: %[[CW2:.*]] = llvm.mlir.constant(2 : i32)
// CHECK-NEXT: %[[GROUP2:.*]] = llvm.lshr %[[W2]], %[[CW2]] : i32
// CHECK-NEXT: %[[ONE:.*]] = llvm.mlir.constant(1 : i32)
// CHECK-NEXT: %[[OWN:.*]] = llvm.add %[[GROUP2]], %[[ONE]]
// CHECK-NEXT: %[[THREADS2:.*]] = llvm.mlir.constant(256 : i32)
// CHECK-NEXT: nvvm.barrier id = %[[OWN]] number_of_threads = %[[THREADS2]]
// CHECK: %[[W3:.*]] = llvm.lshr %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: %[[CW3:.*]] = llvm.mlir.constant(2 : i32)
// CHECK-NEXT: %[[GROUP3:.*]] = llvm.lshr %[[W3]], %[[CW3]] : i32
// CHECK-NEXT: %[[LAST3:.*]] = llvm.mlir.constant(1 : i32)
// CHECK-NEXT: %[[IS_LAST3:.*]] = llvm.icmp "eq" %[[GROUP3]], %[[LAST3]]
// CHECK-NEXT: %[[TWO:.*]] = llvm.mlir.constant(2 : i32)
// CHECK-NEXT: %[[NEXT:.*]] = llvm.add %[[GROUP3]], %[[TWO]]
// CHECK-NEXT: %[[WRAP:.*]] = llvm.mlir.constant(1 : i32)
// CHECK-NEXT: %[[ID:.*]] = llvm.select %[[IS_LAST3]], %[[WRAP]], %[[NEXT]]
// CHECK-NEXT: %[[THREADS3:.*]] = llvm.mlir.constant(256 : i32)
// CHECK-NEXT: nvvm.barrier.arrive id = %[[ID]] number_of_threads = %[[THREADS3]]
// CHECK: %[[W4:.*]] = llvm.lshr %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: %[[CW4:.*]] = llvm.mlir.constant(2 : i32)
// CHECK-NEXT: %[[GROUP4:.*]] = llvm.lshr %[[W4]], %[[CW4]] : i32
// CHECK-NEXT: %[[ZERO:.*]] = llvm.mlir.constant(0 : i32)
// CHECK-NEXT: %[[IS_FIRST:.*]] = llvm.icmp "eq" %[[GROUP4]], %[[ZERO]]
// CHECK-NEXT: scf.if %[[IS_FIRST]] {
// CHECK-NEXT: %[[B1:.*]] = llvm.mlir.constant(1 : i32)
// CHECK-NEXT: %[[THREADS4:.*]] = llvm.mlir.constant(256 : i32)
// CHECK-NEXT: nvvm.barrier id = %[[B1]] number_of_threads = %[[THREADS4]]
// CHECK: llvm.return
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.shared_bytes = 0 : i64, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @turns() attributes {tile.kernel} {
    tilegpu.pass_turn {initial, warpgroups = 2 : i32}
    tilegpu.wait_turn {warpgroups = 2 : i32}
    tilegpu.pass_turn {warpgroups = 2 : i32}
    tilegpu.wait_turn {final, warpgroups = 2 : i32}
    return
  }
}
