// RUN: tile-opt %s -convert-tilegpu-to-llvm | FileCheck %s

// The lowering follows the decisions of the passes before it, here written
// by hand: a local_alloc stores its tile at its tilegpu.allocation_offset,
// then waits at a barrier; it waits at one before the store too where
// tilegpu.leading_barrier is true. (tilegpu-place-barriers makes these
// decisions for this kernel: test/Dialect/TileGPU/tilegpu-place-barriers.mlir,
// @exchange.) In the loop, async_wait's barrier comes first; %p's store
// follows it directly, %ds's waits at its own.
#b = #tilegpu.blocked<sizePerThread = [1, 2], threadsPerWarp = [16, 2], warpsPerCTA = [1, 1], order = [1, 0]>
#s = #tilegpu.shared<vec = 8, perPhase = 8, maxPhase = 1, order = [1, 0]>
#l = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]>
// CHECK-LABEL: llvm.func @exchange
// CHECK: scf.for
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.barrier0
// CHECK-NOT: nvvm.barrier0
// CHECK-COUNT-4: llvm.intr.masked.store {{.*}} into !llvm.ptr<3>
// CHECK-NEXT: nvvm.barrier0
// CHECK-NOT: nvvm.barrier0
// CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> f16
// CHECK-NOT: into !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK-NOT: nvvm.barrier0
// CHECK-COUNT-4: llvm.intr.masked.store {{.*}} into !llvm.ptr<3>
// CHECK-NEXT: nvvm.barrier0
// CHECK-NOT: nvvm.barrier0
// CHECK: llvm.return
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.shared_bytes = 512 : i64, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @exchange(%xp: !tile.ptr<f16>, %op: !tile.ptr<f16>, %n: i32) attributes {tile.kernel} {
    %z = arith.constant 0 : i32
    %one = arith.constant 1 : i64
    %c8 = arith.constant 8 : i64
    %c32 = arith.constant 32 : i64
    %xbp = tile.make_block_ptr %xp, [%c32, %c8], [%c8, %one], [%z, %z] order [1, 0] : !tile.block_ptr<tensor<32x8xf16, #b>>
    %x = tile.load_block %xbp : !tile.block_ptr<tensor<32x8xf16, #b>>
    %obp = tile.make_block_ptr %op, [%c32, %c8], [%c8, %one], [%z, %z] order [1, 0] : !tile.block_ptr<tensor<32x8xf16, #l>>
    %c1 = arith.constant 1 : i32
    scf.for %i = %z to %n step %c1 : i32 {
      tilegpu.async_wait {pending = 0 : i32}
      %p = tilegpu.local_alloc %x {tilegpu.allocation_offset = 0 : i64, tilegpu.leading_barrier = false} : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
      %pl = tilegpu.local_load %p [0, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<32x8xf16, #l>
      tile.store_block %obp, %pl : !tile.block_ptr<tensor<32x8xf16, #l>>
      %ds = tilegpu.local_alloc %x {tilegpu.allocation_offset = 0 : i64, tilegpu.leading_barrier = true} : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
      %dsl = tilegpu.local_load %ds [0, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<32x8xf16, #l>
      tile.store_block %obp, %dsl : !tile.block_ptr<tensor<32x8xf16, #l>>
    }
    return
  }
}
