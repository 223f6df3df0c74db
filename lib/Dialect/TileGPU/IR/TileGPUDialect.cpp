//===- TileGPUDialect.cpp - The tilegpu dialect and its layouts -----------===//

#include "tile/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tilegpu;

#include "tile/Dialect/TileGPU/IR/TileGPUAttrInterfaces.cpp.inc"
#include "tile/Dialect/TileGPU/IR/TileGPUDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tile/Dialect/TileGPU/IR/TileGPUAttrs.cpp.inc"

namespace {
/// Prints layouts through aliases (#blocked, #blocked1, #slice, ...): they
/// recur on every tensor type of a function.
struct TileGPUOpAsmInterface : public OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;
  AliasResult getAlias(Attribute attr, raw_ostream &os) const override {
    if (isa<BlockedEncodingAttr>(attr)) {
      os << "blocked";
      return AliasResult::FinalAlias;
    }
    if (isa<SliceEncodingAttr>(attr)) {
      os << "slice";
      return AliasResult::FinalAlias;
    }
    return AliasResult::NoAlias;
  }
};
} // namespace

void TileGPUDialect::initialize() {
  addInterfaces<TileGPUOpAsmInterface>();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tile/Dialect/TileGPU/IR/TileGPUAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "tile/Dialect/TileGPU/IR/TileGPUOps.cpp.inc"
      >();
}

LayoutEncodingAttrInterface tilegpu::getLayout(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return {};
  return dyn_cast_if_present<LayoutEncodingAttrInterface>(
      tensor.getEncoding());
}

LinearLayout tilegpu::getLinearLayout(RankedTensorType type) {
  return getLayout(type).toLinearLayout(type.getShape());
}

std::optional<unsigned> tilegpu::getNumWarps(Operation *op) {
  auto module = op->getParentOfType<ModuleOp>();
  if (!module)
    return std::nullopt;
  auto attr = module->getAttrOfType<IntegerAttr>(
      TileGPUDialect::getNumWarpsAttrName());
  if (!attr)
    return std::nullopt;
  return attr.getInt();
}

//===----------------------------------------------------------------------===//
// BlockedEncodingAttr
//===----------------------------------------------------------------------===//

static bool isPowerOf2(unsigned v) { return v && !(v & (v - 1)); }

static unsigned product(ArrayRef<unsigned> values) {
  unsigned p = 1;
  for (unsigned v : values)
    p *= v;
  return p;
}

LogicalResult
BlockedEncodingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                            ArrayRef<unsigned> sizePerThread,
                            ArrayRef<unsigned> threadsPerWarp,
                            ArrayRef<unsigned> warpsPerCTA,
                            ArrayRef<unsigned> order) {
  size_t rank = sizePerThread.size();
  if (rank == 0 || threadsPerWarp.size() != rank ||
      warpsPerCTA.size() != rank || order.size() != rank)
    return emitError() << "a blocked layout has one sizePerThread, "
                          "threadsPerWarp, warpsPerCTA and order entry per "
                          "dimension";
  for (ArrayRef<unsigned> values : {sizePerThread, threadsPerWarp, warpsPerCTA})
    if (!llvm::all_of(values, isPowerOf2))
      return emitError() << "blocked layout sizes must be powers of two";
  if (product(threadsPerWarp) != TileGPUDialect::getThreadsPerWarp())
    return emitError() << "threadsPerWarp must multiply to "
                       << TileGPUDialect::getThreadsPerWarp() << ", not "
                       << product(threadsPerWarp);
  llvm::SmallVector<bool> seen(rank, false);
  for (unsigned d : order) {
    if (d >= rank || seen[d])
      return emitError() << "order must be a permutation of the dimensions";
    seen[d] = true;
  }
  return success();
}

LinearLayout BlockedEncodingAttr::toLinearLayout(ArrayRef<int64_t> shape) const {
  return makeBlockedLayout(shape, getSizePerThread(), getThreadsPerWarp(),
                           getWarpsPerCTA(), getOrder());
}

unsigned BlockedEncodingAttr::getNumWarps() const {
  return product(getWarpsPerCTA());
}

unsigned BlockedEncodingAttr::getRank() const {
  return getSizePerThread().size();
}

//===----------------------------------------------------------------------===//
// SliceEncodingAttr
//===----------------------------------------------------------------------===//

LogicalResult
SliceEncodingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                          unsigned dim, LayoutEncodingAttrInterface parent) {
  if (!parent)
    return emitError() << "a slice needs a parent layout";
  if (parent.getRank() < 2)
    return emitError() << "a slice removes a dimension of a parent of rank "
                          "at least 2";
  if (dim >= parent.getRank())
    return emitError() << "slice dimension " << dim
                       << " is not a dimension of its rank-"
                       << parent.getRank() << " parent";
  return success();
}

LinearLayout SliceEncodingAttr::toLinearLayout(ArrayRef<int64_t> shape) const {
  SmallVector<int64_t> parentShape(shape);
  parentShape.insert(parentShape.begin() + getDim(), 1);
  return getParent()
      .toLinearLayout(parentShape)
      .withoutDim(getDim())
      .withoutZeroRegisterBases();
}

unsigned SliceEncodingAttr::getNumWarps() const {
  return getParent().getNumWarps();
}

unsigned SliceEncodingAttr::getRank() const {
  return getParent().getRank() - 1;
}

//===----------------------------------------------------------------------===//
// ConvertLayoutOp
//===----------------------------------------------------------------------===//

#define GET_OP_CLASSES
#include "tile/Dialect/TileGPU/IR/TileGPUOps.cpp.inc"

LogicalResult ConvertLayoutOp::verify() {
  for (Type type : {getSrc().getType(), getType()}) {
    auto layout = getLayout(type);
    if (!layout)
      return emitOpError() << "converts between layouts, but " << type
                           << " has none";
    if (layout.getRank() != cast<RankedTensorType>(type).getRank())
      return emitOpError() << "the layout of " << type
                           << " is for another rank";
  }
  return success();
}

OpFoldResult ConvertLayoutOp::fold(FoldAdaptor) {
  if (getSrc().getType() == getType())
    return getSrc();
  if (auto inner = getSrc().getDefiningOp<ConvertLayoutOp>()) {
    getSrcMutable().assign(inner.getSrc());
    return getResult();
  }
  return {};
}
