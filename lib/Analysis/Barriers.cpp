//===- Barriers.cpp - Which shared-memory stores wait before writing ------===//

#include "tile/Analysis/Barriers.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

/// The buffer `memdesc` views (through transposes and stack indices), or
/// null when it cannot be told.
LocalAllocOp getViewedBuffer(Value memdesc) {
  while (Operation *def = memdesc.getDefiningOp()) {
    if (auto alloc = dyn_cast<LocalAllocOp>(def))
      return alloc;
    if (!isa<MemDescTransOp, MemDescIndexOp>(def))
      return {};
    memdesc = def->getOperand(0);
  }
  return {};
}

enum class Found { Nothing, Barrier, Access };

/// Walks back from a store towards the kernel's start, looking for what
/// comes first: a barrier, or an access to the memory `buffer` of the
/// store.
class WalkBack {
public:
  WalkBack(const SharedMemoryAllocation &allocation, SharedInterval buffer,
           Operation *function)
      : allocation(allocation), buffer(buffer) {
    if (function)
      function->walk([&](WarpGroupDotOp dot) {
        asyncReadsBuffer |= dot.getIsAsync() && readsBuffer(dot);
      });
  }

  /// Whether `memdesc` may view memory in the buffer.
  bool mayView(Value memdesc) const {
    LocalAllocOp alloc = getViewedBuffer(memdesc);
    if (!alloc)
      return true;
    std::optional<SharedInterval> placed = allocation.getInterval(alloc);
    return !placed || placed->overlaps(buffer);
  }

  /// Whether `dot` reads memory in the buffer.
  bool readsBuffer(WarpGroupDotOp dot) const {
    return mayView(dot.getB()) ||
           (isa<MemDescType>(dot.getA().getType()) && mayView(dot.getA()));
  }

  /// Whether every path from the kernel's start to `op` meets a barrier
  /// after its last access to the buffer, loop back edges included.
  bool isBehindBarrier(Operation *op) const {
    Block *block = op->getBlock();
    Found found = walk(llvm::make_range(block->begin(), op->getIterator()));
    if (found != Found::Nothing)
      return found == Found::Barrier;
    Operation *parent = block->getParentOp();
    if (isa<FunctionOpInterface>(parent))
      return true;
    if (isa<scf::ForOp>(parent)) {
      // The previous iteration, from the end of the body back to `op`; what
      // came before `op` was walked above.
      found = walk(llvm::make_range(op->getIterator(), block->end()));
      if (found != Found::Nothing)
        return found == Found::Barrier;
      return isBehindBarrier(parent);
    }
    if (isa<scf::IfOp>(parent))
      return isBehindBarrier(parent);
    return false;
  }

private:
  /// Whether `op` itself (not what it nests) reads or writes the buffer.
  bool touches(Operation *op) const {
    if (auto load = dyn_cast<LocalLoadOp>(op))
      return mayView(load.getSrc());
    if (auto copy = dyn_cast<AsyncCopyBlockOp>(op))
      return mayView(copy.getDst());
    if (auto copy = dyn_cast<AsyncCopyOp>(op))
      return mayView(copy.getDst());
    if (auto copy = dyn_cast<AsyncTMACopyBlockOp>(op))
      return mayView(copy.getDst()) || mayView(copy.getBarrier());
    if (auto wait = dyn_cast<WaitBarrierOp>(op))
      return mayView(wait.getBarrier());
    if (auto dot = dyn_cast<WarpGroupDotOp>(op))
      return readsBuffer(dot);
    // An asynchronous product reads until a wait; which one is not traced.
    if (isa<WarpGroupDotWaitOp>(op))
      return asyncReadsBuffer;
    if (auto alloc = dyn_cast<LocalAllocOp>(op))
      return alloc.getSrc() && mayView(alloc.getResult());
    std::optional<SharedInterval> scratch = allocation.getInterval(op);
    return scratch && scratch->overlaps(buffer);
  }

  /// What a walk back through `op` meets first: a barrier issued after
  /// every earlier access, an access to the buffer, or neither. Barriers
  /// nested in `op` are not counted on: a loop may not run.
  Found inspect(Operation *op) const {
    // A storing local_alloc ends with a barrier; async_wait, barrier, the
    // mbarriers' set-up and end, and a TMA store (after its reads) are ones,
    // and so is the wait for the TMA's updates to have read their buffer.
    if (auto alloc = dyn_cast<LocalAllocOp>(op); alloc && alloc.getSrc())
      return Found::Barrier;
    if (isa<AsyncWaitOp, BarrierOp, InitBarriersOp, InvalBarriersOp,
            AsyncTMAStoreBlockOp, AsyncTMAStoreWaitOp>(op))
      return Found::Barrier;
    WalkResult walk = op->walk([&](Operation *nested) {
      return touches(nested) ? WalkResult::interrupt() : WalkResult::advance();
    });
    return walk.wasInterrupted() ? Found::Access : Found::Nothing;
  }

  /// What a walk back over `ops`, the last first, meets first.
  Found walk(iterator_range<Block::iterator> ops) const {
    for (Operation &prior : llvm::reverse(ops))
      if (Found found = inspect(&prior); found != Found::Nothing)
        return found;
    return Found::Nothing;
  }

  const SharedMemoryAllocation &allocation;
  SharedInterval buffer;
  /// Whether an asynchronous product may read the buffer.
  bool asyncReadsBuffer = false;
};

} // namespace

bool tilegpu::needsLeadingBarrier(LocalAllocOp alloc,
                                  const SharedMemoryAllocation &allocation) {
  std::optional<SharedInterval> buffer = allocation.getInterval(alloc);
  if (!buffer)
    return true;
  auto function = alloc->getParentOfType<FunctionOpInterface>();
  WalkBack back(allocation, *buffer, function);
  // A copy may still be in flight after a barrier (async_wait with pending
  // groups): memory that copies write keeps its barriers.
  bool copiedInto =
      function && function
                      ->walk([&](Operation *op) {
                        Value dst;
                        if (auto copy = dyn_cast<AsyncCopyBlockOp>(op))
                          dst = copy.getDst();
                        if (auto copy = dyn_cast<AsyncCopyOp>(op))
                          dst = copy.getDst();
                        if (auto copy = dyn_cast<AsyncTMACopyBlockOp>(op))
                          dst = copy.getDst();
                        return dst && back.mayView(dst)
                                   ? WalkResult::interrupt()
                                   : WalkResult::advance();
                      })
                      .wasInterrupted();
  return copiedInto || !back.isBehindBarrier(alloc);
}
