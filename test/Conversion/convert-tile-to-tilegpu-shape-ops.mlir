// RUN: tile-opt %s -convert-tile-to-tilegpu="num-warps=4" | FileCheck %s

// join lays the pair's dimension out as a blocked layout's fastest, in a
// thread's registers, and split takes it so; a reshape takes its operand as
// it is and gives the default layout of its shape.

// CHECK-DAG: #[[B:blocked[0-9]*]] = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-DAG: #[[P:blocked[0-9]*]] = #tilegpu.blocked<sizePerThread = [1, 1, 2], threadsPerWarp = [2, 16, 1], warpsPerCTA = [4, 1, 1], order = [2, 1, 0]>
// CHECK-LABEL: func.func @shapes
// CHECK: tile.join %{{.*}}, %{{.*}} : tensor<16x16xf32, #[[B]]> -> tensor<16x16x2xf32, #[[P]]>
// CHECK: tile.split %{{.*}} : tensor<16x16x2xf32, #[[P]]> -> tensor<16x16xf32, #[[B]]>
// CHECK: tile.reshape %{{.*}} : tensor<16x16xf32, #[[B]]> -> tensor<256xf32, #{{.*}}>
func.func @shapes(%o: !tile.ptr<f32>) attributes {tile.kernel} {
  %x = arith.constant dense<1.0> : tensor<16x16xf32>
  %pairs = tile.join %x, %x : tensor<16x16xf32> -> tensor<16x16x2xf32>
  %a, %c = tile.split %pairs : tensor<16x16x2xf32> -> tensor<16x16xf32>
  %d = arith.subf %a, %c : tensor<16x16xf32>
  %flat = tile.reshape %d : tensor<16x16xf32> -> tensor<256xf32>
  %os = tile.splat %o : tensor<256x!tile.ptr<f32>>
  %r = tile.arange 0 to 256 : tensor<256xi32>
  %ptrs = tile.addptr %os, %r : tensor<256x!tile.ptr<f32>>, tensor<256xi32>
  tile.store %ptrs, %flat : tensor<256x!tile.ptr<f32>>
  return
}
