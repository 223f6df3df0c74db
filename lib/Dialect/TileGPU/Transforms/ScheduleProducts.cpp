//===- ScheduleProducts.cpp - Products issued early, waited for late ------===//
//
// A block with several warpgroup products (attention's backward step: S^T,
// dP^T, dV, dQ, dK) waits for each at once unless told otherwise, and the
// tensor cores idle while the work between products runs. This pass issues
// each product into a zero accumulator ("fresh": S^T, dP^T, dQ) as early as
// its operands allow, asynchronously, and waits for it where its result is
// first needed:
//
//   s  = warpgroup_dot(k, q, 0)   {is_async}
//   dp = warpgroup_dot(v, do, 0)  {is_async}    moved up, past the exp2
//   s  = warpgroup_dot_wait s  {pendings = 1}   dp still running
//   p  = exp2(s - lse)                          beside dp
//   dp = warpgroup_dot_wait dp {pendings = 0}
//
// wgmma groups finish in the order they were issued, so a wait's
// `pendings` counts the products issued after its own; a fresh product
// overtakes an earlier fresh one only when its result is needed first. A
// product moves up past ops that do not write shared memory (tile ops
// touch global memory only), taking along the pure ops that compute its
// operands; it stays below other products, nested regions and other
// writes, and below an op that writes a product's result to memory (dQ's
// atomic adds): its registers are free after that op, and a product issued
// before it would hold its own beside them (the d256 backward's two halves
// of dQ, each added before the next is made, spilled so). Products
// accumulating into a loop's sum (dV, dK) stay in place
// and run asynchronously too, waited for at their first use (the loop's
// yield): dV beside dS and dQ, dK beside dQ's atomic adds. Every product is
// waited for in its own block.
//
//===----------------------------------------------------------------------===//

#include "tile/Dialect/Tile/IR/Tile.h"
#include "tile/Dialect/TileGPU/IR/TileGPU.h"
#include "tile/Dialect/TileGPU/Transforms/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tilegpu {
#define GEN_PASS_DEF_TILEGPUSCHEDULEPRODUCTS
#include "tile/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace mlir::tilegpu

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

/// Whether a product may be issued before `op`: `op` holds no region and
/// no product or wait, and writes no shared memory.
bool canIssueBefore(Operation *op) {
  if (op->getNumRegions() || isa<WarpGroupDotOp, WarpGroupDotWaitOp>(op) ||
      op->hasTrait<OpTrait::IsTerminator>())
    return false;
  if (isa<tile::TileDialect>(op->getDialect()))
    return true;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return isPure(op);
  return !effects.hasEffect<MemoryEffects::Write>() &&
         !effects.hasEffect<MemoryEffects::Allocate>() &&
         !effects.hasEffect<MemoryEffects::Free>();
}

/// Whether `value` is computed in its block from a product's result by
/// ops without side effects (conversions, arithmetic).
bool isFromProduct(Value value) {
  SmallVector<Value> work{value};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || def->getBlock() != value.getParentBlock() ||
        !seen.insert(def).second)
      continue;
    if (isa<WarpGroupDotOp>(def))
      return true;
    if (isPure(def) && !def->getNumRegions())
      llvm::append_range(work, def->getOperands());
  }
  return false;
}

/// Whether `op` writes a product's result to memory: after it, that
/// result's registers are free.
bool storesProduct(Operation *op) {
  if (isPure(op) || isa<WarpGroupDotOp, WarpGroupDotWaitOp>(op))
    return false;
  return llvm::any_of(op->getOperands(), isFromProduct);
}

/// Whether `dot` starts from a zero accumulator (a score such as S^T or
/// dP^T, not a sum carried through the loop such as dV).
bool isFreshProduct(WarpGroupDotOp dot) {
  Value c = dot.getC();
  while (auto convert = c.getDefiningOp<ConvertLayoutOp>())
    c = convert.getSrc();
  return matchPattern(c, m_AnyZeroFloat());
}

/// The first op of `dot`'s block after it that uses its result, else the
/// block's terminator.
Operation *getFirstUse(WarpGroupDotOp dot) {
  Block *block = dot->getBlock();
  Operation *first = block->getTerminator();
  for (Operation *user : dot->getUsers())
    if (Operation *holder = block->findAncestorOpInBlock(*user);
        holder && holder->isBeforeInBlock(first))
      first = holder;
  return first;
}

/// Moves `dot` up its block as far as canIssueBefore and storesProduct allow,
/// with the pure ops between that compute its operands; past an earlier fresh
/// product too, when both are fresh and `dot`'s result is needed first.
void issueEarly(WarpGroupDotOp dot) {
  SmallVector<Operation *> moving{dot};
  llvm::SmallPtrSet<Operation *, 8> movingSet{dot};
  Operation *stop = nullptr;
  for (Operation *op = dot->getPrevNode(); op; op = op->getPrevNode()) {
    bool feeds = llvm::any_of(op->getUsers(), [&](Operation *user) {
      return movingSet.contains(user);
    });
    if (feeds && isPure(op) && !op->getNumRegions()) {
      moving.push_back(op);
      movingSet.insert(op);
      continue;
    }
    auto earlier = dyn_cast<WarpGroupDotOp>(op);
    bool overtakes = earlier && !feeds && isFreshProduct(dot) &&
                     isFreshProduct(earlier) &&
                     getFirstUse(dot)->isBeforeInBlock(getFirstUse(earlier));
    if (!overtakes && (feeds || !canIssueBefore(op) || storesProduct(op))) {
      stop = op;
      break;
    }
  }
  Block *block = dot->getBlock();
  // Original order, oldest first, placed right after `stop`.
  for (Operation *op : llvm::reverse(moving)) {
    if (stop)
      op->moveAfter(stop);
    else
      op->moveBefore(block, block->begin());
    stop = op;
  }
}

/// Makes `dot` asynchronous and waits for it right before the first op of
/// its block that uses its result, holds a product, or issues one that
/// waits for every group (a synchronous product).
void waitLate(WarpGroupDotOp dot) {
  dot.setIsAsync(true);
  Operation *before = getFirstUse(dot);
  unsigned issuedAfter = 0;
  std::optional<unsigned> settled; // groups in flight once `dot` is done
  for (Operation *op = dot->getNextNode(); op != before;
       op = op->getNextNode()) {
    bool nestsProduct =
        op->getNumRegions() &&
        op->walk([](Operation *nested) {
            return isa<WarpGroupDotOp, WarpGroupDotWaitOp>(nested)
                       ? WalkResult::interrupt()
                       : WalkResult::advance();
          }).wasInterrupted();
    auto later = dyn_cast<WarpGroupDotOp>(op);
    if (nestsProduct || (later && !later.getIsAsync())) {
      before = op;
      break;
    }
    if (later) {
      ++issuedAfter;
      if (settled)
        ++*settled;
    }
    // A wait that leaves at most issuedAfter groups in flight has finished
    // `dot`: count from it. (dV's wait asking for 2 in flight right after
    // dK's asked for none made ptxas serialise every wgmma: C7514.)
    if (auto earlier = dyn_cast<WarpGroupDotWaitOp>(op);
        earlier && earlier.getPendings() <= issuedAfter)
      settled = std::min(settled.value_or(issuedAfter), earlier.getPendings());
  }
  OpBuilder b(before);
  auto wait = WarpGroupDotWaitOp::create(b, dot.getLoc(), dot.getType(),
                                         dot.getResult(),
                                         settled.value_or(issuedAfter));
  dot.getResult().replaceAllUsesExcept(wait, wait);
}

/// The products of `block`, in block order: all are made asynchronous.
SmallVector<WarpGroupDotOp> getAsyncProducts(Block *block) {
  return llvm::to_vector(block->getOps<WarpGroupDotOp>());
}

struct ScheduleProductsPass
    : public tilegpu::impl::TileGPUScheduleProductsBase<ScheduleProductsPass> {
  void runOnOperation() override {
    // Blocks of two fresh products or more, none asynchronous yet (a loop
    // tilegpu-overlap-products rotated keeps its own schedule).
    SetVector<Block *> blocks;
    getOperation().walk([&](WarpGroupDotOp dot) {
      Block *block = dot->getBlock();
      if (!blocks.contains(block) &&
          llvm::count_if(block->getOps<WarpGroupDotOp>(), isFreshProduct) >= 2)
        blocks.insert(block);
    });
    for (Block *block : blocks) {
      bool scheduled = false;
      for (Operation &op : *block)
        scheduled |=
            isa<WarpGroupDotWaitOp>(op) ||
            (isa<WarpGroupDotOp>(op) && cast<WarpGroupDotOp>(op).getIsAsync());
      if (scheduled)
        continue;
      SmallVector<WarpGroupDotOp> fresh;
      for (WarpGroupDotOp dot : block->getOps<WarpGroupDotOp>())
        if (isFreshProduct(dot))
          fresh.push_back(dot);
      for (WarpGroupDotOp dot : fresh)
        issueEarly(dot);
      // In their new order: each wait counts the products issued after its
      // own, so all are asynchronous before the first wait is placed; the
      // last one's goes first, which the others' walks then meet.
      SmallVector<WarpGroupDotOp> async = getAsyncProducts(block);
      for (WarpGroupDotOp dot : async)
        dot.setIsAsync(true);
      for (WarpGroupDotOp dot : llvm::reverse(async))
        waitLate(dot);
    }
  }
};

} // namespace
