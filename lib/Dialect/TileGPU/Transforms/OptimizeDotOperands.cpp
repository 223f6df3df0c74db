//===- OptimizeDotOperands.cpp - Operands through swizzled shared memory --===//
//
// A 16-bit dot operand converted from a blocked layout, or from a dot's
// result that other warps hold, is stored once into a swizzled
// shared-memory buffer and read back with ldmatrix, and every
// such dot is split along k into 16-deep steps that each read only their
// slice of the operands just before their mma instructions. A warp then
// holds one k-slice of K or V at a time rather than the whole tile. A
// transposed operand is read through a transposed view of the buffer of
// the tile it transposes, and buffers of the same tile are shared.
//
//===----------------------------------------------------------------------===//

#include "tile/Dialect/Tile/IR/Tile.h"
#include "tile/Dialect/TileGPU/IR/TileGPU.h"
#include "tile/Dialect/TileGPU/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tilegpu {
#define GEN_PASS_DEF_TILEGPUOPTIMIZEDOTOPERANDS
#include "tile/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace mlir::tilegpu

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

/// The k depth of one mma.sync m16n8k16 step.
constexpr int64_t kStep = 16;

bool isSixteenBitOperand(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  auto layout = dyn_cast<DotOperandEncodingAttr>(tensor.getEncoding());
  return layout && layout.getKWidth() == 2 &&
         tensor.getElementType().getIntOrFloatBitWidth() == 16;
}

BlockedEncodingAttr getBlocked(Value value) {
  return dyn_cast<BlockedEncodingAttr>(
      cast<RankedTensorType>(value.getType()).getEncoding());
}

/// The order of the dimensions `value`'s registers run along, fastest first,
/// for the layouts a tile can be stored to shared memory from: blocked, and
/// mma (two neighbouring columns per register pair). Empty otherwise.
SmallVector<unsigned> getRegisterOrder(Value value) {
  Attribute layout = cast<RankedTensorType>(value.getType()).getEncoding();
  if (auto blocked = dyn_cast<BlockedEncodingAttr>(layout))
    return llvm::to_vector(blocked.getOrder());
  if (isa<MmaEncodingAttr>(layout))
    return {1, 0};
  return {};
}

/// The tile a transposed operand was made from: `value` is tile.trans of it,
/// through conversions between blocked layouts, the first of which may
/// start from an mma layout (a dot's result transposed into another dot,
/// as dS is in the backward of attention). Null otherwise.
Value getTransposeSource(Value value) {
  auto trans = value.getDefiningOp<tile::TransOp>();
  if (!trans || trans.getOrder() != ArrayRef<int32_t>{1, 0})
    return {};
  Value src = trans.getSrc();
  while (auto convert = src.getDefiningOp<ConvertLayoutOp>()) {
    if (getRegisterOrder(convert.getSrc()).empty())
      break;
    src = convert.getSrc();
    if (!getBlocked(src))
      break;
  }
  return getRegisterOrder(src).empty() ? Value() : src;
}

/// A new buffer holding `tile`, swizzled for ldmatrix. It keeps contiguous
/// the dimension the registers hold contiguously, so that the stores need
/// no reordering.
Value allocateOperandBuffer(OpBuilder &b, Location loc, Value tile) {
  auto type = cast<RankedTensorType>(tile.getType());
  MLIRContext *ctx = b.getContext();
  auto shared = SharedEncodingAttr::getForMatrixOperand(ctx, type.getShape(), 2,
                                                        getRegisterOrder(tile));
  auto bufferType =
      MemDescType::get(ctx, type.getShape(), type.getElementType(), shared);
  return LocalAllocOp::create(b, loc, bufferType, tile);
}

/// Whether `convert` moves a dot's result between warps: a result handed to
/// a dot whose warps own other rows or columns than its producer's did.
bool isMmaExchange(ConvertLayoutOp convert) {
  auto srcType = cast<RankedTensorType>(convert.getSrc().getType());
  return isa<MmaEncodingAttr>(srcType.getEncoding()) &&
         !keepsElementsInPlace(getLinearLayout(srcType),
                               getLinearLayout(convert.getType()));
}

/// Replaces a conversion to a 16-bit dot operand, from a blocked layout or
/// from another dot's result held by other warps, by a store into shared
/// memory and a read in the operand layout. A transposed tile is stored as
/// it was loaded and read through a transposed view, rather than moved
/// between threads to transpose it in registers.
void stageThroughSharedMemory(ConvertLayoutOp convert) {
  auto srcType = convert.getSrc().getType();
  if (srcType.getRank() != 2 || !isSixteenBitOperand(convert.getType()) ||
      !(getBlocked(convert.getSrc()) || isMmaExchange(convert)))
    return;
  OpBuilder b(convert);
  Location loc = convert.getLoc();
  Value buffer;
  if (Value untransposed = getTransposeSource(convert.getSrc())) {
    Value original = allocateOperandBuffer(b, loc, untransposed);
    auto originalType = cast<MemDescType>(original.getType());
    buffer = MemDescTransOp::create(
        b, loc,
        MemDescType::get(b.getContext(), srcType.getShape(),
                         srcType.getElementType(),
                         originalType.getEncoding().getTransposed()),
        original);
  } else {
    buffer = allocateOperandBuffer(b, loc, convert.getSrc());
  }
  Value operand = LocalLoadOp::create(b, loc, convert.getType(), buffer,
                                      b.getDenseI64ArrayAttr({0, 0}));
  Value source = convert.getSrc();
  convert.replaceAllUsesWith(operand);
  convert.erase();
  // The transpose in registers, and the conversions made for it, are dead.
  while (Operation *def = source.getDefiningOp()) {
    if (!isa<tile::TransOp, ConvertLayoutOp>(def) || !def->use_empty())
      break;
    source = def->getOperand(0);
    def->erase();
  }
}

/// Buffers filled with the same tile in the same encoding hold the same
/// data: later ones in a block are replaced by the first.
void shareIdenticalBuffers(Operation *root) {
  DenseMap<std::pair<Value, Type>, LocalAllocOp> first;
  SmallVector<LocalAllocOp> duplicates;
  root->walk([&](LocalAllocOp alloc) {
    auto [it, inserted] = first.try_emplace(
        std::make_pair(alloc.getSrc(), alloc.getType()), alloc);
    if (!inserted && it->second->getBlock() == alloc->getBlock())
      duplicates.push_back(alloc);
  });
  for (LocalAllocOp alloc : duplicates) {
    alloc.replaceAllUsesWith(
        first.lookup({alloc.getSrc(), alloc.getType()}).getResult());
    alloc.erase();
  }
}

/// The window of `value` at `offsets` with `shape`, read just where `b`
/// stands: from shared memory when `value` is a whole buffer read, from its
/// registers otherwise.
Value sliceOperand(OpBuilder &b, Location loc, Value value,
                   ArrayRef<int64_t> offsets, ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(value.getType());
  auto sliceType =
      RankedTensorType::get(shape, type.getElementType(), type.getEncoding());
  if (type.getShape() == shape)
    return value;
  if (auto load = value.getDefiningOp<LocalLoadOp>();
      load && llvm::all_of(load.getOffsets(), [](int64_t o) { return !o; }))
    return LocalLoadOp::create(b, loc, sliceType, load.getSrc(),
                               b.getDenseI64ArrayAttr(offsets));
  return ExtractSliceOp::create(b, loc, sliceType, value,
                                b.getDenseI64ArrayAttr(offsets));
}

/// Rewrites a dot deeper than one step as a chain of 16-deep dots.
void splitAlongK(tile::DotOp dot) {
  if (!isSixteenBitOperand(dot.getA().getType()) ||
      !isSixteenBitOperand(dot.getB().getType()))
    return;
  int64_t m = dot.getType().getDimSize(0), n = dot.getType().getDimSize(1);
  int64_t depth = dot.getA().getType().getDimSize(1);
  if (depth <= kStep || depth % kStep)
    return;
  OpBuilder b(dot);
  Location loc = dot.getLoc();
  Value acc = dot.getAcc();
  for (int64_t k = 0; k < depth; k += kStep) {
    Value a = sliceOperand(b, loc, dot.getA(), {0, k}, {m, kStep});
    Value bk = sliceOperand(b, loc, dot.getB(), {k, 0}, {kStep, n});
    acc = tile::DotOp::create(b, loc, dot.getType(), a, bk, acc);
  }
  Value a = dot.getA(), bOperand = dot.getB();
  dot.replaceAllUsesWith(acc);
  dot.erase();
  for (Value operand : {a, bOperand})
    if (Operation *def = operand.getDefiningOp();
        def && isa<LocalLoadOp>(def) && def->use_empty())
      def->erase();
}

struct OptimizeDotOperandsPass
    : public tilegpu::impl::TileGPUOptimizeDotOperandsBase<
          OptimizeDotOperandsPass> {
  void runOnOperation() override {
    if (failed(verifyLaidOut(getOperation(), getArgument())))
      return signalPassFailure();
    SmallVector<ConvertLayoutOp> converts;
    getOperation().walk([&](ConvertLayoutOp op) { converts.push_back(op); });
    for (ConvertLayoutOp convert : converts)
      stageThroughSharedMemory(convert);
    shareIdenticalBuffers(getOperation());
    SmallVector<tile::DotOp> dots;
    getOperation().walk([&](tile::DotOp op) { dots.push_back(op); });
    for (tile::DotOp dot : dots)
      splitAlongK(dot);
  }
};

} // namespace
