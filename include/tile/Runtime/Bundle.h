//===- Bundle.h - Compiled kernels and their metadata -----------*- C++ -*-===//
//
// A bundle is a folder of compiled kernel variants: for each, a metadata file
// <variant>.json beside its code (<variant>.mlir for the interpreter; .ptx and
// .cubin for the GPU). The metadata names the kernel family, its entry point,
// its run-time parameters with Triton-style types and the constexpr values it
// was specialized for; the runner picks variants by these, never by name.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_RUNTIME_BUNDLE_H
#define TILE_RUNTIME_BUNDLE_H

#include "tile/Runtime/DType.h"
#include "tile/Runtime/Json.h"
#include "tile/Runtime/Launch.h"
#include "tile/Runtime/Status.h"
#include "tile/Runtime/Target.h"
#include "tile/Runtime/TensorMap.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tile::rt {

/// The layout of a kernel's metadata file (docs/kernel-metadata.md)
/// that tile-compile writes and the runtimes read: a reader refuses another.
constexpr int64_t kMetadataSchemaVersion = 2;

/// One run-time parameter: `*fp16` is a pointer to fp16, `i32` a scalar.
struct ParamInfo {
  std::string name;
  bool isPointer = false;
  DType dtype = DType::I32;
  /// The power of two the kernel was compiled to assume divides the argument
  /// (bytes for pointers): "divisibility" in the metadata, 1 when absent.
  int64_t divisibility = 1;

  /// The Triton spelling of the type, e.g. "*fp16".
  std::string typeString() const;
};

/// Parses a Triton-style parameter type ("*bf16", "fp32", "i64").
std::optional<ParamInfo> parseParamType(const std::string &type);

/// A TMA descriptor (CUtensorMap) the kernel takes as a hidden parameter:
/// one entry of the metadata's "gpu.tensormaps". The runtime encodes it at
/// each launch from the kernel's arguments (computeTensorMapDesc) and passes
/// it, 128 bytes by value, after the declared parameters.
struct TensorMapSpec {
  /// The pointer parameter whose address and element type the tensor has.
  int base = -1;
  /// The tensor's extent along each dimension, innermost first: the rank is
  /// their number (1 to kTensorMapMaxRank).
  std::vector<GridExpr> dims;
  /// The stride of dims 1..rank-1, in elements of the base's type.
  std::vector<GridExpr> strides;
  /// Elements copied at a time along each dimension, innermost first.
  std::vector<uint32_t> box;
  TensorMapSwizzle swizzle = TensorMapSwizzle::None;
};

struct KernelInfo {
  std::string name;   ///< The variant, e.g. attn_fwd_fp16_d64_causal.
  std::string kernel; ///< The family, e.g. attn_fwd.
  std::string entry;  ///< The function to launch.
  std::string source;
  int numWarps = 4;
  /// "gpu.threads": the block the kernel runs as (its warps, and a
  /// warp-specialized kernel's producer warps besides); 32 * numWarps
  /// where absent.
  int threads = 0;
  /// The block to launch: `threads`, else 32 * numWarps.
  int blockThreads() const { return threads ? threads : 32 * numWarps; }
  /// "max_n_ctx": the longest sequence this variant is the faster choice
  /// for (it is correct at any length); none for a general variant.
  std::optional<int64_t> maxNCtx;
  /// "tuning": {"variant": ...}: a block-size candidate of that shipped
  /// variant (python -m tile.tools.autotune), which runs only when named with
  /// --kernel; empty for a variant the runtimes may choose.
  std::string candidateOf;
  /// "gpu.target": the architecture of its GPU code ("sm_90a", "sm_80");
  /// empty for a kernel compiled for the interpreter only.
  std::string target;
  std::vector<ParamInfo> params;
  std::vector<std::pair<std::string, JsonValue>> constexprs;
  /// "launch": how the kernel is launched (its grid, its selection keys);
  /// none for a kernel compiled without one (a grid must then be given).
  std::optional<LaunchSpec> launch;
  /// "gpu.tensormaps": the kernel's hidden TMA descriptor parameters, in
  /// parameter order; empty when it takes none.
  std::vector<TensorMapSpec> tensorMaps;
  std::string metadataPath; ///< The .json file this came from.
  /// The whole metadata object, for what backends read beyond the fields
  /// above (the GPU's "gpu": {"ptx", "cubin", "shared_bytes", "target"}).
  JsonValue metadata;

  /// <dir>/<stem of the .json>.<extension>, e.g. the .mlir beside it.
  std::string companionPath(const std::string &extension) const;

  const JsonValue *constexprValue(const std::string &constexprName) const;
  /// An integer or boolean constexpr (true is 1).
  std::optional<int64_t> constexprInt(const std::string &constexprName) const;
  /// Index of the parameter named `paramName`, or -1.
  int paramIndex(const std::string &paramName) const;
  /// Whether `paramName` is a scalar integer parameter.
  bool isIntegerParam(const std::string &paramName) const;
  /// "HEAD_DIM=64 BLOCK_M=128 ..." for messages.
  std::string constexprSummary() const;
  /// "(Q: *fp16, sm_scale: fp32, ...)" for messages.
  std::string signatureSummary() const;
};

/// A kernel's GPU code records the constexprs it was compiled for in the
/// names of two one-byte globals: kConstexprsMarker, and
/// constexprsSymbol(info) of its metadata (the compiler's). The runtime looks
/// both up, so that metadata whose constexprs were changed is refused
/// (checkCompiledFor) while code without the marker loads unchecked.
inline constexpr const char *kConstexprsMarker = "tile_constexprs";

/// kConstexprsMarker, "_" and a 64-bit FNV-1a hash of the constexprs' names
/// and values, in name order.
std::string constexprsSymbol(const KernelInfo &info);

/// Parses metadata text; `path` is the file it came from.
Status parseKernelInfo(const std::string &text, const std::string &path,
                       KernelInfo *info);
Status loadKernelInfo(const std::string &path, KernelInfo *info);

class Bundle {
public:
  /// Reads every *.json in `directory` (sorted by name). Files that are not
  /// kernel metadata are skipped with a warning.
  static Status open(const std::string &directory, Bundle *bundle);

  const std::string &directory() const { return dir; }
  const std::vector<KernelInfo> &kernels() const { return all; }
  const std::vector<std::string> &warnings() const { return skipped; }

  const KernelInfo *findVariant(const std::string &name) const;

  /// The variant of `family` (tuning candidates excluded) whose first
  /// pointer parameter holds `elementType` (any, if empty) and whose
  /// constexprs equal `keys` (a boolean constexpr equals 0 or 1), of the
  /// target `target` prefers among those it admits; among several, the one
  /// for `length` (pickForSequenceLength). An error says what was asked and
  /// lists what the bundle has.
  Status select(const std::string &family, const std::string &elementType,
                const std::vector<std::pair<std::string, int64_t>> &keys,
                std::optional<int64_t> length, const TargetChoice &target,
                const KernelInfo **chosen) const;
  /// The variants of one kernel family that the runtimes choose among, in
  /// name order: tuning candidates run only when named (findVariant).
  std::vector<const KernelInfo *> family(const std::string &kernel) const;

private:
  std::string dir;
  std::vector<KernelInfo> all;
  std::vector<std::string> skipped;
};

/// Among `variants` (computing the same thing: one family, element type,
/// head dim and causality), the one for sequences of `seqLen` tokens: the
/// smallest maxNCtx that covers it, else one without a bound, else the one
/// with the largest bound. Null when `variants` is empty.
const KernelInfo *
pickForSequenceLength(const std::vector<const KernelInfo *> &variants,
                      int64_t seqLen);

/// The directory holding the running executable (from /proc/self/exe).
std::string executableDirectory();

/// The default bundle: ../kernels relative to the executable.
std::string defaultBundleDirectory();

} // namespace tile::rt

#endif // TILE_RUNTIME_BUNDLE_H
