//===- Pipeline.cpp - The stages of a Tile compilation --------------------===//

#include "tile/Pipeline/Pipeline.h"

#include "tile/Conversion/Passes.h"
#include "tile/Dialect/TileGPU/Transforms/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

std::string tile::CompileOptions::str() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  print(os);
  // print() writes "{a=1 b=2}".
  return text.size() >= 2 ? text.substr(1, text.size() - 2) : text;
}

LogicalResult tile::parseCompileOptions(StringRef text, CompileOptions &options,
                                        std::string &error) {
  llvm::raw_string_ostream os(error);
  if (succeeded(options.parseFromString(text, os)))
    return success();
  // A bad value is reported by LLVM's option parser on stderr, not here.
  if (error.empty())
    error = "cannot parse '" + text.str() + "' (the message above says why)";
  return failure();
}

void tile::registerTileDialects(DialectRegistry &registry) {
  registry.insert<TileDialect, tilegpu::TileGPUDialect, arith::ArithDialect,
                  cf::ControlFlowDialect, func::FuncDialect, math::MathDialect,
                  scf::SCFDialect, LLVM::LLVMDialect, NVVM::NVVMDialect>();
  func::registerInlinerExtension(registry);
}

void tile::buildTileToLLVMPipeline(OpPassManager &pm,
                                   const CompileOptions &options) {
  // Helpers inlined, the program simplified before layouts are chosen.
  pm.addPass(createInlinerPass());
  pm.addPass(createSymbolDCEPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  // Layouts, then the tilegpu optimizations, in the order each needs.
  ConvertTileToTileGPUOptions layouts;
  layouts.numWarps = options.numWarps;
  layouts.target = options.target;
  pm.addPass(createConvertTileToTileGPU(layouts));
  tilegpu::TileGPUCoalesceOptions coalesce;
  coalesce.maxRowSpan = options.maxRowSpan;
  pm.addPass(tilegpu::createTileGPUCoalesce(coalesce));
  pm.addPass(tilegpu::createTileGPUAccelerateMatmul());
  pm.addPass(tilegpu::createTileGPURemoveLayoutConversions());
  pm.addPass(tilegpu::createTileGPUOptimizeDotOperands());
  if (options.overlapProducts)
    pm.addPass(tilegpu::createTileGPUOverlapProducts());
  pm.addPass(tilegpu::createTileGPUScheduleProducts());
  tilegpu::TileGPUPipelineOptions pipeline;
  pipeline.numStages = options.numStages;
  pipeline.useTma = options.tma;
  pipeline.warpSpecialize = options.warpSpecialize;
  pm.addPass(tilegpu::createTileGPUPipeline(pipeline));
  if (options.pingPong)
    pm.addPass(tilegpu::createTileGPUPingPong());
  if (options.tma || options.tmaStores || options.bulkReductions) {
    tilegpu::TileGPUTMAStoresOptions stores;
    stores.epilogueStores = options.tmaStores;
    stores.reductions = options.tma;
    stores.bulkReductions = options.bulkReductions;
    pm.addPass(tilegpu::createTileGPUTMAStores(stores));
  }
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // What the lowering reads, decided last, on the IR it lowers.
  pm.addPass(tilegpu::createTileGPUAllocateSharedMemory());
  pm.addPass(tilegpu::createTileGPUPlaceBarriers());

  // Lowering to LLVM + NVVM.
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

void tile::registerTileToLLVMPipeline() {
  PassPipelineRegistration<CompileOptions>(
      "tile-to-llvm", "inline, lay out and lower tile kernels to LLVM + NVVM",
      [](OpPassManager &pm, const CompileOptions &options) {
        buildTileToLLVMPipeline(pm, options);
      });
}
