"""The compiler driver: Python source to a bundle of compiled kernels.

The frontend (``compile_kernel``) writes each kernel as a module of tile
IR; one run of ``tile-compile`` (C++, tile/Pipeline/Compiler.h) then lowers
every module, in parallel, to its metadata file, PTX and cubin.  This module
finds that tool and runs it, and keeps what it wrote in a cache keyed by
the module's text and everything else the outputs depend on: compiling an
unchanged kernel again copies its files.
"""

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

from . import REPO_ROOT, compile_kernel
from .errors import BackendError, UsageError

TOOL = "tile-compile"
# Names the tile-compile to run, over the build folders and PATH.
TOOL_VARIABLE = "TILE_COMPILE"

# How far tile-compile goes (its --emit): a cubin where ptxas is found, else
# PTX; metadata alone (the interpreter's needs); PTX; PTX and a cubin.
EMITS = ("auto", "metadata", "ptx", "cubin")

# Where compiled kernels are cached: $TILE_CACHE_DIR ("off": no cache), else
# $XDG_CACHE_HOME/tile or ~/.cache/tile.
CACHE_VARIABLE = "TILE_CACHE_DIR"
OUTPUTS = (".json", ".ptx", ".cubin")


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


def cache_dir():
    """The kernel cache's folder, or None when caching is off."""
    chosen = os.environ.get(CACHE_VARIABLE)
    if chosen == "off":
        return None
    if chosen:
        return chosen
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                            ".cache")
    return os.path.join(base, "tile")


def _cache_key(tool, text, name, option_overrides, emit):
    """What a kernel's outputs depend on: its module, its name, the
    overrides, how far to go, the tool (path, size, time) and the ptxas a
    cubin would come from."""
    digest = hashlib.sha256()
    stat = os.stat(tool)
    ptxas = shutil.which("ptxas") or ""
    for part in (text, name, option_overrides, emit, tool, str(stat.st_size),
                 str(stat.st_mtime_ns), ptxas):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()


def _place(source_dir, name, destination):
    """Copies a kernel's outputs from `source_dir` to `destination`; an
    output the compilation made none of is removed there, as tile-compile
    does."""
    for extension in OUTPUTS:
        source = os.path.join(source_dir, name + extension)
        target = os.path.join(destination, name + extension)
        if os.path.exists(source):
            shutil.copyfile(source, target)
        elif os.path.exists(target):
            os.remove(target)


def run_tile_compile(modules, out_dir=None, option_overrides="", emit="auto", name=None):
    """Compiles the tile IR files `modules` with one run of tile-compile:
    <name>.json, .ptx and .cubin beside each module, or in `out_dir`.
    `option_overrides` (the pipeline's syntax) applies on top of each
    module's own options.  Kernels found in the cache (cache_dir) are
    copied from it instead.  tile-compile's warnings go to stderr; a failure
    raises BackendError with its messages."""
    if emit not in EMITS:
        raise UsageError(f"emit must be one of {', '.join(EMITS)}, got {emit!r}")
    if name and len(modules) != 1:
        raise UsageError("a name names one kernel: give one module")
    tool = find_tile_compile()
    cache = cache_dir()
    jobs, missed = [], []
    for module in modules:
        kernel = name or os.path.splitext(os.path.basename(module))[0]
        destination = out_dir or os.path.dirname(os.path.abspath(module))
        key = None
        if cache:
            with open(module) as f:
                key = _cache_key(tool, f.read(), kernel, option_overrides, emit)
            entry = os.path.join(cache, key[:2], key)
            if os.path.isfile(os.path.join(entry, kernel + ".json")):
                os.makedirs(destination, exist_ok=True)
                _place(entry, kernel, destination)
                continue
        jobs.append((module, kernel, destination, key))
        missed.append(module)
    if not missed:
        return
    command = [tool, *missed, f"--emit={emit}"]
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
    for _, kernel, destination, key in jobs:
        if key:
            _store(cache, key, kernel, destination)


def _store(cache, key, kernel, destination):
    """Puts a kernel's fresh outputs in the cache, whole or not at all."""
    entry = os.path.join(cache, key[:2], key)
    if os.path.isdir(entry):
        return
    try:
        os.makedirs(os.path.dirname(entry), exist_ok=True)
        staging = tempfile.mkdtemp(dir=os.path.dirname(entry))
        _place(destination, kernel, staging)
        os.rename(staging, entry)
    except OSError:
        pass   # a cache that cannot be written only costs the next build time


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
