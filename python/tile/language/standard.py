"""Builtins of Triton's language that are compositions of others: ordinary
@tile.jit functions in the tile language, inlined where they are called,
with Triton's names and signatures.
"""

from ..jit import jit
from . import core as tl
from . import math

# Triton's limit on the elements of one tensor, the same as Tile's.
TRITON_MAX_TENSOR_NUMEL = tl.MAX_TILE_ELEMENTS


@jit
def add(x, y, sanitize_overflow: tl.constexpr = True):
    """x + y (``sanitize_overflow`` is accepted and ignored)."""
    return x + y


@jit
def sub(x, y, sanitize_overflow: tl.constexpr = True):
    """x - y (``sanitize_overflow`` is accepted and ignored)."""
    return x - y


@jit
def mul(x, y, sanitize_overflow: tl.constexpr = True):
    """x * y (``sanitize_overflow`` is accepted and ignored)."""
    return x * y


@jit
def clamp(x, min, max, propagate_nan: tl.constexpr = tl.PropagateNan.NONE):
    """``x`` limited to [min, max] elementwise, as ``tl.minimum(tl.maximum(x,
    min), max)`` with ``propagate_nan`` for both; undefined where min > max
    (as in Triton)."""
    return tl.minimum(tl.maximum(x, min, propagate_nan), max, propagate_nan)


@jit
def _extreme_index(input, axis, tie_break_left: tl.constexpr, keep_dims: tl.constexpr,
                   LARGEST: tl.constexpr):
    """tl.max's (LARGEST) or tl.min's indices along ``axis``."""
    if LARGEST:
        _, index = tl.max(input, axis, return_indices=True,
                          return_indices_tie_break_left=tie_break_left, keep_dims=keep_dims)
    else:
        _, index = tl.min(input, axis, return_indices=True,
                          return_indices_tie_break_left=tie_break_left, keep_dims=keep_dims)
    return index


@jit
def argmax(input, axis, tie_break_left: tl.constexpr = True, keep_dims: tl.constexpr = False):
    """The int32 index along ``axis`` of each largest element (the first of
    equal ones with ``tie_break_left``, else the last)."""
    return _extreme_index(input, axis, tie_break_left, keep_dims, True)


@jit
def argmin(input, axis, tie_break_left: tl.constexpr = True, keep_dims: tl.constexpr = False):
    """The int32 index along ``axis`` of each smallest element (the first of
    equal ones with ``tie_break_left``, else the last)."""
    return _extreme_index(input, axis, tie_break_left, keep_dims, False)


@jit
def unsqueeze(x, dim: tl.constexpr):
    """``x`` with a new dimension of length 1 at ``dim``: ``tl.expand_dims``."""
    return tl.expand_dims(x, dim)


@jit
def softmax(x, dim: tl.constexpr = None, keep_dims: tl.constexpr = None,
            ieee_rounding: tl.constexpr = False):
    """exp(x - max) / sum(exp(x - max)) along ``dim`` (0 when None, as in
    Triton), the result of ``x``'s shape (``keep_dims`` and
    ``ieee_rounding`` are accepted and ignored: the division rounds as
    ``/``)."""
    axis: tl.constexpr = 0 if dim is None else dim
    shifted = x - tl.max(x, axis, keep_dims=True)
    numerator = math.exp(shifted)
    return numerator / tl.sum(numerator, axis, keep_dims=True)


@jit
def swizzle2d(i, j, size_i, size_j, size_g):
    """Where (i, j) of a size_i x size_j grid goes when its ids are dealt out
    size_g rows at a time, down each group's columns (the grouped order of
    Triton's matmul tutorial, for L2 reuse): the row-major id of (i, j)
    picks its group of size_g rows and its place in the group, which is
    read column-major; the last group may hold fewer rows."""
    linear = i * size_j + j
    per_group = size_g * size_j
    first_row = linear // per_group * size_g
    rows = tl.minimum(size_i - first_row, size_g)
    within = linear % per_group
    return first_row + within % rows, within // rows
