"""kernel[grid](...)'s launches after the first on the GPU path
(tile/launcher.py, _Binder and _FastLaunch): a call whose arguments key
like an earlier launch's skips the specialisation and packs its arguments
in one precompiled function; any other call specialises again, and bad
input gets the errors it got before.  No GPU: the tensors are CPU tensors
that say they are on cuda:0, and what needs the driver is replaced (the
compute capability, the current stream, and the runtime's tileLaunchGrid,
which records what it is given)."""

import os
import struct

import pytest

torch = pytest.importorskip("torch")

import tile  # noqa: E402
import tile.language as tl  # noqa: E402
from conftest import REPO  # noqa: E402
from tile import launcher, runtime  # noqa: E402
from tile.compile import load_module  # noqa: E402

EXAMPLE = load_module(os.path.join(REPO, "examples", "pytorch_launch.py"))

pytestmark = pytest.mark.usefixtures("launcher_tools")

CUDA0 = torch.device("cuda", 0)


class CudaLookalike(torch.Tensor):
    """A CPU tensor that says it is on cuda:0 (its address is real, so
    its alignment is too)."""

    __torch_function__ = torch._C._disabled_torch_function_impl
    device = property(lambda self: CUDA0)
    is_cuda = property(lambda self: True)


def on_gpu(tensor):
    return tensor.as_subclass(CudaLookalike)


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
