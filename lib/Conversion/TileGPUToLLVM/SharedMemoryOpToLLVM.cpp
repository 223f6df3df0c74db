//===- SharedMemoryOpToLLVM.cpp - Tiles in shared memory ------------------===//
//
// A !tilegpu.memdesc lowers to the address of its buffer. local_alloc
// stores a tile at the buffer tilegpu-allocate-shared-memory placed it at
// (tilegpu.allocation_offset, bytes into the kernel's dynamic shared
// memory), then waits at a barrier; before the store too where
// tilegpu-place-barriers decided so (tilegpu.leading_barrier);
// memdesc_trans is the same memory, memdesc_index an offset into a stack.
// async_wait waits for cp.async groups, then at a barrier. local_load reads a
// window of a buffer: a 16-bit tensor-core operand with ldmatrix, one
// instruction per four 8x8 matrices, anything else element by element;
// local_alloc stores a 16-bit tile of that form with stmatrix (sm_90).
// extract_slice picks registers.
//
//===----------------------------------------------------------------------===//

#include "Utility.h"

#include "mlir/Transforms/DialectConversion.h"

#include "llvm/ADT/MapVector.h"

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

/// ldmatrix of `count` 8x8 matrices of 16-bit elements at shared address
/// `address` (i32) + `immediate` bytes; one i32 per matrix. Inline PTX keeps
/// the immediate in the instruction: LLVM would hoist a constant address
/// offset out of loops, one register per load. The side effect orders the
/// loads after the barrier that publishes the buffer.
SmallVector<Value> emitLdMatrix(OpBuilder &b, Location loc, Value address,
                                int64_t immediate, size_t count,
                                bool transpose) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "ldmatrix.sync.aligned.m8n8.x" << count << (transpose ? ".trans" : "")
     << ".shared.b16 {";
  std::string constraints;
  for (size_t j = 0; j < count; ++j) {
    os << (j ? ", $" : "$") << j;
    constraints += "=r,";
  }
  os << "}, [$" << count;
  if (immediate)
    os << "+" << immediate;
  os << "];";
  constraints += "r";
  Type i32 = b.getI32Type();
  Type resultType = count == 1
                        ? i32
                        : LLVM::LLVMStructType::getLiteral(
                              b.getContext(), SmallVector<Type>(count, i32));
  auto asmOp =
      emitInlinePtx(b, loc, resultType, ValueRange{address}, text, constraints);
  SmallVector<Value> words;
  for (size_t j = 0; j < count; ++j)
    words.push_back(
        count == 1 ? asmOp.getRes()
                   : LLVM::ExtractValueOp::create(b, loc, asmOp.getRes(), j)
                         .getResult());
  return words;
}

/// stmatrix of `words.size()` 8x8 matrices of 16-bit elements (one i32 of
/// each a lane) at shared address `address` (i32) + `immediate` bytes, as
/// emitLdMatrix reads them; inline PTX for the same reason (nvvm.stmatrix
/// would let LLVM hoist the immediate into a register a store).
void emitStMatrix(OpBuilder &b, Location loc, Value address, int64_t immediate,
                  ArrayRef<Value> words, bool transpose) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "stmatrix.sync.aligned.m8n8.x" << words.size()
     << (transpose ? ".trans" : "") << ".shared.b16 [$0";
  if (immediate)
    os << "+" << immediate;
  os << "], {";
  std::string constraints = "r";
  for (size_t j = 0; j < words.size(); ++j) {
    os << (j ? ", $" : "$") << j + 1;
    constraints += ",r";
  }
  os << "};";
  SmallVector<Value> operands{address};
  llvm::append_range(operands, words);
  emitInlinePtx(b, loc, Type(), operands, text, constraints);
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

/// The 8x8 matrices of 16-bit elements in which a warp's registers of a
/// tile meet a buffer, one ldmatrix or stmatrix moving up to four: lane l
/// holds row l / 4 of each, elements 2 (l % 4) and 2 (l % 4) + 1 along
/// `pairDim` in two registers (one 32-bit word), and the lanes of each
/// group of eight give the address of one of its rows.
struct MatrixTiling {
  /// A matrix's memory rows run along pairDim (.trans): the buffer is
  /// contiguous along the other dimension.
  bool transpose;
  /// The dimension along which a matrix's memory rows follow each other.
  unsigned addressDim;
  /// The coordinate bits a lane contributes itself (its warp's origin and
  /// its row within a matrix).
  LinearLayout::Coord laneBits;
  /// Each matrix's origin in the buffer and the registers of its pair.
  SmallVector<std::pair<LinearLayout::Coord, std::array<int64_t, 2>>> matrices;
};

/// How `layout`, a tile at `offsets` in `buffer`, moves as 8x8 matrices;
/// fails when it is not of that form. Emits nothing.
FailureOr<MatrixTiling> getMatrixTiling(const LinearLayout &layout,
                                        MemDescType buffer,
                                        ArrayRef<int64_t> offsets) {
  if (layout.getRank() != 2 ||
      buffer.getElementType().getIntOrFloatBitWidth() != 16 ||
      buffer.getEncoding().getVec() % 8 ||
      layout.getBases(HwDim::Register).empty())
    return failure();
  auto unit = [](unsigned dim, int64_t v) {
    LinearLayout::Coord c(2, 0);
    c[dim] = v;
    return c;
  };
  // Register 1 is the second element of a pair.
  const LinearLayout::Coord &second = layout.getBases(HwDim::Register)[0];
  if (second != unit(0, 1) && second != unit(1, 1))
    return failure();
  unsigned pairDim = second[1] ? 1 : 0, rowDim = 1 - pairDim;
  SmallVector<LinearLayout::Coord> lanes{unit(pairDim, 2), unit(pairDim, 4),
                                         unit(rowDim, 1), unit(rowDim, 2),
                                         unit(rowDim, 4)};
  if (layout.getBases(HwDim::Lane) != ArrayRef(lanes))
    return failure();
  // Matrix origin -> the registers of its pair.
  llvm::MapVector<LinearLayout::Coord, std::array<int64_t, 2>> matrices;
  for (int64_t r = 0, e = layout.getSize(HwDim::Register); r < e; ++r) {
    LinearLayout::Coord origin = registerOffset(layout, r);
    int64_t pair = origin[pairDim] % 8;
    if (pair > 1 || origin[rowDim] % 8)
      return failure();
    origin[pairDim] -= pair;
    auto [it, inserted] = matrices.try_emplace(origin, std::array{-1l, -1l});
    if (it->second[pair] != -1)
      return failure();
    it->second[pair] = r;
  }
  for (auto &[origin, regs] : matrices)
    if (regs[0] == -1 || regs[1] == -1)
      return failure();

  MatrixTiling tiling;
  tiling.transpose = buffer.getEncoding().getOrder()[0] != pairDim;
  tiling.addressDim = tiling.transpose ? pairDim : rowDim;
  // Matrix origins (and the window offsets) must leave the lane's bits
  // clear, so that coordinates combine by XOR.
  tiling.laneBits.assign(2, 0);
  for (const LinearLayout::Coord &basis : layout.getBases(HwDim::Warp))
    for (unsigned d = 0; d < 2; ++d)
      tiling.laneBits[d] |= basis[d];
  if (tiling.laneBits[tiling.addressDim] & 7)
    return failure();
  tiling.laneBits[tiling.addressDim] |= 7;
  for (auto &[origin, regs] : matrices.takeVector()) {
    LinearLayout::Coord c(2, 0);
    for (unsigned d = 0; d < 2; ++d) {
      c[d] = origin[d] + offsets[d];
      if (c[d] & tiling.laneBits[d])
        return failure();
    }
    tiling.matrices.push_back({c, regs});
  }
  return tiling;
}

/// Calls `move(address, immediate, first, count)` for each group of
/// `count` (1, 2 or 4) matrices of `tiling` from matrix `first`: the
/// lane's row address (i32, shared) and a constant byte offset to add to
/// it in the instruction.
void forEachMatrixGroup(
    OpBuilder &b, Location loc, const LinearLayout &layout,
    const MatrixTiling &tiling, MemDescType type, Value base, Type element,
    HwIndex hw, function_ref<void(Value, int64_t, size_t, size_t)> move) {
  auto constant = [&](int64_t v) { return createI32(b, loc, v); };
  SmallVector<Value> warp =
      emitBasisSum(b, loc, layout.getBases(HwDim::Warp), hw.warp, 2);
  Value rowInMatrix = LLVM::AndOp::create(b, loc, hw.lane, constant(7));
  Value matrixOfLane = LLVM::LShrOp::create(b, loc, hw.lane, constant(3));
  auto origin = [&](size_t i) -> const LinearLayout::Coord & {
    return tiling.matrices[i].first;
  };
  int64_t elementBytes = element.getIntOrFloatBitWidth() / 8;
  Value baseAddress = LLVM::PtrToIntOp::create(b, loc, b.getI32Type(), base);
  for (size_t first = 0, e = tiling.matrices.size(); first < e;) {
    // Matrices come in powers of two (the register bits that make them).
    size_t count = std::min<size_t>(4, e - first);
    // The offset map is linear over GF(2): offset(origin ^ lanePart) =
    // offset(origin) ^ offset(lanePart). lanePart is the lane's matrix
    // (relative to the first), its warp and its row; the constant's bits
    // outside those lanePart can reach become an immediate, so accesses
    // that differ only in them share one address register.
    Value which =
        LLVM::AndOp::create(b, loc, matrixOfLane, constant(count - 1));
    SmallVector<Value> lanePart;
    LinearLayout::Coord reach = tiling.laneBits;
    for (unsigned d = 0; d < 2; ++d) {
      Value c = constant(0);
      for (size_t j = 1; j < count; ++j) {
        int64_t delta = origin(first + j)[d] ^ origin(first)[d];
        reach[d] |= delta;
        Value isJ = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, which,
                                         constant(j));
        c = LLVM::SelectOp::create(b, loc, isJ, constant(delta), c);
      }
      c = LLVM::OrOp::create(b, loc, c, warp[d]);
      if (d == tiling.addressDim)
        c = LLVM::OrOp::create(b, loc, c, rowInMatrix);
      lanePart.push_back(c);
    }
    int64_t reachable = getReachableOffsetBits(type, reach);
    int64_t fixed =
        type.getEncoding().getOffset(type.getShape(), origin(first));
    Value offset = emitSharedOffset(b, loc, type, lanePart);
    if (int64_t mixed = fixed & reachable)
      offset = LLVM::XOrOp::create(b, loc, offset, constant(mixed));
    Value address = LLVM::AddOp::create(
        b, loc, baseAddress,
        LLVM::MulOp::create(b, loc, offset, constant(elementBytes)));
    move(address, (fixed & ~reachable) * elementBytes, first, count);
    first += count;
  }
}

/// Reads a 16-bit dot operand with ldmatrix, four 8x8 matrices an
/// instruction. Fails, before emitting anything, when the layout is not of
/// that form.
FailureOr<SmallVector<Value>> loadMatrices(OpBuilder &b, Location loc,
                                           LocalLoadOp op, Value base,
                                           Type element, HwIndex hw) {
  auto resultType = op.getType();
  auto operand = dyn_cast<DotOperandEncodingAttr>(resultType.getEncoding());
  if (!operand || operand.getKWidth() != 2)
    return failure();
  LinearLayout layout = getLinearLayout(resultType);
  FailureOr<MatrixTiling> tiling =
      getMatrixTiling(layout, op.getSrc().getType(), op.getOffsets());
  if (failed(tiling))
    return failure();
  auto pairType = VectorType::get({2}, element);
  SmallVector<Value> regs(layout.getSize(HwDim::Register));
  forEachMatrixGroup(
      b, loc, layout, *tiling, op.getSrc().getType(), base, element, hw,
      [&](Value address, int64_t immediate, size_t first, size_t count) {
        SmallVector<Value> words =
            emitLdMatrix(b, loc, address, immediate, count, tiling->transpose);
        for (size_t j = 0; j < count; ++j) {
          Value pair = LLVM::BitcastOp::create(b, loc, pairType, words[j]);
          for (int64_t e = 0; e < 2; ++e)
            regs[tiling->matrices[first + j].second[e]] =
                LLVM::ExtractElementOp::create(b, loc, pair,
                                               createI32(b, loc, e));
        }
      });
  return regs;
}

/// Writes a 16-bit tile with stmatrix (sm_90), four 8x8 matrices an
/// instruction, where every element is held by one thread. Fails, before
/// emitting anything, when the layout is not of that form.
LogicalResult storeMatrices(OpBuilder &b, Location loc, LocalAllocOp op,
                            Value base, Type element, HwIndex hw,
                            ArrayRef<Value> values) {
  TargetAttr target = getTarget(op);
  if (!target || !target.hasMatrixStores())
    return failure();
  LinearLayout layout = getLinearLayout(op.getSrc().getType());
  // Warps holding the same elements would write them twice.
  if (llvm::any_of(
          layout.getBases(HwDim::Warp), [](const LinearLayout::Coord &basis) {
            return llvm::all_of(basis, [](int64_t v) { return v == 0; });
          }))
    return failure();
  SmallVector<int64_t> origin(2, 0);
  FailureOr<MatrixTiling> tiling =
      getMatrixTiling(layout, op.getType(), origin);
  if (failed(tiling))
    return failure();
  auto pairType = VectorType::get({2}, element);
  Type i32 = b.getI32Type();
  forEachMatrixGroup(
      b, loc, layout, *tiling, op.getType(), base, element, hw,
      [&](Value address, int64_t immediate, size_t first, size_t count) {
        SmallVector<Value> words;
        for (size_t j = 0; j < count; ++j) {
          Value pair = LLVM::UndefOp::create(b, loc, pairType);
          for (int64_t e = 0; e < 2; ++e)
            pair = LLVM::InsertElementOp::create(
                b, loc, pair, values[tiling->matrices[first + j].second[e]],
                createI32(b, loc, e));
          words.push_back(LLVM::BitcastOp::create(b, loc, i32, pair));
        }
        emitStMatrix(b, loc, address, immediate, words, tiling->transpose);
      });
  return success();
}

struct LocalAllocOpConversion : public ConvertOpToLLVMPattern<LocalAllocOp> {
  LocalAllocOpConversion(const LLVMTypeConverter &converter,
                         const SharedScratch &scratch)
      : ConvertOpToLLVMPattern(converter), scratch(scratch) {}

  LogicalResult
  matchAndRewrite(LocalAllocOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    FailureOr<Value> placed = getSharedBase(rewriter, loc, scratch, op);
    if (failed(placed))
      return failure();
    Value base = *placed;
    // A buffer for asynchronous copies: they and async_wait synchronise.
    if (!op.getSrc()) {
      rewriter.replaceOp(op, base);
      return success();
    }
    auto srcType = op.getSrc().getType();
    Type element = getLoweredElementType(*getTypeConverter(), srcType);
    LinearLayout layout = getLinearLayout(srcType);
    HwIndex hw = getHwIndex(rewriter, loc, getTypeConverter());
    SmallVector<Value> values =
        unpackRegisters(rewriter, loc, adaptor.getSrc());
    // Earlier readers of this memory (the last iteration of a loop, a
    // buffer placed here before) must be done before it is overwritten,
    // unless a barrier already orders them; every writer before it is read.
    // Both barriers order only the storing warpgroup where no other touches
    // its rows (tilegpu.warpgroup_barriers).
    auto scoped = op->getAttrOfType<BoolAttr>(
        TileGPUDialect::getWarpGroupBarriersAttrName());
    auto barrier = [&] {
      if (scoped && scoped.getValue())
        createWarpGroupBarrier(rewriter, loc, getTypeConverter());
      else
        createBarrier(rewriter, loc);
    };
    if (op->getAttrOfType<BoolAttr>(TileGPUDialect::getLeadingBarrierAttrName())
            .getValue())
      barrier();
    if (failed(storeMatrices(rewriter, loc, op, base, element, hw, values))) {
      SmallVector<Value> addresses;
      for (auto &coord : emitCoordinates(rewriter, loc, layout, hw))
        addresses.push_back(emitSharedAddress(rewriter, loc, base, op.getType(),
                                              element, coord));
      storeTile(rewriter, loc, layout, hw, values, addresses, {},
                getSharedStoreWidth(layout, op.getType()));
    }
    barrier();
    rewriter.replaceOp(op, base);
    return success();
  }

  SharedScratch scratch;
};

struct LocalLoadOpConversion : public ConvertOpToLLVMPattern<LocalLoadOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(LocalLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = op.getType();
    Type element = getLoweredElementType(*getTypeConverter(), resultType);
    HwIndex hw = getHwIndex(rewriter, loc, getTypeConverter());
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

/// A transposed view is the same memory: the reads that use it compute
/// their addresses from the view's type.
struct MemDescTransOpConversion
    : public ConvertOpToLLVMPattern<MemDescTransOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(MemDescTransOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, adaptor.getSrc());
    return success();
  }
};

/// Buffer `index` of a stack: `index` buffers past its start.
struct MemDescIndexOpConversion
    : public ConvertOpToLLVMPattern<MemDescIndexOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(MemDescIndexOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value offset = LLVM::MulOp::create(
        rewriter, loc, adaptor.getIndex(),
        createI32(rewriter, loc, getSharedBytes(op.getType())));
    rewriter.replaceOp(
        op, LLVM::GEPOp::create(
                rewriter, loc, LLVM::LLVMPointerType::get(getContext(), 3),
                rewriter.getI8Type(), adaptor.getSrc(), ValueRange{offset}));
    return success();
  }
};

struct AsyncCommitGroupOpConversion
    : public ConvertOpToLLVMPattern<AsyncCommitGroupOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(AsyncCommitGroupOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    NVVM::CpAsyncCommitGroupOp::create(rewriter, op.getLoc());
    rewriter.eraseOp(op);
    return success();
  }
};

/// cp.async.wait_group makes this thread's copies complete; the barrier
/// makes everyone's visible, and everyone's earlier reads finished.
struct AsyncWaitOpConversion : public ConvertOpToLLVMPattern<AsyncWaitOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(AsyncWaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    NVVM::CpAsyncWaitGroupOp::create(rewriter, op.getLoc(), op.getPending());
    createBarrier(rewriter, op.getLoc());
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void tilegpu::populateSharedMemoryOpToLLVMPatterns(
    TileGPUToLLVMTypeConverter &converter, RewritePatternSet &patterns,
    const SharedScratch &scratch) {
  patterns.add<LocalAllocOpConversion>(converter, scratch);
  patterns.add<LocalLoadOpConversion, ExtractSliceOpConversion,
               MemDescTransOpConversion, MemDescIndexOpConversion,
               AsyncCommitGroupOpConversion, AsyncWaitOpConversion>(converter);
}
