// RUN: tile-opt %s -split-input-file -tilegpu-allocate-shared-memory | FileCheck %s
// Run again, the pass places the same memory: no offset outlives its op.
// RUN: tile-opt %s -split-input-file -tilegpu-allocate-shared-memory -tilegpu-allocate-shared-memory | FileCheck %s

// Each buffer lives from its local_alloc to its last read. %a and %b are
// read after both are stored: 512 bytes each, side by side. %c comes after
// both reads and reuses %a's memory. The module records the total.
#b = #tilegpu.blocked<sizePerThread = [1, 2], threadsPerWarp = [16, 2], warpsPerCTA = [1, 1], order = [1, 0]>
#s = #tilegpu.shared<vec = 8, perPhase = 8, maxPhase = 1, order = [1, 0]>
#l = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]>
// CHECK-LABEL: module attributes {tilegpu.num_warps = 1 : i32, tilegpu.shared_bytes = 1024 : i64
// CHECK-LABEL: func.func @lifetimes
// CHECK: tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = 0 : i64}
// CHECK: tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = 512 : i64}
// CHECK: tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = 0 : i64}
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @lifetimes(%x: tensor<32x8xf16, #b>) -> (tensor<32x8xf16, #l>, tensor<32x8xf16, #l>, tensor<32x8xf16, #l>) {
    %a = tilegpu.local_alloc %x : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
    %b = tilegpu.local_alloc %x : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
    %al = tilegpu.local_load %a [0, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<32x8xf16, #l>
    %bl = tilegpu.local_load %b [0, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<32x8xf16, #l>
    %c = tilegpu.local_alloc %x : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
    %cl = tilegpu.local_load %c [0, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<32x8xf16, #l>
    return %al, %bl, %cl : tensor<32x8xf16, #l>, tensor<32x8xf16, #l>, tensor<32x8xf16, #l>
  }
}

// -----

// A buffer read in a loop lives through the whole loop: %small (64 bytes)
// keeps its place while %in, stored each iteration, goes at the next
// 128-byte boundary. After the loop %after reuses offset 0; it is read
// through a transposed view after %late is stored, so %late does not reuse
// it.
#b = #tilegpu.blocked<sizePerThread = [1, 2], threadsPerWarp = [16, 2], warpsPerCTA = [1, 1], order = [1, 0]>
#s = #tilegpu.shared<vec = 8, perPhase = 8, maxPhase = 1, order = [1, 0]>
#st = #tilegpu.shared<vec = 8, perPhase = 8, maxPhase = 1, order = [0, 1]>
#l = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]>
// CHECK-LABEL: module attributes {tilegpu.num_warps = 1 : i32, tilegpu.shared_bytes = 1024 : i64
// CHECK-LABEL: func.func @loop
// CHECK: %[[SMALL:.*]] = tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = 0 : i64} : tensor<4x8xf16
// CHECK: scf.for
// CHECK:   tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = 128 : i64}
// CHECK:   tilegpu.local_load %[[SMALL]]
// CHECK: tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = 0 : i64}
// CHECK: tilegpu.memdesc_trans
// CHECK: tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = 512 : i64}
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @loop(%x: tensor<32x8xf16, #b>, %y: tensor<4x8xf16, #l>, %n: i32, %out: !tile.block_ptr<tensor<4x8xf16, #l>>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %small = tilegpu.local_alloc %y : tensor<4x8xf16, #l> -> !tilegpu.memdesc<4x8xf16, #s>
    scf.for %i = %c0 to %n step %c1 : i32 {
      %in = tilegpu.local_alloc %x : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
      %sl = tilegpu.local_load %small [0, 0] : !tilegpu.memdesc<4x8xf16, #s> -> tensor<4x8xf16, #l>
      %il = tilegpu.local_load %in [0, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<4x8xf16, #l>
      tile.store_block %out, %sl : !tile.block_ptr<tensor<4x8xf16, #l>>
      tile.store_block %out, %il : !tile.block_ptr<tensor<4x8xf16, #l>>
    }
    %after = tilegpu.local_alloc %x : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
    %t = tilegpu.memdesc_trans %after : !tilegpu.memdesc<32x8xf16, #s> -> !tilegpu.memdesc<8x32xf16, #st>
    %late = tilegpu.local_alloc %x : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
    %tl = tilegpu.local_load %t [0, 0] : !tilegpu.memdesc<8x32xf16, #st> -> tensor<4x8xf16, #l>
    %ll = tilegpu.local_load %late [0, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<4x8xf16, #l>
    tile.store_block %out, %tl : !tile.block_ptr<tensor<4x8xf16, #l>>
    tile.store_block %out, %ll : !tile.block_ptr<tensor<4x8xf16, #l>>
    return
  }
}

// -----

// Scratch lives for its op alone, so every op here starts at 0. A
// conversion that moves elements between threads takes a row-major copy of
// the tile (64 x 8 x 4 bytes); one that keeps them in place (an mma result
// as the next dot's A operand) takes none. A
// reduction across the 4 warps takes a partial per warp and result (8 x 4 x
// 4 bytes, and 4 x 4 for the 1-D sum); one within a warp takes none, and
// so does "does any hold" over booleans, which is one bar.red.
#b = #tilegpu.blocked<sizePerThread = [1, 2], threadsPerWarp = [16, 2], warpsPerCTA = [4, 1], order = [1, 0]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
#a = #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
#l = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#r = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
#cols = #tilegpu.slice<dim = 0, parent = #b>
#rows = #tilegpu.slice<dim = 1, parent = #b>
// CHECK-LABEL: module attributes {tilegpu.num_warps = 4 : i32, tilegpu.shared_bytes = 2048 : i64
// CHECK-LABEL: func.func @scratch
// CHECK: tilegpu.convert_layout %{{.*}} {tilegpu.allocation_offset = 0 : i64}
// CHECK: tilegpu.convert_layout %{{[^{]*}} : tensor<64x16xf16
// CHECK: tile.reduce sum %{{.*}} axis 0 {tilegpu.allocation_offset = 0 : i64}
// CHECK: tile.reduce sum %{{.*}} axis 1 : tensor<64x8xf32
// CHECK: tile.reduce sum %{{.*}} axis 0 {tilegpu.allocation_offset = 0 : i64} : tensor<128xi32
// CHECK: tile.reduce max %{{.*}} axis 0 : tensor<128xi32
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @scratch(%x: tensor<64x8xf32, #b>, %p: tensor<64x16xf16, #mma>, %v: tensor<128xi32, #r>, %f: tensor<128xi1, #r>) -> (tensor<64x8xf32, #l>, tensor<64x16xf16, #a>, tensor<8xf32, #cols>, tensor<64xf32, #rows>, i32, i32) {
    %moved = tilegpu.convert_layout %x : tensor<64x8xf32, #b> -> tensor<64x8xf32, #l>
    %same = tilegpu.convert_layout %p : tensor<64x16xf16, #mma> -> tensor<64x16xf16, #a>
    %down = tile.reduce sum %x axis 0 : tensor<64x8xf32, #b> -> tensor<8xf32, #cols>
    %across = tile.reduce sum %x axis 1 : tensor<64x8xf32, #b> -> tensor<64xf32, #rows>
    %sum = tile.reduce sum %v axis 0 : tensor<128xi32, #r> -> i32
    %wide = arith.extui %f : tensor<128xi1, #r> to tensor<128xi32, #r>
    %any = tile.reduce max %wide axis 0 : tensor<128xi32, #r> -> i32
    return %moved, %same, %down, %across, %sum, %any : tensor<64x8xf32, #l>, tensor<64x16xf16, #a>, tensor<8xf32, #cols>, tensor<64xf32, #rows>, i32, i32
  }
}

// -----

// Two functions never run together: each places its buffers from 0, and
// the module needs the larger.
#b = #tilegpu.blocked<sizePerThread = [1, 2], threadsPerWarp = [16, 2], warpsPerCTA = [1, 1], order = [1, 0]>
#s = #tilegpu.shared<vec = 8, perPhase = 8, maxPhase = 1, order = [1, 0]>
#l = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]>
// CHECK-LABEL: module attributes {tilegpu.num_warps = 1 : i32, tilegpu.shared_bytes = 1024 : i64
// CHECK-LABEL: func.func @one
// CHECK: tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = 0 : i64}
// CHECK-LABEL: func.func @two
// CHECK: tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = 0 : i64}
// CHECK: tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = 512 : i64}
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @one(%x: tensor<32x8xf16, #b>) -> tensor<32x8xf16, #l> {
    %a = tilegpu.local_alloc %x : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
    %al = tilegpu.local_load %a [0, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<32x8xf16, #l>
    return %al : tensor<32x8xf16, #l>
  }
  func.func @two(%x: tensor<32x8xf16, #b>) -> (tensor<32x8xf16, #l>, tensor<32x8xf16, #l>) {
    %a = tilegpu.local_alloc %x : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
    %b = tilegpu.local_alloc %x : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
    %al = tilegpu.local_load %a [0, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<32x8xf16, #l>
    %bl = tilegpu.local_load %b [0, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<32x8xf16, #l>
    return %al, %bl : tensor<32x8xf16, #l>, tensor<32x8xf16, #l>
  }
}

// -----

// A kernel without buffers or scratch still records its total: 0.
// CHECK-LABEL: module attributes {tilegpu.num_warps = 4 : i32, tilegpu.shared_bytes = 0 : i64
// CHECK-LABEL: func.func @none
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @none(%x: i32) -> i32 {
    return %x : i32
  }
}

// -----

// A buffer lives along the paths that reach its uses: %ring, read in both
// branches, is dead in the first branch after its read there (the second
// branch's read is not on that path), so %then reuses offset 0; in the
// second branch %else is stored before %ring's read there and does not.
#b = #tilegpu.blocked<sizePerThread = [1, 2], threadsPerWarp = [16, 2], warpsPerCTA = [1, 1], order = [1, 0]>
#s = #tilegpu.shared<vec = 8, perPhase = 8, maxPhase = 1, order = [1, 0]>
#l = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]>
// CHECK-LABEL: module attributes {tilegpu.num_warps = 1 : i32, tilegpu.shared_bytes = 1024 : i64
// CHECK-LABEL: func.func @branches
// CHECK: tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = 0 : i64}
// CHECK: scf.if
// CHECK: tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = 0 : i64}
// CHECK: } else {
// CHECK: tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = 512 : i64}
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @branches(%x: tensor<32x8xf16, #b>, %c: i1) -> (tensor<32x8xf16, #l>, tensor<32x8xf16, #l>) {
    %ring = tilegpu.local_alloc %x : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
    %r:2 = scf.if %c -> (tensor<32x8xf16, #l>, tensor<32x8xf16, #l>) {
      %rl = tilegpu.local_load %ring [0, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<32x8xf16, #l>
      %then = tilegpu.local_alloc %x : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
      %tl = tilegpu.local_load %then [0, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<32x8xf16, #l>
      scf.yield %rl, %tl : tensor<32x8xf16, #l>, tensor<32x8xf16, #l>
    } else {
      %else = tilegpu.local_alloc %x : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
      %rl = tilegpu.local_load %ring [0, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<32x8xf16, #l>
      %el = tilegpu.local_load %else [0, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<32x8xf16, #l>
      scf.yield %rl, %el : tensor<32x8xf16, #l>, tensor<32x8xf16, #l>
    }
    return %r#0, %r#1 : tensor<32x8xf16, #l>, tensor<32x8xf16, #l>
  }
}

// -----

// An asynchronous product reads its buffers until the wait on it: %late,
// stored before that wait, does not reuse %b's memory; %after, stored after
// it, does.
#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#mma = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
#n = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#nt = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [0, 1]>
// CHECK-LABEL: func.func @async_product
// CHECK: tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = 0 : i64}
// CHECK: tilegpu.warpgroup_dot
// CHECK: tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = 8192 : i64}
// CHECK: tilegpu.warpgroup_dot_wait
// CHECK: tilegpu.local_alloc %{{.*}} {tilegpu.allocation_offset = 0 : i64}
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @async_product(%a: !tilegpu.memdesc<64x64xf16, #n>, %t: tensor<64x64xf16, #b>) -> (tensor<64x64xf32, #mma>, tensor<64x64xf16, #b>, tensor<64x64xf16, #b>) {
    %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
    %b = tilegpu.local_alloc %t : tensor<64x64xf16, #b> -> !tilegpu.memdesc<64x64xf16, #nt>
    %d = tilegpu.warpgroup_dot %a, %b, %zero {is_async} : !tilegpu.memdesc<64x64xf16, #n>, !tilegpu.memdesc<64x64xf16, #nt>, tensor<64x64xf32, #mma> -> tensor<64x64xf32, #mma>
    %late = tilegpu.local_alloc %t : tensor<64x64xf16, #b> -> !tilegpu.memdesc<64x64xf16, #n>
    %done = tilegpu.warpgroup_dot_wait %d {pendings = 0 : i32} : tensor<64x64xf32, #mma>
    %after = tilegpu.local_alloc %t : tensor<64x64xf16, #b> -> !tilegpu.memdesc<64x64xf16, #n>
    %l = tilegpu.local_load %late [0, 0] : !tilegpu.memdesc<64x64xf16, #n> -> tensor<64x64xf16, #b>
    %m = tilegpu.local_load %after [0, 0] : !tilegpu.memdesc<64x64xf16, #n> -> tensor<64x64xf16, #b>
    return %done, %l, %m : tensor<64x64xf32, #mma>, tensor<64x64xf16, #b>, tensor<64x64xf16, #b>
  }
}
