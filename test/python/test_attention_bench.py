"""The benchmark harness's bookkeeping, without a GPU: the implementations
of a shape run in alternating order over the passes, and a record's times
are the mean of its passes'; --softmax runs the variants tile-run softmax
runs, and counts bytes one way.  (The timing itself needs a GPU:
benchmarks/attention_bench.py on the device.)"""

import argparse
import os
import sys
import types

import pytest

from conftest import REPO

pytest.importorskip("torch")
# A script, not part of the package; the GPU bundle runs this file too.
sys.path.insert(0, os.path.join(REPO, "benchmarks"))
import attention_bench  # noqa: E402

SHAPE = (2, 1024, 4, 64)   # batch, seqlen, heads, head_dim


def fake_bench(calls, times, failing=()):
    """A bench_one that logs its calls and returns the next time of `times`
    for each implementation (ms, forward and backward alike)."""
    def bench_one(name, shape, dtype, causal, sets_count, target_ms, seed):
        calls.append(name)
        ms = times[name].pop(0)
        status = "out of memory" if name in failing else "ok"
        return {"impl": name, "fwd_ms": None if status != "ok" else ms,
                "bwd_ms": None if status != "ok" else ms, "fwd_status": status,
                "bwd_status": status, "fwd_tflops": None, "bwd_tflops": None}
    return bench_one


def test_passes_alternate_the_order_and_average(monkeypatch):
    calls = []
    times = {"tile": [1.0, 3.0, 2.0], "sdpa-flash": [2.0, 4.0, 6.0]}
    monkeypatch.setattr(attention_bench, "bench_one", fake_bench(calls, times))
    out = dict(attention_bench.bench_passes(["tile", "sdpa-flash"], 3, SHAPE, None, False,
                                            2, 10, seed=0))
    assert calls == ["tile", "sdpa-flash", "sdpa-flash", "tile", "tile", "sdpa-flash"]
    flops = attention_bench.attention_flops(2, 4, 1024, 64, False)
    assert out["tile"]["fwd_ms"] == pytest.approx(2.0)
    assert out["tile"]["fwd_tflops"] == pytest.approx(flops / 2.0 / 1e9)
    assert out["tile"]["bwd_tflops"] == pytest.approx(2.5 * flops / 2.0 / 1e9)
    assert out["sdpa-flash"]["fwd_ms"] == pytest.approx(4.0)
    assert [p["fwd_ms"] for p in out["sdpa-flash"]["passes"]] == [2.0, 4.0, 6.0]


def test_a_pass_that_fails_makes_the_time_n_a(monkeypatch):
    calls = []
    times = {"tile": [1.0, 1.0], "naive": [5.0, 5.0]}
    monkeypatch.setattr(attention_bench, "bench_one",
                        fake_bench(calls, times, failing=("naive",)))
    out = dict(attention_bench.bench_passes(["tile", "naive"], 2, SHAPE, None, True, 2, 10,
                                            seed=0))
    assert out["naive"]["fwd_status"] == "out of memory"
    assert out["naive"]["fwd_tflops"] is None and out["naive"]["bwd_ms"] is None
    assert out["tile"]["fwd_status"] == "ok" and out["tile"]["fwd_ms"] == pytest.approx(1.0)


def fake_kernel(family, block_n, tuning=False):
    metadata = {"tuning": {"variant": family}} if tuning else {}
    return types.SimpleNamespace(family=family, constexprs={"BLOCK_N": block_n},
                                 metadata=metadata, name=f"{family}_n{block_n}")


def test_softmax_runs_the_variants_tile_run_softmax_chooses():
    # v1 holds a row in one block: the smallest BLOCK_N that covers it.
    bundle = types.SimpleNamespace(kernels=[
        fake_kernel("softmax_v1", 8192), fake_kernel("softmax_v1", 256),
        fake_kernel("softmax_v1", 1024), fake_kernel("softmax_v1", 512, tuning=True),
        fake_kernel("softmax_v3", 1024)])
    choose = attention_bench.softmax_kernel
    assert choose(bundle, 1, 300).name == "softmax_v1_n1024"
    assert choose(bundle, 1, 256).name == "softmax_v1_n256"
    assert choose(bundle, 1, 4096).name == "softmax_v1_n8192"
    assert choose(bundle, 1, 8193) is None
    assert choose(bundle, 3, 100000).name == "softmax_v3_n1024"
    assert choose(bundle, 2, 100) is None


def test_softmax_counts_one_read_and_one_write_of_fp32():
    assert attention_bench.softmax_bytes(4096, 1024) == 2 * 4096 * 1024 * 4
    assert attention_bench.parse_sizes("4096x1024,17x3") == [(4096, 1024), (17, 3)]
    for wrong in ("4096", "4096x0", "ax3", ""):
        with pytest.raises(argparse.ArgumentTypeError):
            attention_bench.parse_sizes(wrong)
