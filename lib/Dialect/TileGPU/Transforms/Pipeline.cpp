//===- Pipeline.cpp - Loads copied ahead (cp.async, TMA) ------------------===//
//
// A loop that reads a block through a block pointer advanced by the same
// amount each iteration, or a tile through pointers it carries and advances
// so (Triton's `a_ptrs += BLOCK_K * stride_ak`, under a mask the induction
// variable gives) or computes from the induction variable (through loads of
// tables the loop does not write: paged attention's block table, read for
// the iteration ahead only if it runs), only to store it into a
// shared-memory buffer (a dot
// operand staged by tilegpu-optimize-dot-operands), instead copies it with
// cp.async straight into a stack of `num-stages` buffers, the copy for
// iteration k + S - 1 issued in iteration k (its pointers advanced and its
// mask computed for that iteration):
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
// With warp-specialize, a kernel whose every such load the TMA can copy is
// split instead, producer warps issuing the copies (WarpSpecialize.cpp).
//
//===----------------------------------------------------------------------===//

#include "Pipelining.h"
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
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tilegpu {
#define GEN_PASS_DEF_TILEGPUPIPELINE
#include "tile/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace mlir::tilegpu

using namespace mlir;
using namespace mlir::tilegpu;

Value tilegpu::createSlot(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIntOp::create(b, loc, value, 32);
}

/// The type of one mbarrier of a stack (`stages` of them when non-zero).
MemDescType tilegpu::getBarrierType(MLIRContext *ctx, int64_t stages) {
  auto encoding = SharedEncodingAttr::get(ctx, /*vec=*/1, /*perPhase=*/1,
                                          /*maxPhase=*/1, {1, 0});
  SmallVector<int64_t> shape{1, 1};
  if (stages)
    shape.insert(shape.begin(), stages);
  return MemDescType::get(ctx, shape, IntegerType::get(ctx, 64), encoding);
}

/// The loop's one product that can stay in flight into the next iteration:
/// a warpgroup_dot that accumulates into a value the loop carries and
/// yields, reading only buffers the pipeline fills (the GEMM's main loop).
WarpGroupDotOp tilegpu::findCarriedProduct(scf::ForOp loop,
                                           ArrayRef<Value> buffers) {
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
    return llvm::is_contained(buffers, buffer);
  };
  if (!isa<MemDescType>(dot.getA().getType()) || !isPipelined(dot.getA()) ||
      !isPipelined(dot.getB()))
    return {};
  return dot;
}

/// Leaves `dot`'s wgmma group in flight: each iteration waits for the one
/// before (at most one pending), and the loop's result is waited for in
/// full after it.
WarpGroupDotWaitOp tilegpu::keepProductInFlight(scf::ForOp loop,
                                                WarpGroupDotOp dot) {
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

/// `value` (isComputableAt) at induction value `iv`, computed where `b`
/// inserts: before the loop, or in its body for an iteration ahead. A load
/// on the way (the block table paged addresses are gathered through) reads
/// only where `runs`, whether that iteration runs, holds.
Value evaluateAt(OpBuilder &b, scf::ForOp loop, Value value, Value iv,
                 Value runs = {}) {
  if (loop.isDefinedOutsideOfLoop(value))
    return value;
  if (value == loop.getInductionVar())
    return iv;
  Operation *def = value.getDefiningOp();
  IRMapping mapping;
  for (Value operand : def->getOperands())
    mapping.map(operand, evaluateAt(b, loop, operand, iv, runs));
  Operation *clone = b.clone(*def, mapping);
  if (auto load = dyn_cast<tile::LoadOp>(clone)) {
    assert(runs && "a load evaluated for an iteration that may not run");
    OpBuilder::InsertionGuard guardPoint(b);
    b.setInsertionPoint(load);
    Location loc = load.getLoc();
    Value guard = runs;
    if (auto pointers = dyn_cast<RankedTensorType>(load.getPtr().getType()))
      guard = tile::SplatOp::create(
          b, loc,
          RankedTensorType::get(pointers.getShape(), b.getI1Type(),
                                pointers.getEncoding()),
          runs);
    if (Value mask = load.getMask())
      guard = arith::AndIOp::create(b, loc, mask, guard);
    load.getMaskMutable().assign(guard);
  }
  return clone->getResult(0);
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
  // The loop's hints (its own num_stages) stay with it.
  DictionaryAttr hints = loop->getDiscardableAttrDictionary();
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
  carried->setDiscardableAttrs(hints);
  auto pointers = carried.getRegionIterArgs().take_back(made.size());
  for (auto [block, pointer] : llvm::zip(made, pointers)) {
    block.getResult().replaceAllUsesWith(pointer);
    block.erase();
  }
  return carried;
}

/// Whether `value`, used in `loop`'s body, can be computed for any
/// iteration from the induction variable alone (`withInduction`; else from
/// nothing the loop changes): defined before the loop, the induction
/// variable, or an op of the body without memory effects on such values (a
/// load's mask of the keys left, `k < K - iv * BLOCK_K`; divisions too, as
/// the body computes them each iteration), or with `withLoads` a load of
/// them (paged attention's block table).
bool isComputableAt(scf::ForOp loop, Value value, bool withInduction = true,
                    bool withLoads = false) {
  if (loop.isDefinedOutsideOfLoop(value))
    return true;
  if (value == loop.getInductionVar())
    return withInduction;
  Operation *def = value.getDefiningOp();
  return def && def->getBlock() == loop.getBody() &&
         def->getNumResults() == 1 && def->getNumRegions() == 0 &&
         (isMemoryEffectFree(def) || (withLoads && isa<tile::LoadOp>(def))) &&
         llvm::all_of(def->getOperands(), [&](Value operand) {
           return isComputableAt(loop, operand, withInduction, withLoads);
         });
}

/// Whether `loop` writes no global memory (no store or atomic): a load in
/// it reads the same whichever iteration issues it.
bool writesNoGlobalMemory(scf::ForOp loop) {
  return !loop.walk([](Operation *op) {
                bool global = isa<tile::TileDialect>(op->getDialect()) ||
                              isa<AsyncTMAStoreBlockOp, AsyncTMAReduceBlockOp,
                                  AsyncBulkReduceOp>(op);
                return global && hasEffect<MemoryEffects::Write>(op)
                           ? WalkResult::interrupt()
                           : WalkResult::advance();
              })
              .wasInterrupted();
}

/// Whether `value` is a constant tile of zeros.
bool isZeroTile(Value value) {
  Attribute attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return false;
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense || !dense.isSplat())
    return false;
  if (auto f = dyn_cast<FloatAttr>(dense.getSplatValue<Attribute>()))
    return f.getValue().isPosZero();
  if (auto i = dyn_cast<IntegerAttr>(dense.getSplatValue<Attribute>()))
    return i.getValue().isZero();
  return false;
}

/// A load the loop can copy ahead: `load` (a tile::LoadBlockOp, or a
/// tile::LoadOp of a tile of pointers) reads through the loop's iter_arg
/// number `iterArg`, which `advance` (a tile::AdvanceOp, or a tile::AddPtrOp)
/// moves by loop-invariant offsets and the loop yields; or, without
/// `advance`, through pointers computable from the induction variable (and
/// loads of tables that the loop does not write). `alloc` is the load's
/// only user.
struct PipelinedLoad {
  Operation *load;
  LocalAllocOp alloc;
  Operation *advance;
  unsigned iterArg;
  /// With the TMA: the descriptor parameter and the coordinates past the
  /// block's; null `descriptor` for cp.async.
  Value descriptor;
  SmallVector<Value> coords;
};

/// True when each thread's part of the tile is whole 16-byte vectors along
/// the dimension the buffer keeps contiguous, on addresses tilegpu-coalesce
/// proved 16-byte aligned (and, for pointers, under one mask value each),
/// and no check splits a vector.
bool copiesInVectors(Operation *load, SharedLayoutAttrInterface shared) {
  auto type = cast<RankedTensorType>(load->getResult(0).getType());
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
  if (!proven || proven.getInt() != width ||
      layout.getSizePerThread()[inner] % width != 0 ||
      shared.getOrder()[0] != inner || shared.getVec() < width)
    return false;
  if (auto pointers = dyn_cast<tile::LoadOp>(load))
    return !pointers.getOther() || isZeroTile(pointers.getOther());
  auto block = cast<tile::LoadBlockOp>(load);
  return !llvm::is_contained(block.getBoundaryCheck(),
                             static_cast<int32_t>(inner)) &&
         (block.getBoundaryCheck().empty() ||
          block.getPadding() == tile::Padding::zero);
}

/// `readsTables`: the loop writes no global memory, so loads on the way to
/// a tile's pointers can be read for an iteration ahead.
std::optional<PipelinedLoad> matchLoad(scf::ForOp loop, Operation *load,
                                       bool readsTables) {
  if (!load->hasOneUse())
    return std::nullopt;
  auto alloc = dyn_cast<LocalAllocOp>(*load->getUsers().begin());
  if (!alloc || alloc->getBlock() != loop.getBody())
    return std::nullopt;
  // A tile of pointers' mask must be known for the iterations ahead; so
  // must its pointers, unless the loop carries and advances them.
  if (auto pointers = dyn_cast<tile::LoadOp>(load)) {
    if (pointers.getMask() &&
        !isComputableAt(loop, pointers.getMask(), true, readsTables))
      return std::nullopt;
    if (isComputableAt(loop, pointers.getPtr(), true, readsTables))
      return PipelinedLoad{load, alloc, /*advance=*/nullptr, /*iterArg=*/0};
  }
  auto pointer = dyn_cast<BlockArgument>(load->getOperand(0));
  if (!pointer || pointer.getOwner() != loop.getBody() ||
      pointer.getArgNumber() == 0)
    return std::nullopt;
  // The pointer feeds the load and one advance by loop-invariant offsets,
  // whose result is what the loop carries on.
  Operation *advance = nullptr;
  for (Operation *user : pointer.getUsers()) {
    if (user == load)
      continue;
    if (!isa<tile::AdvanceOp, tile::AddPtrOp>(user) || advance)
      return std::nullopt;
    advance = user;
  }
  unsigned index = pointer.getArgNumber() - 1;
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  if (!advance || yield.getOperand(index) != advance->getResult(0) ||
      !advance->hasOneUse() ||
      !llvm::all_of(advance->getOperands().drop_front(), [&](Value offset) {
        return isComputableAt(loop, offset, /*withInduction=*/false);
      }))
    return std::nullopt;
  return PipelinedLoad{load, alloc, advance, index};
}

/// `pointer` advanced `times` times by `p`'s advance (its offsets computed
/// where `b` inserts).
Value advanceBy(OpBuilder &b, Location loc, scf::ForOp loop, Value pointer,
                PipelinedLoad &p, int64_t times) {
  if (times == 0)
    return pointer;
  Value iv = loop.getInductionVar();
  if (auto advance = dyn_cast<tile::AdvanceOp>(p.advance)) {
    Value count = arith::ConstantIntOp::create(b, loc, times, 32);
    SmallVector<Value> offsets;
    for (Value offset : advance.getOffsets())
      offsets.push_back(arith::MulIOp::create(
          b, loc, evaluateAt(b, loop, offset, iv), count));
    return tile::AdvanceOp::create(b, loc, pointer.getType(), pointer, offsets);
  }
  auto addptr = cast<tile::AddPtrOp>(p.advance);
  Value offset = evaluateAt(b, loop, addptr.getOffset(), iv);
  Type type = offset.getType();
  Attribute count = b.getIntegerAttr(getElementTypeOrSelf(type), times);
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    count = SplatElementsAttr::get(tensor, count);
  Value scaled = arith::MulIOp::create(
      b, loc, offset,
      arith::ConstantOp::create(b, loc, cast<TypedAttr>(count)));
  return tile::AddPtrOp::create(b, loc, pointer.getType(), pointer, scaled);
}

/// The induction value of iteration `times` counted from `first`'s.
Value inductionAt(OpBuilder &b, Location loc, Value first, Value step,
                  int64_t times) {
  if (times == 0)
    return first;
  Value count = arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(step.getType(), times));
  return arith::AddIOp::create(b, loc, first,
                               arith::MulIOp::create(b, loc, step, count));
}

/// `p`'s pointer `times` iterations past the one whose carried pointer is
/// `carried`, at induction value `iv`, which runs where `runs` holds.
Value pointerAt(OpBuilder &b, Location loc, scf::ForOp loop, PipelinedLoad &p,
                Value carried, int64_t times, Value iv, Value runs) {
  if (p.advance)
    return advanceBy(b, loc, loop, carried, p, times);
  return evaluateAt(b, loop, p.load->getOperand(0), iv, runs);
}

/// `iv < upper`: the iteration at induction value `iv` runs.
Value iterationRuns(OpBuilder &b, Location loc, Value iv, Value upper) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, iv, upper);
}

/// Copies `p`'s tile for the iteration at induction value `iv`, whose
/// pointer is `pointer`, into buffer `slot` of `stack` where `runs`:
/// cp.async, or the TMA signalling mbarrier `slot` of `barriers`.
void copyAhead(OpBuilder &b, Location loc, scf::ForOp loop, PipelinedLoad &p,
               Value pointer, Value iv, Value stack, Value barriers, Value slot,
               Value runs) {
  Value buffer = MemDescIndexOp::create(b, loc, p.alloc.getType(), stack, slot);
  if (auto pointers = dyn_cast<tile::LoadOp>(p.load)) {
    Value mask = pointers.getMask()
                     ? evaluateAt(b, loop, pointers.getMask(), iv, runs)
                     : Value();
    auto width = p.load->getAttrOfType<IntegerAttr>(
        TileGPUDialect::getVectorWidthAttrName());
    AsyncCopyOp::create(b, loc, pointer, buffer, mask, runs, width.getInt());
    return;
  }
  auto block = cast<tile::LoadBlockOp>(p.load);
  if (!p.descriptor) {
    AsyncCopyBlockOp::create(b, loc, pointer, buffer, runs,
                             block.getBoundaryCheck());
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
  SmallVector<Value> mbarriers = llvm::filter_to_vector(
      barrierStacks, [](Value stack) { return bool(stack); });
  if (!mbarriers.empty())
    InitBarriersOp::create(b, loc, mbarriers,
                           SmallVector<int32_t>(mbarriers.size(), 1));
  for (int64_t s = 0; s + lag < stages; ++s) {
    Value iv = inductionAt(b, loc, lower, step, s);
    Value runs = iterationRuns(b, loc, iv, upper);
    for (auto [p, stack, barriers] : llvm::zip(loads, stacks, barrierStacks)) {
      Value init = p.advance ? loop.getInitArgs()[p.iterArg] : Value();
      copyAhead(b, loc, loop, p, pointerAt(b, loc, loop, p, init, s, iv, runs),
                iv, stack, barriers, createSlot(b, loc, s), runs);
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
  Value ivAhead = inductionAt(b, loc, newLoop.getInductionVar(),
                              newLoop.getStep(), stages - lag);
  Value runs = iterationRuns(b, loc, ivAhead, newLoop.getUpperBound());
  for (auto [p, stack, barriers] : llvm::zip(loads, stacks, barrierStacks)) {
    // The body's ops moved to the new loop; its arguments are new.
    Value pointer =
        p.advance ? newLoop.getRegionIterArgs()[p.iterArg] : Value();
    Value current =
        MemDescIndexOp::create(b, loc, p.alloc.getType(), stack, slot);
    copyAhead(
        b, loc, newLoop, p,
        pointerAt(b, loc, newLoop, p, pointer, stages - lag, ivAhead, runs),
        ivAhead, stack, barriers, writeSlot, runs);
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
  if (!mbarriers.empty())
    InvalBarriersOp::create(b, loc, mbarriers);
  // Erased last: the builder inserts before what was the body's first op.
  for (PipelinedLoad &p : loads) {
    p.alloc.erase();
    p.load->erase();
  }
  return newLoop;
}

/// The stages `loop` asks for itself (`tile.num_stages`: tl.range's
/// num_stages), if any.
std::optional<int64_t> getOwnStages(scf::ForOp loop) {
  if (auto own = loop->getAttrOfType<IntegerAttr>(
          tile::TileDialect::getNumStagesAttrName()))
    return own.getInt();
  return std::nullopt;
}

/// Bytes of shared memory the loads a loop stages for registers may take,
/// all stages together: a softmax's row of 8192 fp32 elements on two
/// stages, with room left for the kernel's reductions.
constexpr int64_t kMaxStagedBytes = 64 * 1024;

/// The kernel argument `pointer` (a tile of pointers or a block pointer)
/// addresses memory from, through offsets, broadcasts and the loop's
/// carried values; null when it cannot be told.
BlockArgument getBaseArgument(Value pointer) {
  while (true) {
    if (auto arg = dyn_cast<BlockArgument>(pointer)) {
      auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
      if (!loop)
        return isa<func::FuncOp>(arg.getOwner()->getParentOp())
                   ? arg
                   : BlockArgument();
      if (arg.getArgNumber() == 0)
        return {};
      pointer = loop.getInitArgs()[arg.getArgNumber() - 1];
      continue;
    }
    Operation *def = pointer.getDefiningOp();
    if (!isa_and_nonnull<tile::AddPtrOp, tile::SplatOp, tile::BroadcastOp,
                         tile::ExpandDimsOp, tile::AdvanceOp,
                         tile::MakeBlockPtrOp, ConvertLayoutOp>(def))
      return {};
    pointer = def->getOperand(0);
  }
}

/// Whether copying `load` ahead in `loop` reads what it would have read:
/// the loop writes no global memory, or writes it only through other kernel
/// arguments than the load's (arguments are taken not to alias, as Triton's
/// pipeliner takes them), and has no atomics, whose orderings a copy ahead
/// could break.
bool readsAheadSafely(scf::ForOp loop, Operation *load) {
  BlockArgument base = getBaseArgument(load->getOperand(0));
  if (!base)
    return false;
  auto mayClash = [&](Operation *op) {
    if (!isa<tile::TileDialect>(op->getDialect()) ||
        isa<tile::PrintOp, tile::AssertOp>(op) ||
        !hasEffect<MemoryEffects::Write>(op))
      return false;
    if (!isa<tile::StoreOp, tile::StoreBlockOp>(op))
      return true;
    BlockArgument written = getBaseArgument(op->getOperand(0));
    return !written || written == base;
  };
  return !loop.walk([&](Operation *op) {
                return mayClash(op) ? WalkResult::interrupt()
                                    : WalkResult::advance();
              })
              .wasInterrupted();
}

/// `layout`, a rank-1 blocked layout, as the rank-2 one of a [1, N] view
/// that keeps every element in its thread and register.
BlockedEncodingAttr getRowLayout(BlockedEncodingAttr layout) {
  return BlockedEncodingAttr::get(layout.getContext(),
                                  {1, layout.getSizePerThread()[0]},
                                  {1, layout.getThreadsPerWarp()[0]},
                                  {1, layout.getWarpsPerCTA()[0]}, {1, 0});
}

/// Has `loop`'s loads whose tiles go to registers (a softmax's rows, a
/// block of them) pass through shared memory, so that the pipeliner copies
/// them ahead as it does a product's operands: each becomes a local_alloc
/// of the loaded tile, read back by a local_load in its own layout (every
/// thread reads what it copied, in 16-byte vectors). Shared memory holds
/// matrices: a row (rank 1) is loaded, stored and read as a [1, N] view,
/// reshaped in registers. Only loads that will be copied ahead are staged:
/// cp.async can copy them in 16-byte vectors, they match as pipelined
/// loads, they read ahead safely, and their stages fit kMaxStagedBytes. A
/// load's `other` (cp.async fills masked elements with zeros) is put back
/// by a tile.where.
void stageRegisterLoads(scf::ForOp loop, int64_t stages, bool readsTables) {
  SmallVector<Operation *> candidates;
  for (Operation &op : loop.getBody()->getOperations())
    if (isa<tile::LoadBlockOp, tile::LoadOp>(op) &&
        isa<RankedTensorType>(op.getResult(0).getType()) &&
        !llvm::any_of(op.getUsers(),
                      [](Operation *user) { return isa<LocalAllocOp>(user); }))
      candidates.push_back(&op);
  int64_t stagedBytes = 0;
  MLIRContext *ctx = loop.getContext();
  for (Operation *load : candidates) {
    auto type = cast<RankedTensorType>(load->getResult(0).getType());
    auto layout = dyn_cast_or_null<BlockedEncodingAttr>(type.getEncoding());
    auto pointers = dyn_cast<tile::LoadOp>(load);
    bool row = type.getRank() == 1 && pointers;
    if (!layout || (type.getRank() != 2 && !row) ||
        !type.getElementType().isIntOrFloat())
      continue;
    unsigned bits = type.getElementType().getIntOrFloatBitWidth();
    int64_t bytes = type.getNumElements() * bits / 8 * stages;
    if (stagedBytes + bytes > kMaxStagedBytes || !readsAheadSafely(loop, load))
      continue;
    // cp.async reads no `other`: a load with one is copied without it.
    Value other = pointers ? pointers.getOther() : Value();
    bool refills = other && !isZeroTile(other);
    if (refills && !pointers.getMask())
      continue;

    // What is made here, erased again if the load is not copied ahead.
    SmallVector<Operation *> made;
    auto undo = [&] {
      for (Operation *op : llvm::reverse(made))
        op->erase();
    };
    OpBuilder b(load);
    Location loc = load->getLoc();
    Operation *copied = load;
    RankedTensorType bufferType = type;
    if (row || refills) {
      Value ptr = pointers.getPtr(), mask = pointers.getMask();
      if (row) {
        layout = getRowLayout(layout);
        auto view = [&](Value value) -> Value {
          if (!value)
            return value;
          auto viewType = RankedTensorType::get(
              {1, type.getDimSize(0)},
              cast<RankedTensorType>(value.getType()).getElementType(), layout);
          made.push_back(tile::ReshapeOp::create(b, loc, viewType, value));
          return made.back()->getResult(0);
        };
        ptr = view(ptr);
        mask = view(mask);
        bufferType = RankedTensorType::get({1, type.getDimSize(0)},
                                           type.getElementType(), layout);
      }
      copied = tile::LoadOp::create(b, loc, ptr, mask, Value());
      copied->setDiscardableAttrs(load->getDiscardableAttrDictionary());
      made.push_back(copied);
    }
    int64_t width = 128 / std::max(8u, bits);
    auto shared = SharedEncodingAttr::get(ctx, width, /*perPhase=*/1,
                                          /*maxPhase=*/1, layout.getOrder());
    if (!copiesInVectors(copied, shared)) {
      undo();
      continue;
    }
    b.setInsertionPointAfter(copied);
    auto alloc =
        LocalAllocOp::create(b, loc,
                             MemDescType::get(ctx, bufferType.getShape(),
                                              type.getElementType(), shared),
                             copied->getResult(0));
    made.push_back(alloc);
    made.push_back(LocalLoadOp::create(b, loc, bufferType, alloc,
                                       b.getDenseI64ArrayAttr({0, 0})));
    if (row)
      made.push_back(
          tile::ReshapeOp::create(b, loc, type, made.back()->getResult(0)));
    if (refills)
      made.push_back(tile::WhereOp::create(b, loc, pointers.getMask(),
                                           made.back()->getResult(0), other));
    Value staged = made.back()->getResult(0);
    load->getResult(0).replaceAllUsesExcept(staged, alloc);
    if (!matchLoad(loop, copied, readsTables)) {
      staged.replaceAllUsesWith(load->getResult(0));
      undo();
      continue;
    }
    if (copied != load)
      load->erase();
    stagedBytes += bytes;
  }
}

/// Has `p` copied by the TMA where the runtime can describe its tensor,
/// through the kernel's descriptor parameter for it; `axisInfo` holds each
/// kernel's analysis, made on first use.
void planTensorMapCopy(
    scf::ForOp loop, PipelinedLoad &p,
    llvm::DenseMap<Operation *, tile::AxisInfoAnalysis> &axisInfo) {
  auto kernel = loop->getParentOfType<func::FuncOp>();
  auto block = cast<tile::LoadBlockOp>(p.load);
  // The TMA reads zeros outside the tensor.
  if (!kernel || !tile::isKernel(kernel) ||
      (!block.getBoundaryCheck().empty() &&
       block.getPadding() != tile::Padding::zero))
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
    // Iterations are counted forwards from the lower bound: scf.for's step
    // is positive, a run-time one too (a grid-strided loop over rows). Inner
    // loops come first, so carrying an outer loop's pointers (which makes a
    // new loop around them) leaves them valid. A loop's own num_stages
    // overrides the option.
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) {
      auto step = getConstantIntValue(loop.getStep());
      if ((!step || *step > 0) && getOwnStages(loop).value_or(numStages) > 1)
        loops.push_back(loop);
    });
    for (scf::ForOp &loop : loops)
      loop = carryBlockPointers(loop);
    llvm::DenseMap<Operation *, tile::AxisInfoAnalysis> axisInfo;
    // A kernel split in producer and consumer warps has its copies planned
    // whole; the others' loops are pipelined one by one.
    if (useTma && warpSpecialize && numStages > 1) {
      auto numWarps = getOperation()->getAttrOfType<IntegerAttr>(
          TileGPUDialect::getNumWarpsAttrName());
      // Each loop's kernel, known before any loop is replaced.
      SmallVector<Operation *> kernels =
          llvm::map_to_vector(loops, [](scf::ForOp loop) -> Operation * {
            return loop->getParentOfType<func::FuncOp>();
          });
      llvm::DenseSet<Operation *> specialized;
      for (auto kernel : getOperation().getOps<func::FuncOp>()) {
        if (!tile::isKernel(kernel) || !numWarps ||
            !kernel.getOps<WarpSpecializeOp>().empty())
          continue;
        auto &axis = axisInfo.try_emplace(kernel, kernel).first->second;
        if (specializeWarps(kernel, numStages, numWarps.getInt(), axis))
          specialized.insert(kernel);
      }
      SmallVector<scf::ForOp> rest;
      for (auto [loop, kernel] : llvm::zip(loops, kernels))
        if (!specialized.contains(kernel))
          rest.push_back(loop);
      loops = std::move(rest);
    }
    // Which loads each loop pipelines, and how each is copied, decided on
    // the IR as it came (the analyses see no half-pipelined function).
    SmallVector<std::pair<scf::ForOp, SmallVector<PipelinedLoad>>> plans;
    for (scf::ForOp loop : loops) {
      SmallVector<PipelinedLoad> loads;
      bool readsTables = writesNoGlobalMemory(loop);
      // As Triton's pipeliner, loads that feed no product are copied ahead
      // only in a loop that asks for stages of its own (tl.range's
      // num_stages): their buffers can cost the kernel programs an SM.
      if (std::optional<int64_t> own = getOwnStages(loop))
        stageRegisterLoads(loop, *own, readsTables);
      for (Operation &op : loop.getBody()->getOperations())
        if (isa<tile::LoadBlockOp, tile::LoadOp>(op) &&
            isa<RankedTensorType>(op.getResult(0).getType()))
          if (auto p = matchLoad(loop, &op, readsTables))
            loads.push_back(*p);
      if (!loads.empty())
        plans.emplace_back(loop, std::move(loads));
    }
    // Each load is copied by the TMA where it can, else by cp.async where
    // it can, else not pipelined.
    for (auto &[loop, loads] : plans) {
      if (useTma)
        for (PipelinedLoad &p : loads)
          if (isa<tile::LoadBlockOp>(p.load))
            planTensorMapCopy(loop, p, axisInfo);
      llvm::erase_if(loads, [](PipelinedLoad &p) {
        return !p.descriptor &&
               !copiesInVectors(p.load, p.alloc.getType().getEncoding());
      });
    }
    llvm::erase_if(plans, [](auto &plan) { return plan.second.empty(); });
    for (auto &[loop, loads] : plans) {
      // A product left in flight still reads the buffer of iteration k - 1
      // in iteration k: copies then go two iterations back, which needs
      // three stages.
      SmallVector<Value> buffers = llvm::map_to_vector(
          loads, [](PipelinedLoad &p) -> Value { return p.alloc.getResult(); });
      int64_t stages = getOwnStages(loop).value_or(numStages);
      WarpGroupDotOp carried =
          stages >= 3 ? findCarriedProduct(loop, buffers) : WarpGroupDotOp();
      scf::ForOp pipelined = pipelineLoop(loop, loads, stages, carried ? 2 : 1);
      if (carried)
        keepProductInFlight(pipelined, carried);
    }
  }
};

} // namespace
