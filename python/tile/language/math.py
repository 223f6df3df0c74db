"""``tl.math``: elementwise math functions (the same builtins as ``tl.*``)."""

from . import core as _core

_core._declare(_core.MATH_BUILTINS, globals())

__all__ = list(_core.MATH_BUILTINS)
