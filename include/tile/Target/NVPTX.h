//===- NVPTX.h - From the LLVM dialect to PTX and cubin ---------*- C++ -*-===//
//
// The LLVM half of a Tile compilation: a module lowered by the tile-to-llvm
// pipeline becomes LLVM IR optimized at O3 for the NVPTX target, then PTX
// through LLVM's NVPTX backend, then a cubin through the CUDA toolkit's
// ptxas when it is installed.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_TARGET_NVPTX_H
#define TILE_TARGET_NVPTX_H

#include "tile/Pipeline/Options.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

#include <memory>
#include <optional>
#include <string>

namespace mlir::tile {

/// Registers the NVPTX backend, once per process, with 32-bit shared-memory
/// pointers unless -nvptx-short-ptr was given on the command line.
void initializeNVPTXTarget();

/// The target `module` is compiled for: its tilegpu.target, else
/// `options.target`.
tilegpu::TargetAttr getTarget(ModuleOp module, const CompileOptions &options);

/// Registers the dialect translations `translateToLLVMIR` needs.
void registerNVPTXTranslations(DialectRegistry &registry);

/// Fails, naming the first offender, unless every op at the top of `module`
/// is of the LLVM dialect: the module went through tile-to-llvm.
LogicalResult verifyLoweredToLLVM(ModuleOp module);

/// The NVPTX target machine for `target`, with the code generation
/// `options` (fp-fusion).
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(tilegpu::TargetAttr target, const CompileOptions &options);

/// LLVM IR of a module lowered by tile-to-llvm, optimized at O3 for
/// `machine` (with Tile's own LLVM passes, as `options` says).
llvm::Expected<std::unique_ptr<llvm::Module>>
translateToLLVMIR(ModuleOp module, llvm::LLVMContext &context,
                  llvm::TargetMachine &machine, const CompileOptions &options);

/// PTX assembly of an optimized LLVM module.
std::string emitPTX(llvm::Module &module, llvm::TargetMachine &machine);

/// Makes an LLVM fatal error (the NVPTX backend refusing IR it cannot
/// select: f128, huge vectors, foreign intrinsics) end the process with
/// `<tool>: error: the LLVM NVPTX backend cannot compile <subject>: <why>`
/// and exit status 1 rather than a crash report. For the command-line
/// tools, before they translate anything.
void reportFatalBackendErrorsAsDiagnostics(llvm::StringRef tool);

/// Names what this thread translates (a kernel) in the message above while
/// it lives; "the module" otherwise.
class BackendSubject {
public:
  explicit BackendSubject(std::string subject);
  ~BackendSubject();

private:
  std::string previous;
};

/// The ptxas to use: `explicitPath` when given, else the one on PATH, else
/// /usr/local/cuda/bin/ptxas; none when neither exists.
std::optional<std::string> findPtxas(llvm::StringRef explicitPath = "");

/// Assembles `ptx` for `target` with `ptxas`: the cubin's bytes. A failure
/// carries what ptxas printed.
llvm::Expected<std::string> assembleCubin(llvm::StringRef ptx,
                                          tilegpu::TargetAttr target,
                                          llvm::StringRef ptxas);

} // namespace mlir::tile

#endif // TILE_TARGET_NVPTX_H
