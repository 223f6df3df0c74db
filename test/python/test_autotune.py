"""tile.tools.autotune end to end on the interpreter: build the candidates
of one problem, check and time them with tile-run (reading its --report),
choose, and compile the manifest with the choice.  One candidate is broken
on purpose: it must be reported, with the outputs that failed, and never
chosen."""

import csv
import json
import os
import subprocess
import sys

import pytest

from conftest import REPO

BUILD = os.environ.get("TILE_BUILD_DIR", os.path.join(REPO, "build"))
PROBLEM = "attn_fwd_d64_noncausal"
VARIANT = "attn_fwd_fp16_d64_noncausal"


def autotune(*arguments):
    return subprocess.run([sys.executable, "-m", "tile.tools.autotune", *arguments],
                          capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.path.join(REPO, "python")})


@pytest.fixture(scope="module")
def candidates(tmp_path_factory):
    for tool in ("tile-compile", "tile-run"):
        if not os.access(os.path.join(BUILD, "bin", tool), os.X_OK):
            pytest.skip(f"{tool} is not built")
    folder = tmp_path_factory.mktemp("tuning")
    result = autotune("build", "--kernels", os.path.join(BUILD, "kernels"),
                      "--tools", os.path.join(BUILD, "bin"), "--out", str(folder),
                      "--problem", PROBLEM)
    assert result.returncode == 0, result.stderr
    return folder


def report(folder):
    with open(folder / "autotune" / "candidates.json") as f:
        return json.load(f)["problems"]


def test_build_compiles_every_candidate_beside_the_shipped_kernels(candidates):
    problems = report(candidates)
    assert list(problems) == [PROBLEM]
    names = [c["name"] for c in problems[PROBLEM]["candidates"]]
    assert names and all(n.startswith(VARIANT + "__") for n in names)
    for name in names:
        with open(candidates / f"{name}.json") as f:
            meta = json.load(f)
        assert meta["tuning"]["variant"] == VARIANT
        assert (candidates / f"{name}.mlir").is_file()
    # The shipped kernels are all there too: the backward's, say.
    assert (candidates / "attn_bwd_fp16_d64_causal.json").is_file()


def test_run_checks_times_and_chooses_and_the_build_takes_the_choice(candidates, tmp_path):
    problem = report(candidates)[PROBLEM]
    broken = problem["candidates"][0]["name"]
    # The candidate with log2(e) miscopied computes another function.
    module = candidates / f"{broken}.mlir"
    text = module.read_text()
    constant = "arith.constant 1.4426950408889634 : f32"
    assert constant in text
    module.write_text(text.replace(constant, "arith.constant 1.6 : f32"))

    out = tmp_path / "out"
    result = autotune("run", "--bundle", str(candidates), "--backend", "interp",
                      "--tile-run", os.path.join(BUILD, "bin", "tile-run"),
                      "--out", str(out), "--lengths", "64,128", "--tokens", "128",
                      "--heads", "2", "--check-lengths", "17,100", "--warmup", "0",
                      "--reps", "1", "--seed", "7")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{broken} is wrong and never chosen" in result.stdout
    with open(out / "autotune.json") as f:
        summary = json.load(f)
    rows = {r["name"]: r for r in summary["results"]}
    assert rows[broken]["status"].startswith("FAILED")
    # The verdict comes from tile-run's report: it names the wrong outputs.
    assert "O max_abs" in rows[broken]["status"] and "> bound" in rows[broken]["status"]
    # Checked (and timed) on the layout flash_attn_func takes, by default.
    assert summary["layout"] == "bnhd" and "--layout bnhd" in rows[broken]["status"]
    passing = [n for n, r in rows.items() if r["status"] == "ok"]
    assert VARIANT in passing and len(passing) == len(rows) - 1
    choice = summary["choices"][PROBLEM]
    assert choice["name"] in passing
    assert choice["score"] == max(rows[n]["score"] for n in passing)
    with open(out / "autotune.csv", newline="") as f:
        broken_rows = [row for row in csv.DictReader(f) if row["candidate"] == broken]
    assert len(broken_rows) == 1 and broken_rows[0]["status"].startswith("FAILED")
    assert broken_rows[0]["tflops"] == ""   # never timed

    compiled = tmp_path / "compiled"
    result = subprocess.run(
        [sys.executable, "-m", "tile.compile", "--manifest", "--tuning",
         str(out / "autotune.json"), "--out-dir", str(compiled), "--only", VARIANT,
         "--only", "attn_fwd_bf16_d64_noncausal", "--only", "attn_fwd_fp16_d64_causal"],
        capture_output=True, text=True, cwd=REPO,
        env={**os.environ, "PYTHONPATH": os.path.join(REPO, "python")})
    assert result.returncode == 0, result.stderr
    for name in (VARIANT, "attn_fwd_bf16_d64_noncausal"):   # both element types
        with open(compiled / f"{name}.json") as f:
            meta = json.load(f)
        for key, value in choice["overrides"].items():
            assert (meta["num_warps"] if key == "num_warps" else meta["constexprs"][key]) == value
        assert meta["tuned"]["overrides"] == choice["overrides"]
    with open(compiled / "attn_fwd_fp16_d64_causal.json") as f:
        assert "tuned" not in json.load(f)   # another problem: untouched


def test_spill_free_chooses_only_tiles_without_spills(candidates, tmp_path):
    if any(c.get("ptxas") is None for c in report(candidates)[PROBLEM]["candidates"]):
        pytest.skip("no ptxas: the build recorded no spills")
    result = autotune("run", "--bundle", str(candidates), "--backend", "interp",
                      "--tile-run", os.path.join(BUILD, "bin", "tile-run"),
                      "--out", str(tmp_path), "--lengths", "64", "--tokens", "64",
                      "--heads", "1", "--check-lengths", "17", "--warmup", "0",
                      "--reps", "1", "--spill-free", "--layout", "bhnd")
    assert result.returncode == 0, result.stderr
    assert "layout bhnd" in result.stdout
    with open(tmp_path / "autotune.json") as f:
        summary = json.load(f)
    assert summary["layout"] == "bhnd"
    choice = summary["choices"][PROBLEM]
    assert choice["ptxas"]["spill_stores"] == 0 and choice["ptxas"]["spill_loads"] == 0


@pytest.mark.parametrize("arguments, message", [
    (["build", "--out", "x", "--problem", "attn_fwd_d80_causal"], "no such problem"),
    (["run", "--bundle", "/nonexistent", "--tile-run", sys.executable],
     "make the folder with `python3 -m tile.tools.autotune build`"),
])
def test_errors_name_the_problem(arguments, message, tmp_path):
    result = autotune(*arguments)
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr


def test_compile_rejects_a_tuning_file_it_cannot_apply(tmp_path):
    bad = tmp_path / "autotune.json"
    bad.write_text(json.dumps({"choices": {"attn_fwd_d80_causal": {"overrides": {}}}}))
    result = subprocess.run(
        [sys.executable, "-m", "tile.compile", "--manifest", "--tuning", str(bad),
         "--out-dir", str(tmp_path / "k")], capture_output=True, text=True, cwd=REPO,
        env={**os.environ, "PYTHONPATH": os.path.join(REPO, "python")})
    assert result.returncode == 1
    assert "'attn_fwd_d80_causal' is no problem of the manifest" in result.stderr


def test_a_variant_bounded_by_length_is_a_problem_of_its_own():
    from tile.kernels import tuning
    from tile.kernels.manifest import BY_NAME, Variant
    from tile.tools import autotune as sweep

    variants = tuning.tunable_variants()
    keys = [tuning.problem(v) for v in variants]
    assert len(set(keys)) == len(keys)   # no choice meant for one lands on another
    general = BY_NAME["attn_fwd_fp16_d128_causal"]
    bounded = Variant("attn_fwd_fp16_d128_causal_n2048", "attention", "attn_fwd",
                      general.signature, dict(general.constexprs), 4, max_n_ctx=2048)
    assert tuning.problem(general) == "attn_fwd_d128_causal"
    assert tuning.problem(bounded) == "attn_fwd_d128_causal_n2048"
    # It is timed at the lengths it is picked for (its bound, if none is).
    lengths = type("Args", (), {"lengths": [1024, 4096, 16384]})()
    assert sweep.timed_lengths(lengths, {"max_n_ctx": 2048}) == [1024]
    assert sweep.timed_lengths(lengths, {"max_n_ctx": 512}) == [512]
    assert sweep.timed_lengths(lengths, {"max_n_ctx": None}) == [1024, 4096, 16384]
