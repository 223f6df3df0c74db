//===- RemoveLayoutConversions.cpp - Compute where the data already is ----===//
//
// convert-tile-to-tilegpu lays every tile out in a blocked layout, and
// accelerate-matmul converts each dot's result from its mma layout back to
// it. Every such conversion goes through shared memory. This pass removes
// them in three steps:
//
// 1. Forward propagation. The mma layout of a dot result (tile.dot or
//    tilegpu.warpgroup_dot), then, where none has reached, the vector
//    layout of a load tilegpu-coalesce vectorised, flows to the ops
//    that consume it, by the rules of LayoutPropagation.h: elementwise ops,
//    reductions (as its slice), expand_dims and broadcast, and the values
//    scf.for, scf.if and scf.while carry. The first layout to reach a value
//    wins; ops that take no part (memory accesses, dots, ops whose rule
//    cannot take the layout, such as trans) get a conversion back to what
//    they had; a local_alloc stores from the layout that reaches it where
//    that writes vectors as wide. A broadcast does not take a layout that
//    would repeat its tile's elements in a thread's registers (a tile
//    narrower than the layout's span).
// 2. Backward rematerialization. A conversion whose source is index
//    arithmetic built from constants, splats and ranges is replaced by that
//    arithmetic rebuilt in the layout wanted; so is a row loaded from memory
//    and wanted in a slice layout (it is read again there, where it was
//    read); so is a tile broadcast from a row of values (softmax
//    statistics), whose row alone is converted. A value a loop carries and
//    converts each iteration is carried in the layout wanted when what each
//    iteration yields can be rebuilt there (a row loaded a step ahead).
//    A tile loaded for the next iteration and carried converted is
//    carried as loaded, converted at the top of the next iteration, so
//    that the conversion does not wait for the load.
// 3. Hoisting. A conversion of a value defined outside a loop moves out of
//    the loop, so that it runs once.
//
//===----------------------------------------------------------------------===//

#include "tile/Dialect/Tile/IR/Tile.h"
#include "tile/Dialect/TileGPU/IR/LayoutPropagation.h"
#include "tile/Dialect/TileGPU/IR/TileGPU.h"
#include "tile/Dialect/TileGPU/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/ADT/DenseSet.h"
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

/// Whether forward propagation moves `op` to the layouts reaching its
/// operands, as its rule says: not a memory access, whose layout decides how
/// it coalesces, nor a dot, whose operand layouts accelerate-matmul chose.
bool followsOperands(Operation *op) {
  return isMemoryEffectFree(op) && !isa<tile::DotOp>(op);
}

/// The layouts of `op`'s results, null where a result has none.
SmallVector<Attribute> resultLayouts(Operation *op) {
  return llvm::map_to_vector(op->getResults(), encodingOf);
}

/// Gives the value `loop` carries in `arg` the type `newType`, its init
/// and yielded values already of it: the loop's result too, converted back
/// after the loop for the users it has.
void setCarriedType(scf::ForOp loop, BlockArgument arg, Type newType) {
  Type oldType = arg.getType();
  arg.setType(newType);
  OpResult result = loop.getTiedLoopResult(arg);
  result.setType(newType);
  if (result.use_empty())
    return;
  OpBuilder b(loop->getContext());
  b.setInsertionPointAfter(loop);
  auto back = ConvertLayoutOp::create(b, loop.getLoc(), oldType, result);
  result.replaceAllUsesExcept(back, back);
}

//===----------------------------------------------------------------------===//
// Step 1: forward propagation
//===----------------------------------------------------------------------===//

class ForwardPropagation {
public:
  /// Spreads the mma layout of every dot result, dots in program order;
  /// then, to what they have not reached, the vector layout of every load
  /// tilegpu-coalesce vectorised (a softmax row computed where it was
  /// loaded, not moved through shared memory first).
  void propagate(func::FuncOp func) {
    SmallVector<std::pair<Value, Attribute>> loads;
    func.walk([&](Operation *op) {
      if (isa<tile::DotOp, WarpGroupDotOp>(op) &&
          isa<MmaEncodingAttr>(encodingOf(op->getResult(0))))
        worklist.push_back({op->getResult(0), encodingOf(op->getResult(0))});
      if (isa<tile::LoadOp>(op) &&
          op->hasAttr(TileGPUDialect::getVectorWidthAttrName()) &&
          isa_and_present<BlockedEncodingAttr>(encodingOf(op->getResult(0))))
        loads.push_back({op->getResult(0), encodingOf(op->getResult(0))});
    });
    // Popped last: every dot's layout has spread before a load's does.
    llvm::append_range(worklist, llvm::reverse(loads));
    std::rotate(worklist.begin(), worklist.end() - loads.size(),
                worklist.end());
    std::reverse(worklist.begin() + loads.size(), worklist.end());
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
    if (auto convert = dyn_cast<ConvertLayoutOp>(user)) {
      if (isDefaultLayout(encodingOf(convert.getResult())))
        assign(convert.getResult(), layout);
      return;
    }
    SmallVector<Value> carried = getCarriedValues(use);
    for (Value value : carried)
      assign(value, layout);
    if (!carried.empty() || !followsOperands(user))
      return;
    SmallVector<Attribute> operands(user->getNumOperands());
    operands[use.getOperandNumber()] = layout;
    FailureOr<SmallVector<Attribute>> results =
        inferResultLayouts(user, operands);
    if (failed(results))
      return; // the op keeps its layout and gets a conversion
    for (auto [result, resultLayout] : llvm::zip(user->getResults(), *results))
      if (resultLayout && !repeatsBroadcast(user, result, resultLayout))
        assign(result, resultLayout);
  }

  /// Whether `layout` would hold the tile `op` broadcasts more than once
  /// (a tile narrower than the layout's span: an [M, 8] tile in a
  /// 128-column wgmma layout keeps each element in 16 registers). Such a
  /// broadcast keeps its layout, and whatever reaches its users next (the
  /// tile it scales, say) decides theirs; its row is converted instead.
  static bool repeatsBroadcast(Operation *op, Value result, Attribute layout) {
    if (!isa<tile::BroadcastOp>(op))
      return false;
    auto type = cast<RankedTensorType>(result.getType());
    return !getLinearLayout(RankedTensorType::get(
                                type.getShape(), type.getElementType(), layout))
                .isInjective();
  }

  /// Gives `op`'s operands the layouts it needs given its results': what
  /// the values carried by control flow have, what the rule of an op that
  /// follows its operands asks (a reduction to a scalar takes any), and
  /// otherwise the types they had.
  void legalize(Operation *op) {
    if (isa<ConvertLayoutOp>(op))
      return;
    if (auto alloc = dyn_cast<LocalAllocOp>(op);
        alloc && storesFromNewLayout(alloc))
      return;
    if (auto update = dyn_cast<tile::AtomicRMWBlockOp>(op);
        update && updatesFromNewLayout(update))
      return;
    bool carries = false;
    for (OpOperand &operand : op->getOpOperands()) {
      SmallVector<Value> carried = getCarriedValues(operand);
      if (carried.empty())
        continue;
      carries = true;
      require(operand, encodingOf(carried.front()));
    }
    if (carries)
      return;
    if (followsOperands(op)) {
      FailureOr<SmallVector<Attribute>> operands =
          inferOperandLayouts(op, resultLayouts(op));
      if (succeeded(operands)) {
        for (auto [operand, layout] : llvm::zip(op->getOpOperands(), *operands))
          require(operand, layout);
        return;
      }
    }
    for (OpOperand &operand : op->getOpOperands())
      if (auto it = oldTypes.find(operand.get()); it != oldTypes.end())
        require(operand, cast<RankedTensorType>(it->second).getEncoding());
  }

  /// Whether `alloc` stores its tile from the layout that reached it: a
  /// conversion back would cross shared memory itself (a store, a barrier,
  /// a load) before the store, so the tile is stored as it is unless that
  /// layout holds elements twice or writes narrower vectors than the one it
  /// had (dS^T in the backward, stored from the registers of its product).
  bool storesFromNewLayout(LocalAllocOp alloc) {
    Value src = alloc.getSrc();
    if (!src)
      return false;
    auto old = oldTypes.find(src);
    if (old == oldTypes.end())
      return false;
    LinearLayout now = getLinearLayout(cast<RankedTensorType>(src.getType()));
    LinearLayout before = getLinearLayout(cast<RankedTensorType>(old->second));
    return now.isInjective() &&
           getSharedStoreWidth(now, alloc.getType()) >=
               getSharedStoreWidth(before, alloc.getType());
  }

  /// Whether `update` adds its tile from the layout that reached it: where
  /// its block pointer is made for it alone, the pointer takes the layout
  /// (it costs nothing to lay out) instead of the tile crossing shared
  /// memory to the pointer's, unless the layout holds elements twice.
  bool updatesFromNewLayout(tile::AtomicRMWBlockOp update) {
    Value value = update.getValue();
    auto make = update.getPtr().getDefiningOp<tile::MakeBlockPtrOp>();
    if (!oldTypes.count(value) || !make || !make->hasOneUse())
      return false;
    auto type = cast<RankedTensorType>(value.getType());
    if (!getLinearLayout(type).isInjective())
      return false;
    make.getResult().setType(tile::BlockPtrType::get(type));
    return true;
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
    // Each value is examined once: a chain whose values feed several of its
    // ops (Philox's rounds) is examined in time linear in its length.
    auto key = std::make_tuple(value, layout, unsigned(belowExpand));
    if (rebuildable.contains(key))
      return true;
    if (!examineRebuildable(value, layout, depth, belowExpand))
      return false;
    rebuildable.insert(key);
    return true;
  }

  bool examineRebuildable(Value value, Attribute layout, unsigned depth,
                          bool belowExpand) {
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
    // Broadcasts, expand_dims and elementwise ops are computed again from
    // their operands, in the layouts their rules ask for.
    if (!isa<tile::BroadcastOp, tile::ExpandDimsOp>(def) && !isElementwise(def))
      return false;
    FailureOr<SmallVector<Attribute>> operands =
        inferOperandLayouts(def, {layout});
    bool expands = isa<tile::ExpandDimsOp>(def);
    return succeeded(operands) &&
           llvm::all_of(llvm::zip(def->getOperands(), *operands),
                        [&](auto operand) {
                          auto [value, operandLayout] = operand;
                          return !operandLayout ||
                                 isCheap(value, operandLayout, depth + 1,
                                         belowExpand || expands);
                        });
  }

  /// A row loaded from global memory (LSE, say) is read again in a slice
  /// layout, each thread loading the elements it holds, rather than moved
  /// through shared memory; its operands must be rebuildable in that layout
  /// (rebuild() places the copy right after the original read).
  bool isRereadableRow(tile::LoadOp load, Attribute layout, unsigned depth) {
    auto type = dyn_cast<RankedTensorType>(load.getType());
    if (!type || type.getRank() != 1 || !isa<SliceEncodingAttr>(layout))
      return false;
    FailureOr<SmallVector<Attribute>> operands =
        inferOperandLayouts(load, {layout});
    return succeeded(operands) &&
           llvm::all_of(llvm::zip(load->getOperands(), *operands),
                        [&](auto operand) {
                          auto [value, operandLayout] = operand;
                          return !operandLayout ||
                                 isRebuildable(value, operandLayout, depth + 1,
                                               /*belowExpand=*/false);
                        });
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
      // Read again right after the original read, where the program issues
      // it (a row loaded early hides its latency behind the work before its
      // use: the backward's LSE and DELTA, +2-5% at d128 on an H200), with
      // its operands rebuilt there too (a separate memo: what was rebuilt
      // later may not dominate the load).
      OpBuilder::InsertionGuard guard(b);
      DenseMap<std::pair<Value, Attribute>, Value> outer;
      b.setInsertionPointAfter(load);
      std::swap(outer, rebuilt);
      IRMapping mapping;
      rebuildOperands(load, layout, b, mapping);
      std::swap(outer, rebuilt);
      // The copy keeps the row's proven tilegpu.vector_width: the lowering
      // narrows it to the runs of the layout the row ends in.
      Operation *clone = b.clone(*load, mapping);
      clone->getResult(0).setType(withLayout(value.getType(), layout));
      result = clone->getResult(0);
    } else {
      IRMapping mapping;
      rebuildOperands(def, layout, b, mapping);
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

  /// Maps each laid-out operand of `def` to itself rebuilt in the layout
  /// `def`'s rule asks for to give its result in `layout`. Ops without a
  /// rule here make layouts (constants, splats, ranges): their operands are
  /// scalars.
  void rebuildOperands(Operation *def, Attribute layout, OpBuilder &b,
                       IRMapping &mapping) {
    FailureOr<SmallVector<Attribute>> operands =
        inferOperandLayouts(def, {layout});
    if (failed(operands))
      return;
    for (auto [operand, operandLayout] :
         llvm::zip(def->getOperands(), *operands))
      if (operandLayout)
        mapping.map(operand, rebuild(operand, operandLayout, b));
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
    SmallVector<tile::AtomicRMWOp> atomics;
    func.walk([&](tile::AtomicRMWOp op) { atomics.push_back(op); });
    for (tile::AtomicRMWOp atomic : atomics) {
      auto convert = atomic.getValue().getDefiningOp<ConvertLayoutOp>();
      if (!convert)
        continue;
      Attribute layout = encodingOf(convert.getSrc());
      auto tensor = dyn_cast<RankedTensorType>(convert.getSrc().getType());
      auto linear = dyn_cast_or_null<LayoutEncodingAttrInterface>(layout);
      if (!tensor || !linear ||
          !linear.toLinearLayout(tensor.getShape()).isInjective())
        continue;
      // What the atomic's rule asks of its pointers, mask and result once
      // its value is in that layout.
      OpOperand &value = atomic.getValueMutable();
      OpLayouts known{SmallVector<Attribute>(atomic->getNumOperands()),
                      {Attribute()}};
      known.operands[value.getOperandNumber()] = layout;
      FailureOr<OpLayouts> layouts = inferLayouts(atomic, known);
      if (failed(layouts))
        continue;
      auto others = llvm::zip(atomic->getOpOperands(), layouts->operands);
      if (!llvm::all_of(others, [&](auto other) {
            auto [operand, operandLayout] = other;
            return &operand == &value || !operandLayout ||
                   isRebuildable(operand.get(), operandLayout, 0, false);
          }))
        continue;
      narrowVectorWidth(atomic, linearLayoutOf(atomic.getPtr()),
                        linear.toLinearLayout(tensor.getShape()));
      OpBuilder b(atomic);
      rebuilt.clear();
      for (auto [operand, operandLayout] : others)
        if (&operand == &value)
          operand.set(convert.getSrc());
        else if (operandLayout)
          operand.set(rebuild(operand.get(), operandLayout, b));
      Type oldType = atomic.getType();
      atomic.getResult().setType(withLayout(oldType, layouts->results[0]));
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

  /// A value a loop carries (a row loaded a step ahead: LSE, say) and
  /// converts each iteration is carried in the layout converted to instead,
  /// when the value each iteration yields can be rebuilt there: the
  /// conversion in the loop goes, and the initial value is rebuilt (or
  /// converted, once) before the loop. The loop's result keeps the old
  /// layout by a conversion after the loop where it is used.
  bool carryInLayout(ConvertLayoutOp convert) {
    auto arg = dyn_cast<BlockArgument>(convert.getSrc());
    auto loop =
        arg ? dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp()) : nullptr;
    if (!loop || !arg.hasOneUse() || arg.getOwner() != loop.getBody() ||
        arg == loop.getInductionVar())
      return false;
    Attribute layout = encodingOf(convert.getResult());
    OpOperand *yielded = loop.getTiedLoopYieldedValue(arg);
    if (!isRebuildable(yielded->get(), layout, 0, /*belowExpand=*/false))
      return false;
    Type oldType = arg.getType(), newType = withLayout(oldType, layout);
    OpOperand *init = loop.getTiedLoopInit(arg);
    OpBuilder b(loop);
    rebuilt.clear();
    init->set(rebuild(init->get(), layout, b));
    b.setInsertionPoint(yielded->getOwner());
    rebuilt.clear();
    yielded->set(rebuild(yielded->get(), layout, b));
    setCarriedType(loop, arg, newType);
    convert.replaceAllUsesWith(arg);
    convert.erase();
    return true;
  }

  /// carryInLayout for each conversion of a value a loop carries; run after
  /// the chains of conversions are folded, so that the layout carried is the
  /// one finally wanted.
  void carryConvertedValues(func::FuncOp func) {
    SmallVector<ConvertLayoutOp> converts;
    func.walk([&](ConvertLayoutOp op) { converts.push_back(op); });
    for (ConvertLayoutOp convert : converts)
      carryInLayout(convert);
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
      rebuildable.clear();
      convert.replaceAllUsesWith(rebuild(convert.getSrc(), layout, b));
      convert.erase();
    }
  }

private:
  /// How deep index arithmetic may go: far enough for a counter-based
  /// random draw (Philox's ten rounds) on the indices, a dropout mask.
  static constexpr unsigned kMaxDepth = 128;
  DenseMap<std::pair<Value, Attribute>, Value> rebuilt;
  /// (value, layout, below an expand_dims) found rebuildable since the IR
  /// last changed.
  DenseSet<std::tuple<Value, Attribute, unsigned>> rebuildable;
};

/// A tile a loop loads for its next iteration (a step ahead, so that the
/// load's latency passes under this iteration's work) and carries converted
/// is carried in the layout it was loaded in instead: the conversion, which
/// crosses shared memory and so waits for the load, moves to the top of the
/// next iteration. The initial value is carried in that layout too (its
/// conversion's source where it has one), and the loop's result converted
/// back after the loop where it is used.
bool carryLoadedLayout(scf::ForOp loop, BlockArgument arg) {
  OpOperand *yielded = loop.getTiedLoopYieldedValue(arg);
  auto convert = yielded->get().getDefiningOp<ConvertLayoutOp>();
  if (!convert || convert->getBlock() != loop.getBody() ||
      !convert.getSrc().getDefiningOp<tile::LoadOp>())
    return false;
  Type oldType = arg.getType(), newType = convert.getSrc().getType();
  OpOperand *init = loop.getTiedLoopInit(arg);
  OpBuilder b(loop);
  auto initConvert = init->get().getDefiningOp<ConvertLayoutOp>();
  if (initConvert && initConvert.getSrc().getType() == newType)
    init->set(initConvert.getSrc());
  else
    init->set(ConvertLayoutOp::create(b, loop.getLoc(), newType, init->get()));
  yielded->set(convert.getSrc());
  if (convert->use_empty())
    convert.erase();
  setCarriedType(loop, arg, newType);
  b.setInsertionPointToStart(loop.getBody());
  auto atUse = ConvertLayoutOp::create(b, arg.getLoc(), oldType, arg);
  arg.replaceAllUsesExcept(atUse, atUse);
  return true;
}

void carryLoadedLayouts(func::FuncOp func) {
  func.walk([](scf::ForOp loop) {
    for (BlockArgument arg : loop.getRegionIterArgs())
      carryLoadedLayout(loop, arg);
  });
}

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
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      ForwardPropagation forward;
      forward.propagate(func);
      forward.rewrite(func);
      foldConversions(func);
      Rematerializer().run(func);
      Rematerializer().sinkIntoAtomics(func);
      foldConversions(func);
      Rematerializer().carryConvertedValues(func);
      carryLoadedLayouts(func);
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
