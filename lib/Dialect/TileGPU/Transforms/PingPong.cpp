//===- PingPong.cpp - Warpgroups take turns at issuing their products -----===//
//
// A program of two or more warpgroups, each computing its own rows
// (attention's forward on 64-row slabs), runs the same loop in each: left
// alone, they issue their products together, then all run their softmax
// together while the tensor cores idle. This pass makes them take turns at
// the products of each iteration (FlashAttention-3's ping-pong), so that
// one warpgroup's softmax runs while the other's products occupy the
// tensor cores:
//
//   pass_turn {initial}                  the last warpgroup lets 0 begin
//   scf.for ... {
//     wait_turn                          until the previous one passed
//     s = warpgroup_dot(q, k, 0)     {is_async}
//     o = warpgroup_dot(p, v, o * a) {is_async}
//     pass_turn                          the next one issues its own
//     ... waits, softmax ...
//   }
//   wait_turn {final}                    warpgroup 0 takes the last pass
//
// A loop qualifies when its body issues two asynchronous products or more
// (tilegpu-overlap-products' rotated loop) and nothing between its first
// and last can wait for other warps: a warpgroup holding the turn at a
// program barrier would wait for one that waits for the turn. Waits on
// mbarriers (the producer's copies) are allowed: the producer never waits
// for a turn. What the products wait for (their copies) and the pure ops
// that need nothing issued in the turn move before it, so that the turn
// holds only the issue. Every warpgroup runs the loops alike, so each
// takes as many turns as the others.
//
//===----------------------------------------------------------------------===//

#include "tile/Analysis/Allocation.h"
#include "tile/Dialect/Tile/IR/Tile.h"
#include "tile/Dialect/TileGPU/IR/TileGPU.h"
#include "tile/Dialect/TileGPU/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tilegpu {
#define GEN_PASS_DEF_TILEGPUPINGPONG
#include "tile/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace mlir::tilegpu

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

constexpr unsigned kWarpsPerWarpGroup = 4;

/// Whether `op`'s lowering may wait for other warps of the program (a
/// barrier, shared-memory scratch, a CTA-wide vote), conservatively for
/// ops with regions.
bool mayWaitForOtherWarps(Operation *op) {
  if (op->getNumRegions() > 0)
    return true;
  if (isa<BarrierOp, InitBarriersOp, InvalBarriersOp, AsyncWaitOp,
          AsyncTMAStoreBlockOp, AsyncTMAStoreWaitOp, AsyncBulkReduceOp,
          WaitTurnOp, PassTurnOp>(op))
    return true;
  if (auto alloc = dyn_cast<LocalAllocOp>(op); alloc && alloc.getSrc())
    return true;
  if (auto reduce = dyn_cast<tile::ReduceOp>(op);
      reduce && isCtaWideBooleanReduce(reduce))
    return true;
  return getSharedScratchBytes(op) > 0;
}

/// Adds a turn around the products `body` issues, if it qualifies.
bool addTurn(Block &body, int32_t warpgroups) {
  SmallVector<WarpGroupDotOp> products(body.getOps<WarpGroupDotOp>());
  if (products.size() < 2 || !llvm::all_of(products, [](WarpGroupDotOp dot) {
        return dot.getIsAsync();
      }))
    return false;
  Operation *first = products.front(), *last = products.back();
  auto window =
      llvm::make_range(first->getIterator(), std::next(last->getIterator()));
  for (Operation &op : window)
    if (!isa<WarpGroupDotOp>(op) && mayWaitForOtherWarps(&op))
      return false;
  // The turn holds only the issue: waits for the products' copies and pure
  // ops that need nothing issued in the turn (the rescale of the carried
  // accumulator) go before it, in their order.
  for (Operation &op : llvm::make_early_inc_range(window)) {
    if (isa<WarpGroupDotOp>(op) ||
        !(isa<WaitBarrierOp>(op) || isMemoryEffectFree(&op)))
      continue;
    bool ready = llvm::none_of(op.getOperands(), [&](Value operand) {
      Operation *def = operand.getDefiningOp();
      return def && def->getBlock() == &body && !def->isBeforeInBlock(first);
    });
    if (ready)
      op.moveBefore(first);
  }
  OpBuilder b(first);
  WaitTurnOp::create(b, first->getLoc(), warpgroups);
  b.setInsertionPointAfter(last);
  PassTurnOp::create(b, last->getLoc(), warpgroups);
  return true;
}

struct PingPongPass : public tilegpu::impl::TileGPUPingPongBase<PingPongPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto numWarps = module->getAttrOfType<IntegerAttr>(
        TileGPUDialect::getNumWarpsAttrName());
    if (!numWarps || numWarps.getInt() % kWarpsPerWarpGroup ||
        numWarps.getInt() < 2 * kWarpsPerWarpGroup)
      return;
    int32_t warpgroups = numWarps.getInt() / kWarpsPerWarpGroup;
    for (auto kernel : module.getOps<func::FuncOp>()) {
      if (kernel.isExternal())
        continue;
      bool turns = false;
      kernel.walk([&](scf::ForOp loop) {
        if (!loop->getParentOfType<WarpSpecializeOp>())
          turns |= addTurn(*loop.getBody(), warpgroups);
      });
      if (!turns)
        continue;
      // The sequence starts where the program's warps start (after the
      // producer's region) and ends before the kernel returns.
      Block &entry = kernel.getBody().front();
      OpBuilder b(&entry, entry.begin());
      if (std::optional<WarpSpecializeOp> split = getWarpSpecialization(kernel))
        b.setInsertionPointAfter(*split);
      auto start = PassTurnOp::create(b, kernel.getLoc(), warpgroups);
      start.setInitial(true);
      b.setInsertionPoint(entry.getTerminator());
      auto end = WaitTurnOp::create(b, kernel.getLoc(), warpgroups);
      end.setFinal(true);
    }
  }
};

} // namespace
