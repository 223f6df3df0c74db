// RUN: tile-opt %s -split-input-file -tilegpu-allocate-shared-memory -tilegpu-place-barriers -convert-tilegpu-to-llvm | FileCheck %s
// RUN: tile-opt %s -split-input-file -tilegpu-allocate-shared-memory -tilegpu-place-barriers -convert-tilegpu-to-llvm -cse | FileCheck %s --check-prefix=ADDR

// Shared-memory buffers (and the scratch of conversions and reductions) each
// get a 128-byte aligned offset, and the module records their total as
// tilegpu.shared_bytes. local_alloc stores the tile, then waits at a
// barrier; a barrier before the store too only where earlier reads of that
// memory are not already ordered by one (tilegpu-barriers.mlir): here the
// first store has nothing before it and each later one follows the
// barrier of the store before.
// local_load into a 16-bit operand layout uses ldmatrix, four 8x8 matrices
// at a time: plain (row) when the buffer is contiguous along the operand's
// k, transposed (col) otherwise. A is 64x32 (k contiguous: row); K is 32x64
// stored twice, n contiguous (order [1, 0]: col) and k contiguous
// (order [0, 1]: row); the windows are A[:, 16:32] and K[16:32, :].
// (This kernel, run on an H100, gives both products exactly.)

#ba = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]>
#bk = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#sa = #tilegpu.shared<vec = 8, perPhase = 2, maxPhase = 4, order = [1, 0]>
#sk = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
#skt = #tilegpu.shared<vec = 8, perPhase = 2, maxPhase = 4, order = [0, 1]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
#aop = #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
#bop = #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
// Three buffers of 4096 bytes, no other scratch.
// CHECK: module attributes {tilegpu.num_warps = 4 : i32, tilegpu.shared_bytes = 12288 : i64, tilegpu.target = #tilegpu.target<sm_90a>}
// CHECK: llvm.mlir.global external @tile_shared_scratch() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
// CHECK-LABEL: llvm.func @ldmatrix
// A at offset 0: 16 elements per thread, 8 contiguous in registers and in
// the buffer, so two 16-byte stores.
// CHECK: %[[BASE0:.*]] = llvm.mlir.addressof @tile_shared_scratch : !llvm.ptr<3>
// CHECK-NEXT: llvm.getelementptr %[[BASE0]][0] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NOT: nvvm.barrier0
// CHECK-COUNT-2: llvm.intr.masked.store %{{.*}}, %{{.*}}, %{{.*}} {alignment = 16 : i32} : vector<8xf16>, vector<8xi1> into !llvm.ptr<3>
// CHECK-NOT: llvm.intr.masked.store
// CHECK: nvvm.barrier0
// K at 4096.
// CHECK: %[[BASE1:.*]] = llvm.mlir.addressof @tile_shared_scratch : !llvm.ptr<3>
// CHECK-NEXT: llvm.getelementptr %[[BASE1]][4096] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NOT: nvvm.barrier0
// CHECK-COUNT-2: llvm.intr.masked.store %{{.*}} {alignment = 16 : i32} : vector<8xf16>, vector<8xi1> into !llvm.ptr<3>
// CHECK-NOT: llvm.intr.masked.store
// CHECK: nvvm.barrier0
// K again, column-major, at 8192: its registers run across the buffer's
// rows, one element per store.
// CHECK: %[[BASE2:.*]] = llvm.mlir.addressof @tile_shared_scratch : !llvm.ptr<3>
// CHECK-NEXT: llvm.getelementptr %[[BASE2]][8192] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NOT: nvvm.barrier0
// CHECK-COUNT-16: llvm.intr.masked.store %{{.*}} into !llvm.ptr<3>
// CHECK-NOT: llvm.intr.masked.store
// CHECK: nvvm.barrier0
// The A window: 8 registers per thread, one ldmatrix.x4, not transposed.
// CHECK-NOT: nvvm.barrier0
// CHECK: llvm.inline_asm has_side_effects {{.*}} "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {$0, $1, $2, $3}, [$4];", "=r,=r,=r,=r,r" %{{.*}} : (i32) -> !llvm.struct<(i32, i32, i32, i32)>
// K (n contiguous): 32 registers, four transposed ldmatrix.x4; the window
// starts 16 rows (2048 bytes) in, an offset the swizzle leaves alone.
// CHECK-COUNT-4: llvm.inline_asm has_side_effects {{.*}} "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {$0, $1, $2, $3}, [$4+2048];"
// K (k contiguous): four plain ldmatrix.x4.
// CHECK-COUNT-4: llvm.inline_asm has_side_effects {{.*}} "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {$0, $1, $2, $3}, [$4{{(\+[0-9]+)?}}];"
// CHECK-NOT: ldmatrix
// CHECK-NOT: llvm.load %{{.*}} : !llvm.ptr<3>
// CHECK-COUNT-16: nvvm.mma.sync {{.*}} {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// CHECK-NOT: nvvm.mma.sync
// CHECK-NOT: nvvm.barrier0
// CHECK: llvm.return
// Four plain ldmatrix of K (k contiguous) differ by 8 rows of 128 bytes,
// a whole swizzle period: one address register, four immediates.
// ADDR-LABEL: llvm.func @ldmatrix
// ADDR: "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {$0, $1, $2, $3}, [$4];"
// ADDR-COUNT-4: "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// ADDR: "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {$0, $1, $2, $3}, [$4];", "=r,=r,=r,=r,r" %[[K:[0-9]+]]
// ADDR: "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {$0, $1, $2, $3}, [$4+1024];", "=r,=r,=r,=r,r" %[[K]]
// ADDR: "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {$0, $1, $2, $3}, [$4+2048];", "=r,=r,=r,=r,r" %[[K]]
// ADDR: "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {$0, $1, $2, $3}, [$4+3072];", "=r,=r,=r,=r,r" %[[K]]
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @ldmatrix(%ap: !tile.ptr<f16>, %kp: !tile.ptr<f16>, %o0: !tile.ptr<f32>, %o1: !tile.ptr<f32>) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i64
    %c32 = arith.constant 32 : i64
    %c64 = arith.constant 64 : i64
    %abp = tile.make_block_ptr %ap, [%c64, %c32], [%c32, %c1], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x32xf16, #ba>>
    %a = tile.load_block %abp : !tile.block_ptr<tensor<64x32xf16, #ba>>
    %kbp = tile.make_block_ptr %kp, [%c32, %c64], [%c64, %c1], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<32x64xf16, #bk>>
    %k = tile.load_block %kbp : !tile.block_ptr<tensor<32x64xf16, #bk>>
    %abuf = tilegpu.local_alloc %a : tensor<64x32xf16, #ba> -> !tilegpu.memdesc<64x32xf16, #sa>
    %kbuf = tilegpu.local_alloc %k : tensor<32x64xf16, #bk> -> !tilegpu.memdesc<32x64xf16, #sk>
    %ktbuf = tilegpu.local_alloc %k : tensor<32x64xf16, #bk> -> !tilegpu.memdesc<32x64xf16, #skt>
    %aa = tilegpu.local_load %abuf [0, 16] : !tilegpu.memdesc<64x32xf16, #sa> -> tensor<64x16xf16, #aop>
    %kb = tilegpu.local_load %kbuf [16, 0] : !tilegpu.memdesc<32x64xf16, #sk> -> tensor<16x64xf16, #bop>
    %ktb = tilegpu.local_load %ktbuf [16, 0] : !tilegpu.memdesc<32x64xf16, #skt> -> tensor<16x64xf16, #bop>
    %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
    %d0 = tile.dot %aa, %kb, %zero : tensor<64x16xf16, #aop>, tensor<16x64xf16, #bop> -> tensor<64x64xf32, #mma>
    %d1 = tile.dot %aa, %ktb, %zero : tensor<64x16xf16, #aop>, tensor<16x64xf16, #bop> -> tensor<64x64xf32, #mma>
    %obp0 = tile.make_block_ptr %o0, [%c64, %c64], [%c64, %c1], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf32, #mma>>
    tile.store_block %obp0, %d0 : !tile.block_ptr<tensor<64x64xf32, #mma>>
    %obp1 = tile.make_block_ptr %o1, [%c64, %c64], [%c64, %c1], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf32, #mma>>
    tile.store_block %obp1, %d1 : !tile.block_ptr<tensor<64x64xf32, #mma>>
    return
  }
}

// -----

// One warp, a 16x8 B window of a buffer of 16-byte rows (no swizzle to
// make: eight rows per phase, one phase): two matrices, one transposed
// ldmatrix.x2.
#b = #tilegpu.blocked<sizePerThread = [1, 2], threadsPerWarp = [16, 2], warpsPerCTA = [1, 1], order = [1, 0]>
#s = #tilegpu.shared<vec = 8, perPhase = 8, maxPhase = 1, order = [1, 0]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [1, 1]>
#bop = #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
#aop = #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
// CHECK: module attributes {tilegpu.num_warps = 1 : i32, tilegpu.shared_bytes = 512 : i64, tilegpu.target = #tilegpu.target<sm_90a>}
// CHECK-LABEL: llvm.func @narrow
// CHECK-NOT: nvvm.barrier0
// CHECK-COUNT-4: llvm.intr.masked.store %{{.*}} : vector<2xf16>, vector<2xi1> into !llvm.ptr<3>
// CHECK-NOT: llvm.intr.masked.store
// CHECK: nvvm.barrier0
// CHECK: %[[M:.*]] = llvm.inline_asm has_side_effects {{.*}} "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {$0, $1}, [$2+256];", "=r,=r,r" %{{.*}} : (i32) -> !llvm.struct<(i32, i32)>
// CHECK: %[[W0:.*]] = llvm.extractvalue %[[M]][0] : !llvm.struct<(i32, i32)>
// CHECK: %[[W1:.*]] = llvm.extractvalue %[[M]][1] : !llvm.struct<(i32, i32)>
// CHECK: llvm.bitcast %[[W0]] : i32 to vector<2xf16>
// CHECK: llvm.bitcast %[[W1]] : i32 to vector<2xf16>
// CHECK-NOT: ldmatrix
// CHECK: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @narrow(%ap: !tile.ptr<f16>, %kp: !tile.ptr<f16>, %op: !tile.ptr<f32>) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i64
    %c8 = arith.constant 8 : i64
    %c16 = arith.constant 16 : i64
    %c32 = arith.constant 32 : i64
    %kbp = tile.make_block_ptr %kp, [%c32, %c8], [%c8, %c1], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<32x8xf16, #b>>
    %k = tile.load_block %kbp : !tile.block_ptr<tensor<32x8xf16, #b>>
    %abp = tile.make_block_ptr %ap, [%c16, %c16], [%c16, %c1], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<16x16xf16, #aop>>
    %a = tile.load_block %abp : !tile.block_ptr<tensor<16x16xf16, #aop>>
    %buf = tilegpu.local_alloc %k : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
    %kb = tilegpu.local_load %buf [16, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<16x8xf16, #bop>
    %zero = arith.constant dense<0.0> : tensor<16x8xf32, #mma>
    %d = tile.dot %a, %kb, %zero : tensor<16x16xf16, #aop>, tensor<16x8xf16, #bop> -> tensor<16x8xf32, #mma>
    %obp = tile.make_block_ptr %op, [%c16, %c8], [%c8, %c1], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<16x8xf32, #mma>>
    tile.store_block %obp, %d : !tile.block_ptr<tensor<16x8xf32, #mma>>
    return
  }
}

// -----

// A read into a layout that is not a 16-bit operand goes element by element,
// each address swizzled: (col / 8) ^ (row % 8) for this 128-byte-row
// buffer (the row runs along dimension 1, order [0, 1]).
#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#c = #tilegpu.blocked<sizePerThread = [2, 1], threadsPerWarp = [16, 2], warpsPerCTA = [1, 4], order = [0, 1]>
#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [0, 1]>
// CHECK: module attributes {tilegpu.num_warps = 4 : i32, tilegpu.shared_bytes = 8192 : i64, tilegpu.target = #tilegpu.target<sm_90a>}
// CHECK-LABEL: llvm.func @elementwise
// CHECK-NOT: nvvm.barrier0
// CHECK-COUNT-32: llvm.intr.masked.store %{{.*}} into !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK-NOT: ldmatrix
// CHECK: %[[ROW:.*]] = llvm.add %{{.*}}, %{{.*}} : i32
// CHECK: %[[PHASE:.*]] = llvm.and %{{.*}}, %{{.*}} : i32
// CHECK: %[[VEC:.*]] = llvm.xor %{{.*}}, %[[PHASE]] : i32
// CHECK-COUNT-16: llvm.load %{{.*}} : !llvm.ptr<3> -> f16
// CHECK-NOT: llvm.load %{{.*}} : !llvm.ptr<3>
// CHECK-NOT: ldmatrix
// CHECK: llvm.return
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @elementwise(%xp: !tile.ptr<f16>, %op: !tile.ptr<f16>) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i64
    %c32 = arith.constant 32 : i64
    %c64 = arith.constant 64 : i64
    %xbp = tile.make_block_ptr %xp, [%c64, %c64], [%c64, %c1], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf16, #b>>
    %x = tile.load_block %xbp : !tile.block_ptr<tensor<64x64xf16, #b>>
    %buf = tilegpu.local_alloc %x : tensor<64x64xf16, #b> -> !tilegpu.memdesc<64x64xf16, #s>
    %h = tilegpu.local_load %buf [32, 0] : !tilegpu.memdesc<64x64xf16, #s> -> tensor<32x64xf16, #c>
    %obp = tile.make_block_ptr %op, [%c32, %c64], [%c64, %c1], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<32x64xf16, #c>>
    tile.store_block %obp, %h : !tile.block_ptr<tensor<32x64xf16, #c>>
    return
  }
}

// -----

// extract_slice only picks registers: the k-slice [16, 32) of a 64x64 A
// operand is registers 8..15 of each thread (the second 16-deep tile); no
// shared memory is used.
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
#aop = #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
#bop = #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
// CHECK: module attributes {tilegpu.num_warps = 4 : i32, tilegpu.shared_bytes = 0 : i64, tilegpu.target = #tilegpu.target<sm_90a>}
// CHECK-NOT: @tile_shared_scratch
// CHECK-LABEL: llvm.func @slice
// CHECK-NOT: nvvm.barrier0
// CHECK: %[[E8:.*]] = llvm.extractvalue %[[SRC:.*]][8] : !llvm.struct<({{(f16, ){31}f16}})>
// CHECK: %[[E9:.*]] = llvm.extractvalue %[[SRC]][9]
// CHECK: %[[E15:.*]] = llvm.extractvalue %[[SRC]][15]
// CHECK: llvm.mlir.undef : !llvm.struct<({{(f16, ){7}f16}})>
// CHECK-NEXT: llvm.insertvalue %[[E8]], %{{.*}}[0]
// CHECK-NEXT: llvm.insertvalue %[[E9]], %{{.*}}[1]
// CHECK: llvm.insertvalue %[[E15]], %{{.*}}[7]
// CHECK-NOT: nvvm.barrier0
// CHECK-NOT: ptr<3>
// CHECK: nvvm.mma.sync
// CHECK: llvm.return
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @slice(%ap: !tile.ptr<f16>, %bp: !tile.ptr<f16>, %op: !tile.ptr<f32>) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i64
    %c16 = arith.constant 16 : i64
    %c64 = arith.constant 64 : i64
    %abp = tile.make_block_ptr %ap, [%c64, %c64], [%c64, %c1], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf16, #aop>>
    %a = tile.load_block %abp : !tile.block_ptr<tensor<64x64xf16, #aop>>
    %bbp = tile.make_block_ptr %bp, [%c16, %c16], [%c16, %c1], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<16x16xf16, #bop>>
    %b = tile.load_block %bbp : !tile.block_ptr<tensor<16x16xf16, #bop>>
    %a1 = tilegpu.extract_slice %a [0, 16] : tensor<64x64xf16, #aop> -> tensor<64x16xf16, #aop>
    %zero = arith.constant dense<0.0> : tensor<64x16xf32, #mma>
    %d = tile.dot %a1, %b, %zero : tensor<64x16xf16, #aop>, tensor<16x16xf16, #bop> -> tensor<64x16xf32, #mma>
    %obp = tile.make_block_ptr %op, [%c64, %c16], [%c16, %c1], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x16xf32, #mma>>
    tile.store_block %obp, %d : !tile.block_ptr<tensor<64x16xf32, #mma>>
    return
  }
}

// -----

// Buffers share shared memory when their lifetimes do not overlap. %first
// is last read before %second is stored: both at 0. %third is stored while
// %second is still to be read: after it, at 512. %second's last read comes
// before the loop, but %third is read inside it, so it lives through the
// whole loop, and %in, stored in the loop, goes back to 0, not to 512.
#b = #tilegpu.blocked<sizePerThread = [1, 2], threadsPerWarp = [16, 2], warpsPerCTA = [1, 1], order = [1, 0]>
#s = #tilegpu.shared<vec = 8, perPhase = 8, maxPhase = 1, order = [1, 0]>
#l = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]>
// CHECK: tilegpu.shared_bytes = 1024 : i64
// CHECK-LABEL: llvm.func @reuse
// CHECK: llvm.mlir.addressof @tile_shared_scratch : !llvm.ptr<3>
// CHECK-NEXT: llvm.getelementptr %{{.*}}[0] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK: llvm.mlir.addressof @tile_shared_scratch : !llvm.ptr<3>
// CHECK-NEXT: llvm.getelementptr %{{.*}}[0] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK: llvm.mlir.addressof @tile_shared_scratch : !llvm.ptr<3>
// CHECK-NEXT: llvm.getelementptr %{{.*}}[512] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK: llvm.mlir.addressof @tile_shared_scratch : !llvm.ptr<3>
// CHECK-NEXT: llvm.getelementptr %{{.*}}[0] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NOT: llvm.mlir.addressof @tile_shared_scratch
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @reuse(%xp: !tile.ptr<f16>, %op: !tile.ptr<f16>, %n: i32) attributes {tile.kernel} {
    %z = arith.constant 0 : i32
    %one = arith.constant 1 : i64
    %c8 = arith.constant 8 : i64
    %c32 = arith.constant 32 : i64
    %xbp = tile.make_block_ptr %xp, [%c32, %c8], [%c8, %one], [%z, %z] order [1, 0] : !tile.block_ptr<tensor<32x8xf16, #b>>
    %x = tile.load_block %xbp : !tile.block_ptr<tensor<32x8xf16, #b>>
    %obp = tile.make_block_ptr %op, [%c32, %c8], [%c8, %one], [%z, %z] order [1, 0] : !tile.block_ptr<tensor<32x8xf16, #l>>
    %first = tilegpu.local_alloc %x : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
    %a = tilegpu.local_load %first [0, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<32x8xf16, #l>
    %second = tilegpu.local_alloc %x : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
    %third = tilegpu.local_alloc %x : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
    %b = tilegpu.local_load %second [0, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<32x8xf16, #l>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    scf.for %i = %c0 to %n step %c1 : i32 {
      %in = tilegpu.local_alloc %x : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
      %c = tilegpu.local_load %third [0, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<32x8xf16, #l>
      %d = tilegpu.local_load %in [0, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<32x8xf16, #l>
      tile.store_block %obp, %c : !tile.block_ptr<tensor<32x8xf16, #l>>
      tile.store_block %obp, %d : !tile.block_ptr<tensor<32x8xf16, #l>>
    }
    tile.store_block %obp, %a : !tile.block_ptr<tensor<32x8xf16, #l>>
    tile.store_block %obp, %b : !tile.block_ptr<tensor<32x8xf16, #l>>
    return
  }
}

// -----

// A layout conversion's scratch is placed like a buffer that lives for the
// conversion alone. In the loop, %buf is live, so the conversion's 768
// bytes (32 rows of 8 f16, padded to 12 so that rows 0 and 8 of a store
// fall in different banks) go after it; after the loop %buf is dead and
// the epilogue's conversion reuses its memory at 0.
#b = #tilegpu.blocked<sizePerThread = [1, 2], threadsPerWarp = [16, 2], warpsPerCTA = [1, 1], order = [1, 0]>
#s = #tilegpu.shared<vec = 8, perPhase = 8, maxPhase = 1, order = [1, 0]>
#l = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]>
// CHECK: tilegpu.shared_bytes = 1280 : i64
// CHECK-LABEL: llvm.func @scratch_reuse
// CHECK: llvm.mlir.addressof @tile_shared_scratch : !llvm.ptr<3>
// CHECK-NEXT: llvm.getelementptr %{{.*}}[0] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK: llvm.mlir.addressof @tile_shared_scratch : !llvm.ptr<3>
// CHECK-NEXT: llvm.getelementptr %{{.*}}[512] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK: nvvm.barrier0
// CHECK: llvm.mlir.addressof @tile_shared_scratch : !llvm.ptr<3>
// CHECK-NEXT: llvm.getelementptr %{{.*}}[0] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK: nvvm.barrier0
// CHECK-NOT: llvm.mlir.addressof @tile_shared_scratch
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @scratch_reuse(%xp: !tile.ptr<f16>, %op: !tile.ptr<f16>, %n: i32) attributes {tile.kernel} {
    %z = arith.constant 0 : i32
    %one = arith.constant 1 : i64
    %c8 = arith.constant 8 : i64
    %c32 = arith.constant 32 : i64
    %xbp = tile.make_block_ptr %xp, [%c32, %c8], [%c8, %one], [%z, %z] order [1, 0] : !tile.block_ptr<tensor<32x8xf16, #b>>
    %x = tile.load_block %xbp : !tile.block_ptr<tensor<32x8xf16, #b>>
    %obp = tile.make_block_ptr %op, [%c32, %c8], [%c8, %one], [%z, %z] order [1, 0] : !tile.block_ptr<tensor<32x8xf16, #b>>
    %buf = tilegpu.local_alloc %x : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    scf.for %i = %c0 to %n step %c1 : i32 {
      %c = tilegpu.local_load %buf [0, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<32x8xf16, #l>
      %cb = tilegpu.convert_layout %c : tensor<32x8xf16, #l> -> tensor<32x8xf16, #b>
      tile.store_block %obp, %cb : !tile.block_ptr<tensor<32x8xf16, #b>>
    }
    %xl = tilegpu.convert_layout %x : tensor<32x8xf16, #b> -> tensor<32x8xf16, #l>
    %olbp = tile.make_block_ptr %op, [%c32, %c8], [%c8, %one], [%z, %z] order [1, 0] : !tile.block_ptr<tensor<32x8xf16, #l>>
    tile.store_block %olbp, %xl : !tile.block_ptr<tensor<32x8xf16, #l>>
    return
  }
}

// -----

// A buffer read only through a transposed view lives until that read:
// %first is read through %view after %second is stored, so %second goes
// after it, at 512, not back to 0. The view is the buffer's own address.
#b = #tilegpu.blocked<sizePerThread = [1, 2], threadsPerWarp = [16, 2], warpsPerCTA = [1, 1], order = [1, 0]>
#s = #tilegpu.shared<vec = 8, perPhase = 8, maxPhase = 1, order = [1, 0]>
#st = #tilegpu.shared<vec = 8, perPhase = 8, maxPhase = 1, order = [0, 1]>
#l = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]>
// CHECK: tilegpu.shared_bytes = 1024 : i64
// CHECK-LABEL: llvm.func @view_lifetime
// CHECK: llvm.mlir.addressof @tile_shared_scratch : !llvm.ptr<3>
// CHECK-NEXT: llvm.getelementptr %{{.*}}[0] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK: llvm.mlir.addressof @tile_shared_scratch : !llvm.ptr<3>
// CHECK-NEXT: llvm.getelementptr %{{.*}}[512] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK-NOT: tilegpu.memdesc_trans
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @view_lifetime(%xp: !tile.ptr<f16>, %op: !tile.ptr<f16>, %otp: !tile.ptr<f16>) attributes {tile.kernel} {
    %z = arith.constant 0 : i32
    %one = arith.constant 1 : i64
    %c8 = arith.constant 8 : i64
    %c32 = arith.constant 32 : i64
    %xbp = tile.make_block_ptr %xp, [%c32, %c8], [%c8, %one], [%z, %z] order [1, 0] : !tile.block_ptr<tensor<32x8xf16, #b>>
    %x = tile.load_block %xbp : !tile.block_ptr<tensor<32x8xf16, #b>>
    %first = tilegpu.local_alloc %x : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
    %view = tilegpu.memdesc_trans %first : !tilegpu.memdesc<32x8xf16, #s> -> !tilegpu.memdesc<8x32xf16, #st>
    %second = tilegpu.local_alloc %x : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
    %a = tilegpu.local_load %view [0, 0] : !tilegpu.memdesc<8x32xf16, #st> -> tensor<8x32xf16, #l>
    %b = tilegpu.local_load %second [0, 0] : !tilegpu.memdesc<32x8xf16, #s> -> tensor<32x8xf16, #l>
    %otbp = tile.make_block_ptr %otp, [%c8, %c32], [%c32, %one], [%z, %z] order [1, 0] : !tile.block_ptr<tensor<8x32xf16, #l>>
    tile.store_block %otbp, %a : !tile.block_ptr<tensor<8x32xf16, #l>>
    %obp = tile.make_block_ptr %op, [%c32, %c8], [%c8, %one], [%z, %z] order [1, 0] : !tile.block_ptr<tensor<32x8xf16, #l>>
    tile.store_block %obp, %b : !tile.block_ptr<tensor<32x8xf16, #l>>
    return
  }
}

// -----

// Asynchronous copies into a stack of two 32x64 fp16 buffers (4096 bytes
// each): buffer %slot starts 4096 * %slot bytes in. One warp holds the
// 32x64 block as 8-element (16-byte) row vectors, 8 per thread: 8 cp.async,
// each predicated on %go, reading 16 bytes where the row is in bounds (the
// checked dimension 0) and none (writing zeros) elsewhere.
#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]>
#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
// CHECK: tilegpu.shared_bytes = 8192 : i64
// CHECK-LABEL: llvm.func @async_copy
// CHECK: %[[STACK:.*]] = llvm.getelementptr %{{.*}}[0] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// CHECK: %[[BYTES:.*]] = llvm.mul %{{.*}}, %{{.*}} : i32
// CHECK: %[[BUF:.*]] = llvm.getelementptr %[[STACK]][%[[BYTES]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
// CHECK-COUNT-8: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, $0, 0;\0A@p cp.async.cg.shared.global [$1], [$2], 16, $3;\0A}", "r,r,l,r" %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (i32, i32, !llvm.ptr<1>, i32) -> ()
// CHECK-NOT: cp.async.cg
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.barrier0
// ADDR-LABEL: llvm.func @async_copy
// The in-bounds test of a row picks 16 or 0 source bytes.
// ADDR: %[[NONE:.*]] = llvm.mlir.constant(0 : i32) : i32
// ADDR: %[[SIXTEEN:.*]] = llvm.mlir.constant(16 : i32) : i32
// ADDR: %[[SIZE:.*]] = llvm.select %{{.*}}, %[[SIXTEEN]], %[[NONE]] : i1, i32
// ADDR: llvm.inline_asm {{.*}}cp.async.cg.shared.global{{.*}} %{{.*}}, %{{.*}}, %{{.*}}, %[[SIZE]] :
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @async_copy(%xp: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %rows: i64, %slot: i32, %go: i1) attributes {tile.kernel} {
    %z = arith.constant 0 : i32
    %one = arith.constant 1 : i64
    %c64 = arith.constant 64 : i64
    %bp = tile.make_block_ptr %xp, [%rows, %c64], [%c64, %one], [%z, %z] order [1, 0] : !tile.block_ptr<tensor<32x64xf16, #b>>
    %stack = tilegpu.local_alloc : !tilegpu.memdesc<2x32x64xf16, #s>
    %buf = tilegpu.memdesc_index %stack[%slot] : !tilegpu.memdesc<2x32x64xf16, #s> -> !tilegpu.memdesc<32x64xf16, #s>
    tilegpu.async_copy_block %bp, %buf if %go boundary_check [0] : !tile.block_ptr<tensor<32x64xf16, #b>>, !tilegpu.memdesc<32x64xf16, #s>
    tilegpu.async_commit_group
    tilegpu.async_wait {pending = 0 : i32}
    return
  }
}

// -----

// A copy whose thread holds vectors along its rows as well as across them
// (8 lanes over a 128-element row, 4 rows a warp). The swizzle is linear
// over GF(2): a vector's buffer offset is the thread's own XOR the
// register's, and the register's bits that no thread's offset has are an
// immediate. The vector 64 elements along the row moves the swizzled
// vector index by 8, past the phase's three bits: offset + 64. The rows 4
// down move the phase (XOR 32) and the row (+512), and with both +576.
#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]>
#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
// ADDR-LABEL: llvm.func @async_copy_repeats
// ADDR: %[[OWN:.*]] = llvm.getelementptr %[[BUF:.*]][%[[OFF:.*]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f16
// ADDR: cp.async.cg.shared.global
// ADDR: llvm.getelementptr %[[OWN]][64] : (!llvm.ptr<3>) -> !llvm.ptr<3>, f16
// ADDR: cp.async.cg.shared.global
// ADDR: %[[MOVED:.*]] = llvm.xor %[[OFF]], %{{.*}} : i32
// ADDR: %[[ROWS:.*]] = llvm.getelementptr %[[BUF]][%[[MOVED]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f16
// ADDR: llvm.getelementptr %[[ROWS]][512] : (!llvm.ptr<3>) -> !llvm.ptr<3>, f16
// ADDR: cp.async.cg.shared.global
// ADDR: llvm.getelementptr %[[ROWS]][576] : (!llvm.ptr<3>) -> !llvm.ptr<3>, f16
// ADDR: cp.async.cg.shared.global
// ADDR-NOT: cp.async.cg.shared.global
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @async_copy_repeats(%xp: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %stride: i64 {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
    %z = arith.constant 0 : i32
    %one = arith.constant 1 : i64
    %c8 = arith.constant 8 : i64
    %c128 = arith.constant 128 : i64
    %bp = tile.make_block_ptr %xp, [%c8, %c128], [%stride, %one], [%z, %z] order [1, 0] : !tile.block_ptr<tensor<8x128xf16, #b>>
    %buf = tilegpu.local_alloc : !tilegpu.memdesc<8x128xf16, #s>
    tilegpu.async_copy_block %bp, %buf : !tile.block_ptr<tensor<8x128xf16, #b>>, !tilegpu.memdesc<8x128xf16, #s>
    tilegpu.async_commit_group
    tilegpu.async_wait {pending = 0 : i32}
    return
  }
}

// -----

// An asynchronous copy through a tile of pointers: each thread's 8-element
// (16-byte) row vector is one cp.async from its first pointer, reading 16
// bytes where the mask holds and none (writing zeros) elsewhere.
#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]>
#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
// CHECK-LABEL: llvm.func @async_copy_pointers
// CHECK-COUNT-8: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, $0, 0;\0A@p cp.async.cg.shared.global [$1], [$2], 16, $3;\0A}", "r,r,l,r" %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (i32, i32, !llvm.ptr<1>, i32) -> ()
// CHECK-NOT: cp.async.cg
// CHECK: nvvm.cp.async.commit.group
// ADDR-LABEL: llvm.func @async_copy_pointers
// ADDR: %[[NONE:.*]] = llvm.mlir.constant(0 : i32) : i32
// ADDR: %[[SIXTEEN:.*]] = llvm.mlir.constant(16 : i32) : i32
// ADDR: %[[SIZE:.*]] = llvm.select %{{.*}}, %[[SIXTEEN]], %[[NONE]] : i1, i32
// ADDR: llvm.inline_asm {{.*}}cp.async.cg.shared.global{{.*}} %{{.*}}, %{{.*}}, %{{.*}}, %[[SIZE]] :
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @async_copy_pointers(%xp: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %n: i32 {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
    %rows = tile.arange 0 to 32 : tensor<32xi32, #tilegpu.slice<dim = 1, parent = #b>>
    %cols = tile.arange 0 to 64 : tensor<64xi32, #tilegpu.slice<dim = 0, parent = #b>>
    %r2 = tile.expand_dims %rows {axis = 1 : i32} : tensor<32xi32, #tilegpu.slice<dim = 1, parent = #b>> -> tensor<32x1xi32, #b>
    %c2 = tile.expand_dims %cols {axis = 0 : i32} : tensor<64xi32, #tilegpu.slice<dim = 0, parent = #b>> -> tensor<1x64xi32, #b>
    %stride = arith.constant dense<64> : tensor<32x1xi32, #b>
    %rowoff = arith.muli %r2, %stride : tensor<32x1xi32, #b>
    %rb = tile.broadcast %rowoff : tensor<32x1xi32, #b> -> tensor<32x64xi32, #b>
    %cb = tile.broadcast %c2 : tensor<1x64xi32, #b> -> tensor<32x64xi32, #b>
    %offs = arith.addi %rb, %cb : tensor<32x64xi32, #b>
    %base = tile.splat %xp : tensor<32x64x!tile.ptr<f16>, #b>
    %ptrs = tile.addptr %base, %offs : tensor<32x64x!tile.ptr<f16>, #b>, tensor<32x64xi32, #b>
    %ns = tile.splat %n : tensor<32x64xi32, #b>
    %mask = arith.cmpi slt, %cb, %ns : tensor<32x64xi32, #b>
    %buf = tilegpu.local_alloc : !tilegpu.memdesc<32x64xf16, #s>
    tilegpu.async_copy %ptrs, %buf mask %mask {vector_width = 8 : i32} : tensor<32x64x!tile.ptr<f16>, #b>, !tilegpu.memdesc<32x64xf16, #s>, tensor<32x64xi1, #b>
    tilegpu.async_commit_group
    tilegpu.async_wait {pending = 0 : i32}
    return
  }
}

// -----

// local_alloc of a 16-bit tile held as 8x8 matrices (lane l holding row
// l / 4 of each, a pair of elements at 2 (l % 4): an mma accumulator's
// fragment) stores with stmatrix on sm_90a, four matrices an instruction:
// plain into a buffer contiguous along the pairs, transposed (.trans) into
// one contiguous along the rows. 64x64 on 4 warps: 16 matrices a warp.
#acc = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 64]>
#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#n = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#nt = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [0, 1]>
// CHECK-LABEL: llvm.func @stmatrix
// CHECK-NOT: llvm.intr.masked.store
// CHECK-COUNT-4: llvm.inline_asm has_side_effects {{.*}} "stmatrix.sync.aligned.m8n8.x4.shared.b16 [$0{{(\+[0-9]+)?}}], {$1, $2, $3, $4};", "r,r,r,r,r" %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (i32, i32, i32, i32, i32) -> ()
// CHECK-NOT: llvm.intr.masked.store
// CHECK: nvvm.barrier0
// CHECK-COUNT-4: "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [$0{{(\+[0-9]+)?}}], {$1, $2, $3, $4};"
// CHECK-NOT: stmatrix
// CHECK: llvm.return
// Transposed, the groups lie 16 rows (2048 bytes) apart, which the
// 128-byte swizzle leaves alone: one address register, immediates.
// ADDR-LABEL: llvm.func @stmatrix
// ADDR: "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [$0], {$1, $2, $3, $4};", "r,r,r,r,r" %[[A:[0-9]+]],
// ADDR-NEXT: "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [$0+2048], {$1, $2, $3, $4};", "r,r,r,r,r" %[[A]],
// ADDR-NEXT: "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [$0+4096], {$1, $2, $3, $4};", "r,r,r,r,r" %[[A]],
// ADDR-NEXT: "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [$0+6144], {$1, $2, $3, $4};", "r,r,r,r,r" %[[A]],
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @stmatrix(%xp: !tile.ptr<f16>, %op: !tile.ptr<f16>, %otp: !tile.ptr<f16>) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i64
    %c64 = arith.constant 64 : i64
    %xbp = tile.make_block_ptr %xp, [%c64, %c64], [%c64, %c1], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf16, #acc>>
    %x = tile.load_block %xbp : !tile.block_ptr<tensor<64x64xf16, #acc>>
    %buf = tilegpu.local_alloc %x : tensor<64x64xf16, #acc> -> !tilegpu.memdesc<64x64xf16, #n>
    %tbuf = tilegpu.local_alloc %x : tensor<64x64xf16, #acc> -> !tilegpu.memdesc<64x64xf16, #nt>
    %y = tilegpu.local_load %buf [0, 0] : !tilegpu.memdesc<64x64xf16, #n> -> tensor<64x64xf16, #b>
    %yt = tilegpu.local_load %tbuf [0, 0] : !tilegpu.memdesc<64x64xf16, #nt> -> tensor<64x64xf16, #b>
    %obp = tile.make_block_ptr %op, [%c64, %c64], [%c64, %c1], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf16, #b>>
    tile.store_block %obp, %y : !tile.block_ptr<tensor<64x64xf16, #b>>
    %otbp = tile.make_block_ptr %otp, [%c64, %c64], [%c64, %c1], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf16, #b>>
    tile.store_block %otbp, %yt : !tile.block_ptr<tensor<64x64xf16, #b>>
    return
  }
}

// -----

// sm_80 has no stmatrix: the same tile is stored a pair of elements at a
// time.
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
#n = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
// CHECK-LABEL: llvm.func @no_stmatrix
// CHECK-NOT: stmatrix
// CHECK: llvm.intr.masked.store {{.*}} : vector<2xf16>, vector<2xi1> into !llvm.ptr<3>
// CHECK-NOT: stmatrix
// CHECK: llvm.return
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_80>} {
  func.func @no_stmatrix(%xp: !tile.ptr<f16>, %op: !tile.ptr<f16>) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i64
    %c64 = arith.constant 64 : i64
    %xbp = tile.make_block_ptr %xp, [%c64, %c64], [%c64, %c1], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf16, #mma>>
    %x = tile.load_block %xbp : !tile.block_ptr<tensor<64x64xf16, #mma>>
    %buf = tilegpu.local_alloc %x : tensor<64x64xf16, #mma> -> !tilegpu.memdesc<64x64xf16, #n>
    %y = tilegpu.local_load %buf [0, 0] : !tilegpu.memdesc<64x64xf16, #n> -> tensor<64x64xf16, #mma>
    %obp = tile.make_block_ptr %op, [%c64, %c64], [%c64, %c1], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf16, #mma>>
    tile.store_block %obp, %y : !tile.block_ptr<tensor<64x64xf16, #mma>>
    return
  }
}
