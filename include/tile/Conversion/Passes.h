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

} // namespace mlir::tile

#endif // TILE_CONVERSION_PASSES_H
