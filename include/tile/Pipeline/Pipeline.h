//===- Pipeline.h - The stages of a Tile compilation ------------*- C++ -*-===//
//
// The one list of the passes that take a module of tile kernels to the LLVM
// and NVVM dialects, ready for translation (tile/Target/NVPTX.h).
//
//===----------------------------------------------------------------------===//

#ifndef TILE_PIPELINE_PIPELINE_H
#define TILE_PIPELINE_PIPELINE_H

#include "tile/Pipeline/Options.h"

#include "mlir/Pass/PassManager.h"

namespace mlir::tile {

/// Registers the dialects a Tile compilation meets, from tile IR to LLVM +
/// NVVM, and the interfaces the pipeline needs (inlining).
void registerTileDialects(DialectRegistry &registry);

/// Adds the passes from tile IR to LLVM + NVVM: inline and simplify, lay out
/// (convert-tile-to-tilegpu), the tilegpu optimizations, lower.
void buildTileToLLVMPipeline(OpPassManager &pm, const CompileOptions &options);

/// Registers that pipeline as `tile-to-llvm{<CompileOptions>}`.
void registerTileToLLVMPipeline();

} // namespace mlir::tile

#endif // TILE_PIPELINE_PIPELINE_H
