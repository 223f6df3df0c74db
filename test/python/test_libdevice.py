"""tl.erf and Triton's libdevice functions (tile.language.extra.libdevice),
launched on CPU tensors (the interpreter) against float64 references at a
size that is not a multiple of the block.  The GPU's approximations are
checked by test/gpu/check_jit_launch.py."""

import math

import pytest

torch = pytest.importorskip("torch")

import tile  # noqa: E402
import tile.language as tl  # noqa: E402
from tile.compiler.errors import CompilationError  # noqa: E402
from tile.language.extra import libdevice  # noqa: E402

pytestmark = pytest.mark.usefixtures("launcher_tools")

# Each row of the unary kernel's output, in order, with its reference.
UNARY = [
    ("erf", torch.erf), ("erfc", torch.erfc), ("log1p", torch.log1p),
    ("expm1", torch.expm1), ("atan", torch.atan), ("asin", torch.asin),
    ("acos", torch.acos), ("cbrt", lambda x: torch.sign(x) * x.abs() ** (1 / 3)),
    ("trunc", torch.trunc), ("sinh", torch.sinh), ("cosh", torch.cosh), ("tan", torch.tan),
    ("log10", lambda x: torch.log10(x.abs() + 0.5)),
    ("exp10", lambda x: 10 ** x),
]


@tile.jit
def unary_kernel(X, OUT, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    tl.store(OUT + 0 * n + offs, tl.erf(x), mask=mask)
    tl.store(OUT + 1 * n + offs, libdevice.erfc(x), mask=mask)
    tl.store(OUT + 2 * n + offs, libdevice.log1p(x), mask=mask)
    tl.store(OUT + 3 * n + offs, libdevice.expm1(x), mask=mask)
    tl.store(OUT + 4 * n + offs, libdevice.atan(x), mask=mask)
    tl.store(OUT + 5 * n + offs, libdevice.asin(x), mask=mask)
    tl.store(OUT + 6 * n + offs, libdevice.acos(x), mask=mask)
    tl.store(OUT + 7 * n + offs, libdevice.cbrt(x), mask=mask)
    tl.store(OUT + 8 * n + offs, libdevice.trunc(x * 3.0), mask=mask)
    tl.store(OUT + 9 * n + offs, libdevice.sinh(x), mask=mask)
    tl.store(OUT + 10 * n + offs, libdevice.cosh(x), mask=mask)
    tl.store(OUT + 11 * n + offs, libdevice.tan(x), mask=mask)
    tl.store(OUT + 12 * n + offs, libdevice.log10(tl.abs(x) + 0.5), mask=mask)
    tl.store(OUT + 13 * n + offs, libdevice.exp10(x), mask=mask)


def test_unary_functions_match_float64():
    torch.manual_seed(0)
    n = 300
    # Inside (-1, 1), where every one of them is defined; 0 and tiny values
    # too, where log1p, expm1 and sinh must not cancel.
    x = torch.rand(n) * 1.98 - 0.99
    x[:4] = torch.tensor([0.0, 1e-7, -3e-6, 0.5])
    out = torch.empty(len(UNARY), n)
    unary_kernel[(triton_cdiv(n, 128),)](x, out, n, BLOCK=128)
    x64 = x.double()
    for row, (name, reference) in enumerate(UNARY):
        want = reference(x64 * 3.0 if name == "trunc" else x64)
        if name == "log10":
            want = torch.log10(x64.abs() + 0.5)
        torch.testing.assert_close(out[row].double(), want, rtol=2e-6, atol=1e-7,
                                   msg=lambda m, name=name: f"{name}: {m}")


def triton_cdiv(a, b):
    return (a + b - 1) // b


@tile.jit
def binary_kernel(X, Y, OUT, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(X + offs, mask=mask)
    y = tl.load(Y + offs, mask=mask)
    tl.store(OUT + offs, libdevice.pow(x, y), mask=mask)
    tl.store(OUT + n + offs, libdevice.atan2(y, x), mask=mask)
    tl.store(OUT + 2 * n + offs, libdevice.fmax(x, y), mask=mask)
    tl.store(OUT + 3 * n + offs, libdevice.isnan(x).to(tl.float32), mask=mask)
    tl.store(OUT + 4 * n + offs, libdevice.isinf(y).to(tl.float32), mask=mask)


def test_pow_is_powf_and_binary_functions():
    torch.manual_seed(1)
    n = 200
    x = torch.rand(n) * 8 - 4
    y = torch.randint(-3, 4, (n,)).float()
    y[n // 2:] += torch.rand(n - n // 2)            # non-integer powers too
    cases = [(-2.0, 3.0), (-2.0, 0.5), (0.0, 2.0), (0.0, -1.0), (math.nan, 0.0),
             (1.0, math.nan), (2.0, 10.0), (-3.0, 2.0), (math.inf, 2.0), (0.5, math.inf)]
    for i, (a, b) in enumerate(cases):
        x[i], y[i] = a, b
    out = torch.empty(5, n)
    binary_kernel[(triton_cdiv(n, 64),)](x, y, out, n, BLOCK=64)
    x64, y64 = x.double(), y.double()
    torch.testing.assert_close(out[0].double(), torch.pow(x64, y64), rtol=1e-5, atol=1e-6,
                               equal_nan=True)
    torch.testing.assert_close(out[1].double(), torch.atan2(y64, x64), rtol=2e-6, atol=1e-7,
                               equal_nan=True)
    torch.testing.assert_close(out[2], torch.fmax(x, y))
    assert out[3].tolist() == torch.isnan(x).float().tolist()
    assert out[4].tolist() == torch.isinf(y).float().tolist()


@tile.jit
def half_erf_kernel(X, OUT, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(OUT + offs, tl.math.erf(tl.load(X + offs, mask=mask)), mask=mask)


def test_erf_in_half_precision_rounds_once():
    torch.manual_seed(2)
    n = 100
    x = (torch.randn(n) * 2).half()
    out = torch.empty(n, dtype=torch.float16)
    half_erf_kernel[(2,)](x, out, n, BLOCK=64)
    assert torch.equal(out, torch.erf(x.double()).half())


@tile.jit
def integer_erf_kernel(X, OUT):
    tl.store(OUT, tl.erf(tl.load(X)))


def test_erf_of_an_integer_is_refused_by_name():
    with pytest.raises(CompilationError, match="tl.erf expects a floating-point operand"):
        integer_erf_kernel[(1,)](torch.zeros(1, dtype=torch.int32), torch.zeros(1))


def test_libdevice_is_where_triton_has_it():
    assert tl.extra.libdevice is libdevice
    assert tl.extra.cuda.libdevice is libdevice
    assert libdevice.erf is tl.erf is tl.math.erf
