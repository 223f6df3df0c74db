// RUN: tile-opt %s -split-input-file | FileCheck %s
// RUN: tile-opt %s -split-input-file | tile-opt -split-input-file | FileCheck %s

// tilegpu.warpgroup_dot round-trips with A in shared memory and with A in
// registers, its result in a wgmma layout, its operands in nvmma_shared
// buffers (K-major and MN-major).

#acc = #tilegpu.mma<version = 3, warpsPerCTA = [8, 1], instrShape = [64, 128]>
#p = #tilegpu.dot_operand<opIdx = 0, parent = #acc, kWidth = 2>
#rows = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
#kmajor = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [0, 1]>
// CHECK-DAG: #[[ACC:.*]] = #tilegpu.mma<version = 3, warpsPerCTA = [8, 1], instrShape = [64, 128]>
// CHECK-DAG: #[[ROWS:.*]] = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
// CHECK-DAG: #[[KMAJOR:.*]] = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [0, 1]>
// CHECK-LABEL: func.func @shared_and_registers
// CHECK: tilegpu.warpgroup_dot %arg0, %arg1, %arg3 : !tilegpu.memdesc<128x64xf16, #[[ROWS]]>, !tilegpu.memdesc<64x128xf16, #[[KMAJOR]]>, tensor<128x128xf32, #[[ACC]]> -> tensor<128x128xf32, #[[ACC]]>
// CHECK: %[[O:.*]] = tilegpu.warpgroup_dot %arg2, %arg4, %{{.*}} {is_async} : tensor<128x64xf16, #{{.*}}>, !tilegpu.memdesc<64x128xf16, #[[ROWS]]>
// CHECK: tilegpu.warpgroup_dot_wait %[[O]] {pendings = 0 : i32} : tensor<128x128xf32, #[[ACC]]>
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @shared_and_registers(%q: !tilegpu.memdesc<128x64xf16, #rows>, %k: !tilegpu.memdesc<64x128xf16, #kmajor>, %p: tensor<128x64xf16, #p>, %acc: tensor<128x128xf32, #acc>, %v: !tilegpu.memdesc<64x128xf16, #rows>) -> tensor<128x128xf32, #acc> {
    %s = tilegpu.warpgroup_dot %q, %k, %acc : !tilegpu.memdesc<128x64xf16, #rows>, !tilegpu.memdesc<64x128xf16, #kmajor>, tensor<128x128xf32, #acc> -> tensor<128x128xf32, #acc>
    %o = tilegpu.warpgroup_dot %p, %v, %s {is_async} : tensor<128x64xf16, #p>, !tilegpu.memdesc<64x128xf16, #rows>, tensor<128x128xf32, #acc> -> tensor<128x128xf32, #acc>
    %done = tilegpu.warpgroup_dot_wait %o {pendings = 0 : i32} : tensor<128x128xf32, #acc>
    return %done : tensor<128x128xf32, #acc>
  }
}

// -----

// fp8 operands, k contiguous in both buffers; e4m3 and e5m2 may mix.
#acc = #tilegpu.mma<version = 3, warpsPerCTA = [4, 1], instrShape = [64, 128]>
#rows8 = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 8, order = [1, 0]>
#cols8 = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 8, order = [0, 1]>
// CHECK-LABEL: func.func @fp8
// CHECK: tilegpu.warpgroup_dot %arg0, %arg1, %arg2 : !tilegpu.memdesc<64x128xf8E4M3FN, #{{.*}}>, !tilegpu.memdesc<128x128xf8E5M2, #{{.*}}>
func.func @fp8(%a: !tilegpu.memdesc<64x128xf8E4M3FN, #rows8>, %b: !tilegpu.memdesc<128x128xf8E5M2, #cols8>, %acc: tensor<64x128xf32, #acc>) -> tensor<64x128xf32, #acc> {
  %d = tilegpu.warpgroup_dot %a, %b, %acc : !tilegpu.memdesc<64x128xf8E4M3FN, #rows8>, !tilegpu.memdesc<128x128xf8E5M2, #cols8>, tensor<64x128xf32, #acc> -> tensor<64x128xf32, #acc>
  return %d : tensor<64x128xf32, #acc>
}
