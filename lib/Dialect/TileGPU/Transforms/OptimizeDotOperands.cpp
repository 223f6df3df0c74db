//===- OptimizeDotOperands.cpp - Operands through swizzled shared memory --===//
//
// A 16-bit dot operand converted from a blocked layout is stored once into
// a swizzled shared-memory buffer and read back with ldmatrix, and every
// such dot is split along k into 16-deep steps that each read only their
// slice of the operands just before their mma instructions. A warp then
// holds one k-slice of K or V at a time rather than the whole tile.
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

/// Replaces a conversion from a blocked layout to a 16-bit dot operand by a
/// store into shared memory and a read in the operand layout.
void stageThroughSharedMemory(ConvertLayoutOp convert) {
  auto srcType = convert.getSrc().getType();
  auto blocked = dyn_cast<BlockedEncodingAttr>(srcType.getEncoding());
  if (!blocked || srcType.getRank() != 2 ||
      !isSixteenBitOperand(convert.getType()))
    return;
  MLIRContext *ctx = convert.getContext();
  // The buffer keeps contiguous the dimension the registers hold
  // contiguously, so that the stores need no reordering.
  auto shared = SharedEncodingAttr::getForMatrixOperand(ctx, srcType.getShape(),
                                                        2, blocked.getOrder());
  auto bufferType = MemDescType::get(ctx, srcType.getShape(),
                                     srcType.getElementType(), shared);
  OpBuilder b(convert);
  Location loc = convert.getLoc();
  Value buffer = LocalAllocOp::create(b, loc, bufferType, convert.getSrc());
  Value operand = LocalLoadOp::create(b, loc, convert.getType(), buffer,
                                      b.getDenseI64ArrayAttr({0, 0}));
  convert.replaceAllUsesWith(operand);
  convert.erase();
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
    SmallVector<ConvertLayoutOp> converts;
    getOperation().walk([&](ConvertLayoutOp op) { converts.push_back(op); });
    for (ConvertLayoutOp convert : converts)
      stageThroughSharedMemory(convert);
    SmallVector<tile::DotOp> dots;
    getOperation().walk([&](tile::DotOp op) { dots.push_back(op); });
    for (tile::DotOp dot : dots)
      splitAlongK(dot);
  }
};

} // namespace
