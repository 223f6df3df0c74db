//===- tile-run.cpp - Run and check compiled tile kernels -----------------===//
//
// tile-run runs the kernels of a bundle on a backend — the GPU through the
// CUDA driver, or the CPU interpreter — and checks them against float64
// references. It links only the C++ standard library and libdl, so that it
// runs on machines without LLVM or MLIR; the interpreter comes in through
// dlopen. See docs/interpreter.md.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "tile/Version.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace tile;

static const char kUsage[] =
    "usage: tile-run COMMAND [OPTIONS]\n"
    "\n"
    "commands:\n"
    "  attention     FlashAttention forward (--mode fwd) or backward "
    "(--mode bwd)\n"
    "  softmax       the softmax kernels (--variant 1|2|3|4)\n"
    "  flash-puzzle  the single-head FlashAttention forward of the puzzles\n"
    "  run           any kernel: scalars on the command line, buffers in "
    ".npy files\n"
    "  list          the kernel variants of a bundle\n"
    "  --version     print Tile's version\n"
    "\n"
    "`tile-run COMMAND --help` lists a command's options. With --check, the "
    "exit\nstatus is 1 when a result does not match the float64 reference.\n";

int main(int argc, char **argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") ||
      !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 1 : 0;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::puts("tile-run (Tile) " TILE_VERSION);
    return 0;
  }
  std::string command = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  using Runner = rt::Status (*)(const std::vector<std::string> &, bool *);
  const struct {
    const char *name;
    Runner run;
  } commands[] = {{"attention", run::runAttention},
                  {"softmax", run::runSoftmax},
                  {"flash-puzzle", run::runFlashPuzzle},
                  {"run", run::runGeneric},
                  {"list", run::runList}};
  for (const auto &entry : commands) {
    if (command != entry.name)
      continue;
    bool passed = true;
    rt::Status status = entry.run(args, &passed);
    std::fflush(stdout);
    if (!status.ok()) {
      std::fprintf(stderr, "tile-run: error: %s\n", status.message().c_str());
      return 1;
    }
    return passed ? 0 : 1;
  }
  std::fprintf(stderr, "tile-run: error: unknown command '%s'\n\n%s",
               command.c_str(), kUsage);
  return 1;
}
