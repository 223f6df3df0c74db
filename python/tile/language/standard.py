"""Builtins of Triton's language that are compositions of others: ordinary
@tile.jit functions in the tile language, inlined where they are called,
with Triton's names and signatures.
"""

import math as pymath

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
    Triton), the result of ``x``'s shape (``keep_dims`` is accepted and
    ignored); the division as ``tl.fdiv`` with ``ieee_rounding``."""
    axis: tl.constexpr = 0 if dim is None else dim
    shifted = x - tl.max(x, axis, keep_dims=True)
    numerator = math.exp(shifted)
    return math.fdiv(numerator, tl.sum(numerator, axis, keep_dims=True), ieee_rounding)


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


# -- flip, sort, topk, bitonic_merge -------------------------------------------
#
# On tiles of power-of-two sides, reversing or sorting along a dimension is
# done by exchanging blocks: the dimension seen as (blocks, 2, j) pairs each
# element with the one j away, and a reduction over the pair's axis gives
# each element its partner (a ^ (a ^ b) = b, on the bits).


@jit
def _bits(x):
    """``x``'s elements as integers of their width, bit for bit."""
    bits = x.dtype.primitive_bitwidth
    tl.static_assert(bits >= 8, "the element exchanges of flip, sort, scans, reductions and "
                     "gather take 8- to 64-bit elements, not int1")
    if bits == 8:
        return x.to(tl.int8, bitcast=True)
    elif bits == 16:
        return x.to(tl.int16, bitcast=True)
    elif bits == 32:
        return x.to(tl.int32, bitcast=True)
    return x.to(tl.int64, bitcast=True)


@jit
def _pick(x, which, axis, keep_dims):
    """The one element of ``x`` along ``axis`` where ``which`` holds, bit
    for bit (0 where it holds nowhere)."""
    ix = _bits(x)
    picked = tl.xor_sum(tl.where(which, ix, 0), axis, keep_dims=keep_dims)
    return picked.to(ix.dtype).to(x.dtype, bitcast=True)


@jit
def _partner(x, axis):
    """Each element's partner across ``axis``, of 2 elements: the other
    one, bit for bit."""
    ix = _bits(x)
    partner = ix ^ tl.xor_sum(ix, axis, keep_dims=True).to(ix.dtype)
    return partner.to(x.dtype, bitcast=True)


@jit
def _pairs(x, dim, j):
    """``x`` with dimension ``dim`` (of n) seen as (n / 2j, 2, j): elements
    j apart paired along the new middle axis, ``dim + 1``."""
    n = x.shape[dim]
    return tl.reshape(x, x.shape[:dim] + (n // (2 * j), 2, j) + x.shape[dim + 1:])


@jit
def _last_dim(x, dim, what):
    rank = len(x.shape)
    tl.static_assert(dim is None or dim == rank - 1 or dim == -1,
                     what + " works along the last dimension")
    return rank - 1


@jit
def flip(x, dim=None):
    """``x`` reversed along ``dim`` (the last when None), a power of two
    long."""
    rank = len(x.shape)
    if dim is None:
        d = rank - 1
    elif dim < 0:
        d = dim + rank
    else:
        d = dim
    tl.static_assert(0 <= d and d < rank, "flip: dim must be None or in [-rank, rank)")
    n = x.shape[d]
    # Swapping the halves of every block of 2j, for j = n/2, ..., 1, takes
    # element i to n - 1 - i.
    for step in tl.static_range(int(pymath.log2(n))):
        x = tl.reshape(_partner(_pairs(x, d, n >> (step + 1)), d + 1), x.shape)
    return x


@jit
def _compare_and_swap(x, j, k, descending):
    """A step of a bitonic sort along the last dimension: elements i and
    i ^ j (j < k) put in order, ascending where i & k is 0 and descending
    where it is not (the reverse with ``descending``; k the dimension's
    length orders every pair one way)."""
    rank = len(x.shape)
    n = x.shape[rank - 1]
    h = _pairs(x, rank - 1, j)
    partner = _partner(h, rank)
    second = tl.reshape(tl.arange(0, 2), (1,) * rank + (2, 1))
    blocks = tl.reshape(tl.arange(0, n // (2 * j)), (1,) * (rank - 1) + (n // (2 * j), 1, 1))
    if descending:
        down = (blocks * (2 * j)) & k == 0
    else:
        down = (blocks * (2 * j)) & k != 0
    # The first of a pair keeps the smaller where the block ascends; the
    # second the larger.
    keep_partner = (h > partner) != (down.to(tl.int32) ^ second != 0)
    return tl.reshape(tl.where(keep_partner, partner, h), x.shape)


@jit
def _bitonic_sort(x, stages, descending):
    """The first ``stages`` stages of a bitonic sort along the last
    dimension: runs of 2 ** stages sorted, alternately ascending and
    descending (all ``descending`` at the last stage)."""
    for stage in tl.static_range(1, stages + 1):
        k = 1 << stage
        for sub in tl.static_range(stage):
            x = _compare_and_swap(x, k >> (sub + 1), k, descending)
    return x


@jit
def sort(x, dim=None, descending=False):
    """``x`` sorted along its last dimension (``dim`` None or the last),
    ascending or ``descending``: a bitonic sort, exact for any elements
    but NaN (whose place is unspecified)."""
    last = _last_dim(x, dim, "sort")
    return _bitonic_sort(x, int(pymath.log2(x.shape[last])), descending)


@jit
def topk(x, k, dim=None, descending=True):
    """The ``k`` largest elements of ``x`` along its last dimension,
    largest first (the ``k`` smallest, smallest first, without
    ``descending``); ``k`` a power of two no larger than the dimension."""
    last = _last_dim(x, dim, "topk")
    n = x.shape[last]
    tl.static_assert(k > 0 and k <= n and (k & (k - 1)) == 0,
                     "topk: k must be a power of two from 1 to the dimension")
    x = _bitonic_sort(x, int(pymath.log2(n)), descending)
    # Sorted, the first half holds the larger (smaller) of each pair of
    # halves: keep it until k are left.
    while_n = n
    for _ in tl.static_range(int(pymath.log2(n // k))):
        halves = tl.reshape(x, x.shape[:last] + (2, while_n // 2))
        if descending:
            x = tl.max(halves, last)
        else:
            x = tl.min(halves, last)
        while_n = while_n // 2
    return x


@jit
def bitonic_merge(x, dim=None, descending=False):
    """A bitonic sequence along the last dimension (ascending then
    descending, or the reverse) sorted, ascending or ``descending``: the
    last stage of ``tl.sort``."""
    last = _last_dim(x, dim, "bitonic_merge")
    n = x.shape[last]
    for sub in tl.static_range(int(pymath.log2(n))):
        x = _compare_and_swap(x, n >> (sub + 1), n, descending)
    return x



# -- scans and reductions with a combine function ---------------------------
#
# The same exchanges make scans and reductions of any associative combine
# function: an element is taken out of a pair of blocks exactly through
# xor_sum over its bits with the others masked to zero.


@jit
def _index_along(x, axis):
    """The index along ``axis``, broadcastable against ``x``."""
    rank = len(x.shape)
    n = x.shape[axis]
    return tl.reshape(tl.arange(0, n), (1,) * axis + (n,) + (1,) * (rank - axis - 1))


@jit
def _element_at(x, axis, index):
    """``x``'s element at ``index`` along ``axis`` (kept, as 1), bit for
    bit."""
    return _pick(x, _index_along(x, axis) == index, axis, True)


@jit
def _axis(x, axis, what):
    rank = len(x.shape)
    tl.static_assert(rank > 0, what + " takes a tensor")
    if axis < 0:
        return axis + rank
    return axis


@jit
def _combine(combine_fn, a, b, single):
    """combine_fn of the tuples ``a`` and ``b`` (Triton's convention: the
    first operand's tensors, then the second's), as a tuple."""
    if single:
        return (combine_fn(a[0], b[0]),)
    return combine_fn(*(a + b))


@jit
def _scan_tuple(inputs, axis, combine_fn, reverse, single):
    """tl.associative_scan of the tensors ``inputs`` (one shape)."""
    axis = _axis(inputs[0], axis, "associative_scan")
    shape = inputs[0].shape
    n = shape[axis]
    xs = inputs
    # Blocks of j scanned, pairs of them merged: the second's elements take
    # the first's last (with reverse, the first's take the second's first).
    for level in tl.static_range(int(pymath.log2(n))):
        j = 1 << level
        hs = ()
        edges = ()
        for i in tl.static_range(len(xs)):
            h = _pairs(xs[i], axis, j)
            hs = hs + (h,)
            if reverse:
                edges = edges + (_element_at(_element_at(h, axis + 1, 1), axis + 2, 0),)
            else:
                edges = edges + (_element_at(_element_at(h, axis + 1, 0), axis + 2, j - 1),)
        second = _index_along(hs[0], axis + 1) == 1
        if reverse:
            combined = _combine(combine_fn, hs, edges, single)
        else:
            combined = _combine(combine_fn, edges, hs, single)
        xs = ()
        for i in tl.static_range(len(hs)):
            if reverse:
                merged = tl.where(second, hs[i], combined[i])
            else:
                merged = tl.where(second, combined[i], hs[i])
            xs = xs + (tl.reshape(merged.to(hs[i].dtype), shape),)
    return xs


@jit
def _reduce_tuple(inputs, axis, combine_fn, keep_dims, single):
    """tl.reduce of the tensors ``inputs`` (one shape) along ``axis`` (not
    None)."""
    axis = _axis(inputs[0], axis, "reduce")
    xs = inputs
    for _ in tl.static_range(int(pymath.log2(inputs[0].shape[axis]))):
        firsts = ()
        seconds = ()
        for i in tl.static_range(len(xs)):
            h = _pairs(xs[i], axis, 1)
            firsts = firsts + (_element_at(h, axis + 1, 0),)
            seconds = seconds + (_element_at(h, axis + 1, 1),)
        combined = _combine(combine_fn, firsts, seconds, single)
        shape = xs[0].shape
        xs = ()
        for i in tl.static_range(len(combined)):
            xs = xs + (tl.reshape(combined[i],
                                  shape[:axis] + (shape[axis] // 2,) + shape[axis + 1:]),)
    out = ()
    for i in tl.static_range(len(xs)):
        if keep_dims:
            out = out + (xs[i],)
        elif len(xs[i].shape) == 1:
            out = out + (tl.max(xs[i], 0),)   # the one element, as a scalar
        else:
            out = out + (tl.reshape(xs[i], xs[i].shape[:axis] + xs[i].shape[axis + 1:]),)
    return out


@jit
def _add(a, b):
    return a + b


@jit
def _multiply(a, b):
    return a * b


@jit
def _scan_type(input, dtype):
    """Triton's type of a sum: ``dtype`` if given, int32 for narrower
    integers (and bool), else the input's."""
    if dtype is not None:
        return input.to(dtype)
    if input.dtype == tl.int1 or input.dtype == tl.int8 or input.dtype == tl.int16:
        return input.to(tl.int32)
    return input


@jit
def cumsum(input, axis=0, reverse=False, dtype=None):
    """The inclusive cumulative sum along ``axis`` (in ``dtype``; narrower
    integers in int32), summed in a tree."""
    return tl.associative_scan(_scan_type(input, dtype), axis, _add, reverse)


@jit
def cumprod(input, axis=0, reverse=False, dtype=None):
    """The inclusive cumulative product along ``axis`` (in ``dtype``;
    narrower integers in int32), multiplied in a tree."""
    return tl.associative_scan(_scan_type(input, dtype), axis, _multiply, reverse)


# -- histogram, gather -------------------------------------------------------


@jit
def histogram(input, num_bins, mask=None):
    """How many elements of ``input`` (1-D, integers) equal each of 0 ..
    ``num_bins`` - 1 (a power of two), as int32; elements outside, or where
    ``mask`` is false, count nowhere."""
    tl.static_assert(len(input.shape) == 1, "histogram takes a 1-D tensor")
    if mask is not None:
        input = tl.where(mask, input, -1)
    hits = input[:, None] == tl.arange(0, num_bins)[None, :]
    return tl.sum(hits.to(tl.int32), 0)


@jit
def gather(src, index, axis):
    """``src``'s elements along ``axis`` at ``index`` (integers, of
    ``src``'s rank and sizes but along ``axis``): result[..., j, ...] is
    src[..., index[..., j, ...], ...], bit for bit; an index outside the
    dimension gives 0."""
    rank = len(src.shape)
    axis = _axis(src, axis, "gather")
    tl.static_assert(len(index.shape) == rank, "gather: index must have src's rank")
    # Each index against every position along the axis: (..., m, n, ...).
    positions = tl.expand_dims(src, axis)
    wanted = tl.expand_dims(index, axis + 1)
    return _pick(positions, wanted == _index_along(positions, axis + 1), axis + 1, False)


# -- methods only (as Triton's tensor methods) --------------------------------


@jit
def _item(input):
    """The one element of a tensor of one element, as a scalar."""
    numel = 1
    for size in input.shape:
        numel = numel * size
    tl.static_assert(numel == 1, "item() takes a tensor of one element")
    return tl.max(tl.reshape(input, (1,)), 0)


@jit
def _logical_and(input, other):
    """Both true, elementwise (each operand as a boolean)."""
    return (input != 0) & (other != 0)


@jit
def _logical_or(input, other):
    """Either true, elementwise (each operand as a boolean)."""
    return (input != 0) | (other != 0)

