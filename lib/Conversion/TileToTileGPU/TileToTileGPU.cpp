//===- TileToTileGPU.cpp - Give every tensor a layout ---------------------===//
//
// Layouts propagate forward through each function in program order; see the
// pass description in Passes.td for the rules.
//
//===----------------------------------------------------------------------===//

#include "tile/Conversion/Passes.h"
#include "tile/Dialect/Tile/IR/Tile.h"
#include "tile/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tile {
#define GEN_PASS_DEF_CONVERTTILETOTILEGPU
#include "tile/Conversion/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tilegpu;

namespace {

/// The blocked layout a tensor of `shape` gets when nothing suggests
/// another: one element per thread, lanes along the fastest dimensions,
/// warps along the slowest, so that rows stay within a warp.
BlockedEncodingAttr getDefaultLayout(MLIRContext *ctx, ArrayRef<int64_t> shape,
                                     unsigned numWarps) {
  unsigned rank = shape.size();
  SmallVector<unsigned> sizePerThread(rank, 1), threadsPerWarp(rank, 1),
      warpsPerCTA(rank, 1), order;
  for (int d = rank - 1; d >= 0; --d)
    order.push_back(d);
  unsigned lanes = TileGPUDialect::getThreadsPerWarp();
  SmallVector<int64_t> left(shape);
  for (unsigned d : order) {
    while (lanes > 1 && left[d] > 1) {
      threadsPerWarp[d] *= 2;
      left[d] /= 2;
      lanes /= 2;
    }
  }
  threadsPerWarp[order.back()] *= lanes; // wrap: lanes hold copies
  unsigned warps = numWarps;
  for (unsigned d = 0; d < rank; ++d) {
    while (warps > 1 && left[d] > 1) {
      warpsPerCTA[d] *= 2;
      left[d] /= 2;
      warps /= 2;
    }
  }
  warpsPerCTA[0] *= warps;
  return BlockedEncodingAttr::get(ctx, sizePerThread, threadsPerWarp,
                                  warpsPerCTA, order);
}

/// A blocked layout with its dimensions permuted like tile.trans permutes
/// the tensor: result dimension i is source dimension order[i].
BlockedEncodingAttr transposeLayout(BlockedEncodingAttr layout,
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

bool isTensor(Type type) { return isa<RankedTensorType>(type); }

class LayoutAssigner {
public:
  LayoutAssigner(MLIRContext *ctx, unsigned numWarps)
      : ctx(ctx), numWarps(numWarps), builder(ctx) {}

  LogicalResult run(func::FuncOp func);

private:
  LogicalResult visitBlock(Block &block);
  LogicalResult visit(Operation *op);
  LogicalResult visitFor(scf::ForOp op);
  LogicalResult visitIf(scf::IfOp op);
  LogicalResult visitWhile(scf::WhileOp op);
  LogicalResult visitElementwise(Operation *op);

  /// One default layout per rank, made for the largest tile of that rank in
  /// the function: blocked layouts apply to any shape, so tiles that meet in
  /// a broadcast ([16, 1] and [16, 128]) then need no conversion.
  Attribute defaultLayout(Type type) {
    auto shape = cast<RankedTensorType>(type).getShape();
    auto it = largestShape.find(shape.size());
    ArrayRef<int64_t> anchor =
        it == largestShape.end() ? shape : ArrayRef<int64_t>(it->second);
    return getDefaultLayout(ctx, anchor, numWarps);
  }

  /// Records, for each rank, the shape with the most elements.
  void findLargestShapes(func::FuncOp func) {
    largestShape.clear();
    auto elements = [](ArrayRef<int64_t> shape) {
      int64_t n = 1;
      for (int64_t d : shape)
        n *= d;
      return n;
    };
    func.walk([&](Operation *op) {
      for (Type type : op->getResultTypes())
        if (auto tensor = dyn_cast<RankedTensorType>(type)) {
          auto &best = largestShape[tensor.getRank()];
          if (best.empty() || elements(tensor.getShape()) > elements(best))
            best.assign(tensor.getShape().begin(), tensor.getShape().end());
        }
    });
  }

  /// `value` in `layout`, converting before `user` when it has another.
  Value convert(Value value, Attribute layout, Operation *user) {
    if (!isTensor(value.getType()) ||
        cast<RankedTensorType>(value.getType()).getEncoding() == layout)
      return value;
    builder.setInsertionPoint(user);
    return ConvertLayoutOp::create(builder, value.getLoc(),
                                   withLayout(value.getType(), layout), value);
  }

  /// Makes every operand in `operands` match the matching type of `types`.
  void convertOperands(Operation *user, MutableArrayRef<OpOperand> operands,
                       TypeRange types) {
    for (auto [operand, type] : llvm::zip(operands, types))
      if (isTensor(type))
        operand.set(convert(operand.get(),
                            cast<RankedTensorType>(type).getEncoding(), user));
  }

  static void setLayout(Value value, Attribute layout) {
    value.setType(withLayout(value.getType(), layout));
  }

  MLIRContext *ctx;
  unsigned numWarps;
  OpBuilder builder;
  llvm::DenseMap<int64_t, SmallVector<int64_t>> largestShape;
};

LogicalResult LayoutAssigner::run(func::FuncOp func) {
  findLargestShapes(func);
  // Tensor arguments and results (of helpers tested on their own) take the
  // default layouts; kernels have scalar arguments only.
  SmallVector<Type> inputs, results;
  for (Type type : func.getArgumentTypes())
    inputs.push_back(isTensor(type) ? withLayout(type, defaultLayout(type))
                                    : type);
  for (Type type : func.getResultTypes())
    results.push_back(isTensor(type) ? withLayout(type, defaultLayout(type))
                                     : type);
  func.setType(FunctionType::get(ctx, inputs, results));
  if (func.isExternal())
    return success();
  if (!func.getBody().hasOneBlock())
    return func.emitError() << "convert-tile-to-tilegpu handles structured "
                               "control flow (scf) only, not blocks";
  for (auto [arg, type] : llvm::zip(func.getArguments(), inputs))
    arg.setType(type);
  return visitBlock(func.getBody().front());
}

LogicalResult LayoutAssigner::visitBlock(Block &block) {
  for (Operation &op : llvm::make_early_inc_range(block))
    if (failed(visit(&op)))
      return failure();
  return success();
}

LogicalResult LayoutAssigner::visit(Operation *op) {
  if (auto forOp = dyn_cast<scf::ForOp>(op))
    return visitFor(forOp);
  if (auto ifOp = dyn_cast<scf::IfOp>(op))
    return visitIf(ifOp);
  if (auto whileOp = dyn_cast<scf::WhileOp>(op))
    return visitWhile(whileOp);
  if (isa<scf::YieldOp, scf::ConditionOp, ConvertLayoutOp>(op))
    return success(); // reconciled by the parent, or already laid out
  if (auto ret = dyn_cast<func::ReturnOp>(op)) {
    auto func = ret->getParentOfType<func::FuncOp>();
    convertOperands(op, ret->getOpOperands(), func.getResultTypes());
    return success();
  }
  if (auto call = dyn_cast<func::CallOp>(op)) {
    if (llvm::any_of(call->getOperandTypes(), isTensor) ||
        llvm::any_of(call->getResultTypes(), isTensor))
      return call.emitError() << "call to @" << call.getCallee()
                              << " passes tiles: inline helpers before "
                                 "convert-tile-to-tilegpu (-inline)";
    return success();
  }
  if (op->getNumRegions() != 0)
    return op->emitError() << "convert-tile-to-tilegpu does not know how to "
                              "lay out the regions of '"
                           << op->getName() << "'";

  if (auto reduce = dyn_cast<ReduceOp>(op)) {
    if (isTensor(reduce.getType())) {
      auto layout = getLayout(reduce.getSrc().getType());
      setLayout(reduce.getResult(),
                SliceEncodingAttr::get(ctx, reduce.getAxis(), layout));
    }
    return success();
  }
  if (auto expand = dyn_cast<ExpandDimsOp>(op)) {
    auto slice =
        dyn_cast<SliceEncodingAttr>(getLayout(expand.getSrc().getType()));
    if (slice && slice.getDim() == expand.getAxis()) {
      setLayout(expand.getResult(), slice.getParent());
      return success();
    }
    auto parent =
        cast<LayoutEncodingAttrInterface>(defaultLayout(expand.getType()));
    expand.getSrcMutable().set(
        convert(expand.getSrc(),
                SliceEncodingAttr::get(ctx, expand.getAxis(), parent), op));
    setLayout(expand.getResult(), parent);
    return success();
  }
  if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
    setLayout(broadcast.getResult(), getLayout(broadcast.getSrc().getType()));
    return success();
  }
  if (auto trans = dyn_cast<TransOp>(op)) {
    auto blocked =
        dyn_cast<BlockedEncodingAttr>(getLayout(trans.getSrc().getType()));
    if (!blocked) {
      blocked =
          cast<BlockedEncodingAttr>(defaultLayout(trans.getSrc().getType()));
      trans.getSrcMutable().set(convert(trans.getSrc(), blocked, op));
    }
    setLayout(trans.getResult(), transposeLayout(blocked, trans.getOrder()));
    return success();
  }
  if (auto dot = dyn_cast<DotOp>(op)) {
    // Operand layouts for the tensor cores are chosen by accelerate-matmul.
    setLayout(dot.getResult(), getLayout(dot.getAcc().getType()));
    return success();
  }
  // A block pointer carries the layout of the block it loads and stores.
  if (auto make = dyn_cast<MakeBlockPtrOp>(op)) {
    RankedTensorType block = make.getType().getBlockType();
    make.getResult().setType(
        BlockPtrType::get(withLayout(block, defaultLayout(block))));
    return success();
  }
  if (auto advance = dyn_cast<AdvanceOp>(op)) {
    advance.getResult().setType(advance.getPtr().getType());
    return success();
  }
  if (auto load = dyn_cast<LoadBlockOp>(op)) {
    load.getResult().setType(load.getPtr().getType().getBlockType());
    return success();
  }
  if (auto store = dyn_cast<StoreBlockOp>(op)) {
    auto layout = store.getPtr().getType().getBlockType().getEncoding();
    store.getValueMutable().set(convert(store.getValue(), layout, op));
    return success();
  }
  if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
    if (!isTensor(cst.getType()))
      return success();
    auto type = withLayout(cst.getType(), defaultLayout(cst.getType()));
    auto dense = dyn_cast<DenseElementsAttr>(cst.getValue());
    if (!dense)
      return op->emitError() << "tensor constants must be dense";
    cst.setValueAttr(dense.reshape(type));
    cst.getResult().setType(type);
    return success();
  }
  return visitElementwise(op);
}

/// Ops whose tensor operands and results all have one shape (arith, math,
/// tile.load/store/addptr/where/exp2, ...) compute in the layout of their
/// first tensor operand; with none (arange, splat, block loads) the
/// default layout of the result.
LogicalResult LayoutAssigner::visitElementwise(Operation *op) {
  RankedTensorType shapeSource;
  for (Type type :
       llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes()))
    if (auto tensor = dyn_cast<RankedTensorType>(type)) {
      if (!shapeSource)
        shapeSource = tensor;
      else if (tensor.getShape() != shapeSource.getShape())
        return op->emitError()
               << "convert-tile-to-tilegpu does not know how "
                  "to lay out '"
               << op->getName() << "', whose tiles have different shapes";
    }
  if (!shapeSource)
    return success();
  Attribute layout;
  for (Value operand : op->getOperands())
    if (isTensor(operand.getType())) {
      layout = cast<RankedTensorType>(operand.getType()).getEncoding();
      break;
    }
  if (!layout)
    layout = defaultLayout(shapeSource);
  for (OpOperand &operand : op->getOpOperands())
    operand.set(convert(operand.get(), layout, op));
  for (Value result : op->getResults())
    if (isTensor(result.getType()))
      setLayout(result, layout);
  return success();
}

LogicalResult LayoutAssigner::visitFor(scf::ForOp op) {
  Block *body = op.getBody();
  for (auto [arg, init] : llvm::zip(op.getRegionIterArgs(), op.getInitArgs()))
    arg.setType(init.getType());
  if (failed(visitBlock(*body)))
    return failure();
  Operation *yield = body->getTerminator();
  convertOperands(yield, yield->getOpOperands(),
                  TypeRange(op.getRegionIterArgs()));
  for (auto [result, arg] : llvm::zip(op.getResults(), op.getRegionIterArgs()))
    result.setType(arg.getType());
  return success();
}

LogicalResult LayoutAssigner::visitIf(scf::IfOp op) {
  if (failed(visitBlock(*op.thenBlock())) ||
      (op.elseBlock() && failed(visitBlock(*op.elseBlock()))))
    return failure();
  if (op.getNumResults() == 0)
    return success();
  Operation *thenYield = op.thenBlock()->getTerminator();
  Operation *elseYield = op.elseBlock()->getTerminator();
  convertOperands(elseYield, elseYield->getOpOperands(),
                  thenYield->getOperandTypes());
  for (auto [result, type] :
       llvm::zip(op.getResults(), thenYield->getOperandTypes()))
    result.setType(type);
  return success();
}

LogicalResult LayoutAssigner::visitWhile(scf::WhileOp op) {
  for (auto [arg, init] : llvm::zip(op.getBeforeArguments(), op.getInits()))
    arg.setType(init.getType());
  if (failed(visitBlock(op.getBefore().front())))
    return failure();
  scf::ConditionOp condition = op.getConditionOp();
  for (auto [arg, value, result] : llvm::zip(
           op.getAfterArguments(), condition.getArgs(), op.getResults())) {
    arg.setType(value.getType());
    result.setType(value.getType());
  }
  if (failed(visitBlock(op.getAfter().front())))
    return failure();
  Operation *yield = op.getAfter().front().getTerminator();
  convertOperands(yield, yield->getOpOperands(),
                  TypeRange(op.getBeforeArguments()));
  return success();
}

struct ConvertTileToTileGPUPass
    : public tile::impl::ConvertTileToTileGPUBase<ConvertTileToTileGPUPass> {
  using ConvertTileToTileGPUBase::ConvertTileToTileGPUBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!numWarps || (numWarps & (numWarps - 1)) || numWarps > 32) {
      module.emitError() << "num-warps must be a power of two from 1 to 32, "
                            "not "
                         << unsigned(numWarps);
      return signalPassFailure();
    }
    Builder b(&getContext());
    module->setAttr(TileGPUDialect::getNumWarpsAttrName(),
                    b.getI32IntegerAttr(numWarps));
    module->setAttr(TileGPUDialect::getTargetAttrName(),
                    TargetAttr::get(&getContext(), target));
    LayoutAssigner assigner(&getContext(), numWarps);
    for (auto func : module.getOps<func::FuncOp>())
      if (failed(assigner.run(func)))
        return signalPassFailure();
  }
};

} // namespace
