"""The benchmark harness's bookkeeping, without a GPU: the implementations
of a shape run in alternating order over the passes, and a record's times
are the mean of its passes'.  (The timing itself needs a GPU:
benchmarks/attention_bench.py on the device.)"""

import os
import sys

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
