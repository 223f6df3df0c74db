//===- TileGPUToLLVMPass.cpp - Assembling the tilegpu lowering ------------===//

#include "Utility.h"

#include "tile/Conversion/Passes.h"
#include "tile/Dialect/Tile/IR/Tile.h"
#include "tile/Dialect/TileGPU/Transforms/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/Passes.h"

namespace mlir::tile {
#define GEN_PASS_DEF_CONVERTTILEGPUTOLLVM
#include "tile/Conversion/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tilegpu;

namespace {

constexpr llvm::StringLiteral kScratchSymbol = "tile_shared_scratch";

struct ConvertTileGPUToLLVMPass
    : public tile::impl::ConvertTileGPUToLLVMBase<ConvertTileGPUToLLVMPass> {
  using ConvertTileGPUToLLVMBase::ConvertTileGPUToLLVMBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    if (failed(verifyLaidOut(module, getArgument())))
      return signalPassFailure();

    if (module
            .walk([](tile::AtomicAddOp op) {
              return failed(checkAtomicAddLowering(op))
                         ? WalkResult::interrupt()
                         : WalkResult::advance();
            })
            .wasInterrupted())
      return signalPassFailure();

    int64_t sharedBytes = allocateSharedMemory(module);
    markRedundantLeadingBarriers(module);
    // Scratch memory is dynamic shared memory: its size, recorded on the
    // module as tilegpu.shared_bytes, is given at launch, so it may exceed
    // the 48 KiB a static array is limited to.
    SharedScratch scratch;
    if (sharedBytes > 0) {
      OpBuilder b(module.getBodyRegion());
      auto type = LLVM::LLVMArrayType::get(b.getI8Type(), 0);
      LLVM::GlobalOp::create(b, module.getLoc(), type, /*isConstant=*/false,
                             LLVM::Linkage::External, kScratchSymbol,
                             Attribute(), /*alignment=*/128,
                             /*addrSpace=*/3);
      scratch.symbol = kScratchSymbol.str();
    }
    module->setAttr("tilegpu.shared_bytes",
                    IntegerAttr::get(IntegerType::get(ctx, 64), sharedBytes));

    TileGPUToLLVMTypeConverter converter(ctx, threadIndexPerOp);
    RewritePatternSet patterns(ctx);
    populateFuncOpToLLVMPatterns(converter, patterns);
    populateProgramIdOpToLLVMPatterns(converter, patterns);
    populateMakeTileOpToLLVMPatterns(converter, patterns);
    populateElementwiseOpToLLVMPatterns(converter, patterns);
    populatePointerOpToLLVMPatterns(converter, patterns);
    populateLoadStoreOpToLLVMPatterns(converter, patterns);
    populateBlockPointerOpToLLVMPatterns(converter, patterns);
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
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                         target);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

void tile::buildTileToLLVMPipeline(OpPassManager &pm,
                                   const TileToLLVMPipelineOptions &options) {
  pm.addPass(createInlinerPass());
  pm.addPass(createSymbolDCEPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  ConvertTileToTileGPUOptions layoutOptions;
  layoutOptions.numWarps = options.numWarps;
  layoutOptions.target = options.target;
  pm.addPass(createConvertTileToTileGPU(layoutOptions));
  tilegpu::TileGPUCoalesceOptions coalesceOptions;
  coalesceOptions.maxRowSpan = options.maxRowSpan;
  pm.addPass(tilegpu::createTileGPUCoalesce(coalesceOptions));
  pm.addPass(tilegpu::createTileGPUAccelerateMatmul());
  pm.addPass(tilegpu::createTileGPURemoveLayoutConversions());
  pm.addPass(tilegpu::createTileGPUOptimizeDotOperands());
  tilegpu::TileGPUPipelineOptions pipelineOptions;
  pipelineOptions.numStages = options.numStages;
  pm.addPass(tilegpu::createTileGPUPipeline(pipelineOptions));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  ConvertTileGPUToLLVMOptions lowering;
  lowering.threadIndexPerOp = options.threadIndexPerOp;
  pm.addPass(createConvertTileGPUToLLVM(lowering));
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

namespace {
struct PipelineOptions : public PassPipelineOptions<PipelineOptions> {
  Option<unsigned> numWarps{*this, "num-warps",
                            llvm::cl::desc("warps per program instance"),
                            llvm::cl::init(4)};
  Option<std::string> target{*this, "target", llvm::cl::desc("sm_80 or sm_90a"),
                             llvm::cl::init("sm_90a")};
  Option<unsigned> numStages{
      *this, "num-stages",
      llvm::cl::desc("buffers per block load copied ahead in loops (1: none)"),
      llvm::cl::init(2)};
  Option<bool> threadIndexPerOp{
      *this, "thread-index-per-op",
      llvm::cl::desc("each op reads the thread index itself, so that no "
                     "index arithmetic stays live across a loop"),
      llvm::cl::init(false)};
  Option<unsigned> maxRowSpan{
      *this, "max-row-span",
      llvm::cl::desc("the most bytes of a block's row under one warp's lanes "
                     "(0: no limit)"),
      llvm::cl::init(0)};
};
} // namespace

void tile::registerTileToLLVMPipeline() {
  PassPipelineRegistration<PipelineOptions>(
      "tile-to-llvm", "inline, lay out and lower tile kernels to LLVM + NVVM",
      [](OpPassManager &pm, const PipelineOptions &options) {
        buildTileToLLVMPipeline(
            pm, {options.numWarps, options.target, options.numStages,
                 options.threadIndexPerOp, options.maxRowSpan});
      });
}
