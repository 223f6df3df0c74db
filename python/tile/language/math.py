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
def floor(x) -> core.tensor:
    """``x`` rounded down to an integral value, elementwise (same type)."""


@core.builtin
def ceil(x) -> core.tensor:
    """``x`` rounded up to an integral value, elementwise (same type)."""


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


__all__ = ["exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "tanh", "floor",
           "ceil", "fma", "abs"]
