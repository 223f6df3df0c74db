//===- SharedMemoryAllocation.cpp - Pruning barriers ----------------------===//
//
// Before lowering, once shared memory is placed (SharedMemoryAllocation in
// lib/Analysis), convert-tilegpu-to-llvm finds the local_allocs whose
// leading barrier cannot matter: those that every path reaches through a
// barrier issued after the last access to the memory they overwrite.
//
//===----------------------------------------------------------------------===//

#include "Utility.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

/// Bytes [begin, end) of the kernel's shared memory.
struct Interval {
  int64_t begin = 0, end = 0;
  bool overlaps(const Interval &other) const {
    return begin < other.end && other.begin < end;
  }
};

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

/// The shared memory placed for `op`, `bytes` long.
Interval getPlacedInterval(Operation *op, int64_t bytes) {
  int64_t begin = op->getAttrOfType<IntegerAttr>(
                        TileGPUDialect::getAllocationOffsetAttrName())
                      .getInt();
  return {begin, begin + bytes};
}

/// The shared memory placed for `alloc`'s buffer.
Interval getPlacedInterval(LocalAllocOp alloc) {
  return getPlacedInterval(alloc, getSharedBytes(alloc.getType()));
}

/// Whether `memdesc` may view memory in `buffer`.
bool mayView(Value memdesc, const Interval &buffer) {
  LocalAllocOp alloc = getViewedBuffer(memdesc);
  return !alloc || getPlacedInterval(alloc).overlaps(buffer);
}

/// Whether `op` itself (not what it nests) reads or writes `buffer`.
bool touches(Operation *op, const Interval &buffer) {
  if (auto load = dyn_cast<LocalLoadOp>(op))
    return mayView(load.getSrc(), buffer);
  if (auto copy = dyn_cast<AsyncCopyBlockOp>(op))
    return mayView(copy.getDst(), buffer);
  if (auto alloc = dyn_cast<LocalAllocOp>(op))
    return alloc.getSrc() && mayView(alloc.getResult(), buffer);
  if (int64_t bytes = getSharedScratchBytes(op))
    return getPlacedInterval(op, bytes).overlaps(buffer);
  return false;
}

enum class Found { Nothing, Barrier, Access };

/// What a walk back through `op`, towards the kernel's start, meets first:
/// a barrier issued after every earlier access, an access to `buffer`, or
/// neither. Barriers nested in `op` are not counted on: a loop may not run.
Found inspect(Operation *op, const Interval &buffer) {
  // A storing local_alloc ends with a barrier; async_wait is one.
  if (auto alloc = dyn_cast<LocalAllocOp>(op); alloc && alloc.getSrc())
    return Found::Barrier;
  if (isa<AsyncWaitOp>(op))
    return Found::Barrier;
  WalkResult walk = op->walk([&](Operation *nested) {
    return touches(nested, buffer) ? WalkResult::interrupt()
                                   : WalkResult::advance();
  });
  return walk.wasInterrupted() ? Found::Access : Found::Nothing;
}

/// What a walk back over `ops`, the last first, meets first.
Found walkBack(iterator_range<Block::iterator> ops, const Interval &buffer) {
  for (Operation &prior : llvm::reverse(ops))
    if (Found found = inspect(&prior, buffer); found != Found::Nothing)
      return found;
  return Found::Nothing;
}

/// Whether every path from the kernel's start to `op` meets a barrier after
/// its last access to `buffer`, loop back edges included.
bool isBehindBarrier(Operation *op, const Interval &buffer) {
  Block *block = op->getBlock();
  Found found =
      walkBack(llvm::make_range(block->begin(), op->getIterator()), buffer);
  if (found != Found::Nothing)
    return found == Found::Barrier;
  Operation *parent = block->getParentOp();
  if (isa<FunctionOpInterface>(parent))
    return true;
  if (isa<scf::ForOp>(parent)) {
    // The previous iteration, from the end of the body back to `op`; what
    // came before `op` was walked above.
    found = walkBack(llvm::make_range(op->getIterator(), block->end()), buffer);
    if (found != Found::Nothing)
      return found == Found::Barrier;
    return isBehindBarrier(parent, buffer);
  }
  if (isa<scf::IfOp>(parent))
    return isBehindBarrier(parent, buffer);
  return false;
}

} // namespace

void tilegpu::markRedundantLeadingBarriers(ModuleOp module) {
  module.walk([&](FunctionOpInterface function) {
    SmallVector<AsyncCopyBlockOp> copies;
    function.walk([&](AsyncCopyBlockOp copy) { copies.push_back(copy); });
    function.walk([&](LocalAllocOp alloc) {
      if (!alloc.getSrc())
        return;
      Interval buffer = getPlacedInterval(alloc);
      // A copy may still be in flight after a barrier (async_wait with
      // pending groups): memory that copies write keeps its barriers.
      if (llvm::any_of(copies, [&](AsyncCopyBlockOp copy) {
            return mayView(copy.getDst(), buffer);
          }))
        return;
      if (isBehindBarrier(alloc, buffer))
        alloc->setAttr(kNoLeadingBarrierAttr,
                       UnitAttr::get(module.getContext()));
    });
  });
}
