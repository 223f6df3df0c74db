// RUN: tile-translate %s --emit=llvm | FileCheck %s
// RUN: tile-translate %s --emit=llvm --options="distribute-disjoint-constants=false" | FileCheck %s --check-prefix=OFF

// A layout register's coordinate is a per-thread part or'ed with a
// constant. tile-translate moves the constant out through the shifts,
// masks, multiplies and adds of an index, so that registers share the
// per-thread part and differ by an immediate. InstCombine alone does it
// only for an `or` of one use, and a coordinate has one per register.

// dQ's grouped column offset, (col >> 3) * 64 + (col & 7), of the register
// at column 16 of a thread: the thread's offset at column 0, plus 128.
// CHECK-LABEL: define ptx_kernel void @grouped_columns(
// CHECK: [[BASE:%[0-9]+]] = add i32 %{{[0-9]+}}, %2
// CHECK-NEXT: [[INDEX:%[0-9]+]] = add i32 [[BASE]], 128
// CHECK-NEXT: sext i32 [[INDEX]] to i64
// OFF-LABEL: define ptx_kernel void @grouped_columns(
// OFF: shl nuw nsw i32 %{{[0-9]+}}, 3
// OFF-NEXT: and i32 %{{[0-9]+}}, 960
llvm.func @grouped_columns(%out: !llvm.ptr<1>, %cols: !llvm.ptr<1>, %start: i32) attributes {nvvm.kernel} {
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %c1 = llvm.mlir.constant(1 : i32) : i32
  %c3 = llvm.mlir.constant(3 : i32) : i32
  %c6 = llvm.mlir.constant(6 : i32) : i32
  %c7 = llvm.mlir.constant(7 : i32) : i32
  %c16 = llvm.mlir.constant(16 : i32) : i32
  %c64 = llvm.mlir.constant(64 : i32) : i32
  %quad = llvm.and %tid, %c3 : i32
  %pair = llvm.shl %quad, %c1 : i32
  %warp = llvm.lshr %tid, %c6 : i32
  %tile = llvm.shl %warp, %c3 : i32
  %t = llvm.or disjoint %pair, %tile : i32
  %col = llvm.or disjoint %t, %c16 : i32
  %group = llvm.lshr %col, %c3 : i32
  %groupStart = llvm.mul %group, %c64 : i32
  %inGroup = llvm.and %col, %c7 : i32
  %offset = llvm.add %groupStart, %inGroup : i32
  %index = llvm.add %offset, %start : i32
  %p = llvm.getelementptr %out[%index] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
  %one = llvm.mlir.constant(1.0 : f32) : f32
  llvm.store %one, %p : f32, !llvm.ptr<1>
  llvm.store %col, %cols : i32, !llvm.ptr<1>
  llvm.return
}

// A right shift and a multiply by a non-power of two: (x | 96) >> 5 is
// (x >> 5) | 3, and (x | 96) * 3 is x * 3 + 288.
// CHECK-LABEL: define ptx_kernel void @shift_and_multiply(
// CHECK-DAG: or disjoint i32 %{{[0-9]+}}, 3
// CHECK-DAG: add nuw nsw i32 %{{[0-9]+}}, 288
// OFF-LABEL: define ptx_kernel void @shift_and_multiply(
// OFF-DAG: lshr exact i32 %{{[0-9]+}}, 5
// OFF-DAG: mul nuw nsw i32 %{{[0-9]+}}, 3
llvm.func @shift_and_multiply(%out: !llvm.ptr<1>) attributes {nvvm.kernel} {
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %c5 = llvm.mlir.constant(5 : i32) : i32
  %c3 = llvm.mlir.constant(3 : i32) : i32
  %c7 = llvm.mlir.constant(7 : i32) : i32
  %c96 = llvm.mlir.constant(96 : i32) : i32
  %part = llvm.shl %tid, %c7 : i32
  %v = llvm.or disjoint %part, %c96 : i32
  %shifted = llvm.ashr %v, %c5 : i32
  %scaled = llvm.mul %v, %c3 : i32
  %p1 = llvm.getelementptr %out[1] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i32
  %p2 = llvm.getelementptr %out[2] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i32
  llvm.store %v, %out : i32, !llvm.ptr<1>
  llvm.store %shifted, %p1 : i32, !llvm.ptr<1>
  llvm.store %scaled, %p2 : i32, !llvm.ptr<1>
  llvm.return
}
