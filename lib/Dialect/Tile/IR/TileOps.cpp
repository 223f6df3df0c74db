//===- TileOps.cpp - Operations of the tile dialect -----------------------===//

#include "tile/Dialect/Tile/IR/ShapeRules.h"
#include "tile/Dialect/Tile/IR/Tile.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::tile;

#define GET_OP_CLASSES
#include "tile/Dialect/Tile/IR/TileOps.cpp.inc"

/// Emits the rule a shape broke, if it broke one.
template <typename OpT>
static LogicalResult check(OpT op, const rules::Violation &violation) {
  if (violation)
    return op.emitOpError() << *violation;
  return success();
}

/// A splat constant reshaped to `type`, or null when `attr` is not a splat.
static Attribute reshapeSplat(Attribute attr, Type type) {
  if (auto splat = dyn_cast_if_present<SplatElementsAttr>(attr))
    return splat.resizeSplat(cast<ShapedType>(type));
  return {};
}

//===----------------------------------------------------------------------===//
// ArangeOp
//===----------------------------------------------------------------------===//

LogicalResult ArangeOp::verify() {
  int64_t start = getStartAttr().getInt(), end = getEndAttr().getInt();
  if (start < 0 || end <= start)
    return emitOpError() << "needs 0 <= start < end, got start " << start
                         << " and end " << end;
  if (!rules::isPowerOf2(end - start))
    return emitOpError() << "the range length end - start = " << end - start
                         << " must be a power of two";
  auto type = getType();
  if (type.getRank() != 1 || type.getDimSize(0) != end - start)
    return emitOpError() << "the result must be tensor<" << end - start
                         << "xi32>, one element per integer of the range";
  return success();
}

//===----------------------------------------------------------------------===//
// SplatOp
//===----------------------------------------------------------------------===//

OpFoldResult SplatOp::fold(FoldAdaptor adaptor) {
  if (isa_and_present<IntegerAttr, FloatAttr>(adaptor.getSrc()))
    return DenseElementsAttr::get(getType(), adaptor.getSrc());
  return {};
}

//===----------------------------------------------------------------------===//
// BroadcastOp
//===----------------------------------------------------------------------===//

LogicalResult BroadcastOp::verify() {
  return check(*this, rules::checkBroadcast(getSrc().getType().getShape(),
                                            getType().getShape()));
}

OpFoldResult BroadcastOp::fold(FoldAdaptor adaptor) {
  if (getSrc().getType() == getType())
    return getSrc();
  return reshapeSplat(adaptor.getSrc(), getType());
}

namespace {
/// broadcast(splat(x)) -> splat(x).
struct BroadcastOfSplat : public OpRewritePattern<BroadcastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BroadcastOp op,
                                PatternRewriter &rewriter) const override {
    auto splat = op.getSrc().getDefiningOp<SplatOp>();
    if (!splat)
      return failure();
    rewriter.replaceOpWithNewOp<SplatOp>(op, op.getType(), splat.getSrc());
    return success();
  }
};

/// broadcast(broadcast(x)) -> broadcast(x).
struct BroadcastOfBroadcast : public OpRewritePattern<BroadcastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BroadcastOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getSrc().getDefiningOp<BroadcastOp>();
    if (!inner)
      return failure();
    rewriter.replaceOpWithNewOp<BroadcastOp>(op, op.getType(), inner.getSrc());
    return success();
  }
};
} // namespace

void BroadcastOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<BroadcastOfSplat, BroadcastOfBroadcast>(context);
}

//===----------------------------------------------------------------------===//
// ExpandDimsOp
//===----------------------------------------------------------------------===//

LogicalResult ExpandDimsOp::verify() {
  auto srcShape = getSrc().getType().getShape();
  if (auto violation = rules::checkAxis(getAxis(), srcShape.size() + 1))
    return emitOpError() << *violation;
  if (getType().getShape() !=
      ArrayRef<int64_t>(rules::expandDimsShape(srcShape, getAxis())))
    return emitOpError() << "the result must be the source's shape with a "
                            "dimension of size 1 inserted at axis "
                         << getAxis();
  return success();
}

OpFoldResult ExpandDimsOp::fold(FoldAdaptor adaptor) {
  return reshapeSplat(adaptor.getSrc(), getType());
}

//===----------------------------------------------------------------------===//
// TransOp
//===----------------------------------------------------------------------===//

LogicalResult TransOp::verify() {
  auto srcShape = getSrc().getType().getShape();
  if (auto violation = rules::checkPermutation(getOrder(), srcShape.size()))
    return emitOpError() << *violation;
  if (getType().getShape() !=
      ArrayRef<int64_t>(rules::transposeShape(srcShape, getOrder())))
    return emitOpError() << "result dimension i must be source dimension "
                            "order[i]";
  return success();
}

LogicalResult ReshapeOp::verify() {
  if (getSrc().getType().getNumElements() != getType().getNumElements())
    return emitOpError() << "keeps the number of elements: "
                         << getSrc().getType().getNumElements() << " become "
                         << getType().getNumElements();
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getSrc().getType() == getType())
    return getSrc();
  // A reshape of a reshape is one reshape.
  if (auto inner = getSrc().getDefiningOp<ReshapeOp>()) {
    getSrcMutable().assign(inner.getSrc());
    return getResult();
  }
  return {};
}

/// Whether `pair` is `single` with a last dimension of 2.
static bool isPairOf(RankedTensorType pair, RankedTensorType single) {
  return pair.getShape().drop_back() == single.getShape() &&
         pair.getShape().back() == 2;
}

LogicalResult JoinOp::verify() {
  if (!isPairOf(getType(), getLhs().getType()))
    return emitOpError() << "gives its operands' shape with a last dimension "
                            "of 2, not "
                         << getType();
  return success();
}

LogicalResult SplitOp::verify() {
  auto src = getSrc().getType();
  if (src.getShape().empty() || src.getShape().back() != 2)
    return emitOpError() << "splits a last dimension of 2, not " << src;
  if (!isPairOf(src, getLhs().getType()))
    return emitOpError() << "gives two tiles of the source's shape without "
                            "its last dimension";
  return success();
}

OpFoldResult TransOp::fold(FoldAdaptor adaptor) {
  auto isIdentity = [](ArrayRef<int32_t> order) {
    for (auto [i, d] : llvm::enumerate(order))
      if (static_cast<int32_t>(i) != d)
        return false;
    return true;
  };
  if (isIdentity(getOrder()))
    return getSrc();
  if (auto inner = getSrc().getDefiningOp<TransOp>()) {
    // Result dimension i is inner-source dimension innerOrder[order[i]].
    SmallVector<int32_t> composed;
    for (int32_t d : getOrder())
      composed.push_back(inner.getOrder()[d]);
    if (isIdentity(composed))
      return inner.getSrc();
  }
  return reshapeSplat(adaptor.getSrc(), getType());
}

//===----------------------------------------------------------------------===//
// AddPtrOp
//===----------------------------------------------------------------------===//

LogicalResult AddPtrOp::verify() {
  auto ptrTensor = dyn_cast<RankedTensorType>(getPtr().getType());
  auto offsetTensor = dyn_cast<RankedTensorType>(getOffset().getType());
  if (!ptrTensor && !offsetTensor)
    return success();
  if (!ptrTensor || !offsetTensor ||
      ptrTensor.getShape() != offsetTensor.getShape())
    return emitOpError() << "the offset must have the pointers' shape (splat "
                            "or broadcast it first)";
  return success();
}

OpFoldResult AddPtrOp::fold(FoldAdaptor) {
  if (matchPattern(getOffset(), m_Zero()))
    return getPtr();
  return {};
}

//===----------------------------------------------------------------------===//
// LoadOp
//===----------------------------------------------------------------------===//

void LoadOp::build(OpBuilder &builder, OperationState &state, Value ptr,
                   Value mask, Value other) {
  build(builder, state, getPointeeTypeLike(ptr.getType()), ptr, mask, other);
}

ParseResult LoadOp::parse(OpAsmParser &parser, OperationState &result) {
  OpAsmParser::UnresolvedOperand ptr, mask, other;
  bool hasMask = false, hasOther = false;
  Type ptrType;
  if (parser.parseOperand(ptr))
    return failure();
  if (succeeded(parser.parseOptionalKeyword("mask"))) {
    hasMask = true;
    if (parser.parseOperand(mask))
      return failure();
  }
  if (succeeded(parser.parseOptionalKeyword("other"))) {
    hasOther = true;
    if (parser.parseOperand(other))
      return failure();
  }
  SMLoc typeLoc = parser.getCurrentLocation();
  if (parser.parseOptionalAttrDict(result.attributes) ||
      parser.parseColonType(ptrType))
    return failure();
  Type valueType = getPointeeTypeLike(ptrType);
  if (!valueType)
    return parser.emitError(typeLoc)
           << "tile.load reads through a !tile.ptr or a tile of them, not "
           << ptrType;
  if (parser.resolveOperand(ptr, ptrType, result.operands) ||
      (hasMask &&
       parser.resolveOperand(mask, getI1TypeLike(ptrType), result.operands)) ||
      (hasOther && parser.resolveOperand(other, valueType, result.operands)))
    return failure();
  result.getOrAddProperties<Properties>().operandSegmentSizes = {
      1, hasMask ? 1 : 0, hasOther ? 1 : 0};
  result.addTypes(valueType);
  return success();
}

void LoadOp::print(OpAsmPrinter &printer) {
  printer << ' ' << getPtr();
  if (getMask())
    printer << " mask " << getMask();
  if (getOther())
    printer << " other " << getOther();
  printer.printOptionalAttrDict((*this)->getAttrs(), {"operandSegmentSizes"});
  printer << " : " << getPtr().getType();
}

LogicalResult LoadOp::verify() {
  Type ptrType = getPtr().getType();
  if (getType() != getPointeeTypeLike(ptrType))
    return emitOpError() << "the result must be " << getPointeeTypeLike(ptrType)
                         << ", the pointees' type";
  if (getMask() && getMask().getType() != getI1TypeLike(ptrType))
    return emitOpError() << "the mask must be " << getI1TypeLike(ptrType)
                         << ": the pointers' shape with i1 elements";
  if (getOther() && !getMask())
    return emitOpError() << "'other' is the value where the mask is false, so "
                            "it needs a mask";
  if (getOther() && getOther().getType() != getType())
    return emitOpError() << "'other' must have the result's type " << getType();
  return success();
}

/// Whether an atomic `kind` updates `element`s; else an error on `op`.
static LogicalResult verifyAtomicElement(Operation *op, AtomicKind kind,
                                         Type element) {
  bool isInt = element.isInteger(32) || element.isInteger(64);
  switch (kind) {
  case AtomicKind::add:
    if (isInt || element.isF32() || element.isF64())
      return success();
    return op->emitOpError()
           << "add updates f32, f64, i32 or i64 elements, not " << element;
  case AtomicKind::max:
  case AtomicKind::min:
  case AtomicKind::exchange:
    if (isInt || element.isF32())
      return success();
    return op->emitOpError()
           << stringifyAtomicKind(kind)
           << " updates f32, i32 or i64 elements, not " << element;
  case AtomicKind::bitwise_and:
  case AtomicKind::bitwise_or:
  case AtomicKind::bitwise_xor:
    if (isInt)
      return success();
    return op->emitOpError() << stringifyAtomicKind(kind)
                             << " updates i32 or i64 elements, not " << element;
  }
  llvm_unreachable("an atomic kind");
}

LogicalResult AtomicRMWOp::verify() {
  return verifyAtomicElement(*this, getKind(), getElementTypeOrSelf(getType()));
}

LogicalResult AtomicRMWBlockOp::verify() {
  if (getKind() == AtomicKind::exchange)
    return emitOpError() << "cannot exchange: nothing reads the old elements "
                            "back (use tile.store_block)";
  return verifyAtomicElement(*this, getKind(),
                             getElementTypeOrSelf(getValue().getType()));
}

/// Whether an atomic load or store takes `element`s (16 to 64 bits) with
/// `sem` (`allowed` or relaxed); else an error on `op`.
static LogicalResult verifyAtomicAccess(Operation *op, Type element,
                                        MemSemantic sem, MemSemantic allowed) {
  unsigned bits = element.isIntOrFloat() ? element.getIntOrFloatBitWidth() : 0;
  if (bits != 16 && bits != 32 && bits != 64)
    return op->emitOpError()
           << "takes 16-, 32- or 64-bit elements, not " << element;
  if (sem != allowed && sem != MemSemantic::relaxed)
    return op->emitOpError()
           << "is " << stringifyMemSemantic(allowed) << " or relaxed, not "
           << stringifyMemSemantic(sem);
  return success();
}

LogicalResult AtomicLoadOp::verify() {
  return verifyAtomicAccess(*this, getElementTypeOrSelf(getType()), getSem(),
                            MemSemantic::acquire);
}

LogicalResult AtomicStoreOp::verify() {
  return verifyAtomicAccess(*this, getElementTypeOrSelf(getValue().getType()),
                            getSem(), MemSemantic::release);
}

LogicalResult AxisHintOp::verify() {
  auto tensor = dyn_cast<RankedTensorType>(getInput().getType());
  int64_t rank = tensor ? tensor.getRank() : 1;
  for (auto [name, values] : {std::pair{"divisibility", getDivisibility()},
                              std::pair{"contiguity", getContiguity()},
                              std::pair{"constancy", getConstancy()}}) {
    if (!values)
      continue;
    if (int64_t(values->size()) != rank)
      return emitOpError() << "takes one " << name << " a dimension (" << rank
                           << "), not " << values->size();
    for (int64_t value : *values)
      if (value < 1 || !llvm::isPowerOf2_64(value))
        return emitOpError() << name << " must be powers of two, not " << value;
  }
  return success();
}

LogicalResult IntToPtrOp::verify() {
  if (!getElementTypeOrSelf(getSrc().getType()).isInteger(64))
    return emitOpError() << "takes 64-bit addresses, not "
                         << getElementTypeOrSelf(getSrc().getType());
  return success();
}

LogicalResult PtrToIntOp::verify() {
  if (!getElementTypeOrSelf(getType()).isInteger(64))
    return emitOpError() << "gives 64-bit addresses, not "
                         << getElementTypeOrSelf(getType());
  return success();
}

LogicalResult AtomicCASOp::verify() {
  Type element = getElementTypeOrSelf(getType());
  if (element.isInteger(32) || element.isInteger(64) || element.isF32())
    return success();
  return emitOpError() << "compares and swaps f32, i32 or i64 elements, not "
                       << element;
}

PrintOp::PrintedAs PrintOp::getPrintedAs(unsigned index) {
  Type element = getElementTypeOrSelf(getArgs()[index].getType());
  if (getHex())
    return element.getIntOrFloatBitWidth() > 32 ? PrintedAs::LongLong
                                                : PrintedAs::Int;
  if (isa<FloatType>(element))
    return PrintedAs::Double;
  return element.getIntOrFloatBitWidth() > 32 ? PrintedAs::LongLong
                                              : PrintedAs::Int;
}

std::string PrintOp::getLineFormat(unsigned index) {
  std::string format = "pid (%u, %u, %u) ";
  auto escaped = [&] {
    for (char c : getPrefix()) // printf's % is data here
      format += c == '%' ? std::string("%%") : std::string(1, c);
  };
  if (getArgs().empty()) {
    escaped();
    return format + "\n";
  }
  Type type = getArgs()[index].getType();
  if (auto tensor = dyn_cast<RankedTensorType>(type)) {
    format += "idx (";
    for (int64_t d = 0; d < tensor.getRank(); ++d)
      format += d ? ", %d" : "%d";
    format += ") ";
  }
  escaped();
  if (getArgs().size() > 1)
    format += "(operand " + std::to_string(index) + ") ";
  Type element = getElementTypeOrSelf(type);
  switch (getPrintedAs(index)) {
  case PrintedAs::Int:
    format += getHex() ? "0x%x" : "%d";
    break;
  case PrintedAs::LongLong:
    format += getHex() ? "0x%llx" : "%lld";
    break;
  case PrintedAs::Double:
    format += element.isF64() ? "%.17g" : "%.9g";
    break;
  }
  return format + "\n";
}

LogicalResult PrintOp::verify() {
  for (Value arg : getArgs()) {
    Type element = getElementTypeOrSelf(arg.getType());
    if (auto integer = dyn_cast<IntegerType>(element);
        integer && integer.getWidth() <= 64)
      continue;
    if (element.isF16() || element.isBF16() || element.isF32() ||
        element.isF64())
      continue;
    return emitOpError() << "prints integers of up to 64 bits, f16, bf16, "
                            "f32 and f64, not "
                         << element;
  }
  return success();
}

unsigned InlineAsmElementwiseOp::getRegistersPerRun(unsigned bits,
                                                    unsigned packed) {
  return bits >= 32 ? packed : std::max(1u, bits * packed / 32);
}

LogicalResult InlineAsmElementwiseOp::verify() {
  uint32_t packed = getPackedElement();
  if (packed < 1 || packed > 32 || !llvm::isPowerOf2_32(packed))
    return emitOpError() << "packs 1, 2, 4, 8, 16 or 32 elements a run, not "
                         << packed;
  if (getArgs().empty())
    return emitOpError() << "takes at least one tile (its shape is the "
                            "results')";
  if (getResults().empty())
    return emitOpError() << "gives at least one tile";
  // The registers each side of the constraints must name.
  unsigned outputs = 0, inputs = 0;
  for (auto [types, registers] :
       {std::pair(TypeRange(getResultTypes()), &outputs),
        std::pair(TypeRange(getArgs().getTypes()), &inputs)})
    for (Type type : types) {
      Type element = getElementTypeOrSelf(type);
      unsigned bits = element.getIntOrFloatBitWidth();
      if (bits != 8 && bits != 16 && bits != 32 && bits != 64)
        return emitOpError() << "takes and gives elements of 8, 16, 32 or "
                                "64 bits, not "
                             << element;
      *registers += getRegistersPerRun(bits, packed);
    }
  unsigned namedOutputs = 0, namedInputs = 0;
  SmallVector<StringRef> entries;
  getConstraints().split(entries, ',');
  for (StringRef entry : entries) {
    entry = entry.trim();
    if (entry.starts_with("="))
      ++namedOutputs;
    else if (!entry.starts_with("~") && !entry.empty())
      ++namedInputs;
  }
  if (namedOutputs != outputs || namedInputs != inputs)
    return emitOpError() << "constraints \"" << getConstraints() << "\" name "
                         << namedOutputs << " output and " << namedInputs
                         << " input registers, but " << packed
                         << " element(s) a run of these types take " << outputs
                         << " and " << inputs;
  return success();
}

void InlineAsmElementwiseOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  if (getPure())
    return;
  effects.emplace_back(MemoryEffects::Read::get());
  effects.emplace_back(MemoryEffects::Write::get());
}

namespace {
/// A load whose mask is constant: all-true drops the mask, all-false with an
/// `other` is that value.
struct LoadWithConstantMask : public OpRewritePattern<LoadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LoadOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getMask())
      return failure();
    if (matchPattern(op.getMask(), m_One())) {
      rewriter.replaceOpWithNewOp<LoadOp>(op, op.getPtr());
      return success();
    }
    if (op.getOther() && matchPattern(op.getMask(), m_Zero())) {
      rewriter.replaceOp(op, op.getOther());
      return success();
    }
    return failure();
  }
};
} // namespace

void LoadOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                         MLIRContext *context) {
  results.add<LoadWithConstantMask>(context);
}

//===----------------------------------------------------------------------===//
// StoreOp
//===----------------------------------------------------------------------===//

namespace {
/// A store whose mask is constant: all-true drops the mask, all-false
/// writes nothing.
struct StoreWithConstantMask : public OpRewritePattern<StoreOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(StoreOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getMask())
      return failure();
    if (matchPattern(op.getMask(), m_One())) {
      rewriter.replaceOpWithNewOp<StoreOp>(op, op.getPtr(), op.getValue(),
                                           Value());
      return success();
    }
    if (matchPattern(op.getMask(), m_Zero())) {
      rewriter.eraseOp(op);
      return success();
    }
    return failure();
  }
};
} // namespace

void StoreOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                          MLIRContext *context) {
  results.add<StoreWithConstantMask>(context);
}

//===----------------------------------------------------------------------===//
// Block pointers
//===----------------------------------------------------------------------===//

/// Each operand list of a block-pointer op has one entry per dimension.
template <typename OpT>
static LogicalResult checkPerDimension(OpT op, StringRef what, size_t count,
                                       int64_t rank) {
  if (static_cast<int64_t>(count) != rank)
    return op.emitOpError() << "needs one " << what << " per dimension of the "
                            << rank << "-D block, got " << count;
  return success();
}

LogicalResult MakeBlockPtrOp::verify() {
  int64_t rank = getType().getRank();
  if (failed(
          checkPerDimension(*this, "shape entry", getShape().size(), rank)) ||
      failed(checkPerDimension(*this, "stride", getStrides().size(), rank)) ||
      failed(checkPerDimension(*this, "offset", getOffsets().size(), rank)))
    return failure();
  return check(*this, rules::checkPermutation(getOrder(), rank));
}

LogicalResult AdvanceOp::verify() {
  return checkPerDimension(*this, "offset", getOffsets().size(),
                           getType().getRank());
}

OpFoldResult AdvanceOp::fold(FoldAdaptor) {
  if (llvm::all_of(getOffsets(),
                   [](Value v) { return matchPattern(v, m_Zero()); }))
    return getPtr();
  return {};
}

LogicalResult LoadBlockOp::verify() {
  auto ptrType = getPtr().getType();
  if (failed(check(*this, rules::checkBoundaryCheck(getBoundaryCheck(),
                                                    ptrType.getRank()))))
    return failure();
  if (getPadding() == Padding::nan && !isa<FloatType>(ptrType.getElementType()))
    return emitOpError() << "NaN padding needs float elements, not "
                         << ptrType.getElementType();
  return success();
}

LogicalResult StoreBlockOp::verify() {
  return check(*this, rules::checkBoundaryCheck(getBoundaryCheck(),
                                                getPtr().getType().getRank()));
}

//===----------------------------------------------------------------------===//
// DotOp
//===----------------------------------------------------------------------===//

/// The accumulator element type a dot of `operand` elements uses, or null.
static Type getDotAccumulatorType(Type operand) {
  MLIRContext *ctx = operand.getContext();
  if (isa<Float16Type, BFloat16Type, Float8E5M2Type, Float8E4M3FNType,
          Float32Type>(operand))
    return Float32Type::get(ctx);
  if (operand.isSignlessInteger(8))
    return IntegerType::get(ctx, 32);
  return {};
}

LogicalResult DotOp::verify() {
  auto aType = getA().getType(), bType = getB().getType();
  if (failed(
          check(*this, rules::checkDotShapes(aType.getShape(), bType.getShape(),
                                             getType().getShape()))))
    return failure();
  Type element = aType.getElementType();
  if (element != bType.getElementType())
    return emitOpError() << "a and b have one element type, got " << element
                         << " and " << bType.getElementType();
  Type accumulator = getDotAccumulatorType(element);
  if (!accumulator)
    return emitOpError() << "takes f16, bf16, f8E5M2, f8E4M3FN, f32 or i8 "
                            "operands, not "
                         << element;
  if (getType().getElementType() != accumulator)
    return emitOpError() << element << " operands accumulate in " << accumulator
                         << ", not " << getType().getElementType();
  return success();
}

//===----------------------------------------------------------------------===//
// WhereOp
//===----------------------------------------------------------------------===//

OpFoldResult WhereOp::fold(FoldAdaptor adaptor) {
  if (getTrueValue() == getFalseValue())
    return getTrueValue();
  if (matchPattern(getCondition(), m_One()))
    return getTrueValue();
  if (matchPattern(getCondition(), m_Zero()))
    return getFalseValue();
  return {};
}

//===----------------------------------------------------------------------===//
// ReduceOp
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::verify() {
  auto srcType = getSrc().getType();
  if (auto violation = rules::checkAxis(getAxis(), srcType.getRank()))
    return emitOpError() << *violation;
  if ((getKind() == ReduceKind::bitwise_or ||
       getKind() == ReduceKind::bitwise_xor) &&
      !srcType.getElementType().isInteger())
    return emitOpError() << "'" << stringifyReduceKind(getKind())
                         << "' combines integers, not "
                         << srcType.getElementType();
  // Layout encodings (at lower levels) are checked there; compare the rest.
  Type expected = srcType.getElementType(), actual = getType();
  if (srcType.getRank() > 1) {
    expected = RankedTensorType::get(
        rules::reduceShape(srcType.getShape(), getAxis()), expected);
    if (auto tensor = dyn_cast<RankedTensorType>(actual))
      actual =
          RankedTensorType::get(tensor.getShape(), tensor.getElementType());
  }
  if (actual != expected)
    return emitOpError() << "reducing axis " << getAxis() << " of " << srcType
                         << " gives " << expected << ", not " << getType();
  return success();
}
