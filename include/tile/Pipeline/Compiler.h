//===- Compiler.h - Compiling one kernel, source to bundle ------*- C++ -*-===//
//
// The one driver of a compilation: a module of tile IR holding one kernel,
// as the Python frontend writes it, becomes the kernel's metadata, PTX and
// cubin, in one process. The metadata is written from the module itself:
// its parameters and constexprs, its options, the shared memory the lowering
// allotted, and what the frontend recorded for the runtimes (tile.metadata).
// docs/kernel-metadata.md describes the file.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_PIPELINE_COMPILER_H
#define TILE_PIPELINE_COMPILER_H

#include "tile/Pipeline/Options.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>

namespace mlir::tile {

/// How far a compilation goes.
enum class CompileStage { Metadata, PTX, Cubin };

struct CompileRequest {
  /// The kernel's name in the bundle: its files are <name>.json, .ptx, ...
  std::string name;
  /// Options on top of the module's own (tile.options), in the pipeline's
  /// syntax; for sweeps.
  std::string optionOverrides;
  CompileStage stage = CompileStage::Cubin;
  /// The ptxas that makes the cubin (CompileStage::Cubin).
  std::string ptxas;
};

/// Seconds each stage of a compilation took.
struct CompileTimes {
  double lowering = 0; ///< the tile-to-llvm pipeline
  double llvm = 0;     ///< translation to LLVM IR and O3
  double ptx = 0;      ///< NVPTX code generation
  double ptxas = 0;    ///< the cubin
};

struct CompiledKernel {
  /// The metadata file's contents (its schema_version is
  /// tile::rt::kMetadataSchemaVersion).
  llvm::json::Object metadata;
  /// Why the GPU lowering does not take the kernel yet (the metadata then
  /// has no GPU code); empty when it does.
  std::string unsupportedOnGPU;
  std::string ptx;   ///< Empty before CompileStage::PTX.
  std::string cubin; ///< Empty before CompileStage::Cubin.
  CompileTimes seconds;
};

/// The metadata as its file holds it: pretty-printed JSON, the compiler's
/// keys first in a fixed order (name, kernel, entry, source, params, ...),
/// then the frontend's.
std::string formatMetadata(const llvm::json::Object &metadata);

/// Compiles `module`, lowering it in place. Errors are reported to the
/// context's diagnostic handler. A kernel the GPU lowering reports as not
/// supported yet (tilegpu::kUnsupportedOnGPU) is no error: the result says
/// why and carries metadata alone, for the interpreter.
LogicalResult compileKernel(ModuleOp module, const CompileRequest &request,
                            CompiledKernel &result);

} // namespace mlir::tile

#endif // TILE_PIPELINE_COMPILER_H
