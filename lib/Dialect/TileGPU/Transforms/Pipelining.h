//===- Pipelining.h - Shared by tilegpu-pipeline's schedules ---*- C++ -*-===//
//
// tilegpu-pipeline copies a loop's block loads ahead, by thread 0 between
// barriers (Pipeline.cpp), or splits a kernel so that producer warps issue
// every TMA copy (WarpSpecialize.cpp). Both keep a GEMM's product in flight
// and count copies with stacks of mbarriers.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_DIALECT_TILEGPU_TRANSFORMS_PIPELINING_H
#define TILE_DIALECT_TILEGPU_TRANSFORMS_PIPELINING_H

#include "tile/Analysis/AxisInfo.h"
#include "tile/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::tilegpu {

/// An i32 constant: a buffer's slot in a stack, or an mbarrier phase.
Value createSlot(OpBuilder &b, Location loc, int64_t value);

/// The type of one mbarrier of a stack (`stages` of them when non-zero).
MemDescType getBarrierType(MLIRContext *ctx, int64_t stages = 0);

/// The loop's one product that can stay in flight into the next iteration:
/// a warpgroup_dot that accumulates into a value the loop carries and
/// yields, reading only `buffers` (directly or through a transposed view;
/// the GEMM's main loop), or null.
WarpGroupDotOp findCarriedProduct(scf::ForOp loop, ArrayRef<Value> buffers);

/// Leaves `dot`'s wgmma group in flight: each iteration waits for the one
/// before (at most one pending), and the loop's result is waited for in
/// full after it, by the wait this returns.
WarpGroupDotWaitOp keepProductInFlight(scf::ForOp loop, WarpGroupDotOp dot);

/// Splits `kernel` in producer warps, which copy every block load into an
/// nvmma_shared buffer by the TMA, and the kernel's `numWarps` warps, which
/// consume the copies from rings of `stages` buffers (tilegpu-pipeline's
/// warp-specialize); returns false, the kernel unchanged, where it cannot
/// (`numWarps` not whole warpgroups, a load the TMA cannot copy, a value
/// the producer cannot compute).
bool specializeWarps(func::FuncOp kernel, int64_t stages, unsigned numWarps,
                     const tile::AxisInfoAnalysis &axis);

} // namespace mlir::tilegpu

#endif // TILE_DIALECT_TILEGPU_TRANSFORMS_PIPELINING_H
