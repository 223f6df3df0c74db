//===- TMAStores.cpp - Epilogue stores by the TMA -------------------------===//
//
// A kernel's result block (the GEMM's C, attention's O) is stored once, after
// its loops. On sm_90a, where the runtime can describe the tensor
// (TensorMaps.h) and rows are whole 16 bytes, the tile goes to a swizzled
// shared-memory buffer and the TMA writes it out from there, one thread
// issuing. Run with the compile option tma-stores: on the H200 the GEMM and
// the d128 forward ran no faster with it (-4% to +4%).
//
//===----------------------------------------------------------------------===//

#include "TensorMaps.h"

#include "tile/Analysis/Allocation.h"
#include "tile/Dialect/Tile/IR/Tile.h"
#include "tile/Dialect/TileGPU/IR/TileGPU.h"
#include "tile/Dialect/TileGPU/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::tilegpu {
#define GEN_PASS_DEF_TILEGPUTMASTORES
#include "tile/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace mlir::tilegpu

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

/// Bytes the TMA writes a row in.
constexpr int64_t kRowBytes = 16;

/// The nvmma_shared buffer the TMA stores `store`'s tile from: contiguous
/// along the dimension the block pointer's order names first.
std::optional<MemDescType> getStoreBuffer(tile::StoreBlockOp store) {
  auto type = cast<RankedTensorType>(store.getValue().getType());
  auto block = getMadeBlockPointer(store.getPtr());
  if (!block || type.getRank() != 2 || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  unsigned bits = type.getElementType().getIntOrFloatBitWidth();
  if (bits != 8 && bits != 16 && bits != 32)
    return std::nullopt;
  SmallVector<unsigned> order(block.getOrder().begin(), block.getOrder().end());
  auto encoding = NVMMASharedEncodingAttr::getForMatrix(
      store.getContext(), type.getShape(), bits, order);
  if (!encoding)
    return std::nullopt;
  return MemDescType::get(store.getContext(), type.getShape(),
                          type.getElementType(), encoding);
}

struct TMAStoresPass
    : public tilegpu::impl::TileGPUTMAStoresBase<TMAStoresPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(verifyLaidOut(module, getArgument())))
      return signalPassFailure();
    TargetAttr target = getTarget(module);
    if (!target || target.getArch() != Arch::SM90a)
      return;
    for (auto kernel : module.getOps<func::FuncOp>()) {
      if (!tile::isKernel(kernel))
        continue;
      // Decided on the IR as it came, then rewritten.
      tile::AxisInfoAnalysis axis(kernel);
      SmallVector<std::tuple<tile::StoreBlockOp, MemDescType, TensorMapAccess>>
          stores;
      kernel.walk([&](tile::StoreBlockOp store) {
        if (store->getParentOfType<LoopLikeOpInterface>())
          return;
        std::optional<MemDescType> buffer = getStoreBuffer(store);
        if (!buffer)
          return;
        // The TMA stores whole 16 bytes of a row: a row whose length
        // (the contiguous extent) may end inside 16 bytes would be written
        // past its end (seen on the H200 with a GEMM's odd N).
        auto block = getMadeBlockPointer(store.getPtr());
        unsigned inner = buffer->getEncoding().getOrder()[0];
        int64_t bytes = getSharedElementBytes(buffer->getElementType());
        if ((axis.get(block.getShape()[inner]).divisibility[0] * bytes) %
            kRowBytes)
          return;
        OpBuilder b(store);
        if (std::optional<TensorMapAccess> access =
                planTensorMapAccess(b, store.getPtr(), *buffer, axis))
          stores.emplace_back(store, *buffer, std::move(*access));
      });
      for (auto &[store, buffer, access] : stores) {
        OpBuilder b(store);
        Value desc = getTensorMapParameter(kernel, access.descriptor);
        Value tile =
            LocalAllocOp::create(b, store.getLoc(), buffer, store.getValue());
        AsyncTMAStoreBlockOp::create(b, store.getLoc(), store.getPtr(), desc,
                                     access.coords, tile);
        store.erase();
      }
    }
  }
};

} // namespace
