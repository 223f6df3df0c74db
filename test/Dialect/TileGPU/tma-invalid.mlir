// RUN: tile-opt %s -split-input-file -verify-diagnostics

// Each rule of the TMA and mbarrier ops, and of tilegpu.tensormaps, broken
// once.

#bar = #tilegpu.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]>
func.func @init_one(%b: !tilegpu.memdesc<1x1xi64, #bar>) {
  // expected-error @below {{takes stacks of mbarriers, !tilegpu.memdesc<Nx1x1xi64>}}
  tilegpu.init_barriers %b arrivals [1] : !tilegpu.memdesc<1x1xi64, #bar>
  return
}

// -----

#bar = #tilegpu.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]>
func.func @inval_i32(%b: !tilegpu.memdesc<2x1x1xi32, #bar>) {
  // expected-error @below {{takes stacks of mbarriers, !tilegpu.memdesc<Nx1x1xi64>}}
  tilegpu.inval_barriers %b : !tilegpu.memdesc<2x1x1xi32, #bar>
  return
}

// -----

#bar = #tilegpu.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]>
func.func @wait_stack(%b: !tilegpu.memdesc<2x1x1xi64, #bar>, %phase: i32) {
  // expected-error @below {{waits on one mbarrier, !tilegpu.memdesc<1x1xi64>}}
  tilegpu.wait_barrier %b, %phase : !tilegpu.memdesc<2x1x1xi64, #bar>
  return
}

// -----

#blocked = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#shared = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
#bar = #tilegpu.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]>
func.func @not_nvmma(%p: !tile.block_ptr<tensor<64x64xf16, #blocked>>, %d: !tilegpu.tensormap, %buf: !tilegpu.memdesc<64x64xf16, #shared>, %b: !tilegpu.memdesc<1x1xi64, #bar>) {
  // expected-error @below {{copies into an nvmma_shared buffer (the layouts the TMA swizzles) or an unswizzled #tilegpu.shared one}}
  tilegpu.async_tma_copy_block %p, %d[], %buf, %b : !tile.block_ptr<tensor<64x64xf16, #blocked>>, !tilegpu.memdesc<64x64xf16, #shared>, !tilegpu.memdesc<1x1xi64, #bar>
  return
}

// -----

#blocked = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#nvmma = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#bar = #tilegpu.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]>
func.func @other_shape(%p: !tile.block_ptr<tensor<64x64xf16, #blocked>>, %d: !tilegpu.tensormap, %buf: !tilegpu.memdesc<128x64xf16, #nvmma>, %b: !tilegpu.memdesc<1x1xi64, #bar>) {
  // expected-error @below {{copies a block of 'tensor<64x64xf16, #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>>' into a buffer of another shape or element type}}
  tilegpu.async_tma_copy_block %p, %d[], %buf, %b : !tile.block_ptr<tensor<64x64xf16, #blocked>>, !tilegpu.memdesc<128x64xf16, #nvmma>, !tilegpu.memdesc<1x1xi64, #bar>
  return
}

// -----

#blocked = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#nvmma = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#bar = #tilegpu.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]>
func.func @barrier_stack(%p: !tile.block_ptr<tensor<64x64xf16, #blocked>>, %d: !tilegpu.tensormap, %buf: !tilegpu.memdesc<64x64xf16, #nvmma>, %b: !tilegpu.memdesc<2x1x1xi64, #bar>) {
  // expected-error @below {{signals one mbarrier, !tilegpu.memdesc<1x1xi64>}}
  tilegpu.async_tma_copy_block %p, %d[], %buf, %b : !tile.block_ptr<tensor<64x64xf16, #blocked>>, !tilegpu.memdesc<64x64xf16, #nvmma>, !tilegpu.memdesc<2x1x1xi64, #bar>
  return
}

// -----

#blocked = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#nvmma = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#bar = #tilegpu.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]>
func.func @rank_six(%p: !tile.block_ptr<tensor<64x64xf16, #blocked>>, %d: !tilegpu.tensormap, %buf: !tilegpu.memdesc<64x64xf16, #nvmma>, %b: !tilegpu.memdesc<1x1xi64, #bar>, %c: i32) {
  // expected-error @below {{copies through a descriptor of rank 6; the TMA's go up to 5}}
  tilegpu.async_tma_copy_block %p, %d[%c, %c, %c, %c], %buf, %b : !tile.block_ptr<tensor<64x64xf16, #blocked>>, !tilegpu.memdesc<64x64xf16, #nvmma>, !tilegpu.memdesc<1x1xi64, #bar>
  return
}

// -----

#blocked = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#shared = #tilegpu.shared<vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]>
func.func @store_not_nvmma(%p: !tile.block_ptr<tensor<64x64xf16, #blocked>>, %d: !tilegpu.tensormap, %buf: !tilegpu.memdesc<64x64xf16, #shared>) {
  // expected-error @below {{copies from an nvmma_shared buffer (the layouts the TMA swizzles) or an unswizzled #tilegpu.shared one}}
  tilegpu.async_tma_store_block %p, %d[], %buf : !tile.block_ptr<tensor<64x64xf16, #blocked>>, !tilegpu.memdesc<64x64xf16, #shared>
  return
}

// -----

#blocked = #tilegpu.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#nvmma = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
func.func @store_other_type(%p: !tile.block_ptr<tensor<64x64xf16, #blocked>>, %d: !tilegpu.tensormap, %buf: !tilegpu.memdesc<64x64xbf16, #nvmma>) {
  // expected-error @below {{from a buffer of another shape or element type}}
  tilegpu.async_tma_store_block %p, %d[], %buf : !tile.block_ptr<tensor<64x64xf16, #blocked>>, !tilegpu.memdesc<64x64xbf16, #nvmma>
  return
}

// -----

// expected-error @below {{tilegpu.tensormaps is a module's array of {base, dims, strides, box, swizzle} dictionaries}}
module attributes {tilegpu.tensormaps = [{base = "K", dims = [64], strides = [], box = [64], swizzle = 128}]} {
}

// -----

// Warps of a blocked layout hold interleaved rows, not a box each.
#b = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [8, 1], order = [1, 0]>
#nvmma = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 32, order = [1, 0]>
module attributes {tilegpu.num_warps = 8 : i32} {
  func.func @update_no_box(%p: !tile.block_ptr<tensor<64x128xf32, #b>>, %d: !tilegpu.tensormap, %x: tensor<64x128xf32, #b>, %buf: !tilegpu.memdesc<64x128xf32, #nvmma>) {
    // expected-error @below {{needs a tile each warp holds a box of alone}}
    tilegpu.async_tma_reduce_block add %p, %d[], %x, %buf : !tile.block_ptr<tensor<64x128xf32, #b>>, tensor<64x128xf32, #b>, !tilegpu.memdesc<64x128xf32, #nvmma>
    return
  }
}

// -----

#mma = #tilegpu.mma<version = 3, warpsPerCTA = [4, 2], instrShape = [64, 64]>
#nvmma = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 32, order = [1, 0]>
module attributes {tilegpu.num_warps = 8 : i32} {
  func.func @update_other_shape(%p: !tile.block_ptr<tensor<64x128xf32, #mma>>, %d: !tilegpu.tensormap, %x: tensor<64x128xf32, #mma>, %buf: !tilegpu.memdesc<64x64xf32, #nvmma>) {
    // expected-error @below {{from a buffer of another shape or element type}}
    tilegpu.async_tma_reduce_block add %p, %d[], %x, %buf : !tile.block_ptr<tensor<64x128xf32, #mma>>, tensor<64x128xf32, #mma>, !tilegpu.memdesc<64x64xf32, #nvmma>
    return
  }
}

// -----

// One arrival count a stack.
#bar = #tilegpu.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]>
func.func @init_arrivals(%a: !tilegpu.memdesc<2x1x1xi64, #bar>, %b: !tilegpu.memdesc<2x1x1xi64, #bar>) {
  // expected-error @below {{has 1 arrival counts for 2 stacks of mbarriers: one a stack}}
  tilegpu.init_barriers %a, %b arrivals [1] : !tilegpu.memdesc<2x1x1xi64, #bar>, !tilegpu.memdesc<2x1x1xi64, #bar>
  return
}

// -----

// An mbarrier op needs a stack to act on.
func.func @no_stacks() {
  // expected-error @below {{takes at least one stack of mbarriers}}
  "tilegpu.inval_barriers"() : () -> ()
  return
}

// -----

// Bulk reductions: offset bits that are not a permutation, a buffer of
// another size, runs shorter than 16 bytes, and an add of i32.
#mma = #tilegpu.mma<version = 3, warpsPerCTA = [4, 2], instrShape = [64, 64]>
#flat = #tilegpu.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]>
module attributes {tilegpu.num_warps = 8 : i32} {
  func.func @bulk_not_permutation(%p: tensor<64x128x!tile.ptr<f32>, #mma>, %x: tensor<64x128xf32, #mma>, %buf: !tilegpu.memdesc<1x8192xf32, #flat>) {
    // expected-error @below {{needs offset_bits, a permutation of 0 to 12 (one for each index bit)}}
    tilegpu.async_bulk_reduce add %p, %x, %buf {offset_bits = array<i64: 3, 4, 5, 10, 11, 12, 0, 1, 2, 6, 7, 8, 8>} : tensor<64x128x!tile.ptr<f32>, #mma>, tensor<64x128xf32, #mma>, !tilegpu.memdesc<1x8192xf32, #flat>
    return
  }
}

// -----

#mma = #tilegpu.mma<version = 3, warpsPerCTA = [4, 2], instrShape = [64, 64]>
#flat = #tilegpu.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]>
module attributes {tilegpu.num_warps = 8 : i32} {
  func.func @bulk_buffer_size(%p: tensor<64x128x!tile.ptr<f32>, #mma>, %x: tensor<64x128xf32, #mma>, %buf: !tilegpu.memdesc<1x4096xf32, #flat>) {
    // expected-error @below {{updates from a buffer of the tile's 8192 'f32' elements}}
    tilegpu.async_bulk_reduce add %p, %x, %buf {offset_bits = array<i64: 3, 4, 5, 10, 11, 12, 0, 1, 2, 6, 7, 8, 9>} : tensor<64x128x!tile.ptr<f32>, #mma>, tensor<64x128xf32, #mma>, !tilegpu.memdesc<1x4096xf32, #flat>
    return
  }
}

// -----

#mma = #tilegpu.mma<version = 3, warpsPerCTA = [4, 2], instrShape = [64, 64]>
#flat = #tilegpu.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]>
module attributes {tilegpu.num_warps = 8 : i32} {
  func.func @bulk_short_runs(%p: tensor<64x128x!tile.ptr<f32>, #mma>, %x: tensor<64x128xf32, #mma>, %buf: !tilegpu.memdesc<1x8192xf32, #flat>) {
    // expected-error @below {{needs a layout whose warps hold runs of 16 bytes or more of the block}}
    tilegpu.async_bulk_reduce add %p, %x, %buf {offset_bits = array<i64: 3, 4, 5, 10, 11, 12, 1, 2, 9, 6, 7, 8, 0>} : tensor<64x128x!tile.ptr<f32>, #mma>, tensor<64x128xf32, #mma>, !tilegpu.memdesc<1x8192xf32, #flat>
    return
  }
}

// -----

#mma = #tilegpu.mma<version = 3, warpsPerCTA = [4, 2], instrShape = [64, 64]>
#flat = #tilegpu.shared<vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]>
module attributes {tilegpu.num_warps = 8 : i32} {
  func.func @bulk_int(%p: tensor<64x128x!tile.ptr<i32>, #mma>, %x: tensor<64x128xi32, #mma>, %buf: !tilegpu.memdesc<1x8192xi32, #flat>) {
    // expected-error @below {{adds f32 elements alone, not add of 'i32'}}
    tilegpu.async_bulk_reduce add %p, %x, %buf {offset_bits = array<i64: 3, 4, 5, 10, 11, 12, 0, 1, 2, 6, 7, 8, 9>} : tensor<64x128x!tile.ptr<i32>, #mma>, tensor<64x128xi32, #mma>, !tilegpu.memdesc<1x8192xi32, #flat>
    return
  }
}
