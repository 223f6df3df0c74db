"""kernel[grid](...)'s launches after the first on the GPU path
(tile/launcher.py, _Binder and _FastLaunch): a call whose arguments key
like an earlier launch's skips the specialisation and packs its arguments
in one precompiled function; any other call specialises again, and bad
input gets the errors it got before.  The same under @tile.autotune (a
key tuned before launches its config by the fast path; another key tunes)
and @tile.heuristics (run on every call, the launch keyed by their
values).  No GPU: the tensors are CPU tensors that say they are on cuda:0,
and what needs the driver is replaced (the compute capability, the
current stream, and the runtime's tileLaunchGrid, which records what it
is given)."""

import os
import struct
import sys

import pytest

torch = pytest.importorskip("torch")

import tile  # noqa: E402
import tile.language as tl  # noqa: E402
from conftest import REPO  # noqa: E402
from tile import launcher, runtime  # noqa: E402
from tile.compile import load_module  # noqa: E402

EXAMPLE = load_module(os.path.join(REPO, "examples", "pytorch_launch.py"))

pytestmark = pytest.mark.usefixtures("launcher_tools")

# The CPU tensors that say they are on cuda:0, as the launch-overhead
# benchmark makes them.
sys.path.insert(0, os.path.join(REPO, "benchmarks"))
from launch_overhead import on_cuda as on_gpu  # noqa: E402


def fresh(kernel):
    return tile.jit(kernel.fn, do_not_specialize=kernel.do_not_specialize)


class Launches:
    """What tileLaunchGrid was given, each launch's (kernel handle,
    device, stream, [(kind, code, value)] arguments, grid), and the count
    of calls that went the whole way (launcher.prepare)."""

    def __init__(self):
        self.calls = []
        self.prepared = 0
        self.stream = 7
        self.error = 0   # what tileLaunchGrid returns

    def record(self, handle, device, stream, count, arguments, grid):
        raw = bytes(arguments)[:16 * count]
        fields = [struct.unpack_from("=ii8s", raw, 16 * i) for i in range(count)]
        self.calls.append((handle, device, stream, fields, struct.unpack("=3I", bytes(grid))))
        return self.error

    @property
    def last(self):
        return self.calls[-1]


@pytest.fixture
def gpu(monkeypatch):
    launches = Launches()
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: (9, 0))
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch._C, "_cuda_getCurrentRawStream",
                        lambda index: launches.stream, raising=False)
    monkeypatch.setattr(runtime.library(), "tileLaunchGrid", launches.record)
    prepare = launcher.prepare

    def counted_prepare(*args, **kwargs):
        launches.prepared += 1
        return prepare(*args, **kwargs)

    monkeypatch.setattr(launcher, "prepare", counted_prepare)
    launcher._capability_target.cache_clear()
    yield launches
    launcher._capability_target.cache_clear()


def vectors(n=1000, dtype=torch.float32):
    return tuple(on_gpu(torch.rand(n).to(dtype)) for _ in range(3))


def signatures(kernel):
    """The compiled specialisations' run-time signatures."""
    return sorted(key[1] for key in kernel._launch_cache)


def test_a_second_call_packs_as_the_first(gpu):
    kernel = fresh(EXAMPLE.add_kernel)
    x, y, out = vectors()
    kernel[(8,)](x, y, out, 1000, BLOCK_SIZE=128)
    assert gpu.prepared == 1
    kernel[(8,)](x, y, out, 1000, BLOCK_SIZE=128)
    assert gpu.prepared == 1
    first, second = gpu.calls
    assert first == second
    handle, device, stream, fields, grid = second
    assert (device, stream, grid) == (0, 7, (8, 1, 1))
    assert [kind for kind, _, _ in fields] == [0, 0, 0, 1]
    assert [struct.unpack("=Q", value)[0] for _, _, value in fields[:3]] == \
        [t.data_ptr() for t in (x, y, out)]
    # Other values of the same kinds, by keyword, on another stream.
    a, b, c = vectors()
    gpu.stream = 9
    kernel[(2, 3)](y_ptr=b, x_ptr=a, output_ptr=c, n_elements=999, BLOCK_SIZE=128)
    assert gpu.prepared == 1
    _, _, stream, fields, grid = gpu.last
    assert (stream, grid) == (9, (2, 3, 1))
    assert struct.unpack("=q", fields[3][2])[0] == 999
    assert struct.unpack("=Q", fields[1][2])[0] == b.data_ptr()


def test_what_specialises_takes_another_kernel(gpu):
    kernel = fresh(EXAMPLE.add_kernel)
    x, y, out = vectors(1024)

    def launch(*args, **kwargs):
        kernel[(1,)](*args, **{"BLOCK_SIZE": 128, **kwargs})
        return gpu.last[0]

    aligned = launch(x, y, out, 1000)
    misaligned = launch(on_gpu(x[1:]), y, out, 1000)
    assert misaligned != aligned and gpu.prepared == 2
    assert launch(on_gpu(x[5:]), y, out, 1000) == misaligned and gpu.prepared == 2
    assert launch(on_gpu(x[4:]), y, out, 1000) == aligned and gpu.prepared == 2   # 16 bytes on
    # Another dtype, the constant 1, a multiple of 16, a 64-bit integer.
    half = vectors(64, torch.float16)
    launch(*half, 1000)
    launch(x, y, out, 1)
    launch(x, y, out, 992)
    launch(x, y, out, 2**40 + 1)
    launch(x, y, out, 2**40 + 3)
    assert gpu.prepared == 6
    assert signatures(kernel) == sorted([
        ("*fp32:16", "*fp32:16", "*fp32:16", "i32"), ("*fp32", "*fp32:16", "*fp32:16", "i32"),
        ("*fp16:16", "*fp16:16", "*fp16:16", "i32"), ("*fp32:16", "*fp32:16", "*fp32:16"),
        ("*fp32:16", "*fp32:16", "*fp32:16", "i32:16"),
        ("*fp32:16", "*fp32:16", "*fp32:16", "i64")])
    # Other constexprs and options are other kernels too; True is no 1.
    launch(x, y, out, 1000, BLOCK_SIZE=256)
    launch(x, y, out, 1000, num_warps=8)
    launch(x, y, out, 1000, num_warps=1)
    assert gpu.prepared == 9
    with pytest.raises(ValueError, match="num_warps must be an integer, got True"):
        launch(x, y, out, 1000, num_warps=True)


def test_do_not_specialize_shares_one_kernel(gpu):
    kernel = tile.jit(EXAMPLE.add_kernel.fn, do_not_specialize=["x_ptr", "n_elements"])
    x, y, out = vectors(1024)
    for n in (1000, 992, 1, 17):
        kernel[(1,)](x, y, out, n, BLOCK_SIZE=128)
    kernel[(1,)](on_gpu(x[1:]), y, out, 1000, BLOCK_SIZE=128)
    assert gpu.prepared == 1
    assert signatures(kernel) == [("*fp32", "*fp32:16", "*fp32:16", "i32")]


def test_tensor_subclasses_and_the_grid_function(gpu):
    kernel = fresh(EXAMPLE.add_kernel)
    x, y, out = vectors()
    weight = torch.nn.Parameter(torch.rand(1000), requires_grad=False)
    seen = []

    def grid(meta):
        seen.append(dict(meta))
        return (tile.cdiv(meta["n_elements"], meta["BLOCK_SIZE"]),)

    for _ in range(3):
        kernel[grid](x, y, out, 1000, BLOCK_SIZE=128, num_warps=2)
    assert gpu.prepared == 1 and len(seen) == 3   # called once a launch
    assert seen[-1] == {"x_ptr": x, "y_ptr": y, "output_ptr": out, "n_elements": 1000,
                        "BLOCK_SIZE": 128, "num_warps": 2}
    assert gpu.last[-1] == (8, 1, 1)
    # A plain CPU parameter among lookalike CUDA tensors: refused as before.
    with pytest.raises(ValueError, match="different devices"):
        kernel[grid](x, weight, out, 1000, BLOCK_SIZE=128, num_warps=2)


def test_bad_input_after_the_first_call(gpu):
    kernel = fresh(EXAMPLE.add_kernel)
    x, y, out = vectors()
    kernel[(1,)](x, y, out, 1000, BLOCK_SIZE=128)
    launches = len(gpu.calls)
    with pytest.raises(TypeError, match="parameter y_ptr is a tensor of torch.complex64"):
        kernel[(1,)](x, on_gpu(torch.rand(4).to(torch.complex64)), out, 1000,
                     BLOCK_SIZE=128)
    with pytest.raises(TypeError, match=r"parameter n_elements is given '100' \(str\)"):
        kernel[(1,)](x, y, out, "100", BLOCK_SIZE=128)
    with pytest.raises(ValueError, match="does not fit in 64 bits"):
        kernel[(1,)](x, y, out, 2**64, BLOCK_SIZE=128)
    with pytest.raises(TypeError, match="missing a required argument: 'n_elements'"):
        kernel[(1,)](x, y, out, BLOCK_SIZE=128)
    with pytest.raises(TypeError, match="multiple values for argument 'n_elements'"):
        kernel[(1,)](x, y, out, 1000, n_elements=1000, BLOCK_SIZE=128)
    with pytest.raises(TypeError, match="unexpected keyword argument 'num_ctas'"):
        kernel[(1,)](x, y, out, 1000, BLOCK_SIZE=128, num_ctas=2)
    with pytest.raises(ValueError, match=r"different devices \(x_ptr, output_ptr on "
                                         r"cuda:0; y_ptr on cpu\)"):
        kernel[(1,)](x, torch.rand(1000), out, 1000, BLOCK_SIZE=128)
    meta = torch.empty(1000, device="meta")
    with pytest.raises(ValueError, match="the tensors are on meta"):
        kernel[(1,)](meta, meta, meta, 1000, BLOCK_SIZE=128)
    for grid, error, message in [
            ((0,), ValueError, r"the grid is \(0,\); its x size must lie in"),
            ((1, 70000), ValueError, r"its y size must lie in \[1, 65535\]"),
            ((1, 1, 1, 1), ValueError, "a grid is one to three positive ints"),
            ((True,), TypeError, "a grid is one to three positive ints"),
            (lambda meta: None, TypeError, "the grid function returned None"),
            (lambda meta: [2**31], ValueError, r"the grid function returned \[2147483648\]")]:
        with pytest.raises(error, match=message):
            kernel[grid](x, y, out, 1000, BLOCK_SIZE=128)
    assert len(gpu.calls) == launches   # none of them launched
    # Grids of other forms that are right: a list, an int.
    kernel[[3, 2]](x, y, out, 1000, BLOCK_SIZE=128)
    kernel[5](x, y, out, 1000, BLOCK_SIZE=128)
    assert [call[-1] for call in gpu.calls[-2:]] == [(3, 2, 1), (5, 1, 1)]


def test_what_the_runtime_refuses(gpu):
    kernel = fresh(EXAMPLE.add_kernel)
    x, y, out = vectors()

    def refused(error):
        gpu.error = error
        try:
            kernel[(1,)](x, y, out, 1000, BLOCK_SIZE=128)
        finally:
            gpu.error = 0

    # The first call (the whole way): a failed launch leaves no fast path.
    with pytest.raises(ValueError, match=r"^add_kernel\[grid\]\(\.\.\.\): "):
        refused(1)   # the runtime's check failed
    kernel[(1,)](x, y, out, 1000, BLOCK_SIZE=128)
    assert gpu.prepared == 2
    # The fast path says what the runtime and the driver refuse alike.
    with pytest.raises(ValueError, match=r"^add_kernel\[grid\]\(\.\.\.\): "):
        refused(1)
    with pytest.raises(runtime.LaunchError):
        refused(2)   # the driver failed (no GPU, say)
    assert gpu.prepared == 2


def test_tile_interpret_is_read_each_call(gpu, monkeypatch):
    kernel = fresh(EXAMPLE.add_kernel)
    x, y, out = vectors()
    kernel[(1,)](x, y, out, 1000, BLOCK_SIZE=128)
    interpreted = []
    monkeypatch.setattr(launcher, "_run_interpreter",
                        lambda spec, compiled, grid: interpreted.append(grid))
    monkeypatch.setenv("TILE_INTERPRET", "1")
    kernel[(1,)](x, y, out, 1000, BLOCK_SIZE=128)
    assert interpreted == [(1, 1, 1)] and gpu.prepared == 2
    monkeypatch.setenv("TILE_INTERPRET", "0")
    kernel[(1,)](x, y, out, 1000, BLOCK_SIZE=128)
    assert gpu.prepared == 2 and len(gpu.calls) == 2


def test_the_binder_keys_what_specialise_decides():
    @tile.jit(do_not_specialize=["d"])
    def kernel(P, type, a, d, e=None, B: tl.constexpr = 4):
        pass

    bind = launcher._Binder.of(kernel).bind
    base = torch.zeros(64)
    key, values, options = bind(base, 2.5, 1, 16, B=True, num_warps=4)
    assert values == (base, 2.5, 1, 16, None, True) and options == {"num_warps": 4}

    def key_of(*args, **kwargs):
        return bind(*args, **kwargs)[0]

    assert key != key_of(base, 2.5, 1, 16, B=1, num_warps=4)          # True is no 1
    assert key != key_of(base, 2.5, 1, 16, B=True, num_warps=True)
    assert key != key_of(base[1:], 2.5, 1, 16, B=True, num_warps=4)   # alignment
    assert key != key_of(base.half(), 2.5, 1, 16, B=True, num_warps=4)
    assert key != key_of(base, 2.5, 2, 16, B=True, num_warps=4)       # a == 1
    assert key == key_of(base[4:], 3.5, 1, 17, B=True, num_warps=4)   # d: not specialised
    assert key != key_of(base, 2.5, 1, 2**40, B=True, num_warps=4)    # i64
    assert key != key_of(base, 2.5, 1, 16, 0, B=True, num_warps=4)    # None -> an int
    with pytest.raises(launcher._Uncached):
        bind(base, "2.5", 1, 16)


# -- @tile.autotune and @tile.heuristics ----------------------------------------

ADD_CONFIGS = [tile.Config({"BLOCK_SIZE": 128}, num_warps=4),
               tile.Config({"BLOCK_SIZE": 256}, num_warps=8),
               tile.Config({"BLOCK_SIZE": 64}, num_warps=2)]


class RankingTimer:
    """Runs each config once, as a real timer would, and times it by a
    table of milliseconds by (BLOCK_SIZE, n_elements), else 10."""

    def __init__(self, milliseconds=None):
        self.milliseconds = milliseconds or {}
        self.timed = []

    def __call__(self, trial):
        trial.run()
        block = trial.config.kwargs["BLOCK_SIZE"]
        n = dict(trial.prepared.spec.arguments).get("n_elements")
        self.timed.append((block, n))
        return self.milliseconds.get((block, n), 10.0)


def tuned_add(timer, **options):
    return tile.autotune(configs=ADD_CONFIGS, key=["n_elements"], timer=timer, **options)(
        fresh(EXAMPLE.add_kernel))


def by_block(meta, n=1000):
    return (tile.cdiv(n, meta["BLOCK_SIZE"]),)


def counting(monkeypatch, kernel):
    """Counts the wrapper's binds by inspect (KernelWrapper._bind)."""
    binds = []
    bind = kernel._bind
    monkeypatch.setattr(kernel, "_bind", lambda *args: binds.append(args) or bind(*args))
    return binds


def test_an_autotuned_call_after_the_first_packs_as_the_first(gpu, monkeypatch):
    timer = RankingTimer({(256, 1000): 1.0})
    kernel = tuned_add(timer)
    binds = counting(monkeypatch, kernel)
    x, y, out = vectors()
    kernel[by_block](x, y, out, 1000)
    # Three configs timed (a launch each), then the caller's launch.
    assert len(timer.timed) == 3 and gpu.prepared == 3 and len(gpu.calls) == 4
    assert kernel.best_config is ADD_CONFIGS[1] and len(binds) == 1
    tuned = gpu.last
    assert tuned[-1] == (4, 1, 1)   # cdiv(1000, 256)
    # The second call: nothing bound by inspect, specialised or timed; the
    # same kernel, arguments and grid.
    kernel.best_config = None
    kernel[by_block](x, y, out, 1000)
    assert gpu.prepared == 3 and len(binds) == 1 and len(timer.timed) == 3
    assert gpu.last == tuned and kernel.best_config is ADD_CONFIGS[1]
    # Other tensors of the same kinds, by keyword, through run(): their
    # addresses packed, by the same kernel.
    a, b, c = vectors()
    kernel.run(y_ptr=b, x_ptr=a, output_ptr=c, n_elements=1000, grid=(2, 3))
    assert gpu.prepared == 3 and len(binds) == 1
    handle, _, _, fields, grid = gpu.last
    assert handle == tuned[0] and grid == (2, 3, 1)
    assert [struct.unpack("=Q", value)[0] for _, _, value in fields[:3]] == \
        [t.data_ptr() for t in (a, b, c)]
    assert struct.unpack("=q", fields[3][2])[0] == 1000


def test_another_autotune_key_is_tuned_and_each_key_keeps_its_config(gpu):
    timer = RankingTimer({(256, 1000): 1.0, (64, 1001): 1.0})
    kernel = tuned_add(timer)
    x, y, out = vectors(1024)

    def launch(n):
        kernel[lambda meta: by_block(meta, n)](x, y, out, n)
        return gpu.last[0]

    first = launch(1000)
    assert launch(1000) == first and len(timer.timed) == 3
    # 1001 is an int of the kind 1000 is: the launch path would take it,
    # but it is another key of the autotuner's, tuned again.
    other = launch(1001)
    assert len(timer.timed) == 6 and kernel.best_config is ADD_CONFIGS[2]
    assert other != first
    prepared = gpu.prepared
    assert launch(1000) == first and kernel.best_config is ADD_CONFIGS[1]
    assert launch(1001) == other and kernel.best_config is ADD_CONFIGS[2]
    assert len(timer.timed) == 6 and gpu.prepared == prepared
    # Another dtype is another key; and a cache emptied tunes again.
    half = vectors(1024, torch.float16)
    kernel[lambda meta: by_block(meta)](*half, 1000)
    assert len(timer.timed) == 9
    kernel.cache.clear()
    launch(1000)
    assert len(timer.timed) == 12 and len(kernel.cache) == 1


def test_autotuning_reads_tile_interpret_each_call(gpu, monkeypatch):
    kernel = tuned_add(RankingTimer())
    x, y, out = vectors()
    kernel[by_block](x, y, out, 1000)
    kernel[by_block](x, y, out, 1000)
    launches = len(gpu.calls)
    interpreted = []
    monkeypatch.setattr(launcher, "_run_interpreter",
                        lambda spec, compiled, grid: interpreted.append(grid))
    monkeypatch.setenv("TILE_INTERPRET", "1")
    kernel[by_block](x, y, out, 1000)
    assert interpreted and len(gpu.calls) == launches
    assert any(key[-1] == "interp" for key in kernel.cache)


def test_heuristics_run_on_every_call(gpu, monkeypatch):
    seen = []
    blocks = iter([128, 128, 128, 256, 128])

    def block(args):
        seen.append(dict(args))
        return next(blocks)

    kernel = tile.heuristics({"BLOCK_SIZE": block})(fresh(EXAMPLE.add_kernel))
    binds = counting(monkeypatch, kernel)
    x, y, out = vectors()
    grids = []

    def grid(meta):
        grids.append(meta["BLOCK_SIZE"])
        return by_block(meta)

    for _ in range(3):
        kernel[grid](x, y, out, 1000, num_warps=2)
    assert len(seen) == 3 and gpu.prepared == 1 and binds == []
    assert seen[-1] == {"x_ptr": x, "y_ptr": y, "output_ptr": out, "n_elements": 1000,
                        "num_warps": 2}
    assert gpu.calls[0] == gpu.calls[2]
    # The launch is keyed by what they compute: another block, another
    # kernel; the first again, the first's.
    kernel[grid](x, y, out, 1000, num_warps=2)
    assert gpu.prepared == 2 and gpu.last[0] != gpu.calls[0][0]
    kernel[grid](x, y, out, 1000, num_warps=2)
    assert gpu.prepared == 2 and gpu.last == gpu.calls[0]
    assert len(seen) == 5 and grids == [128, 128, 128, 256, 128]


@tile.jit
def scaled_add(X, Y, Out, n, BLOCK_SIZE: tl.constexpr, SCALE: tl.constexpr = 1):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    x = tl.load(X + offsets, mask=mask)
    y = tl.load(Y + offsets, mask=mask)
    tl.store(Out + offsets, x + y * SCALE, mask=mask)


def test_autotune_over_heuristics_after_the_first_call(gpu):
    seen = []

    def scale(args):
        seen.append((args["BLOCK_SIZE"], args["num_warps"], args["SCALE"]))
        return args["BLOCK_SIZE"] // 64

    timer = RankingTimer()
    kernel = tile.autotune(configs=ADD_CONFIGS[:2], key=["n"], timer=timer)(
        tile.heuristics({"SCALE": scale})(fresh(scaled_add)))
    x, y, out = vectors()
    kernel[by_block](x, y, out, 1000)
    # Once a config prepared (the caller's launch is the chosen one's).
    assert seen == [(128, 4, 1), (256, 8, 1)]
    prepared = gpu.prepared
    for _ in range(2):
        kernel[by_block](x, y, out, 1000)
    assert seen[-2:] == [(128, 4, 1)] * 2 and gpu.prepared == prepared + 1
    assert gpu.calls[-1] == gpu.calls[-2] == gpu.calls[2]
    assert len(timer.timed) == 2


def bad_autotuned_calls(x, y, out):
    """(grid, args, kwargs) of calls an autotuned add_kernel refuses."""
    complex_y = on_gpu(torch.rand(4).to(torch.complex64))
    return [(by_block, (x, y, out, 1000), {"BLOCK_SIZE": 64}),
            (by_block, (x, y, out, 1000), {"num_warps": 2}),
            (by_block, (x, y, out, 1000, 64, 5), {}),
            (by_block, (x, y, out), {}),
            (by_block, (x, y, out, 1000), {"n_elements": 1000}),
            (by_block, (x, y, out, 1000), {"num_ctas": 2}),
            (by_block, (x, complex_y, out, 1000), {}),
            (by_block, (x, y, out, "1000"), {}),
            (by_block, (x, y, out, 2**64), {}),
            (by_block, (x, torch.rand(1000), out, 1000), {}),
            ((0,), (x, y, out, 1000), {}),
            ((1, 70000), (x, y, out, 1000), {}),
            ((True,), (x, y, out, 1000), {}),
            (lambda meta: None, (x, y, out, 1000), {})]


def error_of(kernel, grid, args, kwargs):
    """(type, message) of what ``kernel[grid](*args, **kwargs)`` raises."""
    with pytest.raises(Exception) as raised:
        kernel[grid](*args, **kwargs)
    return type(raised.value), str(raised.value)


def test_bad_input_after_the_first_autotuned_call(gpu):
    """Each bad call gets what it gets from a kernel never launched."""
    x, y, out = vectors()
    kernel = tuned_add(RankingTimer())
    kernel[by_block](x, y, out, 1000)
    kernel[by_block](x, y, out, 1000)
    launches = len(gpu.calls)
    for grid, args, kwargs in bad_autotuned_calls(x, y, out):
        before = error_of(tuned_add(RankingTimer()), grid, args, kwargs)
        assert error_of(kernel, grid, args, kwargs) == before
        assert before[0] in (TypeError, ValueError)
    assert len(gpu.calls) == launches
    # The same under @tile.heuristics, whose function runs as often.
    runs = []

    def heuristic():
        return tile.heuristics({"BLOCK_SIZE": lambda args: runs.append(1) or 128})(
            fresh(EXAMPLE.add_kernel))

    kernel = heuristic()
    kernel[by_block](x, y, out, 1000)
    kernel[by_block](x, y, out, 1000)
    for grid, args, kwargs in bad_autotuned_calls(x, y, out):
        if "num_warps" in kwargs:
            continue   # no error here: a heuristic chooses no option
        runs.clear()
        before = error_of(heuristic(), grid, args, kwargs), len(runs)
        runs.clear()
        assert (error_of(kernel, grid, args, kwargs), len(runs)) == before
    assert len(gpu.calls) == launches + 2


def test_the_fast_binder_binds_as_inspect():
    @tile.jit
    def kernel(P, type, a, d=7, e=None, B: tl.constexpr = 4, C: tl.constexpr = 2):
        pass

    wrapper = tile.heuristics({"B": lambda args: 8})(kernel)
    base = torch.zeros(4)
    for args, kwargs in [((base, 2.5, 1), {}), ((base, 2.5), {"a": 3, "e": 1.0}),
                         ((base, 2.5, 1, 2, 3), {"C": 5, "num_warps": 8, "num_stages": 3}),
                         ((), {"a": 1, "type": 2, "P": base})]:
        named = wrapper._fast_bind(args, kwargs)
        assert list(named.items()) == list(wrapper._bind(args, kwargs)[1].items())
    # What it leaves to inspect: a missing argument, one given twice, an
    # unknown keyword, too many, and what the heuristics compute.
    for args, kwargs in [((base, 2.5), {}), ((base, 2.5, 1), {"a": 1}),
                         ((base, 2.5, 1), {"num_ctas": 2}), ((base,) * 8, {}),
                         ((base, 2.5, 1), {"B": 8}), ((base, 2.5, 1, 2, 3, 8), {})]:
        assert wrapper._fast_bind(args, kwargs) is None
    # The names it refuses follow the heuristics'.
    wrapper.values["C"] = lambda args: 1
    assert wrapper._fast_bind((base, 2.5, 1), {"C": 5}) is None


def test_the_call_key_is_the_key(monkeypatch):
    kernel = tile.autotune(configs=ADD_CONFIGS, key=["n_elements", "x_ptr"])(
        fresh(EXAMPLE.add_kernel))
    lookalike, cpu = vectors()[0], torch.rand(8)
    parameter = torch.nn.Parameter(torch.rand(8), requires_grad=False)
    cases = [{"x_ptr": lookalike, "y_ptr": cpu, "n_elements": 5},
             {"x_ptr": cpu, "y_ptr": cpu, "n_elements": [1]},
             {"x_ptr": parameter, "y_ptr": lookalike, "output_ptr": cpu.half()},
             {"x_ptr": 3, "n_elements": None, "num_warps": 4}]
    for interpret in ("0", "1"):
        monkeypatch.setenv("TILE_INTERPRET", interpret)
        for named in cases:
            assert kernel._call_key(named) == kernel._key(named, kernel._backend(named))
