//===- LoadStoreOpToLLVM.cpp - Masked global loads and stores -------------===//
//
// Each register is one access. A masked access is an LLVM masked load or
// store of one element, which the NVPTX backend turns into a predicated
// branch around the access, so a false mask touches no memory. A store is
// issued by one holder of each element only (layouts may replicate data).
//
//===----------------------------------------------------------------------===//

#include "Utility.h"

#include "tile/Dialect/Tile/IR/Tile.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/DialectConversion.h"

#include <set>

using namespace mlir;
using namespace mlir::tilegpu;

static int64_t getAlignment(Type element) {
  return std::max<int64_t>(1, getSharedElementBytes(element));
}

Value tilegpu::loadElement(OpBuilder &b, Location loc, Type element, Value ptr,
                           Value mask, Value other) {
  if (!mask)
    return LLVM::LoadOp::create(b, loc, element, ptr, getAlignment(element));
  auto vectorType = VectorType::get({1}, element);
  auto maskType = VectorType::get({1}, b.getI1Type());
  Value zero = createI32(b, loc, 0);
  Value maskVector = LLVM::InsertElementOp::create(
      b, loc, LLVM::UndefOp::create(b, loc, maskType), mask, zero);
  Value passThru = LLVM::ZeroOp::create(b, loc, vectorType);
  if (other)
    passThru = LLVM::InsertElementOp::create(b, loc, passThru, other, zero);
  Value loaded = LLVM::MaskedLoadOp::create(
      b, loc, vectorType, ptr, maskVector, passThru,
      b.getI32IntegerAttr(getAlignment(element)), UnitAttr());
  return LLVM::ExtractElementOp::create(b, loc, loaded, zero);
}

void tilegpu::storeElement(OpBuilder &b, Location loc, Value value, Value ptr,
                           Value mask) {
  Type element = value.getType();
  auto vectorType = VectorType::get({1}, element);
  auto maskType = VectorType::get({1}, b.getI1Type());
  Value zero = createI32(b, loc, 0);
  Value vector = LLVM::InsertElementOp::create(
      b, loc, LLVM::UndefOp::create(b, loc, vectorType), value, zero);
  Value maskVector = LLVM::InsertElementOp::create(
      b, loc, LLVM::UndefOp::create(b, loc, maskType), mask, zero);
  LLVM::MaskedStoreOp::create(b, loc, vector, ptr, maskVector,
                              getAlignment(element));
}

/// Stores `values` (consecutive elements) at `ptr` as one access where
/// `mask` (uniform over them) is true.
static void storeVector(OpBuilder &b, Location loc, ArrayRef<Value> values,
                        Value ptr, Value mask) {
  int64_t width = values.size();
  Type element = values.front().getType();
  auto vectorType = VectorType::get({width}, element);
  auto maskType = VectorType::get({width}, b.getI1Type());
  Value vector = LLVM::UndefOp::create(b, loc, vectorType);
  Value maskVector = LLVM::UndefOp::create(b, loc, maskType);
  for (int64_t i = 0; i < width; ++i) {
    Value index = createI32(b, loc, i);
    vector = LLVM::InsertElementOp::create(b, loc, vector, values[i], index);
    maskVector = LLVM::InsertElementOp::create(b, loc, maskVector, mask, index);
  }
  LLVM::MaskedStoreOp::create(b, loc, vector, ptr, maskVector,
                              width * getAlignment(element));
}

void tilegpu::forEachElementOnce(OpBuilder &b, Location loc,
                                 const LinearLayout &layout, HwIndex hw,
                                 ArrayRef<Value> masks, size_t count,
                                 int64_t width,
                                 function_ref<void(size_t, Value)> emit) {
  Value canonical = isCanonicalHolder(b, loc, layout, hw);
  std::set<LinearLayout::Coord> seen;
  for (size_t i = 0; i < count; i += width) {
    if (!seen.insert(registerOffset(layout, i)).second)
      continue; // an earlier register holds the same element
    emit(i, masks.empty() || !masks[i]
                ? canonical
                : LLVM::AndOp::create(b, loc, masks[i], canonical));
  }
}

void tilegpu::storeTile(OpBuilder &b, Location loc, const LinearLayout &layout,
                        HwIndex hw, ArrayRef<Value> values,
                        ArrayRef<Value> addresses, ArrayRef<Value> masks,
                        int64_t width) {
  forEachElementOnce(b, loc, layout, hw, masks, values.size(), width,
                     [&](size_t i, Value mask) {
                       if (width == 1)
                         storeElement(b, loc, values[i], addresses[i], mask);
                       else
                         storeVector(b, loc, values.slice(i, width),
                                     addresses[i], mask);
                     });
}

int64_t tilegpu::getVectorWidth(Operation *op, const LinearLayout &layout) {
  auto attr =
      op->getAttrOfType<IntegerAttr>(TileGPUDialect::getVectorWidthAttrName());
  if (!attr)
    return 1;
  int64_t width = attr.getInt();
  auto bases = layout.getBases(HwDim::Register);
  if (width <= 1 || (width & (width - 1)) || bases.empty())
    return 1;
  // The dimension the first register steps along, by one element.
  const int64_t *unit = llvm::find(bases[0], 1);
  if (unit == bases[0].end())
    return 1;
  unsigned dim = unit - bases[0].begin();
  int64_t run = layout.getRegisterRun(dim);
  // A row's width is a proof about its elements, whatever the layout: the
  // layout's aligned run of it is a vector too.
  if (layout.getRank() == 1)
    return std::min(width, run);
  return width <= run ? width : 1;
}

/// A 16-byte zero array in global memory: where a vector load's mask is
/// false it reads here instead, a valid address, so no branch is needed.
static Value getMaskedOffAddress(OpBuilder &b, Location loc, Operation *user) {
  constexpr llvm::StringLiteral symbol = "tile_masked_off_load";
  auto module = user->getParentOfType<ModuleOp>();
  if (!module.lookupSymbol(symbol)) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    auto type = LLVM::LLVMArrayType::get(b.getI8Type(), 16);
    LLVM::GlobalOp::create(
        b, loc, type, /*isConstant=*/true, LLVM::Linkage::Internal, symbol,
        b.getZeroAttr(RankedTensorType::get({16}, b.getI8Type())),
        /*alignment=*/16, /*addrSpace=*/1);
  }
  return LLVM::AddressOfOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 1), symbol);
}

SmallVector<Value> tilegpu::loadVector(OpBuilder &b, Location loc,
                                       Operation *user, Type element,
                                       int64_t width, Value ptr, Value mask,
                                       ArrayRef<Value> others) {
  auto vectorType = VectorType::get({width}, element);
  int64_t alignment = width * getAlignment(element);
  if (mask)
    ptr = LLVM::SelectOp::create(b, loc, mask, ptr,
                                 getMaskedOffAddress(b, loc, user));
  Value loaded = LLVM::LoadOp::create(b, loc, vectorType, ptr, alignment);
  SmallVector<Value> values;
  for (int64_t i = 0; i < width; ++i) {
    Value value =
        LLVM::ExtractElementOp::create(b, loc, loaded, createI32(b, loc, i));
    if (mask)
      value = LLVM::SelectOp::create(
          b, loc, mask, value,
          others.empty() ? LLVM::ZeroOp::create(b, loc, element).getResult()
                         : others[i]);
    values.push_back(value);
  }
  return values;
}

namespace {

struct LoadOpConversion : public ConvertOpToLLVMPattern<tile::LoadOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(tile::LoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type element = getLoweredElementType(*getTypeConverter(), op.getType());
    if (!isa<RankedTensorType>(op.getType())) {
      rewriter.replaceOp(op,
                         loadElement(rewriter, loc, element, adaptor.getPtr(),
                                     adaptor.getMask(), adaptor.getOther()));
      return success();
    }
    SmallVector<Value> ptrs = unpackRegisters(rewriter, loc, adaptor.getPtr());
    SmallVector<Value> masks, others;
    if (adaptor.getMask())
      masks = unpackRegisters(rewriter, loc, adaptor.getMask());
    if (adaptor.getOther())
      others = unpackRegisters(rewriter, loc, adaptor.getOther());
    int64_t width = getVectorWidth(
        op, getLinearLayout(cast<RankedTensorType>(op.getType())));
    SmallVector<Value> values;
    for (size_t i = 0; i < ptrs.size(); i += width) {
      Value mask = masks.empty() ? Value() : masks[i];
      if (width == 1) {
        values.push_back(loadElement(rewriter, loc, element, ptrs[i], mask,
                                     others.empty() ? Value() : others[i]));
        continue;
      }
      ArrayRef<Value> groupOthers =
          others.empty() ? ArrayRef<Value>() : ArrayRef(others).slice(i, width);
      llvm::append_range(values, loadVector(rewriter, loc, op, element, width,
                                            ptrs[i], mask, groupOthers));
    }
    rewriter.replaceOp(
        op,
        packRegisters(rewriter, loc,
                      getTypeConverter()->convertType(op.getType()), values));
    return success();
  }
};

/// The registers of a store's or an atomic's pointers, values and mask (no
/// masks without a mask).
struct WrittenRegisters {
  SmallVector<Value> ptrs, values, masks;
};

WrittenRegisters unpackWritten(OpBuilder &b, Location loc, Value ptr,
                               Value value, Value mask) {
  WrittenRegisters regs{
      unpackRegisters(b, loc, ptr), unpackRegisters(b, loc, value), {}};
  if (mask)
    regs.masks = unpackRegisters(b, loc, mask);
  return regs;
}

struct StoreOpConversion : public ConvertOpToLLVMPattern<tile::StoreOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(tile::StoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto tensor = dyn_cast<RankedTensorType>(op.getPtr().getType());
    if (!tensor) {
      Value mask = adaptor.getMask();
      if (!mask)
        LLVM::StoreOp::create(rewriter, loc, adaptor.getValue(),
                              adaptor.getPtr(),
                              getAlignment(adaptor.getValue().getType()));
      else
        storeElement(rewriter, loc, adaptor.getValue(), adaptor.getPtr(), mask);
      rewriter.eraseOp(op);
      return success();
    }
    LinearLayout layout = getLinearLayout(tensor);
    auto [ptrs, values, masks] = unpackWritten(
        rewriter, loc, adaptor.getPtr(), adaptor.getValue(), adaptor.getMask());
    storeTile(rewriter, loc, layout,
              getHwIndex(rewriter, loc, getTypeConverter()), values, ptrs,
              masks, getVectorWidth(op, layout));
    rewriter.eraseOp(op);
    return success();
  }
};

/// The PTX type and register class of an atomic add of `element`.
std::pair<StringRef, StringRef> getPtxAtomicType(Type element) {
  if (element.isF32())
    return {"f32", "f"};
  if (element.isF64())
    return {"f64", "d"};
  return element.getIntOrFloatBitWidth() == 32 ? std::pair{"u32", "r"}
                                               : std::pair{"u64", "l"};
}

/// `body` under `p`, set from operand `$predOperand` (an i32, non-zero for
/// true), in a scope of its own.
std::string predicated(unsigned predOperand, const std::string &body) {
  return "{\n.reg .pred p;\nsetp.ne.b32 p, $" + std::to_string(predOperand) +
         ", 0;\n" + body + "\n}";
}

/// One `red` adding `values`, consecutive elements from `ptr` (global), where
/// `pred` (i1) holds (relaxed, device scope: the defaults). One element of
/// any atomic type, or two or four f32 aligned to the whole vector: `.v2`
/// and `.v4` (sm_90, PTX 8.1) take one memory request for them.
void emitReduction(OpBuilder &b, Location loc, Value ptr,
                   ArrayRef<Value> values, Value pred) {
  auto [type, reg] = getPtxAtomicType(values.front().getType());
  assert((values.size() == 1 || type == "f32") &&
         "only f32 is added in vectors");
  std::string operands, constraints = "r,l";
  for (size_t i = 0; i < values.size(); ++i) {
    operands += (i ? ", $" : "$") + std::to_string(i + 2);
    constraints += ("," + reg).str();
  }
  std::string instruction = "@p red.global.add.";
  if (values.size() > 1) {
    instruction += "v" + std::to_string(values.size()) + ".";
    operands = "{" + operands + "}";
  }
  SmallVector<Value> inputs{
      LLVM::ZExtOp::create(b, loc, b.getI32Type(), pred).getResult(), ptr};
  llvm::append_range(inputs, values);
  emitInlinePtx(
      b, loc, Type(), inputs,
      predicated(0, instruction + type.str() + " [$1], " + operands + ";"),
      constraints);
}

/// One `atom` adding `value` at `ptr` (global) where `pred` (i1) holds;
/// gives the element as it was (zero where `pred` is false).
Value emitFetchAdd(OpBuilder &b, Location loc, Value ptr, Value value,
                   Value pred) {
  Type element = value.getType();
  auto [type, reg] = getPtxAtomicType(element);
  Value predicate =
      LLVM::ZExtOp::create(b, loc, b.getI32Type(), pred).getResult();
  return emitInlinePtx(
             b, loc, element, ValueRange{predicate, ptr, value},
             predicated(1, "mov.b" +
                               std::to_string(element.getIntOrFloatBitWidth()) +
                               " $0, 0;\n@p atom.global.add." + type.str() +
                               " $0, [$2], $3;"),
             ("=" + reg + ",r,l," + reg).str())
      .getRes();
}

/// Each element is added once: by its canonical holder, from the first
/// register that holds it (forEachElementOnce, as storeTile writes). The old
/// values reach only that register, so a result that is used needs a layout
/// without copies.
struct AtomicAddOpConversion
    : public ConvertOpToLLVMPattern<tile::AtomicAddOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(tile::AtomicAddOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    bool wantOld = !op.getResult().use_empty();
    HwIndex hw = getHwIndex(rewriter, loc, getTypeConverter());
    auto tensor = dyn_cast<RankedTensorType>(op.getType());
    if (!tensor) {
      // Every thread runs a scalar op: thread 0 adds.
      if (wantOld)
        return failure(); // checkAtomicAddLowering reports it
      Value zero = createI32(rewriter, loc, 0);
      Value first = LLVM::AndOp::create(
          rewriter, loc,
          LLVM::ICmpOp::create(rewriter, loc, LLVM::ICmpPredicate::eq, hw.lane,
                               zero),
          LLVM::ICmpOp::create(rewriter, loc, LLVM::ICmpPredicate::eq, hw.warp,
                               zero));
      Value pred =
          adaptor.getMask()
              ? LLVM::AndOp::create(rewriter, loc, adaptor.getMask(), first)
              : first;
      emitReduction(rewriter, loc, adaptor.getPtr(), adaptor.getValue(), pred);
      rewriter.eraseOp(op);
      return success();
    }
    LinearLayout layout = getLinearLayout(tensor);
    auto [ptrs, values, masks] = unpackWritten(
        rewriter, loc, adaptor.getPtr(), adaptor.getValue(), adaptor.getMask());
    if (wantOld && !layout.isInjective())
      return failure(); // checkAtomicAddLowering reports it
    // Added values nobody reads back go in vectors where tilegpu-coalesce
    // proved the addresses contiguous and aligned. Without copies every
    // register is its element's only holder, so old values come back one
    // per register, in order.
    int64_t width = wantOld ? 1 : getVectorWidth(op, layout);
    SmallVector<Value> old;
    forEachElementOnce(rewriter, loc, layout, hw, masks, values.size(), width,
                       [&](size_t i, Value pred) {
                         if (wantOld)
                           old.push_back(emitFetchAdd(rewriter, loc, ptrs[i],
                                                      values[i], pred));
                         else
                           emitReduction(rewriter, loc, ptrs[i],
                                         ArrayRef(values).slice(i, width),
                                         pred);
                       });
    if (!wantOld) {
      rewriter.eraseOp(op);
      return success();
    }
    rewriter.replaceOp(
        op, packRegisters(rewriter, loc,
                          getTypeConverter()->convertType(op.getType()), old));
    return success();
  }
};

} // namespace

LogicalResult tilegpu::checkAtomicAddLowering(tile::AtomicAddOp op) {
  if (op.getResult().use_empty())
    return success();
  auto tensor = dyn_cast<RankedTensorType>(op.getType());
  if (!tensor)
    return op.emitError() << "tile.atomic_add of a scalar whose result is "
                             "used is "
                          << kUnsupportedOnGPU;
  LinearLayout layout = getLinearLayout(tensor);
  if (!layout.isInjective())
    return op.emitError()
           << "tile.atomic_add whose result is used, on a layout that holds "
              "elements more than once, is "
           << kUnsupportedOnGPU;
  return success();
}

void tilegpu::populateLoadStoreOpToLLVMPatterns(
    TileGPUToLLVMTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<LoadOpConversion, StoreOpConversion, AtomicAddOpConversion>(
      converter);
}
