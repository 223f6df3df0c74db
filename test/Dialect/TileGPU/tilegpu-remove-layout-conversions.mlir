// RUN: tile-opt %s -split-input-file -tilegpu-remove-layout-conversions -canonicalize | FileCheck %s

// One step of online softmax as accelerate-matmul leaves it: the scores come
// out of the dot in the mma layout and go back to blocked for the softmax.
// After the pass the softmax runs in the mma layout, the running max is
// carried in its slice, the index mask is rebuilt in the mma layout, P
// reaches the second dot in registers, and Q's conversion leaves the loop.

#b = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]>
#b1 = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
#a = #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
#bop = #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
#sl = #tilegpu.slice<dim = 1, parent = #b>
#sl0 = #tilegpu.slice<dim = 0, parent = #b>
// CHECK-DAG: #[[MMA:.*]] = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
// CHECK-DAG: #[[A:.*]] = #tilegpu.dot_operand<opIdx = 0, parent = #[[MMA]], kWidth = 2>
// CHECK-DAG: #[[ROW:.*]] = #tilegpu.slice<dim = 1, parent = #[[MMA]]>
// CHECK-DAG: #[[COL:.*]] = #tilegpu.slice<dim = 0, parent = #[[MMA]]>
// CHECK-LABEL: func.func @online_softmax
// CHECK: %[[Q:.*]] = tilegpu.convert_layout %{{.*}} -> tensor<128x64xf16, #[[A]]>
// CHECK: scf.for {{.*}} -> (tensor<128xf32, #[[ROW]]>, tensor<128x64xf32, #[[MMA]]>)
// CHECK:   %[[S:.*]] = tile.dot %[[Q]], %{{.*}}, %{{.*}} -> tensor<128x64xf32, #[[MMA]]>
// CHECK:   tile.arange 0 to 64 : tensor<64xi32, #[[COL]]>
// CHECK:   tile.where %{{.*}} : tensor<128x64xf32, #[[MMA]]>
// CHECK:   tile.reduce max %{{.*}} axis 1 : tensor<128x64xf32, #[[MMA]]> -> tensor<128xf32, #[[ROW]]>
// CHECK:   %[[P:.*]] = arith.truncf %{{.*}} : tensor<128x64xf32, #[[MMA]]> to tensor<128x64xf16, #[[MMA]]>
// CHECK:   %[[PA:.*]] = tilegpu.convert_layout %[[P]] : tensor<128x64xf16, #[[MMA]]> -> tensor<128x64xf16, #[[A]]>
// CHECK:   %[[O:.*]] = tile.dot %[[PA]], %{{.*}}, %{{.*}} -> tensor<128x64xf32, #[[MMA]]>
// CHECK:   scf.yield %{{.*}}, %[[O]] : tensor<128xf32, #[[ROW]]>, tensor<128x64xf32, #[[MMA]]>
// CHECK: tilegpu.convert_layout %{{.*}} : tensor<128x64xf32, #[[MMA]]> -> tensor<128x64xf32, #blocked>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: return
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @online_softmax(%q: tensor<128x64xf16, #b>, %k: tensor<64x64xf16, #b>, %v: tensor<64x64xf16, #b>, %n: i32) -> tensor<128x64xf32, #b> {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.0> : tensor<128x64xf32, #b>
    %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32, #b>
    %m0 = arith.constant dense<0xFF800000> : tensor<128xf32, #b1>
    %r:2 = scf.for %i = %c0 to %n step %c64 iter_args(%m = %m0, %acc = %zero) -> (tensor<128xf32, #b1>, tensor<128x64xf32, #b>) : i32 {
      %qa = tilegpu.convert_layout %q : tensor<128x64xf16, #b> -> tensor<128x64xf16, #a>
      %kb = tilegpu.convert_layout %k : tensor<64x64xf16, #b> -> tensor<64x64xf16, #bop>
      %z = tilegpu.convert_layout %zero : tensor<128x64xf32, #b> -> tensor<128x64xf32, #mma>
      %s0 = tile.dot %qa, %kb, %z : tensor<128x64xf16, #a>, tensor<64x64xf16, #bop> -> tensor<128x64xf32, #mma>
      %s = tilegpu.convert_layout %s0 : tensor<128x64xf32, #mma> -> tensor<128x64xf32, #b>
      // Keys at or past %n are masked.
      %range = tile.arange 0 to 64 : tensor<64xi32, #sl0>
      %start = tile.splat %i : tensor<64xi32, #sl0>
      %keys = arith.addi %start, %range : tensor<64xi32, #sl0>
      %keys2 = tile.expand_dims %keys {axis = 0 : i32} : tensor<64xi32, #sl0> -> tensor<1x64xi32, #b>
      %bound = tile.splat %n : tensor<1x64xi32, #b>
      %inside = arith.cmpi slt, %keys2, %bound : tensor<1x64xi32, #b>
      %mask = tile.broadcast %inside : tensor<1x64xi1, #b> -> tensor<128x64xi1, #b>
      %sm = tile.where %mask, %s, %ninf : tensor<128x64xf32, #b>
      %rowmax = tile.reduce max %sm axis 1 : tensor<128x64xf32, #b> -> tensor<128xf32, #sl>
      %rowmax1 = tilegpu.convert_layout %rowmax : tensor<128xf32, #sl> -> tensor<128xf32, #b1>
      %mnew = arith.maximumf %m, %rowmax1 : tensor<128xf32, #b1>
      %mnew2 = tilegpu.convert_layout %mnew : tensor<128xf32, #b1> -> tensor<128xf32, #sl>
      %mcol = tile.expand_dims %mnew2 {axis = 1 : i32} : tensor<128xf32, #sl> -> tensor<128x1xf32, #b>
      %mbig = tile.broadcast %mcol : tensor<128x1xf32, #b> -> tensor<128x64xf32, #b>
      %diff = arith.subf %sm, %mbig : tensor<128x64xf32, #b>
      %p = tile.exp2 %diff : tensor<128x64xf32, #b>
      %p16 = arith.truncf %p : tensor<128x64xf32, #b> to tensor<128x64xf16, #b>
      %pa = tilegpu.convert_layout %p16 : tensor<128x64xf16, #b> -> tensor<128x64xf16, #a>
      %vb = tilegpu.convert_layout %v : tensor<64x64xf16, #b> -> tensor<64x64xf16, #bop>
      %accm = tilegpu.convert_layout %acc : tensor<128x64xf32, #b> -> tensor<128x64xf32, #mma>
      %o0 = tile.dot %pa, %vb, %accm : tensor<128x64xf16, #a>, tensor<64x64xf16, #bop> -> tensor<128x64xf32, #mma>
      %o = tilegpu.convert_layout %o0 : tensor<128x64xf32, #mma> -> tensor<128x64xf32, #b>
      scf.yield %mnew, %o : tensor<128xf32, #b1>, tensor<128x64xf32, #b>
    }
    return %r#1 : tensor<128x64xf32, #b>
  }
}

// -----

// A value a store needs in its own layout gets one conversion back, at the
// store; the arithmetic before it stays in the mma layout.
#b = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
#a = #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
#bop = #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
// CHECK-LABEL: func.func @store_result
// CHECK: %[[D:.*]] = tile.dot
// CHECK: %[[H:.*]] = arith.truncf %[[D]] : tensor<32x32xf32, #[[MMA:.*]]> to tensor<32x32xf16, #[[MMA]]>
// CHECK: %[[C:.*]] = tilegpu.convert_layout %[[H]] : tensor<32x32xf16, #[[MMA]]> -> tensor<32x32xf16, #blocked>
// CHECK: tile.store %{{.*}}, %[[C]] : tensor<32x32x!tile.ptr<f16>, #blocked>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @store_result(%a: tensor<32x32xf16, #a>, %w: tensor<32x32xf16, #bop>, %acc: tensor<32x32xf32, #mma>, %ptrs: tensor<32x32x!tile.ptr<f16>, #b>) {
    %d0 = tile.dot %a, %w, %acc : tensor<32x32xf16, #a>, tensor<32x32xf16, #bop> -> tensor<32x32xf32, #mma>
    %d = tilegpu.convert_layout %d0 : tensor<32x32xf32, #mma> -> tensor<32x32xf32, #b>
    %h = arith.truncf %d : tensor<32x32xf32, #b> to tensor<32x32xf16, #b>
    tile.store %ptrs, %h : tensor<32x32x!tile.ptr<f16>, #b>
    return
  }
}

// -----

// The attention backward's Pᵀ = exp2(S - lse): S leaves its dot in the mma
// layout, lse is a row of 32 values loaded in a 1-D blocked layout and
// broadcast down the 128 rows. Only the row is converted (to the slice of
// the mma layout) and the broadcast is rebuilt there: no 128x32 conversion.
#b3 = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [8, 1], order = [1, 0]>
#row = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [8, 1]>
#a = #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
#bop = #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
// CHECK-DAG: #[[MMA:.*]] = #tilegpu.mma<version = 2, warpsPerCTA = [8, 1]>
// CHECK-DAG: #[[COLS:.*]] = #tilegpu.slice<dim = 0, parent = #[[MMA]]>
// CHECK-LABEL: func.func @row_broadcast
// CHECK-SAME: %[[LSE:[^:]*]]: tensor<32xf32
// CHECK: %[[S:.*]] = tile.dot
// CHECK: %[[ROW:.*]] = tilegpu.convert_layout %[[LSE]] : tensor<32xf32, #{{.*}}> -> tensor<32xf32, #[[COLS]]>
// CHECK: %[[E:.*]] = tile.expand_dims %[[ROW]] {axis = 0 : i32} : tensor<32xf32, #[[COLS]]> -> tensor<1x32xf32, #[[MMA]]>
// CHECK: %[[M:.*]] = arith.mulf %[[E]], %{{.*}} : tensor<1x32xf32, #[[MMA]]>
// CHECK: %[[B:.*]] = tile.broadcast %[[M]] : tensor<1x32xf32, #[[MMA]]> -> tensor<128x32xf32, #[[MMA]]>
// CHECK: arith.subf %[[S]], %[[B]] : tensor<128x32xf32, #[[MMA]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: return
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @row_broadcast(%k: tensor<128x64xf16, #a>, %qt: tensor<64x32xf16, #bop>, %lse: tensor<32xf32, #row>) -> tensor<128x32xf32, #mma> {
    %zero = arith.constant dense<0.0> : tensor<128x32xf32, #mma>
    %log2e = arith.constant dense<1.44269502> : tensor<1x32xf32, #b3>
    %s = tile.dot %k, %qt, %zero : tensor<128x64xf16, #a>, tensor<64x32xf16, #bop> -> tensor<128x32xf32, #mma>
    %cols = tilegpu.convert_layout %lse : tensor<32xf32, #row> -> tensor<32xf32, #tilegpu.slice<dim = 0, parent = #b3>>
    %e = tile.expand_dims %cols {axis = 0 : i32} : tensor<32xf32, #tilegpu.slice<dim = 0, parent = #b3>> -> tensor<1x32xf32, #b3>
    %m = arith.mulf %e, %log2e : tensor<1x32xf32, #b3>
    %bc = tile.broadcast %m : tensor<1x32xf32, #b3> -> tensor<128x32xf32, #b3>
    %bm = tilegpu.convert_layout %bc : tensor<128x32xf32, #b3> -> tensor<128x32xf32, #mma>
    %d = arith.subf %s, %bm : tensor<128x32xf32, #mma>
    %p = tile.exp2 %d : tensor<128x32xf32, #mma>
    return %p : tensor<128x32xf32, #mma>
  }
}

// -----

// The LSE row of the backward, loaded from memory and wanted in the columns
// of the mma layout: it is read again in that layout (each thread loads the
// values it holds), where the program read it (its latency passes under
// the dot), and nothing goes through shared memory.  The vector width
// tilegpu-coalesce proved for the row stays with it; the lowering narrows
// it to the columns' runs.

#row = #tilegpu.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [8, 1]>
#cols = #tilegpu.slice<dim = 0, parent = #mma>
// CHECK-DAG: #[[MMA:.*]] = #tilegpu.mma<version = 2, warpsPerCTA = [8, 1]>
// CHECK-DAG: #[[COLS:.*]] = #tilegpu.slice<dim = 0, parent = #[[MMA]]>
// CHECK-LABEL: func.func @row_load
// CHECK: %[[I:.*]] = tile.arange 0 to 32 : tensor<32xi32, #[[COLS]]>
// CHECK: %[[P:.*]] = tile.addptr %{{.*}}, %[[I]] : tensor<32x!tile.ptr<f32>, #[[COLS]]>
// CHECK: %[[L:.*]] = tile.load %[[P]] {tilegpu.vector_width = 4 : i32} : tensor<32x!tile.ptr<f32>, #[[COLS]]>
// CHECK: tile.dot
// CHECK: tile.expand_dims %[[L]] {axis = 0 : i32} : tensor<32xf32, #[[COLS]]> -> tensor<1x32xf32, #[[MMA]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: return
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @row_load(%k: tensor<128x64xf16, #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>>, %qt: tensor<64x32xf16, #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>>, %base: !tile.ptr<f32>) -> tensor<128x32xf32, #mma> {
    %zero = arith.constant dense<0.0> : tensor<128x32xf32, #mma>
    %i = tile.arange 0 to 32 : tensor<32xi32, #row>
    %b = tile.splat %base : tensor<32x!tile.ptr<f32>, #row>
    %p = tile.addptr %b, %i : tensor<32x!tile.ptr<f32>, #row>, tensor<32xi32, #row>
    %lse = tile.load %p {tilegpu.vector_width = 4 : i32} : tensor<32x!tile.ptr<f32>, #row>
    %s = tile.dot %k, %qt, %zero : tensor<128x64xf16, #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>>, tensor<64x32xf16, #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>> -> tensor<128x32xf32, #mma>
    %c = tilegpu.convert_layout %lse : tensor<32xf32, #row> -> tensor<32xf32, #cols>
    %e = tile.expand_dims %c {axis = 0 : i32} : tensor<32xf32, #cols> -> tensor<1x32xf32, #mma>
    %bc = tile.broadcast %e : tensor<1x32xf32, #mma> -> tensor<128x32xf32, #mma>
    %d = arith.subf %s, %bc : tensor<128x32xf32, #mma>
    return %d : tensor<128x32xf32, #mma>
  }
}

// -----

// A store between the read and the conversion may change what the row
// reads: it is then read again right after the original read, before the
// store.

#row = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [8, 1]>
#cols = #tilegpu.slice<dim = 0, parent = #mma>
// CHECK-DAG: #[[MMA:.*]] = #tilegpu.mma<version = 2, warpsPerCTA = [8, 1]>
// CHECK-DAG: #[[COLS:.*]] = #tilegpu.slice<dim = 0, parent = #[[MMA]]>
// CHECK-LABEL: func.func @row_load_before_store
// CHECK: %[[L:.*]] = tile.load %{{.*}} : tensor<32x!tile.ptr<f32>, #[[COLS]]>
// CHECK: tile.store
// CHECK: tile.expand_dims %[[L]] {axis = 0 : i32} : tensor<32xf32, #[[COLS]]> -> tensor<1x32xf32, #[[MMA]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: return
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @row_load_before_store(%base: !tile.ptr<f32>, %v: tensor<32xf32, #row>) -> tensor<1x32xf32, #mma> {
    %i = tile.arange 0 to 32 : tensor<32xi32, #row>
    %b = tile.splat %base : tensor<32x!tile.ptr<f32>, #row>
    %p = tile.addptr %b, %i : tensor<32x!tile.ptr<f32>, #row>, tensor<32xi32, #row>
    %lse = tile.load %p : tensor<32x!tile.ptr<f32>, #row>
    tile.store %p, %v : tensor<32x!tile.ptr<f32>, #row>
    %c = tilegpu.convert_layout %lse : tensor<32xf32, #row> -> tensor<32xf32, #cols>
    %e = tile.expand_dims %c {axis = 0 : i32} : tensor<32xf32, #cols> -> tensor<1x32xf32, #mma>
    return %e : tensor<1x32xf32, #mma>
  }
}

// -----

// dQ's atomic adds: the dot result is added from the mma layout (it holds
// each element once), its pointers rebuilt there, rather than moved to the
// blocked layout through shared memory.

#b = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [8, 1], order = [1, 0]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [1, 8]>
// CHECK-DAG: #[[MMA:.*]] = #tilegpu.mma<version = 2, warpsPerCTA = [1, 8]>
// CHECK-LABEL: func.func @atomic_from_mma
// CHECK: %[[DQ:.*]] = tile.dot
// CHECK-NOT: tilegpu.convert_layout
// CHECK: %[[P:.*]] = tile.addptr %{{.*}}, %{{.*}} : tensor<16x128x!tile.ptr<f32>, #[[MMA]]>
// CHECK: tile.atomic_rmw add %[[P]], %[[DQ]] : tensor<16x128x!tile.ptr<f32>, #[[MMA]]>
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @atomic_from_mma(%ds: tensor<16x128xf16, #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>>, %k: tensor<128x128xf16, #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>>, %acc: !tile.ptr<f32>) {
    %zero = arith.constant dense<0.0> : tensor<16x128xf32, #mma>
    %dq = tile.dot %ds, %k, %zero : tensor<16x128xf16, #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>>, tensor<128x128xf16, #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>> -> tensor<16x128xf32, #mma>
    %c = tilegpu.convert_layout %dq : tensor<16x128xf32, #mma> -> tensor<16x128xf32, #b>
    %offs = tile.arange 0 to 128 : tensor<128xi32, #tilegpu.slice<dim = 0, parent = #b>>
    %row = tile.expand_dims %offs {axis = 0 : i32} : tensor<128xi32, #tilegpu.slice<dim = 0, parent = #b>> -> tensor<1x128xi32, #b>
    %cols = tile.broadcast %row : tensor<1x128xi32, #b> -> tensor<16x128xi32, #b>
    %base = tile.splat %acc : tensor<16x128x!tile.ptr<f32>, #b>
    %p = tile.addptr %base, %cols : tensor<16x128x!tile.ptr<f32>, #b>, tensor<16x128xi32, #b>
    %old = tile.atomic_rmw add %p, %c : tensor<16x128x!tile.ptr<f32>, #b>
    return
  }
}

// -----

// An atomic add tilegpu-coalesce vectorised (four f32 along the rows) keeps
// what the mma layout allows when it moves there: two neighbouring columns
// per register pair. One vectorised down the columns keeps nothing: mma
// registers do not run along them.

#v = #tilegpu.blocked<sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [8, 1], order = [1, 0]>
#vt = #tilegpu.blocked<sizePerThread = [4, 1], threadsPerWarp = [16, 2], warpsPerCTA = [1, 8], order = [0, 1]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [1, 8]>
// CHECK-DAG: #[[MMA:.*]] = #tilegpu.mma<version = 2, warpsPerCTA = [1, 8]>
// CHECK-LABEL: func.func @atomic_vector_width
// CHECK: tile.atomic_rmw add %{{.*}}, %{{.*}} {tilegpu.vector_width = 2 : i32} : tensor<16x128x!tile.ptr<f32>, #[[MMA]]>
// CHECK: tile.atomic_rmw add %{{.*}}, %{{.*}} : tensor<16x128x!tile.ptr<f32>, #[[MMA]]>
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @atomic_vector_width(%ds: tensor<16x128xf16, #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>>, %k: tensor<128x128xf16, #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>>, %acc: !tile.ptr<f32>) {
    %zero = arith.constant dense<0.0> : tensor<16x128xf32, #mma>
    %dq = tile.dot %ds, %k, %zero : tensor<16x128xf16, #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>>, tensor<128x128xf16, #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>> -> tensor<16x128xf32, #mma>
    %c = tilegpu.convert_layout %dq : tensor<16x128xf32, #mma> -> tensor<16x128xf32, #v>
    %offs = tile.arange 0 to 128 : tensor<128xi32, #tilegpu.slice<dim = 0, parent = #v>>
    %row = tile.expand_dims %offs {axis = 0 : i32} : tensor<128xi32, #tilegpu.slice<dim = 0, parent = #v>> -> tensor<1x128xi32, #v>
    %cols = tile.broadcast %row : tensor<1x128xi32, #v> -> tensor<16x128xi32, #v>
    %base = tile.splat %acc : tensor<16x128x!tile.ptr<f32>, #v>
    %p = tile.addptr %base, %cols : tensor<16x128x!tile.ptr<f32>, #v>, tensor<16x128xi32, #v>
    %old = tile.atomic_rmw add %p, %c {tilegpu.vector_width = 4 : i32} : tensor<16x128x!tile.ptr<f32>, #v>
    %ct = tilegpu.convert_layout %dq : tensor<16x128xf32, #mma> -> tensor<16x128xf32, #vt>
    %offst = tile.arange 0 to 16 : tensor<16xi32, #tilegpu.slice<dim = 1, parent = #vt>>
    %col = tile.expand_dims %offst {axis = 1 : i32} : tensor<16xi32, #tilegpu.slice<dim = 1, parent = #vt>> -> tensor<16x1xi32, #vt>
    %rows = tile.broadcast %col : tensor<16x1xi32, #vt> -> tensor<16x128xi32, #vt>
    %baset = tile.splat %acc : tensor<16x128x!tile.ptr<f32>, #vt>
    %pt = tile.addptr %baset, %rows : tensor<16x128x!tile.ptr<f32>, #vt>, tensor<16x128xi32, #vt>
    %oldt = tile.atomic_rmw add %pt, %ct {tilegpu.vector_width = 4 : i32} : tensor<16x128x!tile.ptr<f32>, #vt>
    return
  }
}

// -----

// An accumulator carried by a while loop (a Python `while` in a kernel)
// stays in the mma layout, as one carried by scf.for does: the rule that
// scf.while carries a value in one layout through its regions and results
// is the one convert-tile-to-tilegpu follows (LayoutPropagation.h). Before
// both passes shared it, this pass stopped at the loop and left two
// conversions through shared memory in every iteration (mma to blocked at
// the yield, back at the dot).
#b = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
#a = #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
#bop = #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
// CHECK-LABEL: func.func @while_accumulator
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<64x32xf32, #[[MMA:.*]]>
// CHECK: %[[R:.*]]:2 = scf.while (%[[ACC:.*]] = %[[ZERO]], %{{.*}} = %{{.*}}) : (tensor<64x32xf32, #[[MMA]]>, i32) -> (tensor<64x32xf32, #[[MMA]]>, i32)
// CHECK:   scf.condition(%{{.*}}) %{{.*}}, %{{.*}} : tensor<64x32xf32, #[[MMA]]>, i32
// CHECK: ^bb0(%[[IN:.*]]: tensor<64x32xf32, #[[MMA]]>, %{{.*}}: i32):
// CHECK-NOT: tilegpu.convert_layout %[[IN]]
// CHECK:   %[[D:.*]] = tile.dot %{{.*}}, %{{.*}}, %[[IN]] : {{.*}} -> tensor<64x32xf32, #[[MMA]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK:   scf.yield %[[D]], %{{.*}} : tensor<64x32xf32, #[[MMA]]>, i32
// CHECK: %[[OUT:.*]] = tilegpu.convert_layout %[[R]]#0 : tensor<64x32xf32, #[[MMA]]> -> tensor<64x32xf32, #blocked>
// CHECK: return %[[OUT]]
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @while_accumulator(%q: tensor<64x32xf16, #b>, %k: tensor<32x32xf16, #b>, %n: i32) -> tensor<64x32xf32, #b> {
    %zero = arith.constant dense<0.0> : tensor<64x32xf32, #b>
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %r:2 = scf.while (%acc = %zero, %i = %c0) : (tensor<64x32xf32, #b>, i32) -> (tensor<64x32xf32, #b>, i32) {
      %go = arith.cmpi slt, %i, %n : i32
      scf.condition(%go) %acc, %i : tensor<64x32xf32, #b>, i32
    } do {
    ^bb0(%acc: tensor<64x32xf32, #b>, %i: i32):
      %qa = tilegpu.convert_layout %q : tensor<64x32xf16, #b> -> tensor<64x32xf16, #a>
      %kb = tilegpu.convert_layout %k : tensor<32x32xf16, #b> -> tensor<32x32xf16, #bop>
      %accm = tilegpu.convert_layout %acc : tensor<64x32xf32, #b> -> tensor<64x32xf32, #mma>
      %d = tile.dot %qa, %kb, %accm : tensor<64x32xf16, #a>, tensor<32x32xf16, #bop> -> tensor<64x32xf32, #mma>
      %back = tilegpu.convert_layout %d : tensor<64x32xf32, #mma> -> tensor<64x32xf32, #b>
      %next = arith.addi %i, %c1 : i32
      scf.yield %back, %next : tensor<64x32xf32, #b>, i32
    }
    return %r#0 : tensor<64x32xf32, #b>
  }
}

// -----

// A row loaded a step ahead (the next iteration's LSE) and converted each
// iteration to the columns of the mma layout: the loop carries it in those
// columns, both reads rebuilt there, and the conversion leaves the loop.

#row = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [8, 1]>
#cols = #tilegpu.slice<dim = 0, parent = #mma>
// CHECK-DAG: #[[MMA:.*]] = #tilegpu.mma<version = 2, warpsPerCTA = [8, 1]>
// CHECK-DAG: #[[COLS:.*]] = #tilegpu.slice<dim = 0, parent = #[[MMA]]>
// CHECK-LABEL: func.func @row_carried
// CHECK: %[[FIRST:.*]] = tile.load %{{.*}} : tensor<32x!tile.ptr<f32>, #[[COLS]]>
// CHECK: scf.for {{.*}} iter_args(%[[LSE:.*]] = %[[FIRST]], {{.*}}) -> (tensor<32xf32, #[[COLS]]>, tensor<128x32xf32, #[[MMA]]>)
// CHECK-NOT: tilegpu.convert_layout
// CHECK: %[[NEXT:.*]] = tile.load %{{.*}} : tensor<32x!tile.ptr<f32>, #[[COLS]]>
// CHECK: tile.expand_dims %[[LSE]] {axis = 0 : i32}
// CHECK: scf.yield %[[NEXT]], %{{.*}} : tensor<32xf32, #[[COLS]]>, tensor<128x32xf32, #[[MMA]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: return
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @row_carried(%s: tensor<128x32xf32, #mma>, %base: !tile.ptr<f32>, %n: i32) -> tensor<128x32xf32, #mma> {
    %c0 = arith.constant 0 : i32
    %c32 = arith.constant 32 : i32
    %i = tile.arange 0 to 32 : tensor<32xi32, #row>
    %b = tile.splat %base : tensor<32x!tile.ptr<f32>, #row>
    %p0 = tile.addptr %b, %i : tensor<32x!tile.ptr<f32>, #row>, tensor<32xi32, #row>
    %first = tile.load %p0 : tensor<32x!tile.ptr<f32>, #row>
    %r:2 = scf.for %k = %c0 to %n step %c32 iter_args(%lse = %first, %acc = %s) -> (tensor<32xf32, #row>, tensor<128x32xf32, #mma>) : i32 {
      %next_k = arith.addi %k, %c32 : i32
      %o = tile.splat %next_k : tensor<32xi32, #row>
      %off = arith.addi %i, %o : tensor<32xi32, #row>
      %p = tile.addptr %b, %off : tensor<32x!tile.ptr<f32>, #row>, tensor<32xi32, #row>
      %next = tile.load %p : tensor<32x!tile.ptr<f32>, #row>
      %c = tilegpu.convert_layout %lse : tensor<32xf32, #row> -> tensor<32xf32, #cols>
      %e = tile.expand_dims %c {axis = 0 : i32} : tensor<32xf32, #cols> -> tensor<1x32xf32, #mma>
      %bc = tile.broadcast %e : tensor<1x32xf32, #mma> -> tensor<128x32xf32, #mma>
      %d = arith.subf %acc, %bc : tensor<128x32xf32, #mma>
      scf.yield %next, %d : tensor<32xf32, #row>, tensor<128x32xf32, #mma>
    }
    return %r#1 : tensor<128x32xf32, #mma>
  }
}

// -----

// dS^T of the backward, a dot's result rounded to 16 bits and stored to
// shared memory for the next dot: the store writes it from the mma layout
// (two neighbouring columns a register pair, as wide as the blocked layout
// it came in), not after a conversion through shared memory of its own.
// From a blocked layout of 8-element runs the mma layout's pairs would be
// narrower stores: that conversion stays.

#b = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [8, 1], order = [1, 0]>
#b8 = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [8, 1], order = [1, 0]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [8, 1]>
#nvmma = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
// CHECK-DAG: #[[MMA:.*]] = #tilegpu.mma<version = 2, warpsPerCTA = [8, 1]>
// CHECK-LABEL: func.func @store_from_mma
// CHECK: %[[H:.*]] = arith.truncf %{{.*}} : tensor<128x64xf32, #[[MMA]]> to tensor<128x64xf16, #[[MMA]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: tilegpu.local_alloc %[[H]] : tensor<128x64xf16, #[[MMA]]>
// CHECK-LABEL: func.func @store_wider_blocked
// CHECK: tilegpu.convert_layout %{{.*}} : tensor<128x64xf16, #[[MMA]]> -> tensor<128x64xf16, #[[B8:.*]]>
// CHECK: tilegpu.local_alloc %{{.*}} : tensor<128x64xf16, #[[B8]]>
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @store_from_mma(%a: tensor<128x64xf16, #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>>, %bt: tensor<64x64xf16, #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>>) -> !tilegpu.memdesc<128x64xf16, #nvmma> {
    %zero = arith.constant dense<0.0> : tensor<128x64xf32, #mma>
    %s = tile.dot %a, %bt, %zero : tensor<128x64xf16, #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>>, tensor<64x64xf16, #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>> -> tensor<128x64xf32, #mma>
    %sb = tilegpu.convert_layout %s : tensor<128x64xf32, #mma> -> tensor<128x64xf32, #b>
    %h = arith.truncf %sb : tensor<128x64xf32, #b> to tensor<128x64xf16, #b>
    %buf = tilegpu.local_alloc %h : tensor<128x64xf16, #b> -> !tilegpu.memdesc<128x64xf16, #nvmma>
    return %buf : !tilegpu.memdesc<128x64xf16, #nvmma>
  }
  func.func @store_wider_blocked(%a: tensor<128x64xf16, #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>>, %bt: tensor<64x64xf16, #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>>) -> !tilegpu.memdesc<128x64xf16, #nvmma> {
    %zero = arith.constant dense<0.0> : tensor<128x64xf32, #mma>
    %s = tile.dot %a, %bt, %zero : tensor<128x64xf16, #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>>, tensor<64x64xf16, #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>> -> tensor<128x64xf32, #mma>
    %sb = tilegpu.convert_layout %s : tensor<128x64xf32, #mma> -> tensor<128x64xf32, #b8>
    %h = arith.truncf %sb : tensor<128x64xf32, #b8> to tensor<128x64xf16, #b8>
    %buf = tilegpu.local_alloc %h : tensor<128x64xf16, #b8> -> !tilegpu.memdesc<128x64xf16, #nvmma>
    return %buf : !tilegpu.memdesc<128x64xf16, #nvmma>
  }
}

// -----

// A tile loaded for the next iteration (decoding's K, a step ahead) and
// carried converted: the loop carries it as loaded, and the conversion,
// which would wait for the load, moves to the top of the next iteration.
#ld = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]>
#b = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-DAG: #[[LD:.*]] = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-DAG: #[[B:.*]] = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-LABEL: func.func @tile_loaded_ahead
// CHECK: %[[FIRST:.*]] = tile.load %{{.*}} : tensor<32x128x!tile.ptr<f16>, #[[LD]]>
// CHECK: %[[R:.*]]:3 = scf.for {{.*}} iter_args(%[[K:.*]] = %[[FIRST]], {{.*}}) -> (tensor<32x128xf16, #[[LD]]>, tensor<32x128xf16, #[[B]]>,
// CHECK-NEXT: %[[NOW:.*]] = tilegpu.convert_layout %[[K]] : tensor<32x128xf16, #[[LD]]> -> tensor<32x128xf16, #[[B]]>
// CHECK: %[[NEXT:.*]] = tile.load %{{.*}} : tensor<32x128x!tile.ptr<f16>, #[[LD]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: arith.addf %{{.*}}, %[[NOW]]
// CHECK: scf.yield %[[NEXT]], %{{.*}}, %{{.*}} : tensor<32x128xf16, #[[LD]]>, tensor<32x128xf16, #[[B]]>,
// CHECK: tilegpu.convert_layout %[[R]]#0 : tensor<32x128xf16, #[[LD]]> -> tensor<32x128xf16, #[[B]]>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @tile_loaded_ahead(%p: tensor<32x128x!tile.ptr<f16>, #ld>, %step: tensor<32x128xi32, #ld>, %n: i32) -> (tensor<32x128xf16, #b>, tensor<32x128xf16, #b>) {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<32x128xf16, #b>
    %l0 = tile.load %p : tensor<32x128x!tile.ptr<f16>, #ld>
    %first = tilegpu.convert_layout %l0 : tensor<32x128xf16, #ld> -> tensor<32x128xf16, #b>
    %r:3 = scf.for %i = %c0 to %n step %c1 iter_args(%k = %first, %acc = %zero, %q = %p) -> (tensor<32x128xf16, #b>, tensor<32x128xf16, #b>, tensor<32x128x!tile.ptr<f16>, #ld>) : i32 {
      %q2 = tile.addptr %q, %step : tensor<32x128x!tile.ptr<f16>, #ld>, tensor<32x128xi32, #ld>
      %l = tile.load %q2 : tensor<32x128x!tile.ptr<f16>, #ld>
      %next = tilegpu.convert_layout %l : tensor<32x128xf16, #ld> -> tensor<32x128xf16, #b>
      %sum = arith.addf %acc, %k : tensor<32x128xf16, #b>
      scf.yield %next, %sum, %q2 : tensor<32x128xf16, #b>, tensor<32x128xf16, #b>, tensor<32x128x!tile.ptr<f16>, #ld>
    }
    return %r#0, %r#1 : tensor<32x128xf16, #b>, tensor<32x128xf16, #b>
  }
}

// -----

// A counter-based random draw on the indices (dropout's Philox: ten rounds
// of multiplies and xors, some 60 ops deep) computed in a blocked layout and
// wanted in the mma layout: the whole chain is rebuilt there from the
// arange, and no tile crosses shared memory.
#b = #tilegpu.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [8, 1], order = [1, 0]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [8, 1]>
#a = #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
#bop = #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
// CHECK-DAG: #[[MMA:.*]] = #tilegpu.mma<version = 2, warpsPerCTA = [8, 1]>
// CHECK-DAG: #[[COLS:.*]] = #tilegpu.slice<dim = 0, parent = #[[MMA]]>
// CHECK-LABEL: func.func @deep_index_chain
// CHECK-NOT: tilegpu.convert_layout
// CHECK: tile.arange 0 to 32 : tensor<32xi32, #[[COLS]]>
// CHECK-COUNT-30: arith.xori {{.*}} : tensor<128x32xi32, #[[MMA]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK: return
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @deep_index_chain(%k: tensor<128x64xf16, #a>, %qt: tensor<64x32xf16, #bop>) -> tensor<128x32xf32, #mma> {
    %zero = arith.constant dense<0.0> : tensor<128x32xf32, #mma>
    %round = arith.constant dense<-766062189> : tensor<128x32xi32, #b>
    %key = arith.constant dense<1013904242> : tensor<128x32xi32, #b>
    %s = tile.dot %k, %qt, %zero : tensor<128x64xf16, #a>, tensor<64x32xf16, #bop> -> tensor<128x32xf32, #mma>
    %cols = tile.arange 0 to 32 : tensor<32xi32, #tilegpu.slice<dim = 0, parent = #b>>
    %e = tile.expand_dims %cols {axis = 0 : i32} : tensor<32xi32, #tilegpu.slice<dim = 0, parent = #b>> -> tensor<1x32xi32, #b>
    %x0 = tile.broadcast %e : tensor<1x32xi32, #b> -> tensor<128x32xi32, #b>
    %m1 = arith.muli %x0, %round : tensor<128x32xi32, #b>
    %x1 = arith.xori %m1, %key : tensor<128x32xi32, #b>
    %m2 = arith.muli %x1, %round : tensor<128x32xi32, #b>
    %x2 = arith.xori %m2, %key : tensor<128x32xi32, #b>
    %m3 = arith.muli %x2, %round : tensor<128x32xi32, #b>
    %x3 = arith.xori %m3, %key : tensor<128x32xi32, #b>
    %m4 = arith.muli %x3, %round : tensor<128x32xi32, #b>
    %x4 = arith.xori %m4, %key : tensor<128x32xi32, #b>
    %m5 = arith.muli %x4, %round : tensor<128x32xi32, #b>
    %x5 = arith.xori %m5, %key : tensor<128x32xi32, #b>
    %m6 = arith.muli %x5, %round : tensor<128x32xi32, #b>
    %x6 = arith.xori %m6, %key : tensor<128x32xi32, #b>
    %m7 = arith.muli %x6, %round : tensor<128x32xi32, #b>
    %x7 = arith.xori %m7, %key : tensor<128x32xi32, #b>
    %m8 = arith.muli %x7, %round : tensor<128x32xi32, #b>
    %x8 = arith.xori %m8, %key : tensor<128x32xi32, #b>
    %m9 = arith.muli %x8, %round : tensor<128x32xi32, #b>
    %x9 = arith.xori %m9, %key : tensor<128x32xi32, #b>
    %m10 = arith.muli %x9, %round : tensor<128x32xi32, #b>
    %x10 = arith.xori %m10, %key : tensor<128x32xi32, #b>
    %m11 = arith.muli %x10, %round : tensor<128x32xi32, #b>
    %x11 = arith.xori %m11, %key : tensor<128x32xi32, #b>
    %m12 = arith.muli %x11, %round : tensor<128x32xi32, #b>
    %x12 = arith.xori %m12, %key : tensor<128x32xi32, #b>
    %m13 = arith.muli %x12, %round : tensor<128x32xi32, #b>
    %x13 = arith.xori %m13, %key : tensor<128x32xi32, #b>
    %m14 = arith.muli %x13, %round : tensor<128x32xi32, #b>
    %x14 = arith.xori %m14, %key : tensor<128x32xi32, #b>
    %m15 = arith.muli %x14, %round : tensor<128x32xi32, #b>
    %x15 = arith.xori %m15, %key : tensor<128x32xi32, #b>
    %m16 = arith.muli %x15, %round : tensor<128x32xi32, #b>
    %x16 = arith.xori %m16, %key : tensor<128x32xi32, #b>
    %m17 = arith.muli %x16, %round : tensor<128x32xi32, #b>
    %x17 = arith.xori %m17, %key : tensor<128x32xi32, #b>
    %m18 = arith.muli %x17, %round : tensor<128x32xi32, #b>
    %x18 = arith.xori %m18, %key : tensor<128x32xi32, #b>
    %m19 = arith.muli %x18, %round : tensor<128x32xi32, #b>
    %x19 = arith.xori %m19, %key : tensor<128x32xi32, #b>
    %m20 = arith.muli %x19, %round : tensor<128x32xi32, #b>
    %x20 = arith.xori %m20, %key : tensor<128x32xi32, #b>
    %m21 = arith.muli %x20, %round : tensor<128x32xi32, #b>
    %x21 = arith.xori %m21, %key : tensor<128x32xi32, #b>
    %m22 = arith.muli %x21, %round : tensor<128x32xi32, #b>
    %x22 = arith.xori %m22, %key : tensor<128x32xi32, #b>
    %m23 = arith.muli %x22, %round : tensor<128x32xi32, #b>
    %x23 = arith.xori %m23, %key : tensor<128x32xi32, #b>
    %m24 = arith.muli %x23, %round : tensor<128x32xi32, #b>
    %x24 = arith.xori %m24, %key : tensor<128x32xi32, #b>
    %m25 = arith.muli %x24, %round : tensor<128x32xi32, #b>
    %x25 = arith.xori %m25, %key : tensor<128x32xi32, #b>
    %m26 = arith.muli %x25, %round : tensor<128x32xi32, #b>
    %x26 = arith.xori %m26, %key : tensor<128x32xi32, #b>
    %m27 = arith.muli %x26, %round : tensor<128x32xi32, #b>
    %x27 = arith.xori %m27, %key : tensor<128x32xi32, #b>
    %m28 = arith.muli %x27, %round : tensor<128x32xi32, #b>
    %x28 = arith.xori %m28, %key : tensor<128x32xi32, #b>
    %m29 = arith.muli %x28, %round : tensor<128x32xi32, #b>
    %x29 = arith.xori %m29, %key : tensor<128x32xi32, #b>
    %m30 = arith.muli %x29, %round : tensor<128x32xi32, #b>
    %x30 = arith.xori %m30, %key : tensor<128x32xi32, #b>
    %f = arith.sitofp %x30 : tensor<128x32xi32, #b> to tensor<128x32xf32, #b>
    %fm = tilegpu.convert_layout %f : tensor<128x32xf32, #b> -> tensor<128x32xf32, #mma>
    %p = arith.mulf %s, %fm : tensor<128x32xf32, #mma>
    return %p : tensor<128x32xf32, #mma>
  }
}

// -----

// Triton's softmax row: tilegpu-coalesce loads it in 16-byte vectors and
// converts it back to the layout the program had. No dot's layout reaches
// it, so the load's layout spreads forward instead: the reductions, the
// exponentials and the store's value stay where the row was loaded, and
// nothing crosses shared memory.
#b = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
#v = #tilegpu.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
// CHECK-LABEL: func.func @softmax_row
// CHECK: %[[X:.*]] = tile.load {{.*}} : tensor<256x!tile.ptr<f32>, #[[V:.*]]>
// CHECK: tile.reduce max %[[X]] axis 0 : tensor<256xf32, #[[V]]> -> f32
// CHECK: %[[E:.*]] = math.exp %{{.*}} : tensor<256xf32, #[[V]]>
// CHECK: %[[P:.*]] = arith.divf %[[E]], %{{.*}} : tensor<256xf32, #[[V]]>
// CHECK-NOT: tilegpu.convert_layout %{{.*}} : tensor<256xf32
// CHECK: tile.store %{{.*}}, %[[P]] {tilegpu.vector_width = 4 : i32} : tensor<256x!tile.ptr<f32>, #[[V]]>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @softmax_row(%in: !tile.ptr<f32> {tile.divisibility = 16 : i32}, %out: !tile.ptr<f32> {tile.divisibility = 16 : i32}) attributes {tile.kernel} {
    %cols = tile.arange 0 to 256 : tensor<256xi32, #b>
    %ins = tile.splat %in : tensor<256x!tile.ptr<f32>, #b>
    %p = tile.addptr %ins, %cols : tensor<256x!tile.ptr<f32>, #b>, tensor<256xi32, #b>
    %pv = tilegpu.convert_layout %p : tensor<256x!tile.ptr<f32>, #b> -> tensor<256x!tile.ptr<f32>, #v>
    %xv = tile.load %pv {tilegpu.vector_width = 4 : i32} : tensor<256x!tile.ptr<f32>, #v>
    %x = tilegpu.convert_layout %xv : tensor<256xf32, #v> -> tensor<256xf32, #b>
    %max = tile.reduce max %x axis 0 : tensor<256xf32, #b> -> f32
    %maxs = tile.splat %max : tensor<256xf32, #b>
    %d = arith.subf %x, %maxs : tensor<256xf32, #b>
    %e = math.exp %d : tensor<256xf32, #b>
    %sum = tile.reduce sum %e axis 0 : tensor<256xf32, #b> -> f32
    %sums = tile.splat %sum : tensor<256xf32, #b>
    %y = arith.divf %e, %sums : tensor<256xf32, #b>
    %outs = tile.splat %out : tensor<256x!tile.ptr<f32>, #b>
    %q = tile.addptr %outs, %cols : tensor<256x!tile.ptr<f32>, #b>, tensor<256xi32, #b>
    %qv = tilegpu.convert_layout %q : tensor<256x!tile.ptr<f32>, #b> -> tensor<256x!tile.ptr<f32>, #v>
    %yv = tilegpu.convert_layout %y : tensor<256xf32, #b> -> tensor<256xf32, #v>
    tile.store %qv, %yv {tilegpu.vector_width = 4 : i32} : tensor<256x!tile.ptr<f32>, #v>
    return
  }
}

// -----

// A reshape of a dot's result keeps each element in its register: the
// scores' columns, split in groups of eight, are summed group by group in
// each thread (a linear layout, then its slice), and the loop carries the
// partial sums in that slice: no conversion in the loop.
#b = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]>
#b3 = #tilegpu.blocked<sizePerThread = [1, 1, 1], threadsPerWarp = [1, 4, 8], warpsPerCTA = [4, 1, 1], order = [2, 1, 0]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
#a = #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
#bop = #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
#groups = #tilegpu.slice<dim = 1, parent = #b3>
// CHECK-DAG: #[[MMA:.*]] = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
// CHECK-DAG: #[[LINEAR:.*]] = #tilegpu.linear<register = {{\[}}[0, 0, 1], [8, 0, 0], [0, 1, 0], [0, 2, 0], [0, 4, 0], [64, 0, 0]], lane = {{\[}}[0, 0, 2], [0, 0, 4], [1, 0, 0], [2, 0, 0], [4, 0, 0]], warp = {{\[}}[16, 0, 0], [32, 0, 0]]>
// CHECK-DAG: #[[PARTS:.*]] = #tilegpu.slice<dim = 1, parent = #[[LINEAR]]>
// CHECK-LABEL: func.func @row_sums_in_parts
// CHECK: scf.for {{.*}} -> (tensor<128x8xf32, #[[PARTS]]>)
// CHECK-NOT: tilegpu.convert_layout
// CHECK:   tile.dot {{.*}} -> tensor<128x64xf32, #[[MMA]]>
// CHECK:   %[[E:.*]] = math.exp2 %{{.*}} : tensor<128x64xf32, #[[MMA]]>
// CHECK:   %[[R:.*]] = tile.reshape %[[E]] : tensor<128x64xf32, #[[MMA]]> -> tensor<128x8x8xf32, #[[LINEAR]]>
// CHECK:   tile.reduce sum %[[R]] axis 1 : tensor<128x8x8xf32, #[[LINEAR]]> -> tensor<128x8xf32, #[[PARTS]]>
// CHECK-NOT: tilegpu.convert_layout
// CHECK:   scf.yield
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_80>} {
  func.func @row_sums_in_parts(%q: tensor<128x64xf16, #b>, %k: tensor<64x64xf16, #b>, %n: i32) -> tensor<128x8xf32, #b> {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.0> : tensor<128x64xf32, #b>
    %l0 = arith.constant dense<0.0> : tensor<128x8xf32, #b>
    %r = scf.for %i = %c0 to %n step %c64 iter_args(%l = %l0) -> (tensor<128x8xf32, #b>) : i32 {
      %qa = tilegpu.convert_layout %q : tensor<128x64xf16, #b> -> tensor<128x64xf16, #a>
      %kb = tilegpu.convert_layout %k : tensor<64x64xf16, #b> -> tensor<64x64xf16, #bop>
      %z = tilegpu.convert_layout %zero : tensor<128x64xf32, #b> -> tensor<128x64xf32, #mma>
      %s0 = tile.dot %qa, %kb, %z : tensor<128x64xf16, #a>, tensor<64x64xf16, #bop> -> tensor<128x64xf32, #mma>
      %s = tilegpu.convert_layout %s0 : tensor<128x64xf32, #mma> -> tensor<128x64xf32, #b>
      %e = math.exp2 %s : tensor<128x64xf32, #b>
      %s3 = tilegpu.convert_layout %e : tensor<128x64xf32, #b> -> tensor<128x64xf32, #b>
      %g = tile.reshape %s3 : tensor<128x64xf32, #b> -> tensor<128x8x8xf32, #b3>
      %part = tile.reduce sum %g axis 1 : tensor<128x8x8xf32, #b3> -> tensor<128x8xf32, #groups>
      %part2 = tilegpu.convert_layout %part : tensor<128x8xf32, #groups> -> tensor<128x8xf32, #b>
      %lnew = arith.addf %l, %part2 : tensor<128x8xf32, #b>
      scf.yield %lnew : tensor<128x8xf32, #b>
    }
    return %r : tensor<128x8xf32, #b>
  }
}

// -----

// A row broadcast to a tile narrower than the mma layout's span (4 columns
// of its 8) would repeat each element in two registers: the broadcast keeps
// its layout, so that the sums it scales, carried in the slice of the
// reshape's linear layout, stay there; the row is converted instead.
#b = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]>
#b3 = #tilegpu.blocked<sizePerThread = [1, 1, 1], threadsPerWarp = [1, 4, 8], warpsPerCTA = [4, 1, 1], order = [2, 1, 0]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
#a = #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
#bop = #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
#groups = #tilegpu.slice<dim = 1, parent = #b3>
#row = #tilegpu.slice<dim = 1, parent = #b>
// CHECK-DAG: #[[MMA:.*]] = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
// CHECK-DAG: #[[PARTS:.*]] = #tilegpu.slice<dim = 1, parent = #linear{{[0-9]*}}>
// CHECK-LABEL: func.func @scaled_sums_in_parts
// CHECK: scf.for {{.*}} -> (tensor<128x4xf32, #[[PARTS]]>)
// CHECK-NOT: tensor<128x4xf32, #[[MMA]]>
// CHECK: scf.yield
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_80>} {
  func.func @scaled_sums_in_parts(%q: tensor<128x64xf16, #b>, %k: tensor<64x64xf16, #b>, %n: i32) -> tensor<128x4xf32, #b> {
    %c0 = arith.constant 0 : i32
    %c64 = arith.constant 64 : i32
    %zero = arith.constant dense<0.0> : tensor<128x64xf32, #b>
    %l0 = arith.constant dense<0.0> : tensor<128x4xf32, #b>
    %r = scf.for %i = %c0 to %n step %c64 iter_args(%l = %l0) -> (tensor<128x4xf32, #b>) : i32 {
      %qa = tilegpu.convert_layout %q : tensor<128x64xf16, #b> -> tensor<128x64xf16, #a>
      %kb = tilegpu.convert_layout %k : tensor<64x64xf16, #b> -> tensor<64x64xf16, #bop>
      %z = tilegpu.convert_layout %zero : tensor<128x64xf32, #b> -> tensor<128x64xf32, #mma>
      %s0 = tile.dot %qa, %kb, %z : tensor<128x64xf16, #a>, tensor<64x64xf16, #bop> -> tensor<128x64xf32, #mma>
      %s = tilegpu.convert_layout %s0 : tensor<128x64xf32, #mma> -> tensor<128x64xf32, #b>
      %m = tile.reduce max %s axis 1 : tensor<128x64xf32, #b> -> tensor<128xf32, #row>
      %alpha = math.exp2 %m : tensor<128xf32, #row>
      %a1 = tile.expand_dims %alpha {axis = 1 : i32} : tensor<128xf32, #row> -> tensor<128x1xf32, #b>
      %ab = tile.broadcast %a1 : tensor<128x1xf32, #b> -> tensor<128x4xf32, #b>
      %scaled = arith.mulf %l, %ab : tensor<128x4xf32, #b>
      %e = math.exp2 %s : tensor<128x64xf32, #b>
      %g = tile.reshape %e : tensor<128x64xf32, #b> -> tensor<128x16x4xf32, #b3>
      %part = tile.reduce sum %g axis 1 : tensor<128x16x4xf32, #b3> -> tensor<128x4xf32, #groups>
      %part2 = tilegpu.convert_layout %part : tensor<128x4xf32, #groups> -> tensor<128x4xf32, #b>
      %lnew = arith.addf %scaled, %part2 : tensor<128x4xf32, #b>
      scf.yield %lnew : tensor<128x4xf32, #b>
    }
    return %r : tensor<128x4xf32, #b>
  }
}
