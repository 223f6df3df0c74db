//===- Coalesce.cpp - Vector global accesses where the data allows --------===//

#include "tile/Analysis/AxisInfo.h"
#include "tile/Dialect/Tile/IR/Tile.h"
#include "tile/Dialect/TileGPU/IR/TileGPU.h"
#include "tile/Dialect/TileGPU/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tilegpu {
#define GEN_PASS_DEF_TILEGPUCOALESCE
#include "tile/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace mlir::tilegpu

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

constexpr int64_t kMaxVectorBytes = 16;

int64_t floorPowerOf2(int64_t v) {
  int64_t p = 1;
  while (p * 2 <= v)
    p *= 2;
  return p;
}

/// A blocked layout with `width` contiguous elements per thread along `dim`,
/// lanes along `dim` first, the other dimensions slowest-last.
BlockedEncodingAttr vectorLayout(MLIRContext *ctx, ArrayRef<int64_t> shape,
                                 unsigned dim, int64_t width,
                                 unsigned numWarps) {
  unsigned rank = shape.size();
  SmallVector<unsigned> spt(rank, 1), tpw(rank, 1), wpc(rank, 1), order{dim};
  for (int d = rank - 1; d >= 0; --d)
    if (unsigned(d) != dim)
      order.push_back(d);
  spt[dim] = width;
  SmallVector<int64_t> left(shape);
  left[dim] /= width;
  unsigned lanes = TileGPUDialect::getThreadsPerWarp();
  for (unsigned d : order)
    while (lanes > 1 && left[d] > 1) {
      tpw[d] *= 2;
      left[d] /= 2;
      lanes /= 2;
    }
  tpw[order.back()] *= lanes;
  unsigned warps = numWarps;
  for (unsigned d : llvm::reverse(order))
    while (warps > 1 && left[d] > 1) {
      wpc[d] *= 2;
      left[d] /= 2;
      warps /= 2;
    }
  wpc[order.back()] *= warps;
  return BlockedEncodingAttr::get(ctx, spt, tpw, wpc, order);
}

struct CoalescePass : public tilegpu::impl::TileGPUCoalesceBase<CoalescePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto numWarps = module->getAttrOfType<IntegerAttr>(
        TileGPUDialect::getNumWarpsAttrName());
    if (!numWarps) {
      module.emitError() << "tilegpu-coalesce needs the layouts of "
                            "convert-tile-to-tilegpu (no tilegpu.num_warps)";
      return signalPassFailure();
    }
    for (auto func : module.getOps<func::FuncOp>()) {
      tile::AxisInfoAnalysis axis(func);
      SmallVector<Operation *> accesses;
      func.walk([&](Operation *op) {
        if (isa<tile::LoadOp, tile::StoreOp>(op))
          accesses.push_back(op);
      });
      for (Operation *op : accesses)
        coalesce(op, axis, numWarps.getInt());
    }
  }

  void coalesce(Operation *op, const tile::AxisInfoAnalysis &axis,
                unsigned numWarps) {
    Value ptr = op->getOperand(0);
    auto ptrType = dyn_cast<RankedTensorType>(ptr.getType());
    if (!ptrType || !getLayout(ptrType))
      return;
    auto shape = ptrType.getShape();
    Type element =
        cast<tile::PtrType>(ptrType.getElementType()).getPointeeType();
    int64_t bytes = std::max<int64_t>(1, element.getIntOrFloatBitWidth() / 8);
    tile::AxisInfo info = axis.get(ptr);
    unsigned dim = 0;
    for (unsigned d = 1; d < shape.size(); ++d)
      if (info.contiguity[d] > info.contiguity[dim])
        dim = d;
    int64_t width =
        std::min({info.contiguity[dim], info.divisibility[dim] / bytes,
                  kMaxVectorBytes / bytes, shape[dim]});
    Value mask = isa<tile::LoadOp>(op) ? cast<tile::LoadOp>(op).getMask()
                                       : cast<tile::StoreOp>(op).getMask();
    if (mask)
      width = std::min(width, axis.get(mask).constancy[dim]);
    width = floorPowerOf2(std::max<int64_t>(width, 1));
    if (width <= 1)
      return;

    auto layout = vectorLayout(op->getContext(), shape, dim, width, numWarps);
    OpBuilder b(op);
    for (OpOperand &operand : op->getOpOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand.get().getType());
      if (!type || type.getEncoding() == layout)
        continue;
      operand.set(ConvertLayoutOp::create(
          b, op->getLoc(),
          RankedTensorType::get(type.getShape(), type.getElementType(), layout),
          operand.get()));
    }
    op->setAttr("tilegpu.vector_width", b.getI32IntegerAttr(width));
    if (auto load = dyn_cast<tile::LoadOp>(op)) {
      auto oldType = cast<RankedTensorType>(load.getType());
      load.getResult().setType(RankedTensorType::get(
          oldType.getShape(), oldType.getElementType(), layout));
      b.setInsertionPointAfter(load);
      auto back =
          ConvertLayoutOp::create(b, load.getLoc(), oldType, load.getResult());
      load.getResult().replaceAllUsesExcept(back, back);
    }
  }
};

} // namespace
