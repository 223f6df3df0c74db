//===- Target.cpp - Which GPU code runs on which device -------------------===//

#include "tile/Runtime/Target.h"

#include <cstdlib>

using namespace tile::rt;

std::optional<GpuTarget> GpuTarget::parse(const std::string &text) {
  if (text.size() < 5 || text.compare(0, 3, "sm_") != 0)
    return std::nullopt;
  GpuTarget target;
  target.specific = text.back() == 'a';
  std::string digits =
      text.substr(3, text.size() - 3 - (target.specific ? 1 : 0));
  if (digits.size() < 2 || digits.size() > 4 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  target.capability = {std::stoi(digits.substr(0, digits.size() - 1)),
                       digits.back() - '0'};
  return target;
}

bool GpuTarget::runsOn(ComputeCapability device, bool cubin) const {
  const ComputeCapability &own = capability;
  if (specific)
    return device.major == own.major && device.minor == own.minor;
  if (cubin)
    return device.major == own.major && device.minor >= own.minor;
  return device.major > own.major ||
         (device.major == own.major && device.minor >= own.minor);
}

TargetChoice TargetChoice::forDevice(std::optional<ComputeCapability> device) {
  TargetChoice choice;
  choice.device = device;
  if (const char *required = std::getenv("TILE_TARGET"))
    choice.required = required;
  return choice;
}

bool TargetChoice::admits(const std::string &target) const {
  if (!required.empty())
    return target == required;
  std::optional<GpuTarget> parsed = GpuTarget::parse(target);
  // Code of an unknown target, or none (an interpreter-only kernel), is left
  // to the loader, which says why it cannot run.
  if (!parsed || !device)
    return true;
  // A cubin that cannot run is replaced by its PTX where it has one, so
  // PTX's rule decides.
  return parsed->runsOn(*device, /*cubin=*/parsed->specific);
}

int TargetChoice::rank(const std::string &target) const {
  std::optional<GpuTarget> parsed = GpuTarget::parse(target);
  if (!parsed)
    return 0;
  int version = 10 * parsed->capability.major + parsed->capability.minor;
  bool own =
      device && parsed->specific && parsed->runsOn(*device, /*cubin=*/true);
  return (own ? 10000 : 0) + 2 * version + (parsed->specific ? 1 : 0);
}
