//===- NVPTX.cpp - From the LLVM dialect to PTX and cubin -----------------===//

#include "tile/Target/NVPTX.h"

#include "tile/Target/LLVMIR/Transforms.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/LegacyPassManager.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Signals.h"
#include "llvm/TargetParser/Triple.h"

#include <cstdlib>
#include <mutex>

using namespace mlir;

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

static constexpr llvm::StringLiteral kTriple = "nvptx64-nvidia-cuda";

void mlir::tile::initializeNVPTXTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    // 32-bit shared-memory pointers: shared addresses fit in 32 bits, and
    // 64-bit ones double the registers every hoisted address takes.
    if (auto *shortPointers = static_cast<llvm::cl::opt<bool> *>(
            llvm::cl::getRegisteredOptions().lookup("nvptx-short-ptr")))
      if (shortPointers->getNumOccurrences() == 0)
        shortPointers->setValue(true);
  });
}

tilegpu::TargetAttr mlir::tile::getTarget(ModuleOp module,
                                          const CompileOptions &options) {
  if (tilegpu::TargetAttr target = tilegpu::getTarget(module))
    return target;
  MLIRContext *context = module.getContext();
  context->getOrLoadDialect<tilegpu::TileGPUDialect>();
  return tilegpu::TargetAttr::get(context, options.target);
}

void mlir::tile::registerNVPTXTranslations(DialectRegistry &registry) {
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}

LogicalResult mlir::tile::verifyLoweredToLLVM(ModuleOp module) {
  for (Operation &op : module.getBody()->getOperations())
    if (!isa<LLVM::LLVMDialect>(op.getDialect()))
      return op.emitError()
             << "'" << op.getName()
             << "' is not LLVM dialect: lower the module with `tile-opt "
                "-tile-to-llvm` first";
  return success();
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
mlir::tile::createTargetMachine(tilegpu::TargetAttr target,
                                const CompileOptions &options) {
  initializeNVPTXTarget();
  llvm::Triple triple(kTriple);
  std::string error;
  const llvm::Target *nvptx = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!nvptx)
    return llvm::createStringError(error);
  llvm::TargetOptions targetOptions;
  targetOptions.AllowFPOpFusion =
      options.fpFusion ? llvm::FPOpFusion::Fast : llvm::FPOpFusion::Strict;
  return std::unique_ptr<llvm::TargetMachine>(nvptx->createTargetMachine(
      triple, target.getChip(), target.getPtxFeatures(), targetOptions,
      std::nullopt));
}

llvm::Expected<std::unique_ptr<llvm::Module>>
mlir::tile::translateToLLVMIR(ModuleOp module, llvm::LLVMContext &context,
                              llvm::TargetMachine &machine,
                              const CompileOptions &options) {
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(module, context);
  if (!llvmModule)
    return llvm::createStringError("translation to LLVM IR failed");
  llvmModule->setTargetTriple(machine.getTargetTriple());
  llvmModule->setDataLayout(machine.createDataLayout());

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  if (options.distributeDisjointConstants)
    builder.registerPeepholeEPCallback(
        [](llvm::FunctionPassManager &passes, llvm::OptimizationLevel) {
          passes.addPass(::tile::DistributeDisjointConstantsPass());
        });
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
      .run(*llvmModule, mam);
  return llvmModule;
}

namespace {
std::string fatalErrorTool = "tile";
thread_local std::string backendSubject;

[[noreturn]] void reportFatalBackendError(void *, const char *reason, bool) {
  llvm::errs() << fatalErrorTool
               << ": error: the LLVM NVPTX backend cannot compile "
               << (backendSubject.empty() ? "the module" : backendSubject)
               << ": " << reason << "\n";
  // Files set to be removed on a signal (partial outputs) go, as they would
  // on the abort this replaces; _Exit leaves other threads' state alone.
  llvm::sys::RunInterruptHandlers();
  std::_Exit(1);
}
} // namespace

void mlir::tile::reportFatalBackendErrorsAsDiagnostics(llvm::StringRef tool) {
  fatalErrorTool = tool.str();
  llvm::install_fatal_error_handler(reportFatalBackendError);
}

mlir::tile::BackendSubject::BackendSubject(std::string subject)
    : previous(std::exchange(backendSubject, std::move(subject))) {}

mlir::tile::BackendSubject::~BackendSubject() {
  backendSubject = std::move(previous);
}

std::string mlir::tile::emitPTX(llvm::Module &module,
                                llvm::TargetMachine &machine) {
  std::string ptx;
  llvm::raw_string_ostream os(ptx);
  llvm::buffer_ostream stream(os);
  llvm::legacy::PassManager pm;
  machine.addPassesToEmitFile(pm, stream, nullptr,
                              llvm::CodeGenFileType::AssemblyFile);
  pm.run(module);
  return ptx;
}

std::optional<std::string> mlir::tile::findPtxas(llvm::StringRef explicitPath) {
  if (!explicitPath.empty())
    return explicitPath.str();
  if (auto onPath = llvm::sys::findProgramByName("ptxas"))
    return *onPath;
  if (llvm::sys::fs::can_execute("/usr/local/cuda/bin/ptxas"))
    return std::string("/usr/local/cuda/bin/ptxas");
  return std::nullopt;
}

llvm::Expected<std::string>
mlir::tile::assembleCubin(llvm::StringRef ptx, tilegpu::TargetAttr target,
                          llvm::StringRef ptxas) {
  llvm::SmallString<128> ptxFile, cubinFile, logFile;
  for (auto [path, suffix] :
       {std::pair(&ptxFile, "ptx"), std::pair(&cubinFile, "cubin"),
        std::pair(&logFile, "log")})
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("tile", suffix, *path))
      return llvm::createStringError(ec, "cannot create a temporary file");
  llvm::FileRemover removePtx(ptxFile), removeCubin(cubinFile),
      removeLog(logFile);
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(ptxFile, ec);
    if (ec)
      return llvm::createStringError(ec, "cannot write " + ptxFile);
    os << ptx;
  }
  std::string chip = ("-arch=" + target.getChip()).str();
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, logFile.str(),
                                                logFile.str()};
  std::string message;
  // -v: ptxas reports, among its info lines, where it had to serialise
  // wgmma or waited for it where the code did not (C7509-C7520).
  int rc = llvm::sys::ExecuteAndWait(
      ptxas, {ptxas, chip, "-v", "-o", cubinFile, ptxFile}, std::nullopt,
      redirects, 0, 0, &message);
  auto log = llvm::MemoryBuffer::getFile(logFile);
  std::string printed =
      log ? llvm::StringRef((*log)->getBuffer()).trim().str() : "";
  if (rc != 0)
    return llvm::createStringError(
        "ptxas (" + ptxas.str() + ") failed" +
        (message.empty() ? std::string() : ": " + message) +
        (printed.empty() ? std::string() : ":\n" + printed));
  // A wgmma ptxas waits for, or fences, where the code did not: the
  // warpgroup MMA no longer overlaps anything. A bug in the Hopper
  // lowering, reported as one.
  llvm::SmallVector<llvm::StringRef> serialised;
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(printed).split(lines, '\n');
  for (llvm::StringRef line : lines)
    for (int code = 7509; code <= 7520; ++code)
      if (line.contains(("(C" + llvm::Twine(code) + ")").str()))
        serialised.push_back(line.trim());
  if (!serialised.empty())
    return llvm::createStringError(
        "ptxas serialised warpgroup MMA (a Hopper lowering bug):\n" +
        llvm::join(serialised, "\n"));
  auto cubin = llvm::MemoryBuffer::getFile(cubinFile, /*IsText=*/false);
  if (!cubin)
    return llvm::createStringError(cubin.getError(),
                                   "cannot read ptxas's output");
  return (*cubin)->getBuffer().str();
}
