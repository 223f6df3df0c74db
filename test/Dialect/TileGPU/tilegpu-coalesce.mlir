// RUN: tile-opt %s -split-input-file -tilegpu-coalesce | FileCheck %s

// A contiguous access whose pointers are 16-byte aligned and whose mask is
// constant over groups of four (n divisible by 16) moves four f32 at once:
// the access gets a layout with four contiguous elements per thread.

#b = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
// CHECK-DAG: #[[V:.*]] = #tilegpu.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
// CHECK-LABEL: func.func @aligned
// CHECK: %[[P:.*]] = tilegpu.convert_layout %{{.*}} : tensor<512x!tile.ptr<f32>, #blocked> -> tensor<512x!tile.ptr<f32>, #[[V]]>
// CHECK: %[[M:.*]] = tilegpu.convert_layout %{{.*}} : tensor<512xi1, #blocked> -> tensor<512xi1, #[[V]]>
// CHECK: %[[X:.*]] = tile.load %[[P]] mask %[[M]] {tilegpu.vector_width = 4 : i32} : tensor<512x!tile.ptr<f32>, #[[V]]>
// CHECK: tilegpu.convert_layout %[[X]] : tensor<512xf32, #[[V]]> -> tensor<512xf32, #blocked>
// CHECK: tile.store %{{.*}}, %{{.*}} mask %{{.*}} {tilegpu.vector_width = 4 : i32} : tensor<512x!tile.ptr<f32>, #[[V]]>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @aligned(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32 {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
    %pid = tile.program_id x
    %c512 = arith.constant 512 : i32
    %start = arith.muli %pid, %c512 : i32
    %r = tile.arange 0 to 512 : tensor<512xi32, #b>
    %s = tile.splat %start : tensor<512xi32, #b>
    %offs = arith.addi %s, %r : tensor<512xi32, #b>
    %ns = tile.splat %n : tensor<512xi32, #b>
    %m = arith.cmpi slt, %offs, %ns : tensor<512xi32, #b>
    %xs = tile.splat %x : tensor<512x!tile.ptr<f32>, #b>
    %p = tile.addptr %xs, %offs : tensor<512x!tile.ptr<f32>, #b>, tensor<512xi32, #b>
    %v = tile.load %p mask %m : tensor<512x!tile.ptr<f32>, #b>
    %w = arith.addf %v, %v : tensor<512xf32, #b>
    tile.store %p, %w mask %m : tensor<512x!tile.ptr<f32>, #b>
    return
  }
}

// -----

// Eight f16 make sixteen bytes; a 2-D tile vectorises along its contiguous
// dimension, lanes along it first.
#b = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK: #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-LABEL: func.func @rows
// CHECK: tile.load %{{.*}} {tilegpu.vector_width = 8 : i32}
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @rows(%x: !tile.ptr<f16> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
    %rows = tile.arange 0 to 64 : tensor<64xi32, #tilegpu.slice<dim = 1, parent = #b>>
    %cols = tile.arange 0 to 64 : tensor<64xi32, #tilegpu.slice<dim = 0, parent = #b>>
    %r2 = tile.expand_dims %rows {axis = 1 : i32} : tensor<64xi32, #tilegpu.slice<dim = 1, parent = #b>> -> tensor<64x1xi32, #b>
    %c2 = tile.expand_dims %cols {axis = 0 : i32} : tensor<64xi32, #tilegpu.slice<dim = 0, parent = #b>> -> tensor<1x64xi32, #b>
    %stride = arith.constant dense<64> : tensor<64x1xi32, #b>
    %rowoff = arith.muli %r2, %stride : tensor<64x1xi32, #b>
    %rb = tile.broadcast %rowoff : tensor<64x1xi32, #b> -> tensor<64x64xi32, #b>
    %cb = tile.broadcast %c2 : tensor<1x64xi32, #b> -> tensor<64x64xi32, #b>
    %offs = arith.addi %rb, %cb : tensor<64x64xi32, #b>
    %xs = tile.splat %x : tensor<64x64x!tile.ptr<f16>, #b>
    %p = tile.addptr %xs, %offs : tensor<64x64x!tile.ptr<f16>, #b>, tensor<64x64xi32, #b>
    %v = tile.load %p : tensor<64x64x!tile.ptr<f16>, #b>
    tile.store %p, %v : tensor<64x64x!tile.ptr<f16>, #b>
    return
  }
}

// -----

// Without promised alignment, or with a mask that can change inside a group
// (n of unknown divisibility), accesses stay one element wide.
#b = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
// CHECK-LABEL: func.func @unaligned
// CHECK-NOT: vector_width
// CHECK-NOT: convert_layout
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @unaligned(%x: !tile.ptr<f32>, %y: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32) attributes {tile.kernel} {
    %r = tile.arange 0 to 128 : tensor<128xi32, #b>
    %xs = tile.splat %x : tensor<128x!tile.ptr<f32>, #b>
    %p = tile.addptr %xs, %r : tensor<128x!tile.ptr<f32>, #b>, tensor<128xi32, #b>
    %v = tile.load %p : tensor<128x!tile.ptr<f32>, #b>
    %ns = tile.splat %n : tensor<128xi32, #b>
    %m = arith.cmpi slt, %r, %ns : tensor<128xi32, #b>
    %ys = tile.splat %y : tensor<128x!tile.ptr<f32>, #b>
    %q = tile.addptr %ys, %r : tensor<128x!tile.ptr<f32>, #b>, tensor<128xi32, #b>
    tile.store %q, %v mask %m : tensor<128x!tile.ptr<f32>, #b>
    return
  }
}

// -----

// A block pointer whose contiguous dimension has stride 1, on a 16-byte
// aligned base with strides and advances that keep vectors aligned, loads
// and stores 8 halves at a time; the pointer carried by the loop changes
// layout with it.
#b = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK: #[[VEC:.*]] = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-LABEL: func.func @block_vectors
// CHECK: tile.make_block_ptr {{.*}} : !tile.block_ptr<tensor<64x64xf16, #[[VEC]]>>
// CHECK: scf.for {{.*}} -> (!tile.block_ptr<tensor<64x64xf16, #[[VEC]]>>)
// CHECK: tile.load_block %{{.*}} boundary_check [0] {tilegpu.vector_width = 8 : i32} : !tile.block_ptr<tensor<64x64xf16, #[[VEC]]>>
// CHECK: tilegpu.convert_layout %{{.*}} : tensor<64x64xf16, #[[VEC]]> -> tensor<64x64xf16, #blocked>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @block_vectors(%p: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %n: i64, %stride: i64 {tile.divisibility = 16 : i32}, %steps: i32, %out: tensor<64x64x!tile.ptr<f16>, #b>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c64 = arith.constant 64 : i32
    %one = arith.constant 1 : i64
    %c64_i64 = arith.constant 64 : i64
    %bp = tile.make_block_ptr %p, [%n, %c64_i64], [%stride, %one], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf16, #b>>
    %last = scf.for %i = %c0 to %steps step %c1 iter_args(%q = %bp) -> (!tile.block_ptr<tensor<64x64xf16, #b>>) : i32 {
      %x = tile.load_block %q boundary_check [0] : !tile.block_ptr<tensor<64x64xf16, #b>>
      tile.store %out, %x : tensor<64x64x!tile.ptr<f16>, #b>
      %next = tile.advance %q, [%c64, %c0] : !tile.block_ptr<tensor<64x64xf16, #b>>
      scf.yield %next : !tile.block_ptr<tensor<64x64xf16, #b>>
    }
    return
  }
}

// -----

// Without a proof of alignment (no divisibility on the stride), the block
// pointer keeps its layout.
#b = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-LABEL: func.func @block_unaligned
// CHECK: tile.load_block %{{.*}} : !tile.block_ptr<tensor<64x64xf16, #blocked>>
// CHECK-NOT: vector_width
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @block_unaligned(%p: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %n: i64, %stride: i64) -> tensor<64x64xf16, #b> {
    %c0 = arith.constant 0 : i32
    %one = arith.constant 1 : i64
    %c64_i64 = arith.constant 64 : i64
    %bp = tile.make_block_ptr %p, [%n, %c64_i64], [%stride, %one], [%c0, %c0] order [1, 0] : !tile.block_ptr<tensor<64x64xf16, #b>>
    %x = tile.load_block %bp : !tile.block_ptr<tensor<64x64xf16, #b>>
    return %x : tensor<64x64xf16, #b>
  }
}

// -----

// An f32 atomic add whose old values are not read is vectorised on sm_90a
// as a store is (one `red` then adds four); one whose old values are read,
// or an i32 one, keeps its layout and adds one element at a time.
#b = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
// CHECK-DAG: #[[V:.*]] = #tilegpu.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
// CHECK-LABEL: func.func @atomic_vectors
// CHECK: tile.atomic_rmw add %{{.*}}, %{{.*}} {tilegpu.vector_width = 4 : i32} : tensor<512x!tile.ptr<f32>, #[[V]]>
// CHECK: %[[OLD:.*]] = tile.atomic_rmw add %{{.*}}, %{{.*}} : tensor<512x!tile.ptr<f32>, #blocked>
// CHECK: tile.atomic_rmw add %{{.*}}, %{{.*}} : tensor<512x!tile.ptr<i32>, #blocked>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @atomic_vectors(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %y: !tile.ptr<i32> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
    %r = tile.arange 0 to 512 : tensor<512xi32, #b>
    %xs = tile.splat %x : tensor<512x!tile.ptr<f32>, #b>
    %p = tile.addptr %xs, %r : tensor<512x!tile.ptr<f32>, #b>, tensor<512xi32, #b>
    %ones = arith.constant dense<1.0> : tensor<512xf32, #b>
    %unread = tile.atomic_rmw add %p, %ones : tensor<512x!tile.ptr<f32>, #b>
    %old = tile.atomic_rmw add %p, %ones : tensor<512x!tile.ptr<f32>, #b>
    tile.store %p, %old : tensor<512x!tile.ptr<f32>, #b>
    %ys = tile.splat %y : tensor<512x!tile.ptr<i32>, #b>
    %q = tile.addptr %ys, %r : tensor<512x!tile.ptr<i32>, #b>, tensor<512xi32, #b>
    %counts = tile.atomic_rmw add %q, %r : tensor<512x!tile.ptr<i32>, #b>
    return
  }
}

// -----

// On sm_80 there is no vector `red`: the add stays one element at a time.
#b = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
// CHECK-LABEL: func.func @atomic_sm80
// CHECK-NOT: vector_width
// CHECK: tile.atomic_rmw add %{{.*}}, %{{.*}} : tensor<512x!tile.ptr<f32>, #blocked>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_80>} {
  func.func @atomic_sm80(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
    %r = tile.arange 0 to 512 : tensor<512xi32, #b>
    %xs = tile.splat %x : tensor<512x!tile.ptr<f32>, #b>
    %p = tile.addptr %xs, %r : tensor<512x!tile.ptr<f32>, #b>, tensor<512xi32, #b>
    %ones = arith.constant dense<1.0> : tensor<512xf32, #b>
    %unread = tile.atomic_rmw add %p, %ones : tensor<512x!tile.ptr<f32>, #b>
    return
  }
}

// -----

// Offsets permuted in blocks of eight, (i >> 3) * 64 + (i & 7) + 8 * j:
// runs of eight stay contiguous and 32-byte aligned, so the loads move
// four f32 at once. Shifts and low-bit masks are exact in two's
// complement, negative offsets too. i & 6 (not a low-bit mask) and i >> 3
// alone (constant runs, not contiguous) keep one element per access. A
// select whose condition is constant over runs of eight keeps its sides'
// runs (arith.select and tile.where alike).
#b = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
// CHECK-DAG: #[[V:.*]] = #tilegpu.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
// CHECK-LABEL: func.func @blocked_offsets
// CHECK: tile.load %{{.*}} {tilegpu.vector_width = 4 : i32} : tensor<512x!tile.ptr<f32>, #[[V]]>
// CHECK: tile.load %{{.*}} : tensor<512x!tile.ptr<f32>, #blocked>
// CHECK: tile.load %{{.*}} : tensor<512x!tile.ptr<f32>, #blocked>
// CHECK: tile.load %{{.*}} {tilegpu.vector_width = 4 : i32} : tensor<512x!tile.ptr<f32>, #[[V]]>
// CHECK: tile.load %{{.*}} {tilegpu.vector_width = 4 : i32} : tensor<512x!tile.ptr<f32>, #[[V]]>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @blocked_offsets(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %o: !tile.ptr<f32> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
    %r = tile.arange 0 to 512 : tensor<512xi32, #b>
    %c3 = arith.constant dense<3> : tensor<512xi32, #b>
    %c6 = arith.constant dense<6> : tensor<512xi32, #b>
    %c7 = arith.constant dense<7> : tensor<512xi32, #b>
    %c64 = arith.constant dense<64> : tensor<512xi32, #b>
    %hi = arith.shrsi %r, %c3 : tensor<512xi32, #b>
    %lo = arith.andi %r, %c7 : tensor<512xi32, #b>
    %block = arith.muli %hi, %c64 : tensor<512xi32, #b>
    %perm = arith.addi %block, %lo : tensor<512xi32, #b>
    %xs = tile.splat %x : tensor<512x!tile.ptr<f32>, #b>
    %p = tile.addptr %xs, %perm : tensor<512x!tile.ptr<f32>, #b>, tensor<512xi32, #b>
    %v = tile.load %p : tensor<512x!tile.ptr<f32>, #b>
    %gaps = arith.andi %r, %c6 : tensor<512xi32, #b>
    %pg = tile.addptr %xs, %gaps : tensor<512x!tile.ptr<f32>, #b>, tensor<512xi32, #b>
    %g = tile.load %pg : tensor<512x!tile.ptr<f32>, #b>
    %ph = tile.addptr %xs, %hi : tensor<512x!tile.ptr<f32>, #b>, tensor<512xi32, #b>
    %h = tile.load %ph : tensor<512x!tile.ptr<f32>, #b>
    %c256 = arith.constant dense<256> : tensor<512xi32, #b>
    %low = arith.cmpi slt, %r, %c256 : tensor<512xi32, #b>
    %either = arith.select %low, %perm, %r : tensor<512xi1, #b>, tensor<512xi32, #b>
    %ps = tile.addptr %xs, %either : tensor<512x!tile.ptr<f32>, #b>, tensor<512xi32, #b>
    %s = tile.load %ps : tensor<512x!tile.ptr<f32>, #b>
    %where = tile.where %low, %perm, %r : tensor<512xi32, #b>
    %pw = tile.addptr %xs, %where : tensor<512x!tile.ptr<f32>, #b>, tensor<512xi32, #b>
    %w = tile.load %pw : tensor<512x!tile.ptr<f32>, #b>
    %os = tile.splat %o : tensor<512x!tile.ptr<f32>, #b>
    %po = tile.addptr %os, %r : tensor<512x!tile.ptr<f32>, #b>, tensor<512xi32, #b>
    %vg = arith.addf %v, %g : tensor<512xf32, #b>
    %hs = arith.addf %h, %s : tensor<512xf32, #b>
    %hsw = arith.addf %hs, %w : tensor<512xf32, #b>
    %sum = arith.addf %vg, %hsw : tensor<512xf32, #b>
    tile.store %po, %sum : tensor<512x!tile.ptr<f32>, #b>
    return
  }
}

// -----

// A loop's induction variable is a multiple of what divides its lower bound
// and its step: rows read at iv + arange are aligned when both are.  The
// lower bound here is a min and a difference of multiples of 128, the
// upper bound anything.  From 2, two f32 at a time are aligned.
#b = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
// CHECK-LABEL: func.func @loop_rows
// CHECK: scf.for
// CHECK: tile.load %{{.*}} {tilegpu.vector_width = 4 : i32}
// CHECK: scf.for
// CHECK: tile.load %{{.*}} {tilegpu.vector_width = 2 : i32}
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @loop_rows(%x: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %n: i32, %o: !tile.ptr<f32> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
    %pid = tile.program_id x
    %c2 = arith.constant 2 : i32
    %c128 = arith.constant 128 : i32
    %c256 = arith.constant 256 : i32
    %start = arith.muli %pid, %c256 : i32
    %clamped = arith.minsi %start, %c256 : i32
    %lb = arith.subi %clamped, %c128 : i32
    %r = tile.arange 0 to 128 : tensor<128xi32, #b>
    %xs = tile.splat %x : tensor<128x!tile.ptr<f32>, #b>
    %zero = arith.constant dense<0.0> : tensor<128xf32, #b>
    %sum = scf.for %iv = %lb to %n step %c128 iter_args(%acc = %zero) -> (tensor<128xf32, #b>) : i32 {
      %s = tile.splat %iv : tensor<128xi32, #b>
      %offs = arith.addi %s, %r : tensor<128xi32, #b>
      %p = tile.addptr %xs, %offs : tensor<128x!tile.ptr<f32>, #b>, tensor<128xi32, #b>
      %v = tile.load %p : tensor<128x!tile.ptr<f32>, #b>
      %next = arith.addf %acc, %v : tensor<128xf32, #b>
      scf.yield %next : tensor<128xf32, #b>
    }
    %sum2 = scf.for %iv = %c2 to %n step %c128 iter_args(%acc = %sum) -> (tensor<128xf32, #b>) : i32 {
      %s = tile.splat %iv : tensor<128xi32, #b>
      %offs = arith.addi %s, %r : tensor<128xi32, #b>
      %p = tile.addptr %xs, %offs : tensor<128x!tile.ptr<f32>, #b>, tensor<128xi32, #b>
      %v = tile.load %p : tensor<128x!tile.ptr<f32>, #b>
      %next = arith.addf %acc, %v : tensor<128xf32, #b>
      scf.yield %next : tensor<128xf32, #b>
    }
    %os = tile.splat %o : tensor<128x!tile.ptr<f32>, #b>
    %po = tile.addptr %os, %r : tensor<128x!tile.ptr<f32>, #b>, tensor<128xi32, #b>
    tile.store %po, %sum2 : tensor<128x!tile.ptr<f32>, #b>
    return
  }
}

// -----

// Triton's matmul loop: pointers the loop carries, advanced by a constant
// each iteration, and a mask of the keys left. The loop-carried pointers
// are as aligned as their initial value and the advance (AxisInfo joins
// the two), so the load moves 16 bytes at once; and the loop carries the
// pointers in the vector layout itself: one conversion before the loop,
// none in it.
#b = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-DAG: #[[V:.*]] = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-LABEL: func.func @loop_carried
// CHECK: %[[P0:.*]] = tilegpu.convert_layout %{{.*}} : tensor<64x64x!tile.ptr<f16>, #blocked> -> tensor<64x64x!tile.ptr<f16>, #[[V]]>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[P:.*]] = %[[P0]], %{{.*}} = %{{.*}}) -> (tensor<64x64x!tile.ptr<f16>, #[[V]]>, tensor<64x64xf16, #blocked>)
// CHECK-NOT: tilegpu.convert_layout %[[P]]
// CHECK: tile.load %[[P]] mask %{{.*}} {tilegpu.vector_width = 8 : i32} : tensor<64x64x!tile.ptr<f16>, #[[V]]>
// CHECK: %[[NEXT:.*]] = tile.addptr %[[P]], %{{.*}} : tensor<64x64x!tile.ptr<f16>, #[[V]]>, tensor<64x64xi32, #[[V]]>
// CHECK: scf.yield %[[NEXT]], %{{.*}}
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @loop_carried(%x: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %k: i32 {tile.divisibility = 16 : i32}, %out: !tile.ptr<f16> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
    %rows = tile.arange 0 to 64 : tensor<64xi32, #tilegpu.slice<dim = 1, parent = #b>>
    %cols = tile.arange 0 to 64 : tensor<64xi32, #tilegpu.slice<dim = 0, parent = #b>>
    %r2 = tile.expand_dims %rows {axis = 1 : i32} : tensor<64xi32, #tilegpu.slice<dim = 1, parent = #b>> -> tensor<64x1xi32, #b>
    %c2 = tile.expand_dims %cols {axis = 0 : i32} : tensor<64xi32, #tilegpu.slice<dim = 0, parent = #b>> -> tensor<1x64xi32, #b>
    %stride = arith.constant dense<64> : tensor<64x1xi32, #b>
    %rowoff = arith.muli %r2, %stride : tensor<64x1xi32, #b>
    %rb = tile.broadcast %rowoff : tensor<64x1xi32, #b> -> tensor<64x64xi32, #b>
    %cb = tile.broadcast %c2 : tensor<1x64xi32, #b> -> tensor<64x64xi32, #b>
    %offs = arith.addi %rb, %cb : tensor<64x64xi32, #b>
    %base = tile.splat %x : tensor<64x64x!tile.ptr<f16>, #b>
    %p0 = tile.addptr %base, %offs : tensor<64x64x!tile.ptr<f16>, #b>, tensor<64x64xi32, #b>
    %zero = arith.constant dense<0.0> : tensor<64x64xf16, #b>
    %advance = arith.constant dense<64> : tensor<64x64xi32, #b>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c64 = arith.constant 64 : i32
    %n = arith.divsi %k, %c64 : i32
    %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%p = %p0, %acc = %zero) -> (tensor<64x64x!tile.ptr<f16>, #b>, tensor<64x64xf16, #b>) : i32 {
      %done = arith.muli %i, %c64 : i32
      %left = arith.subi %k, %done : i32
      %lefts = tile.splat %left : tensor<64x64xi32, #b>
      %m = arith.cmpi slt, %cb, %lefts : tensor<64x64xi32, #b>
      %v = tile.load %p mask %m other %zero : tensor<64x64x!tile.ptr<f16>, #b>
      %s = arith.addf %acc, %v : tensor<64x64xf16, #b>
      %pn = tile.addptr %p, %advance : tensor<64x64x!tile.ptr<f16>, #b>, tensor<64x64xi32, #b>
      scf.yield %pn, %s : tensor<64x64x!tile.ptr<f16>, #b>, tensor<64x64xf16, #b>
    }
    %outs = tile.splat %out : tensor<64x64x!tile.ptr<f16>, #b>
    %po = tile.addptr %outs, %offs : tensor<64x64x!tile.ptr<f16>, #b>, tensor<64x64xi32, #b>
    tile.store %po, %r#1 : tensor<64x64x!tile.ptr<f16>, #b>
    return
  }
}

// -----

// Triton's persistent matmul clamps the columns past N to column 0, then
// promises (tl.max_contiguous, tl.multiple_of) that the columns still run
// in aligned blocks: the axis analysis takes the promise, and the load
// moves 16 bytes at once.
#b = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
// CHECK-LABEL: func.func @promised
// CHECK: tile.load %{{.*}} {tilegpu.vector_width = 8 : i32} : tensor<128x!tile.ptr<f16>, #{{.*}}>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @promised(%x: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %n: i32, %out: !tile.ptr<f16> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
    %cols = tile.arange 0 to 128 : tensor<128xi32, #b>
    %ns = tile.splat %n : tensor<128xi32, #b>
    %in = arith.cmpi slt, %cols, %ns : tensor<128xi32, #b>
    %zero = arith.constant dense<0> : tensor<128xi32, #b>
    %clamped = tile.where %in, %cols, %zero : tensor<128xi32, #b>
    %offs = tile.axis_hint %clamped {contiguity = array<i64: 128>, divisibility = array<i64: 128>} : tensor<128xi32, #b>
    %xs = tile.splat %x : tensor<128x!tile.ptr<f16>, #b>
    %p = tile.addptr %xs, %offs : tensor<128x!tile.ptr<f16>, #b>, tensor<128xi32, #b>
    %v = tile.load %p : tensor<128x!tile.ptr<f16>, #b>
    %outs = tile.splat %out : tensor<128x!tile.ptr<f16>, #b>
    %q = tile.addptr %outs, %cols : tensor<128x!tile.ptr<f16>, #b>, tensor<128xi32, #b>
    tile.store %q, %v : tensor<128x!tile.ptr<f16>, #b>
    return
  }
}

// -----

// Rows 0..63 times a stride of unknown divisibility: the rows' first
// element is a multiple of 64, but row i's offset i * stride is not, so a
// row's columns start anywhere: no vectors (expand_dims gives its new
// dimension only what divides every element).
#b = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-LABEL: func.func @rows_of_unknown_stride
// CHECK-NOT: vector_width
// CHECK: return
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @rows_of_unknown_stride(%x: !tile.ptr<f16> {tile.divisibility = 16 : i32}, %stride: i32, %out: !tile.ptr<f16> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
    %rows = tile.arange 0 to 64 : tensor<64xi32, #tilegpu.slice<dim = 1, parent = #b>>
    %cols = tile.arange 0 to 128 : tensor<128xi32, #tilegpu.slice<dim = 0, parent = #b>>
    %r2 = tile.expand_dims %rows {axis = 1 : i32} : tensor<64xi32, #tilegpu.slice<dim = 1, parent = #b>> -> tensor<64x1xi32, #b>
    %strides = tile.splat %stride : tensor<64x1xi32, #b>
    %rowoff = arith.muli %r2, %strides : tensor<64x1xi32, #b>
    %c2 = tile.expand_dims %cols {axis = 0 : i32} : tensor<128xi32, #tilegpu.slice<dim = 0, parent = #b>> -> tensor<1x128xi32, #b>
    %rb = tile.broadcast %rowoff : tensor<64x1xi32, #b> -> tensor<64x128xi32, #b>
    %cb = tile.broadcast %c2 : tensor<1x128xi32, #b> -> tensor<64x128xi32, #b>
    %offs = arith.addi %rb, %cb : tensor<64x128xi32, #b>
    %xs = tile.splat %x : tensor<64x128x!tile.ptr<f16>, #b>
    %p = tile.addptr %xs, %offs : tensor<64x128x!tile.ptr<f16>, #b>, tensor<64x128xi32, #b>
    %v = tile.load %p : tensor<64x128x!tile.ptr<f16>, #b>
    %outs = tile.splat %out : tensor<64x128x!tile.ptr<f16>, #b>
    %q = tile.addptr %outs, %offs : tensor<64x128x!tile.ptr<f16>, #b>, tensor<64x128xi32, #b>
    tile.store %q, %v : tensor<64x128x!tile.ptr<f16>, #b>
    return
  }
}
