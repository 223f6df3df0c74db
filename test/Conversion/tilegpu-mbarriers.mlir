// RUN: tile-opt %s -convert-tilegpu-to-llvm | FileCheck %s

// One init_barriers sets up every stack between two barriers: a proxy fence
// and a barrier, thread 0's inits (each stack's arrival count) and one
// fence of them, a barrier. inval_barriers likewise ends them after one
// barrier: here the same one, with nothing between (two program barriers
// in a row are one).
#bar = #tilegpu.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]>
// CHECK-LABEL: llvm.func @stacks
// CHECK: nvvm.fence.proxy
// CHECK-NEXT: nvvm.barrier0
// CHECK-NOT: nvvm.barrier0
// CHECK: scf.if
// CHECK: %[[ONE:.*]] = llvm.mlir.constant(1 : i32)
// CHECK-NEXT: nvvm.mbarrier.init %{{.*}}, %[[ONE]]
// CHECK: %[[ONE2:.*]] = llvm.mlir.constant(1 : i32)
// CHECK-NEXT: nvvm.mbarrier.init %{{.*}}, %[[ONE2]]
// CHECK: %[[ALL:.*]] = llvm.mlir.constant(128 : i32)
// CHECK-NEXT: nvvm.mbarrier.init %{{.*}}, %[[ALL]]
// CHECK-NOT: nvvm.barrier0
// CHECK: nvvm.fence.mbarrier.init
// CHECK-NOT: nvvm.fence.mbarrier.init
// CHECK: nvvm.barrier0
// CHECK-NOT: nvvm.barrier0
// CHECK-COUNT-3: nvvm.mbarrier.inval
// CHECK-NOT: nvvm.barrier0
// CHECK: llvm.return
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.shared_bytes = 256 : i64, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @stacks() attributes {tile.kernel} {
    %full = tilegpu.local_alloc {tilegpu.allocation_offset = 0 : i64} : !tilegpu.memdesc<2x1x1xi64, #bar>
    %empty = tilegpu.local_alloc {tilegpu.allocation_offset = 128 : i64} : !tilegpu.memdesc<1x1x1xi64, #bar>
    tilegpu.init_barriers %full, %empty arrivals [1, 128] : !tilegpu.memdesc<2x1x1xi64, #bar>, !tilegpu.memdesc<1x1x1xi64, #bar>
    tilegpu.inval_barriers %full, %empty : !tilegpu.memdesc<2x1x1xi64, #bar>, !tilegpu.memdesc<1x1x1xi64, #bar>
    return
  }
}
