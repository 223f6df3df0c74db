//===- Passes.h - tilegpu transformations -----------------------*- C++ -*-===//

#ifndef TILE_DIALECT_TILEGPU_TRANSFORMS_PASSES_H
#define TILE_DIALECT_TILEGPU_TRANSFORMS_PASSES_H

#include "tile/Dialect/TileGPU/IR/TileGPU.h"

#include "mlir/Pass/Pass.h"

namespace mlir::tilegpu {

#define GEN_PASS_DECL
#include "tile/Dialect/TileGPU/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tile/Dialect/TileGPU/Transforms/Passes.h.inc"

} // namespace mlir::tilegpu

#endif // TILE_DIALECT_TILEGPU_TRANSFORMS_PASSES_H
