//===- ReduceOpToLLVM.cpp - Reductions: registers, shuffles, shared memory
//-===//
//
// A reduction along an axis combines, in three steps read off the source
// layout's map: registers of one thread that differ only along the axis;
// then lanes whose bases point along the axis, by butterfly shuffles; then
// warps whose bases point along the axis, through shared memory. Every
// thread ends with the full result for the coordinates it holds. A 1-D
// tile of booleans (0 or 1) reduced with max or min to one scalar, "does any
// or every element hold", takes one bar.red.or or bar.red.and instead.
//
//===----------------------------------------------------------------------===//

#include "Utility.h"

#include "tile/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "mlir/Transforms/DialectConversion.h"

#include <set>

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

Value combine(OpBuilder &b, Location loc, tile::ReduceKind kind, Value x,
              Value y) {
  bool isFloat = isa<FloatType>(x.getType());
  switch (kind) {
  case tile::ReduceKind::sum:
    return isFloat ? LLVM::FAddOp::create(b, loc, x, y).getResult()
                   : LLVM::AddOp::create(b, loc, x, y).getResult();
  case tile::ReduceKind::max: // NaN propagates, integers are signed
    return isFloat ? LLVM::MaximumOp::create(b, loc, x, y).getResult()
                   : LLVM::SMaxOp::create(b, loc, x, y).getResult();
  case tile::ReduceKind::min:
    return isFloat ? LLVM::MinimumOp::create(b, loc, x, y).getResult()
                   : LLVM::SMinOp::create(b, loc, x, y).getResult();
  case tile::ReduceKind::bitwise_or:
    return LLVM::OrOp::create(b, loc, x, y);
  case tile::ReduceKind::bitwise_xor:
    return LLVM::XOrOp::create(b, loc, x, y);
  }
  llvm_unreachable("unknown reduce kind");
}

Value shuffle32(OpBuilder &b, Location loc, Value value, int64_t laneMask) {
  return NVVM::ShflOp::create(b, loc, value.getType(), createI32(b, loc, -1),
                              value, createI32(b, loc, laneMask),
                              createI32(b, loc, 0x1f), NVVM::ShflKind::bfly,
                              UnitAttr());
}

/// The value of the lane whose index differs from ours in `laneMask`.
Value shuffleXor(OpBuilder &b, Location loc, Value value, int64_t laneMask) {
  Type type = value.getType(), i32 = b.getI32Type();
  if (type.isF32() || type.isInteger(32))
    return shuffle32(b, loc, value, laneMask);
  unsigned bits = type.getIntOrFloatBitWidth();
  Type intType = b.getIntegerType(bits);
  Value asInt = type.isInteger(bits)
                    ? value
                    : LLVM::BitcastOp::create(b, loc, intType, value);
  Value shuffled;
  if (bits < 32) {
    Value wide = LLVM::ZExtOp::create(b, loc, i32, asInt);
    shuffled = LLVM::TruncOp::create(b, loc, intType,
                                     shuffle32(b, loc, wide, laneMask));
  } else { // 64 bits: two halves
    Value low = LLVM::TruncOp::create(b, loc, i32, asInt);
    Value high = LLVM::TruncOp::create(
        b, loc, i32,
        LLVM::LShrOp::create(b, loc, asInt, createI64(b, loc, 32)));
    Value lowS =
        LLVM::ZExtOp::create(b, loc, intType, shuffle32(b, loc, low, laneMask));
    Value highS = LLVM::ZExtOp::create(b, loc, intType,
                                       shuffle32(b, loc, high, laneMask));
    shuffled = LLVM::OrOp::create(
        b, loc, lowS,
        LLVM::ShlOp::create(b, loc, highS, createI64(b, loc, 32)));
  }
  return type.isInteger(bits) ? shuffled
                              : LLVM::BitcastOp::create(b, loc, type, shuffled);
}

LinearLayout::Coord dropAxis(ArrayRef<int64_t> coord, int64_t axis) {
  LinearLayout::Coord key(coord);
  key.erase(key.begin() + axis);
  return key;
}

struct ReduceOpConversion : public ConvertOpToLLVMPattern<tile::ReduceOp> {
  ReduceOpConversion(const LLVMTypeConverter &converter,
                     const SharedScratch &scratch)
      : ConvertOpToLLVMPattern(converter), scratch(scratch) {}

  LogicalResult
  matchAndRewrite(tile::ReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto srcType = op.getSrc().getType();
    int64_t axis = op.getAxis();
    tile::ReduceKind kind = op.getKind();
    LinearLayout layout = getLinearLayout(srcType);
    auto laneBits = getAxisBits(layout, HwDim::Lane, axis);
    auto warpBits = getAxisBits(layout, HwDim::Warp, axis);
    if (failed(laneBits) || failed(warpBits))
      return op.emitError() << "cannot reduce a layout whose lanes or warps "
                               "mix the reduced axis with other dimensions";

    // 1. Within the thread: one partial result per distinct coordinate
    //    outside the axis.
    //    A register that repeats another's element (a zero register basis:
    //    a tile smaller than its layout's span) is left out, or a sum would
    //    count the element once a copy.
    SmallVector<Value> regs = unpackRegisters(rewriter, loc, adaptor.getSrc());
    SmallVector<LinearLayout::Coord> keys;
    SmallVector<int64_t> firstRegister;
    SmallVector<Value> partials;
    std::set<LinearLayout::Coord> seen;
    for (auto [r, value] : llvm::enumerate(regs)) {
      LinearLayout::Coord offset = registerOffset(layout, r);
      if (!seen.insert(offset).second)
        continue;
      LinearLayout::Coord key = dropAxis(offset, axis);
      auto it = llvm::find(keys, key);
      if (it == keys.end()) {
        keys.push_back(key);
        firstRegister.push_back(r);
        partials.push_back(value);
      } else {
        Value &partial = partials[it - keys.begin()];
        partial = combine(rewriter, loc, kind, partial, value);
      }
    }

    // A CTA-wide any / every: one barrier that reduces a predicate.
    if (isCtaWideBooleanReduce(op)) {
      Type i32 = rewriter.getI32Type();
      Type element = partials.front().getType();
      // 0 or 1 in any integer width.
      auto resize = [&](Value value, Type type) -> Value {
        unsigned from = value.getType().getIntOrFloatBitWidth();
        unsigned to = type.getIntOrFloatBitWidth();
        if (from < to)
          return LLVM::ZExtOp::create(rewriter, loc, type, value);
        if (from > to)
          return LLVM::TruncOp::create(rewriter, loc, type, value);
        return value;
      };
      Value predicate = resize(partials.front(), i32);
      auto reduction = kind == tile::ReduceKind::max
                           ? NVVM::BarrierReduction::OR
                           : NVVM::BarrierReduction::AND;
      // In a warp-specialized kernel, among the consumer warps: barrier 0
      // with their count, through the intrinsic (nvvm.barrier refuses a
      // count with a reduction).
      if (Value threads = getProgramBarrierThreads(rewriter, loc)) {
        Type i1 = rewriter.getI1Type();
        Value flag =
            LLVM::ICmpOp::create(rewriter, loc, LLVM::ICmpPredicate::ne,
                                 predicate, createI32(rewriter, loc, 0));
        StringRef name = kind == tile::ReduceKind::max
                             ? "llvm.nvvm.barrier.cta.red.or.aligned.count"
                             : "llvm.nvvm.barrier.cta.red.and.aligned.count";
        Value result =
            LLVM::CallIntrinsicOp::create(
                rewriter, loc, i1, rewriter.getStringAttr(name),
                ValueRange{createI32(rewriter, loc, 0), threads, flag})
                .getResult(0);
        rewriter.replaceOp(op, resize(result, element));
        return success();
      }
      Value result =
          NVVM::BarrierOp::create(
              rewriter, loc, TypeRange{i32}, Value(), Value(),
              NVVM::BarrierReductionAttr::get(getContext(), reduction),
              predicate)
              .getRes();
      rewriter.replaceOp(op, resize(result, element));
      return success();
    }

    // 2. Across the lanes along the axis.
    for (unsigned bit : *laneBits)
      for (Value &partial : partials)
        partial =
            combine(rewriter, loc, kind, partial,
                    shuffleXor(rewriter, loc, partial, int64_t(1) << bit));

    // 3. Across the warps along the axis, through shared memory: each warp
    //    writes its partial for every result element, then every thread
    //    combines all warps' partials of the elements it holds.
    if (!warpBits->empty()) {
      HwIndex hw = getHwIndex(rewriter, loc, getTypeConverter());
      auto coords = emitCoordinates(rewriter, loc, layout, hw);
      SmallVector<int64_t> outShape(srcType.getShape());
      outShape.erase(outShape.begin() + axis);
      int64_t numWarpSlots = int64_t(1) << warpBits->size();
      Value warpSlot = createI32(rewriter, loc, 0);
      for (auto [j, bit] : llvm::enumerate(*warpBits)) {
        Value set = LLVM::AndOp::create(
            rewriter, loc,
            LLVM::LShrOp::create(rewriter, loc, hw.warp,
                                 createI32(rewriter, loc, bit)),
            createI32(rewriter, loc, 1));
        warpSlot = LLVM::OrOp::create(
            rewriter, loc, warpSlot,
            LLVM::ShlOp::create(rewriter, loc, set,
                                createI32(rewriter, loc, j)));
      }
      Type element = partials.front().getType();
      Type stored = element.isInteger(1) ? rewriter.getI8Type() : element;
      auto sharedPtr = LLVM::LLVMPointerType::get(getContext(), 3);
      FailureOr<Value> placed = getSharedBase(rewriter, loc, scratch, op);
      if (failed(placed))
        return failure();
      Value base = *placed;
      auto slotAddress = [&](int64_t group, Value slot) {
        Value flat = createI32(rewriter, loc, 0);
        SmallVector<Value> outCoord =
            llvm::to_vector(coords[firstRegister[group]]);
        outCoord.erase(outCoord.begin() + axis);
        for (auto [c, size] : llvm::zip(outCoord, outShape))
          flat = LLVM::AddOp::create(
              rewriter, loc,
              LLVM::MulOp::create(rewriter, loc, flat,
                                  createI32(rewriter, loc, size)),
              c);
        Value index = LLVM::AddOp::create(
            rewriter, loc,
            LLVM::MulOp::create(rewriter, loc, flat,
                                createI32(rewriter, loc, numWarpSlots)),
            slot);
        return LLVM::GEPOp::create(rewriter, loc, sharedPtr, stored, base,
                                   ValueRange{index});
      };
      createBarrier(rewriter, loc);
      for (auto [group, partial] : llvm::enumerate(partials)) {
        Value value = element.isInteger(1)
                          ? LLVM::ZExtOp::create(rewriter, loc, stored, partial)
                          : partial;
        LLVM::StoreOp::create(rewriter, loc, value,
                              slotAddress(group, warpSlot));
      }
      createBarrier(rewriter, loc);
      for (auto [group, partial] : llvm::enumerate(partials)) {
        Value total;
        for (int64_t slot = 0; slot < numWarpSlots; ++slot) {
          Value value = LLVM::LoadOp::create(
              rewriter, loc, stored,
              slotAddress(group, createI32(rewriter, loc, slot)));
          if (element.isInteger(1))
            value = LLVM::TruncOp::create(rewriter, loc, element, value);
          total = total ? combine(rewriter, loc, kind, total, value) : value;
        }
        partial = total;
      }
    }

    // 4. The result's registers, read off its layout.
    if (srcType.getRank() == 1) {
      rewriter.replaceOp(op, partials.front());
      return success();
    }
    auto dstType = cast<RankedTensorType>(op.getType());
    LinearLayout dst = getLinearLayout(dstType);
    for (HwDim dim : {HwDim::Lane, HwDim::Warp})
      for (auto [s, d] : llvm::zip(layout.getBases(dim), dst.getBases(dim)))
        if (dropAxis(s, axis) != d)
          return op.emitError() << "the result layout of a reduction must be "
                                   "the slice of its source's layout";
    SmallVector<Value> results;
    for (int64_t r = 0, e = dst.getSize(HwDim::Register); r < e; ++r) {
      auto it = llvm::find(keys, registerOffset(dst, r));
      if (it == keys.end())
        return op.emitError() << "the result layout of a reduction must be "
                                 "the slice of its source's layout";
      results.push_back(partials[it - keys.begin()]);
    }
    rewriter.replaceOp(
        op, packRegisters(rewriter, loc,
                          getTypeConverter()->convertType(dstType), results));
    return success();
  }

  SharedScratch scratch;
};

} // namespace

void tilegpu::populateReduceOpToLLVMPatterns(
    TileGPUToLLVMTypeConverter &converter, RewritePatternSet &patterns,
    const SharedScratch &scratch) {
  patterns.add<ReduceOpConversion>(converter, scratch);
}
