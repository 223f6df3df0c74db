// REQUIRES: ptxas
// RUN: tile-opt %s -convert-nvvm-to-llvm | not tile-translate --emit=cubin -o %t.cubin 2>&1 | FileCheck %s

// A wgmma result read before its group is waited for: ptxas must insert
// the wait itself (C7517), which serialises the warpgroup MMA. In the
// Hopper path that is a lowering bug, and the cubin is refused.

// CHECK: ptxas serialised warpgroup MMA (a Hopper lowering bug):
// CHECK: (C7517)

module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  llvm.func @read_too_early(%out: !llvm.ptr<1>, %da: i64, %db: i64) attributes {nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>} {
    %zero = llvm.mlir.constant(0.0 : f32) : f32
    %u = llvm.mlir.undef : !llvm.struct<(f32, f32, f32, f32)>
    %a0 = llvm.insertvalue %zero, %u[0] : !llvm.struct<(f32, f32, f32, f32)>
    %a1 = llvm.insertvalue %zero, %a0[1] : !llvm.struct<(f32, f32, f32, f32)>
    %a2 = llvm.insertvalue %zero, %a1[2] : !llvm.struct<(f32, f32, f32, f32)>
    %acc = llvm.insertvalue %zero, %a2[3] : !llvm.struct<(f32, f32, f32, f32)>
    nvvm.wgmma.fence.aligned
    %d = nvvm.wgmma.mma_async %da, %db, %acc, #nvvm.shape<m = 64, n = 8, k = 16>, D [<f32>, #nvvm.wgmma_scale_out<one>], A [<f16>, #nvvm.wgmma_scale_in<one>, <row>], B [<f16>, #nvvm.wgmma_scale_in<one>, <col>] : !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
    nvvm.wgmma.commit.group.sync.aligned
    %x = llvm.extractvalue %d[0] : !llvm.struct<(f32, f32, f32, f32)>
    llvm.store %x, %out : f32, !llvm.ptr<1>
    nvvm.wgmma.wait.group.sync.aligned 0
    llvm.return
  }
}
