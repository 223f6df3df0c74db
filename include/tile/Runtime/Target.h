//===- Target.h - Which GPU code runs on which device -----------*- C++ -*-===//
//
// A kernel's metadata names the architecture its GPU code was compiled for
// ("gpu.target": "sm_90a", "sm_80"). These rules say where such code runs
// and, when a bundle holds one variant for several architectures, which one
// a device takes: the runtimes load by the first and select by the second.
//
//===----------------------------------------------------------------------===//

#ifndef TILE_RUNTIME_TARGET_H
#define TILE_RUNTIME_TARGET_H

#include <optional>
#include <string>

namespace tile::rt {

/// A compute capability, major.minor (9.0 for an H100, 8.0 for an A100).
struct ComputeCapability {
  int major = 0;
  int minor = 0;
};

/// A GPU target as the metadata spells it: "sm_" major minor, and "a" for
/// an architecture-specific one (wgmma and setmaxnreg need sm_90a).
struct GpuTarget {
  ComputeCapability capability;
  bool specific = false;

  /// "sm_90a" -> {9.0, specific}; none for another spelling.
  static std::optional<GpuTarget> parse(const std::string &text);

  /// Whether this code runs on `device`: an architecture-specific target
  /// only on its own capability; a cubin on its major and later minors;
  /// PTX, which the driver compiles, on its capability and later ones.
  bool runsOn(ComputeCapability device, bool cubin) const;
};

/// Which target's variant the runtimes take when a bundle holds one for
/// several: the device's, else the best its driver compiles; TILE_TARGET
/// (an environment variable: "sm_80", say) takes that target's alone, to
/// run the sm_80 kernels on a newer GPU.
struct TargetChoice {
  /// The device the kernels will run on; none for the interpreter.
  std::optional<ComputeCapability> device;
  /// Only variants of this target ("sm_80"); empty: any.
  std::string required;

  /// For `device`, with `required` from TILE_TARGET.
  static TargetChoice forDevice(std::optional<ComputeCapability> device);

  /// Whether a variant for `target` (its metadata's spelling; empty for a
  /// kernel with no GPU code) may be chosen.
  bool admits(const std::string &target) const;
  /// Among admitted targets, a higher rank is preferred: on the device, its
  /// own architecture-specific target first, then newer ones; without a
  /// device, the newest.
  int rank(const std::string &target) const;
};

} // namespace tile::rt

#endif // TILE_RUNTIME_TARGET_H
