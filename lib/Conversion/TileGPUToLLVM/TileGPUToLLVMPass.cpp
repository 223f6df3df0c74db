//===- TileGPUToLLVMPass.cpp - Assembling the tilegpu lowering ------------===//

#include "Utility.h"

#include "tile/Conversion/Passes.h"
#include "tile/Dialect/Tile/IR/Tile.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::tile {
#define GEN_PASS_DEF_CONVERTTILEGPUTOLLVM
#include "tile/Conversion/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

constexpr llvm::StringLiteral kScratchSymbol = "tile_shared_scratch";

/// Whether `op` is barrier 0 of the program's threads (the CTA's, or its
/// consumer warps' in a warp-specialized kernel), and with how many threads
/// (null: all of the CTA's).
std::optional<Value> getProgramBarrier(Operation *op) {
  if (isa<NVVM::Barrier0Op>(op))
    return Value();
  auto barrier = dyn_cast<NVVM::BarrierOp>(op);
  if (!barrier || barrier->getNumResults() || barrier.getReductionOp() ||
      !barrier.getBarrierId() ||
      !matchPattern(barrier.getBarrierId(), m_Zero()))
    return std::nullopt;
  return barrier.getNumberOfThreads();
}

bool isSameThreadCount(Value a, Value b) {
  APInt x, y;
  return a == b || (a && b && matchPattern(a, m_ConstantInt(&x)) &&
                    matchPattern(b, m_ConstantInt(&y)) && x == y);
}

/// Barriers that order nothing more than the one before them: a program
/// barrier after another with only pure ops between (both run by the same
/// threads: one block). (A releasing scalar atomic after tl.debug_barrier
/// made two in a row.)
void removeRedundantBarriers(LLVM::LLVMFuncOp kernel) {
  SmallVector<Operation *> redundant;
  kernel.walk([&](Block *block) {
    Operation *last = nullptr;
    std::optional<Value> threads;
    for (Operation &op : *block) {
      if (std::optional<Value> count = getProgramBarrier(&op)) {
        if (last && isSameThreadCount(*threads, *count)) {
          redundant.push_back(&op);
          continue;
        }
        last = &op;
        threads = count;
        continue;
      }
      if (op.getNumRegions() || !isMemoryEffectFree(&op))
        last = nullptr;
    }
  });
  for (Operation *op : redundant)
    op->erase();
}

struct ConvertTileGPUToLLVMPass
    : public tile::impl::ConvertTileGPUToLLVMBase<ConvertTileGPUToLLVMPass> {
  using ConvertTileGPUToLLVMBase::ConvertTileGPUToLLVMBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    if (failed(verifyLaidOut(module, getArgument())))
      return signalPassFailure();

    if (module
            .walk([](Operation *op) {
              return failed(checkAtomicLowering(op)) ? WalkResult::interrupt()
                                                     : WalkResult::advance();
            })
            .wasInterrupted())
      return signalPassFailure();

    // Shared memory is where tilegpu-allocate-shared-memory placed it.
    FailureOr<SharedMemoryAllocation> allocation =
        SharedMemoryAllocation::read(module, getArgument());
    if (failed(allocation))
      return signalPassFailure();
    int64_t sharedBytes = allocation->getTotalBytes();
    // So is whether a store waits at a barrier first, and whether a product
    // fences the generic proxy: tilegpu-place-barriers'.
    StringRef barrierName = TileGPUDialect::getLeadingBarrierAttrName();
    StringRef fenceName = TileGPUDialect::getProxyFenceAttrName();
    if (module
            .walk([&](Operation *op) {
              StringRef missing;
              if (auto alloc = dyn_cast<LocalAllocOp>(op);
                  alloc && alloc.getSrc() && !alloc->hasAttr(barrierName))
                missing = barrierName;
              if (isa<WarpGroupDotOp>(op) && !op->hasAttr(fenceName))
                missing = fenceName;
              if (missing.empty())
                return WalkResult::advance();
              op->emitError()
                  << getArgument()
                  << " needs the barriers and fences tilegpu-place-barriers "
                     "places (run it first): this op has no "
                  << missing;
              return WalkResult::interrupt();
            })
            .wasInterrupted())
      return signalPassFailure();
    // Scratch memory is dynamic shared memory: its size, recorded on the
    // module as tilegpu.shared_bytes, is given at launch, so it may exceed
    // the 48 KiB a static array is limited to. It is aligned for the
    // buffers that need the most (nvmma_shared).
    SharedScratch scratch;
    if (sharedBytes > 0) {
      OpBuilder b(module.getBodyRegion());
      auto type = LLVM::LLVMArrayType::get(b.getI8Type(), 0);
      LLVM::GlobalOp::create(b, module.getLoc(), type, /*isConstant=*/false,
                             LLVM::Linkage::External, kScratchSymbol,
                             Attribute(),
                             /*alignment=*/NVMMASharedEncodingAttr::kAlignment,
                             /*addrSpace=*/3);
      scratch.symbol = kScratchSymbol.str();
    }

    TileGPUToLLVMTypeConverter converter(ctx, threadIndexPerOp);
    RewritePatternSet patterns(ctx);
    populateFuncOpToLLVMPatterns(converter, patterns);
    populateProgramIdOpToLLVMPatterns(converter, patterns);
    populateMakeTileOpToLLVMPatterns(converter, patterns);
    populateElementwiseOpToLLVMPatterns(converter, patterns);
    populatePointerOpToLLVMPatterns(converter, patterns);
    populateLoadStoreOpToLLVMPatterns(converter, patterns, scratch);
    populateBlockPointerOpToLLVMPatterns(converter, patterns);
    populateBarrierOpToLLVMPatterns(converter, patterns);
    populateDebugOpToLLVMPatterns(converter, patterns);
    populateViewOpToLLVMPatterns(converter, patterns);
    populateDotOpToLLVMPatterns(converter, patterns);
    populateReduceOpToLLVMPatterns(converter, patterns, scratch);
    populateConvertLayoutOpToLLVMPatterns(converter, patterns, scratch);
    populateSharedMemoryOpToLLVMPatterns(converter, patterns, scratch);
    arith::populateArithToLLVMConversionPatterns(converter, patterns);
    populateMathToLLVMConversionPatterns(converter, patterns);

    ConversionTarget target(*ctx);
    target.addLegalDialect<LLVM::LLVMDialect, NVVM::NVVMDialect,
                           cf::ControlFlowDialect>();
    target.addIllegalDialect<tile::TileDialect, TileGPUDialect,
                             arith::ArithDialect, math::MathDialect,
                             func::FuncDialect>();
    target.addLegalOp<ModuleOp>();
    // Lowered after its region (lowerWarpSpecialization).
    target.addLegalOp<WarpSpecializeOp>();
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                         target);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    module.walk([](LLVM::LLVMFuncOp kernel) {
      removeRedundantBarriers(kernel);
      lowerWarpSpecialization(kernel);
    });
  }
};

} // namespace
