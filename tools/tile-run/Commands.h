//===- Commands.h - tile-run's subcommands ----------------------*- C++ -*-===//

#ifndef TILE_TOOLS_TILE_RUN_COMMANDS_H
#define TILE_TOOLS_TILE_RUN_COMMANDS_H

#include "tile/Runtime/Status.h"

#include <string>
#include <vector>

namespace tile::run {

/// Each subcommand gets the arguments after its name. It returns an error
/// for bad input or a failed run; `passed` is false when --check failed.
rt::Status runAttention(const std::vector<std::string> &args, bool *passed);
rt::Status runSoftmax(const std::vector<std::string> &args, bool *passed);
rt::Status runFlashPuzzle(const std::vector<std::string> &args, bool *passed);
rt::Status runGeneric(const std::vector<std::string> &args, bool *passed);
rt::Status runList(const std::vector<std::string> &args, bool *passed);

} // namespace tile::run

#endif // TILE_TOOLS_TILE_RUN_COMMANDS_H
