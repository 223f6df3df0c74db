// RUN: tile-opt %s -split-input-file -canonicalize | FileCheck %s

#a = #tilegpu.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
#b = #tilegpu.blocked<sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>
#c = #tilegpu.blocked<sizePerThread = [2], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]>

// CHECK-LABEL: func.func @same_layout
// CHECK-SAME: (%[[X:.*]]: tensor<128xf32, #{{.*}}>)
// CHECK-NEXT: return %[[X]]
func.func @same_layout(%x: tensor<128xf32, #a>) -> tensor<128xf32, #a> {
  %0 = tilegpu.convert_layout %x : tensor<128xf32, #a> -> tensor<128xf32, #a>
  return %0 : tensor<128xf32, #a>
}

// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.*]]: tensor<128xf32, #[[A:.*]]>)
// CHECK-NEXT: %[[Y:.*]] = tilegpu.convert_layout %[[X]] : tensor<128xf32, #[[A]]> -> tensor<128xf32, #[[C:.*]]>
// CHECK-NEXT: return %[[Y]]
func.func @chain(%x: tensor<128xf32, #a>) -> tensor<128xf32, #c> {
  %0 = tilegpu.convert_layout %x : tensor<128xf32, #a> -> tensor<128xf32, #b>
  %1 = tilegpu.convert_layout %0 : tensor<128xf32, #b> -> tensor<128xf32, #c>
  return %1 : tensor<128xf32, #c>
}

// CHECK-LABEL: func.func @round_trip
// CHECK-SAME: (%[[X:.*]]: tensor<128xf32, #{{.*}}>)
// CHECK-NEXT: return %[[X]]
func.func @round_trip(%x: tensor<128xf32, #a>) -> tensor<128xf32, #a> {
  %0 = tilegpu.convert_layout %x : tensor<128xf32, #a> -> tensor<128xf32, #b>
  %1 = tilegpu.convert_layout %0 : tensor<128xf32, #b> -> tensor<128xf32, #a>
  return %1 : tensor<128xf32, #a>
}
