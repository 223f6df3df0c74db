# -*- Python -*-
# lit configuration of the Tile test suite.

import os

import lit.formats
from lit.llvm import llvm_config

config.name = "Tile"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "unit"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tile_obj_root, "test")

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.add_tool_substitutions(
    ["tile-compile", "tile-opt", "tile-run", "tile-translate", "tile-layout"],
    [config.tile_tools_dir])

config.substitutions.append(("%tile_src_root", config.tile_src_root))
config.substitutions.append(("%tile_obj_root", config.tile_obj_root))

# The kernel variants the build compiles from python/tile/kernels.
config.substitutions.append(("%tile_kernels", config.tile_kernels_dir))

# PTX checks need the CUDA toolkit's ptxas; without it they are reported as
# UNSUPPORTED rather than silently passing.
import shutil
ptxas = shutil.which("ptxas") or (
    "/usr/local/cuda/bin/ptxas"
    if os.access("/usr/local/cuda/bin/ptxas", os.X_OK) else None)
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
