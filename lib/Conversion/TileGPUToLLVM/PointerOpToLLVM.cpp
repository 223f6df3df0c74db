//===- PointerOpToLLVM.cpp - Pointer arithmetic and axis hints ------------===//

#include "Utility.h"

#include "tile/Dialect/Tile/IR/Tile.h"

#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

/// ptr + offset elements: a getelementptr per register (or one for scalars).
struct AddPtrOpConversion : public ConvertOpToLLVMPattern<tile::AddPtrOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(tile::AddPtrOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type element = getTypeConverter()->convertType(
        cast<tile::PtrType>(getElementTypeOrSelf(op.getType()))
            .getPointeeType());
    auto ptrType = LLVM::LLVMPointerType::get(getContext(), 1);
    auto gep = [&](Value ptr, Value offset) -> Value {
      return LLVM::GEPOp::create(rewriter, loc, ptrType, element, ptr,
                                 ValueRange{offset});
    };
    if (!isa<RankedTensorType>(op.getType())) {
      rewriter.replaceOp(op, gep(adaptor.getPtr(), adaptor.getOffset()));
      return success();
    }
    SmallVector<Value> ptrs = unpackRegisters(rewriter, loc, adaptor.getPtr());
    SmallVector<Value> offsets =
        unpackRegisters(rewriter, loc, adaptor.getOffset());
    SmallVector<Value> results;
    for (auto [ptr, offset] : llvm::zip(ptrs, offsets))
      results.push_back(gep(ptr, offset));
    rewriter.replaceOp(
        op,
        packRegisters(rewriter, loc,
                      getTypeConverter()->convertType(op.getType()), results));
    return success();
  }
};

/// Addresses to pointers (tile.int_to_ptr) and back (tile.ptr_to_int): an
/// inttoptr or ptrtoint a register (or one for scalars).
template <typename OpTy, typename LLVMOpTy>
struct AddressOpConversion : public ConvertOpToLLVMPattern<OpTy> {
  using ConvertOpToLLVMPattern<OpTy>::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type scalar =
        std::is_same_v<OpTy, tile::IntToPtrOp>
            ? Type(LLVM::LLVMPointerType::get(rewriter.getContext(), 1))
            : Type(rewriter.getI64Type());
    if (!isa<RankedTensorType>(op.getType())) {
      rewriter.replaceOp(
          op, LLVMOpTy::create(rewriter, loc, scalar, adaptor.getSrc()));
      return success();
    }
    SmallVector<Value> results;
    for (Value reg : unpackRegisters(rewriter, loc, adaptor.getSrc()))
      results.push_back(LLVMOpTy::create(rewriter, loc, scalar, reg));
    rewriter.replaceOp(
        op, packRegisters(rewriter, loc,
                          this->getTypeConverter()->convertType(op.getType()),
                          results));
    return success();
  }
};

/// A promise about the values was for the axis analysis: the values.
struct AxisHintOpConversion : public ConvertOpToLLVMPattern<tile::AxisHintOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(tile::AxisHintOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, adaptor.getInput());
    return success();
  }
};

} // namespace

void tilegpu::populatePointerOpToLLVMPatterns(
    TileGPUToLLVMTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<AddPtrOpConversion, AxisHintOpConversion,
               AddressOpConversion<tile::IntToPtrOp, LLVM::IntToPtrOp>,
               AddressOpConversion<tile::PtrToIntOp, LLVM::PtrToIntOp>>(
      converter);
}
