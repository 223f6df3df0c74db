// RUN: tile-opt %s -split-input-file -tilegpu-accelerate-matmul -verify-diagnostics | FileCheck %s

// A dot moves to the tensor-core layouts: operands to dot_operand layouts of
// an mma layout with warps along the rows, the accumulator to that mma
// layout, and the result back to the layout its users expect.

#b = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-DAG: #[[MMA:.*]] = #tilegpu.mma<version = 2, warpsPerCTA = [4, 1]>
// CHECK-DAG: #[[A:.*]] = #tilegpu.dot_operand<opIdx = 0, parent = #[[MMA]], kWidth = 2>
// CHECK-DAG: #[[B:.*]] = #tilegpu.dot_operand<opIdx = 1, parent = #[[MMA]], kWidth = 2>
// CHECK-LABEL: func.func @attention_scores
// CHECK: %[[QA:.*]] = tilegpu.convert_layout %{{.*}} : tensor<128x64xf16, #blocked> -> tensor<128x64xf16, #[[A]]>
// CHECK: %[[KB:.*]] = tilegpu.convert_layout %{{.*}} : tensor<64x64xf16, #blocked> -> tensor<64x64xf16, #[[B]]>
// CHECK: %[[ACC:.*]] = tilegpu.convert_layout %{{.*}} : tensor<128x64xf32, #blocked> -> tensor<128x64xf32, #[[MMA]]>
// CHECK: %[[S:.*]] = tile.dot %[[QA]], %[[KB]], %[[ACC]] : tensor<128x64xf16, #[[A]]>, tensor<64x64xf16, #[[B]]> -> tensor<128x64xf32, #[[MMA]]>
// CHECK: tilegpu.convert_layout %[[S]] : tensor<128x64xf32, #[[MMA]]> -> tensor<128x64xf32, #blocked>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = "sm_90a"} {
  func.func @attention_scores(%q: tensor<128x64xf16, #b>, %k: tensor<64x64xf16, #b>, %acc: tensor<128x64xf32, #b>) -> tensor<128x64xf32, #b> {
    %s = tile.dot %q, %k, %acc : tensor<128x64xf16, #b>, tensor<64x64xf16, #b> -> tensor<128x64xf32, #b>
    return %s : tensor<128x64xf32, #b>
  }
}

// -----

// With fewer 16-row tiles than warps, the other warps spread over columns.
#b = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [8, 1], order = [1, 0]>
// CHECK: #tilegpu.mma<version = 2, warpsPerCTA = [2, 4]>
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = "sm_90a"} {
  func.func @wide(%a: tensor<32x64xbf16, #b>, %w: tensor<64x128xbf16, #b>, %acc: tensor<32x128xf32, #b>) -> tensor<32x128xf32, #b> {
    %s = tile.dot %a, %w, %acc : tensor<32x64xbf16, #b>, tensor<64x128xbf16, #b> -> tensor<32x128xf32, #b>
    return %s : tensor<32x128xf32, #b>
  }
}

// -----

#b = #tilegpu.blocked<sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]>
module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = "sm_90a"} {
  func.func @int8(%a: tensor<32x32xi8, #b>, %acc: tensor<32x32xi32, #b>) -> tensor<32x32xi32, #b> {
    // expected-error @below {{tile.dot runs on the tensor cores with f16, bf16 or f32 operands; 'i8' operands are not supported on the GPU yet}}
    %s = tile.dot %a, %a, %acc : tensor<32x32xi8, #b>, tensor<32x32xi8, #b> -> tensor<32x32xi32, #b>
    return %s : tensor<32x32xi32, #b>
  }
}
