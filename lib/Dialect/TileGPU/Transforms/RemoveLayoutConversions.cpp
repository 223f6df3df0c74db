//===- RemoveLayoutConversions.cpp - Compute where the data already is ----===//
//
// convert-tile-to-tilegpu lays every tile out in a blocked layout, and
// accelerate-matmul converts each dot's result from its mma layout back to
// it. Every such conversion goes through shared memory. This pass removes
// them in three steps:
//
// 1. Forward propagation. The mma layout of a dot result flows to the ops
//    that consume it: elementwise ops, reductions (as its slice), expand_dims
//    and broadcast, loop-carried values of scf.for and results of scf.if. The
//    first layout to reach a value wins; ops that take no part (loads,
//    stores, trans, ...) get a conversion back to what they had.
// 2. Backward rematerialization. A conversion whose source is index
//    arithmetic built from constants, splats and ranges is replaced by that
//    arithmetic rebuilt in the layout wanted; so is a row loaded from memory
//    and wanted in a slice layout (it is read again there); so is a tile
//    broadcast from a row of values (softmax statistics), whose row alone is
//    converted.
// 3. Hoisting. A conversion of a value defined outside a loop moves out of
//    the loop, so that it runs once.
//
//===----------------------------------------------------------------------===//

#include "tile/Dialect/Tile/IR/Tile.h"
#include "tile/Dialect/TileGPU/IR/TileGPU.h"
#include "tile/Dialect/TileGPU/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/ADT/MapVector.h"

namespace mlir::tilegpu {
#define GEN_PASS_DEF_TILEGPUREMOVELAYOUTCONVERSIONS
#include "tile/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace mlir::tilegpu

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

Attribute encodingOf(Value value) {
  auto tensor = dyn_cast<RankedTensorType>(value.getType());
  return tensor ? tensor.getEncoding() : Attribute();
}

/// Ops that compute each element of their results from the same element of
/// their operands, so any layout serves if all tiles share it. Memory
/// accesses are excluded: their layout decides how they coalesce.
bool isElementwise(Operation *op) {
  if (isa<tile::LoadOp, tile::StoreOp>(op))
    return false;
  return op->hasTrait<OpTrait::Elementwise>() || isa<tile::AddPtrOp>(op);
}

//===----------------------------------------------------------------------===//
// Step 1: forward propagation
//===----------------------------------------------------------------------===//

class ForwardPropagation {
public:
  explicit ForwardPropagation(MLIRContext *ctx) : ctx(ctx) {}

  /// Spreads the mma layout of every dot result, dots in program order.
  void propagate(func::FuncOp func) {
    func.walk([&](tile::DotOp dot) {
      if (isa<MmaEncodingAttr>(encodingOf(dot.getResult())))
        worklist.push_back({dot.getResult(), encodingOf(dot.getResult())});
    });
    std::reverse(worklist.begin(), worklist.end());
    while (!worklist.empty()) {
      auto [value, layout] = worklist.pop_back_val();
      for (OpOperand &use : value.getUses())
        visitUse(use, layout);
    }
  }

  /// Gives the values their new layouts, then makes every op agree with its
  /// operands again by inserting conversions.
  void rewrite(func::FuncOp func) {
    for (auto &[value, layout] : layouts) {
      oldTypes[value] = value.getType();
      value.setType(withLayout(value.getType(), layout));
    }
    func.walk([&](Operation *op) { legalize(op); });
  }

  bool changedAnything() const { return !layouts.empty(); }

private:
  void assign(Value value, Attribute layout) {
    if (!isa<RankedTensorType>(value.getType()) || layouts.count(value) ||
        encodingOf(value) == layout)
      return;
    layouts[value] = layout;
    worklist.push_back({value, layout});
  }

  /// Blocked layouts (and their slices) are where tiles start, not what an
  /// op needs: a conversion to one is taken back when the data is elsewhere.
  static bool isDefaultLayout(Attribute layout) {
    if (auto slice = dyn_cast_if_present<SliceEncodingAttr>(layout))
      return isDefaultLayout(slice.getParent());
    return isa_and_present<BlockedEncodingAttr>(layout);
  }

  void visitUse(OpOperand &use, Attribute layout) {
    Operation *user = use.getOwner();
    auto tensor = cast<RankedTensorType>(use.get().getType());
    if (isElementwise(user)) {
      for (Value result : user->getResults())
        if (auto type = dyn_cast<RankedTensorType>(result.getType());
            type && type.getShape() == tensor.getShape())
          assign(result, layout);
      return;
    }
    if (auto reduce = dyn_cast<tile::ReduceOp>(user)) {
      if (isa<RankedTensorType>(reduce.getType()))
        assign(
            reduce.getResult(),
            SliceEncodingAttr::get(ctx, reduce.getAxis(),
                                   cast<LayoutEncodingAttrInterface>(layout)));
      return;
    }
    if (auto expand = dyn_cast<tile::ExpandDimsOp>(user)) {
      auto slice = dyn_cast<SliceEncodingAttr>(layout);
      if (slice && slice.getDim() == expand.getAxis())
        assign(expand.getResult(), slice.getParent());
      return;
    }
    if (auto broadcast = dyn_cast<tile::BroadcastOp>(user)) {
      assign(broadcast.getResult(), layout);
      return;
    }
    if (auto convert = dyn_cast<ConvertLayoutOp>(user)) {
      if (isDefaultLayout(encodingOf(convert.getResult())))
        assign(convert.getResult(), layout);
      return;
    }
    if (auto forOp = dyn_cast<scf::ForOp>(user)) {
      if (use.getOperandNumber() < forOp.getNumControlOperands())
        return;
      unsigned i = use.getOperandNumber() - forOp.getNumControlOperands();
      assign(forOp.getRegionIterArgs()[i], layout);
      assign(forOp.getResult(i), layout);
      return;
    }
    if (auto yield = dyn_cast<scf::YieldOp>(user)) {
      unsigned i = use.getOperandNumber();
      Operation *parent = yield->getParentOp();
      if (auto forOp = dyn_cast<scf::ForOp>(parent)) {
        assign(forOp.getRegionIterArgs()[i], layout);
        assign(forOp.getResult(i), layout);
      } else if (isa<scf::IfOp>(parent)) {
        assign(parent->getResult(i), layout);
      }
      return;
    }
    // Anything else keeps its layout and gets a conversion.
  }

  /// The layout `op` needs for each tensor operand, given its results'.
  void legalize(Operation *op) {
    if (isa<ConvertLayoutOp>(op))
      return;
    if (isElementwise(op)) {
      Attribute layout;
      for (Value result : op->getResults())
        if (auto encoding = encodingOf(result))
          layout = encoding;
      if (layout)
        for (OpOperand &operand : op->getOpOperands())
          require(operand, layout);
      return;
    }
    if (auto reduce = dyn_cast<tile::ReduceOp>(op)) {
      if (auto slice = dyn_cast_if_present<SliceEncodingAttr>(
              encodingOf(reduce.getResult())))
        require(reduce.getSrcMutable(), slice.getParent());
      return;
    }
    if (auto expand = dyn_cast<tile::ExpandDimsOp>(op)) {
      require(expand.getSrcMutable(),
              SliceEncodingAttr::get(ctx, expand.getAxis(),
                                     cast<LayoutEncodingAttrInterface>(
                                         encodingOf(expand.getResult()))));
      return;
    }
    if (auto broadcast = dyn_cast<tile::BroadcastOp>(op)) {
      require(broadcast.getSrcMutable(), encodingOf(broadcast.getResult()));
      return;
    }
    if (auto forOp = dyn_cast<scf::ForOp>(op)) {
      for (auto [init, arg] :
           llvm::zip(forOp.getInitArgsMutable(), forOp.getRegionIterArgs()))
        require(init, encodingOf(arg));
      return;
    }
    if (auto yield = dyn_cast<scf::YieldOp>(op)) {
      Operation *parent = yield->getParentOp();
      TypeRange expected = parent->getResultTypes();
      if (auto whileOp = dyn_cast<scf::WhileOp>(parent))
        expected = TypeRange(whileOp.getBeforeArguments());
      for (auto [operand, type] : llvm::zip(yield->getOpOperands(), expected))
        if (auto tensor = dyn_cast<RankedTensorType>(type))
          require(operand, tensor.getEncoding());
      return;
    }
    if (auto condition = dyn_cast<scf::ConditionOp>(op)) {
      auto whileOp = cast<scf::WhileOp>(condition->getParentOp());
      for (auto [operand, arg] :
           llvm::zip(condition.getArgsMutable(), whileOp.getAfterArguments()))
        require(operand, encodingOf(arg));
      return;
    }
    // Ops that took no part keep the types their operands had.
    for (OpOperand &operand : op->getOpOperands())
      if (auto it = oldTypes.find(operand.get()); it != oldTypes.end())
        require(operand, cast<RankedTensorType>(it->second).getEncoding());
  }

  void require(OpOperand &operand, Attribute layout) {
    Value value = operand.get();
    if (!layout || !isa<RankedTensorType>(value.getType()) ||
        encodingOf(value) == layout)
      return;
    OpBuilder b(operand.getOwner());
    operand.set(ConvertLayoutOp::create(
        b, value.getLoc(), withLayout(value.getType(), layout), value));
  }

  MLIRContext *ctx;
  llvm::MapVector<Value, Attribute> layouts;
  DenseMap<Value, Type> oldTypes;
  SmallVector<std::pair<Value, Attribute>> worklist;
};

//===----------------------------------------------------------------------===//
// Step 2: backward rematerialization
//===----------------------------------------------------------------------===//

/// Rebuilds values in another layout when they are cheap to compute there:
/// index arithmetic whose leaves are constants, splats of scalars and ranges.
class Rematerializer {
public:
  explicit Rematerializer(MLIRContext *ctx) : ctx(ctx) {}

  /// Whether `value` can be rebuilt in `layout`. Below an expand_dims
  /// (`belowExpand`), a 1-D value that cannot is converted itself: moving a
  /// row of statistics costs a fraction of moving the tile broadcast from it.
  bool isCheap(Value value, Attribute layout, unsigned depth = 0,
               bool belowExpand = false) {
    return isRebuildable(value, layout, depth, belowExpand) ||
           (belowExpand && isConvertibleRow(value));
  }

  bool isRebuildable(Value value, Attribute layout, unsigned depth,
                     bool belowExpand) {
    if (encodingOf(value) == layout)
      return true;
    Operation *def = value.getDefiningOp();
    if (!def || depth > kMaxDepth || def->getNumResults() != 1)
      return false;
    if (auto load = dyn_cast<tile::LoadOp>(def))
      return isRereadableRow(load, layout, depth);
    if (!isMemoryEffectFree(def))
      return false;
    if (isa<arith::ConstantOp, tile::SplatOp, tile::ArangeOp>(def))
      return true;
    if (auto convert = dyn_cast<ConvertLayoutOp>(def))
      return isCheap(convert.getSrc(), layout, depth + 1, belowExpand);
    if (auto broadcast = dyn_cast<tile::BroadcastOp>(def))
      return isCheap(broadcast.getSrc(), layout, depth + 1, belowExpand);
    if (auto expand = dyn_cast<tile::ExpandDimsOp>(def)) {
      auto parent = dyn_cast<LayoutEncodingAttrInterface>(layout);
      return parent && parent.getRank() >= 2 &&
             isCheap(expand.getSrc(),
                     SliceEncodingAttr::get(ctx, expand.getAxis(), parent),
                     depth + 1, /*belowExpand=*/true);
    }
    if (isElementwise(def))
      return llvm::all_of(def->getOperands(), [&](Value operand) {
        return !isa<RankedTensorType>(operand.getType()) ||
               isCheap(operand, layout, depth + 1, belowExpand);
      });
    return false;
  }

  /// A row loaded from global memory (LSE, say) is read again in a slice
  /// layout, each thread loading the elements it holds, rather than moved
  /// through shared memory; its operands must be rebuildable in that layout
  /// (rebuild() places the copy where no write can come between).
  bool isRereadableRow(tile::LoadOp load, Attribute layout, unsigned depth) {
    auto type = dyn_cast<RankedTensorType>(load.getType());
    if (!type || type.getRank() != 1 || !isa<SliceEncodingAttr>(layout))
      return false;
    return llvm::all_of(load->getOperands(), [&](Value operand) {
      return isRebuildable(operand, layout, depth + 1, /*belowExpand=*/false);
    });
  }

  /// Whether no op from just after `op` up to `point` (in `op`'s block)
  /// may write memory.
  static bool noWritesBetween(Operation *op, Block *block,
                              Block::iterator point) {
    if (block != op->getBlock())
      return false;
    for (auto it = std::next(op->getIterator()); it != point; ++it) {
      if (it == block->end())
        return false; // `point` comes before `op`
      if (mayWrite(&*it))
        return false;
    }
    return true;
  }

  /// Whether `op` (or an op nested in it) may have an effect other than
  /// reads.
  static bool mayWrite(Operation *op) {
    return op
        ->walk([](Operation *nested) {
          // libMLIR instantiates hasEffect for one effect type at a time.
          bool writes = mightHaveEffect<MemoryEffects::Write>(nested) ||
                        hasEffect<MemoryEffects::Allocate>(nested) ||
                        hasEffect<MemoryEffects::Free>(nested);
          return writes ? WalkResult::interrupt() : WalkResult::advance();
        })
        .wasInterrupted();
  }

  static bool isConvertibleRow(Value value) {
    auto tensor = dyn_cast<RankedTensorType>(value.getType());
    return tensor && tensor.getRank() == 1 && tensor.getEncoding();
  }

  /// `value` rebuilt in `layout` at `b`'s insertion point; isCheap must
  /// hold.
  Value rebuild(Value value, Attribute layout, OpBuilder &b) {
    if (encodingOf(value) == layout)
      return value;
    auto key = std::make_pair(value, layout);
    if (Value done = rebuilt.lookup(key))
      return done;
    Operation *def = value.getDefiningOp();
    Value result;
    if (!isRebuildable(value, layout, 0, /*belowExpand=*/true)) {
      // A row of values isCheap accepted for conversion.
      result = ConvertLayoutOp::create(
          b, value.getLoc(), withLayout(value.getType(), layout), value);
    } else if (auto convert = dyn_cast<ConvertLayoutOp>(def)) {
      result = rebuild(convert.getSrc(), layout, b);
    } else if (auto load = dyn_cast<tile::LoadOp>(def)) {
      // Read again where the value is wanted when nothing between may
      // write memory (the row is then live only from there), else right
      // after the original read, with its operands rebuilt there too (a
      // separate memo: what was rebuilt later may not dominate the load).
      OpBuilder::InsertionGuard guard(b);
      DenseMap<std::pair<Value, Attribute>, Value> outer;
      bool early =
          !noWritesBetween(load, b.getInsertionBlock(), b.getInsertionPoint());
      if (early) {
        b.setInsertionPointAfter(load);
        std::swap(outer, rebuilt);
      }
      IRMapping mapping;
      for (Value operand : load->getOperands())
        mapping.map(operand, rebuild(operand, layout, b));
      if (early)
        std::swap(outer, rebuilt);
      // The copy keeps the row's proven tilegpu.vector_width: the lowering
      // narrows it to the runs of the layout the row ends in.
      Operation *clone = b.clone(*load, mapping);
      clone->getResult(0).setType(withLayout(value.getType(), layout));
      result = clone->getResult(0);
    } else {
      IRMapping mapping;
      for (Value operand : def->getOperands()) {
        if (!isa<RankedTensorType>(operand.getType()))
          continue;
        Attribute operandLayout = layout;
        if (auto expand = dyn_cast<tile::ExpandDimsOp>(def))
          operandLayout = SliceEncodingAttr::get(
              ctx, expand.getAxis(), cast<LayoutEncodingAttrInterface>(layout));
        mapping.map(operand, rebuild(operand, operandLayout, b));
      }
      Operation *clone = b.clone(*def, mapping);
      clone->getResult(0).setType(withLayout(value.getType(), layout));
      if (auto constant = dyn_cast<arith::ConstantOp>(clone))
        constant.setValueAttr(
            cast<DenseElementsAttr>(constant.getValue())
                .reshape(cast<ShapedType>(constant.getResult().getType())));
      result = clone->getResult(0);
    }
    rebuilt[key] = result;
    return result;
  }

  static LinearLayout linearLayoutOf(Value value) {
    auto type = cast<RankedTensorType>(value.getType());
    return cast<LayoutEncodingAttrInterface>(type.getEncoding())
        .toLinearLayout(type.getShape());
  }

  /// Narrows the tilegpu.vector_width tilegpu-coalesce proved for `access`
  /// (consecutive registers along one dimension of layout `from`) to the
  /// run that layout `to` holds along the same dimension, or drops it.  The
  /// runs of a linear layout start at multiples of their length, so the
  /// alignment proved for the wider vector holds for the narrower one.  A
  /// row's width is kept whole: its dimension is not in doubt, and the
  /// lowering narrows it (getVectorWidth).
  static void narrowVectorWidth(Operation *access, const LinearLayout &from,
                                const LinearLayout &to) {
    auto width = access->getAttrOfType<IntegerAttr>(
        TileGPUDialect::getVectorWidthAttrName());
    if (!width || from.getRank() == 1)
      return;
    int64_t kept = 1;
    for (unsigned d = 0; d < from.getRank(); ++d)
      if (from.getRegisterRun(d) >= width.getInt())
        kept = std::min(width.getInt(), to.getRegisterRun(d));
    if (kept > 1)
      access->setAttr(TileGPUDialect::getVectorWidthAttrName(),
                      IntegerAttr::get(width.getType(), kept));
    else
      access->removeAttr(TileGPUDialect::getVectorWidthAttrName());
  }

  /// An atomic add of a converted tile adds from the tile's own layout
  /// when that layout holds each element once (the adds are scalar either
  /// way) and its pointers and mask can be rebuilt there: the conversion
  /// through shared memory goes.
  void sinkIntoAtomics(func::FuncOp func) {
    SmallVector<tile::AtomicAddOp> atomics;
    func.walk([&](tile::AtomicAddOp op) { atomics.push_back(op); });
    for (tile::AtomicAddOp atomic : atomics) {
      auto convert = atomic.getValue().getDefiningOp<ConvertLayoutOp>();
      if (!convert)
        continue;
      Attribute layout = encodingOf(convert.getSrc());
      auto tensor = dyn_cast<RankedTensorType>(convert.getSrc().getType());
      auto linear = dyn_cast_or_null<LayoutEncodingAttrInterface>(layout);
      if (!tensor || !linear ||
          !linear.toLinearLayout(tensor.getShape()).isInjective())
        continue;
      auto rebuildable = [&](Value operand) {
        return !operand || isRebuildable(operand, layout, 0, false);
      };
      if (!rebuildable(atomic.getPtr()) || !rebuildable(atomic.getMask()))
        continue;
      narrowVectorWidth(atomic, linearLayoutOf(atomic.getPtr()),
                        linear.toLinearLayout(tensor.getShape()));
      OpBuilder b(atomic);
      rebuilt.clear();
      atomic.getPtrMutable().set(rebuild(atomic.getPtr(), layout, b));
      if (atomic.getMask())
        atomic.getMaskMutable().assign(rebuild(atomic.getMask(), layout, b));
      atomic.getValueMutable().set(convert.getSrc());
      Type oldType = atomic.getType();
      atomic.getResult().setType(withLayout(oldType, layout));
      if (!atomic.getResult().use_empty()) {
        b.setInsertionPointAfter(atomic);
        auto back = ConvertLayoutOp::create(b, atomic.getLoc(), oldType,
                                            atomic.getResult());
        atomic.getResult().replaceAllUsesExcept(back, back);
      }
      if (convert->use_empty())
        convert.erase();
    }
  }

  /// Replaces each conversion of a cheap value by the value rebuilt.
  void run(func::FuncOp func) {
    SmallVector<ConvertLayoutOp> converts;
    func.walk([&](ConvertLayoutOp op) { converts.push_back(op); });
    for (ConvertLayoutOp convert : converts) {
      Attribute layout = encodingOf(convert.getResult());
      if (!isCheap(convert.getSrc(), layout))
        continue;
      OpBuilder b(convert);
      rebuilt.clear(); // values are rebuilt where this conversion was
      convert.replaceAllUsesWith(rebuild(convert.getSrc(), layout, b));
      convert.erase();
    }
  }

private:
  static constexpr unsigned kMaxDepth = 16;
  MLIRContext *ctx;
  DenseMap<std::pair<Value, Attribute>, Value> rebuilt;
};

//===----------------------------------------------------------------------===//
// Step 3: hoisting out of loops
//===----------------------------------------------------------------------===//

void hoistLoopInvariantConversions(func::FuncOp func) {
  SmallVector<ConvertLayoutOp> converts;
  func.walk([&](ConvertLayoutOp op) { converts.push_back(op); });
  for (ConvertLayoutOp convert : converts)
    while (auto loop = dyn_cast<scf::ForOp>(convert->getParentOp())) {
      if (!loop.isDefinedOutsideOfLoop(convert.getSrc()))
        break;
      convert->moveBefore(loop);
    }
}

struct RemoveLayoutConversionsPass
    : public tilegpu::impl::TileGPURemoveLayoutConversionsBase<
          RemoveLayoutConversionsPass> {
  void runOnOperation() override {
    if (failed(verifyLaidOut(getOperation(), getArgument())))
      return signalPassFailure();
    MLIRContext *ctx = &getContext();
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      ForwardPropagation forward(ctx);
      forward.propagate(func);
      forward.rewrite(func);
      foldConversions(func);
      Rematerializer(ctx).run(func);
      Rematerializer(ctx).sinkIntoAtomics(func);
      foldConversions(func);
      hoistLoopInvariantConversions(func);
    }
  }

  /// Folds conversions to the same layout and chains of conversions, and
  /// erases what became dead.
  void foldConversions(func::FuncOp func) {
    RewritePatternSet patterns(&getContext());
    ConvertLayoutOp::getCanonicalizationPatterns(patterns, &getContext());
    (void)applyPatternsGreedily(func, std::move(patterns));
  }
};

} // namespace
