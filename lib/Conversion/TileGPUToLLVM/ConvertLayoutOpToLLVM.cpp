//===- ConvertLayoutOpToLLVM.cpp - Moving tiles between layouts -----------===//
//
// When the two layouts keep every element in its thread, a conversion only
// renumbers registers. Otherwise every thread writes its elements to shared
// memory at their row-major position and reads back the ones the new layout
// gives it, between barriers.
//
//===----------------------------------------------------------------------===//

#include "Utility.h"

#include "mlir/Transforms/DialectConversion.h"

#include <set>

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

struct ConvertLayoutOpConversion
    : public ConvertOpToLLVMPattern<ConvertLayoutOp> {
  ConvertLayoutOpConversion(const LLVMTypeConverter &converter,
                            const SharedScratch &scratch)
      : ConvertOpToLLVMPattern(converter), scratch(scratch) {}

  LogicalResult
  matchAndRewrite(ConvertLayoutOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto srcType = op.getSrc().getType();
    auto dstType = op.getType();
    LinearLayout src = getLinearLayout(cast<RankedTensorType>(srcType));
    LinearLayout dst = getLinearLayout(dstType);
    Type structType = getTypeConverter()->convertType(dstType);
    SmallVector<Value> regs = unpackRegisters(rewriter, loc, adaptor.getSrc());

    auto inPlace = mapRegistersInPlace(
        src, dst, [](ArrayRef<int64_t> c) { return LinearLayout::Coord(c); });
    if (succeeded(inPlace)) {
      SmallVector<Value> moved;
      for (int64_t r : *inPlace)
        moved.push_back(regs[r]);
      rewriter.replaceOp(op, packRegisters(rewriter, loc, structType, moved));
      return success();
    }

    Type element = getLoweredElementType(*getTypeConverter(), dstType);
    Type stored = element.isInteger(1) ? rewriter.getI8Type() : element;
    auto sharedPtr = LLVM::LLVMPointerType::get(getContext(), 3);
    FailureOr<Value> placed = getSharedBase(rewriter, loc, scratch, op);
    if (failed(placed))
      return failure();
    Value base = *placed;
    HwIndex hw = getHwIndex(rewriter, loc);
    auto address = [&](ArrayRef<Value> coord) {
      Value flat = createI32(rewriter, loc, 0);
      for (auto [c, size] : llvm::zip(coord, dstType.getShape()))
        flat = LLVM::AddOp::create(
            rewriter, loc,
            LLVM::MulOp::create(rewriter, loc, flat,
                                createI32(rewriter, loc, size)),
            c);
      return LLVM::GEPOp::create(rewriter, loc, sharedPtr, stored, base,
                                 ValueRange{flat});
    };
    createBarrier(rewriter, loc);
    std::set<LinearLayout::Coord> written;
    auto srcCoords = emitCoordinates(rewriter, loc, src, hw);
    for (auto [r, value] : llvm::enumerate(regs)) {
      if (!written.insert(registerOffset(src, r)).second)
        continue;
      Value v = element.isInteger(1)
                    ? LLVM::ZExtOp::create(rewriter, loc, stored, value)
                    : value;
      LLVM::StoreOp::create(rewriter, loc, v, address(srcCoords[r]));
    }
    createBarrier(rewriter, loc);
    SmallVector<Value> results;
    for (auto &coord : emitCoordinates(rewriter, loc, dst, hw)) {
      Value v = LLVM::LoadOp::create(rewriter, loc, stored, address(coord));
      results.push_back(element.isInteger(1)
                            ? LLVM::TruncOp::create(rewriter, loc, element, v)
                            : v);
    }
    rewriter.replaceOp(op, packRegisters(rewriter, loc, structType, results));
    return success();
  }

  SharedScratch scratch;
};

} // namespace

void tilegpu::populateConvertLayoutOpToLLVMPatterns(
    TileGPUToLLVMTypeConverter &converter, RewritePatternSet &patterns,
    const SharedScratch &scratch) {
  patterns.add<ConvertLayoutOpConversion>(converter, scratch);
}
