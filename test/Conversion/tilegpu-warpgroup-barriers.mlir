// RUN: tile-opt %s -convert-tilegpu-to-llvm | tile-translate --emit=ptx | FileCheck %s

// A store whose barriers order its warpgroup alone (tilegpu.warpgroup_barriers,
// decided in test/Dialect/TileGPU/tilegpu-place-barriers.mlir,
// @rows_by_warpgroup): before and after the store, each warpgroup k waits
// at named barrier 8 + k, its own (k = thread index / 128, at most 4), with
// its 128 threads; no barrier of the whole program.
// CHECK-LABEL: .entry warpgroup_barriers
// CHECK-NOT: bar.sync 0
// CHECK: shr.u32 [[GROUP:%r[0-9]+]], %r{{[0-9]+}}, 7;
// CHECK: or.b32 [[OWN:%r[0-9]+]], [[GROUP]], 8;
// CHECK-NEXT: bar.sync [[OWN]], 128;
// CHECK: stmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: bar.sync [[OWN]], 128;
// CHECK-NOT: bar.sync 0
// CHECK: ret;
#mma = #tilegpu.mma<version = 3, warpsPerCTA = [8, 1], instrShape = [64, 64]>
#n = #tilegpu.nvmma_shared<swizzle = 128, elementBits = 16, order = [1, 0]>
module attributes {tilegpu.num_warps = 8 : i32, tilegpu.shared_bytes = 16384 : i64, tilegpu.target = #tilegpu.target<sm_90a>} {
  func.func @warpgroup_barriers() attributes {tile.kernel} {
    %s = arith.constant dense<1.0> : tensor<128x64xf16, #mma>
    %p = tilegpu.local_alloc %s {tilegpu.allocation_offset = 0 : i64, tilegpu.leading_barrier = true, tilegpu.warpgroup_barriers = true} : tensor<128x64xf16, #mma> -> !tilegpu.memdesc<128x64xf16, #n>
    return
  }
}
