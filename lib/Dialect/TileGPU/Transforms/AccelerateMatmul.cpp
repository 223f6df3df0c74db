//===- AccelerateMatmul.cpp - Matrix products on the tensor cores ---------===//

#include "tile/Dialect/Tile/IR/Tile.h"
#include "tile/Dialect/TileGPU/IR/LayoutPropagation.h"
#include "tile/Dialect/TileGPU/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "tile/Dialect/TileGPU/IR/TileGPU.h"
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
/// keep each element where it is (elementwise ops, layout conversions, and
/// the results of branches that yield it: a mask applied on some
/// iterations): such a dot can take the operand from the producer's
/// registers.
void collectChainedDots(Value value, SmallVectorImpl<tile::DotOp> &dots,
                        SmallPtrSetImpl<Operation *> &visited) {
  auto shape = cast<RankedTensorType>(value.getType()).getShape();
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (auto yield = dyn_cast<scf::YieldOp>(user)) {
      if (auto branch = dyn_cast<scf::IfOp>(yield->getParentOp()))
        collectChainedDots(branch.getResult(use.getOperandNumber()), dots,
                           visited);
      continue;
    }
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

/// Whether `value` reaches a dot as its A operand from another dot's result
/// through ops that keep each element in place (P in attention's P * V),
/// branches included: wgmma then takes it from the registers it is in.
bool comesFromDot(Value value) {
  SmallVector<Value> worklist{value};
  SmallPtrSet<Operation *, 16> visited;
  while (!worklist.empty()) {
    Value next = worklist.pop_back_val();
    Operation *def = next.getDefiningOp();
    if (auto branch = dyn_cast_or_null<scf::IfOp>(def)) {
      unsigned i = cast<OpResult>(next).getResultNumber();
      for (Region *region : {&branch.getThenRegion(), &branch.getElseRegion()})
        if (!region->empty())
          worklist.push_back(region->front().getTerminator()->getOperand(i));
      continue;
    }
    if (!def || !visited.insert(def).second)
      continue;
    if (isa<tile::DotOp, WarpGroupDotOp>(def))
      return true;
    if (def->getNumResults() == 1 &&
        (isElementwise(def) || isa<ConvertLayoutOp>(def)))
      for (Value operand : def->getOperands())
        if (isa<RankedTensorType>(operand.getType()))
          worklist.push_back(operand);
  }
  return false;
}

/// The wgmma layout of a dot's M x N result over `numWarps` warps, or null
/// when wgmma cannot take it: warpgroups down the rows while each gets a
/// 64-row slab (all of them, for a chain: its A operand then stays in
/// registers), the rest across the columns; one instruction as wide as a
/// warpgroup's columns, up to 256.
MmaEncodingAttr chooseWgmmaLayout(MLIRContext *ctx, unsigned numWarps,
                                  int64_t m, int64_t n, bool chained) {
  if (numWarps % 4 || m % 64)
    return {};
  int64_t groups = numWarps / 4;
  int64_t groupsM = std::min<int64_t>(groups, m / 64);
  if (chained && groupsM != groups)
    return {};
  int64_t groupsN = groups / groupsM;
  if (n % (8 * groupsN))
    return {};
  int64_t instrN = std::min<int64_t>(256, n / groupsN);
  if (!llvm::isPowerOf2_64(instrN) || m % (64 * groupsM))
    return {};
  return MmaEncodingAttr::get(ctx, 3,
                              {unsigned(4 * groupsM), unsigned(groupsN)},
                              {64u, unsigned(instrN)});
}

/// The order of the dimensions `value`'s registers run along, fastest
/// first: a blocked layout's, else row-major.
SmallVector<unsigned> getStorageOrder(Value value) {
  Attribute layout = cast<RankedTensorType>(value.getType()).getEncoding();
  if (auto blocked = dyn_cast<BlockedEncodingAttr>(layout))
    return llvm::to_vector(blocked.getOrder());
  return {1, 0};
}

/// The tile an operand's buffer is filled from: `value` seen through
/// conversions between blocked layouts, so that the buffer holds the tile
/// as it was loaded, and the load then feeds the buffer alone, as
/// tilegpu-pipeline wants.
Value getStoredTile(Value value) {
  while (auto convert = value.getDefiningOp<ConvertLayoutOp>()) {
    if (!isa<BlockedEncodingAttr>(convert.getSrc().getType().getEncoding()) ||
        !isa<BlockedEncodingAttr>(convert.getType().getEncoding()))
      break;
    value = convert.getSrc();
  }
  return value;
}

/// The nvmma_shared layout of the buffer `operand` is stored to: its
/// contiguous dimension kept contiguous, the widest swizzle that fits; where
/// that dimension is the product's M or N (dimension `mnDim` of the
/// operand), which a wgmma reads `mnStep` at a time in whole swizzle spans,
/// a span no wider than that.
NVMMASharedEncodingAttr getBufferLayout(Value operand, unsigned mnDim = 0,
                                        int64_t mnStep = INT64_MAX) {
  Value tile = getStoredTile(operand);
  auto type = cast<RankedTensorType>(tile.getType());
  SmallVector<int64_t> shape(type.getShape());
  SmallVector<unsigned> order = getStorageOrder(tile);
  if (order[0] == mnDim)
    shape[mnDim] = std::min(shape[mnDim], mnStep);
  return NVMMASharedEncodingAttr::getForMatrix(
      tile.getContext(), shape, type.getElementType().getIntOrFloatBitWidth(),
      order);
}

/// `value` stored into a new nvmma_shared buffer, right after the tile it is
/// filled from is computed: a loop-invariant operand (Q) is stored once,
/// before the loop. mnDim, mnStep: as for getBufferLayout.
Value storeForWgmma(Value value, unsigned mnDim, int64_t mnStep) {
  Value tile = getStoredTile(value);
  // A transposed tile (B loaded as [N, K]) is stored as it came and read
  // through a transposed view: its load then feeds the buffer alone, which
  // the pipeliner copies, and 8-bit B keeps k contiguous.
  if (auto trans = tile.getDefiningOp<tile::TransOp>();
      trans && trans.getOrder() == ArrayRef<int32_t>{1, 0}) {
    Value buffer = storeForWgmma(trans.getSrc(), 1 - mnDim, mnStep);
    auto type = cast<MemDescType>(buffer.getType());
    OpBuilder b(tile.getContext());
    b.setInsertionPointAfterValue(buffer);
    return MemDescTransOp::create(
        b, trans.getLoc(),
        MemDescType::get(
            tile.getContext(), {type.getShape()[1], type.getShape()[0]},
            type.getElementType(), type.getEncoding().getTransposed()),
        buffer);
  }
  auto type = cast<RankedTensorType>(tile.getType());
  OpBuilder b(tile.getContext());
  b.setInsertionPointAfterValue(tile);
  auto buffer = MemDescType::get(tile.getContext(), type.getShape(),
                                 type.getElementType(),
                                 getBufferLayout(tile, mnDim, mnStep));
  return LocalAllocOp::create(b, tile.getLoc(), buffer, tile);
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
    TargetAttr target = getTarget(module);
    bool hopper = target && target.getArch() == Arch::SM90a;
    // On sm_90a a function's dots run on wgmma when warpgroups can take
    // every one of them; else its 16-bit dots all keep mma.sync, since
    // mixing the two would convert between their layouts (a backward whose
    // 32-row dQ product kept mma.sync ran 15% slower than all on mma.sync).
    // 8-bit dots have only wgmma.
    DenseMap<Operation *, WarpgroupPlan> plans;
    DenseSet<Operation *> mmaSyncFunctions;
    if (hopper)
      for (tile::DotOp dot : dots) {
        if (std::optional<WarpgroupPlan> plan =
                planOnWarpgroups(dot, numWarps.getInt()))
          plans[dot] = *plan;
        else
          mmaSyncFunctions.insert(dot->getParentOfType<func::FuncOp>());
      }
    for (tile::DotOp dot : dots) {
      auto plan = plans.find(dot);
      if (plan != plans.end() &&
          (isFloat8(dot.getA().getType().getElementType()) ||
           !mmaSyncFunctions.contains(dot->getParentOfType<func::FuncOp>()))) {
        rewriteOnWarpgroups(dot, plan->second);
        continue;
      }
      if (failed(accelerate(dot, grids.lookup(dot))))
        return signalPassFailure();
    }
  }

  /// How wgmma takes a dot: the accumulator's layout, and whether A stays
  /// in the registers another dot left it in.
  struct WarpgroupPlan {
    MmaEncodingAttr layout;
    bool chained = false;
  };

  /// The plan for a dot wgmma takes: 16-bit operands, B (and A unless it
  /// comes from another dot) stored to nvmma_shared buffers; or 8-bit float
  /// ones, both stored with k contiguous (wgmma transposes 16-bit operands
  /// only). None otherwise.
  std::optional<WarpgroupPlan> planOnWarpgroups(tile::DotOp dot,
                                                unsigned numWarps) {
    auto aType = dot.getA().getType();
    auto cType = dot.getType();
    Type element = aType.getElementType();
    bool eightBit =
        isFloat8(element) && isFloat8(dot.getB().getType().getElementType());
    if (!(eightBit || element.isF16() || element.isBF16()) ||
        !cType.getElementType().isF32())
      return std::nullopt;
    int64_t m = cType.getDimSize(0), n = cType.getDimSize(1),
            k = aType.getDimSize(1);
    // A k wider than one 128-byte swizzle span must be a whole number of
    // spans.
    int64_t span = 1024 / element.getIntOrFloatBitWidth();
    if (k % getWarpGroupDotKStep(element) || (k > span && k % span))
      return std::nullopt;
    // 8-bit A always crosses shared memory: wgmma's 8-bit register
    // fragment is not the accumulator's.
    bool chained = !eightBit && comesFromDot(dot.getA());
    if (eightBit && (getBufferLayout(dot.getA()).getOrder()[0] != 1 ||
                     getBufferLayout(dot.getB()).getOrder()[0] != 0))
      return std::nullopt;
    MmaEncodingAttr mma =
        chooseWgmmaLayout(dot.getContext(), numWarps, m, n, chained);
    // A chained A whose rows are too few for every warpgroup (dQ = dS K of
    // a 64-query block on two warpgroups, each holding half of dS's
    // columns) crosses shared memory instead.
    if (!mma && chained) {
      chained = false;
      mma = chooseWgmmaLayout(dot.getContext(), numWarps, m, n, chained);
    }
    if (!mma)
      return std::nullopt;
    // An operand whose M or N is contiguous is read in whole spans.
    auto spanFits = [&](Value operand, unsigned mnDim, int64_t step) {
      NVMMASharedEncodingAttr layout = getBufferLayout(operand, mnDim, step);
      return layout.getOrder()[0] != mnDim ||
             step % layout.getRowLength({}) == 0;
    };
    if (!spanFits(dot.getB(), 1, mma.getInstrShape()[1]) ||
        (!chained && !spanFits(dot.getA(), 0, 64)))
      return std::nullopt;
    return WarpgroupPlan{mma, chained};
  }

  /// The dot as tilegpu.warpgroup_dot, as `plan` says.
  void rewriteOnWarpgroups(tile::DotOp dot, const WarpgroupPlan &plan) {
    auto aType = dot.getA().getType();
    auto cType = dot.getType();
    MLIRContext *ctx = dot.getContext();
    OpBuilder b(dot);
    Location loc = dot.getLoc();
    Value a = plan.chained ? ConvertLayoutOp::create(
                                 b, loc,
                                 withLayout(aType, DotOperandEncodingAttr::get(
                                                       ctx, 0, plan.layout, 2)),
                                 dot.getA())
                           : storeForWgmma(dot.getA(), 0, 64);
    Value bBuffer =
        storeForWgmma(dot.getB(), 1, plan.layout.getInstrShape()[1]);
    Value acc = ConvertLayoutOp::create(b, loc, withLayout(cType, plan.layout),
                                        dot.getAcc());
    auto product = WarpGroupDotOp::create(
        b, loc, withLayout(cType, plan.layout), a, bBuffer, acc);
    Value back = ConvertLayoutOp::create(b, loc, cType, product.getResult());
    Value aOriginal = dot.getA(), bOriginal = dot.getB();
    dot.replaceAllUsesWith(back);
    dot.erase();
    // Conversions the buffers were stored around are left unused.
    for (Value operand : {aOriginal, bOriginal})
      while (auto convert = operand.getDefiningOp<ConvertLayoutOp>()) {
        if (!convert->use_empty())
          break;
        operand = convert.getSrc();
        convert.erase();
      }
  }

  LogicalResult accelerate(tile::DotOp dot, ArrayRef<unsigned> warps) {
    auto aType = dot.getA().getType();
    auto cType = dot.getType();
    if (isa<MmaEncodingAttr>(cType.getEncoding()))
      return success(); // already on the tensor cores
    Type element = aType.getElementType();
    if (isFloat8(element))
      return dot.emitError()
             << "tile.dot of float8 operands runs on sm_90a's wgmma, with "
                "A's rows and B's columns contiguous (B loaded as an [N, K] "
                "tile and transposed: tl.dot(a, tl.trans(b))), "
                "M a multiple of 64 and K of 32; this one is "
             << kUnsupportedOnGPU;
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
