//===- AccelerateMatmul.cpp - Matrix products on the tensor cores ---------===//

#include "tile/Dialect/Tile/IR/Tile.h"
#include "tile/Dialect/TileGPU/IR/TileGPU.h"
#include "tile/Dialect/TileGPU/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tilegpu {
#define GEN_PASS_DEF_TILEGPUACCELERATEMATMUL
#include "tile/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace mlir::tilegpu

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

/// Warps over the result's rows first, as many as there are 16-row tiles,
/// then over its columns in 8-column tiles.
SmallVector<unsigned> chooseWarps(unsigned numWarps, int64_t m, int64_t n) {
  unsigned wm = 1, wn = 1;
  while (wm * wn < numWarps && 16 * wm * 2 <= m)
    wm *= 2;
  while (wm * wn < numWarps && 8 * wn * 2 <= n)
    wn *= 2;
  wm *= numWarps / (wm * wn); // any left over hold copies along the rows
  return {wm, wn};
}

struct AccelerateMatmulPass
    : public tilegpu::impl::TileGPUAccelerateMatmulBase<AccelerateMatmulPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto numWarps = module->getAttrOfType<IntegerAttr>(
        TileGPUDialect::getNumWarpsAttrName());
    if (!numWarps) {
      module.emitError() << "tilegpu-accelerate-matmul needs the layouts of "
                            "convert-tile-to-tilegpu (no tilegpu.num_warps)";
      return signalPassFailure();
    }
    WalkResult result = module.walk([&](tile::DotOp dot) {
      return failed(accelerate(dot, numWarps.getInt()))
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

  LogicalResult accelerate(tile::DotOp dot, unsigned numWarps) {
    auto aType = dot.getA().getType(), bType = dot.getB().getType();
    auto cType = dot.getType();
    if (isa<MmaEncodingAttr>(cType.getEncoding()))
      return success(); // already on the tensor cores
    Type element = aType.getElementType();
    if (!element.isF16() && !element.isBF16() && !element.isF32())
      return dot.emitError()
             << "tile.dot runs on the tensor cores with f16, bf16 or f32 "
                "operands; "
             << element << " operands are not supported on the GPU yet";
    unsigned kWidth = element.isF32() ? 1 : 2;
    int64_t m = cType.getDimSize(0), n = cType.getDimSize(1),
            k = aType.getDimSize(1);
    if (m < 16 || n < 8 || k < 16)
      return dot.emitError() << "mma.sync needs M >= 16, N >= 8 and K >= 16; "
                                "this dot is "
                             << m << "x" << n << "x" << k;
    MLIRContext *ctx = dot.getContext();
    auto mma = MmaEncodingAttr::get(ctx, 2, chooseWarps(numWarps, m, n));
    auto aLayout = DotOperandEncodingAttr::get(ctx, 0, mma, kWidth);
    auto bLayout = DotOperandEncodingAttr::get(ctx, 1, mma, kWidth);
    OpBuilder b(dot);
    Location loc = dot.getLoc();
    auto convert = [&](Value v, Attribute layout) -> Value {
      return ConvertLayoutOp::create(
          b, loc, withLayout(cast<RankedTensorType>(v.getType()), layout), v);
    };
    Value a = convert(dot.getA(), aLayout);
    Value bOperand = convert(dot.getB(), bLayout);
    Value acc = convert(dot.getAcc(), mma);
    auto product =
        tile::DotOp::create(b, loc, withLayout(cType, mma), a, bOperand, acc);
    Value back = ConvertLayoutOp::create(b, loc, cType, product.getResult());
    dot.replaceAllUsesWith(back);
    dot.erase();
    return success();
  }
};

} // namespace
