// RUN: tile-opt %s -split-input-file -tilegpu-allocate-shared-memory -tilegpu-place-barriers -convert-tilegpu-to-llvm | FileCheck %s

// join and split on layouts that keep each pair in one thread (the pair's
// dimension a blocked layout's fastest, in registers), and a reshape whose
// layouts keep each row-major position in its thread, renumber registers:
// no shared memory.

// CHECK-LABEL: llvm.func @in_place
// CHECK-NOT: !llvm.ptr<3>
// CHECK: llvm.return
#b = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]>
#p = #tilegpu.blocked<sizePerThread = [1, 1, 2], threadsPerWarp = [2, 16, 1], warpsPerCTA = [4, 1, 1], order = [2, 1, 0]>
#f = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @in_place(%o: !tile.ptr<f32>) attributes {tile.kernel} {
    %x = arith.constant dense<1.0> : tensor<16x16xf32, #b>
    %y = arith.constant dense<2.0> : tensor<16x16xf32, #b>
    %pairs = tile.join %x, %y : tensor<16x16xf32, #b> -> tensor<16x16x2xf32, #p>
    %a, %c = tile.split %pairs : tensor<16x16x2xf32, #p> -> tensor<16x16xf32, #b>
    %d = arith.subf %a, %c : tensor<16x16xf32, #b>
    %flat = tile.reshape %d : tensor<16x16xf32, #b> -> tensor<256xf32, #f>
    %os = tile.splat %o : tensor<256x!tile.ptr<f32>, #f>
    %r = tile.arange 0 to 256 : tensor<256xi32, #f>
    %ptrs = tile.addptr %os, %r : tensor<256x!tile.ptr<f32>, #f>, tensor<256xi32, #f>
    tile.store %ptrs, %flat : tensor<256x!tile.ptr<f32>, #f>
    return
  }
}

// -----

// A reshape, a join and a split whose elements change threads go through
// shared memory between barriers: each thread stores its elements at their
// row-major places (a join's operands at 2i and 2i + 1) and loads its
// results'.

// CHECK-LABEL: llvm.func @moved
// CHECK: nvvm.barrier0
// CHECK-COUNT-2: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK: nvvm.barrier0
// CHECK: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
#rows = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]>
#spread = #tilegpu.blocked<sizePerThread = [1, 1, 1], threadsPerWarp = [1, 16, 2], warpsPerCTA = [4, 1, 1], order = [2, 1, 0]>
#flat = #tilegpu.blocked<sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @moved(%o: !tile.ptr<f32>) attributes {tile.kernel} {
    %x = arith.constant dense<1.0> : tensor<16x16xf32, #rows>
    %pairs = tile.join %x, %x : tensor<16x16xf32, #rows> -> tensor<16x16x2xf32, #spread>
    %a, %c = tile.split %pairs : tensor<16x16x2xf32, #spread> -> tensor<16x16xf32, #rows>
    %flat = tile.reshape %a : tensor<16x16xf32, #rows> -> tensor<256xf32, #flat>
    %os = tile.splat %o : tensor<256x!tile.ptr<f32>, #flat>
    %r = tile.arange 0 to 256 : tensor<256xi32, #flat>
    %ptrs = tile.addptr %os, %r : tensor<256x!tile.ptr<f32>, #flat>, tensor<256xi32, #flat>
    tile.store %ptrs, %flat : tensor<256x!tile.ptr<f32>, #flat>
    return
  }
}
