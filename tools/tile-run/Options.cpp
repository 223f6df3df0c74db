//===- Options.cpp - tile-run's command-line options ----------------------===//

#include "Options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

using namespace tile;
using namespace tile::run;

bool tile::run::parseInteger(const std::string &text, int64_t *value) {
  if (text.empty())
    return false;
  errno = 0;
  char *end = nullptr;
  long long parsed = std::strtoll(text.c_str(), &end, 10);
  if (errno == ERANGE || *end != '\0')
    return false;
  *value = parsed;
  return true;
}

bool tile::run::parseFloat(const std::string &text, double *value) {
  if (text.empty())
    return false;
  char *end = nullptr;
  double parsed = std::strtod(text.c_str(), &end);
  if (*end != '\0')
    return false;
  *value = parsed;
  return true;
}

rt::Status Options::parse(const std::vector<std::string> &args,
                          const std::vector<OptionSpec> &specs) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) {
      positionals.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2), value;
    bool hasInlineValue = false;
    if (size_t equals = name.find('='); equals != std::string::npos) {
      value = name.substr(equals + 1);
      name.resize(equals);
      hasInlineValue = true;
    }
    const OptionSpec *spec = nullptr;
    for (const OptionSpec &candidate : specs)
      if (name == candidate.name)
        spec = &candidate;
    if (!spec)
      return rt::Status::error("unknown option '--" + name + "'");
    if (spec->takesValue && !hasInlineValue) {
      if (i + 1 >= args.size())
        return rt::Status::error("option '--" + name + "' needs a value");
      value = args[++i];
    } else if (!spec->takesValue && hasInlineValue) {
      return rt::Status::error("option '--" + name + "' takes no value");
    }
    values[name].push_back(value);
  }
  return rt::Status::success();
}

std::string Options::get(const std::string &name,
                         const std::string &fallback) const {
  auto found = values.find(name);
  return found == values.end() ? fallback : found->second.back();
}

std::vector<std::string> Options::getAll(const std::string &name) const {
  auto found = values.find(name);
  return found == values.end() ? std::vector<std::string>() : found->second;
}

rt::Status Options::getInt(const std::string &name, int64_t fallback,
                           int64_t minimum, int64_t maximum,
                           int64_t *value) const {
  if (!has(name)) {
    *value = fallback;
    return rt::Status::success();
  }
  std::string text = get(name);
  if (!parseInteger(text, value))
    return rt::Status::error("--" + name + " needs an integer, not '" + text +
                             "'");
  if (*value < minimum || *value > maximum)
    return rt::Status::error("--" + name + " must lie in [" +
                             std::to_string(minimum) + ", " +
                             std::to_string(maximum) + "], not " + text);
  return rt::Status::success();
}

rt::Status Options::getDouble(const std::string &name, double fallback,
                              double *value) const {
  if (!has(name)) {
    *value = fallback;
    return rt::Status::success();
  }
  std::string text = get(name);
  if (!parseFloat(text, value) || !std::isfinite(*value))
    return rt::Status::error("--" + name + " needs a finite number, not '" +
                             text + "'");
  return rt::Status::success();
}

std::string tile::run::describeOptions(const std::vector<OptionSpec> &specs) {
  std::string text;
  for (const OptionSpec &spec : specs) {
    std::string left =
        std::string("  --") + spec.name + (spec.takesValue ? " VALUE" : "");
    if (left.size() < 24)
      left.append(24 - left.size(), ' ');
    else
      left += "  ";
    text += left + spec.help + "\n";
  }
  return text;
}
