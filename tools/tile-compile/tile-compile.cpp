//===- tile-compile.cpp - Tile IR to a bundle of kernels ------------------===//
//
// Compiles modules of tile IR, one kernel each, as `python3 -m tile.compile`
// writes them, to <name>.json (the metadata), <name>.ptx and <name>.cubin,
// all in one process and in parallel (tile/Pipeline/Compiler.h).
//
//   tile-compile kernels/*.mlir                  beside each module
//   tile-compile a.mlir --out-dir DIR --options="num-stages=3"
//
//===----------------------------------------------------------------------===//

#include "tile/Pipeline/Compiler.h"
#include "tile/Pipeline/Pipeline.h"
#include "tile/Target/NVPTX.h"
#include "tile/Version.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"

#include <chrono>

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace llvm;
using mlir::tile::CompileStage;

namespace {

enum class Emit { Auto, Metadata, PTX, Cubin };

cl::list<std::string> inputs(cl::Positional, cl::desc("<kernel.mlir>..."));
cl::opt<std::string>
    outDir("out-dir",
           cl::desc("where the outputs go (default: beside each module)"),
           cl::init(""));
cl::opt<std::string> nameOption(
    "name",
    cl::desc("the kernel's name in the bundle (one module only; default: "
             "the module's file name without .mlir)"),
    cl::init(""));
cl::opt<std::string> optionOverrides(
    "options",
    cl::desc("compile options on top of each module's tile.options, in the "
             "tile-to-llvm pipeline's syntax (\"num-stages=3\")"),
    cl::init(""));
cl::opt<Emit> emit(
    "emit", cl::desc("how far to go"), cl::init(Emit::Auto),
    cl::values(
        clEnumValN(Emit::Auto, "auto",
                   "a cubin where ptxas is found, else PTX (the default)"),
        clEnumValN(Emit::Metadata, "metadata",
                   "the metadata alone: no GPU lowering (the interpreter)"),
        clEnumValN(Emit::PTX, "ptx", "metadata and PTX"),
        clEnumValN(Emit::Cubin, "cubin", "metadata, PTX and a cubin")));
cl::opt<std::string>
    ptxasPath("ptxas",
              cl::desc("ptxas to use (default: PATH, then /usr/local/cuda)"),
              cl::init(""));
cl::opt<unsigned> jobs("j",
                       cl::desc("kernels compiled at once (default: one "
                                "a hardware thread)"),
                       cl::init(0));
cl::opt<bool> timing(
    "timing",
    cl::desc("print each kernel's stage times, one JSON object a line, on "
             "stdout: parse, lowering (tile-to-llvm), llvm (O3), ptx, ptxas "
             "in milliseconds"),
    cl::init(false));
cl::opt<bool> printOptions(
    "print-default-options",
    cl::desc("print the default compile options, every one, and exit"),
    cl::init(false));

/// What compiling one module gave: its diagnostics and what was written.
struct Outcome {
  bool ok = false;
  std::string messages;
  std::string unsupported;
  double parseSeconds = 0;
  mlir::tile::CompileTimes seconds;
};

LogicalResult writeFile(StringRef path, StringRef bytes, std::string &error) {
  std::unique_ptr<ToolOutputFile> file = mlir::openOutputFile(path, &error);
  if (!file)
    return failure();
  file->os() << bytes;
  file->keep();
  return success();
}

Outcome compileOne(const mlir::DialectRegistry &registry, StringRef input,
                   StringRef directory, StringRef name, CompileStage stage,
                   StringRef ptxas) {
  Outcome outcome;
  raw_string_ostream messages(outcome.messages);
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  SourceMgr sourceMgr;
  std::string error;
  auto buffer = mlir::openInputFile(input, &error);
  if (!buffer) {
    messages << "tile-compile: error: " << error << "\n";
    return outcome;
  }
  sourceMgr.AddNewSourceBuffer(std::move(buffer), SMLoc());
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context, messages);
  if (failed(mlir::tile::rejectParserHazards(
          sourceMgr.getMemoryBuffer(1)->getBuffer(),
          sourceMgr.getMemoryBuffer(1)->getBufferIdentifier(), &context)))
    return outcome;
  auto start = std::chrono::steady_clock::now();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  outcome.parseSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (!module)
    return outcome;

  mlir::tile::CompileRequest request;
  request.name = name.str();
  request.optionOverrides = optionOverrides;
  request.stage = stage;
  request.ptxas = ptxas.str();
  mlir::tile::CompiledKernel kernel;
  if (failed(mlir::tile::compileKernel(*module, request, kernel)))
    return outcome;

  // Every output is written afresh: a PTX or cubin this compilation does not
  // produce must not stay beside the new metadata.
  SmallString<128> stem(directory);
  sys::path::append(stem, name);
  std::string json = mlir::tile::formatMetadata(kernel.metadata);
  for (auto [extension, bytes] :
       {std::pair<StringRef, StringRef>(".json", json),
        std::pair<StringRef, StringRef>(".ptx", kernel.ptx),
        std::pair<StringRef, StringRef>(".cubin", kernel.cubin)}) {
    std::string path = (stem + extension).str();
    if (bytes.empty()) {
      sys::fs::remove(path);
      continue;
    }
    if (failed(writeFile(path, bytes, error))) {
      messages << "tile-compile: error: " << error << "\n";
      return outcome;
    }
  }
  outcome.ok = true;
  outcome.unsupported = kernel.unsupportedOnGPU;
  outcome.seconds = kernel.seconds;
  return outcome;
}

int fail(const Twine &message) {
  errs() << "tile-compile: error: " << message << "\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  mlir::tile::initializeNVPTXTarget();
  mlir::tile::reportFatalBackendErrorsAsDiagnostics("tile-compile");
  cl::AddExtraVersionPrinter(
      [](raw_ostream &os) { os << "Tile version " TILE_VERSION "\n"; });
  cl::ParseCommandLineOptions(
      argc, argv,
      "Tile compiler: modules of tile IR to kernel metadata, PTX and cubin\n");
  if (printOptions) {
    outs() << mlir::tile::CompileOptions().str() << "\n";
    return 0;
  }
  if (inputs.empty())
    return fail("no input: give the tile IR modules to compile");
  if (!nameOption.empty() && inputs.size() != 1)
    return fail("--name names one kernel: give one module");
  mlir::tile::CompileOptions checked;
  std::string error;
  if (failed(mlir::tile::parseCompileOptions(optionOverrides, checked, error)))
    return fail("--options: " + error);
  if (!outDir.empty())
    if (std::error_code ec = sys::fs::create_directories(outDir))
      return fail("cannot create " + outDir + ": " + ec.message());

  CompileStage stage = CompileStage::Cubin;
  std::string ptxas;
  if (emit == Emit::Metadata) {
    stage = CompileStage::Metadata;
  } else if (emit == Emit::PTX) {
    stage = CompileStage::PTX;
  } else if (std::optional<std::string> found =
                 mlir::tile::findPtxas(ptxasPath)) {
    ptxas = *found;
  } else if (emit == Emit::Cubin || !ptxasPath.empty()) {
    return fail("ptxas was not found (install the CUDA toolkit, put ptxas "
                "on PATH or pass --ptxas); --emit=ptx needs no toolkit");
  } else {
    stage = CompileStage::PTX; // auto, without a toolkit
  }

  mlir::DialectRegistry registry;
  mlir::tile::registerTileDialects(registry);
  mlir::tile::registerNVPTXTranslations(registry);

  std::vector<Outcome> outcomes(inputs.size());
  {
    DefaultThreadPool pool(hardware_concurrency(jobs));
    for (size_t i = 0; i < inputs.size(); ++i) {
      StringRef input = inputs[i];
      std::string name = nameOption.empty() ? sys::path::stem(input).str()
                                            : std::string(nameOption);
      std::string directory = outDir.empty()
                                  ? sys::path::parent_path(input).str()
                                  : std::string(outDir);
      pool.async([&, i, input, name, directory] {
        outcomes[i] =
            compileOne(registry, input, directory, name, stage, ptxas);
      });
    }
    pool.wait();
  }

  unsigned failedCount = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Outcome &outcome = outcomes[i];
    errs() << outcome.messages;
    if (!outcome.ok) {
      ++failedCount;
      continue;
    }
    if (!outcome.unsupported.empty())
      errs() << "tile-compile: " << inputs[i]
             << ": no GPU code, the interpreter only: " << outcome.unsupported
             << "\n";
    if (timing)
      outs() << formatv("{{\"kernel\": \"{0}\", \"parse\": {1:f3}, "
                        "\"lowering\": {2:f3}, \"llvm\": {3:f3}, \"ptx\": "
                        "{4:f3}, \"ptxas\": {5:f3}}\n",
                        sys::path::stem(inputs[i]), 1e3 * outcome.parseSeconds,
                        1e3 * outcome.seconds.lowering,
                        1e3 * outcome.seconds.llvm, 1e3 * outcome.seconds.ptx,
                        1e3 * outcome.seconds.ptxas);
  }
  if (failedCount)
    return fail(Twine(failedCount) + " of " + Twine(inputs.size()) +
                " kernels failed to compile");
  return 0;
}
