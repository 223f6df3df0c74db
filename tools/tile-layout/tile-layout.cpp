//===- tile-layout.cpp - Draw which thread holds which element ------------===//
//
//   tile-layout '#tilegpu.blocked<...>' 16x16
//
// prints, for a 1-D or 2-D tile, a grid whose cell (i, j) names the thread
// (warp w, lane l, as the thread index 32w + l) and register holding that
// element, read from the layout's LinearLayout. Replicated elements show
// their canonical holder and a '+'.
//
//===----------------------------------------------------------------------===//

#include "tile/Dialect/TileGPU/IR/TileGPU.h"
#include "tile/Version.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tilegpu;

static llvm::cl::opt<std::string> layoutText(llvm::cl::Positional,
                                             llvm::cl::Required,
                                             llvm::cl::desc("<layout>"));
static llvm::cl::opt<std::string>
    shapeText(llvm::cl::Positional, llvm::cl::Required,
              llvm::cl::desc("<shape, e.g. 16x16>"));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::AddExtraVersionPrinter(
      [](llvm::raw_ostream &os) { os << "Tile version " TILE_VERSION "\n"; });
  llvm::cl::ParseCommandLineOptions(argc, argv, "Draws a tilegpu layout\n");
  MLIRContext context;
  context.loadDialect<TileGPUDialect>();
  auto layout = dyn_cast_if_present<LayoutEncodingAttrInterface>(
      parseAttribute(layoutText, &context));
  if (!layout) {
    llvm::errs() << "tile-layout: error: not a tilegpu layout: " << layoutText
                 << "\n";
    return 1;
  }
  SmallVector<int64_t> shape;
  for (StringRef dim : llvm::split(StringRef(shapeText), 'x')) {
    int64_t size;
    if (dim.getAsInteger(10, size) || size <= 0 || (size & (size - 1))) {
      llvm::errs() << "tile-layout: error: the shape is sizes that are powers "
                      "of two joined by 'x', not '"
                   << shapeText << "'\n";
      return 1;
    }
    shape.push_back(size);
  }
  if (shape.size() != layout.getRank() || shape.size() > 2) {
    llvm::errs() << "tile-layout: error: draws 1-D and 2-D tiles of the "
                    "layout's rank ("
                 << layout.getRank() << ")\n";
    return 1;
  }
  LinearLayout map = layout.toLinearLayout(shape);
  llvm::outs() << map << "\n";
  int64_t rows = shape.size() == 2 ? shape[0] : 1;
  int64_t cols = shape.back();
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      SmallVector<int64_t> coord = shape.size() == 2
                                       ? SmallVector<int64_t>{i, j}
                                       : SmallVector<int64_t>{j};
      auto index = map.locate(coord);
      if (!index) {
        llvm::outs() << "     -";
        continue;
      }
      int64_t thread = (*index)[2] * 32 + (*index)[1];
      bool replicated = map.getReplicationMask(HwDim::Lane) ||
                        map.getReplicationMask(HwDim::Warp);
      std::string cell = "T" + std::to_string(thread) + ":" +
                         std::to_string((*index)[0]) + (replicated ? "+" : "");
      llvm::outs() << llvm::right_justify(cell, 9);
    }
    llvm::outs() << "\n";
  }
  return 0;
}
