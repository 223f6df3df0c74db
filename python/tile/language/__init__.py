"""The tile language: ``import tile.language as tl``.

Names follow Triton's ``triton.language``; see docs/language.md for what is
supported and how it differs.
"""

from . import core as _core
from .core import (  # noqa: F401
    PropagateNan,
    bfloat16,
    block_ptr_type,
    block_type,
    constexpr,
    dtype,
    float8e4nv,
    float8e5,
    float16,
    float32,
    float64,
    int1,
    int8,
    int16,
    int32,
    int64,
    pointer_type,
)

_core._declare(_core.LANGUAGE_BUILTINS, globals())

from . import math  # noqa: E402,F401

__all__ = (["constexpr", "dtype", "pointer_type", "block_type",
            "block_ptr_type", "PropagateNan", "math", "int1", "int8", "int16",
            "int32", "int64", "float8e5", "float8e4nv", "float16", "bfloat16",
            "float32", "float64"] + list(_core.LANGUAGE_BUILTINS))
