// RUN: tile-opt %s -split-input-file -verify-diagnostics

// expected-error @below {{threadsPerWarp must multiply to 32, not 16}}
func.func private @lanes(tensor<64xf32, #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [16], warpsPerCTA = [4], order = [0]>>)

// -----

// expected-error @below {{a blocked layout has one sizePerThread, threadsPerWarp, warpsPerCTA and order entry per dimension}}
func.func private @ranks(tensor<64xf32, #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>>)

// -----

// expected-error @below {{blocked layout sizes must be powers of two}}
func.func private @sizes(tensor<64xf32, #tilegpu.blocked<sizePerThread = [3], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>>)

// -----

// expected-error @below {{order must be a permutation of the dimensions}}
func.func private @order(tensor<64x64xf32, #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 1]>>)

// -----

// expected-error @below {{slice dimension 2 is not a dimension of its rank-2 parent}}
func.func private @slice_dim(tensor<64xf32, #tilegpu.slice<dim = 2, parent = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>>>)

// -----

// expected-error @below {{a slice removes a dimension of a parent of rank at least 2}}
func.func private @slice_rank(tensor<64xf32, #tilegpu.slice<dim = 0, parent = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>>>)

// -----

#l = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
func.func @convert_without_layout(%x: tensor<64xf32>) {
  // expected-error @below {{'tilegpu.convert_layout' op converts between layouts, but 'tensor<64xf32>' has none}}
  %0 = tilegpu.convert_layout %x : tensor<64xf32> -> tensor<64xf32, #l>
  return
}

// -----

#l1 = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
#l2 = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
func.func @convert_rank(%x: tensor<64xf32, #l1>) {
  // expected-error @below {{a rank-2 layout on a tensor of rank 1}}
  %0 = tilegpu.convert_layout %x : tensor<64xf32, #l1> -> tensor<64xf32, #l2>
  return
}

// -----

#l = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
func.func @convert_shape(%x: tensor<64xf32, #l>) {
  // expected-error @below {{'tilegpu.convert_layout' op requires the same shape for all operands and results}}
  %0 = tilegpu.convert_layout %x : tensor<64xf32, #l> -> tensor<128xf32, #l>
  return
}

// -----

// A tile op rejects encodings that are not layouts.
func.func @foreign_encoding(%x: f32) {
  // expected-error @below {{must be ranked tensor of static power-of-two shape}}
  %0 = tile.splat %x : tensor<64xf32, "not a layout">
  return
}

// -----

// Shared-memory tiles and windows.

#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
#opb = #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
func.func @window_out_of_bounds(%buf: !tilegpu.memdesc<64x64xf16, #s>) {
  // expected-error @below {{'tilegpu.local_load' op window of 16 at offset 64 does not lie on a multiple of its size inside 64}}
  %0 = tilegpu.local_load %buf [64, 0] : !tilegpu.memdesc<64x64xf16, #s> -> tensor<16x64xf16, #opb>
  return
}

// -----

#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
#opb = #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
func.func @window_larger_than_buffer(%buf: !tilegpu.memdesc<64x64xf16, #s>) {
  // expected-error @below {{window of 128 at offset 0 does not lie on a multiple of its size inside 64}}
  %0 = tilegpu.local_load %buf [0, 0] : !tilegpu.memdesc<64x64xf16, #s> -> tensor<128x64xf16, #opb>
  return
}

// -----

#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
#opb = #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
func.func @window_misaligned(%buf: !tilegpu.memdesc<64x64xf16, #s>) {
  // expected-error @below {{window of 16 at offset 8 does not lie on a multiple of its size inside 64}}
  %0 = tilegpu.local_load %buf [8, 0] : !tilegpu.memdesc<64x64xf16, #s> -> tensor<16x64xf16, #opb>
  return
}

// -----

#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
#opb = #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
func.func @window_negative(%buf: !tilegpu.memdesc<64x64xf16, #s>) {
  // expected-error @below {{window of 16 at offset -16 does not lie on a multiple of its size inside 64}}
  %0 = tilegpu.local_load %buf [-16, 0] : !tilegpu.memdesc<64x64xf16, #s> -> tensor<16x64xf16, #opb>
  return
}

// -----

#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
#opb = #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
func.func @window_offsets_rank(%buf: !tilegpu.memdesc<64x64xf16, #s>) {
  // expected-error @below {{'tilegpu.local_load' op takes one offset per dimension of its source, and a result of the same rank}}
  %0 = tilegpu.local_load %buf [0] : !tilegpu.memdesc<64x64xf16, #s> -> tensor<16x64xf16, #opb>
  return
}

// -----

#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
#mma = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
#opb = #tilegpu.dot_operand<opIdx = 1, parent = #mma, kWidth = 2>
func.func @load_element_type(%buf: !tilegpu.memdesc<64x64xf16, #s>) {
  // expected-error @below {{'tilegpu.local_load' op reads 'f16' elements, not 'bf16'}}
  %0 = tilegpu.local_load %buf [0, 0] : !tilegpu.memdesc<64x64xf16, #s> -> tensor<16x64xbf16, #opb>
  return
}

// -----

#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
func.func @load_without_layout(%buf: !tilegpu.memdesc<64x64xf16, #s>) {
  // expected-error @below {{'tilegpu.local_load' op needs a result with a layout}}
  %0 = tilegpu.local_load %buf [0, 0] : !tilegpu.memdesc<64x64xf16, #s> -> tensor<16x64xf16>
  return
}

// -----

#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
func.func @alloc_shape(%x: tensor<64x64xf16, #b>) {
  // expected-error @below {{'tilegpu.local_alloc' op stores a 'tensor<64x64xf16, #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>>' into a buffer of another shape or element type}}
  %0 = tilegpu.local_alloc %x : tensor<64x64xf16, #b> -> !tilegpu.memdesc<64x128xf16, #s>
  return
}

// -----

#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
func.func @alloc_element_type(%x: tensor<64x64xf16, #b>) {
  // expected-error @below {{into a buffer of another shape or element type}}
  %0 = tilegpu.local_alloc %x : tensor<64x64xf16, #b> -> !tilegpu.memdesc<64x64xf32, #s>
  return
}

// -----

#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
func.func @alloc_without_layout(%x: tensor<64x64xf16>) {
  // expected-error @below {{'tilegpu.local_alloc' op needs a tensor with a layout}}
  %0 = tilegpu.local_alloc %x : tensor<64x64xf16> -> !tilegpu.memdesc<64x64xf16, #s>
  return
}

// -----

#mma = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
#opa = #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
func.func @slice_out_of_bounds(%p: tensor<128x64xf16, #opa>) {
  // expected-error @below {{'tilegpu.extract_slice' op window of 16 at offset 64 does not lie on a multiple of its size inside 64}}
  %0 = tilegpu.extract_slice %p [0, 64] : tensor<128x64xf16, #opa> -> tensor<128x16xf16, #opa>
  return
}

// -----

#mma = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
#opa = #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
func.func @slice_misaligned(%p: tensor<128x64xf16, #opa>) {
  // expected-error @below {{'tilegpu.extract_slice' op window of 16 at offset 24 does not lie on a multiple of its size inside 64}}
  %0 = tilegpu.extract_slice %p [0, 24] : tensor<128x64xf16, #opa> -> tensor<128x16xf16, #opa>
  return
}

// -----

#mma = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
#opa = #tilegpu.dot_operand<opIdx = 0, parent = #mma, kWidth = 2>
func.func @slice_element_type(%p: tensor<128x64xf16, #opa>) {
  // expected-error @below {{'tilegpu.extract_slice' op requires the same element type for all operands and results}}
  %0 = tilegpu.extract_slice %p [0, 0] : tensor<128x64xf16, #opa> -> tensor<128x16xf32, #opa>
  return
}

// -----

func.func @slice_without_layout(%p: tensor<128x64xf16>) {
  // expected-error @below {{'tilegpu.extract_slice' op needs a source and a result with layouts}}
  %0 = tilegpu.extract_slice %p [0, 0] : tensor<128x64xf16> -> tensor<128x16xf16>
  return
}

// -----

#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
// expected-error @below {{a shared-memory tile is a matrix (rank 2), or a stack of them (rank 3), not rank 4}}
func.func private @memdesc_rank(!tilegpu.memdesc<2x2x64x64xf16, #s>)

// -----

#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
// expected-error @below {{shared-memory tile sizes must be powers of two}}
func.func private @stack_of_odd_tiles(!tilegpu.memdesc<3x48x64xf16, #s>)

// -----

#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
#o = #tilegpu.dot_operand<opIdx = 1, parent = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>, kWidth = 2>
func.func @load_from_stack(%stack: !tilegpu.memdesc<2x64x64xf16, #s>) {
  // expected-error @below {{needs a single buffer (rank 2), not the stack}}
  %0 = tilegpu.local_load %stack [0, 0] : !tilegpu.memdesc<2x64x64xf16, #s> -> tensor<16x64xf16, #o>
  return
}

// -----

#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
func.func @index_a_single_buffer(%buf: !tilegpu.memdesc<64x64xf16, #s>, %i: i32) {
  // expected-error @below {{indexes a stack of buffers (rank 3)}}
  %0 = tilegpu.memdesc_index %buf[%i] : !tilegpu.memdesc<64x64xf16, #s> -> !tilegpu.memdesc<64x64xf16, #s>
  return
}

// -----

#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
func.func @index_keeps_shape(%stack: !tilegpu.memdesc<2x64x64xf16, #s>, %i: i32) {
  // expected-error @below {{its shape, element type and encoding}}
  %0 = tilegpu.memdesc_index %stack[%i] : !tilegpu.memdesc<2x64x64xf16, #s> -> !tilegpu.memdesc<64x64xbf16, #s>
  return
}

// -----

#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
func.func @copy_shape(%p: !tile.block_ptr<tensor<64x64xf16, #b>>, %buf: !tilegpu.memdesc<64x128xf16, #s>) {
  // expected-error @below {{into a buffer of another shape or element type}}
  tilegpu.async_copy_block %p, %buf : !tile.block_ptr<tensor<64x64xf16, #b>>, !tilegpu.memdesc<64x128xf16, #s>
  return
}

// -----

#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
func.func @copy_checks_contiguous_dim(%p: !tile.block_ptr<tensor<64x64xf16, #b>>, %buf: !tilegpu.memdesc<64x64xf16, #s>) {
  // expected-error @below {{cannot check the block's contiguous dimension 1}}
  tilegpu.async_copy_block %p, %buf boundary_check [1] : !tile.block_ptr<tensor<64x64xf16, #b>>, !tilegpu.memdesc<64x64xf16, #s>
  return
}

// -----

#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
func.func @copy_pointers_unproven(%p: tensor<64x64x!tile.ptr<f16>, #b>, %buf: !tilegpu.memdesc<64x64xf16, #s>) {
  // expected-error @below {{copies 16-byte vectors: runs of 8 elements a thread along dimension 1}}
  tilegpu.async_copy %p, %buf {vector_width = 4 : i32} : tensor<64x64x!tile.ptr<f16>, #b>, !tilegpu.memdesc<64x64xf16, #s>
  return
}

// -----

#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
func.func @copy_pointers_shape(%p: tensor<64x64x!tile.ptr<f16>, #b>, %buf: !tilegpu.memdesc<64x64xf32, #s>) {
  // expected-error @below {{into a buffer of another shape or element type}}
  tilegpu.async_copy %p, %buf {vector_width = 8 : i32} : tensor<64x64x!tile.ptr<f16>, #b>, !tilegpu.memdesc<64x64xf32, #s>
  return
}

// -----

#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
func.func @copy_pointers_mask(%p: tensor<64x64x!tile.ptr<f16>, #b>, %m: tensor<64x64xi32, #b>, %buf: !tilegpu.memdesc<64x64xf16, #s>) {
  // expected-error @below {{takes a mask of i1 in the pointers' shape and layout}}
  tilegpu.async_copy %p, %buf mask %m {vector_width = 8 : i32} : tensor<64x64x!tile.ptr<f16>, #b>, !tilegpu.memdesc<64x64xf16, #s>, tensor<64x64xi32, #b>
  return
}

// -----

#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
func.func @copy_needs_layout(%p: !tile.block_ptr<tensor<64x64xf16>>, %buf: !tilegpu.memdesc<64x64xf16, #s>) {
  // expected-error @below {{needs a block with a blocked layout}}
  tilegpu.async_copy_block %p, %buf : !tile.block_ptr<tensor<64x64xf16>>, !tilegpu.memdesc<64x64xf16, #s>
  return
}

// -----

func.func @wait_count() {
  // expected-error @below {{attribute 'pending' failed to satisfy constraint}}
  tilegpu.async_wait {pending = -1 : i32}
  return
}

// -----

#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
// expected-error @below {{shared-memory tile sizes must be powers of two}}
func.func private @memdesc_shape(!tilegpu.memdesc<48x64xf16, #s>)

// -----

// expected-error @below {{a shared layout orders the two dimensions of a matrix: [1, 0] or [0, 1]}}
func.func private @shared_order(!tilegpu.memdesc<64x64xf16, #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [0, 0]>>)

// -----

// expected-error @below {{a shared layout orders the two dimensions of a matrix: [1, 0] or [0, 1]}}
func.func private @shared_rank(!tilegpu.memdesc<64x64xf16, #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [2, 1, 0]>>)

// -----

// expected-error @below {{vec, perPhase and maxPhase of a shared layout must be powers of two}}
func.func private @shared_vec(!tilegpu.memdesc<64x64xf16, #tilegpu.shared<vec = 6, perPhase = 1, maxPhase = 8, order = [1, 0]>>)

// -----

// expected-error @below {{a row of 16 elements is too short for the swizzle}}
func.func private @short_rows(!tilegpu.memdesc<16x16xf16, #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>>)

// -----

#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
func.func @trans_keeps_element_type(%buf: !tilegpu.memdesc<64x64xf16, #s>) {
  // expected-error @below {{the view must have the transposed shape and the same element type}}
  %0 = tilegpu.memdesc_trans %buf : !tilegpu.memdesc<64x64xf16, #s> -> !tilegpu.memdesc<64x64xbf16, #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [0, 1]>>
  return
}

// -----

#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
func.func @trans_keeps_order(%buf: !tilegpu.memdesc<64x64xf16, #s>) {
  // expected-error @below {{with its order reversed}}
  %0 = tilegpu.memdesc_trans %buf : !tilegpu.memdesc<64x64xf16, #s> -> !tilegpu.memdesc<64x64xf16, #s>
  return
}

// -----

#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
// expected-error @below {{a stack of shared-memory tiles needs at least one}}
func.func private @empty_stack(!tilegpu.memdesc<0x64x64xf16, #s>)

// -----

#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
func.func @transpose_a_stack(%stack: !tilegpu.memdesc<2x64x64xf16, #s>) {
  // expected-error @below {{needs a single buffer (rank 2), not the stack}}
  %0 = tilegpu.memdesc_trans %stack : !tilegpu.memdesc<2x64x64xf16, #s> -> !tilegpu.memdesc<64x64xf16, #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [0, 1]>>
  return
}

// -----

#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
func.func @copy_checks_missing_dim(%p: !tile.block_ptr<tensor<64x64xf16, #b>>, %buf: !tilegpu.memdesc<64x64xf16, #s>) {
  // expected-error @below {{checks dimension 2 of a rank-2 block}}
  tilegpu.async_copy_block %p, %buf boundary_check [2] : !tile.block_ptr<tensor<64x64xf16, #b>>, !tilegpu.memdesc<64x64xf16, #s>
  return
}

// -----

#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
func.func @copy_into_stack(%p: !tile.block_ptr<tensor<64x64xf16, #b>>, %stack: !tilegpu.memdesc<2x64x64xf16, #s>) {
  // expected-error @below {{needs a single buffer (rank 2), not the stack}}
  tilegpu.async_copy_block %p, %stack : !tile.block_ptr<tensor<64x64xf16, #b>>, !tilegpu.memdesc<2x64x64xf16, #s>
  return
}

// -----

// A layout is checked against its module's warp count.
module attributes {tilegpu.num_warps = 4 : i32} {
  func.func @warps() {
    // expected-error @below {{'arith.constant' op has a layout over 8 warps in a module of 4 (tilegpu.num_warps)}}
    %0 = arith.constant dense<0.0> : tensor<256xf32, #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]>>
    return
  }
}

// -----

// expected-error @below {{tilegpu.num_warps must be a power of two from 1 to 32, not 3}}
module attributes {tilegpu.num_warps = 3 : i32} {
}

// -----

// expected-error @below {{tilegpu.num_warps is an integer attribute of a module}}
func.func private @not_a_module() attributes {tilegpu.num_warps = 4 : i32}

// -----

// expected-error @below {{tilegpu.target is a #tilegpu.target attribute of a module, not "sm_90a"}}
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = "sm_90a"} {
}

// -----

// expected-error @below {{expected ::mlir::tilegpu::Arch to be one of: sm_80, sm_90a}}
// expected-error @below {{failed to parse TileGPU_TargetAttr parameter 'arch'}}
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_70>} {
}

// -----

// expected-error @below {{tilegpu.shared_bytes is a module's bytes of shared memory: a non-negative integer attribute of a module}}
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.shared_bytes = -128 : i64} {
}

// -----

// expected-error @below {{tilegpu.shared_bytes is a module's bytes of shared memory: a non-negative integer attribute of a module}}
func.func private @shared_bytes_of_a_function() attributes {tilegpu.shared_bytes = 0 : i64}

// -----

#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
module attributes {tilegpu.num_warps = 4 : i32} {
  func.func @offset_not_aligned(%x: tensor<64x64xf16, #b>) {
    // expected-error @below {{tilegpu.allocation_offset is a non-negative multiple of 128 bytes, not 64 : i64}}
    %buf = tilegpu.local_alloc %x {tilegpu.allocation_offset = 64 : i64} : tensor<64x64xf16, #b> -> !tilegpu.memdesc<64x64xf16, #s>
    return
  }
}

// -----

#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
module attributes {tilegpu.num_warps = 4 : i32} {
  func.func @offset_of_an_add(%x: tensor<64x64xf16, #b>) -> tensor<64x64xf16, #b> {
    // expected-error @below {{tilegpu.allocation_offset places the shared memory of a tilegpu.local_alloc, tilegpu.convert_layout, tile.reduce, tile.atomic_rmw, tile.atomic_cas, tile.atomic_load, tile.reshape, tile.join or tile.split, not of 'arith.addf'}}
    %y = arith.addf %x, %x {tilegpu.allocation_offset = 0 : i64} : tensor<64x64xf16, #b>
    return %y : tensor<64x64xf16, #b>
  }
}

// -----

#s = #tilegpu.shared<vec = 8, perPhase = 8, maxPhase = 1, order = [1, 0]>
module attributes {tilegpu.num_warps = 4 : i32} {
  func.func @barrier_without_a_store() {
    // expected-error @below {{tilegpu.leading_barrier decides the barriers of a tilegpu.local_alloc's store: it belongs on a local_alloc with a source}}
    %buf = tilegpu.local_alloc {tilegpu.leading_barrier = false} : !tilegpu.memdesc<32x8xf16, #s>
    return
  }
}

// -----

#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#s = #tilegpu.shared<vec = 8, perPhase = 8, maxPhase = 1, order = [1, 0]>
module attributes {tilegpu.num_warps = 4 : i32} {
  func.func @warpgroup_barriers_not_a_bool(%t: tensor<32x8xf16, #b>) {
    // expected-error @below {{tilegpu.warpgroup_barriers is true or false, not 1 : i32}}
    %buf = tilegpu.local_alloc %t {tilegpu.warpgroup_barriers = 1 : i32} : tensor<32x8xf16, #b> -> !tilegpu.memdesc<32x8xf16, #s>
    return
  }
}

// -----

#b = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#s = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
module attributes {tilegpu.num_warps = 4 : i32} {
  func.func @barrier_not_a_bool(%x: tensor<64x64xf16, #b>) {
    // expected-error @below {{tilegpu.leading_barrier is true or false, not 1 : i32}}
    %buf = tilegpu.local_alloc %x {tilegpu.leading_barrier = 1 : i32} : tensor<64x64xf16, #b> -> !tilegpu.memdesc<64x64xf16, #s>
    return
  }
}

// -----

#b = #tilegpu.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
module attributes {tilegpu.num_warps = 4 : i32} {
  func.func @width_not_a_power_of_two(%p: tensor<512x!tile.ptr<f32>, #b>) -> tensor<512xf32, #b> {
    // expected-error @below {{tilegpu.vector_width is a power of two, not 3 : i32}}
    %x = tile.load %p {tilegpu.vector_width = 3 : i32} : tensor<512x!tile.ptr<f32>, #b>
    return %x : tensor<512xf32, #b>
  }
}

// -----

#b = #tilegpu.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
module attributes {tilegpu.num_warps = 4 : i32} {
  func.func @width_of_an_add(%x: tensor<512xf32, #b>) -> tensor<512xf32, #b> {
    // expected-error @below {{tilegpu.vector_width is the vector width of a global access (tile.load, store, atomic_rmw, load_block, store_block), not of 'arith.addf'}}
    %y = arith.addf %x, %x {tilegpu.vector_width = 4 : i32} : tensor<512xf32, #b>
    return %y : tensor<512xf32, #b>
  }
}

// -----

module {
  // expected-error @below {{'tilegpu.async_commit_group' op must lie inside a function (a kernel or a helper), not at module scope}}
  tilegpu.async_commit_group
}

// -----

// expected-error @below {{a linear layout has 5 lane bases (32 lanes), not 4}}
func.func private @linear_lanes(tensor<64x8xf32, #tilegpu.linear<register = [[0, 1]], lane = [[0, 2], [0, 4], [1, 0], [2, 0]], warp = []>>)

// -----

// expected-error @below {{each basis of a linear layout has one coordinate per dimension: 1 where the first had 2}}
func.func private @linear_basis_rank(tensor<64x8xf32, #tilegpu.linear<register = [[0, 1], [8]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = []>>)

// -----

// The bases span rows 0-15 but no basis sets row bit 4: rows 4-7 and
// 12-15 are held by no thread.
// expected-error @below {{the linear layout's bases do not reach every element of a tensor of this shape}}
func.func private @linear_cover(tensor<16x8xf32, #tilegpu.linear<register = [[0, 1], [0, 1]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [8, 0]], warp = []>>)

// -----

// expected-error @below {{a rank-2 layout on a tensor of rank 1}}
func.func private @linear_tensor_rank(tensor<64xf32, #tilegpu.linear<register = [], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = []>>)

// -----

// expected-error @below {{a linear layout's coordinates are not negative}}
func.func private @linear_negative(tensor<64x8xf32, #tilegpu.linear<register = [[0, -1]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = []>>)

// -----

// expected-error @below {{a linear layout lays out tensors whose sides are powers of two}}
func.func private @linear_sides(tensor<48x8xf32, #tilegpu.linear<register = [[0, 1]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = []>>)

// -----

// expected-error @below {{a linear layout needs its lane bases}}
func.func private @linear_no_bases(tensor<64x8xf32, #tilegpu.linear<register = [], lane = [], warp = []>>)
