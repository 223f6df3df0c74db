//===- AllocateSharedMemory.cpp - Place buffers and scratch ---------------===//
//
// Runs SharedMemoryAllocation (lib/Analysis/Allocation.cpp) and records its
// placement in the IR, for the passes after it and the lowering to read.
//
//===----------------------------------------------------------------------===//

#include "tile/Analysis/Allocation.h"
#include "tile/Dialect/TileGPU/Transforms/Passes.h"

namespace mlir::tilegpu {
#define GEN_PASS_DEF_TILEGPUALLOCATESHAREDMEMORY
#include "tile/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace mlir::tilegpu

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

struct AllocateSharedMemoryPass
    : public tilegpu::impl::TileGPUAllocateSharedMemoryBase<
          AllocateSharedMemoryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(verifyLaidOut(module, getArgument())))
      return signalPassFailure();
    StringRef offsetName = TileGPUDialect::getAllocationOffsetAttrName();
    // A placement from an earlier run would outlive the ops it was for, and
    // barriers and fences placed for it may not suit this one.
    module.walk([&](Operation *op) {
      op->removeAttr(offsetName);
      op->removeAttr(TileGPUDialect::getLeadingBarrierAttrName());
      op->removeAttr(TileGPUDialect::getProxyFenceAttrName());
    });
    auto allocation = SharedMemoryAllocation::compute(module);
    // Past the target's limit the kernel could not launch: say so now.
    if (TargetAttr target = getTarget(module);
        target && allocation.getTotalBytes() > target.getMaxSharedBytes()) {
      module.emitError() << "the kernel needs " << allocation.getTotalBytes()
                         << " bytes of shared memory, more than the "
                         << target.getMaxSharedBytes() << " a program may use "
                         << "on " << target.getChip()
                         << ": use fewer stages or smaller blocks";
      return signalPassFailure();
    }
    auto i64 = IntegerType::get(&getContext(), 64);
    for (auto [op, interval] : allocation.getPlaces())
      op->setAttr(offsetName, IntegerAttr::get(i64, interval.begin));
    module->setAttr(TileGPUDialect::getSharedBytesAttrName(),
                    IntegerAttr::get(i64, allocation.getTotalBytes()));
  }
};

} // namespace
