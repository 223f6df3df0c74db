"""The compiler driver: Python source to a bundle of compiled kernels.

The frontend (``compile_kernel``) writes each kernel as a module of tile
IR; one run of ``tile-compile`` (C++, tile/Pipeline/Compiler.h) then lowers
every module, in parallel, to its metadata file, PTX and cubin.  This module
finds that tool and runs it.
"""

import os
import shutil
import subprocess
import sys

from . import REPO_ROOT, compile_kernel
from .errors import BackendError, UsageError

TOOL = "tile-compile"
# Names the tile-compile to run, over the build folders and PATH.
TOOL_VARIABLE = "TILE_COMPILE"

# How far tile-compile goes (its --emit): a cubin where ptxas is found, else
# PTX; metadata alone (the interpreter's needs); PTX; PTX and a cubin.
EMITS = ("auto", "metadata", "ptx", "cubin")


def find_tile_compile():
    """$TILE_COMPILE, else the build folder's ($TILE_BUILD_DIR, then this
    checkout's build/), else the one on PATH."""
    override = os.environ.get(TOOL_VARIABLE)
    if override:
        if not os.access(override, os.X_OK):
            raise UsageError(f"${TOOL_VARIABLE} names {override}, which is no executable")
        return override
    builds = [os.environ.get("TILE_BUILD_DIR"), os.path.join(REPO_ROOT, "build")]
    for build in filter(None, builds):
        candidate = os.path.join(build, "bin", TOOL)
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which(TOOL)
    if found:
        return found
    raise UsageError(f"{TOOL} was not found (build it with ./dev.sh build, or name it with "
                     f"${TOOL_VARIABLE}); --emit ir writes the tile IR alone")


def run_tile_compile(modules, out_dir=None, option_overrides="", emit="auto", name=None):
    """Compiles the tile IR files `modules` with one run of tile-compile:
    <name>.json, .ptx and .cubin beside each module, or in `out_dir`.
    `option_overrides` (the pipeline's syntax) applies on top of each
    module's own options.  Its warnings go to stderr; a failure raises
    BackendError with its messages."""
    if emit not in EMITS:
        raise UsageError(f"emit must be one of {', '.join(EMITS)}, got {emit!r}")
    command = [find_tile_compile(), *modules, f"--emit={emit}"]
    if out_dir:
        command += ["--out-dir", out_dir]
    if option_overrides:
        command += ["--options", option_overrides]
    if name:
        command += ["--name", name]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise BackendError(result.stderr.rstrip() or
                           f"{TOOL} failed with exit status {result.returncode}")
    sys.stderr.write(result.stderr)


def write_module(text, path):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def compile_to_files(fn, signature, path, constexprs=None, options=None, entry=None,
                     metadata=None, emit="auto"):
    """Compiles kernel `fn` to `path` (its tile IR, NAME.mlir) and, unless
    `emit` is 'ir', to NAME.json, NAME.ptx and NAME.cubin beside it."""
    text = compile_kernel(fn, signature, constexprs, options=options, entry=entry,
                          metadata=metadata)
    write_module(text, path)
    if emit != "ir":
        run_tile_compile([path], emit=emit)
