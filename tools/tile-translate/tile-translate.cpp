//===- tile-translate.cpp - LLVM + NVVM dialect to LLVM IR, PTX, cubin ----===//
//
// Translates a module lowered by `tile-opt -tile-to-llvm` to LLVM IR,
// optimizes it, and emits PTX or a cubin (tile/Target/NVPTX.h). The target
// is the module's tilegpu.target.
//
//===----------------------------------------------------------------------===//

#include "tile/Dialect/Tile/IR/Tile.h"
#include "tile/Dialect/TileGPU/IR/TileGPU.h"
#include "tile/Target/NVPTX.h"
#include "tile/Version.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace llvm;

namespace {

enum class Emit { LLVM, PTX, Cubin };

cl::opt<std::string> inputFilename(cl::Positional, cl::desc("<input.mlir>"),
                                   cl::init("-"));
cl::opt<std::string> outputFilename("o", cl::desc("output file"),
                                    cl::value_desc("filename"), cl::init("-"));
cl::opt<Emit> emit("emit", cl::desc("what to produce"), cl::init(Emit::PTX),
                   cl::values(clEnumValN(Emit::LLVM, "llvm", "LLVM IR"),
                              clEnumValN(Emit::PTX, "ptx", "PTX assembly"),
                              clEnumValN(Emit::Cubin, "cubin",
                                         "a cubin, through ptxas")));
cl::opt<std::string> compileOptions(
    "options",
    cl::desc("compile options in the tile-to-llvm pipeline's syntax, e.g. "
             "\"fp-fusion=false\" (the target is the module's)"),
    cl::init(""));
cl::opt<std::string>
    ptxasPath("ptxas",
              cl::desc("ptxas to use (default: PATH, then /usr/local/cuda)"),
              cl::init(""));

int fail(const Twine &message) {
  errs() << "tile-translate: error: " << message << "\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  mlir::tile::initializeNVPTXTarget();
  mlir::tile::reportFatalBackendErrorsAsDiagnostics("tile-translate");
  cl::AddExtraVersionPrinter(
      [](raw_ostream &os) { os << "Tile version " TILE_VERSION "\n"; });
  cl::ParseCommandLineOptions(argc, argv,
                              "Tile translator: LLVM + NVVM MLIR to LLVM "
                              "IR, PTX or cubin\n");
  mlir::tile::CompileOptions options;
  std::string error;
  if (failed(mlir::tile::parseCompileOptions(compileOptions, options, error)))
    return fail("--options: " + error);

  mlir::DialectRegistry registry;
  registry.insert<mlir::LLVM::LLVMDialect, mlir::NVVM::NVVMDialect>();
  // Known only to say that such input must be lowered first.
  registry.insert<mlir::tile::TileDialect, mlir::tilegpu::TileGPUDialect,
                  mlir::func::FuncDialect, mlir::arith::ArithDialect,
                  mlir::math::MathDialect, mlir::scf::SCFDialect>();
  mlir::tile::registerNVPTXTranslations(registry);
  mlir::MLIRContext context(registry);

  auto input = mlir::openInputFile(inputFilename, &error);
  if (!input)
    return fail(error);
  SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), SMLoc());
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  if (failed(mlir::tile::rejectParserHazards(
          sourceMgr.getMemoryBuffer(1)->getBuffer(),
          sourceMgr.getMemoryBuffer(1)->getBufferIdentifier(), &context)))
    return 1;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module || failed(mlir::tile::verifyLoweredToLLVM(*module)))
    return 1;

  mlir::tilegpu::TargetAttr target = mlir::tile::getTarget(*module, options);
  auto machine = mlir::tile::createTargetMachine(target, options);
  if (!machine)
    return fail(toString(machine.takeError()));
  LLVMContext llvmContext;
  auto llvmModule =
      mlir::tile::translateToLLVMIR(*module, llvmContext, **machine, options);
  if (!llvmModule)
    return fail(toString(llvmModule.takeError()));

  std::string bytes;
  if (emit == Emit::Cubin) {
    auto ptxas = mlir::tile::findPtxas(ptxasPath);
    if (!ptxas)
      return fail("ptxas was not found (install the CUDA toolkit, put ptxas "
                  "on PATH or pass --ptxas); --emit=ptx needs no toolkit");
    if (outputFilename == "-")
      return fail("--emit=cubin writes a file: give -o");
    auto cubin = mlir::tile::assembleCubin(
        mlir::tile::emitPTX(**llvmModule, **machine), target, *ptxas);
    if (!cubin)
      return fail(toString(cubin.takeError()));
    bytes = std::move(*cubin);
  } else if (emit == Emit::PTX) {
    bytes = mlir::tile::emitPTX(**llvmModule, **machine);
  } else {
    raw_string_ostream os(bytes);
    (*llvmModule)->print(os, nullptr);
  }
  auto output = mlir::openOutputFile(outputFilename, &error);
  if (!output)
    return fail(error);
  output->os() << bytes;
  output->keep();
  return 0;
}
