//===- TMAStores.cpp - Epilogue stores and block updates by the TMA ------===//
//
// A kernel's result block (the GEMM's C, attention's O) is stored once, after
// its loops. On sm_90a, where the runtime can describe the tensor
// (TensorMaps.h) and rows are whole 16 bytes, the tile goes to a swizzled
// shared-memory buffer and the TMA writes it out from there, one thread
// issuing (epilogue-stores: on the H200 the GEMM and the d128 forward ran no
// faster with it, -4% to +4%).
//
// A block a tensor descriptor adds to (desc.atomic_add of a product) is
// added by the TMA's reductions instead of an atomic per element: each warp
// writes the box it holds to its part of a buffer and its lane 0 issues the
// box's update, so no warp waits for another, and in a loop the update of
// one step reads the buffer while the next step computes. (The attention
// backward's dQ measured 3-5% slower so than by red.global.add.v2:
// docs/performance.md.)
//
// A tile of pointers added to (tl.atomic_add, relaxed, unmasked) that is one
// base plus a permutation of a contiguous block (tile::getBitOffsets) is
// added by the bulk copy engine's one-dimensional reductions: each warpgroup
// (or warp) writes its elements to a buffer in the block's order and one
// thread adds each contiguous run it holds, FlashAttention-3's dQ.
//
//===----------------------------------------------------------------------===//

#include "TensorMaps.h"

#include "tile/Analysis/Allocation.h"
#include "tile/Analysis/BitOffsets.h"
#include "tile/Dialect/Tile/IR/Tile.h"
#include "tile/Dialect/TileGPU/IR/TileGPU.h"
#include "tile/Dialect/TileGPU/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::tilegpu {
#define GEN_PASS_DEF_TILEGPUTMASTORES
#include "tile/Dialect/TileGPU/Transforms/Passes.h.inc"
} // namespace mlir::tilegpu

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

/// Bytes the TMA writes a row in.
constexpr int64_t kRowBytes = 16;

/// The nvmma_shared buffer the TMA copies a tile of `type` from, to the
/// tensor `block` describes: contiguous along the dimension the block
/// pointer's order names first.
std::optional<MemDescType> getTMABuffer(tile::MakeBlockPtrOp block,
                                        RankedTensorType type) {
  if (!block || type.getRank() != 2 || !type.getElementType().isIntOrFloat())
    return std::nullopt;
  unsigned bits = type.getElementType().getIntOrFloatBitWidth();
  if (bits != 8 && bits != 16 && bits != 32)
    return std::nullopt;
  SmallVector<unsigned> order(block.getOrder().begin(), block.getOrder().end());
  auto encoding = NVMMASharedEncodingAttr::getForMatrix(
      block.getContext(), type.getShape(), bits, order);
  if (!encoding)
    return std::nullopt;
  return MemDescType::get(block.getContext(), type.getShape(),
                          type.getElementType(), encoding);
}

/// Whether the tensor's rows are whole 16 bytes, as the TMA writes them: a
/// row whose length (the contiguous extent) may end inside 16 bytes would
/// be written past its end (seen on the H200 with a GEMM's odd N).
bool hasWholeRows(tile::MakeBlockPtrOp block, MemDescType buffer,
                  const tile::AxisInfoAnalysis &axis) {
  unsigned inner = buffer.getEncoding().getOrder()[0];
  int64_t bytes = getSharedElementBytes(buffer.getElementType());
  return (axis.get(block.getShape()[inner]).divisibility[0] * bytes) %
             kRowBytes ==
         0;
}

/// Whether the TMA takes the update: an add of f32 (what its reductions
/// were checked on); the others stay element by element.
bool isTMAReduction(tile::AtomicKind kind, RankedTensorType type) {
  return kind == tile::AtomicKind::add && type.getRank() == 2 &&
         type.getElementType().isF32();
}

/// The block pointer `pointer` comes from before its loops: through
/// advances, and the iter_args of loops that carry it only advanced (the
/// base, extents and strides a descriptor needs are the same); null where
/// a loop carries another one.
Value getInitialBlockPointer(Value pointer) {
  auto skipAdvances = [](Value value) {
    while (auto advance = value.getDefiningOp<tile::AdvanceOp>())
      value = advance.getPtr();
    return value;
  };
  for (pointer = skipAdvances(pointer);;) {
    auto arg = dyn_cast<BlockArgument>(pointer);
    auto loop = arg ? dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp())
                    : scf::ForOp();
    if (!loop || arg == loop.getInductionVar())
      return pointer;
    if (skipAdvances(loop.getTiedLoopYieldedValue(arg)->get()) != arg)
      return {};
    pointer = skipAdvances(loop.getTiedLoopInit(arg)->get());
  }
}

/// The plan of one block update by the TMA: the buffer and the access, the
/// descriptor's box narrowed to one warp's.
struct PlannedReduction {
  tile::AtomicRMWBlockOp op;
  MemDescType buffer;
  TensorMapAccess access;
};

std::optional<PlannedReduction>
planReduction(tile::AtomicRMWBlockOp op, const tile::AxisInfoAnalysis &axis) {
  auto type = cast<RankedTensorType>(op.getValue().getType());
  if (!isTMAReduction(op.getKind(), type) || !getLayout(type))
    return std::nullopt;
  std::optional<LinearLayout::Coord> box = getLinearLayout(type).getWarpBox();
  Value pointer = getInitialBlockPointer(op.getPtr());
  auto block = pointer ? getMadeBlockPointer(pointer) : tile::MakeBlockPtrOp();
  if (!box || !block)
    return std::nullopt;
  std::optional<MemDescType> buffer = getTMABuffer(block, type);
  if (!buffer || !hasWholeRows(block, *buffer, axis))
    return std::nullopt;
  // A warp's box: whole swizzle spans of whole swizzle patterns.
  SharedLayoutAttrInterface encoding = buffer->getEncoding();
  unsigned inner = encoding.getOrder()[0], outer = encoding.getOrder()[1];
  int64_t span = encoding.getRowLength(type.getShape());
  if ((*box)[inner] % span || (*box)[outer] % 8)
    return std::nullopt;
  OpBuilder b(op);
  std::optional<TensorMapAccess> access =
      planTensorMapAccess(b, pointer, *buffer, axis);
  if (!access)
    return std::nullopt;
  SmallVector<Attribute> boxAttr(
      cast<ArrayAttr>(access->descriptor.get("box")).getValue());
  boxAttr[1] = b.getI64IntegerAttr((*box)[outer]);
  NamedAttrList fields(access->descriptor);
  fields.set("box", b.getArrayAttr(boxAttr));
  access->descriptor = fields.getDictionary(op.getContext());
  return PlannedReduction{op, *buffer, std::move(*access)};
}

/// Replaces the update `op` with what `update` builds in its place over a
/// buffer of `type`, allocated before the innermost loop around `op` (so
/// that it lives through the loop) and waited for after that loop, until
/// the asynchronous updates have read it. Not the outermost: a persistent
/// kernel's loops over blocks of work would keep each inner loop's buffer
/// apart from the others' for the whole kernel.
void replaceThroughBuffer(Operation *op, MemDescType type,
                          function_ref<void(OpBuilder &, Value)> update) {
  Operation *loop = op->getParentOfType<LoopLikeOpInterface>();
  OpBuilder b(loop ? loop : op);
  Value buffer = LocalAllocOp::create(b, op->getLoc(), type, /*src=*/Value());
  b.setInsertionPoint(op);
  update(b, buffer);
  b.setInsertionPointAfter(loop ? loop : op);
  AsyncTMAStoreWaitOp::create(b, op->getLoc(), buffer);
  op->erase();
}

/// The plan of one update by bulk reductions: the op and its offset bits.
struct PlannedBulkReduction {
  tile::AtomicRMWOp op;
  SmallVector<int64_t> offsetBits;
};

/// Bytes the bulk copy engine's addresses are aligned to.
constexpr int64_t kBulkAlignment = 16;

std::optional<PlannedBulkReduction>
planBulkReduction(tile::AtomicRMWOp op, const tile::AxisInfoAnalysis &axis) {
  auto type = dyn_cast<RankedTensorType>(op.getValue().getType());
  if (!type || op.getMask() || !op.getResult().use_empty() ||
      op.getKind() != tile::AtomicKind::add || !type.getElementType().isF32() ||
      op.getSem() != tile::MemSemantic::relaxed ||
      op.getScope() != tile::MemScope::gpu || !getLayout(type) ||
      !tile::getUniformBasePointer(op.getPtr()))
    return std::nullopt;
  std::optional<tile::BitOffsets> offsets = tile::getBitOffsets(op.getPtr());
  if (!offsets)
    return std::nullopt;

  std::optional<SmallVector<int64_t>> permutation = offsets->getPermutation();
  if (!permutation || !getBulkReduceRuns(type, *permutation))
    return std::nullopt;
  // The block starts at the uniform part (the base pointer plus integer
  // terms, in elements): each must keep it 16-byte aligned.
  for (Value term : offsets->uniform) {
    tile::AxisInfo info = axis.get(term);
    int64_t bytes =
        isa<tile::PtrType>(term.getType())
            ? info.divisibility.front()
            : info.divisibility.front() * type.getElementTypeBitWidth() / 8;
    if (bytes % kBulkAlignment)
      return std::nullopt;
  }
  return PlannedBulkReduction{op, std::move(*permutation)};
}

struct TMAStoresPass
    : public tilegpu::impl::TileGPUTMAStoresBase<TMAStoresPass> {
  using TileGPUTMAStoresBase::TileGPUTMAStoresBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(verifyLaidOut(module, getArgument())))
      return signalPassFailure();
    TargetAttr target = getTarget(module);
    if (!target || target.getArch() != Arch::SM90a)
      return;
    for (auto kernel : module.getOps<func::FuncOp>()) {
      if (!tile::isKernel(kernel))
        continue;
      // Decided on the IR as it came, then rewritten.
      tile::AxisInfoAnalysis axis(kernel);
      SmallVector<PlannedReduction> planned;
      SmallVector<PlannedBulkReduction> bulk;
      if (reductions)
        kernel.walk([&](tile::AtomicRMWBlockOp op) {
          if (std::optional<PlannedReduction> plan = planReduction(op, axis))
            planned.push_back(std::move(*plan));
        });
      if (bulkReductions)
        kernel.walk([&](tile::AtomicRMWOp op) {
          if (std::optional<PlannedBulkReduction> plan =
                  planBulkReduction(op, axis))
            bulk.push_back(std::move(*plan));
        });
      SmallVector<std::tuple<tile::StoreBlockOp, MemDescType, TensorMapAccess>>
          stores;
      kernel.walk([&](tile::StoreBlockOp store) {
        if (!epilogueStores || store->getParentOfType<LoopLikeOpInterface>())
          return;
        auto block = getMadeBlockPointer(store.getPtr());
        std::optional<MemDescType> buffer = getTMABuffer(
            block, cast<RankedTensorType>(store.getValue().getType()));
        if (!buffer || !hasWholeRows(block, *buffer, axis))
          return;
        OpBuilder b(store);
        if (std::optional<TensorMapAccess> access =
                planTensorMapAccess(b, store.getPtr(), *buffer, axis))
          stores.emplace_back(store, *buffer, std::move(*access));
      });
      for (auto &[store, buffer, access] : stores) {
        OpBuilder b(store);
        Value desc = getTensorMapParameter(kernel, access.descriptor);
        Value tile =
            LocalAllocOp::create(b, store.getLoc(), buffer, store.getValue());
        AsyncTMAStoreBlockOp::create(b, store.getLoc(), store.getPtr(), desc,
                                     access.coords, tile);
        store.erase();
      }
      for (PlannedReduction &plan : planned) {
        tile::AtomicRMWBlockOp op = plan.op;
        replaceThroughBuffer(op, plan.buffer, [&](OpBuilder &b, Value buffer) {
          Value desc = getTensorMapParameter(kernel, plan.access.descriptor);
          AsyncTMAReduceBlockOp::create(b, op.getLoc(), op.getKind(),
                                        op.getPtr(), desc, plan.access.coords,
                                        op.getValue(), buffer);
        });
      }
      for (PlannedBulkReduction &plan : bulk) {
        tile::AtomicRMWOp op = plan.op;
        auto type = cast<RankedTensorType>(op.getValue().getType());
        auto encoding = SharedEncodingAttr::get(op.getContext(), /*vec=*/1,
                                                /*perPhase=*/1,
                                                /*maxPhase=*/1, {1, 0});
        auto blockType =
            MemDescType::get(op.getContext(), {1, type.getNumElements()},
                             type.getElementType(), encoding);
        replaceThroughBuffer(op, blockType, [&](OpBuilder &b, Value buffer) {
          AsyncBulkReduceOp::create(b, op.getLoc(), op.getKind(), op.getPtr(),
                                    op.getValue(), buffer, plan.offsetBits);
        });
      }
    }
  }
};

} // namespace
