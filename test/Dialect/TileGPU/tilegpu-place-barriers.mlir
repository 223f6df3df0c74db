// RUN: tile-opt %s -split-input-file -tilegpu-allocate-shared-memory -tilegpu-place-barriers | FileCheck %s

// A local_alloc stores its tile and then waits at a barrier. It waits at
// one *before* the store (tilegpu.leading_barrier = true) only where an
// earlier access to the memory it was placed at may not be ordered by a
// barrier yet: walking back from the store, on every path (loop back edges
// too), a barrier (an async_wait, or the one ending another store) must
// come before any such access. The buffers here are 512 bytes; %p and %ds
// share offset 0, as the backward's P^T and dS^T do.

// In the loop: async_wait's barrier orders the last iteration's reads of
// offset 0 before %p's store, which needs no barrier of its own; %ds
// reuses the memory %p was just read from, so it waits first.
// CHECK-LABEL: func.func @exchange
// CHECK: scf.for
// CHECK-NEXT: tilegpu.async_wait
// CHECK-NEXT: tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = 0 : i64, tilegpu.leading_barrier = false}
// CHECK: tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = 0 : i64, tilegpu.leading_barrier = true}
#b = #tilegpu.blocked<sizePerThread = [1, 2], threadsPerWarp = [16, 2], warpsPerCTA = [1, 1], order = [1, 0]>
#s = #tilegpu.shared<vec = 8, perPhase = 8, maxPhase = 1, order = [1, 0]>
#l = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
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
      %p = tilegpu.local_alloc %x : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
      %pl = tilegpu.local_load %p [0, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<32x8xf16, #l>
      tile.store_block %obp, %pl : !tile.block_ptr<tensor<32x8xf16, #l>>
      %ds = tilegpu.local_alloc %x : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
      %dsl = tilegpu.local_load %ds [0, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<32x8xf16, #l>
      tile.store_block %obp, %dsl : !tile.block_ptr<tensor<32x8xf16, #l>>
    }
    return
  }
}

// -----

// Without the async_wait, the back edge leads from %p's store to the last
// iteration's read of it: the barrier stays.
// CHECK-LABEL: func.func @back_edge
// CHECK: scf.for
// CHECK-NEXT: tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = 0 : i64, tilegpu.leading_barrier = true}
#b = #tilegpu.blocked<sizePerThread = [1, 2], threadsPerWarp = [16, 2], warpsPerCTA = [1, 1], order = [1, 0]>
#s = #tilegpu.shared<vec = 8, perPhase = 8, maxPhase = 1, order = [1, 0]>
#l = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @back_edge(%xp: !tile.ptr<f16>, %op: !tile.ptr<f16>, %n: i32) attributes {tile.kernel} {
    %z = arith.constant 0 : i32
    %one = arith.constant 1 : i64
    %c8 = arith.constant 8 : i64
    %c32 = arith.constant 32 : i64
    %xbp = tile.make_block_ptr %xp, [%c32, %c8], [%c8, %one], [%z, %z] order [1, 0] : !tile.block_ptr<tensor<32x8xf16, #b>>
    %x = tile.load_block %xbp : !tile.block_ptr<tensor<32x8xf16, #b>>
    %obp = tile.make_block_ptr %op, [%c32, %c8], [%c8, %one], [%z, %z] order [1, 0] : !tile.block_ptr<tensor<32x8xf16, #l>>
    %c1 = arith.constant 1 : i32
    scf.for %i = %z to %n step %c1 : i32 {
      %p = tilegpu.local_alloc %x : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
      %pl = tilegpu.local_load %p [0, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<32x8xf16, #l>
      tile.store_block %obp, %pl : !tile.block_ptr<tensor<32x8xf16, #l>>
    }
    return
  }
}

// -----

// Nested regions. %a (offset 0) has nothing before it; %in (512) meets
// the last iteration's read of itself on the back edge. After the loop %a
// is dead and %e reuses offset 0: a loop may run no iteration, so the store
// barrier in it does not count, and %a's read in it does; %e waits. In the
// scf.if, %e is read for the last time before %f is made, so %f reuses
// offset 0 and waits for that read. %d (0 again) meets the scf.if, which
// reads %f: it waits.
// CHECK-LABEL: func.func @nested
// CHECK: tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = 0 : i64, tilegpu.leading_barrier = false}
// CHECK: scf.for
// CHECK: tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = 512 : i64, tilegpu.leading_barrier = true}
// CHECK: tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = 0 : i64, tilegpu.leading_barrier = true}
// CHECK: scf.if
// CHECK: tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = 0 : i64, tilegpu.leading_barrier = true}
// CHECK: tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = 0 : i64, tilegpu.leading_barrier = true}
#b = #tilegpu.blocked<sizePerThread = [1, 2], threadsPerWarp = [16, 2], warpsPerCTA = [1, 1], order = [1, 0]>
#s = #tilegpu.shared<vec = 8, perPhase = 8, maxPhase = 1, order = [1, 0]>
#l = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @nested(%xp: !tile.ptr<f16>, %op: !tile.ptr<f16>, %n: i32, %go: i1) attributes {tile.kernel} {
    %z = arith.constant 0 : i32
    %one = arith.constant 1 : i64
    %c8 = arith.constant 8 : i64
    %c32 = arith.constant 32 : i64
    %xbp = tile.make_block_ptr %xp, [%c32, %c8], [%c8, %one], [%z, %z] order [1, 0] : !tile.block_ptr<tensor<32x8xf16, #b>>
    %x = tile.load_block %xbp : !tile.block_ptr<tensor<32x8xf16, #b>>
    %obp = tile.make_block_ptr %op, [%c32, %c8], [%c8, %one], [%z, %z] order [1, 0] : !tile.block_ptr<tensor<32x8xf16, #l>>
    %c1 = arith.constant 1 : i32
    %a = tilegpu.local_alloc %x : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
    scf.for %i = %z to %n step %c1 : i32 {
      %in = tilegpu.local_alloc %x : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
      %al = tilegpu.local_load %a [0, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<32x8xf16, #l>
      %il = tilegpu.local_load %in [0, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<32x8xf16, #l>
      tile.store_block %obp, %al : !tile.block_ptr<tensor<32x8xf16, #l>>
      tile.store_block %obp, %il : !tile.block_ptr<tensor<32x8xf16, #l>>
    }
    %e = tilegpu.local_alloc %x : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
    scf.if %go {
      %el = tilegpu.local_load %e [0, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<32x8xf16, #l>
      tile.store_block %obp, %el : !tile.block_ptr<tensor<32x8xf16, #l>>
      %f = tilegpu.local_alloc %x : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
      %fl = tilegpu.local_load %f [0, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<32x8xf16, #l>
      tile.store_block %obp, %fl : !tile.block_ptr<tensor<32x8xf16, #l>>
    }
    %d = tilegpu.local_alloc %x : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
    %dl = tilegpu.local_load %d [0, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<32x8xf16, #l>
    tile.store_block %obp, %dl : !tile.block_ptr<tensor<32x8xf16, #l>>
    return
  }
}

// -----

// Memory an asynchronous copy writes keeps its barrier, even behind an
// async_wait: a copy of a later group may still be in flight. %p reuses
// offset 0, which the copy into %staged wrote, and waits; %q, at 512 where
// no copy writes, follows %p's barrier and does not. A buffer the copies
// fill (no source) stores nothing and gets no decision.
// CHECK-LABEL: func.func @copied
// CHECK: tilegpu.local_alloc {tilegpu.allocation_offset = 0 : i64} :
// CHECK: tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = 0 : i64, tilegpu.leading_barrier = true}
// CHECK: tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = 512 : i64, tilegpu.leading_barrier = false}
#b = #tilegpu.blocked<sizePerThread = [1, 2], threadsPerWarp = [16, 2], warpsPerCTA = [1, 1], order = [1, 0]>
#s = #tilegpu.shared<vec = 8, perPhase = 8, maxPhase = 1, order = [1, 0]>
#l = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @copied(%src: !tile.block_ptr<tensor<32x8xf16, #b>>, %x: tensor<32x8xf16, #b>) -> (tensor<32x8xf16, #l>, tensor<32x8xf16, #l>, tensor<32x8xf16, #l>) {
    %staged = tilegpu.local_alloc : !tilegpu.memdesc<32x8xf16, #s>
    tilegpu.async_copy_block %src, %staged : !tile.block_ptr<tensor<32x8xf16, #b>>, !tilegpu.memdesc<32x8xf16, #s>
    tilegpu.async_commit_group
    tilegpu.async_wait {pending = 0 : i32}
    %sl = tilegpu.local_load %staged [0, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<32x8xf16, #l>
    tilegpu.async_wait {pending = 0 : i32}
    %p = tilegpu.local_alloc %x : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
    %q = tilegpu.local_alloc %x : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
    %pl = tilegpu.local_load %p [0, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<32x8xf16, #l>
    %ql = tilegpu.local_load %q [0, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<32x8xf16, #l>
    return %sl, %pl, %ql : tensor<32x8xf16, #l>, tensor<32x8xf16, #l>, tensor<32x8xf16, #l>
  }
}

// -----

// A conversion's scratch is an access too: its reads follow its last
// barrier. %p reuses the memory the conversion just exchanged values
// through, and waits.
// CHECK-LABEL: func.func @after_a_conversion
// CHECK: tilegpu.convert_layout %{{.*}} {tilegpu.allocation_offset = 0 : i64}
// CHECK: tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = 0 : i64, tilegpu.leading_barrier = true}
#b = #tilegpu.blocked<sizePerThread = [1, 2], threadsPerWarp = [16, 2], warpsPerCTA = [1, 1], order = [1, 0]>
#s = #tilegpu.shared<vec = 8, perPhase = 8, maxPhase = 1, order = [1, 0]>
#l = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @after_a_conversion(%x: tensor<32x8xf16, #b>) -> (tensor<32x8xf16, #l>, tensor<32x8xf16, #l>) {
    %c = tilegpu.convert_layout %x : tensor<32x8xf16, #b> -> tensor<32x8xf16, #l>
    %p = tilegpu.local_alloc %x : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
    %pl = tilegpu.local_load %p [0, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<32x8xf16, #l>
    return %c, %pl : tensor<32x8xf16, #l>, tensor<32x8xf16, #l>
  }
}

// -----

// An asynchronous product reads its buffer until a warpgroup_dot_wait, so a
// barrier between the two does not order those reads: the next iteration's
// store into the buffer waits first.
// CHECK-LABEL: func.func @async_reader
// CHECK: scf.for
// CHECK-NEXT: tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = 0 : i64, tilegpu.leading_barrier = true}
#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#mma = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
#n = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @async_reader(%x: tensor<64x64xf16, #b>, %n: i32) {
    %z = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
    %r = scf.for %i = %z to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32, #mma>) : i32 {
      %k = tilegpu.local_alloc %x : tensor<64x64xf16, #b> -> !tilegpu.memdesc<64x64xf16, #n>
      %s = tilegpu.warpgroup_dot %k, %k, %acc {is_async} : !tilegpu.memdesc<64x64xf16, #n>, !tilegpu.memdesc<64x64xf16, #n>, tensor<64x64xf32, #mma> -> tensor<64x64xf32, #mma>
      tilegpu.barrier
      %done = tilegpu.warpgroup_dot_wait %s {pendings = 0 : i32} : tensor<64x64xf32, #mma>
      scf.yield %done : tensor<64x64xf32, #mma>
    }
    return
  }
}

// -----

// wgmma reads shared memory through the asynchronous proxy: a product
// fences the generic proxy first (tilegpu.proxy_fence = true) only where a
// generic write to its operands' memory may come after the last fence every
// thread executes. Operands the TMA alone writes need none, in the loop or
// across its back edge (init_barriers fences before its mbarriers are set
// up, and they are placed apart from the operands).
// CHECK-LABEL: func.func @tma_operands
// CHECK: scf.for
// CHECK: tilegpu.warpgroup_dot {{.*}}tilegpu.proxy_fence = false
#bar = #tilegpu.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]>
#nvmma = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#kmajor = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [0, 1]>
#blocked = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#acc = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>, tilegpu.tensormaps = [{base = "K", box = [64, 64], dims = ["64", "N"], strides = ["stride_n"], swizzle = 128 : i64}]} {
  func.func @tma_operands(%p: !tile.block_ptr<tensor<64x64xf16, #blocked>>, %desc: !tilegpu.tensormap, %acc: tensor<64x64xf32, #acc>, %n: i32) -> tensor<64x64xf32, #acc> {
    %z = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %bars = tilegpu.local_alloc : !tilegpu.memdesc<1x1x1xi64, #bar>
    %a = tilegpu.local_alloc : !tilegpu.memdesc<64x64xf16, #nvmma>
    %b = tilegpu.local_alloc : !tilegpu.memdesc<64x64xf16, #kmajor>
    tilegpu.init_barriers %bars arrivals [1] : !tilegpu.memdesc<1x1x1xi64, #bar>
    %bar = tilegpu.memdesc_index %bars[%z] : !tilegpu.memdesc<1x1x1xi64, #bar> -> !tilegpu.memdesc<1x1xi64, #bar>
    %r = scf.for %i = %z to %n step %c1 iter_args(%c = %acc) -> (tensor<64x64xf32, #acc>) : i32 {
      tilegpu.async_tma_copy_block %p, %desc[], %a, %bar : !tile.block_ptr<tensor<64x64xf16, #blocked>>, !tilegpu.memdesc<64x64xf16, #nvmma>, !tilegpu.memdesc<1x1xi64, #bar>
      tilegpu.wait_barrier %bar, %i : !tilegpu.memdesc<1x1xi64, #bar>
      %d = tilegpu.warpgroup_dot %a, %b, %c : !tilegpu.memdesc<64x64xf16, #nvmma>, !tilegpu.memdesc<64x64xf16, #kmajor>, tensor<64x64xf32, #acc> -> tensor<64x64xf32, #acc>
      scf.yield %d : tensor<64x64xf32, #acc>
    }
    tilegpu.inval_barriers %bars : !tilegpu.memdesc<1x1x1xi64, #bar>
    return %r : tensor<64x64xf32, #acc>
  }
}

// -----

// An operand the threads stored: the first product after the store fences,
// the second counts on the first's fence. In the loop the store comes round
// again on the back edge, so the product fences every iteration.
// CHECK-LABEL: func.func @stored_operand
// CHECK: tilegpu.warpgroup_dot {{.*}}tilegpu.proxy_fence = true
// CHECK: tilegpu.warpgroup_dot {{.*}}tilegpu.proxy_fence = false
// CHECK: scf.for
// CHECK: tilegpu.local_alloc
// CHECK: tilegpu.warpgroup_dot {{.*}}tilegpu.proxy_fence = true
#nvmma = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#kmajor = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [0, 1]>
#blocked = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#acc = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @stored_operand(%x: tensor<64x64xf16, #blocked>, %acc: tensor<64x64xf32, #acc>, %n: i32) -> tensor<64x64xf32, #acc> {
    %z = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %b = tilegpu.local_alloc : !tilegpu.memdesc<64x64xf16, #kmajor>
    %a = tilegpu.local_alloc %x : tensor<64x64xf16, #blocked> -> !tilegpu.memdesc<64x64xf16, #nvmma>
    %d0 = tilegpu.warpgroup_dot %a, %b, %acc : !tilegpu.memdesc<64x64xf16, #nvmma>, !tilegpu.memdesc<64x64xf16, #kmajor>, tensor<64x64xf32, #acc> -> tensor<64x64xf32, #acc>
    %d1 = tilegpu.warpgroup_dot %a, %b, %d0 : !tilegpu.memdesc<64x64xf16, #nvmma>, !tilegpu.memdesc<64x64xf16, #kmajor>, tensor<64x64xf32, #acc> -> tensor<64x64xf32, #acc>
    %r = scf.for %i = %z to %n step %c1 iter_args(%c = %d1) -> (tensor<64x64xf32, #acc>) : i32 {
      %s = tilegpu.local_alloc %x : tensor<64x64xf16, #blocked> -> !tilegpu.memdesc<64x64xf16, #nvmma>
      %d = tilegpu.warpgroup_dot %s, %b, %c : !tilegpu.memdesc<64x64xf16, #nvmma>, !tilegpu.memdesc<64x64xf16, #kmajor>, tensor<64x64xf32, #acc> -> tensor<64x64xf32, #acc>
      scf.yield %d : tensor<64x64xf32, #acc>
    }
    return %r : tensor<64x64xf32, #acc>
  }
}

// -----

// Two warpgroups, each storing the 64 rows of P it owns (a wgmma
// accumulator over warps [8, 1]) and reading them back as operand A of its
// own P V, through the loop-carried buffer too: no warpgroup touches
// another's rows, so the store's barriers need order only its own
// (tilegpu.warpgroup_barriers). The store in the loop keeps its leading
// barrier: the last iteration's product read the buffer.
// CHECK-LABEL: func.func @rows_by_warpgroup
// CHECK: tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = {{.*}}, tilegpu.leading_barrier = false, tilegpu.warpgroup_barriers = true}
// CHECK: scf.for
// CHECK: tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = {{.*}}, tilegpu.leading_barrier = true, tilegpu.warpgroup_barriers = true}
#mma = #tilegpu.mma<version = 3, warpsPerCTA = [8, 1], instrShape = [64, 64]>
#n = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @rows_by_warpgroup(%s: tensor<128x64xf16, #mma>, %v: !tilegpu.memdesc<64x64xf16, #n>, %n: i32) -> tensor<128x64xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<128x64xf32, #mma>
    %p0 = tilegpu.local_alloc %s : tensor<128x64xf16, #mma> -> !tilegpu.memdesc<128x64xf16, #n>
    %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %p = %p0) -> (tensor<128x64xf32, #mma>, !tilegpu.memdesc<128x64xf16, #n>) : i32 {
      %o = tilegpu.warpgroup_dot %p, %v, %acc : !tilegpu.memdesc<128x64xf16, #n>, !tilegpu.memdesc<64x64xf16, #n>, tensor<128x64xf32, #mma> -> tensor<128x64xf32, #mma>
      %pn = tilegpu.local_alloc %s : tensor<128x64xf16, #mma> -> !tilegpu.memdesc<128x64xf16, #n>
      scf.yield %o, %pn : tensor<128x64xf32, #mma>, !tilegpu.memdesc<128x64xf16, #n>
    }
    return %r#0 : tensor<128x64xf32, #mma>
  }
}

// -----

// Read transposed (as dK's product reads dS^T), a row of the buffer is
// read by every warpgroup: the store's barriers order the whole program.
// CHECK-LABEL: func.func @read_transposed
// CHECK: tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = {{.*}}, tilegpu.leading_barrier = false}
#mma = #tilegpu.mma<version = 3, warpsPerCTA = [8, 1], instrShape = [64, 64]>
#n = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#nt = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [0, 1]>
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @read_transposed(%s: tensor<128x128xf16, #mma>, %v: !tilegpu.memdesc<128x64xf16, #n>) -> tensor<128x64xf32, #mma> {
    %zero = arith.constant dense<0.0> : tensor<128x64xf32, #mma>
    %p = tilegpu.local_alloc %s : tensor<128x128xf16, #mma> -> !tilegpu.memdesc<128x128xf16, #n>
    %pt = tilegpu.memdesc_trans %p {order = array<i32: 1, 0>} : !tilegpu.memdesc<128x128xf16, #n> -> !tilegpu.memdesc<128x128xf16, #nt>
    %o = tilegpu.warpgroup_dot %pt, %v, %zero : !tilegpu.memdesc<128x128xf16, #nt>, !tilegpu.memdesc<128x64xf16, #n>, tensor<128x64xf32, #mma> -> tensor<128x64xf32, #mma>
    return %o : tensor<128x64xf32, #mma>
  }
}

// -----

// Warpgroups side by side along the columns ([4, 2]) share rows.
// CHECK-LABEL: func.func @warpgroups_share_rows
// CHECK: tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = {{.*}}, tilegpu.leading_barrier = false}
#mma = #tilegpu.mma<version = 3, warpsPerCTA = [4, 2], instrShape = [64, 32]>
#n = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @warpgroups_share_rows(%s: tensor<64x64xf16, #mma>, %v: !tilegpu.memdesc<64x64xf16, #n>) -> tensor<64x64xf32, #mma> {
    %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
    %p = tilegpu.local_alloc %s : tensor<64x64xf16, #mma> -> !tilegpu.memdesc<64x64xf16, #n>
    %o = tilegpu.warpgroup_dot %p, %v, %zero : !tilegpu.memdesc<64x64xf16, #n>, !tilegpu.memdesc<64x64xf16, #n>, tensor<64x64xf32, #mma> -> tensor<64x64xf32, #mma>
    return %o : tensor<64x64xf32, #mma>
  }
}

// -----

// P's rows are by warpgroup, but its memory held a tile every warp read
// before: the barrier before P's store must order the whole program.
// CHECK-LABEL: func.func @memory_shared_with_another_tile
// CHECK: tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = 0 : i64, tilegpu.leading_barrier = false}
// CHECK: tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = 0 : i64, tilegpu.leading_barrier = true}
#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [8, 1], order = [1, 0]>
#l = #tilegpu.blocked<sizePerThread = [8, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 8], order = [0, 1]>
#mma = #tilegpu.mma<version = 3, warpsPerCTA = [8, 1], instrShape = [64, 64]>
#n = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @memory_shared_with_another_tile(%x: tensor<128x64xf16, #b>, %s: tensor<128x64xf16, #mma>, %v: !tilegpu.memdesc<64x64xf16, #n>) -> (tensor<128x64xf16, #l>, tensor<128x64xf32, #mma>) {
    %zero = arith.constant dense<0.0> : tensor<128x64xf32, #mma>
    %a = tilegpu.local_alloc %x : tensor<128x64xf16, #b> -> !tilegpu.memdesc<128x64xf16, #n>
    %t = tilegpu.local_load %a [0, 0] : !tilegpu.memdesc<128x64xf16, #n> -> tensor<128x64xf16, #l>
    %p = tilegpu.local_alloc %s : tensor<128x64xf16, #mma> -> !tilegpu.memdesc<128x64xf16, #n>
    %o = tilegpu.warpgroup_dot %p, %v, %zero : !tilegpu.memdesc<128x64xf16, #n>, !tilegpu.memdesc<64x64xf16, #n>, tensor<128x64xf32, #mma> -> tensor<128x64xf32, #mma>
    return %t, %o : tensor<128x64xf16, #l>, tensor<128x64xf32, #mma>
  }
}
