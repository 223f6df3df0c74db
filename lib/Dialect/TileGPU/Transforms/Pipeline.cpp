//===- Pipeline.cpp - Block loads copied ahead (cp.async, TMA) ------------===//
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
// A block pointer the loop makes each iteration from values it does not
// change, at offsets linear in the induction variable (a descriptor's
// desc.load([m, k])), is first made once and carried, advanced each
// iteration, so that its loads qualify.
//
// A loop whose one product is a warpgroup_dot accumulating into a carried
// value from the pipelined buffers (a GEMM) leaves that product in flight:
// it becomes asynchronous, each iteration waits until only its own is
// pending, and the copies go into the buffer of iteration k - 2 (whose
// readers every thread has waited for by iteration k's barrier), for
// iteration k + S - 2: S >= 3 stages.
//
// With use-tma, a block the runtime can describe (TensorMaps.h) is copied by
// the TMA instead, through a descriptor the kernel takes as a parameter:
// thread 0 issues the copy, an mbarrier per buffer counts its bytes, and
// each thread waits on it (phase parity carried by the loop) before the
// buffer's first use; a plain barrier opens the iteration where no
// async_wait does.
//
//===----------------------------------------------------------------------===//

#include "TensorMaps.h"

#include "tile/Dialect/Tile/IR/Tile.h"
#include "tile/Dialect/TileGPU/IR/TileGPU.h"
#include "tile/Dialect/TileGPU/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

#include <deque>

namespace mlir::tilegpu {
#define GEN_PASS_DEF_TILEGPUPIPELINE
#include "tile/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace mlir::tilegpu

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

/// Whether `value`, an offset in `loop`'s body, is a + b * iv with a and b
/// defined before the loop: a sum or difference of such, or such times a
/// value defined before the loop.
bool isLinearInInductionVar(scf::ForOp loop, Value value) {
  if (loop.isDefinedOutsideOfLoop(value) || value == loop.getInductionVar())
    return true;
  Operation *def = value.getDefiningOp();
  if (!def || def->getBlock() != loop.getBody())
    return false;
  if (isa<arith::AddIOp, arith::SubIOp>(def))
    return isLinearInInductionVar(loop, def->getOperand(0)) &&
           isLinearInInductionVar(loop, def->getOperand(1));
  if (isa<arith::MulIOp>(def))
    return (loop.isDefinedOutsideOfLoop(def->getOperand(0)) &&
            isLinearInInductionVar(loop, def->getOperand(1))) ||
           (loop.isDefinedOutsideOfLoop(def->getOperand(1)) &&
            isLinearInInductionVar(loop, def->getOperand(0)));
  return false;
}

/// `value` (linear in `loop`'s induction variable) at induction value
/// `iv`, computed with `b` outside the loop.
Value evaluateAt(OpBuilder &b, scf::ForOp loop, Value value, Value iv) {
  if (loop.isDefinedOutsideOfLoop(value))
    return value;
  if (value == loop.getInductionVar())
    return iv;
  Operation *def = value.getDefiningOp();
  IRMapping mapping;
  for (Value operand : def->getOperands())
    mapping.map(operand, evaluateAt(b, loop, operand, iv));
  return b.clone(*def, mapping)->getResult(0);
}

/// A block pointer made in each iteration from what the loop does not
/// change, at offsets linear in the induction variable (a descriptor's
/// `desc.load([m, k])`), becomes one the loop carries and advances by the
/// offsets' step, so that the pipeliner can copy its loads ahead. Returns
/// the loop, new where it carries more.
scf::ForOp carryBlockPointers(scf::ForOp loop) {
  SmallVector<tile::MakeBlockPtrOp> made;
  for (auto block : loop.getBody()->getOps<tile::MakeBlockPtrOp>())
    if (loop.isDefinedOutsideOfLoop(block.getBase()) &&
        llvm::all_of(block.getShape(),
                     [&](Value v) { return loop.isDefinedOutsideOfLoop(v); }) &&
        llvm::all_of(block.getStrides(),
                     [&](Value v) { return loop.isDefinedOutsideOfLoop(v); }) &&
        llvm::all_of(block.getOffsets(),
                     [&](Value v) { return isLinearInInductionVar(loop, v); }))
      made.push_back(block);
  if (made.empty())
    return loop;
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  Value next =
      arith::AddIOp::create(b, loc, loop.getLowerBound(), loop.getStep());
  SmallVector<Value> initial;
  SmallVector<SmallVector<Value>> steps;
  for (tile::MakeBlockPtrOp block : made) {
    SmallVector<Value> offsets, step;
    for (Value offset : block.getOffsets()) {
      Value first = evaluateAt(b, loop, offset, loop.getLowerBound());
      offsets.push_back(first);
      step.push_back(arith::SubIOp::create(
          b, loc, evaluateAt(b, loop, offset, next), first));
    }
    initial.push_back(tile::MakeBlockPtrOp::create(
        b, block.getLoc(), block.getType(), block.getBase(), block.getShape(),
        block.getStrides(), offsets, block.getOrder()));
    steps.push_back(std::move(step));
  }
  IRRewriter rewriter(loop.getContext());
  rewriter.setInsertionPoint(loop);
  auto carried = cast<scf::ForOp>(*loop.replaceWithAdditionalYields(
      rewriter, initial, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &yb, Location yieldLoc,
          ArrayRef<BlockArgument> pointers) -> SmallVector<Value> {
        SmallVector<Value> advanced;
        for (auto [pointer, step] : llvm::zip(pointers, steps))
          advanced.push_back(tile::AdvanceOp::create(
              yb, yieldLoc, pointer.getType(), pointer, step));
        return advanced;
      }));
  auto pointers = carried.getRegionIterArgs().take_back(made.size());
  for (auto [block, pointer] : llvm::zip(made, pointers)) {
    block.getResult().replaceAllUsesWith(pointer);
    block.erase();
  }
  return carried;
}

/// A block load the loop can copy ahead: `load` reads through the loop's
/// iter_arg number `iterArg`, which `advance` moves by loop-invariant
/// offsets and the loop yields; `alloc` is the load's only user.
struct PipelinedLoad {
  tile::LoadBlockOp load;
  LocalAllocOp alloc;
  tile::AdvanceOp advance;
  unsigned iterArg;
  /// With the TMA: the descriptor parameter and the coordinates past the
  /// block's; null `descriptor` for cp.async.
  Value descriptor;
  SmallVector<Value> coords;
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
  if (!alloc || alloc->getBlock() != loop.getBody())
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

/// The type of one mbarrier of a stack (`stages` of them when non-zero).
MemDescType getBarrierType(MLIRContext *ctx, int64_t stages = 0) {
  auto encoding = SharedEncodingAttr::get(ctx, /*vec=*/1, /*perPhase=*/1,
                                          /*maxPhase=*/1, {1, 0});
  SmallVector<int64_t> shape{1, 1};
  if (stages)
    shape.insert(shape.begin(), stages);
  return MemDescType::get(ctx, shape, IntegerType::get(ctx, 64), encoding);
}

/// Copies `p`'s block at `pointer` into buffer `slot` of `stack` where
/// `runs`: cp.async, or the TMA signalling mbarrier `slot` of `barriers`.
void copyAhead(OpBuilder &b, Location loc, PipelinedLoad &p, Value pointer,
               Value stack, Value barriers, Value slot, Value runs) {
  Value buffer = MemDescIndexOp::create(b, loc, p.alloc.getType(), stack, slot);
  if (!p.descriptor) {
    AsyncCopyBlockOp::create(b, loc, pointer, buffer, runs,
                             p.load.getBoundaryCheck());
    return;
  }
  Value barrier = MemDescIndexOp::create(b, loc, getBarrierType(b.getContext()),
                                         barriers, slot);
  AsyncTMACopyBlockOp::create(b, loc, pointer, p.descriptor, p.coords, buffer,
                              barrier, runs);
}

/// Pipelines `loop`'s `loads` over `stages` buffers, the copy for
/// iteration k + S - lag issued in iteration k into the buffer iteration
/// k - lag read (lag 1; 2 when a read of iteration k - 1 may still be in
/// flight in iteration k). Returns the new loop.
scf::ForOp pipelineLoop(scf::ForOp loop, MutableArrayRef<PipelinedLoad> loads,
                        int64_t stages, int64_t lag) {
  Location loc = loop.getLoc();
  MLIRContext *ctx = loop.getContext();
  OpBuilder b(loop);
  Value lower = loop.getLowerBound(), upper = loop.getUpperBound(),
        step = loop.getStep();
  bool anyCpAsync =
      llvm::any_of(loads, [](const PipelinedLoad &p) { return !p.descriptor; });
  bool anyTma = llvm::any_of(
      loads, [](const PipelinedLoad &p) { return bool(p.descriptor); });

  // Stacks of buffers (and of mbarriers) and the prologue, after a barrier:
  // the stacks may share memory with buffers that threads were reading
  // until now.
  SmallVector<Value> stacks, barrierStacks;
  for (PipelinedLoad &p : loads) {
    MemDescType buffer = p.alloc.getType();
    SmallVector<int64_t> shape{stages};
    llvm::append_range(shape, buffer.getShape());
    stacks.push_back(LocalAllocOp::create(
        b, loc,
        MemDescType::get(ctx, shape, buffer.getElementType(),
                         buffer.getEncoding()),
        Value()));
    barrierStacks.push_back(
        p.descriptor
            ? LocalAllocOp::create(b, loc, getBarrierType(ctx, stages), Value())
                  .getResult()
            : Value());
  }
  if (anyCpAsync)
    AsyncWaitOp::create(b, loc, 0);
  for (Value barriers : barrierStacks)
    if (barriers)
      InitBarriersOp::create(b, loc, barriers);
  for (int64_t s = 0; s + lag < stages; ++s) {
    Value runs = iterationRuns(b, loc, lower, step, upper, s);
    for (auto [p, stack, barriers] : llvm::zip(loads, stacks, barrierStacks)) {
      Value init = loop.getInitArgs()[p.iterArg];
      copyAhead(b, loc, p, advanceBy(b, loc, init, p.advance, s), stack,
                barriers, createSlot(b, loc, s), runs);
    }
    if (anyCpAsync)
      AsyncCommitGroupOp::create(b, loc);
  }

  // The loop carries the slot it reads (and, with mbarriers, the parity of
  // the slot's phase: it flips each time the slots wrap around); the slot
  // iteration k - lag read is the one iteration k + S - lag fills.
  SmallVector<Value> carried{createSlot(b, loc, 0)};
  if (anyTma)
    carried.push_back(createSlot(b, loc, 0));
  IRRewriter rewriter(ctx);
  rewriter.setInsertionPoint(loop);
  auto newLoop = cast<scf::ForOp>(*loop.replaceWithAdditionalYields(
      rewriter, carried,
      /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &yb, Location yieldLoc,
          ArrayRef<BlockArgument> newArgs) -> SmallVector<Value> {
        Value slot = newArgs[0];
        Value last =
            arith::CmpIOp::create(yb, yieldLoc, arith::CmpIPredicate::eq, slot,
                                  createSlot(yb, yieldLoc, stages - 1));
        Value next = arith::AddIOp::create(yb, yieldLoc, slot,
                                           createSlot(yb, yieldLoc, 1));
        SmallVector<Value> yields{arith::SelectOp::create(
            yb, yieldLoc, last, createSlot(yb, yieldLoc, 0), next)};
        if (anyTma) {
          Value phase = newArgs[1];
          Value flipped = arith::XOrIOp::create(yb, yieldLoc, phase,
                                                createSlot(yb, yieldLoc, 1));
          yields.push_back(
              arith::SelectOp::create(yb, yieldLoc, last, flipped, phase));
        }
        return yields;
      }));
  Block *body = newLoop.getBody();
  Value slot = body->getArgument(body->getNumArguments() - carried.size());
  Value phase = anyTma ? body->getArguments().back() : Value();
  b.setInsertionPointToStart(body);
  if (anyCpAsync)
    AsyncWaitOp::create(b, loc, stages - 1 - lag);
  else
    BarrierOp::create(b, loc);
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
  for (auto [p, stack, barriers] : llvm::zip(loads, stacks, barrierStacks)) {
    // The body's ops moved to the new loop; its arguments are new.
    Value pointer = newLoop.getRegionIterArgs()[p.iterArg];
    Value current =
        MemDescIndexOp::create(b, loc, p.alloc.getType(), stack, slot);
    copyAhead(b, loc, p, advanceBy(b, loc, pointer, p.advance, stages - lag),
              stack, barriers, writeSlot, runs);
    if (barriers) {
      // Each thread waits for the buffer's bytes before its first use.
      Operation *firstUse = nullptr;
      for (Operation *user : p.alloc->getUsers()) {
        Operation *holder = body->findAncestorOpInBlock(*user);
        if (holder && (!firstUse || holder->isBeforeInBlock(firstUse)))
          firstUse = holder;
      }
      OpBuilder::InsertionGuard guard(b);
      if (firstUse)
        b.setInsertionPoint(firstUse);
      Value barrier =
          MemDescIndexOp::create(b, loc, getBarrierType(ctx), barriers, slot);
      WaitBarrierOp::create(b, loc, barrier, phase);
    }
    p.alloc.getResult().replaceAllUsesWith(current);
  }
  if (anyCpAsync)
    AsyncCommitGroupOp::create(b, loc);
  // No copy is in flight after the loop (those past its end never ran):
  // the mbarriers' memory may be reused.
  b.setInsertionPointAfter(newLoop);
  for (Value barriers : barrierStacks)
    if (barriers)
      InvalBarriersOp::create(b, loc, barriers);
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
    // A transposed view reads the same buffer (an [N, K] tile of B).
    if (auto trans = buffer.getDefiningOp<MemDescTransOp>())
      buffer = trans.getSrc();
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
WarpGroupDotWaitOp keepProductInFlight(scf::ForOp loop, WarpGroupDotOp dot) {
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
  return done;
}

/// Has `p` copied by the TMA where the runtime can describe its tensor,
/// through the kernel's descriptor parameter for it; `axisInfo` holds each
/// kernel's analysis, made on first use.
void planTensorMapCopy(
    scf::ForOp loop, PipelinedLoad &p,
    llvm::DenseMap<Operation *, tile::AxisInfoAnalysis> &axisInfo) {
  auto kernel = loop->getParentOfType<func::FuncOp>();
  // The TMA reads zeros outside the tensor.
  if (!kernel || !tile::isKernel(kernel) ||
      (!p.load.getBoundaryCheck().empty() &&
       p.load.getPadding() != tile::Padding::zero))
    return;
  auto &axis = axisInfo.try_emplace(kernel, kernel).first->second;
  OpBuilder b(loop);
  std::optional<TensorMapAccess> access = planTensorMapAccess(
      b, loop.getInitArgs()[p.iterArg], p.alloc.getType(), axis);
  if (!access)
    return;
  p.descriptor = getTensorMapParameter(kernel, access->descriptor);
  p.coords = std::move(access->coords);
}

//===----------------------------------------------------------------------===//
// Warp specialization: producer warps issue the copies
//===----------------------------------------------------------------------===//

/// The stacks of buffers and mbarriers that loops with alike loads share:
/// per load, `stages` buffers, a "full" mbarrier per stage (the copy's
/// bytes landed) and an "empty" one (every consumer thread is done with
/// the buffer).
struct Ring {
  SmallVector<MemDescType> buffers;
  SmallVector<Value> stacks, full, empty;
  /// The slot and phase the next loop on the ring starts from: the
  /// consumer's (in the kernel's body) and the producer's (in its region).
  Value slot, phase, producerSlot, producerPhase;
};

/// A pipelined loop as the producer warps see it.
struct ProducerLoop {
  scf::ForOp loop;
  Ring *ring;
  SmallVector<PipelinedLoad> loads;
};

/// Whether the producer thread can compute `value` from the kernel's
/// arguments alone: through pure scalar ops (no tile) at the top of the
/// kernel's body.
bool producerCanCompute(Value value, Block *entry,
                        llvm::DenseMap<Value, bool> &known) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getOwner() == entry;
  auto [it, inserted] = known.try_emplace(value, false);
  if (!inserted)
    return it->second;
  Operation *def = value.getDefiningOp();
  auto isTile = llvm::IsaPred<RankedTensorType>;
  bool can = def->getBlock() == entry && def->getNumRegions() == 0 &&
             isMemoryEffectFree(def) &&
             llvm::none_of(def->getResultTypes(), isTile) &&
             llvm::none_of(def->getOperandTypes(), isTile) &&
             llvm::all_of(def->getOperands(), [&](Value operand) {
               return producerCanCompute(operand, entry, known);
             });
  known[value] = can;
  return can;
}

/// `value` computed in the producer's region by `b` (clones of the ops it
/// comes from, each made once).
Value cloneIntoProducer(OpBuilder &b, Value value, IRMapping &mapping) {
  if (isa<BlockArgument>(value) || mapping.contains(value))
    return mapping.lookupOrDefault(value);
  Operation *def = value.getDefiningOp();
  for (Value operand : def->getOperands())
    cloneIntoProducer(b, operand, mapping);
  b.clone(*def, mapping);
  return mapping.lookup(value);
}

/// Values the producer needs to copy `p`'s blocks in `loop`.
SmallVector<Value> getProducerInputs(scf::ForOp loop, PipelinedLoad &p) {
  SmallVector<Value> inputs{loop.getLowerBound(), loop.getUpperBound(),
                            loop.getStep(), loop.getInitArgs()[p.iterArg],
                            p.descriptor};
  llvm::append_range(inputs, p.advance.getOffsets());
  llvm::append_range(inputs, p.coords);
  return inputs;
}

/// Every op that reads `buffer`, through transposed views.
SmallVector<Operation *> getReaders(Value buffer) {
  SmallVector<Operation *> readers;
  SmallVector<Value> views{buffer};
  while (!views.empty())
    for (Operation *user : views.pop_back_val().getUsers()) {
      if (isa<MemDescTransOp>(user))
        views.push_back(user->getResult(0));
      else
        readers.push_back(user);
    }
  return readers;
}

Value getBarrier(OpBuilder &b, Location loc, Value stack, Value slot) {
  return MemDescIndexOp::create(b, loc, getBarrierType(b.getContext()), stack,
                                slot);
}

/// (slot + 1) mod stages, and the phase, flipped when the slot wraps.
std::pair<Value, Value> nextSlot(OpBuilder &b, Location loc, Value slot,
                                 Value phase, int64_t stages) {
  Value last = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, slot,
                                     createSlot(b, loc, stages - 1));
  Value next = arith::SelectOp::create(
      b, loc, last, createSlot(b, loc, 0),
      arith::AddIOp::create(b, loc, slot, createSlot(b, loc, 1)));
  Value flipped = arith::XOrIOp::create(b, loc, phase, createSlot(b, loc, 1));
  return {next, arith::SelectOp::create(b, loc, last, flipped, phase)};
}

/// The consumer's side of `pl.loop`: it carries the ring's slot and phase,
/// waits on a load's "full" mbarrier before the buffer's first use and
/// arrives on its "empty" one once done with it (lag 1: after its last
/// use, at the iteration's end where a product reads it asynchronously;
/// lag 2, a product left in flight: the buffer of the iteration before,
/// after this iteration's product). Returns the new loop.
scf::ForOp consumeRing(ProducerLoop &pl, int64_t stages,
                       WarpGroupDotOp carried) {
  scf::ForOp loop = pl.loop;
  Ring &ring = *pl.ring;
  Location loc = loop.getLoc();
  IRRewriter rewriter(loop.getContext());
  rewriter.setInsertionPoint(loop);
  auto newLoop = cast<scf::ForOp>(*loop.replaceWithAdditionalYields(
      rewriter, ValueRange{ring.slot, ring.phase},
      /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &yb, Location yieldLoc,
          ArrayRef<BlockArgument> newArgs) -> SmallVector<Value> {
        auto [slot, phase] =
            nextSlot(yb, yieldLoc, newArgs[0], newArgs[1], stages);
        return {slot, phase};
      }));
  Block *body = newLoop.getBody();
  Value slot = body->getArgument(body->getNumArguments() - 2);
  Value phase = body->getArguments().back();
  OpBuilder b(body, body->begin());
  Value previousSlot;
  Value notFirst;
  if (carried) {
    // (slot - 1) mod S; the first iteration of the loop has no previous
    // one of its own (the loop before on the ring released its last).
    Value wraps = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, slot,
                                        createSlot(b, loc, 0));
    previousSlot = arith::SelectOp::create(
        b, loc, wraps, createSlot(b, loc, stages - 1),
        arith::SubIOp::create(b, loc, slot, createSlot(b, loc, 1)));
    notFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                     newLoop.getInductionVar(),
                                     newLoop.getLowerBound());
  }
  for (auto [i, p] : llvm::enumerate(pl.loads)) {
    Value current =
        MemDescIndexOp::create(b, loc, p.alloc.getType(), ring.stacks[i], slot);
    SmallVector<Operation *> readers = getReaders(p.alloc.getResult());
    Operation *firstUse = nullptr, *lastUse = nullptr;
    bool readAsync = false;
    for (Operation *reader : readers) {
      Operation *holder = body->findAncestorOpInBlock(*reader);
      if (!firstUse || holder->isBeforeInBlock(firstUse))
        firstUse = holder;
      if (!lastUse || lastUse->isBeforeInBlock(holder))
        lastUse = holder;
      auto dot = dyn_cast<WarpGroupDotOp>(reader);
      readAsync |= dot && dot.getIsAsync();
    }
    {
      OpBuilder::InsertionGuard guard(b);
      if (firstUse)
        b.setInsertionPoint(firstUse);
      WaitBarrierOp::create(b, loc, getBarrier(b, loc, ring.full[i], slot),
                            phase);
    }
    {
      OpBuilder::InsertionGuard guard(b);
      if (carried) {
        b.setInsertionPoint(body->getTerminator());
        ArriveBarrierOp::create(
            b, loc, getBarrier(b, loc, ring.empty[i], previousSlot), notFirst);
      } else {
        if (readAsync || !lastUse)
          b.setInsertionPoint(body->getTerminator());
        else
          b.setInsertionPointAfter(lastUse);
        ArriveBarrierOp::create(b, loc, getBarrier(b, loc, ring.empty[i], slot),
                                Value());
      }
    }
    p.alloc.getResult().replaceAllUsesWith(current);
  }
  for (PipelinedLoad &p : pl.loads) {
    p.alloc.erase();
    p.load.erase();
  }
  ring.slot = newLoop.getResults().drop_back().back();
  ring.phase = newLoop.getResults().back();
  if (carried) {
    WarpGroupDotWaitOp done = keepProductInFlight(newLoop, carried);
    // The last iteration's buffers are released once its product is done.
    OpBuilder after(done->getContext());
    after.setInsertionPointAfter(done);
    Value wraps = arith::CmpIOp::create(after, loc, arith::CmpIPredicate::eq,
                                        ring.slot, createSlot(after, loc, 0));
    Value lastSlot = arith::SelectOp::create(
        after, loc, wraps, createSlot(after, loc, stages - 1),
        arith::SubIOp::create(after, loc, ring.slot,
                              createSlot(after, loc, 1)));
    Value ran =
        arith::CmpIOp::create(after, loc, arith::CmpIPredicate::slt,
                              newLoop.getLowerBound(), newLoop.getUpperBound());
    for (Value empty : ring.empty)
      ArriveBarrierOp::create(after, loc,
                              getBarrier(after, loc, empty, lastSlot), ran);
  }
  pl.loop = newLoop;
  return newLoop;
}

/// The producer's side of `pl`, in the warp_specialize region `b` inserts
/// into: the same iterations, each waiting until its stage is empty, then
/// copying every load into it.
void produceRing(OpBuilder &b, ProducerLoop &pl, IRMapping &mapping,
                 int64_t stages) {
  scf::ForOp loop = pl.loop;
  Ring &ring = *pl.ring;
  Location loc = loop.getLoc();
  Value lower = cloneIntoProducer(b, loop.getLowerBound(), mapping);
  Value upper = cloneIntoProducer(b, loop.getUpperBound(), mapping);
  Value step = cloneIntoProducer(b, loop.getStep(), mapping);
  SmallVector<Value> inits;
  SmallVector<SmallVector<Value>> coords, offsets;
  for (PipelinedLoad &p : pl.loads) {
    inits.push_back(
        cloneIntoProducer(b, loop.getInitArgs()[p.iterArg], mapping));
    auto clone = [&](Value v) { return cloneIntoProducer(b, v, mapping); };
    coords.push_back(llvm::map_to_vector(p.coords, clone));
    offsets.push_back(llvm::map_to_vector(p.advance.getOffsets(), clone));
  }
  inits.push_back(ring.producerSlot);
  inits.push_back(ring.producerPhase);
  auto producer = scf::ForOp::create(
      b, loc, lower, upper, step, inits,
      [&](OpBuilder &lb, Location bodyLoc, Value iv, ValueRange args) {
        Value slot = args[args.size() - 2], phase = args.back();
        // A stage is empty once its previous phase completed: parity
        // phase ^ 1 (at once for the first round).
        Value emptyPhase = arith::XOrIOp::create(lb, bodyLoc, phase,
                                                 createSlot(lb, bodyLoc, 1));
        SmallVector<Value> yields;
        for (auto [i, p] : llvm::enumerate(pl.loads)) {
          WaitBarrierOp::create(lb, bodyLoc,
                                getBarrier(lb, bodyLoc, ring.empty[i], slot),
                                emptyPhase);
          Value buffer = MemDescIndexOp::create(lb, bodyLoc, p.alloc.getType(),
                                                ring.stacks[i], slot);
          AsyncTMACopyBlockOp::create(
              lb, bodyLoc, args[i], p.descriptor, coords[i], buffer,
              getBarrier(lb, bodyLoc, ring.full[i], slot), Value());
          yields.push_back(tile::AdvanceOp::create(
              lb, bodyLoc, args[i].getType(), args[i], offsets[i]));
        }
        auto [nextS, nextP] = nextSlot(lb, bodyLoc, slot, phase, stages);
        yields.push_back(nextS);
        yields.push_back(nextP);
        scf::YieldOp::create(lb, bodyLoc, yields);
      });
  ring.producerSlot = producer.getResults().drop_back().back();
  ring.producerPhase = producer.getResults().back();
}

/// How a warp-specialized kernel shares an SM's 64K registers: the
/// producer warpgroup keeps the fewest, the consumer warps what the CTA's
/// registers at launch leave them (up to FlashAttention-3's 240). One
/// warpgroup of consumers runs two CTAs an SM, so that each hides the
/// other's softmax, more run one.
struct RegisterSplit {
  int32_t producer, consumer, ctasPerSM;
};
constexpr int32_t kProducerWarps = 4;
RegisterSplit splitRegisters(unsigned numWarps) {
  constexpr int32_t kRegistersPerSM = 65536, kMaxPerThread = 248;
  RegisterSplit split{24, 0, numWarps <= 4 ? 2 : 1};
  int32_t consumerThreads = 32 * numWarps;
  int32_t threads = consumerThreads + 32 * kProducerWarps;
  int32_t atLaunch = std::min(kMaxPerThread, kRegistersPerSM / split.ctasPerSM /
                                                 threads / 8 * 8);
  int32_t spare = atLaunch * threads - split.producer * 32 * kProducerWarps;
  split.consumer = std::min<int32_t>(240, spare / consumerThreads / 8 * 8);
  return split;
}

/// Warp-specializes `kernel` if every loop of `plans` (the kernel's) is at
/// the top of its body, copies every load by the TMA, and the producer can
/// compute what the copies need; returns whether it did.
bool specializeWarps(
    func::FuncOp kernel,
    MutableArrayRef<std::pair<scf::ForOp, SmallVector<PipelinedLoad>>> plans,
    int64_t stages, unsigned numWarps) {
  Block *entry = &kernel.front();
  llvm::DenseMap<Value, bool> known;
  for (auto &[loop, loads] : plans) {
    if (loop->getBlock() != entry)
      return false;
    for (PipelinedLoad &p : loads)
      if (!p.descriptor ||
          !llvm::all_of(getProducerInputs(loop, p), [&](Value v) {
            return producerCanCompute(v, entry, known);
          }))
        return false;
  }
  if (!kernel.getOps<WarpSpecializeOp>().empty())
    return false;
  llvm::sort(plans, [](auto &a, auto &b) {
    return a.first->isBeforeInBlock(b.first);
  });
  MLIRContext *ctx = kernel.getContext();
  Location loc = kernel.getLoc();
  OpBuilder top(entry, entry->begin());
  std::deque<Ring> rings;
  SmallVector<ProducerLoop> loops;
  for (auto &[loop, loads] : plans) {
    SmallVector<MemDescType> buffers;
    for (PipelinedLoad &p : loads)
      buffers.push_back(p.alloc.getType());
    Ring *ring = nullptr;
    for (Ring &r : rings)
      if (r.buffers == buffers)
        ring = &r;
    if (!ring) {
      ring = &rings.emplace_back();
      ring->buffers = buffers;
      for (MemDescType buffer : buffers) {
        SmallVector<int64_t> shape{stages};
        llvm::append_range(shape, buffer.getShape());
        ring->stacks.push_back(LocalAllocOp::create(
            top, loc,
            MemDescType::get(ctx, shape, buffer.getElementType(),
                             buffer.getEncoding()),
            Value()));
        ring->full.push_back(LocalAllocOp::create(
            top, loc, getBarrierType(ctx, stages), Value()));
        ring->empty.push_back(LocalAllocOp::create(
            top, loc, getBarrierType(ctx, stages), Value()));
      }
    }
    loops.push_back({loop, ring, loads});
  }
  int32_t consumerThreads = 32 * numWarps;
  for (Ring &ring : rings) {
    for (Value full : ring.full)
      InitBarriersOp::create(top, loc, full, 1);
    for (Value empty : ring.empty)
      InitBarriersOp::create(top, loc, empty, consumerThreads);
    ring.slot = ring.producerSlot = createSlot(top, loc, 0);
    ring.phase = ring.producerPhase = ring.slot;
  }
  RegisterSplit split = splitRegisters(numWarps);
  auto ws = WarpSpecializeOp::create(top, loc, kProducerWarps, split.producer,
                                     split.consumer, split.ctasPerSM);
  OpBuilder producer(ctx);
  producer.setInsertionPointToStart(&ws.getProducer().emplaceBlock());
  IRMapping mapping;
  // The producer's inputs are cloned before the consumers' loops change.
  for (ProducerLoop &pl : loops)
    produceRing(producer, pl, mapping, stages);
  for (ProducerLoop &pl : loops) {
    WarpGroupDotOp carried =
        stages >= 3 ? findCarriedProduct(pl.loop, pl.loads) : WarpGroupDotOp();
    consumeRing(pl, stages, carried);
  }
  // At the kernel's end no copy is pending and no thread waits: the
  // mbarriers end there (their memory is reused by nothing after).
  OpBuilder end(entry->getTerminator());
  for (Ring &ring : rings)
    for (Value barriers : llvm::concat<Value>(ring.full, ring.empty))
      InvalBarriersOp::create(end, loc, barriers);
  return true;
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
    // Iterations are counted forwards from the lower bound. Inner loops
    // come first, so carrying an outer loop's pointers (which makes a new
    // loop around them) leaves them valid.
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) {
      auto step = getConstantIntValue(loop.getStep());
      if (step && *step > 0)
        loops.push_back(loop);
    });
    for (scf::ForOp &loop : loops)
      loop = carryBlockPointers(loop);
    // Which loads each loop pipelines, and how each is copied, decided on
    // the IR as it came (the analyses see no half-pipelined function).
    SmallVector<std::pair<scf::ForOp, SmallVector<PipelinedLoad>>> plans;
    for (scf::ForOp loop : loops) {
      SmallVector<PipelinedLoad> loads;
      for (auto load : loop.getBody()->getOps<tile::LoadBlockOp>())
        if (auto p = matchLoad(loop, load))
          loads.push_back(*p);
      if (!loads.empty())
        plans.emplace_back(loop, std::move(loads));
    }
    // Each load is copied by the TMA where it can, else by cp.async where
    // it can, else not pipelined.
    llvm::DenseMap<Operation *, tile::AxisInfoAnalysis> axisInfo;
    for (auto &[loop, loads] : plans) {
      if (useTma)
        for (PipelinedLoad &p : loads)
          planTensorMapCopy(loop, p, axisInfo);
      llvm::erase_if(loads, [](PipelinedLoad &p) {
        return !p.descriptor && !copiesInVectors(p.load, p.alloc);
      });
    }
    llvm::erase_if(plans, [](auto &plan) { return plan.second.empty(); });
    if (useTma && warpSpecialize) {
      auto numWarps = getOperation()->getAttrOfType<IntegerAttr>(
          TileGPUDialect::getNumWarpsAttrName());
      llvm::DenseMap<Operation *, SmallVector<size_t>> byKernel;
      for (auto [i, plan] : llvm::enumerate(plans))
        byKernel[plan.first->getParentOfType<func::FuncOp>()].push_back(i);
      llvm::DenseSet<size_t> specialized;
      for (auto &[kernel, indices] : byKernel) {
        SmallVector<std::pair<scf::ForOp, SmallVector<PipelinedLoad>>> mine;
        for (size_t i : indices)
          mine.push_back(plans[i]);
        auto func = dyn_cast_or_null<func::FuncOp>(kernel);
        if (func && tile::isKernel(func) && numWarps &&
            specializeWarps(func, mine, numStages, numWarps.getInt()))
          specialized.insert(indices.begin(), indices.end());
      }
      SmallVector<std::pair<scf::ForOp, SmallVector<PipelinedLoad>>> rest;
      for (auto [i, plan] : llvm::enumerate(plans))
        if (!specialized.contains(i))
          rest.push_back(std::move(plan));
      plans = std::move(rest);
    }
    for (auto &[loop, loads] : plans) {
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
