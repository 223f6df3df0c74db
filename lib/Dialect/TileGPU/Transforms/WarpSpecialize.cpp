//===- WarpSpecialize.cpp - Producer warps issue the TMA copies -----------===//
//
// tilegpu-pipeline's warp-specialize: a kernel whose every block load into
// an nvmma_shared buffer (a wgmma operand) the TMA can copy is split in a
// warpgroup of producer warps and the kernel's own. One producer thread
// runs a tilegpu.warp_specialize region that mirrors the loops and branches
// around the loads (same bounds and conditions, the block pointers carried,
// all computed from the kernel's arguments by pure scalar ops) and issues
// each copy once its ring's stage is empty; the kernel's warps wait for
// the copy's bytes ("full") and release the stage ("empty") once done:
//
//   per stream: S buffers, a "full" and an "empty" mbarrier per stage
//   init_barriers (full: 1 arrival, empty: every consumer thread)
//   warp_specialize { ... wait_barrier empty[slot], phase ^ 1
//                         async_tma_copy_block ... full[slot] ... }
//   ... wait_barrier full[slot], phase; read; arrive_barrier empty[slot] ...
//
// Both sides carry each ring's slot and phase through the same loops and
// branches in the same order, so their sequences of stages agree.
//
//===----------------------------------------------------------------------===//

#include "Pipelining.h"
#include "TensorMaps.h"

#include "tile/Analysis/Allocation.h"
#include "tile/Dialect/Tile/IR/Tile.h"
#include "tile/Dialect/TileGPU/IR/LayoutPropagation.h"
#include "tile/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

/// The stack of buffers of one type that copies rotate through, a "full"
/// mbarrier per stage (the copy's bytes landed) and an "empty" one (every
/// consumer thread is done with the buffer).
struct Ring {
  MemDescType buffer;
  /// The tensor its blocks come from (a make_block_ptr's base): each
  /// operand stream has a ring of its own.
  Value tensor;
  /// num-stages where a loop copies into it, else 1 (a block read once).
  int64_t stages = 1;
  Value stack, full, empty;
};

/// A block load the producer copies: into `ring`, through `descriptor`.
struct TakenLoad {
  tile::LoadBlockOp load;
  LocalAllocOp alloc;
  unsigned ring;
  /// The descriptor (the kernel's parameter, once split) and the copy's
  /// coordinates past the block's.
  DictionaryAttr tensorMap;
  Value descriptor;
  SmallVector<Value> coords;
};

/// The block pointer `pointer` starts from: through advances, loop-carried
/// arguments and loop results, to the initial value.
Value getRootPointer(Value pointer) {
  while (true) {
    if (auto advance = pointer.getDefiningOp<tile::AdvanceOp>()) {
      pointer = advance.getPtr();
    } else if (auto arg = dyn_cast<BlockArgument>(pointer)) {
      auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
      if (!loop || arg.getArgNumber() == 0)
        return pointer;
      pointer = loop.getInitArgs()[arg.getArgNumber() - 1];
    } else if (auto loop = pointer.getDefiningOp<scf::ForOp>()) {
      pointer = loop.getInitArgs()[cast<OpResult>(pointer).getResultNumber()];
    } else {
      return pointer;
    }
  }
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

/// (slot - 1) mod stages.
Value previousSlot(OpBuilder &b, Location loc, Value slot, int64_t stages) {
  Value wraps = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, slot,
                                      createSlot(b, loc, 0));
  return arith::SelectOp::create(
      b, loc, wraps, createSlot(b, loc, stages - 1),
      arith::SubIOp::create(b, loc, slot, createSlot(b, loc, 1)));
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

/// The layout `broadcast`'s operand is wanted in: the one that gives its
/// result in the single layout every use converts it to; null if the uses
/// are not all such conversions.
Attribute getWantedBeforeBroadcast(tile::BroadcastOp broadcast) {
  Attribute target;
  for (Operation *use : broadcast->getUsers()) {
    auto convert = dyn_cast<ConvertLayoutOp>(use);
    Attribute to = convert ? convert.getType().getEncoding() : Attribute();
    if (!to || (target && to != target))
      return {};
    target = to;
  }
  if (!target)
    return {};
  FailureOr<SmallVector<Attribute>> operands =
      inferOperandLayouts(broadcast, {target});
  return succeeded(operands) ? (*operands)[0] : Attribute();
}

/// The layout the row `value` is wanted in where every use broadcasts it
/// (each broadcast converted as getWantedBeforeBroadcast asks); null
/// otherwise.
Attribute getWantedForBroadcasts(Value value) {
  Attribute wanted;
  for (Operation *user : value.getUsers()) {
    auto broadcast = dyn_cast<tile::BroadcastOp>(user);
    Attribute layout =
        broadcast ? getWantedBeforeBroadcast(broadcast) : nullptr;
    if (!layout || (wanted && layout != wanted))
      return {};
    wanted = layout;
  }
  return wanted;
}

/// The layout `load`'s tile is wanted in: the one every use converts it to
/// (or converts its broadcast to, given in the row's own layout, also where
/// the row is converted before its broadcasts, as a row coalesced along its
/// length is), else its own.
Attribute getWantedLayout(tile::LoadBlockOp load) {
  Attribute own = load.getType().getEncoding();
  Attribute wanted;
  for (Operation *user : load->getUsers()) {
    Attribute layout;
    if (auto convert = dyn_cast<ConvertLayoutOp>(user)) {
      layout = getWantedForBroadcasts(convert.getResult());
      if (!layout)
        layout = convert.getType().getEncoding();
    } else if (auto broadcast = dyn_cast<tile::BroadcastOp>(user)) {
      layout = getWantedBeforeBroadcast(broadcast);
    }
    if (!layout || (wanted && layout != wanted))
      return own;
    wanted = layout;
  }
  return wanted ? wanted : own;
}

/// `broadcast` taken from `row` instead, in the layout its uses convert it
/// to, which they then use directly.
void rebuildBroadcastOn(tile::BroadcastOp broadcast, Value row) {
  OpBuilder b(broadcast);
  Operation *copy = b.clone(*broadcast);
  copy->setOperand(0, row);
  Operation *first = *broadcast->getUsers().begin();
  copy->getResult(0).setType(first->getResult(0).getType());
  for (Operation *convert : llvm::make_early_inc_range(broadcast->getUsers())) {
    convert->replaceAllUsesWith(copy);
    convert->erase();
  }
  broadcast.erase();
}

/// `load`'s tile staged through `buffer`: a local_alloc of the load, read
/// back by a local_load in the layout its uses want, their conversions (and
/// the broadcasts before them) rebuilt on it.
LocalAllocOp stageThroughBuffer(tile::LoadBlockOp load, MemDescType buffer) {
  OpBuilder b(load->getContext());
  b.setInsertionPointAfter(load);
  Location loc = load.getLoc();
  Attribute layout = getWantedLayout(load);
  auto alloc = LocalAllocOp::create(b, loc, buffer, load.getResult());
  Value row = LocalLoadOp::create(b, loc, withLayout(load.getType(), layout),
                                  alloc, b.getDenseI64ArrayAttr({0, 0}));
  if (layout == load.getType().getEncoding()) {
    load.getResult().replaceAllUsesExcept(row, alloc);
    return alloc;
  }
  for (Operation *user : llvm::make_early_inc_range(load->getUsers())) {
    if (user == alloc)
      continue;
    if (auto convert = dyn_cast<ConvertLayoutOp>(user)) {
      if (convert.getType().getEncoding() != layout) {
        // Converted only to be broadcast: the broadcasts read the row.
        for (Operation *use : llvm::make_early_inc_range(convert->getUsers()))
          rebuildBroadcastOn(cast<tile::BroadcastOp>(use), row);
      } else {
        convert.replaceAllUsesWith(row);
      }
      convert.erase();
      continue;
    }
    rebuildBroadcastOn(cast<tile::BroadcastOp>(user), row);
  }
  return alloc;
}

/// Splits a kernel in producer warps, which copy every block load into an
/// nvmma_shared buffer by the TMA, and the kernel's warps, which consume
/// them; the producer's region mirrors the loops and branches around the
/// loads, and carries what the copies need (block pointers, bounds,
/// descriptor coordinates, computed from the kernel's arguments by pure
/// scalar ops and scalar loads). Each operand stream has a ring of buffers
/// whose slot and phase both sides carry through the same loops and branches in
/// the same order.
class WarpSpecializer {
public:
  WarpSpecializer(func::FuncOp kernel, int64_t stages, unsigned numWarps)
      : kernel(kernel), stages(stages), numWarps(numWarps) {}

  /// Decides what the producer copies and computes; false where the kernel
  /// cannot be split (nothing to copy, a load the TMA cannot take, a value
  /// the producer cannot compute).
  bool plan(const tile::AxisInfoAnalysis &axis);
  /// Splits the kernel as planned.
  void build();

private:
  bool need(Value value);
  bool mirror(Operation *op);
  unsigned getRing(MemDescType buffer, Value tensor);
  void takeRegisterRows(const tile::AxisInfoAnalysis &axis);
  using Ops = llvm::iterator_range<Block::iterator>;
  void produce(Ops ops, OpBuilder &b, SmallVector<Value> &slots,
               SmallVector<Value> &phases);
  void consume(Ops ops, SmallVector<Value> &slots, SmallVector<Value> &phases);
  void consumeLoad(TakenLoad &taken, Value slot, Value phase,
                   Operation *releaseAfter, Value releasePredicate);

  func::FuncOp kernel;
  int64_t stages;
  unsigned numWarps;
  SmallVector<TakenLoad> taken;
  llvm::DenseMap<Operation *, unsigned> takenIndex;
  SmallVector<Ring> rings;
  /// Values the producer computes, and the loops and branches it mirrors
  /// (with the iter_args it carries).
  llvm::DenseSet<Value> needed;
  llvm::SetVector<Operation *> mirrored;
  llvm::DenseMap<Operation *, llvm::SmallSetVector<unsigned, 4>> carried;
  /// Loops whose product stays in flight (a GEMM's), and the rings of the
  /// buffers it reads.
  struct InFlight {
    WarpGroupDotOp dot;
    SmallVector<unsigned> rings;
  };
  llvm::DenseMap<Operation *, InFlight> inFlight;
  SmallVector<Operation *> erased;
  IRMapping mapping;
};

bool WarpSpecializer::mirror(Operation *op) {
  for (; op != kernel; op = op->getParentOp()) {
    if (!isa<scf::ForOp, scf::IfOp>(op))
      return false;
    if (!mirrored.insert(op))
      continue;
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      if (!need(loop.getLowerBound()) || !need(loop.getUpperBound()) ||
          !need(loop.getStep()))
        return false;
    } else if (!need(cast<scf::IfOp>(op).getCondition())) {
      return false;
    }
  }
  return true;
}

bool WarpSpecializer::need(Value value) {
  if (!needed.insert(value).second)
    return true;
  auto isTile = llvm::IsaPred<RankedTensorType, MemDescType>;
  if (isTile(value.getType()))
    return false;
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    Operation *owner = arg.getOwner()->getParentOp();
    if (owner == kernel)
      return true;
    auto loop = dyn_cast<scf::ForOp>(owner);
    if (!loop || !mirror(loop))
      return false;
    if (arg.getArgNumber() == 0)
      return true;
    unsigned i = arg.getArgNumber() - 1;
    carried[loop].insert(i);
    return need(loop.getInitArgs()[i]) &&
           need(loop.getBody()->getTerminator()->getOperand(i));
  }
  Operation *def = value.getDefiningOp();
  if (def->getParentOp() != kernel && !mirror(def->getParentOp()))
    return false;
  if (auto loop = dyn_cast<scf::ForOp>(def)) {
    unsigned i = cast<OpResult>(value).getResultNumber();
    if (!mirror(loop))
      return false;
    carried[loop].insert(i);
    return need(loop.getInitArgs()[i]) &&
           need(loop.getBody()->getTerminator()->getOperand(i));
  }
  // Pure scalar ops, and scalar loads: the kernel's own arguments in
  // memory (a packed batch's cu_seqlens), which the producer reads too.
  bool scalarLoad = isa<tile::LoadOp>(def) && !isTile(value.getType());
  if (def->getNumRegions() || (!isMemoryEffectFree(def) && !scalarLoad) ||
      llvm::any_of(def->getOperandTypes(), isTile))
    return false;
  return llvm::all_of(def->getOperands(), [&](Value v) { return need(v); });
}

/// Whether `loop`'s body holds another loop (at any depth).
bool holdsLoop(scf::ForOp loop) {
  return loop.getBody()
      ->walk([](scf::ForOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

/// The ring of the stream of `buffer`s copied from `tensor`, made (one
/// stage) on first use.
unsigned WarpSpecializer::getRing(MemDescType buffer, Value tensor) {
  auto found = llvm::find_if(rings, [&](const Ring &r) {
    return r.buffer == buffer && r.tensor == tensor;
  });
  if (found != rings.end())
    return found - rings.begin();
  rings.push_back({buffer, tensor, 1, {}, {}, {}});
  return rings.size() - 1;
}

bool WarpSpecializer::plan(const tile::AxisInfoAnalysis &axis) {
  // setmaxnreg acts on whole warpgroups: the producer warps must not share
  // one with the kernel's.
  if (numWarps % 4)
    return false;
  SmallVector<std::pair<tile::LoadBlockOp, LocalAllocOp>> loads;
  kernel.walk([&](tile::LoadBlockOp load) {
    if (!load->hasOneUse())
      return;
    auto alloc = dyn_cast<LocalAllocOp>(*load->getUsers().begin());
    if (alloc && isa<NVMMASharedEncodingAttr>(alloc.getType().getEncoding()))
      loads.push_back({load, alloc});
  });
  if (loads.empty())
    return false;
  for (auto [load, alloc] : loads) {
    // A block read once that the TMA cannot take (its extent known only to
    // the program: a packed sequence's) stays with the kernel's warps, and
    // so does one read once a block of work (its loop holds the loops that
    // stream the operands: a persistent kernel's); one the innermost loop
    // reads, the producer must copy.
    auto loop = load->getParentOfType<scf::ForOp>();
    bool inLoop = loop != nullptr;
    // The TMA reads zeros outside the tensor.
    if (!load.getBoundaryCheck().empty() &&
        load.getPadding() != tile::Padding::zero)
      return false;
    Value root = getRootPointer(load.getPtr());
    Operation *made = root.getDefiningOp();
    if (!made || !getMadeBlockPointer(root))
      return false;
    OpBuilder b(made->getContext());
    b.setInsertionPointAfter(made);
    std::optional<TensorMapAccess> access =
        planTensorMapAccess(b, root, alloc.getType(), axis);
    if (!access && inLoop && !holdsLoop(loop))
      return false;
    if (!access)
      continue;
    unsigned ring =
        getRing(alloc.getType(), getMadeBlockPointer(root).getBase());
    if (inLoop)
      rings[ring].stages = stages;
    takenIndex[load] = taken.size();
    taken.push_back({load, alloc, ring, access->descriptor, Value(),
                     std::move(access->coords)});
  }
  for (TakenLoad &t : taken) {
    // A stage is released once its readers are done: an asynchronous
    // product must be waited for in its own block (one left in flight
    // across iterations is waited for in the next: the GEMM's, below).
    for (Operation *reader : getReaders(t.alloc.getResult())) {
      auto dot = dyn_cast<WarpGroupDotOp>(reader);
      if (dot && dot.getIsAsync() && !getRetiringWait(dot))
        return false;
    }
    if (!need(t.load.getPtr()) ||
        !llvm::all_of(t.coords, [&](Value v) { return need(v); }))
      return false;
    if (t.load->getParentOp() != kernel && !mirror(t.load->getParentOp()))
      return false;
  }
  takeRegisterRows(axis);
  // A loop whose one product reads only copied buffers and accumulates
  // into what the loop carries keeps it in flight (with three stages).
  if (stages >= 3)
    for (Operation *op : mirrored) {
      auto loop = dyn_cast<scf::ForOp>(op);
      if (!loop)
        continue;
      SmallVector<Value> inLoop;
      for (TakenLoad &t : taken)
        if (t.load->getBlock() == loop.getBody())
          inLoop.push_back(t.alloc.getResult());
      if (WarpGroupDotOp dot = findCarriedProduct(loop, inLoop)) {
        InFlight &product = inFlight[loop];
        product.dot = dot;
        for (TakenLoad &t : taken)
          if (t.load->getBlock() == loop.getBody() &&
              !llvm::is_contained(product.rings, t.ring))
            product.rings.push_back(t.ring);
      }
    }
  return true;
}

/// Once the split is certain: a block a loop loads into registers (a row
/// of statistics, read beside the products) is copied by the producer too,
/// into an unswizzled buffer the kernel's warps read, where the TMA can copy
/// it and the producer can compute its pointer; else it stays a load of the
/// kernel's warps.
void WarpSpecializer::takeRegisterRows(const tile::AxisInfoAnalysis &axis) {
  SmallVector<tile::LoadBlockOp> rows;
  kernel.walk([&](tile::LoadBlockOp load) {
    if (load->getParentOfType<scf::ForOp>() && !takenIndex.contains(load) &&
        llvm::none_of(load->getUsers(), llvm::IsaPred<LocalAllocOp>))
      rows.push_back(load);
  });
  for (tile::LoadBlockOp load : rows) {
    RankedTensorType type = load.getType();
    Value root = getRootPointer(load.getPtr());
    tile::MakeBlockPtrOp block = getMadeBlockPointer(root);
    if (!block || type.getRank() != 2 ||
        (!load.getBoundaryCheck().empty() &&
         load.getPadding() != tile::Padding::zero))
      continue;
    SmallVector<unsigned> order(block.getOrder());
    auto buffer = MemDescType::get(
        type.getContext(), type.getShape(), type.getElementType(),
        SharedEncodingAttr::get(type.getContext(), 1, 1, 1, order));
    OpBuilder b(block);
    b.setInsertionPointAfter(root.getDefiningOp());
    std::optional<TensorMapAccess> access =
        planTensorMapAccess(b, root, buffer, axis);
    if (!access)
      continue;
    // What the producer would compute for it, undone if it cannot.
    auto saved = std::make_tuple(needed, mirrored, carried);
    if (!need(load.getPtr()) ||
        !llvm::all_of(access->coords, [&](Value v) { return need(v); }) ||
        !mirror(load->getParentOp())) {
      std::tie(needed, mirrored, carried) = std::move(saved);
      continue;
    }
    // The rows of one tensor that the kernel's loops read in turn share a
    // ring, as an operand stream does.
    unsigned ring = getRing(buffer, block.getBase());
    rings[ring].stages = stages;
    takenIndex[load] = taken.size();
    taken.push_back({load, stageThroughBuffer(load, buffer), ring,
                     access->descriptor, Value(), std::move(access->coords)});
  }
}

/// The producer's copy of `block`: waits and copies for the taken loads,
/// the mirrored loops and branches, clones of the values it needs.
void WarpSpecializer::produce(Ops ops, OpBuilder &b, SmallVector<Value> &slots,
                              SmallVector<Value> &phases) {
  for (Operation &op : ops) {
    Location loc = op.getLoc();
    if (auto it = takenIndex.find(&op); it != takenIndex.end()) {
      TakenLoad &t = taken[it->second];
      Ring &ring = rings[t.ring];
      Value &slot = slots[t.ring], &phase = phases[t.ring];
      // A stage is empty once its previous phase completed: parity
      // phase ^ 1 (at once in the first round).
      Value emptyPhase =
          arith::XOrIOp::create(b, loc, phase, createSlot(b, loc, 1));
      WaitBarrierOp::create(b, loc, getBarrier(b, loc, ring.empty, slot),
                            emptyPhase);
      Value buffer =
          MemDescIndexOp::create(b, loc, ring.buffer, ring.stack, slot);
      SmallVector<Value> coords = llvm::map_to_vector(
          t.coords, [&](Value v) { return mapping.lookupOrDefault(v); });
      AsyncTMACopyBlockOp::create(
          b, loc, mapping.lookupOrDefault(t.load.getPtr()), t.descriptor,
          coords, buffer, getBarrier(b, loc, ring.full, slot), Value());
      std::tie(slot, phase) = nextSlot(b, loc, slot, phase, ring.stages);
      continue;
    }
    if (!mirrored.contains(&op)) {
      if (llvm::any_of(op.getResults(),
                       [&](Value v) { return needed.contains(v); }))
        b.clone(op, mapping);
      continue;
    }
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      auto indices = carried.lookup(loop).takeVector();
      SmallVector<Value> inits;
      for (unsigned i : indices)
        inits.push_back(mapping.lookupOrDefault(loop.getInitArgs()[i]));
      llvm::append_range(inits, slots);
      llvm::append_range(inits, phases);
      auto copy = scf::ForOp::create(
          b, loc, mapping.lookupOrDefault(loop.getLowerBound()),
          mapping.lookupOrDefault(loop.getUpperBound()),
          mapping.lookupOrDefault(loop.getStep()), inits,
          [&](OpBuilder &lb, Location, Value iv, ValueRange args) {
            mapping.map(loop.getInductionVar(), iv);
            for (auto [k, i] : llvm::enumerate(indices))
              mapping.map(loop.getRegionIterArgs()[i], args[k]);
            auto state = args.drop_front(indices.size());
            SmallVector<Value> innerSlots(state.take_front(rings.size()));
            SmallVector<Value> innerPhases(state.drop_front(rings.size()));
            produce(loop.getBody()->without_terminator(), lb, innerSlots,
                    innerPhases);
            SmallVector<Value> yields;
            Operation *yield = loop.getBody()->getTerminator();
            for (unsigned i : indices)
              yields.push_back(mapping.lookupOrDefault(yield->getOperand(i)));
            llvm::append_range(yields, innerSlots);
            llvm::append_range(yields, innerPhases);
            scf::YieldOp::create(lb, loc, yields);
          });
      for (auto [k, i] : llvm::enumerate(indices))
        mapping.map(loop.getResult(i), copy.getResult(k));
      auto state = copy.getResults().drop_front(indices.size());
      slots.assign(state.begin(), state.begin() + rings.size());
      phases.assign(state.begin() + rings.size(), state.end());
      continue;
    }
    auto branch = cast<scf::IfOp>(op);
    SmallVector<Type> types(2 * rings.size(), b.getI32Type());
    auto copy = scf::IfOp::create(
        b, loc, types, mapping.lookupOrDefault(branch.getCondition()),
        /*withElseRegion=*/true);
    for (auto [from, to] : {std::pair<Region *, Region *>{
                                &branch.getThenRegion(), &copy.getThenRegion()},
                            {&branch.getElseRegion(), &copy.getElseRegion()}}) {
      OpBuilder inner = OpBuilder::atBlockEnd(&to->front());
      SmallVector<Value> innerSlots(slots), innerPhases(phases);
      if (!from->empty())
        produce(from->front().without_terminator(), inner, innerSlots,
                innerPhases);
      SmallVector<Value> yields(innerSlots);
      llvm::append_range(yields, innerPhases);
      scf::YieldOp::create(inner, loc, yields);
    }
    slots.assign(copy.getResults().begin(),
                 copy.getResults().begin() + rings.size());
    phases.assign(copy.getResults().begin() + rings.size(),
                  copy.getResults().end());
  }
}

/// The consumer's side of a copied load: it reads the ring's buffer `slot`
/// once the "full" mbarrier completes `phase`, and arrives on "empty" after
/// `releaseAfter` (or, null, after the buffer's last use, or the wait that
/// retires an asynchronous product reading it), where `releasePredicate`
/// (if given) holds.
void WarpSpecializer::consumeLoad(TakenLoad &t, Value slot, Value phase,
                                  Operation *releaseAfter,
                                  Value releasePredicate) {
  Ring &ring = rings[t.ring];
  Location loc = t.load.getLoc();
  Block *block = t.load->getBlock();
  OpBuilder b(t.load);
  Value current = MemDescIndexOp::create(b, loc, ring.buffer, ring.stack, slot);
  Operation *firstUse = nullptr, *lastUse = nullptr;
  for (Operation *reader : getReaders(t.alloc.getResult())) {
    Operation *holder = block->findAncestorOpInBlock(*reader);
    if (!firstUse || holder->isBeforeInBlock(firstUse))
      firstUse = holder;
    // An asynchronous product is done once the wait on it returns.
    if (auto dot = dyn_cast<WarpGroupDotOp>(reader); dot && dot.getIsAsync())
      if (WarpGroupDotWaitOp wait = getRetiringWait(dot);
          wait && wait->getBlock() == block)
        holder = wait;
    if (!lastUse || lastUse->isBeforeInBlock(holder))
      lastUse = holder;
  }
  {
    OpBuilder::InsertionGuard guard(b);
    if (firstUse)
      b.setInsertionPoint(firstUse);
    WaitBarrierOp::create(b, loc, getBarrier(b, loc, ring.full, slot), phase);
  }
  if (!releaseAfter) {
    OpBuilder::InsertionGuard guard(b);
    if (lastUse)
      b.setInsertionPointAfter(lastUse);
    ArriveBarrierOp::create(b, loc, getBarrier(b, loc, ring.empty, slot),
                            releasePredicate);
  }
  t.alloc.getResult().replaceAllUsesWith(current);
  // Erased once the walk is over: consume() may be about to visit them.
  erased.push_back(t.alloc);
  erased.push_back(t.load);
}

/// The consumer's `block`: copied loads read from their rings, mirrored
/// loops and branches carry the rings' slots and phases.
void WarpSpecializer::consume(Ops ops, SmallVector<Value> &slots,
                              SmallVector<Value> &phases) {
  for (Operation &op : llvm::make_early_inc_range(ops)) {
    Block &block = *op.getBlock();
    Location loc = op.getLoc();
    if (auto it = takenIndex.find(&op); it != takenIndex.end()) {
      TakenLoad &t = taken[it->second];
      Value slot = slots[t.ring], phase = phases[t.ring];
      OpBuilder b(&op);
      auto [next, nextPhase] =
          nextSlot(b, loc, slot, phase, rings[t.ring].stages);
      slots[t.ring] = next;
      phases[t.ring] = nextPhase;
      auto loop = dyn_cast<scf::ForOp>(block.getParentOp());
      WarpGroupDotOp dot = loop ? inFlight.lookup(loop).dot : WarpGroupDotOp();
      if (!dot) {
        consumeLoad(t, slot, phase, nullptr, Value());
        continue;
      }
      // Read by a product left in flight: the stage of the iteration
      // before is released, after this iteration's product, where there
      // was one; this one after the loop.
      OpBuilder end(block.getTerminator());
      Value before = previousSlot(end, loc, slot, rings[t.ring].stages);
      Value notFirst =
          arith::CmpIOp::create(end, loc, arith::CmpIPredicate::ne,
                                loop.getInductionVar(), loop.getLowerBound());
      ArriveBarrierOp::create(end, loc,
                              getBarrier(end, loc, rings[t.ring].empty, before),
                              notFirst);
      consumeLoad(t, slot, phase, block.getTerminator(), Value());
      continue;
    }
    if (!mirrored.contains(&op))
      continue;
    unsigned n = rings.size();
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      SmallVector<Value> inits(slots);
      llvm::append_range(inits, phases);
      IRRewriter rewriter(loop.getContext());
      rewriter.setInsertionPoint(loop);
      // The loop is erased: an op made later may get its address, which
      // must not read as mirrored (nor the branch's below).
      mirrored.remove(loop);
      auto grown = cast<scf::ForOp>(*loop.replaceWithAdditionalYields(
          rewriter, inits, /*replaceInitOperandUsesInLoop=*/false,
          [&](OpBuilder &, Location, ArrayRef<BlockArgument> args) {
            return SmallVector<Value>(args.begin(), args.end());
          }));
      if (auto it = inFlight.find(loop); it != inFlight.end()) {
        InFlight product = std::move(it->second);
        inFlight.erase(it);
        inFlight[grown] = std::move(product);
      }
      auto args = grown.getRegionIterArgs().take_back(2 * n);
      SmallVector<Value> innerSlots(args.take_front(n));
      SmallVector<Value> innerPhases(args.drop_front(n));
      consume(grown.getBody()->without_terminator(), innerSlots, innerPhases);
      Operation *yield = grown.getBody()->getTerminator();
      unsigned first = yield->getNumOperands() - 2 * n;
      for (unsigned k = 0; k < n; ++k) {
        yield->setOperand(first + k, innerSlots[k]);
        yield->setOperand(first + n + k, innerPhases[k]);
      }
      auto results = grown.getResults().take_back(2 * n);
      slots.assign(results.begin(), results.begin() + n);
      phases.assign(results.begin() + n, results.end());
      if (auto it = inFlight.find(grown); it != inFlight.end()) {
        WarpGroupDotWaitOp done = keepProductInFlight(grown, it->second.dot);
        // Its last iteration's stages, once its product is done.
        OpBuilder after(done->getContext());
        after.setInsertionPointAfter(done);
        Value ran =
            arith::CmpIOp::create(after, loc, arith::CmpIPredicate::slt,
                                  grown.getLowerBound(), grown.getUpperBound());
        for (unsigned k : it->second.rings)
          ArriveBarrierOp::create(
              after, loc,
              getBarrier(after, loc, rings[k].empty,
                         previousSlot(after, loc, slots[k], rings[k].stages)),
              ran);
      }
      continue;
    }
    auto branch = cast<scf::IfOp>(op);
    SmallVector<Type> types(branch.getResultTypes());
    types.append(2 * n, IntegerType::get(op.getContext(), 32));
    OpBuilder b(&op);
    auto grown = scf::IfOp::create(b, loc, types, branch.getCondition(),
                                   /*withElseRegion=*/true);
    grown.getThenRegion().takeBody(branch.getThenRegion());
    if (!branch.getElseRegion().empty()) {
      grown.getElseRegion().takeBody(branch.getElseRegion());
    } else {
      OpBuilder eb = OpBuilder::atBlockEnd(&grown.getElseRegion().front());
      scf::YieldOp::create(eb, loc);
    }
    for (Region *region : {&grown.getThenRegion(), &grown.getElseRegion()}) {
      SmallVector<Value> innerSlots(slots), innerPhases(phases);
      consume(region->front().without_terminator(), innerSlots, innerPhases);
      Operation *yield = region->front().getTerminator();
      SmallVector<Value> operands(yield->getOperands());
      llvm::append_range(operands, innerSlots);
      llvm::append_range(operands, innerPhases);
      yield->setOperands(operands);
    }
    branch.replaceAllUsesWith(
        grown.getResults().take_front(branch.getNumResults()));
    auto results = grown.getResults().take_back(2 * n);
    slots.assign(results.begin(), results.begin() + n);
    phases.assign(results.begin() + n, results.end());
    mirrored.remove(branch);
    branch.erase();
  }
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

void WarpSpecializer::build() {
  MLIRContext *ctx = kernel.getContext();
  Location loc = kernel.getLoc();
  Block *entry = &kernel.front();
  OpBuilder top(entry, entry->begin());
  for (Ring &ring : rings) {
    SmallVector<int64_t> shape{ring.stages};
    llvm::append_range(shape, ring.buffer.getShape());
    ring.stack = LocalAllocOp::create(
        top, loc,
        MemDescType::get(ctx, shape, ring.buffer.getElementType(),
                         ring.buffer.getEncoding()),
        Value());
    ring.full = LocalAllocOp::create(top, loc, getBarrierType(ctx, ring.stages),
                                     Value());
    ring.empty = LocalAllocOp::create(
        top, loc, getBarrierType(ctx, ring.stages), Value());
  }
  for (TakenLoad &t : taken)
    t.descriptor = getTensorMapParameter(kernel, t.tensorMap);
  // Full: the copy's one arrival; empty: every consumer thread's.
  SmallVector<Value> barriers;
  SmallVector<int32_t> arrivals;
  for (Ring &ring : rings) {
    barriers.push_back(ring.full);
    arrivals.push_back(1);
  }
  for (Ring &ring : rings) {
    barriers.push_back(ring.empty);
    arrivals.push_back(32 * numWarps);
  }
  InitBarriersOp::create(top, loc, barriers, arrivals);
  Value zero = createSlot(top, loc, 0);
  RegisterSplit split = splitRegisters(numWarps);
  auto ws = WarpSpecializeOp::create(top, loc, kProducerWarps, split.producer,
                                     split.consumer, split.ctasPerSM);
  OpBuilder producer = OpBuilder::atBlockEnd(&ws.getProducer().emplaceBlock());
  SmallVector<Value> slots(rings.size(), zero), phases(rings.size(), zero);
  // The producer mirrors the kernel's ops after the split as they came;
  // then the consumer's change.
  auto body = llvm::make_range(std::next(ws->getIterator()),
                               entry->getTerminator()->getIterator());
  produce(body, producer, slots, phases);
  slots.assign(rings.size(), zero);
  phases.assign(rings.size(), zero);
  consume(body, slots, phases);
  for (Operation *op : erased)
    op->erase();
  // At the kernel's end no copy is pending and no thread waits: the
  // mbarriers end there (their memory is reused by nothing after).
  OpBuilder end(entry->getTerminator());
  InvalBarriersOp::create(end, loc, barriers);
}

} // namespace

bool tilegpu::specializeWarps(func::FuncOp kernel, int64_t stages,
                              unsigned numWarps,
                              const tile::AxisInfoAnalysis &axis) {
  WarpSpecializer specializer(kernel, stages, numWarps);
  if (!specializer.plan(axis))
    return false;
  specializer.build();
  return true;
}
