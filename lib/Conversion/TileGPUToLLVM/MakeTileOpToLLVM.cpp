//===- MakeTileOpToLLVM.cpp - Ranges, splats and constant tiles -----------===//

#include "Utility.h"

#include "tile/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

/// Register r of a range holds start + (its coordinate).
struct ArangeOpConversion : public ConvertOpToLLVMPattern<tile::ArangeOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(tile::ArangeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    LinearLayout layout = getLinearLayout(op.getType());
    Value start = createI32(rewriter, loc, op.getStartAttr().getInt());
    SmallVector<Value> regs;
    for (auto &coord :
         emitCoordinates(rewriter, loc, layout,
                         getHwIndex(rewriter, loc, getTypeConverter())))
      regs.push_back(LLVM::AddOp::create(rewriter, loc, coord[0], start));
    rewriter.replaceOp(
        op, packRegisters(rewriter, loc,
                          getTypeConverter()->convertType(op.getType()), regs));
    return success();
  }
};

/// Every register of a splat holds the scalar.
struct SplatOpConversion : public ConvertOpToLLVMPattern<tile::SplatOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(tile::SplatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<LLVM::LLVMStructType>(
        getTypeConverter()->convertType(op.getType()));
    SmallVector<Value> regs(type.getBody().size(), adaptor.getSrc());
    rewriter.replaceOp(op, packRegisters(rewriter, op.getLoc(), type, regs));
    return success();
  }
};

/// A constant tile with one value everywhere is a splat of that value.
struct SplatConstantOpConversion
    : public ConvertOpToLLVMPattern<arith::ConstantOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(arith::ConstantOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto tensor = dyn_cast<RankedTensorType>(op.getType());
    if (!tensor || !getLayout(tensor))
      return failure();
    auto splat = dyn_cast<SplatElementsAttr>(op.getValue());
    if (!splat)
      return op.emitError() << "only constant tiles with one value throughout "
                               "lower to the GPU";
    Type element = getTypeConverter()->convertType(tensor.getElementType());
    Value scalar = LLVM::ConstantOp::create(rewriter, op.getLoc(), element,
                                            splat.getSplatValue<TypedAttr>());
    auto type =
        cast<LLVM::LLVMStructType>(getTypeConverter()->convertType(tensor));
    SmallVector<Value> regs(type.getBody().size(), scalar);
    rewriter.replaceOp(op, packRegisters(rewriter, op.getLoc(), type, regs));
    return success();
  }
};

} // namespace

void tilegpu::populateMakeTileOpToLLVMPatterns(
    TileGPUToLLVMTypeConverter &converter, RewritePatternSet &patterns) {
  // Above arith's own constant lowering, which knows no layouts.
  patterns.add<ArangeOpConversion, SplatOpConversion>(converter);
  patterns.add<SplatConstantOpConversion>(converter, /*benefit=*/2);
}
