"""``tl.math``: elementwise math functions.

The same functions are ``tl.exp``, ``tl.log``, ...: ``tl.math.exp is tl.exp``.
Each takes a floating-point tensor, or a number (taken as fp32), and gives
a result of that type; an integer tensor is refused with a hint to convert
it.  ``abs`` takes integers too.
"""

from . import core

# The functions shadow Python's abs in this module.


@core._tensor_member
@core.builtin
def exp(x) -> core.tensor:
    """``e ** x``, elementwise."""


@core._tensor_member
@core.builtin
def exp2(x) -> core.tensor:
    """``2 ** x``, elementwise: fast and approximate (``tile.exp2``)."""


@core._tensor_member
@core.builtin
def log(x) -> core.tensor:
    """The natural logarithm of ``x``, elementwise."""


@core._tensor_member
@core.builtin
def log2(x) -> core.tensor:
    """The base-2 logarithm of ``x``, elementwise."""


@core._tensor_member
@core.builtin
def sqrt(x) -> core.tensor:
    """The square root of ``x``, elementwise."""


@core.builtin
def rsqrt(x) -> core.tensor:
    """``1 / sqrt(x)``, elementwise."""


@core.builtin
def sin(x) -> core.tensor:
    """The sine of ``x`` (radians), elementwise."""


@core.builtin
def cos(x) -> core.tensor:
    """The cosine of ``x`` (radians), elementwise."""


@core.builtin
def tanh(x) -> core.tensor:
    """The hyperbolic tangent of ``x``, elementwise: fast and approximate on
    the GPU (``tanh.approx.f32``, about 2^-11 relative error)."""


@core.builtin
def erf(x) -> core.tensor:
    """The error function of ``x``, elementwise; on the GPU a polynomial
    approximation in fp32 (fp16 and bf16 widened to it)."""


@core.builtin
def floor(x) -> core.tensor:
    """``x`` rounded down to an integral value, elementwise (same type)."""


@core.builtin
def ceil(x) -> core.tensor:
    """``x`` rounded up to an integral value, elementwise (same type)."""


@core.builtin
def div_rn(x, y) -> core.tensor:
    """``x / y`` rounded to nearest even (IEEE division), elementwise.

    ``/`` on fp32 is div.full.f32 on the GPU, as in Triton: within 2 ulp,
    several times cheaper. The operands are promoted as for ``/``.
    """


@core.builtin
def fma(x, y, z) -> core.tensor:
    """``x * y + z`` with one rounding, elementwise.

    The operands (tensors or numbers) are promoted to one floating-point
    type and broadcast to one shape as for arithmetic.
    """


@core._tensor_member
@core.builtin
def abs(x) -> core.tensor:
    """The absolute value of ``x``, elementwise.

    ``x`` is a float or an integer tensor, or a number; booleans are given
    back as they are.
    """


__all__ = ["exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "tanh", "erf", "floor",
           "ceil", "fma", "abs", "div_rn", "fdiv", "sqrt_rn", "umulhi"]


# -- compositions of the above, as Triton's tl.math has them ---------------
# (@tile.jit functions, inlined where called; imported late: the jit
# module needs the builtins above.)

from ..jit import jit as _jit  # noqa: E402
from .core import static_assert as _static_assert  # noqa: E402


@_jit
def fdiv(x, y, ieee_rounding: core.constexpr = False):
    """``x / y``: as ``/`` (fp32: within 2 ulp), or with ``ieee_rounding``
    rounded to nearest even (``div_rn``)."""
    if ieee_rounding:
        return div_rn(x, y)
    return x / y


@_jit
def sqrt_rn(x):
    """The square root rounded to nearest even: Tile's ``sqrt`` already is
    (sqrt.rn on the GPU)."""
    return sqrt(x)


@_jit
def umulhi(x, y):
    """The high 32 bits of the 64-bit product of ``x`` and ``y``, int32
    tensors whose bits are taken as unsigned (as Triton's on int32): the
    result's bits, as int32, elementwise."""
    _static_assert(x.dtype == core.int32 and y.dtype == core.int32,
                   "tl.umulhi takes int32 tensors")
    low = 0xFFFFFFFF
    return (((x.to(core.int64) & low) * (y.to(core.int64) & low)) >> 32).to(core.int32)
