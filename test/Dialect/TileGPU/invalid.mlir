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
  // expected-error @below {{'tilegpu.convert_layout' op the layout of 'tensor<64xf32, #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>>' is for another rank}}
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
