//===- ViewOpToLLVM.cpp - expand_dims, broadcast, trans -------------------===//
//
// These ops keep every element in the thread that held it (the layouts the
// conversion chose guarantee it), so they only renumber registers. The
// mapping comes from the two layouts' maps; a pair of layouts that would
// need data to move is an error, never a silent wrong answer.
//
//===----------------------------------------------------------------------===//

#include "Utility.h"

#include "tile/Dialect/Tile/IR/Tile.h"

#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

template <typename SourceOp>
struct RegisterRemapConversion : public ConvertOpToLLVMPattern<SourceOp> {
  using ConvertOpToLLVMPattern<SourceOp>::ConvertOpToLLVMPattern;

  /// The source coordinates of a result coordinate.
  virtual LinearLayout::Coord toSource(SourceOp op,
                                       ArrayRef<int64_t> coord) const = 0;

  LogicalResult
  matchAndRewrite(SourceOp op, typename SourceOp::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto srcType = cast<RankedTensorType>(op.getSrc().getType());
    auto dstType = cast<RankedTensorType>(op.getType());
    LinearLayout src = getLinearLayout(srcType);
    LinearLayout dst = getLinearLayout(dstType);
    auto mapping = mapRegistersInPlace(
        src, dst, [&](ArrayRef<int64_t> c) { return toSource(op, c); });
    if (failed(mapping))
      return op.emitError()
             << "the layouts of " << srcType << " and " << dstType
             << " do not keep elements in their threads: a "
                "convert_layout must come first";
    Location loc = op.getLoc();
    SmallVector<Value> srcRegs =
        unpackRegisters(rewriter, loc, adaptor.getSrc());
    SmallVector<Value> dstRegs;
    for (int64_t r : *mapping)
      dstRegs.push_back(srcRegs[r]);
    rewriter.replaceOp(
        op,
        packRegisters(rewriter, loc,
                      this->getTypeConverter()->convertType(dstType), dstRegs));
    return success();
  }
};

struct ExpandDimsOpConversion
    : public RegisterRemapConversion<tile::ExpandDimsOp> {
  using RegisterRemapConversion::RegisterRemapConversion;
  LinearLayout::Coord toSource(tile::ExpandDimsOp op,
                               ArrayRef<int64_t> coord) const override {
    LinearLayout::Coord src(coord);
    src.erase(src.begin() + op.getAxis());
    return src;
  }
};

struct BroadcastOpConversion
    : public RegisterRemapConversion<tile::BroadcastOp> {
  using RegisterRemapConversion::RegisterRemapConversion;
  LinearLayout::Coord toSource(tile::BroadcastOp op,
                               ArrayRef<int64_t> coord) const override {
    // A stretched dimension has size 1 in the source.
    auto shape = op.getSrc().getType().getShape();
    LinearLayout::Coord src;
    for (auto [c, size] : llvm::zip(coord, shape))
      src.push_back(c & (size - 1));
    return src;
  }
};

struct TransOpConversion : public RegisterRemapConversion<tile::TransOp> {
  using RegisterRemapConversion::RegisterRemapConversion;
  LinearLayout::Coord toSource(tile::TransOp op,
                               ArrayRef<int64_t> coord) const override {
    LinearLayout::Coord src(coord.size());
    for (auto [i, d] : llvm::enumerate(op.getOrder()))
      src[d] = coord[i];
    return src;
  }
};

} // namespace

void tilegpu::populateViewOpToLLVMPatterns(
    TileGPUToLLVMTypeConverter &converter, RewritePatternSet &patterns) {
  patterns
      .add<ExpandDimsOpConversion, BroadcastOpConversion, TransOpConversion>(
          converter);
}
