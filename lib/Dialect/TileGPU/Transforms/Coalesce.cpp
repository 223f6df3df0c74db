//===- Coalesce.cpp - Vector global accesses where the data allows --------===//

#include "tile/Analysis/AxisInfo.h"
#include "tile/Dialect/Tile/IR/Tile.h"
#include "tile/Dialect/TileGPU/IR/LayoutPropagation.h"
#include "tile/Dialect/TileGPU/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/TypeSwitch.h"

namespace mlir::tilegpu {
#define GEN_PASS_DEF_TILEGPUCOALESCE
#include "tile/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace mlir::tilegpu

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

constexpr int64_t kMaxVectorBytes = 16;

int64_t floorPowerOf2(int64_t v) {
  int64_t p = 1;
  while (p * 2 <= v)
    p *= 2;
  return p;
}

/// A blocked layout with `width` contiguous elements per thread along `dim`,
/// lanes along `dim` first (at most `maxLanesAlongDim` of them), the other
/// dimensions slowest-last.
BlockedEncodingAttr vectorLayout(MLIRContext *ctx, ArrayRef<int64_t> shape,
                                 unsigned dim, int64_t width, unsigned numWarps,
                                 int64_t maxLanesAlongDim) {
  unsigned rank = shape.size();
  SmallVector<unsigned> spt(rank, 1), tpw(rank, 1), wpc(rank, 1), order{dim};
  for (int d = rank - 1; d >= 0; --d)
    if (unsigned(d) != dim)
      order.push_back(d);
  spt[dim] = width;
  SmallVector<int64_t> left(shape);
  left[dim] /= width;
  const unsigned warpSize = TileGPUDialect::getThreadsPerWarp();
  unsigned lanes = warpSize;
  auto spreadLanes = [&](unsigned d, int64_t maxLanes) {
    while (lanes > 1 && left[d] > 1 && tpw[d] * 2 <= maxLanes) {
      tpw[d] *= 2;
      left[d] /= 2;
      lanes /= 2;
    }
  };
  for (unsigned d : order)
    spreadLanes(d, d == dim ? maxLanesAlongDim : warpSize);
  // A block too small for the cap takes the lanes left along `dim` after all.
  spreadLanes(dim, warpSize);
  tpw[order.back()] *= lanes;
  unsigned warps = numWarps;
  for (unsigned d : llvm::reverse(order))
    while (warps > 1 && left[d] > 1) {
      wpc[d] *= 2;
      left[d] /= 2;
      warps /= 2;
    }
  wpc[order.back()] *= warps;
  return BlockedEncodingAttr::get(ctx, spt, tpw, wpc, order);
}

struct CoalescePass : public tilegpu::impl::TileGPUCoalesceBase<CoalescePass> {
  using TileGPUCoalesceBase::TileGPUCoalesceBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(verifyLaidOut(module, getArgument())))
      return signalPassFailure();
    auto numWarps = module->getAttrOfType<IntegerAttr>(
        TileGPUDialect::getNumWarpsAttrName());
    TargetAttr target = getTarget(module);
    bool vectorReductions = target && target.hasVectorReductions();
    for (auto func : module.getOps<func::FuncOp>()) {
      tile::AxisInfoAnalysis axis(func);
      SmallVector<Operation *> accesses;
      SmallVector<tile::MakeBlockPtrOp> blockPtrs;
      func.walk([&](Operation *op) {
        if (isa<tile::LoadOp, tile::StoreOp>(op))
          accesses.push_back(op);
        // On sm_90a one `red` adds a vector of f32; an add whose old values
        // are read stays one element at a time.
        if (auto atomic = dyn_cast<tile::AtomicRMWOp>(op);
            atomic && vectorReductions && atomic.getResult().use_empty() &&
            atomic.getSem() == tile::MemSemantic::relaxed &&
            getElementTypeOrSelf(atomic.getValue().getType()).isF32())
          accesses.push_back(op);
        if (auto make = dyn_cast<tile::MakeBlockPtrOp>(op))
          blockPtrs.push_back(make);
      });
      for (Operation *op : accesses)
        coalesce(op, axis, numWarps.getInt());
      for (tile::MakeBlockPtrOp make : blockPtrs)
        coalesceBlockPointer(make, axis, numWarps.getInt());
    }
  }

  /// Gives a block pointer, and the advances, loop-carried copies, loads and
  /// stores it reaches, a layout of 16-byte vectors along its contiguous
  /// dimension (order[0], stride 1), when every address a vector starts at
  /// is provably aligned: the base, the other strides, the offsets and the
  /// advances along that dimension, and its extent where it is
  /// boundary-checked, are all multiples of the vector.
  void coalesceBlockPointer(tile::MakeBlockPtrOp make,
                            const tile::AxisInfoAnalysis &axis,
                            unsigned numWarps) {
    auto blockType = make.getType().getBlockType();
    unsigned dim = make.getOrder()[0];
    int64_t bytes =
        std::max<int64_t>(1, blockType.getElementTypeBitWidth() / 8);
    if (!matchPattern(make.getStrides()[dim], m_One()))
      return;
    auto divisibility = [&](Value v) { return axis.get(v).divisibility[0]; };
    int64_t width =
        std::min<int64_t>(kMaxVectorBytes / bytes, blockType.getDimSize(dim));
    width = std::min(width, divisibility(make.getBase()) / bytes);
    for (auto [d, stride] : llvm::enumerate(make.getStrides()))
      if (d != dim)
        width = std::min(width, divisibility(stride));
    width = std::min(width, divisibility(make.getOffsets()[dim]));

    // Everything the pointer flows to.
    SmallVector<Value> chain{make.getResult()};
    SmallVector<Operation *> accesses;
    DenseSet<Value> seen{make.getResult()};
    auto add = [&](Value v) {
      if (seen.insert(v).second)
        chain.push_back(v);
    };
    for (size_t i = 0; i < chain.size(); ++i) {
      for (OpOperand &use : chain[i].getUses()) {
        Operation *user = use.getOwner();
        if (auto advance = dyn_cast<tile::AdvanceOp>(user)) {
          width = std::min(width, divisibility(advance.getOffsets()[dim]));
          add(advance.getResult());
        } else if (auto forOp = dyn_cast<scf::ForOp>(user)) {
          if (use.getOperandNumber() < forOp.getNumControlOperands())
            return;
          unsigned n = use.getOperandNumber() - forOp.getNumControlOperands();
          add(forOp.getRegionIterArgs()[n]);
          add(forOp.getResult(n));
        } else if (auto yield = dyn_cast<scf::YieldOp>(user)) {
          auto forOp = dyn_cast<scf::ForOp>(yield->getParentOp());
          if (!forOp)
            return;
          add(forOp.getRegionIterArgs()[use.getOperandNumber()]);
          add(forOp.getResult(use.getOperandNumber()));
        } else if (auto load = dyn_cast<tile::LoadBlockOp>(user)) {
          if (llvm::is_contained(load.getBoundaryCheck(), int32_t(dim)))
            width = std::min(width, divisibility(make.getShape()[dim]));
          accesses.push_back(user);
        } else if (auto store = dyn_cast<tile::StoreBlockOp>(user)) {
          if (use.getOperandNumber() != 0)
            return;
          if (llvm::is_contained(store.getBoundaryCheck(), int32_t(dim)))
            width = std::min(width, divisibility(make.getShape()[dim]));
          accesses.push_back(user);
        } else {
          return; // somewhere this pass does not follow
        }
      }
    }
    // A loop-carried pointer must be this one on every path.
    for (Value v : chain)
      if (auto arg = dyn_cast<BlockArgument>(v))
        if (auto forOp = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp())) {
          unsigned n = arg.getArgNumber() - forOp.getNumInductionVars();
          if (!seen.count(forOp.getInitArgs()[n]) ||
              !seen.count(forOp.getYieldedValues()[n]))
            return;
        }
    width = floorPowerOf2(std::max<int64_t>(width, 1));
    // Without vectors, lanes still run along the contiguous dimension where
    // the layout had them across it (a transposed view of keys whose tail
    // is checked): the accesses coalesce, and a buffer filled from the
    // tile keeps that dimension contiguous (fp8 wgmma operands need it).
    auto blocked = dyn_cast<BlockedEncodingAttr>(blockType.getEncoding());
    if (width <= 1 && (!blocked || blocked.getOrder()[0] == dim))
      return;

    MLIRContext *ctx = make.getContext();
    int64_t maxLanes = maxRowSpan
                           ? std::max<int64_t>(1, maxRowSpan / (width * bytes))
                           : TileGPUDialect::getThreadsPerWarp();
    auto layout =
        vectorLayout(ctx, blockType.getShape(), dim, width, numWarps, maxLanes);
    auto vectorType = RankedTensorType::get(blockType.getShape(),
                                            blockType.getElementType(), layout);
    for (Value v : chain)
      v.setType(tile::BlockPtrType::get(vectorType));
    OpBuilder b(ctx);
    for (Operation *op : accesses) {
      op->setAttr(TileGPUDialect::getVectorWidthAttrName(),
                  b.getI32IntegerAttr(width));
      if (auto load = dyn_cast<tile::LoadBlockOp>(op)) {
        Type oldType = load.getType();
        load.getResult().setType(vectorType);
        b.setInsertionPointAfter(load);
        auto back = ConvertLayoutOp::create(b, load.getLoc(), oldType,
                                            load.getResult());
        load.getResult().replaceAllUsesExcept(back, back);
      } else {
        auto store = cast<tile::StoreBlockOp>(op);
        b.setInsertionPoint(store);
        store.getValueMutable().set(ConvertLayoutOp::create(
            b, store.getLoc(), vectorType, store.getValue()));
      }
    }
  }

  /// A tile of pointers that a loop carries to its loads and stores and to
  /// the one addptr that makes its next value (Triton's `a_ptrs +=
  /// BLOCK_K * stride_ak`) is carried in `layout` itself: converted once
  /// before the loop (and back after it), not at each access, so that the
  /// pipeliner finds the loads reading the loop's own pointers.
  void carryInLayout(Value ptr, Attribute layout) {
    auto arg = dyn_cast<BlockArgument>(ptr);
    auto forOp =
        arg ? dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp()) : nullptr;
    if (!forOp || arg.getArgNumber() < forOp.getNumInductionVars() ||
        getCarriedLayout(arg.getType()) == layout)
      return;
    unsigned n = arg.getArgNumber() - forOp.getNumInductionVars();
    tile::AddPtrOp next;
    for (Operation *user : arg.getUsers()) {
      auto addptr = dyn_cast<tile::AddPtrOp>(user);
      if (addptr && !next && addptr.getPtr() == arg &&
          isa<RankedTensorType>(addptr.getOffset().getType())) {
        next = addptr;
        continue;
      }
      if (!isa<tile::LoadOp, tile::StoreOp>(user) || user->getOperand(0) != arg)
        return;
    }
    if (!next || !next->hasOneUse() ||
        forOp.getYieldedValues()[n] != next.getResult())
      return;
    Location loc = forOp.getLoc();
    Type carried = withLayout(arg.getType(), layout);
    OpBuilder b(forOp);
    OpOperand &init = forOp.getInitArgsMutable()[n];
    init.set(ConvertLayoutOp::create(b, loc, carried, init.get()));
    b.setInsertionPoint(next);
    next.getOffsetMutable().assign(ConvertLayoutOp::create(
        b, loc, withLayout(next.getOffset().getType(), layout),
        next.getOffset()));
    next.getResult().setType(carried);
    arg.setType(carried);
    Value result = forOp.getResult(n);
    Type old = result.getType();
    result.setType(carried);
    if (!result.use_empty()) {
      b.setInsertionPointAfter(forOp);
      auto back = ConvertLayoutOp::create(b, loc, old, result);
      result.replaceAllUsesExcept(back, back);
    }
  }

  void coalesce(Operation *op, const tile::AxisInfoAnalysis &axis,
                unsigned numWarps) {
    Value ptr = op->getOperand(0);
    auto ptrType = dyn_cast<RankedTensorType>(ptr.getType());
    if (!ptrType || !getLayout(ptrType))
      return;
    auto shape = ptrType.getShape();
    Type element =
        cast<tile::PtrType>(ptrType.getElementType()).getPointeeType();
    int64_t bytes = std::max<int64_t>(1, element.getIntOrFloatBitWidth() / 8);
    tile::AxisInfo info = axis.get(ptr);
    unsigned dim = 0;
    for (unsigned d = 1; d < shape.size(); ++d)
      if (info.contiguity[d] > info.contiguity[dim])
        dim = d;
    int64_t width =
        std::min({info.contiguity[dim], info.divisibility[dim] / bytes,
                  kMaxVectorBytes / bytes, shape[dim]});
    Value mask = TypeSwitch<Operation *, Value>(op)
                     .Case<tile::LoadOp, tile::StoreOp, tile::AtomicRMWOp>(
                         [](auto access) { return access.getMask(); });
    if (mask)
      width = std::min(width, axis.get(mask).constancy[dim]);
    width = floorPowerOf2(std::max<int64_t>(width, 1));
    if (width <= 1)
      return;

    auto layout = vectorLayout(op->getContext(), shape, dim, width, numWarps,
                               TileGPUDialect::getThreadsPerWarp());
    carryInLayout(ptr, layout);
    // The access's rule: every tile it takes and gives in its pointers'
    // layout.
    OpLayouts known{SmallVector<Attribute>(op->getNumOperands()),
                    SmallVector<Attribute>(op->getNumResults())};
    known.operands[0] = layout;
    OpLayouts layouts = *inferLayouts(op, known);
    OpBuilder b(op);
    for (auto [operand, operandLayout] :
         llvm::zip(op->getOpOperands(), layouts.operands)) {
      if (!operandLayout ||
          getCarriedLayout(operand.get().getType()) == operandLayout)
        continue;
      operand.set(ConvertLayoutOp::create(
          b, op->getLoc(), withLayout(operand.get().getType(), operandLayout),
          operand.get()));
    }
    op->setAttr(TileGPUDialect::getVectorWidthAttrName(),
                b.getI32IntegerAttr(width));
    if (auto atomic = dyn_cast<tile::AtomicRMWOp>(op))
      atomic.getResult().setType(
          withLayout(atomic.getType(), layouts.results[0]));
    if (auto load = dyn_cast<tile::LoadOp>(op)) {
      auto oldType = cast<RankedTensorType>(load.getType());
      load.getResult().setType(withLayout(oldType, layouts.results[0]));
      b.setInsertionPointAfter(load);
      auto back =
          ConvertLayoutOp::create(b, load.getLoc(), oldType, load.getResult());
      load.getResult().replaceAllUsesExcept(back, back);
    }
  }
};

} // namespace
