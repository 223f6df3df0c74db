// The tilegpu passes and convert-tilegpu-to-llvm work on laid-out IR only:
// run before convert-tile-to-tilegpu, or on a tensor it did not lay out, each
// says so instead of crashing.
// RUN: tile-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect -tilegpu-coalesce
// RUN: tile-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect -tilegpu-accelerate-matmul
// RUN: tile-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect -tilegpu-allocate-shared-memory
// RUN: tile-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect -tilegpu-remove-layout-conversions
// RUN: tile-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect -tilegpu-optimize-dot-operands
// RUN: tile-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect -tilegpu-pipeline
// RUN: tile-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect -tilegpu-place-barriers
// RUN: tile-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect -convert-tilegpu-to-llvm

// expected-error @+1 {{needs the layouts of convert-tile-to-tilegpu (no tilegpu.num_warps)}}
module {
  func.func @not_laid_out(%p: !tile.ptr<f32>) attributes {tile.kernel} {
    %offs = tile.arange 0 to 64 : tensor<64xi32>
    %ptrs = tile.splat %p : tensor<64x!tile.ptr<f32>>
    %at = tile.addptr %ptrs, %offs : tensor<64x!tile.ptr<f32>>, tensor<64xi32>
    %x = tile.load %at : tensor<64x!tile.ptr<f32>>
    tile.store %at, %x : tensor<64x!tile.ptr<f32>>
    return
  }
}

// -----

#blocked = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
module attributes {tilegpu.num_warps = 4 : i32} {
  func.func @half_laid_out(%p: !tile.ptr<f32>) attributes {tile.kernel} {
    %offs = tile.arange 0 to 128 : tensor<128xi32, #blocked>
    // expected-error @+1 {{needs every tensor laid out by convert-tile-to-tilegpu; result #0 has none: 'tensor<128x!tile.ptr<f32>>'}}
    %ptrs = tile.splat %p : tensor<128x!tile.ptr<f32>>
    return
  }
}

// -----

#blocked = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
module attributes {tilegpu.num_warps = 4 : i32} {
  func.func @loop_argument(%n: i32) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %init = arith.constant dense<0.0> : tensor<128xf32, #blocked>
    // An unregistered loop: scf's verifiers keep loop types consistent.
    // expected-error @+1 {{region argument #1 has none: 'tensor<128xf32>'}}
    %r = "test.loop"(%init) ({
    ^bb0(%i: i32, %acc: tensor<128xf32>):
      "test.yield"() : () -> ()
    }) : (tensor<128xf32, #blocked>) -> tensor<128xf32, #blocked>
    return
  }
}
