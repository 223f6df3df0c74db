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

/// The inline-PTX register class (constraint letter) of a 32- or 64-bit
/// scalar of type `type`.
StringRef getPtxRegisterClass(Type type) {
  if (type.isF32())
    return "f";
  if (type.isF64())
    return "d";
  return type.getIntOrFloatBitWidth() == 32 ? "r" : "l";
}

/// The PTX `op.type` of an atomic `kind` on `element`, and the register
/// class of its operands. f32 max and min are made of integer ones
/// (emitAtomic), exchange moves f32 bits as b32.
std::pair<std::string, StringRef> getPtxAtomic(tile::AtomicKind kind,
                                               Type element) {
  unsigned bits = element.getIntOrFloatBitWidth();
  std::string size = std::to_string(bits);
  StringRef reg = bits == 32 ? "r" : "l";
  switch (kind) {
  case tile::AtomicKind::add:
    if (element.isF32())
      return {"add.f32", "f"};
    if (element.isF64())
      return {"add.f64", "d"};
    return {"add.u" + size, reg};
  case tile::AtomicKind::max:
    return {"max.s" + size, reg};
  case tile::AtomicKind::min:
    return {"min.s" + size, reg};
  case tile::AtomicKind::bitwise_and:
    return {"and.b" + size, reg};
  case tile::AtomicKind::bitwise_or:
    return {"or.b" + size, reg};
  case tile::AtomicKind::bitwise_xor:
    return {"xor.b" + size, reg};
  case tile::AtomicKind::exchange:
    return {"exch.b" + size, reg};
  }
  llvm_unreachable("an atomic kind");
}

/// `body` under `p`, set from operand `$predOperand` (an i32, non-zero for
/// true), in a scope of its own.
std::string predicated(unsigned predOperand, const std::string &body) {
  return "{\n.reg .pred p;\nsetp.ne.b32 p, $" + std::to_string(predOperand) +
         ", 0;\n" + body + "\n}";
}

/// One `red` adding `values`, consecutive f32 elements from `ptr` (global),
/// where `pred` (i1) holds (relaxed, device scope: the defaults): two or
/// four aligned to the whole vector, `.v2` and `.v4` (sm_90, PTX 8.1), take
/// one memory request for them.
void emitVectorAdd(OpBuilder &b, Location loc, Value ptr,
                   ArrayRef<Value> values, Value pred) {
  std::string operands, constraints = "r,l";
  for (size_t i = 0; i < values.size(); ++i) {
    operands += (i ? ", $" : "$") + std::to_string(i + 2);
    constraints += ",f";
  }
  SmallVector<Value> inputs{
      LLVM::ZExtOp::create(b, loc, b.getI32Type(), pred).getResult(), ptr};
  llvm::append_range(inputs, values);
  emitInlinePtx(b, loc, Type(), inputs,
                predicated(0, "@p red.global.add.v" +
                                  std::to_string(values.size()) +
                                  ".f32 [$1], {" + operands + "};"),
                constraints);
}

/// How an atomic orders the other memory accesses: `sem` among the threads
/// of `scope`.
struct Ordering {
  tile::MemSemantic sem = tile::MemSemantic::relaxed;
  tile::MemScope scope = tile::MemScope::gpu;

  bool acquires() const {
    return sem == tile::MemSemantic::acquire ||
           sem == tile::MemSemantic::acq_rel;
  }
  bool releases() const {
    return sem == tile::MemSemantic::release ||
           sem == tile::MemSemantic::acq_rel;
  }
  /// PTX's qualifiers: none for relaxed at device scope, its defaults.
  std::string qualifiers() const {
    if (sem == tile::MemSemantic::relaxed && scope == tile::MemScope::gpu)
      return "";
    return ("." + tile::stringifyMemSemantic(sem) + "." +
            tile::stringifyMemScope(scope))
        .str();
  }
};

/// One atomic `kind` of `value` at `ptr` (global) where `pred` (i1) holds,
/// ordered by `ordering`: a `red` when nobody reads the old element
/// (`wantOld` false; exchange has no `red`, and `red` never acquires),
/// else an `atom` giving it (zero where `pred` is false).
/// f32 max and min compare bit patterns: a non-negative float orders as
/// its bits do as signed integers, a negative one as the reverse of its
/// bits as unsigned ones.
Value emitAtomic(OpBuilder &b, Location loc, tile::AtomicKind kind, Value ptr,
                 Value value, Value pred, bool wantOld, Ordering ordering) {
  Type element = value.getType();
  bool floatExtremum = element.isF32() && (kind == tile::AtomicKind::max ||
                                           kind == tile::AtomicKind::min);
  bool asBits =
      floatExtremum || (element.isF32() && kind == tile::AtomicKind::exchange);
  Type operandType = asBits ? b.getI32Type() : element;
  if (asBits)
    value = LLVM::BitcastOp::create(b, loc, operandType, value);
  Value predicate =
      LLVM::ZExtOp::create(b, loc, b.getI32Type(), pred).getResult();
  bool red =
      !wantOld && kind != tile::AtomicKind::exchange && !ordering.acquires();
  std::string result = red ? "" : "$0, ";
  unsigned first = red ? 0 : 1;
  std::string addr = "[$" + std::to_string(first + 1) + "]";
  std::string val = "$" + std::to_string(first + 2);
  std::string instruction =
      (red ? "red" : "atom") + ordering.qualifiers() + ".global.";
  std::string body;
  StringRef reg;
  if (floatExtremum) {
    bool max = kind == tile::AtomicKind::max;
    reg = "r";
    body = ".reg .pred up, down;\nsetp.ge.and.s32 up, " + val + ", 0, p;\n" +
           "setp.lt.and.s32 down, " + val + ", 0, p;\n";
    if (!red)
      body += "mov.b32 $0, 0;\n";
    body += "@up " + instruction + (max ? "max.s32 " : "min.s32 ") + result +
            addr + ", " + val + ";\n@down " + instruction +
            (max ? "min.u32 " : "max.u32 ") + result + addr + ", " + val + ";";
  } else {
    auto [op, regClass] = getPtxAtomic(kind, element);
    reg = regClass;
    if (!red)
      body = "mov.b" + std::to_string(element.getIntOrFloatBitWidth()) +
             " $0, 0;\n";
    body += "@p " + instruction + op + " " + result + addr + ", " + val + ";";
  }
  std::string constraints = ("r,l," + reg).str();
  if (!red)
    constraints = ("=" + reg + "," + constraints).str();
  Value old = emitInlinePtx(b, loc, red ? Type() : operandType,
                            ValueRange{predicate, ptr, value},
                            predicated(first, body), constraints)
                  .getRes();
  if (red)
    return {};
  return asBits ? LLVM::BitcastOp::create(b, loc, element, old).getResult()
                : old;
}

/// One compare-and-swap at `ptr` (global) where `pred` (i1) holds, ordered
/// by `ordering`: the old element (zero where `pred` is false). f32
/// compares bit patterns, as `atom.cas.b32` does.
Value emitCompareAndSwap(OpBuilder &b, Location loc, Value ptr, Value cmp,
                         Value value, Value pred, Ordering ordering) {
  Type element = value.getType();
  unsigned bits = element.getIntOrFloatBitWidth();
  Type operandType = b.getIntegerType(bits);
  if (element.isF32()) {
    cmp = LLVM::BitcastOp::create(b, loc, operandType, cmp);
    value = LLVM::BitcastOp::create(b, loc, operandType, value);
  }
  std::string size = std::to_string(bits);
  std::string reg = bits == 32 ? "r" : "l";
  Value predicate =
      LLVM::ZExtOp::create(b, loc, b.getI32Type(), pred).getResult();
  std::string body = "mov.b" + size + " $0, 0;\n@p atom" +
                     ordering.qualifiers() + ".global.cas.b" + size +
                     " $0, [$2], $3, $4;";
  Value old =
      emitInlinePtx(b, loc, operandType, ValueRange{predicate, ptr, cmp, value},
                    predicated(1, body), "=" + reg + ",r,l," + reg + "," + reg)
          .getRes();
  return element.isF32() ? LLVM::BitcastOp::create(b, loc, element, old) : old;
}

/// A scalar atomic, which every thread runs: thread 0 makes it (`emit`,
/// given its predicate, gives the old element or null) and gives the old
/// element to the others through `op`'s shared scratch slot. A CTA barrier
/// before a releasing atomic and after an acquiring one orders every
/// thread's accesses with it, not only thread 0's; the one before also
/// finishes the slot's earlier readers, and the one after the slot's store
/// serves as the acquiring one. Returns the old element where `wantOld`,
/// else null; failure without a scratch slot.
FailureOr<Value> lowerScalarAtomic(ConversionPatternRewriter &rewriter,
                                   Location loc, Operation *op,
                                   const SharedScratch &scratch, HwIndex hw,
                                   Value mask, Ordering ordering, bool wantOld,
                                   function_ref<Value(Value)> emit) {
  Value zero = createI32(rewriter, loc, 0);
  Value first = LLVM::AndOp::create(
      rewriter, loc,
      LLVM::ICmpOp::create(rewriter, loc, LLVM::ICmpPredicate::eq, hw.lane,
                           zero),
      LLVM::ICmpOp::create(rewriter, loc, LLVM::ICmpPredicate::eq, hw.warp,
                           zero));
  Value pred = mask ? LLVM::AndOp::create(rewriter, loc, mask, first) : first;
  if (ordering.releases())
    createBarrier(rewriter, loc); // every thread's earlier accesses are done
  Value old = emit(pred);
  if (!wantOld) {
    if (ordering.acquires())
      createBarrier(rewriter, loc);
    return Value();
  }
  FailureOr<Value> slot = getSharedBase(rewriter, loc, scratch, op);
  if (failed(slot))
    return failure();
  if (!ordering.releases())
    createBarrier(rewriter, loc); // earlier readers of the slot are done
  Type element = old.getType();
  unsigned bits = element.getIntOrFloatBitWidth();
  StringRef reg = getPtxRegisterClass(element);
  Value isFirst =
      LLVM::ZExtOp::create(rewriter, loc, rewriter.getI32Type(), first);
  emitInlinePtx(
      rewriter, loc, Type(), ValueRange{isFirst, *slot, old},
      predicated(0, "@p st.shared.b" + std::to_string(bits) + " [$1], $2;"),
      ("r,r," + reg).str());
  createBarrier(rewriter, loc);
  return LLVM::LoadOp::create(rewriter, loc, element, *slot).getResult();
}

/// Replaces an atomic by its old elements (`old`, one a register of its
/// result, in order), or erases it where nobody reads them (`old` empty).
void replaceAtomic(ConversionPatternRewriter &rewriter, Operation *op,
                   const TypeConverter &converter, ArrayRef<Value> old) {
  if (old.empty())
    return rewriter.eraseOp(op);
  Type type = op->getResult(0).getType();
  if (!isa<RankedTensorType>(type))
    return rewriter.replaceOp(op, old.front());
  rewriter.replaceOp(op, packRegisters(rewriter, op->getLoc(),
                                       converter.convertType(type), old));
}

/// PTX's `.sem.scope` of an atomic load or store: always written out (a
/// load or store without them is not atomic).
std::string getAccessQualifiers(Ordering ordering) {
  return ("." + tile::stringifyMemSemantic(ordering.sem) + "." +
          tile::stringifyMemScope(ordering.scope))
      .str();
}

/// `element`'s bits as an integer of its width, and its register class.
std::pair<Type, StringRef> getAccessBits(OpBuilder &b, Type element) {
  unsigned bits = element.getIntOrFloatBitWidth();
  return {b.getIntegerType(bits), bits == 16 ? "h" : bits == 32 ? "r" : "l"};
}

/// One atomic load of `element` at `ptr` (global) where `pred` holds
/// (zero elsewhere).
Value emitAtomicLoad(OpBuilder &b, Location loc, Type element, Value ptr,
                     Value pred, Ordering ordering) {
  auto [bitsType, reg] = getAccessBits(b, element);
  std::string width = std::to_string(element.getIntOrFloatBitWidth());
  Value predicate = LLVM::ZExtOp::create(b, loc, b.getI32Type(), pred);
  Value bits =
      emitInlinePtx(b, loc, bitsType, ValueRange{predicate, ptr},
                    predicated(1, "mov.b" + width + " $0, 0;\n@p ld" +
                                      getAccessQualifiers(ordering) +
                                      ".global.b" + width + " $0, [$2];"),
                    ("=" + reg + ",r,l").str())
          .getRes();
  return LLVM::BitcastOp::create(b, loc, element, bits);
}

/// One atomic store of `value` at `ptr` (global) where `pred` holds.
void emitAtomicStore(OpBuilder &b, Location loc, Value ptr, Value value,
                     Value pred, Ordering ordering) {
  auto [bitsType, reg] = getAccessBits(b, value.getType());
  std::string width = std::to_string(value.getType().getIntOrFloatBitWidth());
  Value predicate = LLVM::ZExtOp::create(b, loc, b.getI32Type(), pred);
  Value bits = LLVM::BitcastOp::create(b, loc, bitsType, value);
  emitInlinePtx(b, loc, Type(), ValueRange{predicate, ptr, bits},
                predicated(0, "@p st" + getAccessQualifiers(ordering) +
                                  ".global.b" + width + " [$1], $2;"),
                ("r,l," + reg).str());
}

/// Every thread loads each element it holds; a scalar is loaded by thread
/// 0 and shared (lowerScalarAtomic: an acquire orders every thread's later
/// accesses).
struct AtomicLoadOpConversion
    : public ConvertOpToLLVMPattern<tile::AtomicLoadOp> {
  AtomicLoadOpConversion(const LLVMTypeConverter &converter,
                         const SharedScratch &scratch)
      : ConvertOpToLLVMPattern(converter), scratch(scratch) {}

  LogicalResult
  matchAndRewrite(tile::AtomicLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Ordering ordering{op.getSem(), op.getScope()};
    Type element = getLoweredElementType(*getTypeConverter(), op.getType());
    HwIndex hw = getHwIndex(rewriter, loc, getTypeConverter());
    if (!isa<RankedTensorType>(op.getType())) {
      FailureOr<Value> value = lowerScalarAtomic(
          rewriter, loc, op, scratch, hw, adaptor.getMask(), ordering,
          /*wantOld=*/true, [&](Value pred) {
            return emitAtomicLoad(rewriter, loc, element, adaptor.getPtr(),
                                  pred, ordering);
          });
      if (failed(value))
        return failure();
      rewriter.replaceOp(op, *value);
      return success();
    }
    SmallVector<Value> ptrs = unpackRegisters(rewriter, loc, adaptor.getPtr());
    SmallVector<Value> masks;
    if (adaptor.getMask())
      masks = unpackRegisters(rewriter, loc, adaptor.getMask());
    Value always = LLVM::ConstantOp::create(rewriter, loc, rewriter.getI1Type(),
                                            rewriter.getBoolAttr(true));
    SmallVector<Value> values;
    for (auto [i, ptr] : llvm::enumerate(ptrs))
      values.push_back(emitAtomicLoad(rewriter, loc, element, ptr,
                                      masks.empty() ? always : masks[i],
                                      ordering));
    replaceAtomic(rewriter, op, *getTypeConverter(), values);
    return success();
  }

private:
  SharedScratch scratch;
};

/// Each element is stored once, by its canonical holder; a scalar by thread
/// 0 (lowerScalarAtomic: a release orders every thread's earlier accesses).
struct AtomicStoreOpConversion
    : public ConvertOpToLLVMPattern<tile::AtomicStoreOp> {
  AtomicStoreOpConversion(const LLVMTypeConverter &converter,
                          const SharedScratch &scratch)
      : ConvertOpToLLVMPattern(converter), scratch(scratch) {}

  LogicalResult
  matchAndRewrite(tile::AtomicStoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Ordering ordering{op.getSem(), op.getScope()};
    HwIndex hw = getHwIndex(rewriter, loc, getTypeConverter());
    auto tensor = dyn_cast<RankedTensorType>(op.getValue().getType());
    if (!tensor) {
      if (failed(lowerScalarAtomic(
              rewriter, loc, op, scratch, hw, adaptor.getMask(), ordering,
              /*wantOld=*/false, [&](Value pred) {
                emitAtomicStore(rewriter, loc, adaptor.getPtr(),
                                adaptor.getValue(), pred, ordering);
                return Value();
              })))
        return failure();
      rewriter.eraseOp(op);
      return success();
    }
    auto [ptrs, values, masks] = unpackWritten(
        rewriter, loc, adaptor.getPtr(), adaptor.getValue(), adaptor.getMask());
    forEachElementOnce(rewriter, loc, getLinearLayout(tensor), hw, masks,
                       values.size(), 1, [&](size_t i, Value pred) {
                         emitAtomicStore(rewriter, loc, ptrs[i], values[i],
                                         pred, ordering);
                       });
    rewriter.eraseOp(op);
    return success();
  }

private:
  SharedScratch scratch;
};

/// Each element is updated once: by its canonical holder, from the first
/// register that holds it (forEachElementOnce, as storeTile writes). The old
/// values reach only that register, so a result that is used needs a layout
/// without copies.
struct AtomicRMWOpConversion
    : public ConvertOpToLLVMPattern<tile::AtomicRMWOp> {
  AtomicRMWOpConversion(const LLVMTypeConverter &converter,
                        const SharedScratch &scratch)
      : ConvertOpToLLVMPattern(converter), scratch(scratch) {}

  LogicalResult
  matchAndRewrite(tile::AtomicRMWOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    tile::AtomicKind kind = op.getKind();
    bool wantOld = !op.getResult().use_empty();
    HwIndex hw = getHwIndex(rewriter, loc, getTypeConverter());
    auto tensor = dyn_cast<RankedTensorType>(op.getType());
    Ordering ordering{op.getSem(), op.getScope()};
    if (!tensor) {
      FailureOr<Value> old = lowerScalarAtomic(
          rewriter, loc, op, scratch, hw, adaptor.getMask(), ordering, wantOld,
          [&](Value pred) {
            return emitAtomic(rewriter, loc, kind, adaptor.getPtr(),
                              adaptor.getValue(), pred, wantOld, ordering);
          });
      if (failed(old))
        return failure();
      replaceAtomic(rewriter, op, *getTypeConverter(),
                    *old ? ArrayRef(*old) : ArrayRef<Value>());
      return success();
    }
    LinearLayout layout = getLinearLayout(tensor);
    auto [ptrs, values, masks] = unpackWritten(
        rewriter, loc, adaptor.getPtr(), adaptor.getValue(), adaptor.getMask());
    if (wantOld && !layout.isInjective())
      return failure(); // checkAtomicLowering reports it
    // f32 added where nobody reads the old values back goes in vectors
    // where tilegpu-coalesce proved the addresses contiguous and aligned.
    // Without copies every register is its element's only holder, so old
    // values come back one per register, in order.
    if (!wantOld && ordering.qualifiers().empty()) {
      updateTile(rewriter, loc, kind, layout, hw, values, ptrs, masks,
                 getVectorWidth(op, layout));
      rewriter.eraseOp(op);
      return success();
    }
    SmallVector<Value> old;
    forEachElementOnce(rewriter, loc, layout, hw, masks, values.size(), 1,
                       [&](size_t i, Value pred) {
                         if (Value before =
                                 emitAtomic(rewriter, loc, kind, ptrs[i],
                                            values[i], pred, wantOld, ordering))
                           old.push_back(before);
                       });
    replaceAtomic(rewriter, op, *getTypeConverter(),
                  wantOld ? ArrayRef(old) : ArrayRef<Value>());
    return success();
  }

private:
  SharedScratch scratch;
};

/// As tile.atomic_rmw's: each element swapped once, by its canonical
/// holder; a scalar one by thread 0.
struct AtomicCASOpConversion
    : public ConvertOpToLLVMPattern<tile::AtomicCASOp> {
  AtomicCASOpConversion(const LLVMTypeConverter &converter,
                        const SharedScratch &scratch)
      : ConvertOpToLLVMPattern(converter), scratch(scratch) {}

  LogicalResult
  matchAndRewrite(tile::AtomicCASOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    bool wantOld = !op.getResult().use_empty();
    HwIndex hw = getHwIndex(rewriter, loc, getTypeConverter());
    Ordering ordering{op.getSem(), op.getScope()};
    auto tensor = dyn_cast<RankedTensorType>(op.getType());
    if (!tensor) {
      FailureOr<Value> old = lowerScalarAtomic(
          rewriter, loc, op, scratch, hw, Value(), ordering, wantOld,
          [&](Value pred) {
            return emitCompareAndSwap(rewriter, loc, adaptor.getPtr(),
                                      adaptor.getCmp(), adaptor.getValue(),
                                      pred, ordering);
          });
      if (failed(old))
        return failure();
      replaceAtomic(rewriter, op, *getTypeConverter(),
                    *old ? ArrayRef(*old) : ArrayRef<Value>());
      return success();
    }
    LinearLayout layout = getLinearLayout(tensor);
    if (wantOld && !layout.isInjective())
      return failure(); // checkAtomicLowering reports it
    SmallVector<Value> ptrs = unpackRegisters(rewriter, loc, adaptor.getPtr());
    SmallVector<Value> cmps = unpackRegisters(rewriter, loc, adaptor.getCmp());
    SmallVector<Value> values =
        unpackRegisters(rewriter, loc, adaptor.getValue());
    SmallVector<Value> old;
    forEachElementOnce(rewriter, loc, layout, hw, {}, values.size(), 1,
                       [&](size_t i, Value pred) {
                         old.push_back(
                             emitCompareAndSwap(rewriter, loc, ptrs[i], cmps[i],
                                                values[i], pred, ordering));
                       });
    replaceAtomic(rewriter, op, *getTypeConverter(),
                  wantOld ? ArrayRef(old) : ArrayRef<Value>());
    return success();
  }

private:
  SharedScratch scratch;
};

} // namespace

void tilegpu::updateTile(OpBuilder &b, Location loc, tile::AtomicKind kind,
                         const LinearLayout &layout, HwIndex hw,
                         ArrayRef<Value> values, ArrayRef<Value> addresses,
                         ArrayRef<Value> masks, int64_t width) {
  // f32 added where nobody reads the old values back goes in vectors where
  // tilegpu-coalesce proved the addresses contiguous and aligned.
  if (kind != tile::AtomicKind::add || !values.front().getType().isF32())
    width = 1;
  forEachElementOnce(b, loc, layout, hw, masks, values.size(), width,
                     [&](size_t i, Value pred) {
                       if (width > 1)
                         emitVectorAdd(b, loc, addresses[i],
                                       values.slice(i, width), pred);
                       else
                         emitAtomic(b, loc, kind, addresses[i], values[i], pred,
                                    /*wantOld=*/false, Ordering());
                     });
}

LogicalResult tilegpu::checkAtomicLowering(Operation *op) {
  if (!isa<tile::AtomicRMWOp, tile::AtomicCASOp>(op) ||
      op->getResult(0).use_empty())
    return success();
  auto tensor = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!tensor)
    return success(); // thread 0's old element, shared
  LinearLayout layout = getLinearLayout(tensor);
  if (!layout.isInjective())
    return op->emitError()
           << op->getName()
           << " whose result is used, on a layout that holds elements more "
              "than once, is "
           << kUnsupportedOnGPU;
  return success();
}

void tilegpu::populateLoadStoreOpToLLVMPatterns(
    TileGPUToLLVMTypeConverter &converter, RewritePatternSet &patterns,
    const SharedScratch &scratch) {
  patterns.add<LoadOpConversion, StoreOpConversion>(converter);
  patterns.add<AtomicRMWOpConversion, AtomicCASOpConversion,
               AtomicLoadOpConversion, AtomicStoreOpConversion>(converter,
                                                                scratch);
}
