//===- Session.h - What every tile-run subcommand shares --------*- C++ -*-===//

#ifndef TILE_TOOLS_TILE_RUN_SESSION_H
#define TILE_TOOLS_TILE_RUN_SESSION_H

#include "Options.h"

#include "tile/Runtime/Backend.h"
#include "tile/Runtime/Bundle.h"
#include "tile/Runtime/Check.h"
#include "tile/Runtime/HostArray.h"
#include "tile/Runtime/Json.h"
#include "tile/Runtime/Launch.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tile::run {

/// A launch ready to go: the kernel, its arguments in parameter order
/// (checked), and its grid (from the kernel's launch spec).
struct PreparedLaunch {
  const rt::KernelInfo *info = nullptr;
  std::vector<rt::LaunchArg> args;
  rt::Grid grid;
};

/// Options of every subcommand that runs kernels.
std::vector<OptionSpec> commonOptions();

/// The bundle, the backend, and the kernels loaded into it.
class Session {
public:
  /// Reads --bundle (default: ../kernels next to the executable; unless
  /// `needBundle` is false) and --backend, and says on stdout which backend
  /// runs the kernels.
  rt::Status open(const Options &options, bool needBundle = true);

  const rt::Bundle &bundle() const { return kernels; }
  rt::Backend &backend() { return *device; }

  /// A device buffer holding a copy of `array`; `label` names it in errors.
  rt::Status upload(const rt::HostArray &array, const std::string &label,
                    rt::ScopedBuffer *buffer);
  /// Copies a device buffer back into `array` (which has its shape).
  rt::Status download(const rt::ScopedBuffer &buffer, rt::HostArray *array);

  /// Binds arguments by parameter name, checks them, and computes the grid
  /// from the kernel's launch spec (rt/Launch.h).
  rt::Status
  prepare(const rt::KernelInfo &info,
          const std::vector<std::pair<std::string, rt::LaunchArg>> &named,
          PreparedLaunch *launch);
  /// Loads the kernel (once) and launches it, waiting for the end.
  rt::Status launch(const PreparedLaunch &launch);

  /// Runs `work` --warmup times untimed, then --reps times timed; returns
  /// the median in milliseconds.
  rt::Status benchmark(const std::function<rt::Status()> &work,
                       double *medianMilliseconds);
  /// --warmup and --reps as benchmark() uses them.
  int64_t warmupRuns() const { return warmup; }
  int64_t timedRuns() const { return reps; }

private:
  rt::Bundle kernels;
  std::unique_ptr<rt::Backend> device;
  std::map<std::string, rt::KernelHandle> loaded;
  int64_t warmup = 0, reps = 1;
};

/// An integer constexpr the runner needs (a block size for the grid).
rt::Status requireConstexpr(const rt::KernelInfo &info, const std::string &name,
                            int64_t *value);

inline int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// A host array of random standard-normal values times `scale`, rounded to
/// the element type.
rt::HostArray randomArray(rt::DType dtype, std::vector<int64_t> shape,
                          uint64_t seed, double scale);

/// Prints the comparisons and returns whether all passed.
bool reportChecks(
    const std::vector<std::pair<std::string, rt::Comparison>> &results,
    const std::vector<rt::Tolerance> &tolerances);

/// A JSON number; null for NaN and the infinities, which JSON cannot write.
rt::JsonValue jsonNumber(double value);
rt::JsonValue jsonInteger(int64_t value);

/// The comparisons as JSON objects with the numbers reportChecks prints:
/// name, max_abs, max_rel, max_ref, atol, rtol, bound, non_finite, pass.
rt::JsonValue
checksToJson(const std::vector<std::pair<std::string, rt::Comparison>> &results,
             const std::vector<rt::Tolerance> &tolerances);

/// Writes the object `report` to `path` as JSON, one member a line (the
/// file --report names).
rt::Status writeReport(const std::string &path, const rt::JsonValue &report);

/// Says on stdout which kernel runs over which grid, with its constexprs.
void printLaunchPlan(const rt::KernelInfo &info, const rt::Grid &grid);
inline void printLaunchPlan(const PreparedLaunch &launch) {
  printLaunchPlan(*launch.info, launch.grid);
}

} // namespace tile::run

#endif // TILE_TOOLS_TILE_RUN_SESSION_H
