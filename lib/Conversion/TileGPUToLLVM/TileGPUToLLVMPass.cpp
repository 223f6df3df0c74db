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

/// Places in shared memory each local_alloc's buffer, and the scratch of each
/// layout conversion and reduction that exchanges values between threads,
/// 128-byte aligned so that swizzles stay bank-exact. Places whose lifetimes
/// do not overlap share memory: a buffer lives from its local_alloc to the
/// op of the alloc's block that holds its last read (through transposed
/// views too), loops included; scratch lives for its op alone, so an
/// epilogue's conversion reuses the operand buffers of the loop before it.
/// Reuse is safe because every writer waits at a barrier first: a
/// local_alloc with a source, a conversion or reduction (which writes its
/// scratch between two barriers), and every asynchronous copy, issued after
/// an async_wait's barrier; and no copy is in flight when its loop ends
/// (tilegpu-pipeline predicates off those past the end). Returns the total.
int64_t allocateSharedMemory(ModuleOp module) {
  // Each op is numbered on entry and again after everything nested in it.
  DenseMap<Operation *, int64_t> position, end;
  int64_t next = 0;
  std::function<void(Operation *)> number = [&](Operation *op) {
    position[op] = next++;
    for (Region &region : op->getRegions())
      for (Operation &nested : region.getOps())
        number(&nested);
    end[op] = next++;
  };
  number(module);
  struct Place {
    Operation *op;
    Operation *function;
    int64_t first, last, bytes, offset = 0;
  };
  SmallVector<Place> places;
  module.walk([&](Operation *op) {
    auto alloc = dyn_cast<LocalAllocOp>(op);
    if (!alloc) {
      if (int64_t bytes = getSharedScratchBytes(op))
        places.push_back({op, op->getParentOfType<func::FuncOp>(), position[op],
                          end[op], bytes});
      return;
    }
    int64_t last = position[alloc];
    // Uses through views (transposed, or one buffer of a stack) keep the
    // buffer alive too.
    SmallVector<Value> views{alloc.getResult()};
    while (!views.empty())
      for (Operation *user : views.pop_back_val().getUsers()) {
        if (isa<MemDescTransOp, MemDescIndexOp>(user))
          views.push_back(user->getResult(0));
        Operation *holder = alloc->getBlock()->findAncestorOpInBlock(*user);
        last = std::max(last, holder ? end[holder] : end[user]);
      }
    places.push_back({alloc, alloc->getParentOfType<func::FuncOp>(),
                      position[alloc], last, getSharedBytes(alloc.getType())});
  });
  int64_t total = 0;
  for (size_t i = 0; i < places.size(); ++i) {
    Place &place = places[i];
    // The lowest 128-byte aligned place clear of every live one placed.
    int64_t offset = 0;
    bool moved = true;
    while (moved) {
      moved = false;
      for (size_t j = 0; j < i; ++j) {
        const Place &other = places[j];
        bool liveTogether = other.function == place.function &&
                            other.first <= place.last &&
                            place.first <= other.last;
        if (liveTogether && offset < other.offset + other.bytes &&
            other.offset < offset + place.bytes) {
          offset = llvm::alignTo(other.offset + other.bytes, 128);
          moved = true;
        }
      }
    }
    place.offset = offset;
    total = std::max(total, offset + place.bytes);
    place.op->setAttr(
        kAllocationOffsetAttr,
        IntegerAttr::get(IntegerType::get(module.getContext(), 64), offset));
  }
  return total;
}

struct ConvertTileGPUToLLVMPass
    : public tile::impl::ConvertTileGPUToLLVMBase<ConvertTileGPUToLLVMPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();

    if (module
            .walk([](tile::AtomicAddOp op) {
              return failed(checkAtomicAddLowering(op))
                         ? WalkResult::interrupt()
                         : WalkResult::advance();
            })
            .wasInterrupted())
      return signalPassFailure();

    int64_t sharedBytes = allocateSharedMemory(module);
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

    TileGPUToLLVMTypeConverter converter(ctx);
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
  pm.addPass(tilegpu::createTileGPUCoalesce());
  pm.addPass(tilegpu::createTileGPUAccelerateMatmul());
  pm.addPass(tilegpu::createTileGPURemoveLayoutConversions());
  pm.addPass(tilegpu::createTileGPUOptimizeDotOperands());
  tilegpu::TileGPUPipelineOptions pipelineOptions;
  pipelineOptions.numStages = options.numStages;
  pm.addPass(tilegpu::createTileGPUPipeline(pipelineOptions));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createConvertTileGPUToLLVM());
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
};
} // namespace

void tile::registerTileToLLVMPipeline() {
  PassPipelineRegistration<PipelineOptions>(
      "tile-to-llvm", "inline, lay out and lower tile kernels to LLVM + NVVM",
      [](OpPassManager &pm, const PipelineOptions &options) {
        buildTileToLLVMPipeline(
            pm, {options.numWarps, options.target, options.numStages});
      });
}
