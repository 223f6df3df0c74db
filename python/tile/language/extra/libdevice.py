"""The functions of CUDA's libdevice that Triton kernels call as
``libdevice.NAME`` (``from triton.language.extra import libdevice``), with
Triton's names: with only the import changed, ``from tile.language.extra
import libdevice``.

Tile has no libdevice: each function is the tile language's own builtin, a
polynomial approximation in fp32 made by the compiler (erf, atan, ...;
fp16 and bf16 are widened to fp32 and rounded back), or a composition of
those below.  The interpreter computes each in float64 and rounds once,
so the GPU's results differ from it by the approximations' errors (about
1e-6 relative in fp32; pow, exp10 and log10 go through exp2 and log2 and
lose more for large results).  docs/language.md lists them.
"""

from ...jit import jit
from .. import core
from .. import math as _math

# The builtins tile.language already has, under libdevice's names.
abs = fabs = _math.abs
ceil = _math.ceil
cos = _math.cos
erf = _math.erf
exp = fast_expf = _math.exp
exp2 = _math.exp2
floor = _math.floor
fma = _math.fma
log = fast_logf = _math.log
log2 = _math.log2
rsqrt = _math.rsqrt
sin = _math.sin
sqrt = _math.sqrt
tanh = _math.tanh
fmax = core.maximum
fmin = core.minimum


@core.builtin
def erfc(x) -> core.tensor:
    """1 - erf(x), accurate where erf(x) is near 1."""


@core.builtin
def atan(x) -> core.tensor:
    """The arc tangent of ``x``, in (-pi/2, pi/2)."""


@core.builtin
def atan2(y, x) -> core.tensor:
    """The angle of the point (x, y), in [-pi, pi]."""


@core.builtin
def asin(x) -> core.tensor:
    """The arc sine of ``x``, in [-pi/2, pi/2]; NaN outside [-1, 1]."""


@core.builtin
def acos(x) -> core.tensor:
    """The arc cosine of ``x``, in [0, pi]; NaN outside [-1, 1]."""


@core.builtin
def cbrt(x) -> core.tensor:
    """The cube root of ``x`` (negative for negative ``x``)."""


@core.builtin
def trunc(x) -> core.tensor:
    """``x`` rounded toward zero."""


_LOG10_2 = 0.30102999566398120
_LOG2_10 = 3.32192809488736235


@jit
def log1p(x):
    """log(1 + x), accurate for x near 0: there 2 atanh(s), s = x / (2 + x),
    by its series (the GPU's log2 is accurate to 2^-22 absolute, too little
    for a result near 0); elsewhere log(1 + x)."""
    s = x / (2.0 + x)
    s2 = s * s
    series = 2.0 * s * (1.0 + s2 * (1.0 / 3 + s2 * (1.0 / 5 + s2 * (1.0 / 7 + s2 * (
        1.0 / 9 + s2 * (1.0 / 11))))))
    return core.where(_math.abs(x) < 0.25, series, _math.log(1.0 + x))


@jit
def expm1(x):
    """exp(x) - 1, accurate for x near 0: there its Taylor series to x^10;
    elsewhere exp(x) - 1."""
    taylor = x * (1.0 + x * (1.0 / 2 + x * (1.0 / 6 + x * (1.0 / 24 + x * (1.0 / 120 + x * (
        1.0 / 720 + x * (1.0 / 5040 + x * (1.0 / 40320 + x * (1.0 / 362880 + x * (
            1.0 / 3628800))))))))))
    return core.where(_math.abs(x) < 0.5, taylor, _math.exp(x) - 1.0)


@jit
def sinh(x):
    """The hyperbolic sine, from expm1 (no cancellation near 0)."""
    return 0.5 * (expm1(x) - expm1(-x))


@jit
def cosh(x):
    """The hyperbolic cosine."""
    return 0.5 * (_math.exp(x) + _math.exp(-x))


@jit
def tan(x):
    """The tangent, sin(x) / cos(x)."""
    return _math.sin(x) / _math.cos(x)


@jit
def log10(x):
    """The base-10 logarithm, log2(x) log10(2)."""
    return _math.log2(x) * _LOG10_2


@jit
def exp10(x):
    """10 to the power ``x``, exp2(x log2(10))."""
    return _math.exp2(x * _LOG2_10)


@jit
def isnan(x):
    """Whether each element of ``x`` is NaN (a boolean tensor)."""
    return x != x


@jit
def isinf(x):
    """Whether each element of ``x`` is infinite (a boolean tensor)."""
    return _math.abs(x) == float("inf")


@jit
def fast_dividef(x, y):
    """x / y (rounded as ``/``)."""
    return x / y


@jit
def pow(x, y):
    """``x`` to the power ``y``, as C's powf: |x|^y = exp2(y log2|x|); a
    negative ``x`` has a power only for integer ``y`` (negative for odd
    ``y``), else NaN; pow(x, 0) = pow(1, y) = 1, NaN or not."""
    magnitude = _math.exp2(y * _math.log2(_math.abs(x)))
    whole = _math.floor(y) == y
    odd = whole & (_math.floor(y * 0.5) != y * 0.5)
    result = core.where(x < 0, core.where(whole, core.where(odd, -magnitude, magnitude),
                                          float("nan")), magnitude)
    return core.where((y == 0) | (x == 1), 1.0, result)


__all__ = ["abs", "acos", "asin", "atan", "atan2", "cbrt", "ceil", "cos", "cosh", "erf",
           "erfc", "exp", "exp10", "exp2", "expm1", "fabs", "fast_dividef", "fast_expf",
           "fast_logf", "floor", "fma", "fmax", "fmin", "isinf", "isnan", "log", "log10",
           "log1p", "log2", "pow", "rsqrt", "sin", "sinh", "sqrt", "tan", "tanh", "trunc"]
