//===- Pipeline.cpp - Block loads copied ahead with cp.async --------------===//
//
// A loop that reads a block through a block pointer advanced by the same
// amount each iteration, only to store it into a shared-memory buffer (a
// dot operand staged by tilegpu-optimize-dot-operands), instead copies the
// block with cp.async straight into a stack of `num-stages` buffers, the
// copy for iteration k + S - 1 issued in iteration k:
//
//   async_wait 0                       earlier readers of the memory done
//   copy iterations 0 .. S-2           one commit group each
//   for k:
//     async_wait S-2                   group k landed; iteration k-1's
//                                      reads are over everywhere
//     copy iteration k+S-1 into the buffer iteration k-1 read; commit
//     ... read buffer k mod S ...
//
// Copies for iterations past the loop's end are predicated off, so none is
// in flight when the loop ends. The loads no longer pass through registers,
// and their latency hides behind S - 1 iterations of compute.
//
// A loop whose one product is a warpgroup_dot accumulating into a carried
// value from the pipelined buffers (a GEMM) leaves that product in flight:
// it becomes asynchronous, each iteration waits until only its own is
// pending, and the copies go into the buffer of iteration k - 2 (whose
// readers every thread has waited for by iteration k's barrier), for
// iteration k + S - 2: S >= 3 stages.
//
//===----------------------------------------------------------------------===//

#include "tile/Dialect/Tile/IR/Tile.h"
#include "tile/Dialect/TileGPU/IR/TileGPU.h"
#include "tile/Dialect/TileGPU/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tilegpu {
#define GEN_PASS_DEF_TILEGPUPIPELINE
#include "tile/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace mlir::tilegpu

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

/// A block load the loop can copy ahead: `load` reads through the loop's
/// iter_arg number `iterArg`, which `advance` moves by loop-invariant
/// offsets and the loop yields; `alloc` is the load's only user.
struct PipelinedLoad {
  tile::LoadBlockOp load;
  LocalAllocOp alloc;
  tile::AdvanceOp advance;
  unsigned iterArg;
};

/// True when each thread's part of the block is whole 16-byte vectors
/// along the dimension the buffer keeps contiguous, on addresses
/// tilegpu-coalesce proved 16-byte aligned, and no check splits a vector.
bool copiesInVectors(tile::LoadBlockOp load, LocalAllocOp alloc) {
  auto type = load.getType();
  auto layout = dyn_cast_or_null<BlockedEncodingAttr>(type.getEncoding());
  if (!layout || !type.getElementType().isIntOrFloat())
    return false;
  int64_t bits = type.getElementType().getIntOrFloatBitWidth();
  if (bits < 8 || 128 % bits)
    return false;
  int64_t width = 128 / bits;
  unsigned inner = layout.getOrder()[0];
  auto proven = load->getAttrOfType<IntegerAttr>(
      TileGPUDialect::getVectorWidthAttrName());
  SharedLayoutAttrInterface shared = alloc.getType().getEncoding();
  return proven && proven.getInt() == width &&
         layout.getSizePerThread()[inner] % width == 0 &&
         shared.getOrder()[0] == inner && shared.getVec() >= width &&
         !llvm::is_contained(load.getBoundaryCheck(),
                             static_cast<int32_t>(inner)) &&
         (load.getBoundaryCheck().empty() ||
          load.getPadding() == tile::Padding::zero);
}

std::optional<PipelinedLoad> matchLoad(scf::ForOp loop,
                                       tile::LoadBlockOp load) {
  auto pointer = dyn_cast<BlockArgument>(load.getPtr());
  if (!pointer || pointer.getOwner() != loop.getBody() ||
      pointer.getArgNumber() == 0 || !load->hasOneUse())
    return std::nullopt;
  auto alloc = dyn_cast<LocalAllocOp>(*load->getUsers().begin());
  if (!alloc || alloc->getBlock() != loop.getBody() ||
      !copiesInVectors(load, alloc))
    return std::nullopt;
  // The pointer feeds the load and one advance by loop-invariant offsets,
  // whose result is what the loop carries on.
  tile::AdvanceOp advance;
  for (Operation *user : pointer.getUsers()) {
    if (user == load)
      continue;
    auto step = dyn_cast<tile::AdvanceOp>(user);
    if (!step || advance)
      return std::nullopt;
    advance = step;
  }
  unsigned index = pointer.getArgNumber() - 1;
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  if (!advance || yield.getOperand(index) != advance.getResult() ||
      !advance->hasOneUse() ||
      !llvm::all_of(advance.getOffsets(), [&](Value offset) {
        return loop.isDefinedOutsideOfLoop(offset);
      }))
    return std::nullopt;
  return PipelinedLoad{load, alloc, advance, index};
}

/// `pointer` advanced `times` times by `advance`'s offsets.
Value advanceBy(OpBuilder &b, Location loc, Value pointer,
                tile::AdvanceOp advance, int64_t times) {
  if (times == 0)
    return pointer;
  Value count = arith::ConstantIntOp::create(b, loc, times, 32);
  SmallVector<Value> offsets;
  for (Value offset : advance.getOffsets())
    offsets.push_back(arith::MulIOp::create(b, loc, offset, count));
  return tile::AdvanceOp::create(b, loc, pointer.getType(), pointer, offsets);
}

/// `lower + times * step < upper`: iteration `times` (from `lower`) runs.
Value iterationRuns(OpBuilder &b, Location loc, Value lower, Value step,
                    Value upper, int64_t times) {
  Value count = arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(step.getType(), times));
  Value iv = arith::AddIOp::create(b, loc, lower,
                                   arith::MulIOp::create(b, loc, step, count));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, iv, upper);
}

Value createSlot(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIntOp::create(b, loc, value, 32);
}

void copyAhead(OpBuilder &b, Location loc, PipelinedLoad p, Value pointer,
               Value stack, Value slot, Value runs) {
  Value buffer = MemDescIndexOp::create(b, loc, p.alloc.getType(), stack, slot);
  AsyncCopyBlockOp::create(b, loc, pointer, buffer, runs,
                           p.load.getBoundaryCheck());
}

/// Pipelines `loop`'s `loads` over `stages` buffers, the copy for
/// iteration k + S - lag issued in iteration k into the buffer iteration
/// k - lag read (lag 1; 2 when a read of iteration k - 1 may still be in
/// flight in iteration k). Returns the new loop.
scf::ForOp pipelineLoop(scf::ForOp loop, MutableArrayRef<PipelinedLoad> loads,
                        int64_t stages, int64_t lag) {
  Location loc = loop.getLoc();
  OpBuilder b(loop);
  Value lower = loop.getLowerBound(), upper = loop.getUpperBound(),
        step = loop.getStep();

  // Stacks of buffers and the prologue, after a barrier: the stacks may
  // share memory with buffers that threads were reading until now.
  SmallVector<Value> stacks;
  for (PipelinedLoad &p : loads) {
    MemDescType buffer = p.alloc.getType();
    SmallVector<int64_t> shape{stages};
    llvm::append_range(shape, buffer.getShape());
    stacks.push_back(LocalAllocOp::create(
        b, loc,
        MemDescType::get(b.getContext(), shape, buffer.getElementType(),
                         buffer.getEncoding()),
        Value()));
  }
  AsyncWaitOp::create(b, loc, 0);
  for (int64_t s = 0; s + lag < stages; ++s) {
    Value runs = iterationRuns(b, loc, lower, step, upper, s);
    for (auto [p, stack] : llvm::zip(loads, stacks)) {
      Value init = loop.getInitArgs()[p.iterArg];
      copyAhead(b, loc, p, advanceBy(b, loc, init, p.advance, s), stack,
                createSlot(b, loc, s), runs);
    }
    AsyncCommitGroupOp::create(b, loc);
  }

  // The loop carries the slot it reads; the slot iteration k - 1 read is
  // the one iteration k + S - 1 fills.
  IRRewriter rewriter(loop.getContext());
  rewriter.setInsertionPoint(loop);
  auto newLoop = cast<scf::ForOp>(*loop.replaceWithAdditionalYields(
      rewriter, ValueRange{createSlot(b, loc, 0)},
      /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &yieldBuilder, Location yieldLoc,
          ArrayRef<BlockArgument> newArgs) -> SmallVector<Value> {
        Value slot = newArgs[0];
        Value last = arith::CmpIOp::create(
            yieldBuilder, yieldLoc, arith::CmpIPredicate::eq, slot,
            createSlot(yieldBuilder, yieldLoc, stages - 1));
        Value next =
            arith::AddIOp::create(yieldBuilder, yieldLoc, slot,
                                  createSlot(yieldBuilder, yieldLoc, 1));
        return {arith::SelectOp::create(yieldBuilder, yieldLoc, last,
                                        createSlot(yieldBuilder, yieldLoc, 0),
                                        next)};
      }));
  Block *body = newLoop.getBody();
  Value slot = body->getArguments().back();
  b.setInsertionPointToStart(body);
  AsyncWaitOp::create(b, loc, stages - 1 - lag);
  // (slot - lag) mod S, as slot + S - lag, less S when that wraps.
  Value ahead =
      arith::AddIOp::create(b, loc, slot, createSlot(b, loc, stages - lag));
  Value wraps = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, ahead,
                                      createSlot(b, loc, stages));
  Value writeSlot = arith::SelectOp::create(
      b, loc, wraps,
      arith::SubIOp::create(b, loc, ahead, createSlot(b, loc, stages)), ahead);
  Value runs =
      iterationRuns(b, loc, newLoop.getInductionVar(), newLoop.getStep(),
                    newLoop.getUpperBound(), stages - lag);
  for (auto [p, stack] : llvm::zip(loads, stacks)) {
    // The body's ops moved to the new loop; its arguments are new.
    Value pointer = newLoop.getRegionIterArgs()[p.iterArg];
    Value current =
        MemDescIndexOp::create(b, loc, p.alloc.getType(), stack, slot);
    copyAhead(b, loc, p, advanceBy(b, loc, pointer, p.advance, stages - lag),
              stack, writeSlot, runs);
    p.alloc.getResult().replaceAllUsesWith(current);
  }
  AsyncCommitGroupOp::create(b, loc);
  // Erased last: the builder inserts before what was the body's first op.
  for (PipelinedLoad &p : loads) {
    p.alloc.erase();
    p.load.erase();
  }
  return newLoop;
}

/// The loop's one product that can stay in flight into the next iteration:
/// a warpgroup_dot that accumulates into a value the loop carries and
/// yields, reading only buffers the pipeline fills (the GEMM's main loop).
WarpGroupDotOp findCarriedProduct(scf::ForOp loop,
                                  ArrayRef<PipelinedLoad> loads) {
  auto dots = loop.getBody()->getOps<WarpGroupDotOp>();
  if (!llvm::hasSingleElement(dots))
    return {};
  WarpGroupDotOp dot = *dots.begin();
  auto acc = dyn_cast<BlockArgument>(dot.getC());
  if (!acc || acc.getOwner() != loop.getBody() || acc.getArgNumber() == 0 ||
      !acc.hasOneUse() || !dot->hasOneUse())
    return {};
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  unsigned index = acc.getArgNumber() - 1;
  if (yield.getOperand(index) != dot.getResult())
    return {};
  auto isPipelined = [&](Value buffer) {
    return llvm::any_of(
        loads, [&](PipelinedLoad p) { return p.alloc.getResult() == buffer; });
  };
  if (!isa<MemDescType>(dot.getA().getType()) || !isPipelined(dot.getA()) ||
      !isPipelined(dot.getB()))
    return {};
  return dot;
}

/// Leaves `dot`'s wgmma group in flight: each iteration waits for the one
/// before (at most one pending), and the loop's result is waited for in
/// full after it.
void keepProductInFlight(scf::ForOp loop, WarpGroupDotOp dot) {
  dot.setIsAsync(true);
  OpBuilder b(dot->getContext());
  b.setInsertionPointAfter(dot);
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  unsigned index = 0;
  for (OpOperand &use : yield->getOpOperands())
    if (use.get() == dot.getResult())
      index = use.getOperandNumber();
  auto previous = WarpGroupDotWaitOp::create(b, dot.getLoc(), dot.getType(),
                                             dot.getResult(), /*pendings=*/1);
  yield->setOperand(index, previous);
  b.setInsertionPointAfter(loop);
  Value result = loop.getResult(index);
  auto done = WarpGroupDotWaitOp::create(b, dot.getLoc(), result.getType(),
                                         result, /*pendings=*/0);
  result.replaceAllUsesExcept(done, done);
}

struct TileGPUPipelinePass
    : public tilegpu::impl::TileGPUPipelineBase<TileGPUPipelinePass> {
  using TileGPUPipelineBase::TileGPUPipelineBase;

  void runOnOperation() override {
    if (numStages < 1) {
      getOperation().emitError() << "num-stages must be at least 1, not "
                                 << static_cast<int>(numStages);
      return signalPassFailure();
    }
    if (failed(verifyLaidOut(getOperation(), getArgument())))
      return signalPassFailure();
    if (numStages == 1)
      return;
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops) {
      // Iterations are counted forwards from the lower bound.
      auto step = getConstantIntValue(loop.getStep());
      if (!step || *step <= 0)
        continue;
      SmallVector<PipelinedLoad> loads;
      for (auto load : loop.getBody()->getOps<tile::LoadBlockOp>())
        if (auto p = matchLoad(loop, load))
          loads.push_back(*p);
      if (loads.empty())
        continue;
      // A product left in flight still reads the buffer of iteration k - 1
      // in iteration k: copies then go two iterations back, which needs
      // three stages.
      WarpGroupDotOp carried =
          numStages >= 3 ? findCarriedProduct(loop, loads) : WarpGroupDotOp();
      scf::ForOp pipelined =
          pipelineLoop(loop, loads, numStages, carried ? 2 : 1);
      if (carried)
        keepProductInFlight(pipelined, carried);
    }
  }
};

} // namespace
