// RUN: tile-opt %s -split-input-file -tilegpu-allocate-shared-memory -tilegpu-place-barriers -convert-tilegpu-to-llvm | FileCheck %s

// Kernels become NVVM kernels; program ids are CTA ids.

// CHECK-LABEL: llvm.func @grid(%{{.*}}: !llvm.ptr<1>, %{{.*}}: i32)
// CHECK-SAME: attributes {nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>}
// CHECK: nvvm.read.ptx.sreg.ctaid.x
// CHECK: nvvm.read.ptx.sreg.nctaid.y
// CHECK: llvm.return
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @grid(%p: !tile.ptr<i32>, %n: i32) attributes {tile.kernel} {
    %0 = tile.program_id x
    %1 = tile.num_programs y
    %2 = arith.addi %0, %1 : i32
    tile.store %p, %2 : !tile.ptr<i32>
    return
  }
}

// -----

// A range: each register is start + the coordinate the layout gives it,
// computed from the thread index; elementwise ops run per register; the
// masked load reads one element per register under its mask; the store is
// issued only by the canonical holders of replicated data.

#b = #tilegpu.blocked<sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
// CHECK-LABEL: llvm.func @copy
// CHECK: nvvm.read.ptx.sreg.tid.x
// CHECK: llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
// CHECK: llvm.getelementptr
// CHECK-NOT: llvm.getelementptr
// CHECK: llvm.intr.masked.load %{{.*}}, %{{.*}}, %{{.*}} {alignment = 4 : i32} : (!llvm.ptr<1>, vector<1xi1>, vector<1xf32>) -> vector<1xf32>
// CHECK: llvm.intr.masked.load
// CHECK: llvm.fmul
// CHECK: llvm.fmul
// CHECK: llvm.intr.masked.store
// CHECK: llvm.intr.masked.store
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @copy(%src: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
    %r = tile.arange 0 to 256 : tensor<256xi32, #b>
    %ps = tile.splat %src : tensor<256x!tile.ptr<f32>, #b>
    %p = tile.addptr %ps, %r : tensor<256x!tile.ptr<f32>, #b>, tensor<256xi32, #b>
    %ns = tile.splat %n : tensor<256xi32, #b>
    %m = arith.cmpi slt, %r, %ns : tensor<256xi32, #b>
    %x = tile.load %p mask %m : tensor<256x!tile.ptr<f32>, #b>
    %y = arith.mulf %x, %x : tensor<256xf32, #b>
    tile.store %p, %y mask %m : tensor<256x!tile.ptr<f32>, #b>
    return
  }
}

// -----

// exp2 is the approximate ex2; a float exp becomes ex2 of x·log2(e); tanh
// is llvm.tanh with afn, which NVPTX selects as tanh.approx.f32.
#b = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]>
// CHECK-LABEL: llvm.func @exponentials
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: %[[LOG2E:.*]] = llvm.mlir.constant(1.44269502 : f32) : f32
// CHECK: llvm.fmul %{{.*}}, %[[LOG2E]]
// CHECK: llvm.call_intrinsic "llvm.nvvm.ex2.approx.ftz.f32"
// CHECK: llvm.call_intrinsic "llvm.nvvm.lg2.approx.ftz.f"
// CHECK: llvm.call_intrinsic "llvm.tanh.f32"(%{{.*}}) {fastmathFlags = #llvm.fastmath<afn>}
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @exponentials(%p: !tile.ptr<f32>) attributes {tile.kernel} {
    %ps = tile.splat %p : tensor<32x!tile.ptr<f32>, #b>
    %x = tile.load %ps : tensor<32x!tile.ptr<f32>, #b>
    %a = tile.exp2 %x : tensor<32xf32, #b>
    %e = math.exp %a : tensor<32xf32, #b>
    %l = math.log2 %e : tensor<32xf32, #b>
    %t = math.tanh %l : tensor<32xf32, #b>
    tile.store %ps, %t : tensor<32x!tile.ptr<f32>, #b>
    return
  }
}

// -----

// An f32 division that may be approximate (the language's `/`: fast-math
// afn) is div.full.f32, on tiles and scalars; without afn, and on f64, it is
// IEEE division.
#b = #tilegpu.blocked<sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]>
// CHECK-LABEL: llvm.func @divisions
// CHECK-COUNT-2: llvm.call_intrinsic "llvm.nvvm.div.full"(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
// CHECK-COUNT-2: llvm.fdiv %{{.*}}, %{{.*}} : f32
// CHECK: llvm.call_intrinsic "llvm.nvvm.div.full"(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
// CHECK: llvm.fdiv %{{.*}}, %{{.*}} : f64
// CHECK-NOT: llvm.nvvm.div.full
// CHECK: llvm.return
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @divisions(%p: !tile.ptr<f32>, %s: f32, %d: f64, %q: !tile.ptr<f64>) attributes {tile.kernel} {
    %ps = tile.splat %p : tensor<64x!tile.ptr<f32>, #b>
    %x = tile.load %ps : tensor<64x!tile.ptr<f32>, #b>
    %fast = arith.divf %x, %x fastmath<afn> : tensor<64xf32, #b>
    %ieee = arith.divf %fast, %x : tensor<64xf32, #b>
    tile.store %ps, %ieee : tensor<64x!tile.ptr<f32>, #b>
    %r = arith.divf %s, %s fastmath<afn> : f32
    tile.store %p, %r : !tile.ptr<f32>
    %e = arith.divf %d, %d fastmath<afn> : f64
    tile.store %q, %e : !tile.ptr<f64>
    return
  }
}

// -----

// A row reduction: registers first, then butterfly shuffles over the lanes
// along the row; with two warps along the row, through shared memory.
#b = #tilegpu.blocked<sizePerThread = [1, 2], threadsPerWarp = [4, 8], warpsPerCTA = [2, 2], order = [1, 0]>
// CHECK: module attributes {tilegpu.num_warps = 4 : i32, tilegpu.shared_bytes = 64 : i64, tilegpu.target = #tilegpu.target<sm_90a>}
// CHECK: llvm.mlir.global external @tile_shared_scratch() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
// CHECK-LABEL: llvm.func @row_max
// CHECK: llvm.intr.maximum
// CHECK: nvvm.shfl.sync bfly %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : f32 -> f32
// CHECK: nvvm.shfl.sync bfly
// CHECK: nvvm.shfl.sync bfly
// CHECK: nvvm.barrier0
// CHECK: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @row_max(%p: !tile.ptr<f32>, %q: !tile.ptr<f32>) attributes {tile.kernel} {
    %r = tile.arange 0 to 32 : tensor<32xi32, #tilegpu.slice<dim = 0, parent = #b>>
    %e = tile.expand_dims %r {axis = 0 : i32} : tensor<32xi32, #tilegpu.slice<dim = 0, parent = #b>> -> tensor<1x32xi32, #b>
    %o = tile.broadcast %e : tensor<1x32xi32, #b> -> tensor<8x32xi32, #b>
    %ps = tile.splat %p : tensor<8x32x!tile.ptr<f32>, #b>
    %ptrs = tile.addptr %ps, %o : tensor<8x32x!tile.ptr<f32>, #b>, tensor<8x32xi32, #b>
    %x = tile.load %ptrs : tensor<8x32x!tile.ptr<f32>, #b>
    %m = tile.reduce max %x axis 1 : tensor<8x32xf32, #b> -> tensor<8xf32, #tilegpu.slice<dim = 1, parent = #b>>
    %qs = tile.splat %q : tensor<8x!tile.ptr<f32>, #tilegpu.slice<dim = 1, parent = #b>>
    tile.store %qs, %m : tensor<8x!tile.ptr<f32>, #tilegpu.slice<dim = 1, parent = #b>>
    return
  }
}

// -----

// A 1-D tile of booleans, zero-extended, reduced to one scalar over all
// warps: max is "any" (bar.red.or), min "every" (bar.red.and), with no
// shuffles and no shared memory. A max of other integers still goes
// through shared memory.
#w = #tilegpu.blocked<sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
// CHECK: module attributes {tilegpu.num_warps = 4 : i32, tilegpu.shared_bytes = 16 : i64, tilegpu.target = #tilegpu.target<sm_90a>}
// CHECK-LABEL: llvm.func @any_every
// CHECK: %[[OWN:.*]] = llvm.intr.smax(%{{.*}}, %{{.*}}) : (i32, i32) -> i32
// CHECK-NOT: nvvm.shfl.sync
// CHECK-NOT: llvm.store
// CHECK: %[[ANY:.*]] = nvvm.barrier #nvvm.reduction<or> %[[OWN]] -> i32
// CHECK: %[[MINE:.*]] = llvm.intr.smin(%{{.*}}, %{{.*}}) : (i32, i32) -> i32
// CHECK-NEXT: %[[EVERY:.*]] = nvvm.barrier #nvvm.reduction<and> %[[MINE]] -> i32
// CHECK: llvm.add %[[ANY]], %[[EVERY]] : i32
// CHECK: nvvm.shfl.sync bfly
// CHECK: nvvm.barrier0
// CHECK: llvm.store %{{.*}}, %{{.*}} : i32, !llvm.ptr<3>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @any_every(%p: !tile.ptr<i32>, %n: i32) attributes {tile.kernel} {
    %r = tile.arange 0 to 256 : tensor<256xi32, #w>
    %ns = tile.splat %n : tensor<256xi32, #w>
    %below = arith.cmpi slt, %r, %ns : tensor<256xi32, #w>
    %b = arith.extui %below : tensor<256xi1, #w> to tensor<256xi32, #w>
    %any = tile.reduce max %b axis 0 : tensor<256xi32, #w> -> i32
    %every = tile.reduce min %b axis 0 : tensor<256xi32, #w> -> i32
    %both = arith.addi %any, %every : i32
    %top = tile.reduce max %r axis 0 : tensor<256xi32, #w> -> i32
    %sum = arith.addi %both, %top : i32
    tile.store %p, %sum : !tile.ptr<i32>
    return
  }
}

// -----

// Bitwise reductions combine with or / xor in the shuffles and across the
// warps; booleans too (bar.red serves max and min only: its and would be
// wrong for an or, and it has no xor).
#w = #tilegpu.blocked<sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
// CHECK-LABEL: llvm.func @bitwise
// CHECK: llvm.or
// CHECK-NOT: nvvm.barrier #nvvm.reduction
// CHECK: nvvm.shfl.sync bfly
// CHECK-NOT: nvvm.barrier #nvvm.reduction
// CHECK: llvm.xor
// CHECK-NOT: nvvm.barrier #nvvm.reduction
// CHECK: nvvm.shfl.sync bfly
// CHECK-NOT: nvvm.barrier #nvvm.reduction
// CHECK: llvm.return
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @bitwise(%p: !tile.ptr<i32>, %n: i32) attributes {tile.kernel} {
    %r = tile.arange 0 to 256 : tensor<256xi32, #w>
    %ns = tile.splat %n : tensor<256xi32, #w>
    %below = arith.cmpi slt, %r, %ns : tensor<256xi32, #w>
    %b = arith.extui %below : tensor<256xi1, #w> to tensor<256xi32, #w>
    %any = tile.reduce or %b axis 0 : tensor<256xi32, #w> -> i32
    %parity = tile.reduce xor %r axis 0 : tensor<256xi32, #w> -> i32
    %both = arith.addi %any, %parity : i32
    tile.store %p, %both : !tile.ptr<i32>
    return
  }
}

// -----

// A layout conversion that moves data goes through shared memory between
// barriers, runs of consecutive registers as vectors (here four f32 read
// at once; pointers one at a time); one that keeps elements in place only
// renumbers registers.
#a = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
#c = #tilegpu.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
// CHECK: module attributes {tilegpu.num_warps = 4 : i32, tilegpu.shared_bytes = 4096 : i64, tilegpu.target = #tilegpu.target<sm_90a>}
// CHECK-LABEL: llvm.func @convert
// CHECK: nvvm.barrier0
// CHECK-COUNT-4: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xf32>
// CHECK-NOT: -> f32
// CHECK-COUNT-4: llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<3> -> !llvm.ptr<1>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @convert(%p: !tile.ptr<f32>) attributes {tile.kernel} {
    %ps = tile.splat %p : tensor<512x!tile.ptr<f32>, #a>
    %r = tile.arange 0 to 512 : tensor<512xi32, #a>
    %ptrs = tile.addptr %ps, %r : tensor<512x!tile.ptr<f32>, #a>, tensor<512xi32, #a>
    %x = tile.load %ptrs : tensor<512x!tile.ptr<f32>, #a>
    %y = tilegpu.convert_layout %x : tensor<512xf32, #a> -> tensor<512xf32, #c>
    %ptrs2 = tilegpu.convert_layout %ptrs : tensor<512x!tile.ptr<f32>, #a> -> tensor<512x!tile.ptr<f32>, #c>
    tile.store %ptrs2, %y : tensor<512x!tile.ptr<f32>, #c>
    return
  }
}

// -----

// An mma accumulator to a layout of 16-byte rows, as an epilogue stores
// it: pairs written, eight f16 read at once. Rows of 64 f16 are 32 banks
// long, so the eight rows a store reaches would meet in the same banks:
// the scratch pads each row by 16 bytes (a stride of 72 elements).
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [1, 1]>
#rows = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]>
// CHECK: module attributes {tilegpu.num_warps = 1 : i32, tilegpu.shared_bytes = 2304 : i64, tilegpu.target = #tilegpu.target<sm_90a>}
// CHECK-LABEL: llvm.func @padded_rows
// CHECK: nvvm.barrier0
// CHECK: llvm.mlir.constant(72 : i32)
// CHECK-COUNT-16: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : vector<2xf16>, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK-COUNT-4: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xf16>
// CHECK-NOT: llvm.load
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @padded_rows(%p: !tile.ptr<f16>) attributes {tile.kernel} {
    %x = arith.constant dense<1.0> : tensor<16x64xf16, #mma>
    %y = tilegpu.convert_layout %x : tensor<16x64xf16, #mma> -> tensor<16x64xf16, #rows>
    %r = tile.arange 0 to 64 : tensor<64xi32, #tilegpu.slice<dim = 0, parent = #rows>>
    %c = tile.expand_dims %r {axis = 0 : i32} : tensor<64xi32, #tilegpu.slice<dim = 0, parent = #rows>> -> tensor<1x64xi32, #rows>
    %cb = tile.broadcast %c : tensor<1x64xi32, #rows> -> tensor<16x64xi32, #rows>
    %ps = tile.splat %p : tensor<16x64x!tile.ptr<f16>, #rows>
    %ptrs = tile.addptr %ps, %cb : tensor<16x64x!tile.ptr<f16>, #rows>, tensor<16x64xi32, #rows>
    tile.store %ptrs, %y : tensor<16x64x!tile.ptr<f16>, #rows>
    return
  }
}

// -----

// Block pointers: the element index is offset + coordinate, checked against
// the shape in the boundary_check dimensions only; NaN pads.
#b = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]>
// CHECK-LABEL: llvm.func @block
// CHECK: llvm.insertvalue
// CHECK: llvm.icmp "sge"
// CHECK: llvm.icmp "slt"
// CHECK-NOT: llvm.icmp "sge"
// CHECK: llvm.mlir.constant(0x7FC00000 : f32) : f32
// CHECK: llvm.intr.masked.load
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @block(%base: !tile.ptr<f32>, %rows: i64, %cols: i64, %stride: i64, %o: i32) attributes {tile.kernel} {
    %c1 = arith.constant 1 : i64
    %c0 = arith.constant 0 : i32
    %bp = tile.make_block_ptr %base, [%rows, %cols], [%stride, %c1], [%o, %c0] order [1, 0] : !tile.block_ptr<tensor<4x8xf32, #b>>
    %bp2 = tile.advance %bp, [%o, %c0] : !tile.block_ptr<tensor<4x8xf32, #b>>
    %d = tile.load_block %bp2 boundary_check [0] padding nan : !tile.block_ptr<tensor<4x8xf32, #b>>
    tile.store_block %bp, %d : !tile.block_ptr<tensor<4x8xf32, #b>>
    return
  }
}

// -----

// An access coalesced to four elements: one 16-byte load, whose masked-off
// groups read the module's zero array instead of branching, and one
// 16-byte masked store.
#v = #tilegpu.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]>
// CHECK: llvm.mlir.global internal constant @tile_masked_off_load(dense<0> : tensor<16xi8>) {addr_space = 1 : i32, alignment = 16 : i64}
// CHECK-LABEL: llvm.func @vector_access
// CHECK: %[[OFF:.*]] = llvm.mlir.addressof @tile_masked_off_load : !llvm.ptr<1>
// CHECK: %[[ADDR:.*]] = llvm.select %{{.*}}, %{{.*}}, %[[OFF]] : i1, !llvm.ptr<1>
// CHECK: llvm.load %[[ADDR]] {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: llvm.intr.masked.store %{{.*}}, %{{.*}}, %{{.*}} {alignment = 16 : i32} : vector<4xf32>, vector<4xi1> into !llvm.ptr<1>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @vector_access(%x: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
    %r = tile.arange 0 to 128 : tensor<128xi32, #v>
    %ns = tile.splat %n : tensor<128xi32, #v>
    %m = arith.cmpi slt, %r, %ns : tensor<128xi32, #v>
    %xs = tile.splat %x : tensor<128x!tile.ptr<f32>, #v>
    %p = tile.addptr %xs, %r : tensor<128x!tile.ptr<f32>, #v>, tensor<128xi32, #v>
    %a = tile.load %p mask %m {tilegpu.vector_width = 4 : i32} : tensor<128x!tile.ptr<f32>, #v>
    tile.store %p, %a mask %m {tilegpu.vector_width = 4 : i32} : tensor<128x!tile.ptr<f32>, #v>
    return
  }
}

// -----

// A row proven for four elements at a time that ended in a layout holding
// runs of two (the columns of an mma accumulator, as the attention
// backward reads LSE): 8-byte loads, two a thread.
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [1, 1]>
#cols = #tilegpu.slice<dim = 0, parent = #mma>
// CHECK-LABEL: llvm.func @row_runs
// CHECK-COUNT-2: llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<1> -> vector<2xf32>
// CHECK-NOT: llvm.load
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @row_runs(%x: !tile.ptr<f32>, %o: !tile.ptr<f32>) attributes {tile.kernel} {
    %r = tile.arange 0 to 16 : tensor<16xi32, #cols>
    %xs = tile.splat %x : tensor<16x!tile.ptr<f32>, #cols>
    %p = tile.addptr %xs, %r : tensor<16x!tile.ptr<f32>, #cols>, tensor<16xi32, #cols>
    %a = tile.load %p {tilegpu.vector_width = 4 : i32} : tensor<16x!tile.ptr<f32>, #cols>
    %os = tile.splat %o : tensor<16x!tile.ptr<f32>, #cols>
    %po = tile.addptr %os, %r : tensor<16x!tile.ptr<f32>, #cols>, tensor<16xi32, #cols>
    tile.store %po, %a : tensor<16x!tile.ptr<f32>, #cols>
    return
  }
}

// -----

// Atomic adds: one per element, by its canonical holder, as a predicated
// `red` when the old values are not used and an `atom` when they are (zero
// where the mask is off). 64 elements over 32 lanes of one warp: two
// registers a thread, no copies.
#b = #tilegpu.blocked<sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]>
// CHECK-LABEL: llvm.func @atomic_adds
// CHECK-COUNT-2: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, $0, 0;\0A@p red.global.add.f32 [$1], $2;\0A}", "r,l,f"
// CHECK-COUNT-2: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, $1, 0;\0Amov.b32 $0, 0;\0A@p atom.global.add.u32 $0, [$2], $3;\0A}", "=r,r,l,r" {{.*}} -> i32
// CHECK: llvm.intr.masked.store
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @atomic_adds(%f: !tile.ptr<f32>, %i: !tile.ptr<i32>) attributes {tile.kernel} {
    %r = tile.arange 0 to 64 : tensor<64xi32, #b>
    %pf = tile.splat %f : tensor<64x!tile.ptr<f32>, #b>
    %ones = arith.constant dense<1.0> : tensor<64xf32, #b>
    tile.atomic_rmw add %pf, %ones : tensor<64x!tile.ptr<f32>, #b>
    %pi0 = tile.splat %i : tensor<64x!tile.ptr<i32>, #b>
    %pi = tile.addptr %pi0, %r : tensor<64x!tile.ptr<i32>, #b>, tensor<64xi32, #b>
    %c32 = arith.constant dense<32> : tensor<64xi32, #b>
    %m = arith.cmpi slt, %r, %c32 : tensor<64xi32, #b>
    %old = tile.atomic_rmw add %pi, %r mask %m : tensor<64x!tile.ptr<i32>, #b>
    tile.store %pi, %old : tensor<64x!tile.ptr<i32>, #b>
    return
  }
}

// -----

// The other updates: `red` or `atom` of their own op (integers signed for
// max and min, bits for and, or, xor); exchange always an `atom` (there is
// no `red.exch`), f32 moved as b32; f32 max and min on the bit patterns,
// max.s32 where the value is non-negative and min.u32 where it is negative
// (min: the reverse), the old bits given back as f32.
#b = #tilegpu.blocked<sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]>
// CHECK-LABEL: llvm.func @atomic_updates
// CHECK-COUNT-2: "{\0A.reg .pred p;\0Asetp.ne.b32 p, $0, 0;\0A@p red.global.max.s32 [$1], $2;\0A}", "r,l,r"
// CHECK-COUNT-2: "{\0A.reg .pred p;\0Asetp.ne.b32 p, $0, 0;\0A@p red.global.xor.b64 [$1], $2;\0A}", "r,l,l"
// CHECK-COUNT-2: "{\0A.reg .pred p;\0Asetp.ne.b32 p, $1, 0;\0Amov.b32 $0, 0;\0A@p atom.global.exch.b32 $0, [$2], $3;\0A}", "=r,r,l,r"
// CHECK-COUNT-2: "{\0A.reg .pred p;\0Asetp.ne.b32 p, $1, 0;\0A.reg .pred up, down;\0Asetp.ge.and.s32 up, $3, 0, p;\0Asetp.lt.and.s32 down, $3, 0, p;\0Amov.b32 $0, 0;\0A@up atom.global.min.s32 $0, [$2], $3;\0A@down atom.global.max.u32 $0, [$2], $3;\0A}", "=r,r,l,r"
// CHECK: llvm.bitcast {{.*}} : i32 to f32
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @atomic_updates(%f: !tile.ptr<f32>, %i: !tile.ptr<i32>, %l: !tile.ptr<i64>) attributes {tile.kernel} {
    %r = tile.arange 0 to 64 : tensor<64xi32, #b>
    %pi0 = tile.splat %i : tensor<64x!tile.ptr<i32>, #b>
    %pi = tile.addptr %pi0, %r : tensor<64x!tile.ptr<i32>, #b>, tensor<64xi32, #b>
    tile.atomic_rmw max %pi, %r : tensor<64x!tile.ptr<i32>, #b>
    %pl0 = tile.splat %l : tensor<64x!tile.ptr<i64>, #b>
    %pl = tile.addptr %pl0, %r : tensor<64x!tile.ptr<i64>, #b>, tensor<64xi32, #b>
    %r64 = arith.extsi %r : tensor<64xi32, #b> to tensor<64xi64, #b>
    tile.atomic_rmw xor %pl, %r64 : tensor<64x!tile.ptr<i64>, #b>
    %pf0 = tile.splat %f : tensor<64x!tile.ptr<f32>, #b>
    %pf = tile.addptr %pf0, %r : tensor<64x!tile.ptr<f32>, #b>, tensor<64xi32, #b>
    %x = arith.sitofp %r : tensor<64xi32, #b> to tensor<64xf32, #b>
    %swapped = tile.atomic_rmw xchg %pf, %x : tensor<64x!tile.ptr<f32>, #b>
    %least = tile.atomic_rmw min %pf, %swapped : tensor<64x!tile.ptr<f32>, #b>
    tile.store %pf, %least : tensor<64x!tile.ptr<f32>, #b>
    return
  }
}

// -----

// A scalar atomic whose old element is used (a ticket counter): thread 0
// updates and stores the old element to its shared-memory slot between two
// barriers; every thread loads it.
// CHECK-LABEL: llvm.func @ticket
// CHECK: atom.global.add.u32 $0, [$2], $3;
// CHECK: nvvm.barrier
// CHECK: "{\0A.reg .pred p;\0Asetp.ne.b32 p, $0, 0;\0A@p st.shared.b32 [$1], $2;\0A}", "r,r,r"
// CHECK: nvvm.barrier
// CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> i32
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @ticket(%counter: !tile.ptr<i32>, %out: !tile.ptr<i32>) attributes {tile.kernel} {
    %one = arith.constant 1 : i32
    %ticket = tile.atomic_rmw add %counter, %one : !tile.ptr<i32>
    tile.store %out, %ticket : !tile.ptr<i32>
    return
  }
}

// -----

// A lock (Triton's layer-norm backward): the acquiring compare-and-swap
// by thread 0, its old element shared, a barrier after it so that every
// thread's later accesses follow it; the releasing exchange after a barrier
// that every thread's earlier accesses precede. Ordering qualifiers go
// before the state space; relaxed at device scope has none. An add that
// acquires is an `atom` even when its old element is unused (`red` only
// releases), between barriers.
// CHECK-LABEL: llvm.func @lock
// CHECK: atom.acquire.gpu.global.cas.b32 $0, [$2], $3, $4;
// CHECK: nvvm.barrier
// CHECK: st.shared.b32
// CHECK: nvvm.barrier
// CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> i32
// CHECK: nvvm.barrier
// CHECK: atom.release.cta.global.exch.b32 $0, [$2], $3;
// CHECK-NOT: nvvm.barrier
// CHECK: atom.global.cas.b32
// CHECK: nvvm.barrier
// CHECK: atom.acq_rel.gpu.global.add.f32
// CHECK-NEXT: nvvm.barrier
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @lock(%lock: !tile.ptr<i32>, %out: !tile.ptr<i32>, %f: !tile.ptr<f32>) attributes {tile.kernel} {
    %zero = arith.constant 0 : i32
    %one = arith.constant 1 : i32
    %held = tile.atomic_cas %lock, %zero, %one sem acquire : !tile.ptr<i32>
    tile.store %out, %held : !tile.ptr<i32>
    tile.atomic_rmw xchg %lock, %zero sem release scope cta : !tile.ptr<i32>
    %again = tile.atomic_cas %lock, %zero, %one : !tile.ptr<i32>
    tile.store %out, %again : !tile.ptr<i32>
    %x = arith.constant 1.0 : f32
    tile.atomic_rmw add %f, %x sem acq_rel : !tile.ptr<f32>
    return
  }
}

// -----

// Triton's default, acq_rel: the barrier before the compare-and-swap (it
// releases) also finishes the slot's earlier readers, so thread 0 stores
// the old element with no second one; the barrier after the store is the
// acquiring one. tl.debug_barrier before a releasing exchange is the
// barrier the exchange would make: one, not two.
// CHECK-LABEL: llvm.func @spin_lock
// CHECK: nvvm.barrier
// CHECK-NOT: nvvm.barrier
// CHECK: atom.acq_rel.gpu.global.cas.b32
// CHECK-NOT: nvvm.barrier
// CHECK: st.shared.b32
// CHECK-NEXT: nvvm.barrier
// CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> i32
// CHECK: nvvm.barrier
// CHECK-NOT: nvvm.barrier
// CHECK: atom.acq_rel.gpu.global.exch.b32
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @spin_lock(%lock: !tile.ptr<i32>, %out: !tile.ptr<i32>) attributes {tile.kernel} {
    %zero = arith.constant 0 : i32
    %one = arith.constant 1 : i32
    %held = tile.atomic_cas %lock, %zero, %one sem acq_rel : !tile.ptr<i32>
    tile.store %out, %held : !tile.ptr<i32>
    tile.debug_barrier
    %old = tile.atomic_rmw xchg %lock, %zero sem acq_rel : !tile.ptr<i32>
    return
  }
}

// -----

// tl.debug_barrier: a barrier of the program.
// CHECK-LABEL: llvm.func @debug_barrier
// CHECK: nvvm.barrier
// CHECK-NEXT: llvm.return
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @debug_barrier() attributes {tile.kernel} {
    tile.debug_barrier
    return
  }
}

// -----

// tl.device_print: each element once, by its holder, through vprintf with
// its program id, its index and its value as a double; a scalar by thread
// 0. tl.device_assert: __assertfail where an element is false.
// CHECK-DAG: llvm.mlir.global internal constant @tile_str_{{[0-9]+}}("pid (%u, %u, %u) idx (%d) x = (operand 0) %.9g\0A\00")
// CHECK-DAG: llvm.mlir.global internal constant @tile_str_{{[0-9]+}}("pid (%u, %u, %u) x = (operand 1) %d\0A\00")
// CHECK-DAG: llvm.mlir.global internal constant @tile_str_{{[0-9]+}}("pid (%u, %u, %u) 100%% done\0A\00")
// CHECK-DAG: llvm.func @vprintf(!llvm.ptr, !llvm.ptr) -> i32
// CHECK-DAG: llvm.func @__assertfail(!llvm.ptr, !llvm.ptr, i32, !llvm.ptr, i64)
// CHECK-LABEL: llvm.func @debug_ops
// CHECK: llvm.alloca {{.*}} x !llvm.struct<(i32, i32, i32, i32, f64)>
// CHECK: llvm.fpext {{.*}} : f32 to f64
// CHECK: llvm.call @vprintf
// CHECK: llvm.call @vprintf
// CHECK: llvm.call @__assertfail
#b = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [2], order = [0]>
module attributes {tilegpu.num_warps = 2 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @debug_ops(%f: f32, %n: i32) attributes {tile.kernel} {
    %x = tile.splat %f : tensor<64xf32, #b>
    tile.print "x = " : %x, %n : tensor<64xf32, #b>, i32
    %zero = arith.constant 0 : i32
    %ok = arith.cmpi sgt, %n, %zero : i32
    tile.assert %ok, "n is positive" : i1
    tile.print "100% done"
    return
  }
}

// -----

// A tile of compare-and-swaps: one `atom.cas` per element, f32 as its bits.
// CHECK-LABEL: llvm.func @swap_tile
// CHECK: atom.relaxed.sys.global.cas.b32 $0, [$2], $3, $4;
// CHECK: llvm.bitcast {{.*}} : i32 to f32
#b = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [2], order = [0]>
module attributes {tilegpu.num_warps = 2 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @swap_tile(%f: !tile.ptr<f32>) attributes {tile.kernel} {
    %r = tile.arange 0 to 64 : tensor<64xi32, #b>
    %p0 = tile.splat %f : tensor<64x!tile.ptr<f32>, #b>
    %p = tile.addptr %p0, %r : tensor<64x!tile.ptr<f32>, #b>, tensor<64xi32, #b>
    %x = arith.sitofp %r : tensor<64xi32, #b> to tensor<64xf32, #b>
    %old = tile.atomic_cas %p, %x, %x scope sys : tensor<64x!tile.ptr<f32>, #b>
    tile.store %p, %old : tensor<64x!tile.ptr<f32>, #b>
    return
  }
}

// -----

// An add tilegpu-coalesce vectorised goes out as one `red.v4` per four
// registers (sm_90), the mask taken from the first of them: 256 elements,
// eight registers a thread, two adds.
#v = #tilegpu.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]>
// CHECK-LABEL: llvm.func @vector_atomic_adds
// CHECK-COUNT-2: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, $0, 0;\0A@p red.global.add.v4.f32 [$1], {$2, $3, $4, $5};\0A}", "r,l,f,f,f,f"
// CHECK-NOT: red.global
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @vector_atomic_adds(%f: !tile.ptr<f32>, %n: i32) attributes {tile.kernel} {
    %r = tile.arange 0 to 256 : tensor<256xi32, #v>
    %p0 = tile.splat %f : tensor<256x!tile.ptr<f32>, #v>
    %p = tile.addptr %p0, %r : tensor<256x!tile.ptr<f32>, #v>, tensor<256xi32, #v>
    %ns = tile.splat %n : tensor<256xi32, #v>
    %m = arith.cmpi slt, %r, %ns : tensor<256xi32, #v>
    %ones = arith.constant dense<1.0> : tensor<256xf32, #v>
    tile.atomic_rmw add %p, %ones mask %m {tilegpu.vector_width = 4 : i32} : tensor<256x!tile.ptr<f32>, #v>
    return
  }
}

// -----

// Rounding to fp8 takes the registers two at a time through cvt.rn.satfinite
// (nvvm.convert.f32x2.to.f8x2), f16 widened to f32 first; an odd register
// count converts the last one with itself.
#one = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]>
#two = #tilegpu.blocked<sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]>
// CHECK-LABEL: llvm.func @to_fp8
// CHECK: nvvm.convert.f32x2.to.f8x2 %[[X:.*]], %[[X]] {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : vector<2xi8>(f8E4M3FN)
// CHECK: llvm.fpext %{{.*}} : f16 to f32
// CHECK: llvm.fpext %{{.*}} : f16 to f32
// CHECK: nvvm.convert.f32x2.to.f8x2 {{.*}} : vector<2xi8>(f8E5M2)
// CHECK-NOT: nvvm.convert.f32x2.to.f8x2
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @to_fp8(%x: f32, %h: f16, %p: !tile.ptr<f8E4M3FN>, %q: !tile.ptr<f8E5M2>) attributes {tile.kernel} {
    %xs = tile.splat %x : tensor<32xf32, #one>
    %hs = tile.splat %h : tensor<64xf16, #two>
    %a = arith.truncf %xs : tensor<32xf32, #one> to tensor<32xf8E4M3FN, #one>
    %b = arith.truncf %hs : tensor<64xf16, #two> to tensor<64xf8E5M2, #two>
    %ps = tile.splat %p : tensor<32x!tile.ptr<f8E4M3FN>, #one>
    %qs = tile.splat %q : tensor<64x!tile.ptr<f8E5M2>, #two>
    tile.store %ps, %a : tensor<32x!tile.ptr<f8E4M3FN>, #one>
    tile.store %qs, %b : tensor<64x!tile.ptr<f8E5M2>, #two>
    return
  }
}

// -----

// Rounding f32 to f16 or bf16 takes the registers two at a time too (one
// cvt.rn.f16x2.f32 a pair: nvvm.convert.f32x2.to.f16x2, the second register
// in the high half); a single register is rounded alone.
#one = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]>
#two = #tilegpu.blocked<sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]>
// CHECK-LABEL: llvm.func @to_half_pairs
// CHECK: %[[LO:.*]] = llvm.extractvalue %{{.*}}[0] : !llvm.struct<(f32, f32)>
// CHECK: %[[HI:.*]] = llvm.extractvalue %{{.*}}[1] : !llvm.struct<(f32, f32)>
// CHECK: nvvm.convert.f32x2.to.f16x2 %[[HI]], %[[LO]] {rnd = #nvvm.fp_rnd_mode<rn>} : vector<2xf16>
// CHECK: nvvm.convert.f32x2.to.bf16x2 %{{.*}}, %{{.*}} {rnd = #nvvm.fp_rnd_mode<rn>} : vector<2xbf16>
// CHECK-NOT: nvvm.convert.f32x2
// CHECK: llvm.fptrunc %{{.*}} : f32 to f16
// CHECK-NOT: llvm.fptrunc
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @to_half_pairs(%x: f32, %p: !tile.ptr<f16>, %q: !tile.ptr<bf16>) attributes {tile.kernel} {
    %xs = tile.splat %x : tensor<64xf32, #two>
    %ys = tile.splat %x : tensor<32xf32, #one>
    %a = arith.truncf %xs : tensor<64xf32, #two> to tensor<64xf16, #two>
    %b = arith.truncf %xs : tensor<64xf32, #two> to tensor<64xbf16, #two>
    %c = arith.truncf %ys : tensor<32xf32, #one> to tensor<32xf16, #one>
    %ps = tile.splat %p : tensor<64x!tile.ptr<f16>, #two>
    %qs = tile.splat %q : tensor<64x!tile.ptr<bf16>, #two>
    %rs = tile.splat %p : tensor<32x!tile.ptr<f16>, #one>
    tile.store %ps, %a : tensor<64x!tile.ptr<f16>, #two>
    tile.store %qs, %b : tensor<64x!tile.ptr<bf16>, #two>
    tile.store %rs, %c : tensor<32x!tile.ptr<f16>, #one>
    return
  }
}

// -----

// A tile times a broadcast row with far fewer registers (attention's
// rescale of its accumulator): a warp whose row scales are all exactly 1
// skips the 128 multiplies behind one vote; else it multiplies. A tile of
// few registers a scale multiplies without a vote.
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
#rows = #tilegpu.slice<dim = 1, parent = #mma>
#small = #tilegpu.blocked<sizePerThread = [1, 2], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], order = [1, 0]>
#smallrows = #tilegpu.slice<dim = 1, parent = #small>
// CHECK-LABEL: llvm.func @unit_scale
// CHECK: %[[ONE:.*]] = llvm.mlir.constant(1.000000e+00 : f32) : f32
// CHECK: llvm.fcmp "oeq" %{{.*}}, %[[ONE]] : f32
// CHECK: llvm.fcmp "oeq" %{{.*}}, %[[ONE]] : f32
// CHECK-NOT: llvm.fcmp
// CHECK: %[[ALL:.*]] = nvvm.vote.sync  all %{{.*}}, %{{.*}} -> i1
// CHECK: scf.if %[[ALL]] -> (f32, f32,
// CHECK-NOT: llvm.fmul
// CHECK: } else {
// CHECK-COUNT-128: llvm.fmul
// CHECK-NOT: llvm.fmul
// CHECK: scf.yield
// CHECK-NOT: nvvm.vote.sync
// CHECK-COUNT-2: llvm.fmul
// CHECK-NOT: llvm.fmul
// CHECK: llvm.return
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @unit_scale(%x: f32, %s: f32, %p: !tile.ptr<f32>, %q: !tile.ptr<f32>) attributes {tile.kernel} {
    %z = arith.constant 0 : i32
    %one = arith.constant 1 : i64
    %c2 = arith.constant 2 : i64
    %c64 = arith.constant 64 : i64
    %c128 = arith.constant 128 : i64
    %c256 = arith.constant 256 : i64
    %acc = tile.splat %x : tensor<64x256xf32, #mma>
    %row = tile.splat %s : tensor<64xf32, #rows>
    %e = tile.expand_dims %row {axis = 1 : i32} : tensor<64xf32, #rows> -> tensor<64x1xf32, #mma>
    %b = tile.broadcast %e : tensor<64x1xf32, #mma> -> tensor<64x256xf32, #mma>
    %y = arith.mulf %acc, %b : tensor<64x256xf32, #mma>
    %bp = tile.make_block_ptr %p, [%c64, %c256], [%c256, %one], [%z, %z] order [1, 0] : !tile.block_ptr<tensor<64x256xf32, #mma>>
    tile.store_block %bp, %y : !tile.block_ptr<tensor<64x256xf32, #mma>>
    %t = tile.splat %x : tensor<128x2xf32, #small>
    %r = tile.splat %s : tensor<128xf32, #smallrows>
    %re = tile.expand_dims %r {axis = 1 : i32} : tensor<128xf32, #smallrows> -> tensor<128x1xf32, #small>
    %rb = tile.broadcast %re : tensor<128x1xf32, #small> -> tensor<128x2xf32, #small>
    %u = arith.mulf %t, %rb : tensor<128x2xf32, #small>
    %bq = tile.make_block_ptr %q, [%c128, %c2], [%c2, %one], [%z, %z] order [1, 0] : !tile.block_ptr<tensor<128x2xf32, #small>>
    tile.store_block %bq, %u : !tile.block_ptr<tensor<128x2xf32, #small>>
    return
  }
}

// -----

// A tile smaller than its layout's span repeats its elements in registers
// (an 8-column tile in a 128-column wgmma layout: each of a thread's four
// elements in 16 registers). A sum counts each element once: in the thread
// one add a row (two rows), then two shuffle rounds a row.
// CHECK-LABEL: llvm.func @sum_of_a_repeated_tile
// CHECK-COUNT-6: llvm.fadd
// CHECK-NOT: llvm.fadd
// CHECK: llvm.return
#mma = #tilegpu.mma<version = 3, warpsPerCTA = [8, 1], instrShape = [64, 128]>
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @sum_of_a_repeated_tile(%p: !tile.ptr<f32>, %x: f32) attributes {tile.kernel} {
    %t = tile.splat %x : tensor<128x8xf32, #mma>
    %s = tile.reduce sum %t axis 1 : tensor<128x8xf32, #mma> -> tensor<128xf32, #tilegpu.slice<dim = 1, parent = #mma>>
    %ps = tile.splat %p : tensor<128x!tile.ptr<f32>, #tilegpu.slice<dim = 1, parent = #mma>>
    tile.store %ps, %s : tensor<128x!tile.ptr<f32>, #tilegpu.slice<dim = 1, parent = #mma>>
    return
  }
}
