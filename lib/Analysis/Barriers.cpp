//===- Barriers.cpp - Which shared-memory stores wait before writing ------===//

#include "tile/Analysis/Barriers.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::tilegpu;

LocalAllocOp tilegpu::getViewedBuffer(Value memdesc) {
  while (Operation *def = memdesc.getDefiningOp()) {
    if (auto alloc = dyn_cast<LocalAllocOp>(def))
      return alloc;
    if (!isa<MemDescTransOp, MemDescIndexOp>(def))
      return {};
    memdesc = def->getOperand(0);
  }
  return {};
}

namespace {

/// Whether `alloc`'s store ends with a barrier of its warpgroup alone.
bool hasWarpGroupBarriers(LocalAllocOp alloc) {
  auto scoped = alloc->getAttrOfType<BoolAttr>(
      TileGPUDialect::getWarpGroupBarriersAttrName());
  return scoped && scoped.getValue();
}

/// Whether a tile of `type` has each row in one warpgroup's warps alone: a
/// wgmma accumulator over `numWarps` warps, all along the rows, with rows
/// for every warp (fewer would be held by two warpgroups at once).
bool isRowsByWarpGroup(RankedTensorType type, unsigned numWarps) {
  auto mma = dyn_cast_or_null<MmaEncodingAttr>(type.getEncoding());
  return mma && mma.getVersion() == 3 &&
         mma.getWarpsPerCTA() == ArrayRef<unsigned>{numWarps, 1} &&
         type.getShape()[0] % (16 * numWarps) == 0;
}

/// Whether every read of the buffer `memdesc` views is a product's operand
/// A whose result's rows are by warpgroup, following it through loops'
/// and branches' yields and a loop's init operands.
bool isReadByOwnRowsOnly(Value memdesc, unsigned numWarps,
                         llvm::SmallPtrSetImpl<Value> &seen) {
  if (!seen.insert(memdesc).second)
    return true;
  for (OpOperand &use : memdesc.getUses()) {
    Operation *user = use.getOwner();
    unsigned index = use.getOperandNumber();
    SmallVector<Value, 2> carried;
    if (auto dot = dyn_cast<WarpGroupDotOp>(user)) {
      if (index != 0 || !isRowsByWarpGroup(dot.getType(), numWarps))
        return false;
      continue;
    }
    if (auto loop = dyn_cast<scf::ForOp>(user)) {
      if (index < loop.getNumControlOperands())
        return false;
      index -= loop.getNumControlOperands();
      carried = {loop.getRegionIterArgs()[index], loop->getResult(index)};
    } else if (isa<scf::YieldOp>(user)) {
      Operation *parent = user->getParentOp();
      if (auto loop = dyn_cast<scf::ForOp>(parent))
        carried = {loop.getRegionIterArgs()[index], loop->getResult(index)};
      else if (isa<scf::IfOp>(parent))
        carried = {parent->getResult(index)};
      else
        return false;
    } else {
      return false;
    }
    for (Value value : carried)
      if (!isReadByOwnRowsOnly(value, numWarps, seen))
        return false;
  }
  return true;
}

/// isWarpGroupPrivate but for the buffers sharing its memory.
bool isStoredAndReadByOwnRows(LocalAllocOp alloc, unsigned numWarps) {
  if (!alloc.getSrc() || !isRowsByWarpGroup(alloc.getSrc().getType(), numWarps))
    return false;
  llvm::SmallPtrSet<Value, 8> seen;
  return isReadByOwnRowsOnly(alloc.getResult(), numWarps, seen);
}

/// The buffer a cp.async copy (of a block or of a tile of pointers)
/// writes, or null when `op` is none.
Value getCpAsyncDestination(Operation *op) {
  if (auto copy = dyn_cast<AsyncCopyBlockOp>(op))
    return copy.getDst();
  if (auto copy = dyn_cast<AsyncCopyOp>(op))
    return copy.getDst();
  return {};
}

enum class Found { Nothing, Barrier, Access };

/// Walks back from an op towards the kernel's start along every path (a
/// loop's previous iteration and its entry too), asking `inspect` what each
/// op it passes is: a barrier for the question asked, an access, or neither.
class PathWalk {
public:
  explicit PathWalk(function_ref<Found(Operation *)> inspect)
      : inspect(inspect) {}

  /// Whether every path from the kernel's start to `op` meets a barrier
  /// after its last access, loop back edges included.
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
  /// What a walk back over `ops`, the last first, meets first.
  Found walk(iterator_range<Block::iterator> ops) const {
    for (Operation &prior : llvm::reverse(ops))
      if (Found found = inspect(&prior); found != Found::Nothing)
        return found;
    return Found::Nothing;
  }

  function_ref<Found(Operation *)> inspect;
};

/// Where in shared memory an op's question is about: the buffers it reads
/// or writes, where tilegpu-allocate-shared-memory placed them.
class Buffers {
public:
  Buffers(const SharedMemoryAllocation &allocation,
          ArrayRef<SharedInterval> intervals)
      : allocation(allocation), intervals(intervals) {}

  /// Whether `memdesc` may view memory in the buffers.
  bool mayView(Value memdesc) const {
    LocalAllocOp alloc = getViewedBuffer(memdesc);
    if (!alloc)
      return true;
    std::optional<SharedInterval> placed = allocation.getInterval(alloc);
    return !placed || overlaps(*placed);
  }

  /// Whether any of `memdescs` (an mbarrier op's stacks) may view memory in
  /// the buffers.
  bool mayViewAny(ValueRange memdescs) const {
    return llvm::any_of(memdescs, [&](Value v) { return mayView(v); });
  }

  /// Whether the scratch `op` exchanges values through (a conversion's, a
  /// reduction's) overlaps the buffers.
  bool scratchOverlaps(Operation *op) const {
    std::optional<SharedInterval> scratch = allocation.getInterval(op);
    return scratch && overlaps(*scratch);
  }

  /// Whether `dot` reads memory in the buffers.
  bool readBy(WarpGroupDotOp dot) const {
    return mayView(dot.getB()) ||
           (isa<MemDescType>(dot.getA().getType()) && mayView(dot.getA()));
  }

private:
  bool overlaps(SharedInterval placed) const {
    return llvm::any_of(intervals, [&](const SharedInterval &interval) {
      return interval.overlaps(placed);
    });
  }

  const SharedMemoryAllocation &allocation;
  ArrayRef<SharedInterval> intervals;
};

/// What a store's walk back meets: a barrier issued after every earlier
/// access, or an access (read or write) to the memory it stores to.
class StoreInspector {
public:
  StoreInspector(const Buffers &buffer, Operation *function) : buffer(buffer) {
    if (function)
      function->walk([&](WarpGroupDotOp dot) {
        asyncReadsBuffer |= dot.getIsAsync() && buffer.readBy(dot);
      });
  }

  /// What a walk back through `op` meets first. Barriers nested in `op` are
  /// not counted on: a loop may not run.
  Found operator()(Operation *op) const {
    // A storing local_alloc ends with a barrier; async_wait, barrier, the
    // mbarriers' set-up and end, and a TMA store (after its reads) are ones,
    // and so is the wait for the TMA's updates to have read their buffer.
    if (auto alloc = dyn_cast<LocalAllocOp>(op);
        alloc && alloc.getSrc() && !hasWarpGroupBarriers(alloc))
      return Found::Barrier;
    if (isa<AsyncWaitOp, BarrierOp, InitBarriersOp, InvalBarriersOp,
            AsyncTMAStoreBlockOp, AsyncTMAStoreWaitOp>(op))
      return Found::Barrier;
    WalkResult walk = op->walk([&](Operation *nested) {
      return touches(nested) ? WalkResult::interrupt() : WalkResult::advance();
    });
    return walk.wasInterrupted() ? Found::Access : Found::Nothing;
  }

private:
  /// Whether `op` itself (not what it nests) reads or writes the buffer.
  bool touches(Operation *op) const {
    if (auto load = dyn_cast<LocalLoadOp>(op))
      return buffer.mayView(load.getSrc());
    if (Value dst = getCpAsyncDestination(op))
      return buffer.mayView(dst);
    if (auto copy = dyn_cast<AsyncTMACopyBlockOp>(op))
      return buffer.mayView(copy.getDst()) || buffer.mayView(copy.getBarrier());
    if (auto wait = dyn_cast<WaitBarrierOp>(op))
      return buffer.mayView(wait.getBarrier());
    if (auto dot = dyn_cast<WarpGroupDotOp>(op))
      return buffer.readBy(dot);
    // An asynchronous product reads until a wait; which one is not traced.
    if (isa<WarpGroupDotWaitOp>(op))
      return asyncReadsBuffer;
    if (auto alloc = dyn_cast<LocalAllocOp>(op))
      return alloc.getSrc() && buffer.mayView(alloc.getResult());
    return buffer.scratchOverlaps(op);
  }

  const Buffers &buffer;
  /// Whether an asynchronous product may read the buffer.
  bool asyncReadsBuffer = false;
};

/// What a product's walk back meets: a proxy fence every thread passes
/// (counted as a barrier), or a generic-proxy write to an operand's memory:
/// a thread's store, a cp.async, a conversion's scratch, an mbarrier's
/// update.
class ProxyInspector {
public:
  explicit ProxyInspector(const Buffers &operands) : operands(operands) {}

  Found operator()(Operation *op) const {
    // init_barriers fences before it sets up its mbarriers, which it then
    // writes; a TMA store or reduction fences what threads wrote before it.
    if (auto init = dyn_cast<InitBarriersOp>(op))
      return operands.mayViewAny(init.getBarriers()) ? Found::Access
                                                     : Found::Barrier;
    if (isa<AsyncTMAStoreBlockOp, AsyncTMAReduceBlockOp, AsyncBulkReduceOp>(op))
      return Found::Barrier;
    // So does a product already decided to fence (those before it in
    // program order are decided first).
    if (auto dot = dyn_cast<WarpGroupDotOp>(op))
      if (auto fences = dot->getAttrOfType<BoolAttr>(
              TileGPUDialect::getProxyFenceAttrName());
          fences && fences.getValue())
        return Found::Barrier;
    WalkResult walk = op->walk([&](Operation *nested) {
      return writesGeneric(nested) ? WalkResult::interrupt()
                                   : WalkResult::advance();
    });
    return walk.wasInterrupted() ? Found::Access : Found::Nothing;
  }

private:
  /// Whether `op` itself writes an operand's memory through the generic
  /// proxy. The TMA's copies write through the asynchronous one.
  bool writesGeneric(Operation *op) const {
    if (auto alloc = dyn_cast<LocalAllocOp>(op))
      return alloc.getSrc() && operands.mayView(alloc.getResult());
    if (Value dst = getCpAsyncDestination(op))
      return operands.mayView(dst);
    if (auto copy = dyn_cast<AsyncTMACopyBlockOp>(op))
      return operands.mayView(copy.getBarrier());
    if (auto wait = dyn_cast<WaitBarrierOp>(op))
      return operands.mayView(wait.getBarrier());
    if (auto arrive = dyn_cast<ArriveBarrierOp>(op))
      return operands.mayView(arrive.getBarrier());
    if (auto inval = dyn_cast<InvalBarriersOp>(op))
      return operands.mayViewAny(inval.getBarriers());
    return operands.scratchOverlaps(op);
  }

  const Buffers &operands;
};

} // namespace

bool tilegpu::isWarpGroupPrivate(LocalAllocOp alloc,
                                 const SharedMemoryAllocation &allocation) {
  // Two to four warpgroups: each has a named barrier of its own
  // (convert-tilegpu-to-llvm numbers them).
  std::optional<unsigned> numWarps = getNumWarps(alloc);
  if (!numWarps || *numWarps % 4 || *numWarps < 8 || *numWarps > 16 ||
      !isStoredAndReadByOwnRows(alloc, *numWarps))
    return false;
  std::optional<SharedInterval> interval = allocation.getInterval(alloc);
  if (!interval)
    return false;
  // Memory it shares with another buffer or a scratch, at any time, is
  // ordered by that one's barriers too: only buffers like it may share it.
  for (auto [op, placed] : allocation.getPlaces()) {
    if (op == alloc.getOperation() || !placed.overlaps(*interval))
      continue;
    auto other = dyn_cast<LocalAllocOp>(op);
    if (!other || !isStoredAndReadByOwnRows(other, *numWarps))
      return false;
  }
  return true;
}

bool tilegpu::needsLeadingBarrier(LocalAllocOp alloc,
                                  const SharedMemoryAllocation &allocation) {
  std::optional<SharedInterval> interval = allocation.getInterval(alloc);
  if (!interval)
    return true;
  auto function = alloc->getParentOfType<FunctionOpInterface>();
  Buffers buffer(allocation, *interval);
  // A copy may still be in flight after a barrier (async_wait with pending
  // groups): memory that copies write keeps its barriers.
  bool copiedInto =
      function && function
                      ->walk([&](Operation *op) {
                        Value dst = getCpAsyncDestination(op);
                        if (auto copy = dyn_cast<AsyncTMACopyBlockOp>(op))
                          dst = copy.getDst();
                        return dst && buffer.mayView(dst)
                                   ? WalkResult::interrupt()
                                   : WalkResult::advance();
                      })
                      .wasInterrupted();
  StoreInspector inspector(buffer, function);
  return copiedInto || !PathWalk(inspector).isBehindBarrier(alloc);
}

bool tilegpu::needsProxyFence(WarpGroupDotOp dot,
                              const SharedMemoryAllocation &allocation) {
  SmallVector<SharedInterval, 2> intervals;
  SmallVector<Value, 2> operands = {dot.getB()};
  if (isa<MemDescType>(dot.getA().getType()))
    operands.push_back(dot.getA());
  for (Value operand : operands) {
    LocalAllocOp alloc = getViewedBuffer(operand);
    std::optional<SharedInterval> interval =
        alloc ? allocation.getInterval(alloc) : std::nullopt;
    if (!interval)
      return true;
    intervals.push_back(*interval);
  }
  Buffers buffers(allocation, intervals);
  ProxyInspector inspector(buffers);
  return !PathWalk(inspector).isBehindBarrier(dot);
}
