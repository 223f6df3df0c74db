//===- OverlapProducts.cpp - The next product issued before the carried one
//===//
//
// Attention's inner loop computes two products an iteration:
//
//   for j:
//     s = warpgroup_dot(q, k_j, 0)          the independent product
//     p, m, l = softmax(s, m, l)            work on its result
//     acc = warpgroup_dot(p, v_j, g(acc))   the carried product (g: rescale)
//
// and the tensor cores idle while the softmax runs. This pass splits the
// body in two stages: stage 1 is the carried product and what only it
// needs (the ops on its accumulator's path, the loads of operands no other
// op reads); stage 0 is the rest. Iteration j of the new loop runs stage 0
// of iteration j + 1 and stage 1 of iteration j, in this order:
//
//   s' = warpgroup_dot(q, k_{j+1}, 0) {is_async}
//   acc = warpgroup_dot_wait acc {pendings = 1}     product of j - 1 done
//   acc = warpgroup_dot(p_j, v_j, g(acc)) {is_async}
//   s' = warpgroup_dot_wait s' {pendings = 1}       s' done, acc running
//   p_{j+1}, m, l = softmax(s', m, l)                beside the product
//
// which is FlashAttention-3's overlap of softmax and products within a
// warpgroup. wgmma groups finish in order, so s' must be issued before the
// carried product for its wait to leave that product running. Stage 0 of
// the first iteration runs before the loop and stage 1 of the last after
// it, both under `lb < ub`; the values stage 1 reads from stage 0 are
// carried one iteration (ops of loop-invariant operands are recomputed
// instead). An scf.if that yields both the accumulator and stage-0 values
// (the lazy rescale) is split in two first. Where P reaches the carried
// product through shared memory (the fp8 forward), the carried product is
// waited for before stage 0 stores the next P over it.
//
//===----------------------------------------------------------------------===//

#include "tile/Analysis/Barriers.h"
#include "tile/Dialect/Tile/IR/Tile.h"
#include "tile/Dialect/TileGPU/IR/TileGPU.h"
#include "tile/Dialect/TileGPU/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"

namespace mlir::tilegpu {
#define GEN_PASS_DEF_TILEGPUOVERLAPPRODUCTS
#include "tile/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace mlir::tilegpu

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

/// The values of `body` (nested regions included) that depend on `root`,
/// the loop-carried value of iter_arg `index`; fails when one flows into
/// another iter_arg or into an op with regions other than scf.if.
FailureOr<DenseSet<Value>> findDependents(scf::ForOp loop, unsigned index) {
  DenseSet<Value> dependents;
  dependents.insert(loop.getRegionIterArgs()[index]);
  bool unsupported = false;
  std::function<void(Block &)> walk = [&](Block &block) {
    for (Operation &op : block) {
      if (auto branch = dyn_cast<scf::IfOp>(op)) {
        for (Region &region : branch->getRegions())
          for (Block &nested : region)
            walk(nested);
        for (unsigned i = 0; i < branch.getNumResults(); ++i) {
          bool depends = llvm::any_of(branch->getRegions(), [&](Region &r) {
            return !r.empty() && dependents.contains(
                                     r.front().getTerminator()->getOperand(i));
          });
          if (depends)
            dependents.insert(branch.getResult(i));
        }
        continue;
      }
      bool depends = llvm::any_of(
          op.getOperands(), [&](Value v) { return dependents.contains(v); });
      if (op.getNumRegions() != 0) {
        // Values used inside from above count too.
        op.walk([&](Operation *nested) {
          for (Value v : nested->getOperands())
            depends |= dependents.contains(v);
        });
        if (depends && !isa<scf::YieldOp>(op))
          unsupported = true;
      }
      if (depends)
        for (Value result : op.getResults())
          dependents.insert(result);
    }
  };
  walk(*loop.getBody());
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  for (auto [i, value] : llvm::enumerate(yield.getOperands()))
    if (i != index && dependents.contains(value))
      unsupported = true;
  if (unsupported)
    return failure();
  return dependents;
}

/// Removes ops of `region` whose results are unused and that have no
/// effects, the last first.
void eraseDeadOps(Region &region) {
  for (Block &block : region)
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
      if (op.use_empty() && isMemoryEffectFree(&op) &&
          !op.hasTrait<OpTrait::IsTerminator>())
        op.erase();
}

/// A copy of `branch` that yields only the results `keep` selects.
scf::IfOp cloneWithResults(OpBuilder &b, scf::IfOp branch,
                           ArrayRef<unsigned> keep) {
  SmallVector<Type> types;
  for (unsigned i : keep)
    types.push_back(branch.getResult(i).getType());
  auto copy =
      scf::IfOp::create(b, branch.getLoc(), types, branch.getCondition(),
                        /*withElseRegion=*/!branch.getElseRegion().empty());
  for (auto [from, to] : llvm::zip(branch->getRegions(), copy->getRegions())) {
    if (from.empty())
      continue;
    Block &dest = to.front();
    dest.clear();
    IRMapping mapping;
    OpBuilder inner = OpBuilder::atBlockEnd(&dest);
    for (Operation &op : from.front().without_terminator())
      inner.clone(op, mapping);
    SmallVector<Value> yielded;
    for (unsigned i : keep)
      yielded.push_back(
          mapping.lookupOrDefault(from.front().getTerminator()->getOperand(i)));
    scf::YieldOp::create(inner, branch.getLoc(), yielded);
    eraseDeadOps(to);
  }
  return copy;
}

/// Splits each scf.if of `loop`'s body that yields values depending on
/// iter_arg `index` beside values that do not, in two. Returns whether any
/// was split.
bool splitMixedBranches(scf::ForOp loop, const DenseSet<Value> &dependents) {
  bool split = false;
  for (auto branch :
       llvm::make_early_inc_range(loop.getBody()->getOps<scf::IfOp>())) {
    SmallVector<unsigned> dependent, independent;
    for (auto [i, result] : llvm::enumerate(branch.getResults()))
      (dependents.contains(result) ? dependent : independent).push_back(i);
    if (dependent.empty() || independent.empty())
      continue;
    OpBuilder b(branch);
    scf::IfOp first = cloneWithResults(b, branch, independent);
    scf::IfOp second = cloneWithResults(b, branch, dependent);
    for (auto [i, r] : llvm::enumerate(independent))
      branch.getResult(r).replaceAllUsesWith(first.getResult(i));
    for (auto [i, r] : llvm::enumerate(dependent))
      branch.getResult(r).replaceAllUsesWith(second.getResult(i));
    branch.erase();
    split = true;
  }
  return split;
}

/// The op of `body` that `value` is defined by or, for a value defined in a
/// nested region, the body's op that holds it; null for values from outside
/// and the body's arguments.
Operation *getBodyOp(Block *body, Value value) {
  Operation *def = value.getDefiningOp();
  return def ? body->findAncestorOpInBlock(*def) : nullptr;
}

/// The values `op` reads, those its nested regions read from above included.
SmallVector<Value> getReadValues(Operation *op) {
  SmallVector<Value> values(op->getOperands());
  if (op->getNumRegions() != 0) {
    llvm::SetVector<Value> above;
    getUsedValuesDefinedAbove(op->getRegions(), above);
    values.append(above.begin(), above.end());
  }
  return values;
}

/// How a loop is split in two stages.
struct StagePlan {
  WarpGroupDotOp independent, carried;
  /// Ops of the body in stage 0; the others (but the yield) are stage 1.
  DenseSet<Operation *> stage0;
  /// Whether each iter_arg is stage 0's state.
  SmallVector<bool> stage0Arg;
  /// Values stage 1 reads from stage 0 (results of its ops, its iter_args).
  SmallVector<Value> crossing;
  /// Stage 0's stores into buffers the carried product reads (P through
  /// shared memory): the next iteration's store would overwrite what the
  /// product, still running, reads, so it waits for the product first.
  DenseSet<Operation *> carriedOperandStores;
  bool readsInductionVar = false;
};

/// Whether `value`, read in `loop`'s body, can be recomputed from values
/// defined before the loop rather than carried.
bool isRecomputable(scf::ForOp loop, Value value) {
  if (loop.isDefinedOutsideOfLoop(value))
    return true;
  Operation *def = value.getDefiningOp();
  if (!def || def->getBlock() != loop.getBody() || def->getNumRegions() != 0 ||
      !isMemoryEffectFree(def))
    return false;
  return llvm::all_of(def->getOperands(),
                      [&](Value v) { return isRecomputable(loop, v); });
}

/// Splits `loop` in two stages around its carried product, or fails when
/// the loop is not one to overlap.
FailureOr<StagePlan> planStages(scf::ForOp loop) {
  Block *body = loop.getBody();
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  StagePlan plan;
  // The carried product: a warpgroup_dot whose result is yielded into the
  // iter_arg its accumulator derives from.
  std::optional<unsigned> accIndex;
  for (auto dot : body->getOps<WarpGroupDotOp>()) {
    if (dot.getIsAsync() || !dot->hasOneUse() ||
        dot->use_begin()->getOwner() != yield)
      continue;
    unsigned index = dot->use_begin()->getOperandNumber();
    FailureOr<DenseSet<Value>> dependents = findDependents(loop, index);
    if (failed(dependents) || !dependents->contains(dot.getC()))
      continue;
    if (splitMixedBranches(loop, *dependents))
      dependents = findDependents(loop, index);
    if (failed(dependents))
      return failure();
    plan.carried = dot;
    accIndex = index;
    // Every user of the accumulator's path must be on it.
    for (Operation &op : body->without_terminator()) {
      bool dependent = llvm::any_of(
          op.getResults(), [&](Value r) { return dependents->contains(r); });
      for (Value v : getReadValues(&op))
        if (dependents->contains(v) && !dependent)
          return failure();
    }
    break;
  }
  if (!plan.carried)
    return failure();
  // The independent product: the one other warpgroup_dot, into a fresh
  // accumulator, whose work feeds the carried product's A.
  for (auto dot : body->getOps<WarpGroupDotOp>()) {
    if (dot == plan.carried)
      continue;
    if (plan.independent || dot.getIsAsync() ||
        !loop.isDefinedOutsideOfLoop(dot.getC()))
      return failure();
    plan.independent = dot;
  }
  if (!plan.independent)
    return failure();
  // Stage 0: the independent product, what depends on it off the
  // accumulator's path, and everything those need (across iterations too).
  FailureOr<DenseSet<Value>> dependents = findDependents(loop, *accIndex);
  if (failed(dependents))
    return failure();
  SmallVector<Operation *> worklist{plan.independent};
  auto add = [&](Operation *op) {
    if (op && op != yield && plan.stage0.insert(op).second)
      worklist.push_back(op);
  };
  plan.stage0.insert(plan.independent);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    for (Value v : getReadValues(op)) {
      if (dependents->contains(v))
        return failure(); // stage 0 would read the accumulator
      if (auto arg = dyn_cast<BlockArgument>(v);
          arg && arg.getOwner() == body && arg != loop.getInductionVar())
        add(getBodyOp(body, yield.getOperand(arg.getArgNumber() - 1)));
      else
        add(getBodyOp(body, v));
    }
    for (Value result : op->getResults())
      for (Operation *user : result.getUsers()) {
        Operation *bodyUser = body->findAncestorOpInBlock(*user);
        bool dependent = llvm::any_of(bodyUser->getResults(), [&](Value r) {
          return dependents->contains(r);
        });
        if (!dependent)
          add(bodyUser);
      }
  }
  if (plan.stage0.contains(plan.carried) ||
      !plan.stage0.contains(plan.carried.getA().getDefiningOp()))
    return failure();
  // A row broadcast only stage 1 reads (the rescale of the accumulator)
  // moves to stage 1, which then reads the row: a tile crossing the
  // iteration would be carried in a register an element.
  for (bool moved = true; moved;) {
    moved = false;
    for (Operation &op : *body) {
      if (!isa<tile::BroadcastOp, tile::ExpandDimsOp>(op) ||
          !plan.stage0.contains(&op))
        continue;
      bool stage1Only = llvm::all_of(op.getUsers(), [&](Operation *user) {
        Operation *bodyUser = body->findAncestorOpInBlock(*user);
        return bodyUser != yield && !plan.stage0.contains(bodyUser);
      });
      if (stage1Only && !op.use_empty()) {
        plan.stage0.erase(&op);
        moved = true;
      }
    }
  }
  // Iter_args: stage 1's are those whose next value stage 1 makes.
  for (auto [i, next] : llvm::enumerate(yield.getOperands())) {
    Operation *def = getBodyOp(body, next);
    plan.stage0Arg.push_back(!def || plan.stage0.contains(def));
  }
  if (plan.stage0Arg[*accIndex])
    return failure();
  // What stage 1 reads from stage 0.
  llvm::SetVector<Value> crossing;
  for (Operation &op : body->without_terminator()) {
    if (plan.stage0.contains(&op))
      continue;
    for (Value v : getReadValues(&op)) {
      if (v == loop.getInductionVar()) {
        plan.readsInductionVar = true;
        continue;
      }
      if (isRecomputable(loop, v) && !loop.isDefinedOutsideOfLoop(v))
        continue;
      auto arg = dyn_cast<BlockArgument>(v);
      if (arg && arg.getOwner() == body) {
        if (plan.stage0Arg[arg.getArgNumber() - 1])
          crossing.insert(v);
        continue;
      }
      Operation *def = getBodyOp(body, v);
      if (def && plan.stage0.contains(def))
        crossing.insert(v);
    }
  }
  // Stage 0 reads no value of stage 1 (its iter_args included).
  for (Operation *op : plan.stage0)
    for (Value v : getReadValues(op)) {
      auto arg = dyn_cast<BlockArgument>(v);
      if (arg && arg.getOwner() == body && arg != loop.getInductionVar() &&
          !plan.stage0Arg[arg.getArgNumber() - 1])
        return failure();
      Operation *def = getBodyOp(body, v);
      if (def && !plan.stage0.contains(def))
        return failure();
    }
  plan.crossing = crossing.takeVector();
  // A buffer the carried product reads and stage 0 stores: the store runs
  // after the independent product (the product is waited for before it),
  // never before, where it would overwrite the buffer before the carried
  // product, issued later in the new order, has read it.
  for (Value operand : {plan.carried.getA(), Value(plan.carried.getB())}) {
    if (!isa<MemDescType>(operand.getType()))
      continue;
    LocalAllocOp alloc = getViewedBuffer(operand);
    Operation *store =
        alloc && alloc.getSrc() ? body->findAncestorOpInBlock(*alloc) : nullptr;
    if (!store || !plan.stage0.contains(store))
      continue;
    if (store->isBeforeInBlock(plan.independent))
      return failure();
    plan.carriedOperandStores.insert(store);
  }
  return plan;
}

/// Clones the body ops of `ops` with `mapping`, recomputing the
/// loop-invariant values they read that `mapping` lacks.
void cloneStage(OpBuilder &b, scf::ForOp loop, ArrayRef<Operation *> ops,
                IRMapping &mapping) {
  std::function<void(Value)> recompute = [&](Value v) {
    if (mapping.contains(v) || loop.isDefinedOutsideOfLoop(v))
      return;
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != loop.getBody() || !isRecomputable(loop, v))
      return;
    for (Value operand : def->getOperands())
      recompute(operand);
    b.clone(*def, mapping);
  };
  for (Operation *op : ops) {
    for (Value v : getReadValues(op))
      recompute(v);
    b.clone(*op, mapping);
  }
}

/// Rewrites `loop` by `plan` (see the file's comment).
void overlap(scf::ForOp loop, StagePlan &plan) {
  Block *body = loop.getBody();
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  Location loc = loop.getLoc();
  Value iv = loop.getInductionVar();
  ValueRange args = loop.getRegionIterArgs();
  unsigned numArgs = args.size();

  SmallVector<Operation *> stage0Head, stage0Tail, stage1;
  bool afterIndependent = false;
  for (Operation &op : body->without_terminator()) {
    if (!plan.stage0.contains(&op)) {
      stage1.push_back(&op);
      continue;
    }
    (afterIndependent ? stage0Tail : stage0Head).push_back(&op);
    if (&op == plan.independent.getOperation())
      afterIndependent = true;
  }
  SmallVector<Operation *> stage0(stage0Head);
  stage0.append(stage0Tail);

  OpBuilder b(loop);
  Value lb = loop.getLowerBound(), ub = loop.getUpperBound(),
        step = loop.getStep();
  Value runs = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, lb, ub);
  auto guard = scf::IfOp::create(b, loc, loop.getResultTypes(), runs,
                                 /*withElseRegion=*/true);
  b.setInsertionPointToStart(&guard.getElseRegion().front());
  scf::YieldOp::create(b, loc, loop.getInitArgs());

  // Stage 0 of the first iteration.
  b.setInsertionPointToStart(&guard.getThenRegion().front());
  IRMapping prologue;
  prologue.map(iv, lb);
  for (unsigned i = 0; i < numArgs; ++i)
    if (plan.stage0Arg[i])
      prologue.map(args[i], loop.getInitArgs()[i]);
  cloneStage(b, loop, stage0, prologue);
  // Iter_args: stage 0's state after the iteration it ran, stage 1's
  // before the one it runs, and what stage 1 reads from stage 0.
  SmallVector<Value> inits;
  for (unsigned i = 0; i < numArgs; ++i)
    inits.push_back(plan.stage0Arg[i]
                        ? prologue.lookupOrDefault(yield.getOperand(i))
                        : loop.getInitArgs()[i]);
  for (Value v : plan.crossing)
    inits.push_back(prologue.lookupOrDefault(v));
  // Stage 0 runs iteration j + step: up to ub - step, or not at all where
  // that wraps around.
  Value lastStart = arith::SubIOp::create(b, loc, ub, step);
  Value wraps =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, lastStart, ub);
  Value steadyUb = arith::SelectOp::create(b, loc, wraps, lb, lastStart);
  auto steady =
      scf::ForOp::create(b, loc, lb, steadyUb, step, inits,
                         [](OpBuilder &, Location, Value, ValueRange) {});
  {
    Block *newBody = steady.getBody();
    OpBuilder in = OpBuilder::atBlockBegin(newBody);
    Value j = steady.getInductionVar();
    ValueRange newArgs = steady.getRegionIterArgs();
    IRMapping first, second;
    first.map(iv, arith::AddIOp::create(in, loc, j, step));
    second.map(iv, j);
    for (unsigned i = 0; i < numArgs; ++i)
      (plan.stage0Arg[i] ? first : second).map(args[i], newArgs[i]);
    for (auto [k, v] : llvm::enumerate(plan.crossing))
      second.map(v, newArgs[numArgs + k]);
    cloneStage(in, loop, stage0Head, first);
    auto independent =
        cast<WarpGroupDotOp>(first.lookup(plan.independent.getOperation()));
    independent.setIsAsync(true);
    cloneStage(in, loop, stage1, second);
    auto carried =
        cast<WarpGroupDotOp>(second.lookup(plan.carried.getOperation()));
    carried.setIsAsync(true);
    // The first product is done; the carried one runs on beside the rest of
    // stage 0 and is done before the iteration ends: ptxas serialises every
    // wgmma of a loop whose in-flight accumulator it cannot prove untouched
    // (C7514), which a product left running across the back edge is.
    Value s = independent.getResult();
    first.map(plan.independent.getResult(),
              WarpGroupDotWaitOp::create(in, loc, s.getType(), s,
                                         /*pendings=*/1));
    // The carried product is waited for before stage 0 stores a buffer it
    // reads, else at the iteration's end.
    auto firstStore = llvm::find_if(stage0Tail, [&](Operation *op) {
      return plan.carriedOperandStores.contains(op);
    });
    cloneStage(in, loop, ArrayRef(stage0Tail.begin(), firstStore), first);
    Value acc = carried.getResult();
    second.map(plan.carried.getResult(),
               WarpGroupDotWaitOp::create(in, loc, acc.getType(), acc,
                                          /*pendings=*/0));
    cloneStage(in, loop, ArrayRef(firstStore, stage0Tail.end()), first);
    SmallVector<Value> next;
    for (unsigned i = 0; i < numArgs; ++i)
      next.push_back((plan.stage0Arg[i] ? first : second)
                         .lookupOrDefault(yield.getOperand(i)));
    for (Value v : plan.crossing) {
      auto arg = dyn_cast<BlockArgument>(v);
      next.push_back(arg && arg.getOwner() == body
                         ? newArgs[arg.getArgNumber() - 1]
                         : first.lookup(v));
    }
    scf::YieldOp::create(in, loc, next);
  }

  // Stage 1 of the last iteration.
  IRMapping epilogue;
  ValueRange results = steady.getResults();
  for (unsigned i = 0; i < numArgs; ++i)
    if (!plan.stage0Arg[i])
      epilogue.map(args[i], results[i]);
  for (auto [k, v] : llvm::enumerate(plan.crossing))
    epilogue.map(v, results[numArgs + k]);
  if (plan.readsInductionVar) {
    // lb + (ub - lb - 1) / step * step, ub - lb - 1 unsigned as ub > lb.
    Value span = arith::SubIOp::create(
        b, loc, arith::SubIOp::create(b, loc, ub, lb),
        arith::ConstantOp::create(b, loc, b.getIntegerAttr(ub.getType(), 1)));
    Value count = arith::DivUIOp::create(b, loc, span, step);
    epilogue.map(
        iv, arith::AddIOp::create(b, loc, lb,
                                  arith::MulIOp::create(b, loc, count, step)));
  }
  cloneStage(b, loop, stage1, epilogue);
  SmallVector<Value> finals;
  for (unsigned i = 0; i < numArgs; ++i)
    finals.push_back(plan.stage0Arg[i]
                         ? results[i]
                         : epilogue.lookupOrDefault(yield.getOperand(i)));
  scf::YieldOp::create(b, loc, finals);
  loop.replaceAllUsesWith(guard.getResults());
  loop.erase();
}

struct OverlapProductsPass
    : public tilegpu::impl::TileGPUOverlapProductsBase<OverlapProductsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(verifyLaidOut(module, getArgument())))
      return signalPassFailure();
    SmallVector<scf::ForOp> loops;
    module.walk([&](scf::ForOp loop) {
      auto step = getConstantIntValue(loop.getStep());
      if (step && *step > 0 && loop.getBody()->getOps<scf::ForOp>().empty())
        loops.push_back(loop);
    });
    for (scf::ForOp loop : loops)
      if (FailureOr<StagePlan> plan = planStages(loop); succeeded(plan))
        overlap(loop, *plan);
  }
};

} // namespace
