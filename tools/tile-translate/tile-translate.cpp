//===- tile-translate.cpp - LLVM + NVVM dialect to LLVM IR, PTX, cubin ----===//
//
// Translates a module lowered by `tile-opt -tile-to-llvm` to LLVM IR,
// optimizes it, and emits PTX through LLVM's NVPTX backend; a cubin comes
// from the CUDA toolkit's ptxas when it is installed.
//
//===----------------------------------------------------------------------===//

#include "tile/Dialect/TileGPU/IR/TileGPU.h"
#include "tile/Target/LLVMIR/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"

using namespace llvm;

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

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
cl::opt<std::string> target("target", cl::desc("sm_80 or sm_90a"),
                            cl::init("sm_90a"));
cl::opt<bool> fpFusion(
    "fp-fusion",
    cl::desc("fuse floating-point multiplies and adds into fma (default on, "
             "as nvcc and Triton do)"),
    cl::init(true));
cl::opt<bool> distributeConstants(
    "distribute-disjoint-constants",
    cl::desc("move constants out of disjoint ors through shifts, masks, "
             "multiplies and adds, so registers share their per-thread "
             "index (default on)"),
    cl::init(true));
cl::opt<std::string>
    ptxasPath("ptxas",
              cl::desc("ptxas to use (default: PATH, then /usr/local/cuda)"),
              cl::init(""));

int fail(const Twine &message) {
  errs() << "tile-translate: error: " << message << "\n";
  return 1;
}

/// LLVM IR of the module, optimized for the NVPTX target.
FailureOr<std::unique_ptr<Module>> translate(mlir::ModuleOp module,
                                             LLVMContext &llvmContext,
                                             TargetMachine &machine) {
  std::unique_ptr<Module> llvmModule =
      mlir::translateModuleToLLVMIR(module, llvmContext);
  if (!llvmModule)
    return failure();
  llvmModule->setTargetTriple(machine.getTargetTriple());
  llvmModule->setDataLayout(machine.createDataLayout());

  LoopAnalysisManager lam;
  FunctionAnalysisManager fam;
  CGSCCAnalysisManager cgam;
  ModuleAnalysisManager mam;
  PassBuilder builder(&machine);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  if (distributeConstants)
    builder.registerPeepholeEPCallback(
        [](FunctionPassManager &passes, OptimizationLevel) {
          passes.addPass(tile::DistributeDisjointConstantsPass());
        });
  builder.buildPerModuleDefaultPipeline(OptimizationLevel::O3)
      .run(*llvmModule, mam);
  return llvmModule;
}

std::string emitPTX(Module &module, TargetMachine &machine) {
  std::string ptx;
  raw_string_ostream os(ptx);
  buffer_ostream stream(os);
  legacy::PassManager pm;
  machine.addPassesToEmitFile(pm, stream, nullptr,
                              CodeGenFileType::AssemblyFile);
  pm.run(module);
  return ptx;
}

std::optional<std::string> findPtxas() {
  if (!ptxasPath.empty())
    return ptxasPath.getValue();
  if (auto onPath = sys::findProgramByName("ptxas"))
    return *onPath;
  if (sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
    return std::string("/usr/local/cuda/bin/ptxas");
  return std::nullopt;
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv,
                              "Tile translator: LLVM + NVVM MLIR to LLVM "
                              "IR, PTX or cubin\n");
  // 32-bit shared-memory pointers: shared addresses fit in 32 bits, and
  // 64-bit ones double the registers every hoisted address takes.
  if (auto *shortPointers = static_cast<cl::opt<bool> *>(
          cl::getRegisteredOptions().lookup("nvptx-short-ptr")))
    if (shortPointers->getNumOccurrences() == 0)
      shortPointers->setValue(true);
  if (target != "sm_80" && target != "sm_90a")
    return fail("--target must be sm_80 or sm_90a, not '" + target + "'");

  mlir::DialectRegistry registry;
  registry.insert<mlir::LLVM::LLVMDialect, mlir::NVVM::NVVMDialect>();
  // Known only to say that such input must be lowered first.
  registry.insert<mlir::tile::TileDialect, mlir::tilegpu::TileGPUDialect,
                  mlir::func::FuncDialect, mlir::arith::ArithDialect,
                  mlir::math::MathDialect, mlir::scf::SCFDialect>();
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  mlir::registerNVVMDialectTranslation(registry);
  mlir::MLIRContext context(registry);

  std::string error;
  auto input = mlir::openInputFile(inputFilename, &error);
  if (!input)
    return fail(error);
  SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), SMLoc());
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;
  for (mlir::Operation &op : module->getBody()->getOperations())
    if (!isa<mlir::LLVM::LLVMDialect>(op.getDialect()))
      return fail("'" + op.getName().getStringRef() +
                  "' is not LLVM dialect: lower the module with `tile-opt "
                  "-tile-to-llvm` first");

  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();
  Triple triple("nvptx64-nvidia-cuda");
  const Target *nvptx = TargetRegistry::lookupTarget(triple, error);
  if (!nvptx)
    return fail(error);
  TargetOptions options;
  options.AllowFPOpFusion = fpFusion ? FPOpFusion::Fast : FPOpFusion::Strict;
  // PTX 8.1: the vector `red` of f32 that atomic adds lower to (sm_90).
  std::unique_ptr<TargetMachine> machine(nvptx->createTargetMachine(
      triple, target, "+ptx81", options, std::nullopt));

  LLVMContext llvmContext;
  auto llvmModule = translate(*module, llvmContext, *machine);
  if (failed(llvmModule))
    return fail("translation to LLVM IR failed");

  if (emit == Emit::Cubin) {
    auto ptxas = findPtxas();
    if (!ptxas)
      return fail("ptxas was not found (install the CUDA toolkit, put ptxas "
                  "on PATH or pass --ptxas); --emit=ptx needs no toolkit");
    if (outputFilename == "-")
      return fail("--emit=cubin writes a file: give -o");
    SmallString<128> ptxFile;
    if (sys::fs::createTemporaryFile("tile", "ptx", ptxFile))
      return fail("cannot create a temporary file");
    FileRemover remover(ptxFile);
    {
      std::error_code ec;
      raw_fd_ostream os(ptxFile, ec);
      if (ec)
        return fail(ec.message());
      os << emitPTX(**llvmModule, *machine);
    }
    std::string message;
    int rc = sys::ExecuteAndWait(
        *ptxas, {*ptxas, "-arch=" + target, "-o", outputFilename, ptxFile},
        std::nullopt, {}, 0, 0, &message);
    if (rc != 0)
      return fail("ptxas (" + *ptxas + ") failed" +
                  (message.empty() ? Twine() : Twine(": ") + message));
    return 0;
  }

  auto output = mlir::openOutputFile(outputFilename, &error);
  if (!output)
    return fail(error);
  if (emit == Emit::LLVM)
    (*llvmModule)->print(output->os(), nullptr);
  else
    output->os() << emitPTX(**llvmModule, *machine);
  output->keep();
  return 0;
}
