"""scripts/fuzz.py: a bounded, reproducible mutation-fuzzing run of the IR
tools and of the frontend finds no crash, hang or traceback; and a finding
is recorded when there is one."""

import importlib.util
import os
import shutil

import pytest

_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "fuzz.py")
_spec = importlib.util.spec_from_file_location("tile_fuzz", _PATH)
fuzz = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fuzz)

needs_tile_opt = pytest.mark.skipif(
    not os.path.exists(os.path.join(fuzz.BUILD, "bin", "tile-opt")),
    reason="needs the build's tile-opt")


@needs_tile_opt
def test_ir_mutants_do_not_crash_the_tools(tmp_path):
    assert fuzz.main(["ir", "--runs", "60", "--seed", "7", "--out", str(tmp_path)]) == 0


def test_frontend_mutants_give_located_errors_only(tmp_path):
    assert fuzz.main(["frontend", "--runs", "60", "--seed", "7",
                      "--out", str(tmp_path)]) == 0


@needs_tile_opt
def test_a_crash_is_a_finding(tmp_path):
    # A tool that aborts stands in for tile-opt: the run reports it, keeps
    # the input and its command, and fails.
    bin_dir = tmp_path / "build" / "bin"
    bin_dir.mkdir(parents=True)
    fake = bin_dir / "tile-opt"
    fake.write_text("#!/bin/sh\necho 'LLVM ERROR: boom' >&2\nkill -ABRT $$\n")
    fake.chmod(0o755)
    shutil.copytree(os.path.join(fuzz.BUILD, "kernels"), tmp_path / "build" / "kernels",
                    ignore=shutil.ignore_patterns("*.ptx", "*.cubin", "*.json"))
    saved = fuzz.BUILD
    fuzz.BUILD = str(tmp_path / "build")
    try:
        status = fuzz.main(["ir", "--runs", "2", "--out", str(tmp_path / "found")])
    finally:
        fuzz.BUILD = saved
    assert status == 1
    report = (tmp_path / "found" / "ir-0.txt").read_text()
    assert report.startswith("killed by signal 6"), report
    assert (tmp_path / "found" / "ir-0.mlir").exists()
