"""Rounding to fp8 saturates, on the interpreter as on the GPU (cvt
.satfinite): beyond the largest finite value, infinities included, gives
that value; NaN stays NaN; values in range round to nearest even."""

import math

import pytest

torch = pytest.importorskip("torch")

import tile  # noqa: E402
import tile.language as tl  # noqa: E402

pytestmark = pytest.mark.usefixtures("launcher_tools")


@tile.jit
def round_trip(X, Y, N, E5: tl.constexpr):
    offs = tl.arange(0, 16)
    x = tl.load(X + offs, mask=offs < N)
    if E5:
        y = x.to(tl.float8e5).to(tl.float32)
    else:
        y = x.to(tl.float8e4nv).to(tl.float32)
    tl.store(Y + offs, y, mask=offs < N)


@pytest.mark.parametrize("e5, largest", [(False, 448.0), (True, 57344.0)])
def test_saturates(e5, largest):
    values = [1.0, 3.0, 1000.0, -1e6, math.inf, -math.inf, math.nan, 0.1]
    x = torch.tensor(values)
    y = torch.empty_like(x)
    round_trip[(1,)](x, y, len(values), E5=e5)
    expected = torch.tensor(values).to(torch.float8_e5m2 if e5 else torch.float8_e4m3fn)
    expected = expected.float()
    for i, v in enumerate(values):
        if math.isnan(v):
            assert math.isnan(y[i])
        elif abs(v) > largest:
            assert y[i] == math.copysign(largest, v), (v, y[i])
        else:
            assert y[i] == expected[i], (v, y[i], expected[i])
