//===- PlaceBarriers.cpp - Which shared-memory stores wait first ----------===//
//
// Runs isWarpGroupPrivate and needsLeadingBarrier (lib/Analysis/Barriers.cpp)
// on each local_alloc that stores a tile, and needsProxyFence on each
// warpgroup_dot, where tilegpu-allocate-shared-memory placed their memory,
// and records the decisions for convert-tilegpu-to-llvm.
//
//===----------------------------------------------------------------------===//

#include "tile/Analysis/Barriers.h"
#include "tile/Dialect/TileGPU/Transforms/Passes.h"

namespace mlir::tilegpu {
#define GEN_PASS_DEF_TILEGPUPLACEBARRIERS
#include "tile/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace mlir::tilegpu

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

struct PlaceBarriersPass
    : public tilegpu::impl::TileGPUPlaceBarriersBase<PlaceBarriersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(verifyLaidOut(module, getArgument())))
      return signalPassFailure();
    FailureOr<SharedMemoryAllocation> allocation =
        SharedMemoryAllocation::read(module, getArgument());
    if (failed(allocation))
      return signalPassFailure();
    // Which stores' barriers order their warpgroup alone first: a walk back
    // from a store does not count on those.
    module.walk([&](LocalAllocOp alloc) {
      if (alloc.getSrc() && isWarpGroupPrivate(alloc, *allocation))
        alloc->setAttr(TileGPUDialect::getWarpGroupBarriersAttrName(),
                       BoolAttr::get(&getContext(), true));
    });
    module.walk([&](LocalAllocOp alloc) {
      if (alloc.getSrc())
        alloc->setAttr(TileGPUDialect::getLeadingBarrierAttrName(),
                       BoolAttr::get(&getContext(),
                                     needsLeadingBarrier(alloc, *allocation)));
    });
    // In program order, so that a product may count on an earlier one's
    // fence.
    module.walk([&](WarpGroupDotOp dot) {
      dot->setAttr(
          TileGPUDialect::getProxyFenceAttrName(),
          BoolAttr::get(&getContext(), needsProxyFence(dot, *allocation)));
    });
  }
};

} // namespace
