//===- TileToTileGPU.cpp - Give every tensor a layout ---------------------===//
//
// Layouts propagate forward through each function in program order, by the
// rules of LayoutPropagation.h; this pass decides only where they start (the
// default layouts) and what a conversion reconciles.
//
//===----------------------------------------------------------------------===//

#include "tile/Conversion/Passes.h"
#include "tile/Dialect/Tile/IR/Tile.h"
#include "tile/Dialect/TileGPU/IR/LayoutPropagation.h"

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
  LogicalResult visitOp(Operation *op);

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

  /// Gives the values of structured control flow that receive `operand`
  /// its type: the first value to reach them decides.
  static void carry(OpOperand &operand) {
    for (Value value : getCarriedValues(operand))
      value.setType(operand.get().getType());
  }

  /// Converts each operand of `terminator` to the layout of the values it
  /// is carried to.
  void reconcile(Operation *terminator) {
    for (OpOperand &operand : terminator->getOpOperands()) {
      SmallVector<Value> carried = getCarriedValues(operand);
      if (!carried.empty())
        operand.set(convert(operand.get(),
                            getCarriedLayout(carried.front().getType()),
                            terminator));
    }
  }

  static void setLayout(Value value, Attribute layout) {
    value.setType(withCarriedLayout(value.getType(), layout));
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
  return visitOp(op);
}

/// Lays `op` out by its rule (inferLayouts) from its operands' layouts, the
/// first laid-out operand deciding where the rule ties several; the others
/// are converted to what the rule asks. An op with no laid-out operand
/// (ranges, splats, make_block_ptr) starts from the default layouts.
LogicalResult LayoutAssigner::visitOp(Operation *op) {
  OpLayouts known;
  for (Type type : op->getOperandTypes())
    known.operands.push_back(getCarriedLayout(type));
  known.results.resize(op->getNumResults());
  auto defaults = [&](TypeRange types) {
    SmallVector<Attribute> layouts;
    for (Type type : types) {
      if (auto blockPtr = dyn_cast<BlockPtrType>(type))
        type = blockPtr.getBlockType();
      layouts.push_back(isTensor(type) ? defaultLayout(type) : Attribute());
    }
    return layouts;
  };
  if (llvm::none_of(known.operands, [](Attribute a) { return bool(a); })) {
    for (auto [result, layout] :
         llvm::zip(op->getResults(), defaults(op->getResultTypes())))
      if (layout)
        setLayout(result, layout);
    return success();
  }
  FailureOr<OpLayouts> layouts = inferLayouts(op, known);
  // An operand the op cannot take as it is (trans of a slice) is converted
  // to its default layout; one that no default would do either (expand_dims
  // of anything but a slice along its axis) to what gives the default
  // result.
  if (failed(layouts))
    layouts = inferLayouts(op, {defaults(op->getOperandTypes()),
                                SmallVector<Attribute>(op->getNumResults())});
  if (failed(layouts))
    layouts = inferLayouts(op, {SmallVector<Attribute>(op->getNumOperands()),
                                defaults(op->getResultTypes())});
  if (failed(layouts))
    return op->emitError() << "convert-tile-to-tilegpu does not know how to "
                              "lay out '"
                           << op->getName() << "'";
  for (auto [operand, layout] :
       llvm::zip(op->getOpOperands(), layouts->operands))
    if (layout)
      operand.set(convert(operand.get(), layout, op));
  for (auto [result, layout] : llvm::zip(op->getResults(), layouts->results))
    if (layout)
      setLayout(result, layout);
  return success();
}

LogicalResult LayoutAssigner::visitFor(scf::ForOp op) {
  for (OpOperand &init : op.getInitArgsMutable())
    carry(init);
  if (failed(visitBlock(*op.getBody())))
    return failure();
  reconcile(op.getBody()->getTerminator());
  return success();
}

LogicalResult LayoutAssigner::visitIf(scf::IfOp op) {
  if (failed(visitBlock(*op.thenBlock())) ||
      (op.elseBlock() && failed(visitBlock(*op.elseBlock()))))
    return failure();
  if (op.getNumResults() == 0)
    return success();
  for (OpOperand &yielded : op.thenBlock()->getTerminator()->getOpOperands())
    carry(yielded);
  reconcile(op.elseBlock()->getTerminator());
  return success();
}

LogicalResult LayoutAssigner::visitWhile(scf::WhileOp op) {
  for (OpOperand &init : op->getOpOperands())
    carry(init);
  if (failed(visitBlock(op.getBefore().front())))
    return failure();
  for (OpOperand &passed : op.getConditionOp()->getOpOperands())
    carry(passed);
  if (failed(visitBlock(op.getAfter().front())))
    return failure();
  reconcile(op.getAfter().front().getTerminator());
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
