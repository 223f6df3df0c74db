"""Shared setup of the tests: find tile-opt, compile helpers.

`tile` is imported from this checkout's python/ (pyproject.toml's
[tool.pytest.ini_options] pythonpath), whichever copy the interpreter has
installed; pytest puts this folder on the path for the helper modules."""

import os
import shutil
import subprocess
import tempfile

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON_DIR = os.path.join(REPO, "python")

# The compiled-kernel cache of these tests' processes (and the tile.compile
# processes they start): their own, not the user's.
os.environ["TILE_CACHE_DIR"] = tempfile.mkdtemp(prefix="tile-test-cache-")


def find_tool(name, variable):
    """$variable, else the build folder's `name`, else the one on PATH."""
    candidates = [os.environ.get(variable),
                  os.path.join(os.environ.get("TILE_BUILD_DIR", os.path.join(REPO, "build")),
                               "bin", name),
                  shutil.which(name)]
    for path in candidates:
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def find_tile_opt():
    return find_tool("tile-opt", "TILE_OPT")


@pytest.fixture(scope="session")
def tile_opt():
    path = find_tile_opt()
    if path is None:
        pytest.skip("tile-opt not found: build it (build/bin/tile-opt) or set TILE_OPT")
    return path


@pytest.fixture(scope="session")
def tile_compile():
    """The tile-compile the CLI tests run (python3 -m tile.compile needs it
    for everything past the tile IR)."""
    path = find_tool("tile-compile", "TILE_COMPILE")
    if path is None:
        pytest.skip("tile-compile not found: build it (build/bin/tile-compile) or set "
                    "TILE_COMPILE")
    return path


@pytest.fixture(scope="session")
def verify(tile_opt):
    """Runs IR text through tile-opt (parse + verify) and returns its output."""
    def run(text, *flags):
        result = subprocess.run([tile_opt, *flags, "-"], input=text, capture_output=True,
                                text=True)
        assert result.returncode == 0, f"tile-opt rejected the IR:\n{result.stderr}\n{text}"
        return result.stdout
    return run


@pytest.fixture(scope="session")
def tile_run():
    path = find_tool("tile-run", "TILE_RUN")
    if path is None:
        pytest.skip("tile-run not found: build it (build/bin/tile-run) or set TILE_RUN")
    return path


@pytest.fixture
def launcher_tools(tile_compile, tile_run, monkeypatch):
    """kernel[grid](...) (tile/launcher.py) finds the tools the tests found,
    and runs CUDA tensors on the GPU unless a test asks otherwise. Modules
    that launch kernels use it: pytestmark = pytest.mark.usefixtures(...)."""
    monkeypatch.setenv("TILE_COMPILE", tile_compile)
    monkeypatch.setenv("TILE_RUN", tile_run)
    monkeypatch.delenv("TILE_INTERPRET", raising=False)


@pytest.fixture
def run_on_interpreter(tmp_path, tile_run):
    """Runs a compiled kernel (its metadata .json) with tile-run run
    --backend interp: numpy arrays are its buffers, read back in place after
    the run; other values are passed as written. Returns tile-run's output."""
    def run(metadata, args, grid=None):
        import numpy as np
        command = [tile_run, "run", str(metadata), "--backend", "interp"]
        if grid is not None:
            command += ["--grid", ",".join(map(str, grid))]
        buffers = {}
        for name, value in args.items():
            if isinstance(value, np.ndarray):
                path = tmp_path / f"{name}.npy"
                np.save(path, value)
                buffers[name] = (value, tmp_path / f"{name}.out.npy")
                command += [f"{name}={path}", "--out", f"{name}={buffers[name][1]}"]
            else:
                command.append(f"{name}={value}")
        result = subprocess.run(command, capture_output=True, text=True)
        assert result.returncode == 0, result.stdout + result.stderr
        for array, path in buffers.values():
            array[...] = np.load(path).reshape(array.shape)
        return result.stdout
    return run


def strip_locs(text):
    """``text`` without its " loc(...)" locations, however nested (an inlined
    helper's are callsites of callsites)."""
    out, i = [], 0
    while (start := text.find(" loc(", i)) != -1:
        out.append(text[i:start])
        depth, j = 0, start + 4
        while j < len(text):
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            j += 1
            if depth == 0:
                break
        i = j
    out.append(text[i:])
    return "".join(out)


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "gpu: needs a CUDA device and the compiled kernels; skipped without "
        "them (test/gpu/run.sh api runs these on the GPU machine)")
