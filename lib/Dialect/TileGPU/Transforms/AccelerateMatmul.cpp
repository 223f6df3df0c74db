//===- AccelerateMatmul.cpp - Matrix products on the tensor cores ---------===//

#include "tile/Dialect/Tile/IR/Tile.h"
#include "tile/Dialect/TileGPU/IR/LayoutPropagation.h"
#include "tile/Dialect/TileGPU/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/EquivalenceClasses.h"

namespace mlir::tilegpu {
#define GEN_PASS_DEF_TILEGPUACCELERATEMATMUL
#include "tile/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace mlir::tilegpu

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

/// The warp grid with the squarest warp tile: warps along the rows share
/// the B operand and warps along the columns the A operand, so of the grids
/// that give every warp at least one 16 x 8 tile this one reads the least
/// shared memory per mma. Warps left over hold copies along the rows.
SmallVector<unsigned> chooseBalancedWarps(unsigned numWarps, int64_t m,
                                          int64_t n) {
  unsigned wm = 1, wn = 1;
  while (wm * wn < numWarps) {
    bool rowsLeft = 16 * wm * 2 <= m, columnsLeft = 8 * wn * 2 <= n;
    if (rowsLeft && (!columnsLeft || m / wm >= n / wn))
      wm *= 2;
    else if (columnsLeft)
      wn *= 2;
    else
      break;
  }
  wm *= numWarps / (wm * wn);
  return {wm, wn};
}

/// Adds to `dots` those whose A operand `value` becomes through ops that
/// keep each element where it is (elementwise ops and layout conversions):
/// such a dot can take the operand from the producer's registers.
void collectChainedDots(Value value, SmallVectorImpl<tile::DotOp> &dots,
                        SmallPtrSetImpl<Operation *> &visited) {
  auto shape = cast<RankedTensorType>(value.getType()).getShape();
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (!visited.insert(user).second)
      continue;
    if (auto dot = dyn_cast<tile::DotOp>(user)) {
      if (use.getOperandNumber() == 0)
        dots.push_back(dot);
      continue;
    }
    if (user->getNumResults() != 1 ||
        !(isElementwise(user) || isa<ConvertLayoutOp>(user)))
      continue;
    auto type = dyn_cast<RankedTensorType>(user->getResult(0).getType());
    if (type && type.getShape() == shape)
      collectChainedDots(user->getResult(0), dots, visited);
  }
}

/// The warp grid of every dot in `module`. Dots chained through their A
/// operands (S and then P·V in attention) can hand the operand over in
/// registers only if every warp owns whole rows; such a chain keeps all
/// warps along the rows while that leaves each warp at least 32 rows, so
/// that each B fragment a warp reads feeds two mma. Shorter rows would
/// read every B operand once per 16 rows: there the chain gets balanced
/// grids and hands its operands over through shared memory instead.
DenseMap<Operation *, SmallVector<unsigned>>
chooseWarpGrids(ModuleOp module, unsigned numWarps) {
  llvm::EquivalenceClasses<Operation *> chains;
  module.walk([&](tile::DotOp dot) {
    chains.insert(dot);
    SmallVector<tile::DotOp> consumers;
    SmallPtrSet<Operation *, 16> visited;
    collectChainedDots(dot.getResult(), consumers, visited);
    for (tile::DotOp consumer : consumers)
      chains.unionSets(dot, consumer);
  });
  DenseMap<Operation *, SmallVector<unsigned>> grids;
  for (auto it = chains.begin(); it != chains.end(); ++it) {
    if (!(*it)->isLeader())
      continue;
    auto members =
        llvm::make_range(chains.member_begin(**it), chains.member_end());
    bool chained = std::next(members.begin()) != members.end();
    bool enoughRowsPerWarp = llvm::all_of(members, [&](Operation *dot) {
      return cast<tile::DotOp>(dot).getType().getDimSize(0) >=
             32 * int64_t(numWarps);
    });
    for (Operation *dot : members) {
      auto type = cast<tile::DotOp>(dot).getType();
      grids[dot] = chained && enoughRowsPerWarp
                       ? SmallVector<unsigned>{numWarps, 1}
                       : chooseBalancedWarps(numWarps, type.getDimSize(0),
                                             type.getDimSize(1));
    }
  }
  return grids;
}

struct AccelerateMatmulPass
    : public tilegpu::impl::TileGPUAccelerateMatmulBase<AccelerateMatmulPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(verifyLaidOut(module, getArgument())))
      return signalPassFailure();
    auto numWarps = module->getAttrOfType<IntegerAttr>(
        TileGPUDialect::getNumWarpsAttrName());
    auto grids = chooseWarpGrids(module, numWarps.getInt());
    SmallVector<tile::DotOp> dots;
    module.walk([&](tile::DotOp dot) { dots.push_back(dot); });
    for (tile::DotOp dot : dots)
      if (failed(accelerate(dot, grids.lookup(dot))))
        return signalPassFailure();
  }

  LogicalResult accelerate(tile::DotOp dot, ArrayRef<unsigned> warps) {
    auto aType = dot.getA().getType();
    auto cType = dot.getType();
    if (isa<MmaEncodingAttr>(cType.getEncoding()))
      return success(); // already on the tensor cores
    Type element = aType.getElementType();
    if (!element.isF16() && !element.isBF16() && !element.isF32())
      return dot.emitError()
             << "tile.dot runs on the tensor cores with f16, bf16 or f32 "
                "operands; "
             << element << " operands are " << kUnsupportedOnGPU;
    int64_t m = cType.getDimSize(0), n = cType.getDimSize(1),
            k = aType.getDimSize(1);
    if (m < 16 || n < 8 || k < 16)
      return dot.emitError() << "mma.sync needs M >= 16, N >= 8 and K >= 16; "
                                "this dot is "
                             << m << "x" << n << "x" << k;
    MLIRContext *ctx = dot.getContext();
    auto mma = MmaEncodingAttr::get(ctx, 2, warps);
    // The operand layouts an mma result asks for (a dot's rule in
    // LayoutPropagation.h); f16, bf16 and f32 operands have them.
    SmallVector<Attribute> operands = *inferOperandLayouts(dot, {mma});
    OpBuilder b(dot);
    Location loc = dot.getLoc();
    auto convert = [&](Value v, Attribute layout) -> Value {
      return ConvertLayoutOp::create(
          b, loc, withLayout(cast<RankedTensorType>(v.getType()), layout), v);
    };
    Value a = convert(dot.getA(), operands[0]);
    Value bOperand = convert(dot.getB(), operands[1]);
    Value acc = convert(dot.getAcc(), operands[2]);
    auto product =
        tile::DotOp::create(b, loc, withLayout(cType, mma), a, bOperand, acc);
    Value back = ConvertLayoutOp::create(b, loc, cType, product.getResult());
    dot.replaceAllUsesWith(back);
    dot.erase();
    return success();
  }
};

} // namespace
