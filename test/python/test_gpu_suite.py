"""test/gpu/run.sh, the one entry point of the GPU tests, without a GPU: a
bundle whose tile-run and compute-sanitizer are stubs.  Every case of a
part is counted once, failures and skips included, and the run ends with
the CPU suite's summary line."""

import os
import shutil
import stat
import subprocess
import sys

import pytest

from conftest import REPO

STUB_TILE_RUN = """#!/usr/bin/env bash
case " $* " in
  *" --seq 1500 "*) echo FAIL; exit 1 ;;      # two checks fail (fp16, bf16)
  *" --seq 2500 "*) [ -n "${KILL_PART:-}" ] && kill -9 $PPID ;;
esac
exit 0
"""
# Runs what it is given, as memcheck does, after its four options.
STUB_SANITIZER = """#!/usr/bin/env bash
shift 4
"$@"
"""


def executable(path, text):
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def bundle(tmp_path):
    """A bundle with the GPU tests and the summary, and stubs for the GPU."""
    root = tmp_path / "bundle"
    shutil.copytree(os.path.join(REPO, "test", "gpu"), root / "test" / "gpu")
    (root / "scripts").mkdir()
    shutil.copy(os.path.join(REPO, "scripts", "summarize_tests.py"), root / "scripts")
    (root / "bin").mkdir()
    executable(root / "bin" / "tile-run", STUB_TILE_RUN)
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    executable(stubs / "compute-sanitizer", STUB_SANITIZER)
    return root, stubs


def run_suite(bundle, *arguments, **environment):
    root, stubs = bundle
    env = {**os.environ, "PATH": f"{stubs}:{os.environ['PATH']}", **environment}
    env.pop("OUT", None)
    return subprocess.run([str(root / "test" / "gpu" / "run.sh"), *arguments],
                          capture_output=True, text=True, env=env)


def test_every_check_is_counted_and_the_last_line_sums_them(bundle):
    result = run_suite(bundle, "attention")
    lines = result.stdout.strip().splitlines()
    # 234 attention checks, 6 of the puzzle, 6 under memcheck, 5 each under
    # racecheck and synccheck; N=1500 fails; the fp8 forward's check, which
    # needs PyTorch with CUDA, is skipped.
    assert lines[-1] == "tile: 254 passed, 2 failed, 1 skipped", result.stdout
    assert result.returncode == 1
    assert "FAIL fwd f16 d128 N=1500" in result.stdout
    root, _ = bundle
    assert (root / "results" / "junit" / "attention.xml").is_file()


def test_quick_runs_eight_checks(bundle):
    result = run_suite(bundle, "--quick", "attention")
    assert result.stdout.strip().splitlines()[-1] == "tile: 8 passed, 0 failed, 0 skipped"
    assert result.returncode == 0


def test_a_part_killed_before_its_report_counts_as_failed(bundle):
    result = run_suite(bundle, "attention", KILL_PART="1")
    assert result.stdout.strip().splitlines()[-1] == "tile: 0 passed, 1 failed, 0 skipped"
    assert result.returncode == 1


def test_ring_attention_is_skipped_without_two_gpus_and_says_so(bundle):
    result = run_suite(bundle, "ring")
    assert "ring attention: skipped" in result.stdout
    assert result.stdout.strip().splitlines()[-1] == "tile: 0 passed, 0 failed, 1 skipped"
    assert result.returncode == 1   # nothing passed


def test_tma_is_skipped_without_cuda_and_says_so(bundle, tmp_path):
    # A PyTorch that sees no GPU, whatever this machine has.
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text(
        "class cuda:\n    is_available = staticmethod(lambda: False)\n")
    result = run_suite(bundle, "tma", PYTHONPATH=str(tmp_path))
    assert "TMA descriptors: skipped, PyTorch with CUDA is needed" in result.stdout
    assert result.stdout.strip().splitlines()[-1] == "tile: 0 passed, 0 failed, 1 skipped"


def test_an_unknown_part_is_refused(bundle):
    result = run_suite(bundle, "bandwidth")
    assert result.returncode == 2
    assert "unknown part or option 'bandwidth'" in result.stdout


def test_python_checks_write_junit_the_summary_reads(tmp_path):
    sys.path.insert(0, os.path.join(REPO, "test", "gpu"))
    import junit
    sys.path.insert(0, os.path.join(REPO, "scripts"))
    import summarize_tests

    path = tmp_path / "check.xml"
    junit.write(str(path), "flash_attn_api", [
        ("fp16 d64 causal N=1 <B=2>", True, ""),
        ("bf16 d128 full N=17", False, "dq=1.2e-01 (limit 3.1e-02) & more")])
    assert summarize_tests.count(str(path)) == (1, 1, 0)
