//===- ConvertLayoutOpToLLVM.cpp - Moving tiles between layouts -----------===//
//
// When the two layouts keep every element in its thread, a conversion only
// renumbers registers. Otherwise every thread writes its elements to shared
// memory at their row-major position and reads back the ones the new layout
// gives it, between barriers: runs of consecutive registers as vectors, and
// rows padded where that spares bank conflicts (getConvertScratchLayout).
// tile.reshape, tile.join and tile.split move elements the same way.
//
//===----------------------------------------------------------------------===//

#include "Utility.h"

#include "tile/Analysis/Allocation.h"
#include "tile/Dialect/Tile/IR/Tile.h"

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
    ConvertScratchLayout layout =
        getConvertScratchLayout(src, dst, dstType.getElementType());
    auto sharedPtr = LLVM::LLVMPointerType::get(getContext(), 3);
    FailureOr<Value> placed = getSharedBase(rewriter, loc, scratch, op);
    if (failed(placed))
      return failure();
    Value base = *placed;
    HwIndex hw = getHwIndex(rewriter, loc, getTypeConverter());
    auto shape = dstType.getShape();
    auto address = [&](ArrayRef<Value> coord) {
      Value flat = createI32(rewriter, loc, 0);
      for (auto [d, c] : llvm::enumerate(coord)) {
        int64_t size = d + 1 == coord.size() ? layout.rowStride : shape[d];
        flat = LLVM::AddOp::create(
            rewriter, loc,
            LLVM::MulOp::create(rewriter, loc, flat,
                                createI32(rewriter, loc, size)),
            c);
      }
      return LLVM::GEPOp::create(rewriter, loc, sharedPtr, stored, base,
                                 ValueRange{flat});
    };
    auto vectorType = [&](int64_t width) -> Type {
      return width == 1 ? stored : VectorType::get({width}, stored);
    };
    auto alignment = [&](int64_t width) { return width * layout.elementBytes; };
    createBarrier(rewriter, loc);
    std::set<LinearLayout::Coord> written;
    auto srcCoords = emitCoordinates(rewriter, loc, src, hw);
    for (size_t r = 0; r < regs.size(); r += layout.storeWidth) {
      if (!written.insert(registerOffset(src, r)).second)
        continue;
      Value v;
      if (layout.storeWidth == 1) {
        v = element.isInteger(1)
                ? LLVM::ZExtOp::create(rewriter, loc, stored, regs[r])
                : regs[r];
      } else {
        v = LLVM::PoisonOp::create(rewriter, loc,
                                   vectorType(layout.storeWidth));
        for (int64_t i = 0; i < layout.storeWidth; ++i)
          v = LLVM::InsertElementOp::create(rewriter, loc, v, regs[r + i],
                                            createI32(rewriter, loc, i));
      }
      LLVM::StoreOp::create(rewriter, loc, v, address(srcCoords[r]),
                            alignment(layout.storeWidth));
    }
    createBarrier(rewriter, loc);
    SmallVector<Value> results;
    auto dstCoords = emitCoordinates(rewriter, loc, dst, hw);
    for (size_t r = 0; r < dstCoords.size(); r += layout.loadWidth) {
      Value v = LLVM::LoadOp::create(
          rewriter, loc, vectorType(layout.loadWidth), address(dstCoords[r]),
          alignment(layout.loadWidth));
      if (layout.loadWidth == 1) {
        results.push_back(element.isInteger(1)
                              ? LLVM::TruncOp::create(rewriter, loc, element, v)
                              : v);
        continue;
      }
      for (int64_t i = 0; i < layout.loadWidth; ++i)
        results.push_back(LLVM::ExtractElementOp::create(
            rewriter, loc, v, createI32(rewriter, loc, i)));
    }
    rewriter.replaceOp(op, packRegisters(rewriter, loc, structType, results));
    return success();
  }

  SharedScratch scratch;
};

/// Where a tile's elements go in the row-major order of a shape op's
/// elements (a join's result, a split's source): element i at i * step +
/// first (join's rhs at 2i + 1).
struct FlatPlace {
  int64_t step = 1, first = 0;
};

/// tile.reshape, tile.join and tile.split: registers renumbered where every
/// element stays in its thread (getShapeOpRegisters), else through shared
/// memory, each thread writing its operands' elements at their places and
/// reading back its results'.
template <typename OpTy>
struct ShapeOpConversion : public ConvertOpToLLVMPattern<OpTy> {
  ShapeOpConversion(const LLVMTypeConverter &converter,
                    const SharedScratch &scratch)
      : ConvertOpToLLVMPattern<OpTy>(converter), scratch(scratch) {}

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    const TypeConverter *converter = this->getTypeConverter();
    SmallVector<Value> regs;
    for (Value operand : adaptor.getOperands())
      llvm::append_range(regs, unpackRegisters(rewriter, loc, operand));
    auto places = [&](ValueRange values) {
      SmallVector<FlatPlace> result(values.size());
      if (values.size() == 2)
        result[0].step = result[1].step = 2, result[1].first = 1;
      return result;
    };
    SmallVector<Value> results;
    FailureOr<SmallVector<SmallVector<int64_t>>> inPlace =
        getShapeOpRegisters(op);
    if (succeeded(inPlace)) {
      for (auto [result, registers] : llvm::zip(op->getResults(), *inPlace)) {
        SmallVector<Value> moved;
        for (int64_t r : registers)
          moved.push_back(regs[r]);
        results.push_back(packRegisters(
            rewriter, loc, converter->convertType(result.getType()), moved));
      }
      rewriter.replaceOp(op, results);
      return success();
    }
    FailureOr<Value> placed = getSharedBase(rewriter, loc, scratch, op);
    if (failed(placed))
      return failure();
    auto elementType = cast<RankedTensorType>(op->getResult(0).getType());
    Type element = getLoweredElementType(*converter, elementType);
    Type stored = element.isInteger(1) ? rewriter.getI8Type() : element;
    HwIndex hw = getHwIndex(rewriter, loc, converter);
    auto sharedPtr = LLVM::LLVMPointerType::get(rewriter.getContext(), 3);
    auto address = [&](RankedTensorType type, ArrayRef<Value> coord,
                       FlatPlace place) {
      Value flat = createI32(rewriter, loc, 0);
      for (auto [c, size] : llvm::zip(coord, type.getShape()))
        flat = LLVM::AddOp::create(
            rewriter, loc,
            LLVM::MulOp::create(rewriter, loc, flat,
                                createI32(rewriter, loc, size)),
            c);
      flat = LLVM::AddOp::create(
          rewriter, loc,
          LLVM::MulOp::create(rewriter, loc, flat,
                              createI32(rewriter, loc, place.step)),
          createI32(rewriter, loc, place.first));
      return LLVM::GEPOp::create(rewriter, loc, sharedPtr, stored, *placed,
                                 ValueRange{flat});
    };
    createBarrier(rewriter, loc);
    size_t next = 0;
    for (auto [operand, place] :
         llvm::zip(op->getOperands(), places(op->getOperands()))) {
      auto type = cast<RankedTensorType>(operand.getType());
      LinearLayout layout = getLinearLayout(type);
      auto coords = emitCoordinates(rewriter, loc, layout, hw);
      std::set<LinearLayout::Coord> written;
      for (size_t r = 0; r < coords.size(); ++r) {
        Value value = regs[next + r];
        if (!written.insert(registerOffset(layout, r)).second)
          continue;
        if (element.isInteger(1))
          value = LLVM::ZExtOp::create(rewriter, loc, stored, value);
        LLVM::StoreOp::create(rewriter, loc, value,
                              address(type, coords[r], place));
      }
      next += coords.size();
    }
    createBarrier(rewriter, loc);
    for (auto [result, place] :
         llvm::zip(op->getResults(), places(op->getResults()))) {
      auto type = cast<RankedTensorType>(result.getType());
      SmallVector<Value> values;
      for (auto &coord :
           emitCoordinates(rewriter, loc, getLinearLayout(type), hw)) {
        Value value = LLVM::LoadOp::create(rewriter, loc, stored,
                                           address(type, coord, place));
        values.push_back(
            element.isInteger(1)
                ? LLVM::TruncOp::create(rewriter, loc, element, value)
                : value);
      }
      results.push_back(
          packRegisters(rewriter, loc, converter->convertType(type), values));
    }
    rewriter.replaceOp(op, results);
    return success();
  }

  SharedScratch scratch;
};

} // namespace

void tilegpu::populateConvertLayoutOpToLLVMPatterns(
    TileGPUToLLVMTypeConverter &converter, RewritePatternSet &patterns,
    const SharedScratch &scratch) {
  patterns
      .add<ConvertLayoutOpConversion, ShapeOpConversion<tile::ReshapeOp>,
           ShapeOpConversion<tile::JoinOp>, ShapeOpConversion<tile::SplitOp>>(
          converter, scratch);
}
