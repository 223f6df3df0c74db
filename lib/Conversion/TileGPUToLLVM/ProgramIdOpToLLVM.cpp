//===- ProgramIdOpToLLVM.cpp - Program ids are CTA ids --------------------===//

#include "Utility.h"

#include "tile/Dialect/Tile/IR/Tile.h"

#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

template <typename SourceOp, typename X, typename Y, typename Z>
struct GridOpConversion : public ConvertOpToLLVMPattern<SourceOp> {
  using ConvertOpToLLVMPattern<SourceOp>::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(SourceOp op, typename SourceOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type i32 = rewriter.getI32Type();
    Value value;
    switch (op.getAxis()) {
    case tile::ProgramAxis::x:
      value = X::create(rewriter, op.getLoc(), i32);
      break;
    case tile::ProgramAxis::y:
      value = Y::create(rewriter, op.getLoc(), i32);
      break;
    case tile::ProgramAxis::z:
      value = Z::create(rewriter, op.getLoc(), i32);
      break;
    }
    rewriter.replaceOp(op, value);
    return success();
  }
};

} // namespace

void tilegpu::populateProgramIdOpToLLVMPatterns(
    TileGPUToLLVMTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<GridOpConversion<tile::ProgramIdOp, NVVM::BlockIdXOp,
                                NVVM::BlockIdYOp, NVVM::BlockIdZOp>,
               GridOpConversion<tile::NumProgramsOp, NVVM::GridDimXOp,
                                NVVM::GridDimYOp, NVVM::GridDimZOp>>(converter);
}
