//===- Launch.h - How a kernel is launched ----------------------*- C++ -*-===//
//
// The launch contract of a kernel family, declared once beside the kernel
// (`@tile.jit(launch=tile.Launch(...))`) and recorded by the compiler in the
// metadata as "launch": the grid as expressions of the kernel's integer
// parameters and constexprs, and the keys a caller chooses a variant by.
// Arguments are bound by parameter name and checked here, for tile-run and
// for the C ABI that Python launches through: nothing else knows a kernel's
// parameter order or its grid.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_RUNTIME_LAUNCH_H
#define TILE_RUNTIME_LAUNCH_H

#include "tile/Runtime/Json.h"
#include "tile/Runtime/Status.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tile::rt {

struct KernelInfo;
struct LaunchArg;
struct Grid;
struct TensorMapDesc;

/// One grid dimension of a launch spec: integers, names of the kernel's
/// integer parameters and constexprs, NUM_SMS (kNumSMsName), `+`, `-`, `*`,
/// `cdiv(a, b)` (the quotient rounded up), `min(a, b)`, `max(a, b)` and
/// parentheses; e.g. "cdiv(N_CTX, BLOCK_M)".
class GridExpr {
public:
  static Status parse(const std::string &text, GridExpr *expr);

  const std::string &text() const { return source; }
  /// The names the expression reads, each once.
  const std::vector<std::string> &names() const { return referenced; }

  /// Its value, with `lookup` giving each name's (none: unknown name).
  using Lookup = std::function<std::optional<int64_t>(const std::string &)>;
  Status evaluate(const Lookup &lookup, int64_t *value) const;

  /// One step of the postfix program the expression compiles to.
  struct Step {
    enum class Kind { Constant, Name, Add, Sub, Mul, CeilDiv, Min, Max } kind;
    int64_t constant = 0;
    std::string name;
  };

private:
  std::vector<Step> program;
  std::string source;
  std::vector<std::string> referenced;
};

/// The name by which a grid expression reads the multiprocessor count of
/// the device it launches on: a persistent kernel's grid,
/// "min(cdiv(N_CTX, BLOCK_M) * H, NUM_SMS)". A kernel parameter or
/// constexpr of that name takes precedence.
inline constexpr const char *kNumSMsName = "NUM_SMS";

/// How a kernel is launched: the "launch" object of its metadata.
struct LaunchSpec {
  /// One to three dimensions (x, y, z); the rest are 1.
  std::vector<GridExpr> grid;
  /// The constexprs a caller chooses among a family's variants by (besides
  /// the element type of the kernel's first pointer parameter).
  std::vector<std::string> keys;
  /// The integer parameter a variant's "max_n_ctx" bounds; empty if none.
  std::string length;
};

/// Parses a metadata "launch" object.
Status parseLaunchSpec(const JsonValue &json, LaunchSpec *spec);

/// Checks `info.launch` against the kernel: grid names are integer
/// parameters, integer constexprs or NUM_SMS, keys are constexprs, the
/// length an integer parameter.
Status verifyLaunchSpec(const KernelInfo &info);

/// A launch grid within the hardware's limits (x below 2^31, y and z at
/// most 65535, each at least 1).
Status makeGrid(int64_t x, int64_t y, int64_t z, Grid *grid);

/// The kernel's arguments in its parameter order, from values by name; an
/// error names a missing or unknown one.
Status
bindArguments(const KernelInfo &info,
              const std::vector<std::pair<std::string, LaunchArg>> &named,
              std::vector<LaunchArg> *ordered);

/// Whether a pointer argument is a device address (checked against the
/// alignment the kernel was compiled for) or a backend's buffer handle.
enum class PointerKind { Address, Handle };

/// Checks arguments in parameter order: their number, each one's kind and
/// element type against its parameter, the range of the integer types, and
/// the divisibility the kernel was compiled for (of an integer's value, of
/// a pointer's address); with device addresses, also the TMA descriptors the
/// kernel takes (computeTensorMapDesc), so that a launch that would fail to
/// encode one is refused as a bad request. An error names the parameter or
/// the tensor map.
Status checkArguments(const KernelInfo &info,
                      const std::vector<LaunchArg> &args, PointerKind pointers);

/// The grid of a launch, from the kernel's launch spec and its arguments;
/// `numSMs`, the device's multiprocessor count, for a spec that names
/// NUM_SMS (an error names what is missing when it is not given).
Status computeGrid(const KernelInfo &info, const std::vector<LaunchArg> &args,
                   std::optional<int64_t> numSMs, Grid *grid);

/// The TMA descriptor of the kernel's tensor map `index` (info.tensorMaps)
/// for a launch with `args` (checked, in parameter order): its expressions
/// evaluated, strides in bytes, the base argument's address, the runtime's
/// choices (OOB fill zero, L2 promotion 128 bytes, element strides 1), and
/// validated (validateTensorMap); needs no driver. An error names the tensor
/// map ("attn_fwd: tensor map 0 (base Q): ...").
Status computeTensorMapDesc(const KernelInfo &info, size_t index,
                            const std::vector<LaunchArg> &args,
                            TensorMapDesc *desc);

} // namespace tile::rt

#endif // TILE_RUNTIME_LAUNCH_H
