//===- FuncOpToLLVM.cpp - Kernels become NVVM kernels ---------------------===//

#include "Utility.h"

#include "tile/Dialect/Tile/IR/Tile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

constexpr int64_t kTensorMapBytes = 128;
constexpr int64_t kTensorMapAlignment = 64;

/// A `tile.kernel` function becomes an `llvm.func` marked `nvvm.kernel`,
/// with its thread count as `nvvm.maxntid` (the producer warps of a
/// warp-specialized kernel included).
struct KernelOpConversion : public ConvertOpToLLVMPattern<func::FuncOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(func::FuncOp func, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!tile::isKernel(func))
      return rewriter.notifyMatchFailure(
          func, "only kernels reach the GPU: inline helpers first");
    auto numWarps = getNumWarps(func);
    if (!numWarps)
      return func.emitError() << "the module has no tilegpu.num_warps: run "
                                 "convert-tile-to-tilegpu first";
    TypeConverter::SignatureConversion signature(func.getNumArguments());
    for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
      Type lowered = getTypeConverter()->convertType(type);
      if (!lowered)
        return func.emitError() << "kernel argument " << i << " of type "
                                << type << " has no GPU representation";
      signature.addInputs(i, lowered);
    }
    auto type = LLVM::LLVMFunctionType::get(
        LLVM::LLVMVoidType::get(getContext()), signature.getConvertedTypes());
    auto llvmFunc =
        LLVM::LLVMFuncOp::create(rewriter, func.getLoc(), func.getName(), type);
    llvmFunc->setAttr("nvvm.kernel", rewriter.getUnitAttr());
    int32_t warps = *numWarps;
    if (std::optional<WarpSpecializeOp> ws = getWarpSpecialization(func)) {
      // The occupancy its register split assumes.
      warps += ws->getProducerWarps();
      llvmFunc->setAttr("nvvm.minctasm",
                        rewriter.getI32IntegerAttr(ws->getCtasPerSm()));
    }
    llvmFunc->setAttr("nvvm.maxntid",
                      rewriter.getDenseI32ArrayAttr({warps * 32, 1, 1}));
    // A TMA descriptor is passed by value (128 bytes, 64-byte aligned) and
    // read in place: a grid constant, whose address the TMA takes.
    for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
      if (!isa<TensorMapType>(type))
        continue;
      llvmFunc.setArgAttr(i, LLVM::LLVMDialect::getByValAttrName(),
                          TypeAttr::get(LLVM::LLVMArrayType::get(
                              rewriter.getI8Type(), kTensorMapBytes)));
      llvmFunc.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                          rewriter.getI64IntegerAttr(kTensorMapAlignment));
      llvmFunc.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(),
                          rewriter.getUnitAttr());
    }
    rewriter.inlineRegionBefore(func.getBody(), llvmFunc.getBody(),
                                llvmFunc.end());
    if (failed(rewriter.convertRegionTypes(&llvmFunc.getBody(),
                                           *getTypeConverter(), &signature)))
      return failure();
    rewriter.eraseOp(func);
    return success();
  }
};

struct ReturnOpConversion : public ConvertOpToLLVMPattern<func::ReturnOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;

  LogicalResult
  matchAndRewrite(func::ReturnOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (op.getNumOperands() != 0)
      return rewriter.notifyMatchFailure(op, "kernels return nothing");
    rewriter.replaceOpWithNewOp<LLVM::ReturnOp>(op, ValueRange());
    return success();
  }
};

} // namespace

void tilegpu::populateFuncOpToLLVMPatterns(
    TileGPUToLLVMTypeConverter &converter, RewritePatternSet &patterns) {
  patterns.add<KernelOpConversion, ReturnOpConversion>(converter);
}
