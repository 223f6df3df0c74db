//===- ConvertLayoutOpToLLVM.cpp - Moving tiles between layouts -----------===//
//
// When the two layouts keep every element in its thread, a conversion only
// renumbers registers. Otherwise every thread writes its elements to shared
// memory at their row-major position and reads back the ones the new layout
// gives it, between barriers: runs of consecutive registers as vectors, and
// rows padded where that spares bank conflicts (getConvertScratchLayout).
//
//===----------------------------------------------------------------------===//

#include "Utility.h"

#include "mlir/Transforms/DialectConversion.h"

#include <map>
#include <set>

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

/// The row-major offset of `coord` with rows `rowStride` elements apart.
int64_t scratchOffset(ArrayRef<int64_t> shape, ArrayRef<int64_t> coord,
                      int64_t rowStride) {
  int64_t flat = 0;
  for (size_t d = 0; d < coord.size(); ++d)
    flat = flat * (d + 1 == coord.size() ? rowStride : shape[d]) + coord[d];
  return flat;
}

/// Shared-memory wavefronts warp 0 needs to access its elements of `layout`
/// `width` registers at a time: per instruction and phase (32 lanes for
/// accesses of 4 bytes or less, 16 for 8 bytes, 8 for 16 bytes), the most
/// distinct 4-byte words any of the 32 banks holds.
int64_t countWavefronts(const LinearLayout &layout, int64_t width,
                        int64_t elementBytes, int64_t rowStride) {
  int64_t accessBytes = width * elementBytes;
  int64_t lanesPerPhase = accessBytes <= 4 ? 32 : 128 / accessBytes;
  int64_t total = 0;
  for (int64_t r = 0; r < layout.getSize(HwDim::Register); r += width)
    for (int64_t phase = 0; phase < 32; phase += lanesPerPhase) {
      std::map<int64_t, std::set<int64_t>> wordsByBank;
      for (int64_t lane = phase; lane < phase + lanesPerPhase; ++lane) {
        int64_t start = scratchOffset(layout.getShape(),
                                      layout.apply(r, lane, 0), rowStride) *
                        elementBytes;
        for (int64_t word = start / 4; word <= (start + accessBytes - 1) / 4;
             ++word)
          wordsByBank[word % 32].insert(word);
      }
      int64_t most = 1;
      for (auto &[bank, words] : wordsByBank)
        most = std::max<int64_t>(most, words.size());
      total += most;
    }
  return total;
}

} // namespace

ConvertScratchLayout tilegpu::getConvertScratchLayout(const LinearLayout &src,
                                                      const LinearLayout &dst,
                                                      Type elementType) {
  ConvertScratchLayout scratch;
  int64_t elementBytes = getSharedElementBytes(elementType);
  scratch.elementBytes = elementBytes;
  auto shape = src.getShape();
  int64_t inner = shape.size() - 1, rowLength = shape.back();
  if (isa<IntegerType, FloatType>(elementType) && !elementType.isInteger(1)) {
    int64_t most = std::max<int64_t>(1, 16 / elementBytes);
    scratch.storeWidth = std::min(most, src.getRegisterRun(inner));
    scratch.loadWidth = std::min(most, dst.getRegisterRun(inner));
  }
  // Pads keep every row aligned for both vectors; of those up to 128 bytes,
  // the one with the fewest wavefronts (the smallest of equals).
  int64_t step = std::max(scratch.storeWidth, scratch.loadWidth);
  scratch.rowStride = rowLength;
  int64_t fewest = -1;
  for (int64_t pad = 0; shape.size() > 1 && pad * elementBytes <= 128;
       pad = pad ? pad * 2 : step) {
    int64_t wavefronts =
        countWavefronts(src, scratch.storeWidth, elementBytes,
                        rowLength + pad) +
        countWavefronts(dst, scratch.loadWidth, elementBytes, rowLength + pad);
    if (fewest < 0 || wavefronts < fewest) {
      fewest = wavefronts;
      scratch.rowStride = rowLength + pad;
    }
  }
  int64_t rows = 1;
  for (int64_t d = 0; d < inner; ++d)
    rows *= shape[d];
  scratch.bytes = rows * scratch.rowStride * elementBytes;
  return scratch;
}

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

} // namespace

void tilegpu::populateConvertLayoutOpToLLVMPatterns(
    TileGPUToLLVMTypeConverter &converter, RewritePatternSet &patterns,
    const SharedScratch &scratch) {
  patterns.add<ConvertLayoutOpConversion>(converter, scratch);
}
