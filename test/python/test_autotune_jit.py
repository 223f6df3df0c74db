"""@tile.autotune and @tile.heuristics over kernel[grid](...)
(tile/autotuner.py), on CPU tensors (the interpreter): the tutorials'
kernels autotuned against float64 references at sizes that are not
multiples of the blocks, the per-key cache, heuristics, pruning,
reset_to_zero, the errors; and the choice by time, with a fake timer."""

import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

import tile  # noqa: E402
import tile.language as tl  # noqa: E402
from conftest import REPO  # noqa: E402
from tile import autotuner, launcher  # noqa: E402
from tile.compile import load_module  # noqa: E402

EXAMPLE = load_module(os.path.join(REPO, "examples", "pytorch_launch.py"))
ADD_CONFIGS = [tile.Config({"BLOCK_SIZE": 128}, num_warps=4),
               tile.Config({"BLOCK_SIZE": 256}, num_warps=8, num_stages=3),
               tile.Config({"BLOCK_SIZE": 64}, num_warps=2)]

pytestmark = pytest.mark.usefixtures("launcher_tools")


def fresh(kernel):
    """The same @tile.jit kernel with an empty per-process cache."""
    return tile.jit(kernel.fn, do_not_specialize=kernel.do_not_specialize)


@pytest.fixture
def counted(monkeypatch):
    """Counts the frontend's compilations and the launches."""
    counts = {"compiles": 0, "launches": 0}
    compile_kernel, launch = launcher.compile_kernel, launcher.PreparedLaunch.launch

    def counting_compile(*args, **kwargs):
        counts["compiles"] += 1
        return compile_kernel(*args, **kwargs)

    def counting_launch(self):
        counts["launches"] += 1
        return launch(self)

    monkeypatch.setattr(launcher, "compile_kernel", counting_compile)
    monkeypatch.setattr(launcher.PreparedLaunch, "launch", counting_launch)
    return counts


class FakeTimer:
    """Times a config by a table of milliseconds by BLOCK_SIZE and key
    value (no clock: the choice is what the test says), running the
    kernel once as a real timer would."""

    def __init__(self, milliseconds):
        self.milliseconds = milliseconds   # (block, n) -> ms
        self.timed = []

    def __call__(self, trial):
        trial.run()
        n = dict(trial.prepared.spec.arguments).get("n_elements")
        block = trial.config.kwargs["BLOCK_SIZE"]
        self.timed.append((block, n))
        return self.milliseconds.get((block, n), 10.0)


def autotuned_add(configs=ADD_CONFIGS, **options):
    return tile.autotune(configs=configs, key=["n_elements"], **options)(
        fresh(EXAMPLE.add_kernel))


def add_grid(n):
    return lambda meta: (tile.cdiv(n, meta["BLOCK_SIZE"]),)


# -- the tutorials' kernels, autotuned on the interpreter ---------------------


def test_vector_add_autotuned_takes_the_first_config_on_the_interpreter():
    torch.manual_seed(0)
    kernel = autotuned_add()
    n = 1000   # a multiple of no block
    x, y = torch.rand(n), torch.rand(n)
    out = torch.full((n,), float("nan"))
    seen = []
    kernel[lambda meta: seen.append(dict(meta)) or (tile.cdiv(n, meta["BLOCK_SIZE"]),)](
        x, y, out, n)
    assert torch.allclose(out.double(), x.double() + y.double(), rtol=1e-7, atol=0)
    assert kernel.best_config is ADD_CONFIGS[0]
    assert kernel.configs_timings is None   # nothing timed
    # The grid function sees the config's constexpr and options.
    assert seen[-1]["BLOCK_SIZE"] == 128 and seen[-1]["num_warps"] == 4


MATMUL_CONFIGS = [
    tile.Config({"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 16}, num_warps=4,
                num_stages=3),
    tile.Config({"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 16}, num_warps=2),
]


def autotuned_matmul(**options):
    return tile.autotune(configs=MATMUL_CONFIGS, key=["M", "N", "K"], **options)(
        fresh(EXAMPLE.matmul_kernel))


def matmul(kernel, a, b):
    M, K = a.shape
    _, N = b.shape
    c = a.new_empty((M, N))
    kernel[lambda meta: (tile.cdiv(M, meta["BLOCK_SIZE_M"]),
                         tile.cdiv(N, meta["BLOCK_SIZE_N"]))](
        a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
        c.stride(0), c.stride(1))
    return c


def assert_matmul_close(c, a, b):
    reference = a.double() @ b.double()
    # fp16 products summed in fp32, then one rounding to fp16.
    assert ((c.double() - reference).abs() / (reference.abs() + 1)).max().item() < 2e-3


def test_matmul_autotuned_on_ragged_shapes():
    torch.manual_seed(1)
    kernel = autotuned_matmul()
    a = torch.randn(70, 45).to(torch.float16)
    b = torch.randn(45, 50).to(torch.float16)
    assert_matmul_close(matmul(kernel, a, b), a, b)
    assert kernel.best_config is MATMUL_CONFIGS[0]


def test_matmul_chooses_by_time_per_key():
    torch.manual_seed(2)
    timings = {(32, 70): 2.0, (16, 70): 1.0, (32, 33): 1.0, (16, 33): 3.0}
    calls = []

    def timer(trial):
        trial.run()
        m = dict(trial.prepared.spec.arguments).get("M", 1)
        calls.append(m)
        return timings[(trial.config.kwargs["BLOCK_SIZE_M"], m)]

    kernel = autotuned_matmul(timer=timer)
    a, b = torch.randn(70, 45).to(torch.float16), torch.randn(45, 50).to(torch.float16)
    assert_matmul_close(matmul(kernel, a, b), a, b)
    assert kernel.best_config is MATMUL_CONFIGS[1]
    assert kernel.configs_timings == {MATMUL_CONFIGS[0]: 2.0, MATMUL_CONFIGS[1]: 1.0}
    a, b = torch.randn(33, 17).to(torch.float16), torch.randn(17, 65).to(torch.float16)
    assert_matmul_close(matmul(kernel, a, b), a, b)
    assert kernel.best_config is MATMUL_CONFIGS[0]
    assert calls == [70, 70, 33, 33]


# -- the choice, by a fake timer -----------------------------------------------


def test_the_fastest_config_is_chosen_and_cached_per_key(counted):
    timer = FakeTimer({(256, 1000): 1.0, (128, 1000): 2.0, (64, 1000): 3.0,
                       (64, 500): 0.5, (128, 500): 0.7, (256, 500): 0.9})
    kernel = autotuned_add(timer=timer)
    x, y, out = torch.rand(1000), torch.rand(1000), torch.empty(1000)
    kernel[add_grid(1000)](x, y, out, 1000)
    assert kernel.best_config is ADD_CONFIGS[1]
    assert torch.allclose(out, x + y)
    assert counted == {"compiles": 3, "launches": 4}   # three timed, one for the caller
    assert sorted(timer.timed) == [(64, 1000), (128, 1000), (256, 1000)]

    # The same key: nothing compiled or timed, one launch.
    out.zero_()
    kernel[add_grid(1000)](x, y, out, 1000)
    assert counted == {"compiles": 3, "launches": 5}
    assert len(timer.timed) == 3
    assert torch.allclose(out, x + y)

    # Another key: tuned again, another winner.
    kernel[add_grid(500)](x, y, out, 500)
    assert kernel.best_config is ADD_CONFIGS[2]
    assert len(timer.timed) == 6
    assert set(kernel.cache.values()) == {ADD_CONFIGS[1], ADD_CONFIGS[2]}
    # Back to the first key: its choice, from the cache.
    kernel[add_grid(1000)](x, y, out, 1000)
    assert kernel.best_config is ADD_CONFIGS[1] and len(timer.timed) == 6


def test_the_choices_export_for_an_ahead_of_time_build(tmp_path, tile_compile):
    """export_choices writes one entry a key tuned (its specialisation and
    the chosen config); python3 -m tile.compile --autotuned compiles each
    into a folder, the chosen block sizes and options in its metadata."""
    timer = FakeTimer({(256, 1000): 1.0, (64, 500): 0.5})
    kernel = autotuned_add(timer=timer)
    for n in (1000, 500, 1000):
        x, y, out = torch.rand(n), torch.rand(n), torch.empty(n)
        kernel[add_grid(n)](x, y, out, n)
    path = tmp_path / "choices.json"
    exported = kernel.export_choices(str(path))
    assert json.loads(path.read_text()) == exported
    assert exported["kernel"].endswith("examples/pytorch_launch.py:add_kernel")
    assert [(c["name"], c["constexprs"]) for c in exported["choices"]] == [
        ("add_kernel_0", ["BLOCK_SIZE=256"]), ("add_kernel_1", ["BLOCK_SIZE=64"])]
    assert "num-warps=8 " in exported["choices"][0]["options"] + " "
    assert "num-stages=3" in exported["choices"][0]["options"]
    assert exported["choices"][0]["signature"].startswith("*fp32")
    out_dir = tmp_path / "kernels"
    out_dir.mkdir()
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"), TILE_COMPILE=tile_compile,
               TILE_CACHE_DIR="off")
    result = subprocess.run([sys.executable, "-m", "tile.compile", "--autotuned", str(path),
                             "--out-dir", str(out_dir), "--emit", "metadata"], cwd=REPO,
                            env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    for i, (block, warps) in enumerate(((256, 8), (64, 2))):
        metadata = json.loads((out_dir / f"add_kernel_{i}.json").read_text())
        assert metadata["constexprs"]["BLOCK_SIZE"] == block
        assert metadata["num_warps"] == warps
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    result = subprocess.run([sys.executable, "-m", "tile.compile", "--autotuned", str(bad),
                             "--out-dir", str(out_dir)], cwd=REPO, env=env,
                            capture_output=True, text=True)
    assert result.returncode == 1
    assert "not a file export_choices wrote" in result.stderr


def test_the_interpreter_compiles_one_config_and_times_nothing(counted):
    kernel = autotuned_add()
    x, y, out = torch.rand(300), torch.rand(300), torch.empty(300)
    kernel[add_grid(300)](x, y, out, 300)
    kernel[add_grid(300)](x, y, out, 300)
    assert counted == {"compiles": 1, "launches": 2}
    assert torch.allclose(out, x + y)


def test_warmup_compiles_every_config_for_the_gpu_and_runs_nothing(counted):
    """Ahead of time, for a GPU machine without tile-compile: meta tensors
    (aligned as CUDA's are) stand for the call's."""
    kernel = autotuned_add()
    x, y, out = (torch.empty(5000, device="meta") for _ in range(3))
    compiled = kernel.warmup(x, y, out, 5000, grid=add_grid(5000))
    assert len(compiled) == len(ADD_CONFIGS)
    assert counted == {"compiles": len(ADD_CONFIGS), "launches": 0}
    assert kernel.cache == {}   # nothing chosen: nothing was timed


def test_a_config_that_does_not_compile_is_skipped():
    @tile.jit
    def needs_a_small_block(X, n, BLOCK: tl.constexpr):
        tl.static_assert(BLOCK <= 64)
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(X + offsets, offsets.to(tl.float32), mask=offsets < n)

    configs = [tile.Config({"BLOCK": 128}), tile.Config({"BLOCK": 32})]
    kernel = tile.autotune(configs=configs, key=["n"])(needs_a_small_block)
    x = torch.zeros(100)
    kernel[lambda meta: (tile.cdiv(100, meta["BLOCK"]),)](x, 100)
    assert kernel.best_config is configs[1]
    assert torch.equal(x, torch.arange(100, dtype=torch.float32))

    timed = tile.autotune(configs=configs, key=["n"], timer=lambda trial: 1.0)(
        fresh(needs_a_small_block))
    timed[lambda meta: (tile.cdiv(100, meta["BLOCK"]),)](x, 100)
    assert timed.configs_timings == {configs[0]: float("inf"), configs[1]: 1.0}

    only_large = tile.autotune(configs=configs[:1], key=["n"])(fresh(needs_a_small_block))
    with pytest.raises(RuntimeError, match=r"none of the 1 autotuning configs compiles:\n"
                                           r"  Config\(\{'BLOCK': 128\}"):
        only_large[(1,)](x, 100)


def test_the_key_takes_tensor_dtypes():
    timer = FakeTimer({})
    kernel = autotuned_add(timer=timer)
    for dtype in (torch.float32, torch.float32, torch.float16):
        x = torch.rand(100).to(dtype)
        kernel[add_grid(100)](x, x, x.clone(), 100)
    assert len(kernel.cache) == 2 and len(timer.timed) == 6


# -- heuristics, pruning, reset_to_zero ----------------------------------------


def test_heuristics_compute_the_block_from_n():
    seen = []
    kernel = tile.heuristics({
        "BLOCK_SIZE": lambda args: seen.append(args["n_elements"]) or
        min(tile.next_power_of_2(args["n_elements"]), 256)})(fresh(EXAMPLE.add_kernel))
    for n in (100, 1000):
        x, y, out = torch.rand(n), torch.rand(n), torch.empty(n)
        blocks = []

        def grid(meta, n=n, blocks=blocks):
            blocks.append(meta["BLOCK_SIZE"])
            return (tile.cdiv(n, meta["BLOCK_SIZE"]),)

        kernel[grid](x, y, out, n)
        assert torch.allclose(out, x + y)
        assert blocks == [min(tile.next_power_of_2(n), 256)]
    assert seen == [100, 1000]


def test_autotune_over_heuristics_sees_the_config():
    @tile.jit
    def scaled_add(X, Y, Out, n, BLOCK_SIZE: tl.constexpr, SCALE: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offsets < n
        x = tl.load(X + offsets, mask=mask)
        y = tl.load(Y + offsets, mask=mask)
        tl.store(Out + offsets, x + y * SCALE, mask=mask)

    kernel = tile.autotune(configs=ADD_CONFIGS[:2], key=["n"])(
        tile.heuristics({"SCALE": lambda args: args["BLOCK_SIZE"] // 64})(scaled_add))
    x, y, out = torch.rand(500), torch.rand(500), torch.empty(500)
    kernel[add_grid(500)](x, y, out, 500)
    assert torch.allclose(out, x + y * 2)   # BLOCK_SIZE 128 -> SCALE 2


def test_prune_configs_by():
    seen = {}

    def early_config_prune(configs, named):
        seen["n"] = named["n_elements"]
        return [c for c in configs if c.kwargs["BLOCK_SIZE"] <= 128]

    def perf_model(**named):
        return abs(named["BLOCK_SIZE"] - 100)   # 128 beats 64

    timer = FakeTimer({})
    kernel = autotuned_add(timer=timer, prune_configs_by={
        "early_config_prune": early_config_prune, "perf_model": perf_model, "top_k": 1})
    x, y, out = torch.rand(300), torch.rand(300), torch.empty(300)
    kernel[add_grid(300)](x, y, out, 300)
    assert seen == {"n": 300}
    assert timer.timed == [(128, 300)]
    assert kernel.best_config is ADD_CONFIGS[0]
    assert kernel.prune_configs({"n_elements": 5}) == [ADD_CONFIGS[0]]

    # A fraction: half of the three, at least one.
    half = autotuned_add(prune_configs_by={"perf_model": lambda **named: -named["BLOCK_SIZE"],
                                           "top_k": 0.5})
    assert half.prune_configs({}) == [ADD_CONFIGS[1]]
    none_left = autotuned_add(prune_configs_by={"early_config_prune": lambda c, n: []})
    with pytest.raises(ValueError, match="prune_configs_by left no config to try"):
        none_left[add_grid(300)](x, y, out, 300)


@tile.jit
def accumulate(X, Total, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    # Adds into Total: a second run without a reset would double it.
    tl.store(Total + offsets, tl.load(Total + offsets, mask=mask) +
             tl.load(X + offsets, mask=mask), mask=mask)


@pytest.mark.parametrize("names", [{"reset_to_zero": ["Total"]},
                                   {"restore_value": ["Total"]}])
def test_reset_to_zero_and_restore_value_before_each_timed_run(names):
    totals_seen = []

    def timer(trial):
        for _ in range(2):
            trial.prepare()
            totals_seen.append(total.clone())
            trial.launch()
        return 1.0

    configs = [tile.Config({"BLOCK": 32}), tile.Config({"BLOCK": 64})]
    kernel = tile.autotune(configs=configs, key=["n"], timer=timer, **names)(
        fresh(accumulate))
    x = torch.arange(1, 101, dtype=torch.float32)
    total = torch.zeros(100) if "reset_to_zero" in names else torch.full((100,), 5.0)
    start = total.clone()
    kernel[lambda meta: (tile.cdiv(100, meta["BLOCK"]),)](x, total, 100)
    assert len(totals_seen) == 4 and all(torch.equal(t, start) for t in totals_seen)
    # The caller's launch ran once on what the caller gave.
    assert torch.equal(total, start + x)


def test_a_configs_pre_hook_runs_before_each_of_its_launches():
    """Config(pre_hook=f): f(arguments by name, the config's among them)
    before every launch of that config, timed runs and the caller's, as
    Triton's; here it zeroes Total, so every run adds x once."""
    seen = []

    def zero_total(named):
        seen.append((named["BLOCK"], named["num_warps"], named["n"]))
        named["Total"].zero_()

    def timer(trial):
        for _ in range(2):
            trial.run()
            assert torch.equal(total, x)
        return 1.0 if trial.config.kwargs["BLOCK"] == 64 else 2.0

    configs = [tile.Config({"BLOCK": 32}, pre_hook=zero_total),
               tile.Config({"BLOCK": 64}, pre_hook=zero_total)]
    kernel = tile.autotune(configs=configs, key=["n"], timer=timer)(fresh(accumulate))
    x, total = torch.arange(1.0, 101.0), torch.full((100,), 5.0)
    grid = lambda meta: (tile.cdiv(100, meta["BLOCK"]),)  # noqa: E731
    kernel[grid](x, total, 100)
    assert torch.equal(total, x) and kernel.best_config is configs[1]
    assert seen == [(32, 4, 100)] * 2 + [(64, 4, 100)] * 3
    kernel[grid](x, total, 100)   # the cached choice: its hook again
    assert torch.equal(total, x) and seen[-1] == (64, 4, 100) and len(seen) == 6
    with pytest.raises(TypeError, match="pre_hook is a function of the arguments by name"):
        tile.Config({"BLOCK": 32}, pre_hook="zero")


def test_without_a_reset_the_timed_runs_accumulate():
    kernel = tile.autotune(configs=[tile.Config({"BLOCK": 32})], key=["n"],
                           timer=lambda trial: trial.run() or 1.0)(fresh(accumulate))
    x, total = torch.ones(100), torch.zeros(100)
    kernel[lambda meta: (tile.cdiv(100, meta["BLOCK"]),)](x, total, 100)
    assert torch.equal(total, torch.full((100,), 2.0))


# -- errors -------------------------------------------------------------------


def test_an_empty_configs_list():
    with pytest.raises(ValueError, match=r"@tile.autotune of add_kernel: configs is empty"):
        autotuned_add(configs=[])


def test_a_key_naming_no_argument():
    with pytest.raises(TypeError, match=r"key names 'n', which is no argument of the kernel "
                                        r"\(its arguments: x_ptr, y_ptr, output_ptr, "
                                        r"n_elements, BLOCK_SIZE\)"):
        tile.autotune(configs=ADD_CONFIGS, key=["n"])(EXAMPLE.add_kernel)
    with pytest.raises(TypeError, match="key is a list of argument names, not 'n_elements'"):
        tile.autotune(configs=ADD_CONFIGS, key="n_elements")(EXAMPLE.add_kernel)


def test_a_config_naming_no_constexpr():
    with pytest.raises(TypeError, match=r"Config\(\{'BLOCK': 64\}, num_warps=4, "
                                        r"num_stages=2\) sets 'BLOCK', which is no constexpr "
                                        r"parameter of add_kernel \(its constexprs: "
                                        r"BLOCK_SIZE\)"):
        autotuned_add(configs=[tile.Config({"BLOCK": 64})])
    with pytest.raises(TypeError, match="sets 'n_elements', which is a run-time parameter"):
        autotuned_add(configs=[tile.Config({"n_elements": 64})])


def test_bad_configs_and_options():
    with pytest.raises(TypeError, match="no compile option num_ctas"):
        tile.Config({"BLOCK_SIZE": 64}, num_ctas=2)
    with pytest.raises(ValueError, match="num_warps must be a power of two"):
        tile.Config({"BLOCK_SIZE": 64}, num_warps=3)
    with pytest.raises(TypeError, match="configs is a list of tile.Config"):
        autotuned_add(configs=[{"BLOCK_SIZE": 64}])
    with pytest.raises(TypeError, match="prune_configs_by has no top_n"):
        autotuned_add(prune_configs_by={"top_n": 2})
    with pytest.raises(ValueError, match="top_k is a count of configs"):
        autotuned_add(prune_configs_by={"top_k": 0})
    with pytest.raises(TypeError, match="reset_to_zero names 'out'"):
        autotuned_add(reset_to_zero=["out"])
    with pytest.raises(TypeError, match=r"@tile.autotune wraps a @tile.jit kernel \(write "
                                        r"it above @tile.jit\), not function"):
        tile.autotune(configs=ADD_CONFIGS, key=[])(EXAMPLE.add)


def test_passing_what_the_configs_choose():
    kernel = autotuned_add()
    x, y, out = torch.rand(10), torch.rand(10), torch.empty(10)
    with pytest.raises(ValueError, match="BLOCK_SIZE is chosen by @tile.autotune's "
                                         "configs; do not pass it"):
        kernel[(1,)](x, y, out, 10, BLOCK_SIZE=64)
    with pytest.raises(ValueError, match="num_warps is chosen"):
        kernel[(1,)](x, y, out, 10, num_warps=2)
    with pytest.raises(TypeError, match=r"add_kernel\[grid\]\(\.\.\.\): too many positional"):
        kernel[(1,)](x, y, out, 10, 64, 5)


def test_heuristics_errors():
    with pytest.raises(TypeError, match=r"'BLOCK' is no constexpr parameter of add_kernel "
                                        r"\(its constexprs: BLOCK_SIZE\)"):
        tile.heuristics({"BLOCK": lambda args: 64})(EXAMPLE.add_kernel)
    with pytest.raises(TypeError, match="not a function of the arguments"):
        tile.heuristics({"BLOCK_SIZE": 64})(EXAMPLE.add_kernel)
    kernel = tile.heuristics({"BLOCK_SIZE": lambda args: 64})(EXAMPLE.add_kernel)
    x, y, out = torch.rand(10), torch.rand(10), torch.empty(10)
    with pytest.raises(ValueError, match="BLOCK_SIZE is computed by @tile.heuristics"):
        kernel[(1,)](x, y, out, 10, BLOCK_SIZE=32)
    with pytest.raises(RuntimeError, match=r"launch it over a grid, add_kernel\[grid\]"):
        kernel(x, y, out, 10)


def test_the_documented_example_runs(tmp_path):
    """docs/python-api.md's "Autotuning" example, as written (from a
    file: the frontend reads a kernel's source)."""
    with open(os.path.join(REPO, "docs", "python-api.md")) as f:
        text = f.read()
    section = text[text.index("### Autotuning"):]
    start = section.index("```python\n") + len("```python\n")
    example = tmp_path / "autotuning.py"
    example.write_text(section[start:section.index("```", start)])
    load_module(str(example))


def test_the_module_is_not_the_attention_tuner():
    # tile.autotune is the decorator; the ahead-of-time attention sweep
    # stays tile.tools.autotune.
    from tile.tools import autotune as attention_sweep
    assert tile.autotune is autotuner.autotune
    assert hasattr(attention_sweep, "AutotuneError")
