//===- Options.h - tile-run's command-line options --------------*- C++ -*-===//

#ifndef TILE_TOOLS_TILE_RUN_OPTIONS_H
#define TILE_TOOLS_TILE_RUN_OPTIONS_H

#include "tile/Runtime/Status.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tile::run {

struct OptionSpec {
  const char *name; ///< Without the leading "--".
  bool takesValue;
  const char *help;
};

/// Options of one subcommand: `--name value`, `--name=value` or `--flag`;
/// everything else is positional. Unknown options are errors.
class Options {
public:
  rt::Status parse(const std::vector<std::string> &args,
                   const std::vector<OptionSpec> &specs);

  bool has(const std::string &name) const { return values.count(name) != 0; }
  /// The last value given to a repeatable option, or `fallback`.
  std::string get(const std::string &name,
                  const std::string &fallback = "") const;
  /// Every value given to a repeatable option, in order.
  std::vector<std::string> getAll(const std::string &name) const;
  const std::vector<std::string> &positional() const { return positionals; }

  /// An integer option in [minimum, maximum]; `fallback` when absent.
  rt::Status getInt(const std::string &name, int64_t fallback, int64_t minimum,
                    int64_t maximum, int64_t *value) const;
  rt::Status getDouble(const std::string &name, double fallback,
                       double *value) const;

private:
  std::map<std::string, std::vector<std::string>> values;
  std::vector<std::string> positionals;
};

/// Parses a whole decimal integer ("12", "-3"); false on anything else.
bool parseInteger(const std::string &text, int64_t *value);
/// Parses a float ("0.125", "1e-3", "nan", "-inf").
bool parseFloat(const std::string &text, double *value);

/// "  --name VALUE   help" lines.
std::string describeOptions(const std::vector<OptionSpec> &specs);

} // namespace tile::run

#endif // TILE_TOOLS_TILE_RUN_OPTIONS_H
