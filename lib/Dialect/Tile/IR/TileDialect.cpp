//===- TileDialect.cpp - The tile dialect and its types -------------------===//

#include "tile/Dialect/Tile/IR/ShapeRules.h"
#include "tile/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tile;

#include "tile/Dialect/Tile/IR/TileDialect.cpp.inc"
#include "tile/Dialect/Tile/IR/TileEnums.cpp.inc"
#include "tile/Dialect/Tile/IR/TileInterfaces.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "tile/Dialect/Tile/IR/TileTypes.cpp.inc"

namespace {
/// Every tile op may be inlined: none depends on the function it sits in.
struct TileInlinerInterface : public DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
};
} // namespace

void TileDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "tile/Dialect/Tile/IR/TileTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "tile/Dialect/Tile/IR/TileOps.cpp.inc"
      >();
  addInterfaces<TileInlinerInterface>();
}

Operation *TileDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  return arith::ConstantOp::materialize(builder, value, type, loc);
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

static bool isTileElementType(Type type) {
  return isa<IntegerType, FloatType, PtrType>(type);
}

bool tile::isTileTensorType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor &&
         (!tensor.getEncoding() ||
          isa<TensorEncodingAttrInterface>(tensor.getEncoding())) &&
         isTileElementType(tensor.getElementType()) &&
         !rules::checkTileShape(tensor.getShape());
}

Type tile::getPointeeTypeLike(Type ptrLike) {
  if (auto tensor = dyn_cast<RankedTensorType>(ptrLike)) {
    auto ptr = dyn_cast<PtrType>(tensor.getElementType());
    return ptr ? tensor.clone(ptr.getPointeeType()) : Type();
  }
  if (auto ptr = dyn_cast<PtrType>(ptrLike))
    return ptr.getPointeeType();
  return {};
}

Type tile::getI1TypeLike(Type type) {
  auto i1 = IntegerType::get(type.getContext(), 1);
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return tensor.clone(i1);
  return i1;
}

LogicalResult OpTrait::tile::verifyInFunction(Operation *op) {
  if (op->getParentOfType<FunctionOpInterface>())
    return success();
  return op->emitOpError("must lie inside a function (a kernel or a helper), "
                         "not at module scope");
}

bool tile::isKernel(Operation *op) {
  return isa<func::FuncOp>(op) && op->hasAttr(TileDialect::getKernelAttrName());
}

std::string tile::getParamName(BlockArgument arg) {
  if (auto named = dyn_cast<NameLoc>(arg.getLoc()))
    return named.getName().str();
  return "arg" + std::to_string(arg.getArgNumber());
}

LogicalResult PtrType::verify(function_ref<InFlightDiagnostic()> emitError,
                              Type pointeeType) {
  if (!isa<IntegerType, FloatType>(pointeeType))
    return emitError() << "!tile.ptr points to an integer or float scalar, not "
                       << pointeeType;
  return success();
}

LogicalResult BlockPtrType::verify(function_ref<InFlightDiagnostic()> emitError,
                                   RankedTensorType blockType) {
  if (!isa<IntegerType, FloatType>(blockType.getElementType()))
    return emitError()
           << "a block pointer's block holds integers or floats, not "
           << blockType.getElementType();
  if (auto violation = rules::checkTileShape(blockType.getShape()))
    return emitError() << "invalid block shape: " << *violation;
  return success();
}

//===----------------------------------------------------------------------===//
// The kernel attribute
//===----------------------------------------------------------------------===//

LogicalResult TileDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attribute) {
  StringRef name = attribute.getName().getValue();
  Attribute value = attribute.getValue();
  if (name == getOptionsAttrName() || name == getMetadataAttrName()) {
    bool ok = name == getOptionsAttrName() ? isa<StringAttr>(value)
                                           : isa<DictionaryAttr>(value);
    if (!isa<ModuleOp>(op) || !ok)
      return op->emitError()
             << "'" << name << "' is a "
             << (name == getOptionsAttrName() ? "string" : "dictionary")
             << " attribute of a module";
    return success();
  }
  if (name == getLaunchAttrName()) {
    auto spec = dyn_cast<DictionaryAttr>(value);
    if (!isKernel(op) || !spec)
      return op->emitError()
             << "'" << name << "' is a dictionary attribute of a kernel";
    auto strings = [](Attribute attr, size_t low, size_t high) {
      auto array = dyn_cast_if_present<ArrayAttr>(attr);
      return array && array.size() >= low && array.size() <= high &&
             llvm::all_of(array,
                          [](Attribute a) { return isa<StringAttr>(a); });
    };
    for (NamedAttribute entry : spec) {
      StringRef key = entry.getName().getValue();
      bool ok = key == "grid" ? strings(entry.getValue(), 1, 3)
                : key == "keys"
                    ? strings(entry.getValue(), 0, SIZE_MAX)
                    : key == "length" && isa<StringAttr>(entry.getValue());
      if (!ok)
        return op->emitError()
               << "'" << name
               << "' holds grid (one to three strings), keys (strings) and "
                  "length (a string), not "
               << entry.getName() << " = " << entry.getValue();
    }
    if (!spec.get("grid"))
      return op->emitError() << "'" << name << "' needs a grid";
    return success();
  }
  if (name == getConstexprsAttrName()) {
    if (!isKernel(op) || !isa<DictionaryAttr>(value))
      return op->emitError()
             << "'" << name << "' is a dictionary attribute of a kernel";
    return success();
  }
  if (name == getNumStagesAttrName()) {
    auto stages = dyn_cast<IntegerAttr>(value);
    if (!isa<scf::ForOp>(op) || !stages || !stages.getType().isInteger(32) ||
        stages.getInt() < 1)
      return op->emitError()
             << "'" << name << "' is an i32 of at least 1 on an scf.for";
    return success();
  }
  if (name != getKernelAttrName())
    return op->emitError() << "unknown tile dialect attribute '" << name << "'";
  auto func = dyn_cast<func::FuncOp>(op);
  if (!func)
    return op->emitError() << "'" << getKernelAttrName()
                           << "' marks a func.func, not '" << op->getName()
                           << "'";
  if (!isa<UnitAttr>(value))
    return op->emitError() << "'" << getKernelAttrName()
                           << "' is a unit attribute";
  if (func.getFunctionType().getNumResults() != 0)
    return op->emitError() << "a kernel returns nothing: write results "
                              "through pointers";
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
    // A lower level may add parameters of its own (a TMA descriptor).
    bool lowerLevel = !isa<TileDialect, BuiltinDialect>(type.getDialect());
    if (!lowerLevel && !isa<PtrType, IntegerType, FloatType>(type))
      return op->emitError() << "kernel argument " << i
                             << " must be a !tile.ptr, an integer or a float "
                                "scalar, not "
                             << type;
  }
  return success();
}

LogicalResult TileDialect::verifyRegionArgAttribute(Operation *op,
                                                    unsigned regionIndex,
                                                    unsigned argIndex,
                                                    NamedAttribute attribute) {
  if (attribute.getName() != getDivisibilityAttrName())
    return op->emitError() << "unknown tile dialect argument attribute '"
                           << attribute.getName().getValue() << "'";
  auto value = dyn_cast<IntegerAttr>(attribute.getValue());
  if (!value || !rules::isPowerOf2(value.getInt()))
    return op->emitError() << "'tile.divisibility' of argument " << argIndex
                           << " must be a power of two";
  Type type = op->getRegion(regionIndex).getArgument(argIndex).getType();
  if (!isa<PtrType, IntegerType>(type))
    return op->emitError() << "'tile.divisibility' applies to pointer and "
                              "integer arguments, not "
                           << type;
  return success();
}
