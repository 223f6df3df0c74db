//===- TensorMaps.cpp - Which block loads the TMA can copy ----------------===//

#include "TensorMaps.h"

#include "tile/Analysis/Allocation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

/// The TMA's limits: elements of a box along a dimension, and the alignment
/// (bytes) of the tensor's address and of each stride.
constexpr int64_t kMaxBoxElements = 256;
constexpr int64_t kGlobalAlignment = 16;
/// The alignment (bytes) of the shared memory a TMA copy writes.
constexpr int64_t kSharedAlignment = 128;
/// A dimension the program offsets its base along spans this many bytes,
/// more than any GPU's memory, so that no coordinate of a valid address is
/// out of bounds, and at most 2^31 elements, every non-negative i32
/// coordinate. (On the H200 the TMA faults, an illegal instruction, on a
/// descriptor with an extent of 2^32, which the driver encodes.)
constexpr int64_t kDimensionBytes = int64_t(1) << 40;
constexpr int64_t kMaxExtent = int64_t(1) << 31;

/// `value` as an expression of the kernel's integer parameters that the
/// runtime evaluates before launch (a launch spec's grammar), or none.
std::optional<std::string> getHostExpression(Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    if (!tile::isKernel(arg.getOwner()->getParentOp()) ||
        !isa<IntegerType>(arg.getType()))
      return std::nullopt;
    return tile::getParamName(arg);
  }
  APInt constant;
  if (matchPattern(value, m_ConstantInt(&constant))) {
    int64_t v = constant.getSExtValue();
    return v < 0 ? "(0 - " + std::to_string(-v) + ")" : std::to_string(v);
  }
  Operation *def = value.getDefiningOp();
  if (auto ext = dyn_cast_or_null<arith::ExtSIOp>(def))
    return getHostExpression(ext.getIn());
  auto binary = [](Operation *op,
                   StringRef sign) -> std::optional<std::string> {
    auto lhs = getHostExpression(op->getOperand(0));
    auto rhs = getHostExpression(op->getOperand(1));
    if (!lhs || !rhs)
      return std::nullopt;
    return "(" + *lhs + " " + sign.str() + " " + *rhs + ")";
  };
  if (isa_and_nonnull<arith::MulIOp>(def))
    return binary(def, "*");
  if (isa_and_nonnull<arith::AddIOp>(def))
    return binary(def, "+");
  if (isa_and_nonnull<arith::SubIOp>(def))
    return binary(def, "-");
  // (x + (c - 1)) / c, c > 0: x rounded up to whole c's (a row stride
  // padded in the kernel), which is cdiv for the x >= 0 of extents.
  APInt divisor, addend;
  if (auto div = dyn_cast_or_null<arith::DivSIOp>(def);
      div && matchPattern(div.getRhs(), m_ConstantInt(&divisor)) &&
      divisor.isStrictlyPositive())
    if (auto add = div.getLhs().getDefiningOp<arith::AddIOp>();
        add && matchPattern(add.getRhs(), m_ConstantInt(&addend)) &&
        addend == divisor - 1)
      if (auto x = getHostExpression(add.getLhs()))
        return "cdiv(" + *x + ", " + std::to_string(divisor.getSExtValue()) +
               ")";
  return std::nullopt;
}

/// A part `coefficient * stride` of a base's offset: `stride` the host
/// knows, `coefficient` the program computes (null: 1).
struct OffsetTerm {
  Value coefficient, stride;
};

/// `offset` as a sum of terms, or failure.
LogicalResult collectTerms(Value offset, SmallVectorImpl<OffsetTerm> &terms) {
  if (auto add = offset.getDefiningOp<arith::AddIOp>())
    return success(succeeded(collectTerms(add.getLhs(), terms)) &&
                   succeeded(collectTerms(add.getRhs(), terms)));
  if (getHostExpression(offset)) {
    terms.push_back({Value(), offset});
    return success();
  }
  if (auto mul = offset.getDefiningOp<arith::MulIOp>()) {
    if (getHostExpression(mul.getRhs()))
      terms.push_back({mul.getLhs(), mul.getRhs()});
    else if (getHostExpression(mul.getLhs()))
      terms.push_back({mul.getRhs(), mul.getLhs()});
    else
      return failure();
    return success();
  }
  return failure();
}

/// A term's coefficient as the i32 coordinate the TMA takes, or null.
Value getCoordinate(OpBuilder &b, Location loc, Value coefficient) {
  if (!coefficient)
    return arith::ConstantIntOp::create(b, loc, 1, 32);
  if (coefficient.getType().isInteger(32))
    return coefficient;
  if (auto ext = coefficient.getDefiningOp<arith::ExtSIOp>();
      ext && ext.getIn().getType().isInteger(32))
    return ext.getIn();
  APInt constant;
  if (matchPattern(coefficient, m_ConstantInt(&constant)) &&
      constant.isSignedIntN(32))
    return arith::ConstantIntOp::create(b, loc, constant.getSExtValue(), 32);
  return {};
}

} // namespace

tile::MakeBlockPtrOp tilegpu::getMadeBlockPointer(Value pointer) {
  while (auto advance = pointer.getDefiningOp<tile::AdvanceOp>())
    pointer = advance.getPtr();
  return pointer.getDefiningOp<tile::MakeBlockPtrOp>();
}

Value tilegpu::getTensorMapParameter(func::FuncOp kernel,
                                     DictionaryAttr descriptor) {
  auto module = kernel->getParentOfType<ModuleOp>();
  StringRef name = TileGPUDialect::getTensorMapsAttrName();
  SmallVector<Attribute> maps;
  if (auto listed = module->getAttrOfType<ArrayAttr>(name))
    maps.assign(listed.begin(), listed.end());
  auto *found = llvm::find(maps, descriptor);
  unsigned index = found - maps.begin();
  unsigned first = kernel.getNumArguments() - maps.size();
  if (found == maps.end()) {
    maps.push_back(descriptor);
    module->setAttr(name, ArrayAttr::get(module.getContext(), maps));
    (void)kernel.insertArgument(kernel.getNumArguments(),
                                TensorMapType::get(module.getContext()),
                                DictionaryAttr(), kernel.getLoc());
  }
  return kernel.getArgument(first + index);
}

std::optional<TensorMapAccess>
tilegpu::planTensorMapAccess(OpBuilder &b, Value pointer, MemDescType buffer,
                             const tile::AxisInfoAnalysis &axis) {
  // An nvmma_shared buffer is written box by box, one swizzle span of its
  // contiguous dimension each; an unswizzled one (a row of statistics,
  // say) in one box, row after row.
  auto nvmma = dyn_cast<NVMMASharedEncodingAttr>(buffer.getEncoding());
  auto plain = dyn_cast<SharedEncodingAttr>(buffer.getEncoding());
  if (plain && plain.getMaxPhase() != 1)
    plain = {};
  if ((!nvmma && !plain) || buffer.getRank() != 2)
    return std::nullopt;
  auto encoding = cast<SharedLayoutAttrInterface>(buffer.getEncoding());
  tile::MakeBlockPtrOp block = getMadeBlockPointer(pointer);
  if (!block)
    return std::nullopt;
  Location loc = block.getLoc();
  int64_t elementBytes = getSharedElementBytes(buffer.getElementType());
  auto isAligned = [&](Value stride) {
    return (axis.get(stride).divisibility[0] * elementBytes) %
               kGlobalAlignment ==
           0;
  };

  // The base: a pointer parameter 16-byte aligned, offset by terms.
  SmallVector<OffsetTerm> terms;
  Value base = block.getBase();
  while (auto add = base.getDefiningOp<tile::AddPtrOp>()) {
    if (failed(collectTerms(add.getOffset(), terms)))
      return std::nullopt;
    base = add.getPtr();
  }
  auto param = dyn_cast<BlockArgument>(base);
  if (!param || !tile::isKernel(param.getOwner()->getParentOp()))
    return std::nullopt;
  auto kernel = cast<FunctionOpInterface>(param.getOwner()->getParentOp());
  auto alignment = kernel.getArgAttrOfType<IntegerAttr>(
      param.getArgNumber(), tile::TileDialect::getDivisibilityAttrName());
  if (!alignment || alignment.getInt() % kGlobalAlignment)
    return std::nullopt;

  // The block's dimensions, contiguous first (the buffer's order).
  ArrayRef<int64_t> shape = buffer.getShape();
  unsigned inner = encoding.getOrder()[0], outer = encoding.getOrder()[1];
  if (!matchPattern(block.getStrides()[inner], m_One()) ||
      !isAligned(block.getStrides()[outer]))
    return std::nullopt;
  auto innerExtent = getHostExpression(block.getShape()[inner]);
  auto outerExtent = getHostExpression(block.getShape()[outer]);
  auto outerStride = getHostExpression(block.getStrides()[outer]);
  if (!innerExtent || !outerExtent || !outerStride)
    return std::nullopt;
  // A box spans one swizzle span of the contiguous dimension; its rows
  // start where the swizzle pattern does (every 8). Unswizzled, a box is
  // the block, its rows whole 16-byte vectors, and each buffer of a stack
  // starts where the TMA can write (128 bytes).
  int64_t span = encoding.getRowLength(shape);
  if (span > kMaxBoxElements || shape[outer] > kMaxBoxElements)
    return std::nullopt;
  if (nvmma && shape[outer] % 8 != 0)
    return std::nullopt;
  if (plain && ((span * elementBytes) % kGlobalAlignment ||
                (span * shape[outer] * elementBytes) % kSharedAlignment))
    return std::nullopt;

  SmallVector<Attribute> dims{b.getStringAttr(*innerExtent),
                              b.getStringAttr(*outerExtent)};
  SmallVector<Attribute> strides{b.getStringAttr(*outerStride)};
  SmallVector<Attribute> box{b.getI64IntegerAttr(span),
                             b.getI64IntegerAttr(shape[outer])};
  TensorMapAccess access;
  if (2 + terms.size() > TensorMapType::kMaxRank)
    return std::nullopt;
  for (OffsetTerm term : terms) {
    Value coordinate = getCoordinate(b, loc, term.coefficient);
    if (!coordinate || !isAligned(term.stride))
      return std::nullopt;
    std::string stride = *getHostExpression(term.stride);
    access.coords.push_back(coordinate);
    dims.push_back(b.getStringAttr("min(" + std::to_string(kMaxExtent) +
                                   ", cdiv(" + std::to_string(kDimensionBytes) +
                                   ", max(1, (" + stride + " * " +
                                   std::to_string(elementBytes) + "))))"));
    strides.push_back(b.getStringAttr(stride));
    box.push_back(b.getI64IntegerAttr(1));
  }
  access.descriptor = b.getDictionaryAttr({
      b.getNamedAttr("base", b.getStringAttr(tile::getParamName(param))),
      b.getNamedAttr("dims", b.getArrayAttr(dims)),
      b.getNamedAttr("strides", b.getArrayAttr(strides)),
      b.getNamedAttr("box", b.getArrayAttr(box)),
      b.getNamedAttr("swizzle",
                     b.getI64IntegerAttr(nvmma ? nvmma.getSwizzle() : 0)),
  });
  return access;
}
