//===- Passes.h - Tile conversion passes ------------------------*- C++ -*-===//

#ifndef TILE_CONVERSION_PASSES_H
#define TILE_CONVERSION_PASSES_H

#include "tile/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tile {

#define GEN_PASS_DECL
#include "tile/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tile/Conversion/Passes.h.inc"

/// Options of the pipeline from tile IR to LLVM + NVVM.
struct TileToLLVMPipelineOptions {
  unsigned numWarps = 4;
  std::string target = "sm_90a";
  /// Buffers per block load copied ahead by tilegpu-pipeline (1: none).
  unsigned numStages = 2;
  /// convert-tilegpu-to-llvm's thread-index-per-op.
  bool threadIndexPerOp = false;
  /// tilegpu-coalesce's max-row-span (0: no limit).
  unsigned maxRowSpan = 0;
};

/// Adds the passes that take a module of tile kernels to LLVM + NVVM,
/// ready for translation to LLVM IR.
void buildTileToLLVMPipeline(OpPassManager &pm,
                             const TileToLLVMPipelineOptions &options);

/// Registers that pipeline as
/// `tile-to-llvm{num-warps=N target=sm_XX num-stages=S
///               thread-index-per-op=B max-row-span=BYTES}`.
void registerTileToLLVMPipeline();

} // namespace mlir::tile

#endif // TILE_CONVERSION_PASSES_H
