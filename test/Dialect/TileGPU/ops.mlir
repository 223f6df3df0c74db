// RUN: tile-opt %s | FileCheck %s
// RUN: tile-opt %s | tile-opt | FileCheck %s
// RUN: tile-opt %s | FileCheck %s --check-prefix=SHARED
// RUN: tile-opt %s | tile-opt | FileCheck %s --check-prefix=SHARED
// RUN: tile-opt %s | FileCheck %s --check-prefix=LINEAR
// RUN: tile-opt %s | tile-opt | FileCheck %s --check-prefix=LINEAR

// Layout encodings round-trip, and tile ops accept tensors that carry them.

#row = #tilegpu.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#col = #tilegpu.blocked<sizePerThread = [4, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]>
#rows_of = #tilegpu.slice<dim = 1, parent = #row>

// CHECK: #[[ROW:.*]] = #tilegpu.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK: #[[COL:.*]] = #tilegpu.blocked<sizePerThread = [4, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]>
// CHECK: #[[SLICE:.*]] = #tilegpu.slice<dim = 1, parent = #[[ROW]]>

module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  // CHECK-LABEL: func.func @row_max
  func.func @row_max(%x: tensor<64x64xf32, #row>) -> tensor<64x64xf32, #col> {
    // CHECK: tile.reduce max %{{.*}} axis 1 : tensor<64x64xf32, #[[ROW]]> -> tensor<64xf32, #[[SLICE]]>
    %m = tile.reduce max %x axis 1 : tensor<64x64xf32, #row> -> tensor<64xf32, #rows_of>
    // CHECK: tile.expand_dims %{{.*}} {axis = 1 : i32} : tensor<64xf32, #[[SLICE]]> -> tensor<64x1xf32, #[[ROW]]>
    %e = tile.expand_dims %m {axis = 1 : i32} : tensor<64xf32, #rows_of> -> tensor<64x1xf32, #row>
    // CHECK: tile.broadcast %{{.*}} : tensor<64x1xf32, #[[ROW]]> -> tensor<64x64xf32, #[[ROW]]>
    %b = tile.broadcast %e : tensor<64x1xf32, #row> -> tensor<64x64xf32, #row>
    %d = arith.subf %x, %b : tensor<64x64xf32, #row>
    // CHECK: tilegpu.convert_layout %{{.*}} : tensor<64x64xf32, #[[ROW]]> -> tensor<64x64xf32, #[[COL]]>
    %c = tilegpu.convert_layout %d : tensor<64x64xf32, #row> -> tensor<64x64xf32, #col>
    return %c : tensor<64x64xf32, #col>
  }
}

// Shared-memory tiles: a swizzled buffer, stores into it, windowed reads
// into a tensor-core operand layout, and register slices of an operand.

#kb = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#swz = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
#swz_t = #tilegpu.shared<vec = 8, perPhase = 4, maxPhase = 2, order = [0, 1]>
#acc = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
#opa = #tilegpu.dot_operand<opIdx = 0, parent = #acc, kWidth = 2>
#opb = #tilegpu.dot_operand<opIdx = 1, parent = #acc, kWidth = 2>

// SHARED-DAG: #[[KB:.*]] = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
// SHARED-DAG: #[[SWZ:.*]] = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
// SHARED-DAG: #[[SWZT:.*]] = #tilegpu.shared<vec = 8, perPhase = 4, maxPhase = 2, order = [0, 1]>
// SHARED-DAG: #[[ACC:.*]] = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
// SHARED-DAG: #[[OPA:.*]] = #tilegpu.dot_operand<opIdx = 0, parent = #[[ACC]], kWidth = 2>
// SHARED-DAG: #[[OPB:.*]] = #tilegpu.dot_operand<opIdx = 1, parent = #[[ACC]], kWidth = 2>

module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  // SHARED-LABEL: func.func private @memdesc_argument
  // SHARED-SAME: (!tilegpu.memdesc<64x64xf16, #[[SWZ]]>, !tilegpu.memdesc<16x64xbf16, #[[SWZT]]>)
  func.func private @memdesc_argument(!tilegpu.memdesc<64x64xf16, #swz>, !tilegpu.memdesc<16x64xbf16, #swz_t>)

  // SHARED-LABEL: func.func @stage_k
  func.func @stage_k(%k: tensor<64x64xf16, #kb>, %p: tensor<128x64xf16, #opa>) -> (tensor<16x64xf16, #opb>, tensor<64x64xf16, #opb>, tensor<128x16xf16, #opa>, tensor<128x64xf16, #opa>) {
    // SHARED: %[[BUF:.*]] = tilegpu.local_alloc %{{.*}} : tensor<64x64xf16, #[[KB]]> -> !tilegpu.memdesc<64x64xf16, #[[SWZ]]>
    %buf = tilegpu.local_alloc %k : tensor<64x64xf16, #kb> -> !tilegpu.memdesc<64x64xf16, #swz>
    // SHARED: tilegpu.local_load %[[BUF]] [16, 0] : !tilegpu.memdesc<64x64xf16, #[[SWZ]]> -> tensor<16x64xf16, #[[OPB]]>
    %k1 = tilegpu.local_load %buf [16, 0] : !tilegpu.memdesc<64x64xf16, #swz> -> tensor<16x64xf16, #opb>
    // SHARED: tilegpu.local_load %[[BUF]] [0, 0] : !tilegpu.memdesc<64x64xf16, #[[SWZ]]> -> tensor<64x64xf16, #[[OPB]]>
    %kall = tilegpu.local_load %buf [0, 0] : !tilegpu.memdesc<64x64xf16, #swz> -> tensor<64x64xf16, #opb>
    // SHARED: tilegpu.extract_slice %{{.*}} [0, 48] : tensor<128x64xf16, #[[OPA]]> -> tensor<128x16xf16, #[[OPA]]>
    %p3 = tilegpu.extract_slice %p [0, 48] : tensor<128x64xf16, #opa> -> tensor<128x16xf16, #opa>
    // A slice the size of its source, at the origin.
    // SHARED: tilegpu.extract_slice %{{.*}} [0, 0] : tensor<128x64xf16, #[[OPA]]> -> tensor<128x64xf16, #[[OPA]]>
    %pall = tilegpu.extract_slice %p [0, 0] : tensor<128x64xf16, #opa> -> tensor<128x64xf16, #opa>
    return %k1, %kall, %p3, %pall : tensor<16x64xf16, #opb>, tensor<64x64xf16, #opb>, tensor<128x16xf16, #opa>, tensor<128x64xf16, #opa>
  }

  // A transposed view of a buffer: shape and order reversed.
  // SHARED-LABEL: func.func @transposed_view
  func.func @transposed_view(%buf: !tilegpu.memdesc<64x64xf16, #swz>) -> tensor<16x64xf16, #opb> {
    // SHARED: %[[VIEW:.*]] = tilegpu.memdesc_trans %{{.*}} : !tilegpu.memdesc<64x64xf16, #[[SWZ]]> -> !tilegpu.memdesc<64x64xf16, #[[SWZ_COL:.*]]>
    %view = tilegpu.memdesc_trans %buf : !tilegpu.memdesc<64x64xf16, #swz> -> !tilegpu.memdesc<64x64xf16, #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [0, 1]>>
    // SHARED: tilegpu.local_load %[[VIEW]] [16, 0]
    %k = tilegpu.local_load %view [16, 0] : !tilegpu.memdesc<64x64xf16, #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [0, 1]>> -> tensor<16x64xf16, #opb>
    return %k : tensor<16x64xf16, #opb>
  }

  // A column-major buffer read back into a blocked layout, element by element.
  // SHARED-LABEL: func.func @column_major
  func.func @column_major(%v: tensor<64x64xf16, #kb>) -> tensor<32x64xf16, #kb> {
    // SHARED: tilegpu.local_alloc %{{.*}} : tensor<64x64xf16, #[[KB]]> -> !tilegpu.memdesc<64x64xf16, #[[SWZT]]>
    %buf = tilegpu.local_alloc %v : tensor<64x64xf16, #kb> -> !tilegpu.memdesc<64x64xf16, #swz_t>
    // SHARED: tilegpu.local_load %{{.*}} [32, 0] : !tilegpu.memdesc<64x64xf16, #[[SWZT]]> -> tensor<32x64xf16, #[[KB]]>
    %half = tilegpu.local_load %buf [32, 0] : !tilegpu.memdesc<64x64xf16, #swz_t> -> tensor<32x64xf16, #kb>
    return %half : tensor<32x64xf16, #kb>
  }
  // A stack of buffers filled by asynchronous copies, one picked by index.
  // SHARED-LABEL: func.func @async_copies
  func.func @async_copies(%p: !tile.block_ptr<tensor<64x64xf16, #kb>>, %xp: !tile.ptr<f16>, %slot: i32, %go: i1) -> tensor<16x64xf16, #opb> {
    // SHARED: %[[STACK:.*]] = tilegpu.local_alloc : !tilegpu.memdesc<3x64x64xf16, #[[SWZ]]>
    %stack = tilegpu.local_alloc : !tilegpu.memdesc<3x64x64xf16, #swz>
    // SHARED: %[[BUF:.*]] = tilegpu.memdesc_index %[[STACK]][%{{.*}}] : !tilegpu.memdesc<3x64x64xf16, #[[SWZ]]> -> !tilegpu.memdesc<64x64xf16, #[[SWZ]]>
    %buf = tilegpu.memdesc_index %stack[%slot] : !tilegpu.memdesc<3x64x64xf16, #swz> -> !tilegpu.memdesc<64x64xf16, #swz>
    // SHARED: tilegpu.async_copy_block %{{.*}}, %[[BUF]] if %{{.*}} boundary_check [0] : !tile.block_ptr<tensor<64x64xf16, #[[KB]]>>, !tilegpu.memdesc<64x64xf16, #[[SWZ]]>
    tilegpu.async_copy_block %p, %buf if %go boundary_check [0] : !tile.block_ptr<tensor<64x64xf16, #kb>>, !tilegpu.memdesc<64x64xf16, #swz>
    // SHARED: tilegpu.async_copy_block %{{.*}}, %[[BUF]] : !tile.block_ptr
    tilegpu.async_copy_block %p, %buf : !tile.block_ptr<tensor<64x64xf16, #kb>>, !tilegpu.memdesc<64x64xf16, #swz>
    // SHARED: tilegpu.async_copy %{{.*}}, %[[BUF]] if %{{.*}} {vector_width = 8 : i32} : tensor<64x64x!tile.ptr<f16>, #[[KB]]>, !tilegpu.memdesc<64x64xf16, #[[SWZ]]>
    %ptrs = tile.splat %xp : tensor<64x64x!tile.ptr<f16>, #kb>
    tilegpu.async_copy %ptrs, %buf if %go {vector_width = 8 : i32} : tensor<64x64x!tile.ptr<f16>, #kb>, !tilegpu.memdesc<64x64xf16, #swz>
    // SHARED: tilegpu.async_commit_group
    tilegpu.async_commit_group
    // SHARED: tilegpu.async_wait {pending = 1 : i32}
    tilegpu.async_wait {pending = 1 : i32}
    %k = tilegpu.local_load %buf [16, 0] : !tilegpu.memdesc<64x64xf16, #swz> -> tensor<16x64xf16, #opb>
    return %k : tensor<16x64xf16, #opb>
  }
}

// A linear layout (the [16, 64] wgmma accumulator of one warp group, its
// columns split in groups of eight by a reshape) round-trips, and so does a
// slice of it; an empty list holds no basis.
#groups = #tilegpu.linear<register = [[0, 0, 1], [8, 0, 0], [0, 1, 0], [0, 2, 0], [0, 4, 0]], lane = [[0, 0, 2], [0, 0, 4], [1, 0, 0], [2, 0, 0], [4, 0, 0]], warp = []>
#group_sums = #tilegpu.slice<dim = 1, parent = #groups>
// LINEAR: #[[GROUPS:.*]] = #tilegpu.linear<register = {{\[}}[0, 0, 1], [8, 0, 0], [0, 1, 0], [0, 2, 0], [0, 4, 0]], lane = {{\[}}[0, 0, 2], [0, 0, 4], [1, 0, 0], [2, 0, 0], [4, 0, 0]], warp = []>
// LINEAR: #tilegpu.slice<dim = 1, parent = #[[GROUPS]]>
module attributes {tilegpu.num_warps = 1 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  // LINEAR-LABEL: func.func @group_sums
  func.func @group_sums(%x: tensor<16x8x8xf32, #groups>) -> tensor<16x8xf32, #group_sums> {
    // LINEAR: tile.reduce sum %{{.*}} axis 1 : tensor<16x8x8xf32, #[[GROUPS]]>
    %s = tile.reduce sum %x axis 1 : tensor<16x8x8xf32, #groups> -> tensor<16x8xf32, #group_sums>
    return %s : tensor<16x8xf32, #group_sums>
  }
}
