//===- DotOpToLLVM.cpp - Matrix products ----------------------------------===//
//
// tile.dot lowers only to tensor-core instructions (mma.sync, wgmma), never
// to scalar multiply-add loops. Until the tensor-core lowering exists, a dot
// is a clear error rather than slow code.
//
//===----------------------------------------------------------------------===//

#include "Utility.h"

#include "tile/Dialect/Tile/IR/Tile.h"

#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

struct DotOpConversion : public ConvertOpToLLVMPattern<tile::DotOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(tile::DotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    return op.emitError()
           << "tile.dot lowers to tensor-core instructions only, and that "
              "lowering (mma.sync / wgmma) is not implemented yet";
  }
};

} // namespace

void tilegpu::populateDotOpToLLVMPatterns(TileGPUToLLVMTypeConverter &converter,
                                          RewritePatternSet &patterns) {
  patterns.add<DotOpConversion>(converter);
}
