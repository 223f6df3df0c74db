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

#include "tile/Dialect/Tile/IR/Tile.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
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

  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "Tile optimizer driver\n", registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputFilename, outputFilename, registry));
  // mlir-opt's own steps, with the input read first and checked for IR that
  // would crash MLIR's parser (mlir::tile::findParserHazard).
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (auto hazard = mlir::tile::findParserHazard(input->getBuffer())) {
    llvm::SourceMgr sourceMgr;
    const char *at = input->getBufferStart() + hazard->offset;
    sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
    sourceMgr.PrintMessage(llvm::SMLoc::getFromPointer(at),
                           llvm::SourceMgr::DK_Error, hazard->message);
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (failed(
          mlir::MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  output->keep();
  return 0;
}
