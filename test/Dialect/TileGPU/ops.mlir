// RUN: tile-opt %s | FileCheck %s
// RUN: tile-opt %s | tile-opt | FileCheck %s

// Layout encodings round-trip, and tile ops accept tensors that carry them.

#row = #tilegpu.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#col = #tilegpu.blocked<sizePerThread = [4, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]>
#rows_of = #tilegpu.slice<dim = 1, parent = #row>

// CHECK: #[[ROW:.*]] = #tilegpu.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK: #[[COL:.*]] = #tilegpu.blocked<sizePerThread = [4, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]>
// CHECK: #[[SLICE:.*]] = #tilegpu.slice<dim = 1, parent = #[[ROW]]>

module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = "sm_90a"} {
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
