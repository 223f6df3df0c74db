//===- tile-opt.cpp - The Tile optimizer driver ---------------------------===//
//
// Parses, verifies, transforms and prints IR of the tile dialect together
// with the upstream dialects Tile programs use.
//
//===----------------------------------------------------------------------===//

#include "tile/Conversion/Passes.h"
#include "tile/Dialect/TileGPU/Transforms/Passes.h"
#include "tile/Pipeline/Pipeline.h"
#include "tile/Version.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::tile::registerTileDialects(registry);

  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerInlinerPass();
  mlir::registerSymbolDCEPass();
  mlir::tile::registerTileConversionPasses();
  mlir::tilegpu::registerTileGPUPasses();
  mlir::tile::registerTileToLLVMPipeline();
  mlir::registerConversionPasses();
  llvm::cl::AddExtraVersionPrinter(
      [](llvm::raw_ostream &os) { os << "Tile version " TILE_VERSION "\n"; });

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Tile optimizer driver\n", registry));
}
