//===- LoadStoreOpToLLVM.cpp - Masked global loads and stores -------------===//
//
// Each register is one access. A masked access is an LLVM masked load or
// store of one element, which the NVPTX backend turns into a predicated
// branch around the access, so a false mask touches no memory. A store is
// issued by one holder of each element only (layouts may replicate data).
//
//===----------------------------------------------------------------------===//

#include "Utility.h"

#include "tile/Dialect/Tile/IR/Tile.h"

#include "mlir/Transforms/DialectConversion.h"

#include <set>

using namespace mlir;
using namespace mlir::tilegpu;

static int64_t getAlignment(Type element) {
  return std::max<int64_t>(1, getSharedElementBytes(element));
}

Value tilegpu::loadElement(OpBuilder &b, Location loc, Type element, Value ptr, Value mask,
              Value other) {
  if (!mask)
    return b.create<LLVM::LoadOp>(loc, element, ptr,
                                  getAlignment(element));
  auto vectorType = VectorType::get({1}, element);
  auto maskType = VectorType::get({1}, b.getI1Type());
  Value zero = createI32(b, loc, 0);
  Value maskVector = b.create<LLVM::InsertElementOp>(
      loc, b.create<LLVM::UndefOp>(loc, maskType), mask, zero);
  Value passThru = b.create<LLVM::ZeroOp>(loc, vectorType);
  if (other)
    passThru = b.create<LLVM::InsertElementOp>(loc, passThru, other, zero);
  Value loaded = b.create<LLVM::MaskedLoadOp>(
      loc, vectorType, ptr, maskVector, passThru,
      b.getI32IntegerAttr(getAlignment(element)), UnitAttr());
  return b.create<LLVM::ExtractElementOp>(loc, loaded, zero);
}

void tilegpu::storeElement(OpBuilder &b, Location loc, Value value, Value ptr, Value mask) {
  Type element = value.getType();
  auto vectorType = VectorType::get({1}, element);
  auto maskType = VectorType::get({1}, b.getI1Type());
  Value zero = createI32(b, loc, 0);
  Value vector = b.create<LLVM::InsertElementOp>(
      loc, b.create<LLVM::UndefOp>(loc, vectorType), value, zero);
  Value maskVector = b.create<LLVM::InsertElementOp>(
      loc, b.create<LLVM::UndefOp>(loc, maskType), mask, zero);
  b.create<LLVM::MaskedStoreOp>(loc, vector, ptr, maskVector,
                                getAlignment(element));
}

namespace {

struct LoadOpConversion : public ConvertOpToLLVMPattern<tile::LoadOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(tile::LoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type element = getLoweredElementType(*getTypeConverter(), op.getType());
    if (!isa<RankedTensorType>(op.getType())) {
      rewriter.replaceOp(op, loadElement(rewriter, loc, element, adaptor.getPtr(),
                                     adaptor.getMask(), adaptor.getOther()));
      return success();
    }
    SmallVector<Value> ptrs = unpackRegisters(rewriter, loc, adaptor.getPtr());
    SmallVector<Value> masks, others;
    if (adaptor.getMask())
      masks = unpackRegisters(rewriter, loc, adaptor.getMask());
    if (adaptor.getOther())
      others = unpackRegisters(rewriter, loc, adaptor.getOther());
    SmallVector<Value> values;
    for (auto [i, ptr] : llvm::enumerate(ptrs))
      values.push_back(loadElement(rewriter, loc, element, ptr,
                               masks.empty() ? Value() : masks[i],
                               others.empty() ? Value() : others[i]));
    rewriter.replaceOp(
        op, packRegisters(rewriter, loc,
                          getTypeConverter()->convertType(op.getType()),
                          values));
    return success();
  }
};

struct StoreOpConversion : public ConvertOpToLLVMPattern<tile::StoreOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(tile::StoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto tensor = dyn_cast<RankedTensorType>(op.getPtr().getType());
    if (!tensor) {
      Value mask = adaptor.getMask();
      if (!mask)
        rewriter.create<LLVM::StoreOp>(
            loc, adaptor.getValue(), adaptor.getPtr(),
            getAlignment(adaptor.getValue().getType()));
      else
        storeElement(rewriter, loc, adaptor.getValue(), adaptor.getPtr(), mask);
      rewriter.eraseOp(op);
      return success();
    }
    LinearLayout layout = getLinearLayout(tensor);
    Value canonical =
        isCanonicalHolder(rewriter, loc, layout, getHwIndex(rewriter, loc));
    SmallVector<Value> ptrs = unpackRegisters(rewriter, loc, adaptor.getPtr());
    SmallVector<Value> values =
        unpackRegisters(rewriter, loc, adaptor.getValue());
    SmallVector<Value> masks;
    if (adaptor.getMask())
      masks = unpackRegisters(rewriter, loc, adaptor.getMask());
    // Registers holding the same element as an earlier register store once.
    std::set<LinearLayout::Coord> stored;
    for (auto [i, ptr] : llvm::enumerate(ptrs)) {
      if (!stored.insert(registerOffset(layout, i)).second)
        continue;
      Value mask = masks.empty()
                       ? canonical
                       : rewriter.create<LLVM::AndOp>(loc, masks[i], canonical);
      storeElement(rewriter, loc, values[i], ptr, mask);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void tilegpu::populateLoadStoreOpToLLVMPatterns(
    TileGPUToLLVMTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<LoadOpConversion, StoreOpConversion>(converter);
}
