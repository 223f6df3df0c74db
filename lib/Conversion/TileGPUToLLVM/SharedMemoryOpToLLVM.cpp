//===- SharedMemoryOpToLLVM.cpp - Tiles in shared memory ------------------===//
//
// A !tilegpu.memdesc lowers to the address of its buffer. local_alloc
// stores a tile at the buffer the pass placed it at (attribute
// tilegpu.allocation_offset, bytes into the kernel's dynamic shared memory)
// between two barriers. local_load reads a window of a buffer: a 16-bit
// tensor-core operand with ldmatrix, one instruction per four 8x8 matrices,
// anything else element by element. extract_slice picks registers.
//
//===----------------------------------------------------------------------===//

#include "Utility.h"

#include "mlir/Transforms/DialectConversion.h"

#include "llvm/ADT/MapVector.h"

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

/// The address of element `coord` (i32 values) of a buffer at `base`: the
/// swizzle of SharedEncodingAttr::getOffset, in instructions.
Value emitSharedAddress(OpBuilder &b, Location loc, Value base,
                        MemDescType type, Type element, ArrayRef<Value> coord) {
  SharedEncodingAttr shared = type.getEncoding();
  unsigned inner = shared.getOrder()[0], outer = shared.getOrder()[1];
  auto constant = [&](int64_t v) { return createI32(b, loc, v); };
  Value row = coord[outer], col = coord[inner];
  Value phase = LLVM::AndOp::create(
      b, loc,
      LLVM::LShrOp::create(b, loc, row,
                           constant(llvm::Log2_64(shared.getPerPhase()))),
      constant(shared.getMaxPhase() - 1));
  unsigned vecBits = llvm::Log2_64(shared.getVec());
  Value vector = LLVM::XOrOp::create(
      b, loc, LLVM::LShrOp::create(b, loc, col, constant(vecBits)), phase);
  Value offset = LLVM::AddOp::create(
      b, loc,
      LLVM::MulOp::create(b, loc, row, constant(type.getShape()[inner])),
      LLVM::OrOp::create(
          b, loc, LLVM::ShlOp::create(b, loc, vector, constant(vecBits)),
          LLVM::AndOp::create(b, loc, col, constant(shared.getVec() - 1))));
  return LLVM::GEPOp::create(b, loc,
                             LLVM::LLVMPointerType::get(b.getContext(), 3),
                             element, base, ValueRange{offset});
}

/// `coord` moved by the static `offsets`.
SmallVector<Value> shifted(OpBuilder &b, Location loc, ArrayRef<Value> coord,
                           ArrayRef<int64_t> offsets) {
  SmallVector<Value> result;
  for (auto [c, o] : llvm::zip(coord, offsets))
    result.push_back(
        o ? LLVM::AddOp::create(b, loc, c, createI32(b, loc, o)).getResult()
          : c);
  return result;
}

/// How many consecutive registers of `layout` one shared-memory store can
/// write: a run along the buffer's contiguous dimension that starts on a
/// swizzle vector and stays within it, at most 16 bytes.
int64_t getStoreWidth(const LinearLayout &layout, MemDescType buffer) {
  unsigned inner = buffer.getEncoding().getOrder()[0];
  int64_t bytes =
      std::max<int64_t>(1, buffer.getElementType().getIntOrFloatBitWidth() / 8);
  int64_t limit = std::min<int64_t>(buffer.getEncoding().getVec(), 16 / bytes);
  return std::min(limit, getContiguousRegisterRun(layout, inner));
}

struct LocalAllocOpConversion : public ConvertOpToLLVMPattern<LocalAllocOp> {
  LocalAllocOpConversion(const LLVMTypeConverter &converter,
                         const SharedScratch &scratch)
      : ConvertOpToLLVMPattern(converter), scratch(scratch) {}

  LogicalResult
  matchAndRewrite(LocalAllocOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto offset = op->getAttrOfType<IntegerAttr>(kAllocationOffsetAttr);
    if (!offset || scratch.symbol.empty())
      return op.emitError() << "shared memory was not allocated for this "
                               "buffer (convert-tilegpu-to-llvm places them)";
    Location loc = op.getLoc();
    auto srcType = op.getSrc().getType();
    Type element = getLoweredElementType(*getTypeConverter(), srcType);
    Value base = LLVM::GEPOp::create(
        rewriter, loc, LLVM::LLVMPointerType::get(getContext(), 3),
        rewriter.getI8Type(), getScratchBase(rewriter, loc, scratch),
        ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(offset.getInt())});
    LinearLayout layout = getLinearLayout(srcType);
    HwIndex hw = getHwIndex(rewriter, loc);
    SmallVector<Value> values =
        unpackRegisters(rewriter, loc, adaptor.getSrc());
    SmallVector<Value> addresses;
    for (auto &coord : emitCoordinates(rewriter, loc, layout, hw))
      addresses.push_back(
          emitSharedAddress(rewriter, loc, base, op.getType(), element, coord));
    // Earlier readers of this buffer (the last iteration of a loop) must be
    // done before it is overwritten, and every writer before it is read.
    createBarrier(rewriter, loc);
    storeTile(rewriter, loc, layout, hw, values, addresses, {},
              getStoreWidth(layout, op.getType()));
    createBarrier(rewriter, loc);
    rewriter.replaceOp(op, base);
    return success();
  }

  SharedScratch scratch;
};

/// Reads a 16-bit dot operand with ldmatrix: each 8x8 matrix of a k-pair
/// of registers (lane l holding its row l/4, k pair 2(l%4)) is one row of
/// addresses per lane, four matrices per instruction. Fails, before
/// emitting anything, when the layout is not of that form.
FailureOr<SmallVector<Value>> loadMatrices(OpBuilder &b, Location loc,
                                           LocalLoadOp op, Value base,
                                           Type element, HwIndex hw) {
  auto resultType = op.getType();
  auto operand = dyn_cast<DotOperandEncodingAttr>(resultType.getEncoding());
  MemDescType bufferType = op.getSrc().getType();
  if (!operand || operand.getKWidth() != 2 ||
      resultType.getElementType().getIntOrFloatBitWidth() != 16 ||
      bufferType.getEncoding().getVec() % 8)
    return failure();
  unsigned kDim = operand.getOpIdx() == 0 ? 1 : 0, rowDim = 1 - kDim;
  LinearLayout layout = getLinearLayout(resultType);
  auto unit = [](unsigned dim, int64_t v) {
    LinearLayout::Coord c(2, 0);
    c[dim] = v;
    return c;
  };
  SmallVector<LinearLayout::Coord> lanes{unit(kDim, 2), unit(kDim, 4),
                                         unit(rowDim, 1), unit(rowDim, 2),
                                         unit(rowDim, 4)};
  if (layout.getBases(HwDim::Lane) != ArrayRef(lanes))
    return failure();
  // Matrix origin -> the registers of its k-pair.
  llvm::MapVector<LinearLayout::Coord, std::array<int64_t, 2>> matrices;
  for (int64_t r = 0, e = layout.getSize(HwDim::Register); r < e; ++r) {
    LinearLayout::Coord origin = registerOffset(layout, r);
    int64_t pair = origin[kDim] % 8;
    if (pair > 1 || origin[rowDim] % 8)
      return failure();
    origin[kDim] -= pair;
    auto [it, inserted] = matrices.try_emplace(origin, std::array{-1l, -1l});
    if (it->second[pair] != -1)
      return failure();
    it->second[pair] = r;
  }
  for (auto &[origin, regs] : matrices)
    if (regs[0] == -1 || regs[1] == -1)
      return failure();

  // Rows of a matrix run along the buffer's outer dimension: along k when
  // the buffer is contiguous in the other dimension (ldmatrix .trans).
  bool transpose = bufferType.getEncoding().getOrder()[0] != kDim;
  unsigned addressDim = transpose ? kDim : rowDim;
  auto constant = [&](int64_t v) { return createI32(b, loc, v); };
  // This warp's origin.
  SmallVector<Value> warp =
      emitBasisSum(b, loc, layout.getBases(HwDim::Warp), hw.warp, 2);
  Value rowInMatrix = LLVM::AndOp::create(b, loc, hw.lane, constant(7));
  Value matrixOfLane = LLVM::LShrOp::create(b, loc, hw.lane, constant(3));

  Type i32 = b.getI32Type();
  auto pairType = VectorType::get({2}, element);
  SmallVector<Value> regs(layout.getSize(HwDim::Register));
  auto list = matrices.takeVector();
  for (size_t first = 0; first < list.size();) {
    // Matrices come in powers of two (the register bits that make them).
    size_t count = std::min<size_t>(4, list.size() - first);
    // This lane's matrix and row within it.
    Value which =
        LLVM::AndOp::create(b, loc, matrixOfLane, constant(count - 1));
    SmallVector<Value> coord;
    for (unsigned d = 0; d < 2; ++d) {
      Value c = constant(list[first].first[d] + op.getOffsets()[d]);
      for (size_t j = 1; j < count; ++j) {
        Value isJ = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, which,
                                         constant(j));
        c = LLVM::SelectOp::create(
            b, loc, isJ,
            constant(list[first + j].first[d] + op.getOffsets()[d]), c);
      }
      c = LLVM::AddOp::create(b, loc, c, warp[d]);
      if (d == addressDim)
        c = LLVM::AddOp::create(b, loc, c, rowInMatrix);
      coord.push_back(c);
    }
    Value address = emitSharedAddress(b, loc, base, bufferType, element, coord);
    Type resultType = count == 1
                          ? i32
                          : LLVM::LLVMStructType::getLiteral(
                                b.getContext(), SmallVector<Type>(count, i32));
    Value loaded = NVVM::LdMatrixOp::create(
        b, loc, resultType, address, count,
        transpose ? NVVM::MMALayout::col : NVVM::MMALayout::row,
        NVVM::LdStMatrixShapeAttr::get(b.getContext(), 8, 8),
        NVVM::LdStMatrixEltType::B16);
    for (size_t j = 0; j < count; ++j) {
      Value word =
          count == 1
              ? loaded
              : LLVM::ExtractValueOp::create(b, loc, loaded, j).getResult();
      Value pair = LLVM::BitcastOp::create(b, loc, pairType, word);
      for (int64_t e = 0; e < 2; ++e)
        regs[list[first + j].second[e]] =
            LLVM::ExtractElementOp::create(b, loc, pair, constant(e));
    }
    first += count;
  }
  return regs;
}

struct LocalLoadOpConversion : public ConvertOpToLLVMPattern<LocalLoadOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(LocalLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = op.getType();
    Type element = getLoweredElementType(*getTypeConverter(), resultType);
    HwIndex hw = getHwIndex(rewriter, loc);
    Type structType = getTypeConverter()->convertType(resultType);
    auto matrices =
        loadMatrices(rewriter, loc, op, adaptor.getSrc(), element, hw);
    if (succeeded(matrices)) {
      rewriter.replaceOp(op,
                         packRegisters(rewriter, loc, structType, *matrices));
      return success();
    }
    SmallVector<Value> values;
    for (auto &coord :
         emitCoordinates(rewriter, loc, getLinearLayout(resultType), hw)) {
      Value address = emitSharedAddress(
          rewriter, loc, adaptor.getSrc(), op.getSrc().getType(), element,
          shifted(rewriter, loc, coord, op.getOffsets()));
      values.push_back(LLVM::LoadOp::create(rewriter, loc, element, address));
    }
    rewriter.replaceOp(op, packRegisters(rewriter, loc, structType, values));
    return success();
  }
};

struct ExtractSliceOpConversion
    : public ConvertOpToLLVMPattern<ExtractSliceOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(ExtractSliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto inPlace = mapRegistersInPlace(
        getLinearLayout(op.getSrc().getType()), getLinearLayout(op.getType()),
        [](ArrayRef<int64_t> coord) { return LinearLayout::Coord(coord); },
        op.getOffsets());
    if (failed(inPlace))
      return op.emitError() << "the slice's layout does not keep its "
                               "elements in the registers that hold them";
    Location loc = op.getLoc();
    SmallVector<Value> regs = unpackRegisters(rewriter, loc, adaptor.getSrc());
    SmallVector<Value> picked;
    for (int64_t r : *inPlace)
      picked.push_back(regs[r]);
    rewriter.replaceOp(
        op,
        packRegisters(rewriter, loc,
                      getTypeConverter()->convertType(op.getType()), picked));
    return success();
  }
};

} // namespace

void tilegpu::populateSharedMemoryOpToLLVMPatterns(
    TileGPUToLLVMTypeConverter &converter, RewritePatternSet &patterns,
    const SharedScratch &scratch) {
  patterns.add<LocalAllocOpConversion>(converter, scratch);
  patterns.add<LocalLoadOpConversion, ExtractSliceOpConversion>(converter);
}
