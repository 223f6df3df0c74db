//===- LayoutPropagation.cpp - How layouts flow through ops ---------------===//

#include "tile/Dialect/TileGPU/IR/LayoutPropagation.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::tilegpu;

bool tilegpu::isElementwise(Operation *op) {
  // tile.addptr is elementwise without the trait, whose verifier would
  // report a mismatched offset before the op's own message says what to do.
  return op->hasTrait<OpTrait::Elementwise>() || isa<tile::AddPtrOp>(op);
}

Attribute tilegpu::getCarriedLayout(Type type) {
  if (auto blockPtr = dyn_cast<tile::BlockPtrType>(type))
    type = blockPtr.getBlockType();
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor ? tensor.getEncoding() : Attribute();
}

Type tilegpu::withCarriedLayout(Type type, Attribute layout) {
  if (auto blockPtr = dyn_cast<tile::BlockPtrType>(type))
    return tile::BlockPtrType::get(withLayout(blockPtr.getBlockType(), layout));
  return withLayout(type, layout);
}

namespace {

bool carriesLayout(Type type) {
  return isa<RankedTensorType, tile::BlockPtrType>(type);
}

/// Ops all of whose tiles (and block pointers) have one layout.
bool hasOneLayout(Operation *op) {
  return isElementwise(op) ||
         isa<tile::BroadcastOp, tile::LoadOp, tile::StoreOp, tile::AtomicRMWOp,
             tile::AtomicCASOp, tile::AtomicLoadOp, tile::AtomicStoreOp,
             tile::LoadBlockOp, tile::StoreBlockOp, tile::AtomicRMWBlockOp,
             tile::AdvanceOp>(op);
}

/// `layout` with a new fastest dimension of two elements, a thread's.
BlockedEncodingAttr withPairDim(BlockedEncodingAttr layout) {
  SmallVector<unsigned> spt(layout.getSizePerThread()),
      tpw(layout.getThreadsPerWarp()), wpc(layout.getWarpsPerCTA());
  spt.push_back(2);
  tpw.push_back(1);
  wpc.push_back(1);
  SmallVector<unsigned> order{unsigned(spt.size() - 1)};
  llvm::append_range(order, layout.getOrder());
  return BlockedEncodingAttr::get(layout.getContext(), spt, tpw, wpc, order);
}

/// `layout` if it is one withPairDim makes, else null.
BlockedEncodingAttr asPairLayout(Attribute layout) {
  auto blocked = dyn_cast_if_present<BlockedEncodingAttr>(layout);
  if (!blocked || blocked.getSizePerThread().back() != 2 ||
      blocked.getThreadsPerWarp().back() != 1 ||
      blocked.getWarpsPerCTA().back() != 1 ||
      blocked.getOrder().front() != blocked.getOrder().size() - 1)
    return {};
  return blocked;
}

/// The layout withPairDim made `pair` from.
BlockedEncodingAttr withoutPairDim(BlockedEncodingAttr pair) {
  SmallVector<unsigned> order(pair.getOrder().drop_front());
  return BlockedEncodingAttr::get(pair.getContext(),
                                  pair.getSizePerThread().drop_back(),
                                  pair.getThreadsPerWarp().drop_back(),
                                  pair.getWarpsPerCTA().drop_back(), order);
}

/// `layout` with its dimensions permuted as tile.trans permutes a tile's:
/// dimension i of the result is dimension order[i] of the source.
BlockedEncodingAttr transpose(BlockedEncodingAttr layout,
                              ArrayRef<int32_t> order) {
  SmallVector<unsigned> spt, tpw, wpc, newOrder, newIndex(order.size());
  for (auto [i, src] : llvm::enumerate(order)) {
    spt.push_back(layout.getSizePerThread()[src]);
    tpw.push_back(layout.getThreadsPerWarp()[src]);
    wpc.push_back(layout.getWarpsPerCTA()[src]);
    newIndex[src] = i;
  }
  for (unsigned src : layout.getOrder())
    newOrder.push_back(newIndex[src]);
  return BlockedEncodingAttr::get(layout.getContext(), spt, tpw, wpc, newOrder);
}

/// The permutation that undoes `order`.
SmallVector<int32_t> invert(ArrayRef<int32_t> order) {
  SmallVector<int32_t> inverse(order.size());
  for (auto [i, src] : llvm::enumerate(order))
    inverse[src] = i;
  return inverse;
}

/// Whether `layout` is blocked, or a slice of slices of a blocked layout.
bool isBlockedAtRoot(Attribute layout) {
  while (auto slice = dyn_cast<SliceEncodingAttr>(layout))
    layout = slice.getParent();
  return isa<BlockedEncodingAttr>(layout);
}

/// Elements of k one 32-bit register of a dot_operand layout holds, or 0
/// when mma.sync has no operand layout for `element`.
unsigned getKWidth(Type element) {
  unsigned bits = element.getIntOrFloatBitWidth();
  return bits == 16 ? 2 : bits == 32 ? 1 : 0;
}

} // namespace

FailureOr<OpLayouts> tilegpu::inferLayouts(Operation *op,
                                           const OpLayouts &known) {
  assert(known.operands.size() == op->getNumOperands() &&
         known.results.size() == op->getNumResults() &&
         "one entry per operand and result");
  OpLayouts out;
  out.operands.resize(op->getNumOperands());
  out.results.resize(op->getNumResults());
  auto firstKnown = [&]() -> Attribute {
    for (Attribute layout :
         llvm::concat<const Attribute>(known.results, known.operands))
      if (layout)
        return layout;
    return {};
  };

  if (hasOneLayout(op)) {
    Attribute layout = firstKnown();
    if (!layout)
      return failure();
    for (auto [i, type] : llvm::enumerate(op->getOperandTypes()))
      if (carriesLayout(type))
        out.operands[i] = layout;
    for (auto [i, type] : llvm::enumerate(op->getResultTypes()))
      if (carriesLayout(type))
        out.results[i] = layout;
    return out;
  }

  // Each operand in the layout it has: these ops only read their elements.
  if (isa<tile::PrintOp, tile::AssertOp>(op)) {
    for (auto [i, type] : llvm::enumerate(op->getOperandTypes())) {
      if (!carriesLayout(type))
        continue;
      if (!known.operands[i])
        return failure();
      out.operands[i] = known.operands[i];
    }
    return out;
  }

  if (auto reduce = dyn_cast<tile::ReduceOp>(op)) {
    bool toTile = isa<RankedTensorType>(reduce.getType());
    if (toTile && known.results[0]) {
      auto slice = dyn_cast<SliceEncodingAttr>(known.results[0]);
      if (!slice || slice.getDim() != unsigned(reduce.getAxis()))
        return failure();
      out.results[0] = slice;
      out.operands[0] = slice.getParent();
      return out;
    }
    if (!known.operands[0]) {
      if (toTile)
        return failure();
      return out; // a reduction to a scalar takes any layout
    }
    auto parent = dyn_cast<LayoutEncodingAttrInterface>(known.operands[0]);
    if (!parent)
      return failure();
    out.operands[0] = parent;
    if (toTile)
      out.results[0] =
          SliceEncodingAttr::get(op->getContext(), reduce.getAxis(), parent);
    return out;
  }

  if (auto expand = dyn_cast<tile::ExpandDimsOp>(op)) {
    if (known.results[0]) {
      auto parent = dyn_cast<LayoutEncodingAttrInterface>(known.results[0]);
      if (!parent)
        return failure();
      out.results[0] = parent;
      out.operands[0] =
          SliceEncodingAttr::get(op->getContext(), expand.getAxis(), parent);
      return out;
    }
    auto slice = dyn_cast_if_present<SliceEncodingAttr>(known.operands[0]);
    if (!slice || slice.getDim() != unsigned(expand.getAxis()))
      return failure();
    out.operands[0] = slice;
    out.results[0] = slice.getParent();
    return out;
  }

  if (auto trans = dyn_cast<tile::TransOp>(op)) {
    if (auto result =
            dyn_cast_if_present<BlockedEncodingAttr>(known.results[0])) {
      out.results[0] = result;
      out.operands[0] = transpose(result, invert(trans.getOrder()));
      return out;
    }
    auto src = dyn_cast_if_present<BlockedEncodingAttr>(known.operands[0]);
    if (known.results[0] || !src)
      return failure();
    out.operands[0] = src;
    out.results[0] = transpose(src, trans.getOrder());
    return out;
  }

  // A reshape takes its operand as it is and gives the layout asked of it
  // (the lowering moves elements between any two). Unasked, a tile in a
  // tensor core's layout keeps each element in its register: the operand's
  // linear layout, reshaped (a reshape of a blocked tile stays blocked,
  // by the default that reaches it).
  if (auto reshape = dyn_cast<tile::ReshapeOp>(op)) {
    if (known.results[0]) {
      out.results[0] = known.results[0];
      return out;
    }
    auto src =
        dyn_cast_if_present<LayoutEncodingAttrInterface>(known.operands[0]);
    if (!src || isBlockedAtRoot(src))
      return failure();
    LinearLayout layout =
        src.toLinearLayout(reshape.getSrc().getType().getShape())
            .reshaped(reshape.getType().getShape());
    out.operands[0] = src;
    out.results[0] = LinearEncodingAttr::get(op->getContext(), layout);
    return out;
  }

  // join and split keep each pair in one thread: the last dimension, of 2,
  // is a blocked layout's fastest, in registers.
  if (isa<tile::JoinOp>(op)) {
    Attribute single =
        known.operands[0] ? known.operands[0] : known.operands[1];
    if (auto blocked = dyn_cast_if_present<BlockedEncodingAttr>(single)) {
      out.operands[0] = out.operands[1] = blocked;
      out.results[0] = withPairDim(blocked);
      return out;
    }
    if (BlockedEncodingAttr pair = asPairLayout(known.results[0])) {
      out.results[0] = pair;
      out.operands[0] = out.operands[1] = withoutPairDim(pair);
      return out;
    }
    return failure();
  }
  if (isa<tile::SplitOp>(op)) {
    if (BlockedEncodingAttr pair = asPairLayout(known.operands[0])) {
      out.operands[0] = pair;
      out.results[0] = out.results[1] = withoutPairDim(pair);
      return out;
    }
    Attribute single = known.results[0] ? known.results[0] : known.results[1];
    if (auto blocked = dyn_cast_if_present<BlockedEncodingAttr>(single)) {
      out.results[0] = out.results[1] = blocked;
      out.operands[0] = withPairDim(blocked);
      return out;
    }
    return failure();
  }

  if (auto dot = dyn_cast<tile::DotOp>(op)) {
    Attribute layout = known.results[0] ? known.results[0] : known.operands[2];
    if (!layout)
      return failure();
    out.results[0] = out.operands[2] = layout;
    auto mma = dyn_cast<MmaEncodingAttr>(layout);
    unsigned kWidth = getKWidth(dot.getA().getType().getElementType());
    if (mma && kWidth)
      for (unsigned opIdx : {0u, 1u})
        out.operands[opIdx] =
            DotOperandEncodingAttr::get(op->getContext(), opIdx, mma, kWidth);
    return out;
  }

  if (isa<WarpGroupDotOp>(op)) {
    Attribute layout = known.results[0] ? known.results[0] : known.operands[2];
    auto mma = dyn_cast_if_present<MmaEncodingAttr>(layout);
    if (!mma)
      return failure();
    out.results[0] = out.operands[2] = mma;
    if (isa<RankedTensorType>(op->getOperand(0).getType()))
      out.operands[0] =
          DotOperandEncodingAttr::get(op->getContext(), 0, mma, 2);
    return out;
  }

  return failure();
}

FailureOr<SmallVector<Attribute>>
tilegpu::inferResultLayouts(Operation *op, ArrayRef<Attribute> operandLayouts) {
  OpLayouts known{SmallVector<Attribute>(operandLayouts),
                  SmallVector<Attribute>(op->getNumResults())};
  FailureOr<OpLayouts> layouts = inferLayouts(op, known);
  if (failed(layouts))
    return failure();
  return std::move(layouts->results);
}

FailureOr<SmallVector<Attribute>>
tilegpu::inferOperandLayouts(Operation *op, ArrayRef<Attribute> resultLayouts) {
  OpLayouts known{SmallVector<Attribute>(op->getNumOperands()),
                  SmallVector<Attribute>(resultLayouts)};
  FailureOr<OpLayouts> layouts = inferLayouts(op, known);
  if (failed(layouts))
    return failure();
  return std::move(layouts->operands);
}

SmallVector<Value> tilegpu::getCarriedValues(OpOperand &operand) {
  Operation *owner = operand.getOwner();
  unsigned i = operand.getOperandNumber();
  if (auto forOp = dyn_cast<scf::ForOp>(owner)) {
    if (i < forOp.getNumControlOperands())
      return {};
    i -= forOp.getNumControlOperands();
    return {forOp.getRegionIterArgs()[i], forOp.getResult(i)};
  }
  if (auto whileOp = dyn_cast<scf::WhileOp>(owner))
    return {whileOp.getBeforeArguments()[i]};
  if (auto condition = dyn_cast<scf::ConditionOp>(owner)) {
    if (i == 0)
      return {}; // the condition itself
    auto whileOp = cast<scf::WhileOp>(condition->getParentOp());
    return {whileOp.getAfterArguments()[i - 1], whileOp.getResult(i - 1)};
  }
  if (auto yield = dyn_cast<scf::YieldOp>(owner)) {
    Operation *parent = yield->getParentOp();
    if (auto forOp = dyn_cast<scf::ForOp>(parent))
      return {forOp.getRegionIterArgs()[i], forOp.getResult(i)};
    if (isa<scf::IfOp>(parent))
      return {parent->getResult(i)};
    if (auto whileOp = dyn_cast<scf::WhileOp>(parent))
      return {whileOp.getBeforeArguments()[i]};
  }
  return {};
}
