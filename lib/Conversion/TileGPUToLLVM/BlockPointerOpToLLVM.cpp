//===- BlockPointerOpToLLVM.cpp - Block pointers with boundary checks -----===//
//
// A block pointer is a struct {base, shape[r], strides[r], offsets[r]}.
// Loading through it computes each register's element index (the block's
// offsets plus the register's coordinates), masks the dimensions named in
// boundary_check to [0, shape), and reads with the padding value elsewhere.
// An asynchronous copy through it sends each 16-byte vector straight to
// shared memory with cp.async, as one through a tile of pointers does; one
// through a TMA descriptor, a box per swizzle span, issued by thread 0 and
// counted by an mbarrier.
//
//===----------------------------------------------------------------------===//

#include "Utility.h"

#include "tile/Dialect/Tile/IR/Tile.h"

#include "mlir/Transforms/DialectConversion.h"

#include <limits>
#include <numeric>
#include <set>

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

/// The fields of a lowered block pointer.
struct BlockPtrFields {
  Value base;
  SmallVector<Value> shape, strides, offsets;

  BlockPtrFields(OpBuilder &b, Location loc, Value packed, int64_t rank) {
    SmallVector<Value> fields = unpackRegisters(b, loc, packed);
    base = fields[0];
    shape.assign(fields.begin() + 1, fields.begin() + 1 + rank);
    strides.assign(fields.begin() + 1 + rank, fields.begin() + 1 + 2 * rank);
    offsets.assign(fields.begin() + 1 + 2 * rank, fields.end());
  }

  Value pack(OpBuilder &b, Location loc, Type type) const {
    SmallVector<Value> fields{base};
    llvm::append_range(fields, shape);
    llvm::append_range(fields, strides);
    llvm::append_range(fields, offsets);
    return packRegisters(b, loc, type, fields);
  }
};

struct MakeBlockPtrOpConversion
    : public ConvertOpToLLVMPattern<tile::MakeBlockPtrOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(tile::MakeBlockPtrOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    SmallVector<Value> fields{adaptor.getBase()};
    llvm::append_range(fields, adaptor.getShape());
    llvm::append_range(fields, adaptor.getStrides());
    llvm::append_range(fields, adaptor.getOffsets());
    rewriter.replaceOp(
        op,
        packRegisters(rewriter, op.getLoc(),
                      getTypeConverter()->convertType(op.getType()), fields));
    return success();
  }
};

struct AdvanceOpConversion : public ConvertOpToLLVMPattern<tile::AdvanceOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(tile::AdvanceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    BlockPtrFields fields(rewriter, loc, adaptor.getPtr(),
                          op.getType().getRank());
    for (auto [offset, delta] : llvm::zip(fields.offsets, adaptor.getOffsets()))
      offset = LLVM::AddOp::create(rewriter, loc, offset, delta);
    rewriter.replaceOp(
        op, fields.pack(rewriter, loc,
                        getTypeConverter()->convertType(op.getType())));
    return success();
  }
};

/// For each register of `layout`: its address and whether it lies inside
/// the checked dimensions.
struct BlockAccess {
  SmallVector<Value> addresses, inBounds;
};

BlockAccess computeBlockAccess(OpBuilder &b, Location loc,
                               const BlockPtrFields &fields,
                               const LinearLayout &layout,
                               ArrayRef<int32_t> boundaryCheck, Type element,
                               HwIndex hw) {
  BlockAccess access;
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext(), 1);
  Value zero = createI64(b, loc, 0);
  for (auto &coord : emitCoordinates(b, loc, layout, hw)) {
    Value offset = zero, inBounds;
    for (auto [d, c] : llvm::enumerate(coord)) {
      Value index = LLVM::SExtOp::create(
          b, loc, b.getI64Type(),
          LLVM::AddOp::create(b, loc, fields.offsets[d], c));
      offset = LLVM::AddOp::create(
          b, loc, offset,
          LLVM::MulOp::create(b, loc, index, fields.strides[d]));
      if (!llvm::is_contained(boundaryCheck, static_cast<int32_t>(d)))
        continue;
      Value low =
          LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::sge, index, zero);
      Value high = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::slt, index,
                                        fields.shape[d]);
      Value both = LLVM::AndOp::create(b, loc, low, high);
      inBounds = inBounds ? LLVM::AndOp::create(b, loc, inBounds, both) : both;
    }
    access.addresses.push_back(LLVM::GEPOp::create(
        b, loc, ptrType, element, fields.base, ValueRange{offset}));
    access.inBounds.push_back(inBounds);
  }
  return access;
}

struct LoadBlockOpConversion
    : public ConvertOpToLLVMPattern<tile::LoadBlockOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(tile::LoadBlockOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = op.getType();
    Type element = getLoweredElementType(*getTypeConverter(), type);
    BlockPtrFields fields(rewriter, loc, adaptor.getPtr(), type.getRank());
    BlockAccess access = computeBlockAccess(
        rewriter, loc, fields, getLinearLayout(type), op.getBoundaryCheck(),
        element, getHwIndex(rewriter, loc, getTypeConverter()));
    Value padding;
    if (op.getPadding() == tile::Padding::nan)
      padding = LLVM::ConstantOp::create(
          rewriter, loc, element,
          rewriter.getFloatAttr(element,
                                std::numeric_limits<double>::quiet_NaN()));
    // With a vector width (tilegpu-coalesce), one access per vector: the
    // checked dimensions never split a vector, so its first mask is all's.
    int64_t width = getVectorWidth(op, getLinearLayout(type));
    SmallVector<Value> values;
    for (size_t i = 0; i < access.addresses.size(); i += width) {
      Value inBounds = access.inBounds[i];
      if (width == 1) {
        values.push_back(loadElement(rewriter, loc, element,
                                     access.addresses[i], inBounds,
                                     inBounds ? padding : Value()));
        continue;
      }
      SmallVector<Value> paddings;
      if (inBounds && padding)
        paddings.assign(width, padding);
      llvm::append_range(values,
                         loadVector(rewriter, loc, op, element, width,
                                    access.addresses[i], inBounds, paddings));
    }
    rewriter.replaceOp(op, packRegisters(rewriter, loc,
                                         getTypeConverter()->convertType(type),
                                         values));
    return success();
  }
};

/// A tile written to the block a block pointer designates, each element
/// once: stored (tile.store_block, the dimensions boundary_check lists
/// checked) or updated atomically (tile.atomic_rmw_block, every dimension
/// checked).
template <typename OpTy>
struct BlockWriteOpConversion : public ConvertOpToLLVMPattern<OpTy> {
  using ConvertOpToLLVMPattern<OpTy>::ConvertOpToLLVMPattern;
  static constexpr bool kIsStore = std::is_same_v<OpTy, tile::StoreBlockOp>;

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    const TypeConverter *converter = this->getTypeConverter();
    auto type = cast<RankedTensorType>(op.getValue().getType());
    Type element = getLoweredElementType(*converter, type);
    LinearLayout layout = getLinearLayout(type);
    HwIndex hw = getHwIndex(rewriter, loc, converter);
    BlockPtrFields fields(rewriter, loc, adaptor.getPtr(), type.getRank());
    SmallVector<int32_t> checked;
    if constexpr (kIsStore) {
      llvm::append_range(checked, op.getBoundaryCheck());
    } else {
      checked.resize(type.getRank());
      std::iota(checked.begin(), checked.end(), 0);
    }
    BlockAccess access =
        computeBlockAccess(rewriter, loc, fields, layout, checked, element, hw);
    SmallVector<Value> values =
        unpackRegisters(rewriter, loc, adaptor.getValue());
    int64_t width = getVectorWidth(op, layout);
    if constexpr (kIsStore)
      storeTile(rewriter, loc, layout, hw, values, access.addresses,
                access.inBounds, width);
    else
      updateTile(rewriter, loc, op.getKind(), layout, hw, values,
                 access.addresses, access.inBounds, width);
    rewriter.eraseOp(op);
    return success();
  }
};

/// One cp.async of 16 bytes from `src` (global) to `dst` (shared, i32)
/// where `pred` (i1) holds, reading `srcBytes` (i32: 16, or 0 to write
/// zeros). Inline PTX: the predicate skips the copy altogether.
void emitAsyncCopy(OpBuilder &b, Location loc, Value dst, Value src, Value pred,
                   Value srcBytes) {
  Value predicate =
      LLVM::ZExtOp::create(b, loc, b.getI32Type(), pred).getResult();
  emitInlinePtx(b, loc, Type(), ValueRange{predicate, dst, src, srcBytes},
                "{\n.reg .pred p;\nsetp.ne.b32 p, $0, 0;\n"
                "@p cp.async.cg.shared.global [$1], [$2], 16, $3;\n}",
                "r,r,l,r");
}

/// The buffer addresses of a laid-out tile's registers. A swizzle of
/// power-of-two shapes is linear over GF(2), offset(thread ^ register) =
/// offset(thread) ^ offset(register): the bits of a register's offset that
/// no thread's can have become an immediate, so that the registers that
/// differ only in them share one address register (tilegpu-coalesce's
/// max-row-span makes such layouts).
class SharedAddresses {
public:
  SharedAddresses(OpBuilder &b, Location loc, Value base, MemDescType buffer,
                  Type element, const LinearLayout &layout,
                  ArrayRef<SmallVector<Value>> coords)
      : b(b), loc(loc), base(base), buffer(buffer), element(element),
        layout(layout), coords(coords) {
    if (!llvm::all_of(buffer.getShape(), llvm::isPowerOf2_64))
      return;
    // A thread that repeats only across rows keeps whole addresses, as
    // before: LLVM folds the rows' offsets itself, and the shipped kernels
    // keep the code they were tuned with. Along a row LLVM cannot see
    // through the swizzle's XOR.
    unsigned inner = buffer.getEncoding().getOrder()[0];
    int64_t vec = buffer.getEncoding().getVec();
    if (llvm::none_of(layout.getBases(HwDim::Register),
                      [&](const LinearLayout::Coord &basis) {
                        return basis[inner] >= vec;
                      }))
      return;
    LinearLayout::Coord threadBits(layout.getRank(), 0);
    for (HwDim dim : {HwDim::Lane, HwDim::Warp})
      for (const LinearLayout::Coord &basis : layout.getBases(dim))
        for (auto [bits, v] : llvm::zip(threadBits, basis))
          bits |= v;
    reachable = getReachableOffsetBits(buffer, threadBits);
    // Register 0 is the thread's own coordinate.
    threadOffset = emitSharedOffset(b, loc, buffer, coords[0]);
  }

  /// The address of register `r`'s element.
  Value get(size_t r) {
    if (!threadOffset)
      return emitSharedAddress(b, loc, base, buffer, element, coords[r]);
    int64_t fixed = buffer.getEncoding().getOffset(buffer.getShape(),
                                                   registerOffset(layout, r));
    Value offset = threadOffset;
    if (int64_t mixed = fixed & reachable)
      offset = LLVM::XOrOp::create(b, loc, offset, createI32(b, loc, mixed));
    auto ptrType = LLVM::LLVMPointerType::get(b.getContext(), 3);
    Value address =
        LLVM::GEPOp::create(b, loc, ptrType, element, base, ValueRange{offset});
    if (int64_t immediate = fixed & ~reachable)
      address = LLVM::GEPOp::create(b, loc, ptrType, element, address,
                                    ArrayRef<LLVM::GEPArg>{int32_t(immediate)});
    return address;
  }

private:
  OpBuilder &b;
  Location loc;
  Value base;
  MemDescType buffer;
  Type element;
  const LinearLayout &layout;
  ArrayRef<SmallVector<Value>> coords;
  int64_t reachable = 0;
  Value threadOffset;
};

/// One cp.async of 16 bytes for each vector of `width` registers of
/// `layout`, from `sources[i]` (the vector's first register's address) to
/// its place in `buffer` (lowered to `base`), reading nothing and writing
/// zeros where `valid[i]` is false (a null or absent entry: always valid),
/// and only where `pred` (may be null) holds. An element held by several
/// threads or registers is copied once.
void emitVectorCopies(OpBuilder &b, Location loc, const LinearLayout &layout,
                      const HwIndex &hw, Value base, MemDescType buffer,
                      Type element, int64_t width, ArrayRef<Value> sources,
                      ArrayRef<Value> valid, Value pred) {
  SmallVector<SmallVector<Value>> coords = emitCoordinates(b, loc, layout, hw);
  Value holder = isCanonicalHolder(b, loc, layout, hw);
  if (pred)
    holder = LLVM::AndOp::create(b, loc, holder, pred);
  Value full = createI32(b, loc, 16), none = createI32(b, loc, 0);
  SharedAddresses addresses(b, loc, base, buffer, element, layout, coords);
  std::set<LinearLayout::Coord> copied;
  for (size_t i = 0; i < coords.size(); i += width) {
    if (!copied.insert(registerOffset(layout, i)).second)
      continue;
    Value dst =
        LLVM::PtrToIntOp::create(b, loc, b.getI32Type(), addresses.get(i));
    Value ok = i < valid.size() ? valid[i] : Value();
    Value srcBytes =
        ok ? LLVM::SelectOp::create(b, loc, ok, full, none).getResult() : full;
    emitAsyncCopy(b, loc, dst, sources[i], holder, srcBytes);
  }
}

/// Each vector of 16 bytes of the block's layout is one cp.async, from its
/// global address to its place in the (swizzled) buffer. A vector outside a
/// checked dimension reads nothing and writes zeros; the contiguous
/// dimension is never checked (the verifier), so a vector is all in or all
/// out.
struct AsyncCopyBlockOpConversion
    : public ConvertOpToLLVMPattern<AsyncCopyBlockOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(AsyncCopyBlockOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = op.getPtr().getType().getBlockType();
    MemDescType buffer = op.getDst().getType();
    Type element = getLoweredElementType(*getTypeConverter(), type);
    LinearLayout layout = getLinearLayout(type);
    unsigned inner =
        cast<BlockedEncodingAttr>(type.getEncoding()).getOrder()[0];
    int64_t width = 16 / getSharedElementBytes(type.getElementType());
    if (layout.getRegisterRun(inner) < width ||
        buffer.getEncoding().getOrder()[0] != inner ||
        buffer.getEncoding().getVec() < width)
      return op.emitError()
             << "cannot copy in 16-byte vectors: the block's layout must "
                "hold runs of "
             << width << " elements along dimension " << inner
             << ", the buffer's contiguous dimension, within a swizzle vector";
    HwIndex hw = getHwIndex(rewriter, loc, getTypeConverter());
    BlockPtrFields fields(rewriter, loc, adaptor.getPtr(), type.getRank());
    BlockAccess access = computeBlockAccess(rewriter, loc, fields, layout,
                                            op.getBoundaryCheck(), element, hw);
    emitVectorCopies(rewriter, loc, layout, hw, adaptor.getDst(), buffer,
                     element, width, access.addresses, access.inBounds,
                     adaptor.getPred());
    rewriter.eraseOp(op);
    return success();
  }
};

/// Each vector of 16 bytes of the pointers' layout (vector_width elements
/// at consecutive, aligned addresses under one mask value: the verifier and
/// the pipeliner's proof) is one cp.async from its first pointer to its
/// place in the (swizzled) buffer; one the mask is false for reads nothing
/// and writes zeros.
struct AsyncCopyOpConversion : public ConvertOpToLLVMPattern<AsyncCopyOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(AsyncCopyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = op.getPtr().getType();
    MemDescType buffer = op.getDst().getType();
    Type element =
        getLoweredElementType(*getTypeConverter(), buffer.getElementType());
    LinearLayout layout = getLinearLayout(type);
    int64_t width = op.getVectorWidth();
    HwIndex hw = getHwIndex(rewriter, loc, getTypeConverter());
    SmallVector<Value> pointers =
        unpackRegisters(rewriter, loc, adaptor.getPtr());
    SmallVector<Value> masks;
    if (adaptor.getMask())
      masks = unpackRegisters(rewriter, loc, adaptor.getMask());
    emitVectorCopies(rewriter, loc, layout, hw, adaptor.getDst(), buffer,
                     element, width, pointers, masks, adaptor.getPred());
    rewriter.eraseOp(op);
    return success();
  }
};

/// Calls `copy` for each swizzle span of the contiguous dimension of
/// `buffer` (lowered to `base`): the span's address, and the coordinates of
/// its box in the descriptor: the block's offsets, contiguous dimension
/// first, moved to the span, then `extra`. Spans lie one after another (the
/// nvmma_shared layout).
void forEachSpan(OpBuilder &b, Location loc, MemDescType buffer, Value base,
                 const BlockPtrFields &fields, ValueRange extra,
                 function_ref<void(Value, ValueRange)> copy) {
  ArrayRef<int64_t> shape = buffer.getShape();
  SharedLayoutAttrInterface encoding = buffer.getEncoding();
  unsigned inner = encoding.getOrder()[0], outer = encoding.getOrder()[1];
  int64_t elementBytes = getSharedElementBytes(buffer.getElementType());
  int64_t spanElements = encoding.getRowLength(shape);
  for (int64_t first = 0; first < shape[inner]; first += spanElements) {
    SmallVector<int64_t> corner(2, 0);
    corner[inner] = first;
    int64_t offset = encoding.getOffset(shape, corner) * elementBytes;
    Value span = LLVM::GEPOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), b.getI8Type(),
        base, ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(offset)});
    SmallVector<Value> coords{LLVM::AddOp::create(b, loc, fields.offsets[inner],
                                                  createI32(b, loc, first)),
                              fields.offsets[outer]};
    llvm::append_range(coords, extra);
    copy(span, coords);
  }
}

/// Thread 0 (or the producer thread) arms the mbarrier with the buffer's
/// bytes, then has the TMA copy the block one swizzle span of its
/// contiguous dimension at a time: each span is a box of the descriptor,
/// stored after the one before (the nvmma_shared layout). Coordinates are the
/// block's offsets, contiguous dimension first, then the op's own.
struct AsyncTMACopyBlockOpConversion
    : public ConvertOpToLLVMPattern<AsyncTMACopyBlockOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(AsyncTMACopyBlockOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MemDescType buffer = op.getDst().getType();
    ArrayRef<int64_t> shape = buffer.getShape();
    int64_t elementBytes = getSharedElementBytes(buffer.getElementType());
    BlockPtrFields fields(rewriter, loc, adaptor.getPtr(), shape.size());
    Value issuer = isIssuingThread(rewriter, loc, getTypeConverter());
    if (adaptor.getPred())
      issuer =
          issuer ? LLVM::AndOp::create(rewriter, loc, issuer, adaptor.getPred())
                 : adaptor.getPred();
    int64_t bytes = shape[0] * shape[1] * elementBytes;
    NVVM::MBarrierArriveExpectTxOp::create(
        rewriter, loc, /*res=*/Type(), adaptor.getBarrier(),
        createI32(rewriter, loc, bytes), NVVM::MemScopeKind::CTA,
        /*relaxed=*/false, issuer);
    auto clusterPtr = LLVM::LLVMPointerType::get(getContext(), 7);
    forEachSpan(
        rewriter, loc, buffer, adaptor.getDst(), fields, adaptor.getCoords(),
        [&](Value span, ValueRange coords) {
          NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
              rewriter, loc,
              LLVM::AddrSpaceCastOp::create(rewriter, loc, clusterPtr, span),
              adaptor.getDesc(), coords, adaptor.getBarrier(),
              /*im2colOffsets=*/ValueRange(),
              /*multicastMask=*/Value(),
              /*l2CacheHint=*/Value(), NVVM::TMALoadMode::TILE,
              /*isCTAOnly=*/false,
              /*group=*/NVVM::CTAGroupKindAttr(), issuer);
        });
    rewriter.eraseOp(op);
    return success();
  }
};

/// Every thread's writes to the buffer are fenced against the asynchronous
/// proxy and waited for; thread 0 has the TMA store it one swizzle span at a
/// time and waits until the copies have read it (the bulk group of the
/// others is empty); then everyone waits, so the memory may be reused.
struct AsyncTMAStoreBlockOpConversion
    : public ConvertOpToLLVMPattern<AsyncTMAStoreBlockOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(AsyncTMAStoreBlockOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MemDescType buffer = op.getSrc().getType();
    BlockPtrFields fields(rewriter, loc, adaptor.getPtr(),
                          buffer.getShape().size());
    emitAsyncProxyFence(rewriter, loc);
    createBarrier(rewriter, loc);
    Value issuer = isFirstThread(rewriter, loc, getTypeConverter());
    forEachSpan(rewriter, loc, buffer, adaptor.getSrc(), fields,
                adaptor.getCoords(), [&](Value span, ValueRange coords) {
                  NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp::create(
                      rewriter, loc, adaptor.getDesc(), span, coords,
                      /*l2CacheHint=*/Value(), NVVM::TMAStoreMode::TILE,
                      issuer);
                });
    NVVM::CpAsyncBulkCommitGroupOp::create(rewriter, loc);
    NVVM::CpAsyncBulkWaitGroupOp::create(rewriter, loc, /*group=*/0,
                                         /*read=*/rewriter.getUnitAttr());
    createBarrier(rewriter, loc);
    rewriter.eraseOp(op);
    return success();
  }
};

/// The TMA's reduction for an atomic kind.
NVVM::TMAReduxKind getTMAReduxKind(tile::AtomicKind kind) {
  switch (kind) {
  case tile::AtomicKind::add:
    return NVVM::TMAReduxKind::ADD;
  case tile::AtomicKind::max:
    return NVVM::TMAReduxKind::MAX;
  case tile::AtomicKind::min:
    return NVVM::TMAReduxKind::MIN;
  case tile::AtomicKind::bitwise_and:
    return NVVM::TMAReduxKind::AND;
  case tile::AtomicKind::bitwise_or:
    return NVVM::TMAReduxKind::OR;
  case tile::AtomicKind::bitwise_xor:
    return NVVM::TMAReduxKind::XOR;
  case tile::AtomicKind::exchange:
    break;
  }
  llvm_unreachable("the TMA does not exchange");
}

/// Each warp, alone: its lane 0 waits until its earlier bulk copies have
/// read their buffers (the other lanes have none), then the warp writes
/// its box, fences the writes against the asynchronous proxy, and lane 0
/// issues the box's updates, one swizzle span at a time.
struct AsyncTMAReduceBlockOpConversion
    : public ConvertOpToLLVMPattern<AsyncTMAReduceBlockOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(AsyncTMAReduceBlockOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MemDescType buffer = op.getBuffer().getType();
    RankedTensorType type = op.getValue().getType();
    Type element = getLoweredElementType(*getTypeConverter(), type);
    LinearLayout layout = getLinearLayout(type);
    LinearLayout::Coord box = *layout.getWarpBox();
    HwIndex hw = getHwIndex(rewriter, loc, getTypeConverter());
    BlockPtrFields fields(rewriter, loc, adaptor.getPtr(), 2);
    Value base = adaptor.getBuffer();
    Value allLanes = createI32(rewriter, loc, -1);

    NVVM::CpAsyncBulkWaitGroupOp::create(rewriter, loc, /*group=*/0,
                                         /*read=*/rewriter.getUnitAttr());
    NVVM::SyncWarpOp::create(rewriter, loc, allLanes);
    SmallVector<Value> addresses;
    for (auto &coord : emitCoordinates(rewriter, loc, layout, hw))
      addresses.push_back(
          emitSharedAddress(rewriter, loc, base, buffer, element, coord));
    storeTile(rewriter, loc, layout, hw,
              unpackRegisters(rewriter, loc, adaptor.getValue()), addresses, {},
              getSharedStoreWidth(layout, buffer));
    emitAsyncProxyFence(rewriter, loc);
    NVVM::SyncWarpOp::create(rewriter, loc, allLanes);

    // The warp's box starts where its warp bits put it (disjoint bits: a
    // sum).
    SmallVector<Value> origin(2, createI32(rewriter, loc, 0));
    for (auto [bit, basis] : llvm::enumerate(layout.getBases(HwDim::Warp))) {
      Value set = LLVM::AndOp::create(
          rewriter, loc,
          LLVM::LShrOp::create(rewriter, loc, hw.warp,
                               createI32(rewriter, loc, bit)),
          createI32(rewriter, loc, 1));
      for (auto [d, v] : llvm::enumerate(basis))
        if (v)
          origin[d] = LLVM::AddOp::create(
              rewriter, loc, origin[d],
              LLVM::MulOp::create(rewriter, loc, set,
                                  createI32(rewriter, loc, v)));
    }
    SharedLayoutAttrInterface encoding = buffer.getEncoding();
    unsigned inner = encoding.getOrder()[0], outer = encoding.getOrder()[1];
    int64_t span = encoding.getRowLength(buffer.getShape());
    Value firstLane =
        LLVM::ICmpOp::create(rewriter, loc, LLVM::ICmpPredicate::eq, hw.lane,
                             createI32(rewriter, loc, 0));
    runIf(rewriter, loc, firstLane, [&] {
      for (int64_t first = 0; first < box[inner]; first += span) {
        SmallVector<Value> corner(origin);
        corner[inner] = LLVM::AddOp::create(rewriter, loc, origin[inner],
                                            createI32(rewriter, loc, first));
        Value source =
            emitSharedAddress(rewriter, loc, base, buffer, element, corner);
        SmallVector<Value> coords{
            LLVM::AddOp::create(rewriter, loc, fields.offsets[inner],
                                corner[inner]),
            LLVM::AddOp::create(rewriter, loc, fields.offsets[outer],
                                corner[outer])};
        llvm::append_range(coords, adaptor.getCoords());
        NVVM::CpAsyncBulkTensorReduceOp::create(
            rewriter, loc, adaptor.getDesc(), source,
            getTMAReduxKind(op.getKind()), NVVM::TMAStoreMode::TILE, coords,
            /*l2CacheHint=*/Value());
      }
      NVVM::CpAsyncBulkCommitGroupOp::create(rewriter, loc);
    });
    rewriter.eraseOp(op);
    return success();
  }
};

/// Each group of warps (getBulkReduceRuns): its first thread waits until
/// its earlier bulk copies have read the buffer, the group writes its
/// elements at their offsets and fences them against the asynchronous proxy,
/// then its first thread issues one reduction a run.
struct AsyncBulkReduceOpConversion
    : public ConvertOpToLLVMPattern<AsyncBulkReduceOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(AsyncBulkReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    RankedTensorType type = op.getValue().getType();
    std::optional<BulkReduceRuns> runs =
        getBulkReduceRuns(type, op.getOffsetBits());
    if (!runs)
      return op.emitOpError() << "has no runs for its layout";
    LinearLayout layout = getLinearLayout(type);
    Type element = getLoweredElementType(*getTypeConverter(), type);
    HwIndex hw = getHwIndex(rewriter, loc, getTypeConverter());
    auto i32 = [&](int64_t value) { return createI32(rewriter, loc, value); };
    auto groupBarrier = [&] {
      if (runs->groupWarps == 4)
        createWarpGroupBarrier(rewriter, loc, getTypeConverter());
      else
        NVVM::SyncWarpOp::create(rewriter, loc, i32(-1));
    };
    // What the index's bits from `first` on add to an element's offset
    // (disjoint bits: their xor is their sum).
    auto offsetOfBits = [&](Value index, ArrayRef<int64_t> bits,
                            unsigned first) {
      SmallVector<LinearLayout::Coord> bases;
      for (auto [i, bit] : llvm::enumerate(bits))
        bases.push_back({i < first ? 0 : bit});
      return emitBasisSum(rewriter, loc, bases, index, /*rank=*/1).front();
    };
    unsigned groupBits = llvm::Log2_32(runs->groupWarps);
    Value issuing = LLVM::ICmpOp::create(
        rewriter, loc, LLVM::ICmpPredicate::eq,
        LLVM::OrOp::create(rewriter, loc, hw.lane,
                           LLVM::AndOp::create(rewriter, loc, hw.warp,
                                               i32(runs->replicatedWarps |
                                                   (runs->groupWarps - 1)))),
        i32(0));

    runIf(rewriter, loc, issuing, [&] {
      NVVM::CpAsyncBulkWaitGroupOp::create(rewriter, loc, /*group=*/0,
                                           /*read=*/rewriter.getUnitAttr());
    });
    groupBarrier();
    Value base = adaptor.getBuffer();
    Value threadOffset = LLVM::AddOp::create(
        rewriter, loc, offsetOfBits(hw.lane, runs->laneBits, 0),
        offsetOfBits(hw.warp, runs->warpBits, 0));
    auto sharedType = LLVM::LLVMPointerType::get(getContext(), 3);
    SmallVector<Value> addresses;
    for (int64_t offset : runs->registerOffsets)
      addresses.push_back(
          LLVM::GEPOp::create(rewriter, loc, sharedType, element, base,
                              ValueRange{LLVM::AddOp::create(
                                  rewriter, loc, threadOffset, i32(offset))}));
    // Registers whose offsets run on, up to 16 bytes, are one store.
    int64_t width = 1;
    while (width < 4 && width < static_cast<int64_t>(addresses.size()) &&
           runs->registerOffsets[width] == width)
      width *= 2;
    storeTile(rewriter, loc, layout, hw,
              unpackRegisters(rewriter, loc, adaptor.getValue()), addresses, {},
              width);
    emitAsyncProxyFence(rewriter, loc);
    groupBarrier();

    Value groupOffset = offsetOfBits(hw.warp, runs->warpBits, groupBits);
    // The issuing thread's register 0 holds the element at the group's
    // offset: the block's pointers are its pointer plus the run's start.
    Value first = unpackRegisters(rewriter, loc, adaptor.getPtr()).front();
    auto globalType = cast<LLVM::LLVMPointerType>(first.getType());
    runIf(rewriter, loc, issuing, [&] {
      for (int64_t start : runs->runStarts) {
        Value target = LLVM::GEPOp::create(rewriter, loc, globalType, element,
                                           first, ValueRange{i32(start)});
        Value source =
            LLVM::GEPOp::create(rewriter, loc, sharedType, element, base,
                                ValueRange{LLVM::AddOp::create(
                                    rewriter, loc, groupOffset, i32(start))});
        emitInlinePtx(
            rewriter, loc, Type(),
            {LLVM::PtrToIntOp::create(rewriter, loc, rewriter.getI64Type(),
                                      target),
             LLVM::PtrToIntOp::create(rewriter, loc, rewriter.getI32Type(),
                                      source)},
            "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 "
            "[$0], [$1], " +
                std::to_string(runs->runElements * 4) + ";",
            "l,r");
      }
      NVVM::CpAsyncBulkCommitGroupOp::create(rewriter, loc);
    });
    rewriter.eraseOp(op);
    return success();
  }
};

/// Every thread waits for the bulk copies it issued to have read their
/// buffers, then at a barrier.
struct AsyncTMAStoreWaitOpConversion
    : public ConvertOpToLLVMPattern<AsyncTMAStoreWaitOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(AsyncTMAStoreWaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    NVVM::CpAsyncBulkWaitGroupOp::create(rewriter, op.getLoc(), /*group=*/0,
                                         /*read=*/rewriter.getUnitAttr());
    createBarrier(rewriter, op.getLoc());
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void tilegpu::populateBlockPointerOpToLLVMPatterns(
    TileGPUToLLVMTypeConverter &converter, RewritePatternSet &patterns) {
  patterns
      .add<MakeBlockPtrOpConversion, AdvanceOpConversion, LoadBlockOpConversion,
           BlockWriteOpConversion<tile::StoreBlockOp>,
           BlockWriteOpConversion<tile::AtomicRMWBlockOp>,
           AsyncCopyBlockOpConversion, AsyncCopyOpConversion,
           AsyncTMACopyBlockOpConversion, AsyncTMAStoreBlockOpConversion,
           AsyncTMAReduceBlockOpConversion, AsyncBulkReduceOpConversion,
           AsyncTMAStoreWaitOpConversion>(converter);
}
