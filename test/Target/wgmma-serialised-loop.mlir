// REQUIRES: ptxas
// RUN: tile-opt %s -convert-nvvm-to-llvm | not tile-translate --emit=cubin -o %t.cubin 2>&1 | FileCheck %s

// A product left in flight across a loop's back edge whose accumulator the
// next iteration scales after a wait ptxas cannot match to it (C7514): every
// wgmma of the loop is serialised. tilegpu-overlap-products waits for its
// carried product before the iteration ends for this reason; the cubin is
// refused like any serialised warpgroup MMA.

// CHECK: ptxas serialised warpgroup MMA (a Hopper lowering bug):
// CHECK: (C7514)

module attributes {tilegpu.num_warps = 4 : i32, tilegpu.target = #tilegpu.target<sm_90a>} {
  llvm.func @in_flight_across_iterations(%out: !llvm.ptr<1>, %da: i64, %db: i64, %n: i32) attributes {nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>} {
    %zero = llvm.mlir.constant(0.0 : f32) : f32
    %two = llvm.mlir.constant(2.0 : f32) : f32
    %c0 = llvm.mlir.constant(0 : i32) : i32
    %c1 = llvm.mlir.constant(1 : i32) : i32
    %u = llvm.mlir.undef : !llvm.struct<(f32, f32, f32, f32)>
    %a0 = llvm.insertvalue %zero, %u[0] : !llvm.struct<(f32, f32, f32, f32)>
    %a1 = llvm.insertvalue %zero, %a0[1] : !llvm.struct<(f32, f32, f32, f32)>
    %a2 = llvm.insertvalue %zero, %a1[2] : !llvm.struct<(f32, f32, f32, f32)>
    %init = llvm.insertvalue %zero, %a2[3] : !llvm.struct<(f32, f32, f32, f32)>
    llvm.br ^loop(%c0, %init : i32, !llvm.struct<(f32, f32, f32, f32)>)
  ^loop(%i: i32, %acc: !llvm.struct<(f32, f32, f32, f32)>):
    nvvm.wgmma.fence.aligned
    %s = nvvm.wgmma.mma_async %da, %db, %init, #nvvm.shape<m = 64, n = 8, k = 16>, D [<f32>, #nvvm.wgmma_scale_out<zero>], A [<f16>, #nvvm.wgmma_scale_in<one>, <row>], B [<f16>, #nvvm.wgmma_scale_in<one>, <col>] : !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
    nvvm.wgmma.commit.group.sync.aligned
    nvvm.wgmma.wait.group.sync.aligned 1
    %x = llvm.extractvalue %acc[0] : !llvm.struct<(f32, f32, f32, f32)>
    %y = llvm.fmul %x, %two : f32
    %scaled = llvm.insertvalue %y, %acc[0] : !llvm.struct<(f32, f32, f32, f32)>
    nvvm.wgmma.fence.aligned
    %d = nvvm.wgmma.mma_async %da, %db, %scaled, #nvvm.shape<m = 64, n = 8, k = 16>, D [<f32>, #nvvm.wgmma_scale_out<one>], A [<f16>, #nvvm.wgmma_scale_in<one>, <row>], B [<f16>, #nvvm.wgmma_scale_in<one>, <col>] : !llvm.struct<(f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32)>
    nvvm.wgmma.commit.group.sync.aligned
    nvvm.wgmma.wait.group.sync.aligned 1
    %sx = llvm.extractvalue %s[0] : !llvm.struct<(f32, f32, f32, f32)>
    llvm.store %sx, %out : f32, !llvm.ptr<1>
    %next = llvm.add %i, %c1 : i32
    %more = llvm.icmp "slt" %next, %n : i32
    llvm.cond_br %more, ^loop(%next, %d : i32, !llvm.struct<(f32, f32, f32, f32)>), ^done(%d : !llvm.struct<(f32, f32, f32, f32)>)
  ^done(%r: !llvm.struct<(f32, f32, f32, f32)>):
    nvvm.wgmma.wait.group.sync.aligned 0
    %rx = llvm.extractvalue %r[0] : !llvm.struct<(f32, f32, f32, f32)>
    llvm.store %rx, %out : f32, !llvm.ptr<1>
    llvm.return
  }
}
