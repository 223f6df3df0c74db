"""Implementations of the ``tl.*`` builtins.

Each builtin is declared in ``tile.language`` (its signature and docstring,
the reference users read) and implemented here by a function registered
under the declared function itself: ``@implements(tl.load)``.  An
implementation takes the code generator first, then the declaration's
parameters, with the same names, defaults and kinds (test_builtins.py
checks it); hints Tile does not use (``cache_modifier``, ...) are accepted
and ignored.  Tensor methods need no entry: ``x.sum(...)`` calls the
implementation of ``tl.sum`` (``tl.tensor`` declares which methods exist).
"""

import inspect
import math
import sys

from .. import language as tl
from ..language import core
from ..language.extra import libdevice
from . import semantic
from .builder import Value
from .errors import TileTypeError

# The declared builtin (a function of tile.language) -> its implementation.
IMPLS = {}


def implements(declared):
    """Registers the decorated function as the implementation of the
    builtin ``declared``."""
    if not core.is_builtin(declared):
        raise TypeError(f"{declared!r} is not a builtin of tile.language")

    def register(impl):
        if declared in IMPLS:
            raise TypeError(f"tl.{declared.__name__} is implemented twice")
        IMPLS[declared] = impl
        return impl
    return register


# Builtins that write memory: refused in tl.map_elementwise's function,
# whose branches run for every element.
_WRITES = (tl.store, tl.atomic_add, tl.atomic_max, tl.atomic_min, tl.atomic_and,
           tl.atomic_or, tl.atomic_xor, tl.atomic_xchg, tl.atomic_cas, tl.atomic_store)


def call_builtin(cg, fn, args, kwargs, spelled=None):
    """Calls the builtin ``fn`` on ``args``; ``spelled`` is how errors name
    the call (``tl.load``, or ``.to()`` for a method)."""
    spelled = spelled or f"tl.{fn.__name__}"
    if fn in _WRITES and cg.frame.elementwise:
        raise TileTypeError(f"tl.map_elementwise: its function cannot write memory "
                            f"({spelled}): Tile runs both sides of its branches")
    impl = IMPLS.get(fn)
    if impl is None:
        raise TileTypeError(f"{spelled} is not supported")
    try:
        inspect.signature(impl).bind(cg, *args, **kwargs)
    except TypeError as e:
        raise TileTypeError(f"{spelled}: {e}") from None
    return impl(cg, *args, **kwargs)


def constexpr_int(x, what):
    if isinstance(x, bool) or not isinstance(x, int):
        raise TileTypeError(f"{what} must be a constexpr integer, got {semantic.describe(x)}")
    return x


def constexpr_dtype(x, what):
    if not isinstance(x, core.dtype) or isinstance(x, core.pointer_type):
        raise TileTypeError(f"{what} must be a dtype such as tl.float32, got "
                            f"{semantic.describe(x)}")
    return x


def shape_arg(shape, what):
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)):
        raise TileTypeError(f"{what}: shape must be a tuple of constexpr integers, got "
                            f"{semantic.describe(shape)}")
    return semantic.check_shape(tuple(shape), what)


def tensor_arg(x, what):
    if not isinstance(x, Value):
        raise TileTypeError(f"{what} expects a tensor, got {semantic.describe(x)}")
    return x


# -- the grid ---------------------------------------------------------------

_AXES = "xyz"


@implements(tl.program_id)
def program_id(cg, axis):
    axis = constexpr_int(axis, "tl.program_id: axis")
    if not 0 <= axis <= 2:
        raise TileTypeError(f"tl.program_id: axis must be 0, 1 or 2, got {axis}")
    return cg.b.op(f"tile.program_id {_AXES[axis]}", core.int32)


@implements(tl.num_programs)
def num_programs(cg, axis):
    axis = constexpr_int(axis, "tl.num_programs: axis")
    if not 0 <= axis <= 2:
        raise TileTypeError(f"tl.num_programs: axis must be 0, 1 or 2, got {axis}")
    return cg.b.op(f"tile.num_programs {_AXES[axis]}", core.int32)


# -- creation ---------------------------------------------------------------

@implements(tl.arange)
def arange(cg, start, end):
    start = constexpr_int(start, "tl.arange: start")
    end = constexpr_int(end, "tl.arange: end")
    if start < 0 or end <= start:
        raise TileTypeError(f"tl.arange: need 0 <= start < end, got {start} and {end}")
    if end > 2**31 - 1:
        raise TileTypeError(f"tl.arange: end {end} does not fit in int32")
    if not semantic.is_power_of_two(end - start):
        raise TileTypeError(
            f"tl.arange: the length end - start = {end - start} must be a power of two")
    try:
        ty = core.block_type(core.int32, (end - start,))
    except core.TileSizeError as e:
        raise TileTypeError(f"tl.arange: {e}") from None
    return cg.b.op(f"tile.arange {start} to {end} : {ty.mlir}", ty)


@implements(tl.zeros)
def zeros(cg, shape, dtype):
    shape = shape_arg(shape, "tl.zeros")
    dtype = constexpr_dtype(dtype, "tl.zeros: dtype")
    return cg.b.constant(0, dtype, shape)


@implements(tl.zeros_like)
def zeros_like(cg, input):
    input = tensor_arg(input, "tl.zeros_like")
    return cg.b.constant(0, input.dtype, input.shape) if input.is_block() \
        else cg.b.constant(0, input.dtype)


@implements(tl.full)
def full(cg, shape, value, dtype):
    shape = shape_arg(shape, "tl.full")
    dtype = constexpr_dtype(dtype, "tl.full: dtype")
    if semantic.is_literal(value):
        return cg.b.constant(value, dtype, shape)
    value = tensor_arg(value, "tl.full: value")
    if value.is_block():
        raise TileTypeError("tl.full: value must be a scalar")
    return semantic.broadcast_to(cg.b, semantic.cast(cg.b, value, dtype), shape)


@implements(tl.map_elementwise)
def map_elementwise(cg, scalar_fn, *args, pack=1):
    from ..jit import JITFunction
    if not isinstance(scalar_fn, JITFunction):
        raise TileTypeError(f"tl.map_elementwise: scalar_fn must be a @tile.jit function, "
                            f"got {semantic.describe(scalar_fn)}")
    if pack != 1:
        raise TileTypeError(f"tl.map_elementwise: pack must be 1, got {pack!r}")
    for arg in args:
        semantic.require_value_or_number(arg, "tl.map_elementwise")
    shapes = [a.shape for a in args if semantic.is_value(a)]
    shape = semantic.broadcast_shapes(*shapes, opname="tl.map_elementwise") if shapes else ()
    args = [semantic.broadcast_to(cg.b, a, shape) if semantic.is_value(a) and shape else a
            for a in args]
    result = cg.inline_call(scalar_fn, args, {}, cg.node, elementwise=True)
    if result is None:
        raise TileTypeError(f"tl.map_elementwise: {scalar_fn.__name__} returns no value")
    return result


@implements(tl.to_tensor)
def to_tensor(cg, x):
    if semantic.is_value(x):
        return x
    if not semantic.is_literal(x):
        raise TileTypeError(f"tl.to_tensor expects a tensor or a number, got "
                            f"{semantic.describe(x)}")
    if isinstance(x, bool):
        dtype = tl.int1
    elif isinstance(x, int):
        # Triton's: the first of int32, uint32, int64, uint64 that holds x.
        dtype = next((t for t, low, high in (
            (tl.int32, -2**31, 2**31), (tl.uint32, 0, 2**32),
            (tl.int64, -2**63, 2**63), (tl.uint64, 0, 2**64)) if low <= x < high), None)
        if dtype is None:
            raise TileTypeError(f"tl.to_tensor: integer {x} does not fit in 64 bits")
    else:
        magnitude = abs(x)
        normal = magnitude == 0 or not math.isfinite(magnitude) \
            or 2.0**-126 <= magnitude <= 3.4028234663852886e38
        dtype = tl.float32 if normal else tl.float64
    return cg.b.constant(x, dtype)


# -- memory -----------------------------------------------------------------

@implements(tl.load)
def load(cg, pointer, mask=None, other=None, boundary_check=(), padding_option="",
         cache_modifier="", eviction_policy="", volatile=False):
    return semantic.load(cg.b, pointer, mask, other, boundary_check, padding_option)


@implements(tl.store)
def store(cg, pointer, value, mask=None, boundary_check=(), cache_modifier="",
          eviction_policy=""):
    return semantic.store(cg.b, pointer, value, mask, boundary_check)


def _atomic(kind, declared):
    @implements(declared)
    def impl(cg, pointer, val, mask=None, sem=None, scope=None):
        return semantic.atomic_rmw(cg.b, kind, pointer, val, mask, sem, scope)
    impl.__name__ = impl.__qualname__ = f"atomic_{kind}"
    return impl


for _kind in semantic.ATOMIC_TYPES:
    _atomic(_kind, getattr(tl, f"atomic_{_kind}"))


@implements(tl.atomic_load)
def atomic_load(cg, pointer, mask=None, sem=None, scope=None):
    return semantic.atomic_load(cg.b, pointer, mask, sem, scope)


@implements(tl.atomic_store)
def atomic_store(cg, pointer, val, mask=None, sem=None, scope=None):
    return semantic.atomic_store(cg.b, pointer, val, mask, sem, scope)


@implements(tl.debug_barrier)
def debug_barrier(cg):
    cg.b.line("tile.debug_barrier")


@implements(tl.atomic_cas)
def atomic_cas(cg, pointer, cmp, val, sem=None, scope=None):
    return semantic.atomic_cas(cg.b, pointer, cmp, val, sem, scope)


@implements(tl.make_block_ptr)
def make_block_ptr(cg, base, shape, strides, offsets, block_shape, order):
    return semantic.make_block_ptr(cg.b, base, shape, strides, offsets, block_shape, order)


@implements(tl.advance)
def advance(cg, base, offsets):
    return semantic.advance(cg.b, base, offsets)


@implements(tl.make_tensor_descriptor)
def make_tensor_descriptor(cg, base, shape, strides, block_shape, padding_option="zero"):
    return semantic.make_tensor_descriptor(cg.b, base, shape, strides, block_shape,
                                           padding_option)


@implements(tl.load_tensor_descriptor)
def load_tensor_descriptor(cg, desc, offsets):
    return semantic.descriptor_load(cg.b, desc, offsets)


@implements(tl.store_tensor_descriptor)
def store_tensor_descriptor(cg, desc, offsets, value):
    return semantic.descriptor_store(cg.b, desc, offsets, value)


def _descriptor_update(kind, declared):
    @implements(declared)
    def impl(cg, desc, offsets, value):
        return semantic.descriptor_update(cg.b, kind, desc, offsets, value)
    impl.__name__ = impl.__qualname__ = f"descriptor_atomic_{kind}"
    return impl


for _kind, _declared in core.DESCRIPTOR_UPDATES.items():
    _descriptor_update(_kind, _declared)


# -- compute ----------------------------------------------------------------

@implements(tl.dot)
def dot(cg, input, other, acc=None, input_precision=None, allow_tf32=None,
        max_num_imprecise_acc=None, out_dtype=core.float32):
    if input_precision not in (None, "ieee", "tf32", "tf32x3"):
        raise TileTypeError(f"tl.dot: unknown input_precision {input_precision!r}")
    return semantic.dot(cg.b, input, other, acc, out_dtype)


@implements(tl.exp)
def exp(cg, x):
    return semantic.math_unary(cg.b, "exp", x)


@implements(tl.exp2)
def exp2(cg, x):
    return semantic.math_unary(cg.b, "exp2", x)


@implements(tl.log)
def log(cg, x):
    return semantic.math_unary(cg.b, "log", x)


@implements(tl.log2)
def log2(cg, x):
    return semantic.math_unary(cg.b, "log2", x)


@implements(tl.sqrt)
def sqrt(cg, x):
    return semantic.math_unary(cg.b, "sqrt", x)


@implements(tl.rsqrt)
def rsqrt(cg, x):
    return semantic.math_unary(cg.b, "rsqrt", x)


@implements(tl.abs)
def abs_(cg, x):
    return semantic.math_unary(cg.b, "abs", x)


@implements(tl.sin)
def sin(cg, x):
    return semantic.math_unary(cg.b, "sin", x)


@implements(tl.cos)
def cos(cg, x):
    return semantic.math_unary(cg.b, "cos", x)


@implements(tl.tanh)
def tanh(cg, x):
    return semantic.math_unary(cg.b, "tanh", x)


@implements(tl.erf)
def erf(cg, x):
    return semantic.math_unary(cg.b, "erf", x)


def _libdevice_unary(name):
    @implements(getattr(libdevice, name))
    def impl(cg, x):
        return semantic.math_unary(cg.b, name, x)
    impl.__name__ = impl.__qualname__ = name
    return impl


for _name in ("erfc", "atan", "asin", "acos", "cbrt", "trunc"):
    _libdevice_unary(_name)


@implements(libdevice.atan2)
def atan2(cg, y, x):
    return semantic.atan2(cg.b, y, x)


@implements(tl.floor)
def floor(cg, x):
    return semantic.math_unary(cg.b, "floor", x)


@implements(tl.ceil)
def ceil(cg, x):
    return semantic.math_unary(cg.b, "ceil", x)


@implements(tl.sigmoid)
def sigmoid(cg, x):
    return semantic.math_unary(cg.b, "sigmoid", x)


@implements(tl.div_rn)
def div_rn(cg, x, y):
    return semantic.divide(cg.b, x, y, ieee=True)


@implements(tl.fma)
def fma(cg, x, y, z):
    return semantic.fma(cg.b, x, y, z)


def _reduce(cg, kind, input, axis, keep_dims, dtype=None, opname=None):
    opname = opname or f"tl.{kind}"
    input = tensor_arg(input, opname)
    if dtype is not None:
        input = semantic.cast(cg.b, input, constexpr_dtype(dtype, f"{opname}: dtype"))
    if input.is_block() is False:
        return input
    return semantic.reduce(cg.b, kind, input, axis, bool(keep_dims), opname)


@implements(tl.sum)
def sum_(cg, input, axis=None, keep_dims=False, dtype=None):
    return _reduce(cg, "sum", input, axis, keep_dims, dtype)


@implements(tl.xor_sum)
def xor_sum(cg, input, axis=None, keep_dims=False):
    return _reduce(cg, "xor", input, axis, keep_dims, opname="tl.xor_sum")


@implements(tl.reduce_or)
def reduce_or(cg, input, axis, keep_dims=False):
    return _reduce(cg, "or", input, axis, keep_dims, opname="tl.reduce_or")


@implements(tl.max)
def max_(cg, input, axis=None, return_indices=False, return_indices_tie_break_left=True,
         keep_dims=False):
    if return_indices:
        return semantic.reduce_with_indices(cg.b, "max", tensor_arg(input, "tl.max"), axis,
                                            bool(return_indices_tie_break_left),
                                            bool(keep_dims))
    return _reduce(cg, "max", input, axis, keep_dims)


@implements(tl.min)
def min_(cg, input, axis=None, return_indices=False, return_indices_tie_break_left=True,
         keep_dims=False):
    if return_indices:
        return semantic.reduce_with_indices(cg.b, "min", tensor_arg(input, "tl.min"), axis,
                                            bool(return_indices_tie_break_left),
                                            bool(keep_dims))
    return _reduce(cg, "min", input, axis, keep_dims)


@implements(tl.maximum)
def maximum(cg, x, y, propagate_nan=core.PropagateNan.NONE):
    if semantic.is_literal(x) and semantic.is_literal(y):
        return max(x, y)
    return semantic.minmax(cg.b, "max", x, y, propagate_nan)


@implements(tl.minimum)
def minimum(cg, x, y, propagate_nan=core.PropagateNan.NONE):
    if semantic.is_literal(x) and semantic.is_literal(y):
        return min(x, y)
    return semantic.minmax(cg.b, "min", x, y, propagate_nan)


@implements(tl.inline_asm_elementwise)
def inline_asm_elementwise(cg, asm, constraints, args, dtype, is_pure, pack):
    return semantic.inline_asm_elementwise(cg.b, asm, constraints, args, dtype, is_pure, pack)


@implements(tl.where)
def where(cg, condition, x, y):
    if semantic.is_literal(condition) or isinstance(condition, bool):
        return x if condition else y
    return semantic.where(cg.b, condition, x, y)


# -- shapes -----------------------------------------------------------------

def _dims(dims):
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        return tuple(dims[0])
    return tuple(dims)


@implements(tl.trans)
def trans(cg, input, *dims):
    input = tensor_arg(input, "tl.trans")
    order = _dims(dims) or tuple(reversed(range(len(input.shape))))
    return semantic.permute(cg.b, input, order)


@implements(tl.permute)
def permute(cg, input, *dims):
    input = tensor_arg(input, "tl.permute")
    return semantic.permute(cg.b, input, _dims(dims))


@implements(tl.expand_dims)
def expand_dims(cg, input, axis):
    input = tensor_arg(input, "tl.expand_dims")
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    for a in sorted(constexpr_int(a, "tl.expand_dims: axis") for a in axes):
        input = semantic.expand_dims(cg.b, input, a)
    return input


@implements(tl.broadcast)
def broadcast(cg, input, other):
    input = tensor_arg(input, "tl.broadcast")
    other = tensor_arg(other, "tl.broadcast")
    shape = semantic.broadcast_shapes(input.shape, other.shape, opname="tl.broadcast")
    return (semantic.broadcast_to(cg.b, input, shape),
            semantic.broadcast_to(cg.b, other, shape))


@implements(tl.squeeze)
def squeeze(cg, input, dim):
    input = tensor_arg(input, "tl.squeeze")
    dim = constexpr_int(dim, "tl.squeeze: dim")
    rank = len(input.shape)
    if not -rank <= dim < rank:
        raise TileTypeError(f"tl.squeeze: dim {dim} out of range for a tensor of rank {rank}")
    dim %= rank
    if input.shape[dim] != 1:
        raise TileTypeError(f"tl.squeeze: dimension {dim} of {list(input.shape)} is not of "
                            "length 1")
    if input.dtype.is_ptr():
        raise TileTypeError("tl.squeeze: tensors of pointers are not supported yet")
    # The one element of each slice along dim: a reduction that combines
    # nothing.
    return semantic.reduce(cg.b, "max", input, dim)


@implements(tl.reshape)
def reshape(cg, input, *shape, can_reorder=False):
    input = tensor_arg(input, "tl.reshape")
    return semantic.reshape(cg.b, input, shape_arg(_dims(shape), "tl.reshape"))


@implements(tl.view)
def view(cg, input, *shape):
    input = tensor_arg(input, "tl.view")
    return semantic.reshape(cg.b, input, shape_arg(_dims(shape), "tl.view"), "tl.view")


@implements(tl.ravel)
def ravel(cg, x, can_reorder=False):
    x = tensor_arg(x, "tl.ravel")
    if not x.is_block():
        raise TileTypeError(f"tl.ravel expects a tensor, got {semantic.describe(x)}")
    return semantic.reshape(cg.b, x, (math.prod(x.shape),), "tl.ravel")


@implements(tl.join)
def join(cg, a, b):
    return semantic.join(cg.b, a, b)


@implements(tl.split)
def split(cg, a):
    return semantic.split(cg.b, tensor_arg(a, "tl.split"))


def _same_shapes(a, b, what):
    a, b = tensor_arg(a, what), tensor_arg(b, what)
    if a.shape != b.shape:
        raise TileTypeError(f"{what} takes tensors of one shape, got {list(a.shape)} and "
                            f"{list(b.shape)}")
    return a, b


@implements(tl.interleave)
def interleave(cg, a, b):
    a, b = _same_shapes(a, b, "tl.interleave")
    pairs = semantic.join(cg.b, a, b, "tl.interleave")
    if not a.is_block():
        return pairs
    shape = tuple(a.shape[:-1]) + (2 * a.shape[-1],)
    return semantic.reshape(cg.b, pairs, shape, "tl.interleave")


@implements(tl.cat)
def cat(cg, input, other, can_reorder=False, dim=0):
    input, other = _same_shapes(input, other, "tl.cat")
    rank = len(input.shape)
    if rank == 0:
        raise TileTypeError("tl.cat concatenates tensors, not scalars (tl.join joins them)")
    dim = constexpr_int(dim, "tl.cat: dim")
    if not -rank <= dim < rank:
        raise TileTypeError(f"tl.cat: dim {dim} out of range for tensors of rank {rank}")
    dim %= rank
    # The pair's dimension just before dim, then merged with it.
    pairs = semantic.join(cg.b, input, other, "tl.cat")
    order = list(range(rank))
    order.insert(dim, rank)
    pairs = semantic.permute(cg.b, pairs, order)
    shape = list(input.shape)
    shape[dim] *= 2
    return semantic.reshape(cg.b, pairs, tuple(shape), "tl.cat")


def _combined_inputs(input, combine_fn, what):
    """``input`` as a tuple of tensors of one shape, and whether it was one
    tensor; ``combine_fn`` checked to be a @tile.jit function."""
    from ..jit import JITFunction
    if not isinstance(combine_fn, JITFunction):
        raise TileTypeError(f"{what}: combine_fn must be a @tile.jit function, got "
                            f"{semantic.describe(combine_fn)}")
    single = not isinstance(input, (tuple, list))
    inputs = (input,) if single else tuple(input)
    if not inputs:
        raise TileTypeError(f"{what} takes a tensor or a tuple of tensors, got ()")
    for x in inputs:
        if not isinstance(x, Value) or not x.is_block():
            raise TileTypeError(f"{what} takes tensors, got {semantic.describe(x)}")
        if x.shape != inputs[0].shape:
            raise TileTypeError(f"{what}: the tensors must have one shape, got "
                                f"{list(inputs[0].shape)} and {list(x.shape)}")
    return inputs, single


def _unpacked(results, single):
    return results[0] if single else tuple(results)


@implements(tl.reduce)
def reduce(cg, input, axis, combine_fn, keep_dims=False):
    from ..language import standard
    inputs, single = _combined_inputs(input, combine_fn, "tl.reduce")
    rank = len(inputs[0].shape)
    if axis is None:
        numel = math.prod(inputs[0].shape)
        flat = tuple(semantic.reshape(cg.b, x, (numel,), "tl.reduce") for x in inputs)
        totals = cg.inline_call(standard._reduce_tuple, [flat, 0, combine_fn, keep_dims, single],
                                {}, cg.node)
        if keep_dims:
            totals = tuple(semantic.reshape(cg.b, t, (1,) * rank, "tl.reduce") for t in totals)
        return _unpacked(totals, single)
    axis = constexpr_int(axis, "tl.reduce: axis")
    if not -rank <= axis < rank:
        raise TileTypeError(f"tl.reduce: axis {axis} out of range for tensors of rank {rank}")
    results = cg.inline_call(standard._reduce_tuple,
                             [inputs, axis % rank, combine_fn, bool(keep_dims), single], {},
                             cg.node)
    return _unpacked(results, single)


@implements(tl.associative_scan)
def associative_scan(cg, input, axis, combine_fn, reverse=False):
    from ..language import standard
    inputs, single = _combined_inputs(input, combine_fn, "tl.associative_scan")
    rank = len(inputs[0].shape)
    axis = constexpr_int(axis, "tl.associative_scan: axis")
    if not -rank <= axis < rank:
        raise TileTypeError(
            f"tl.associative_scan: axis {axis} out of range for tensors of rank {rank}")
    results = cg.inline_call(standard._scan_tuple,
                             [inputs, axis % rank, combine_fn, bool(reverse), single], {},
                             cg.node)
    return _unpacked(results, single)


@implements(tl.broadcast_to)
def broadcast_to(cg, input, *shape):
    input = tensor_arg(input, "tl.broadcast_to")
    shape = shape_arg(_dims(shape), "tl.broadcast_to")
    return semantic.broadcast_to(cg.b, input, shape)


# -- conversions ------------------------------------------------------------

@implements(tl.cast)
def cast(cg, input, dtype, fp_downcast_rounding=None, bitcast=False):
    if isinstance(dtype, core.pointer_type):
        # An address to a pointer, a pointer to its address or another pointee.
        return semantic.cast(cg.b, tensor_arg(input, "cast"), dtype)
    dtype = constexpr_dtype(dtype, "the target type")
    if fp_downcast_rounding not in (None, "rtne"):
        raise TileTypeError(f"fp_downcast_rounding={fp_downcast_rounding!r} is not "
                            f"supported (conversions round to nearest even)")
    if semantic.is_literal(input):
        return semantic.to_value(cg.b, input, dtype)
    input = tensor_arg(input, "cast")
    return semantic.cast(cg.b, input, dtype, bitcast=bool(bitcast))


# -- integer helpers and hints ----------------------------------------------

@implements(tl.cdiv)
def cdiv(cg, x, div):
    if semantic.is_literal(x) and semantic.is_literal(div):
        return -(-x // div)
    numerator = semantic.binary(cg.b, "+", x, div)
    numerator = semantic.binary(cg.b, "-", numerator, 1)
    return semantic.binary(cg.b, "//", numerator, div)


def _axis_hint(cg, input, values, fact, what):
    """``input`` with the promise ``fact`` (divisibility, contiguity or
    constancy) of ``values`` (an int, or one a dimension) for the axis
    analysis (tile.axis_hint); a value that is no tile or scalar of integers
    (a literal, pointers) is given back as it is."""
    if not isinstance(input, Value) or not input.dtype.is_int():
        return input
    rank = max(1, len(input.shape))
    if isinstance(values, (list, tuple)):
        values = [constexpr_int(v, what) for v in values]
        if len(values) != rank:
            raise TileTypeError(f"{what} takes one value a dimension of its input ({rank}), "
                                f"not {len(values)}")
    else:
        values = [constexpr_int(values, what)] * rank
    if any(v < 1 for v in values):
        raise TileTypeError(f"{what} takes positive values, not {values}")
    # The largest power of two dividing each: what the analysis can use.
    powers = ", ".join(str(v & -v) for v in values)
    return cg.b.op(f"tile.axis_hint {input.ssa} {{{fact} = array<i64: {powers}>}} : "
                   f"{input.type.mlir}", input.type)


@implements(tl.multiple_of)
def multiple_of(cg, input, values):
    return _axis_hint(cg, input, values, "divisibility", "tl.multiple_of")


@implements(tl.max_contiguous)
def max_contiguous(cg, input, values):
    return _axis_hint(cg, input, values, "contiguity", "tl.max_contiguous")


@implements(tl.max_constancy)
def max_constancy(cg, input, values):
    return _axis_hint(cg, input, values, "constancy", "tl.max_constancy")


@implements(tl.assume)
def assume(cg, cond):
    if not isinstance(cond, bool) and not (semantic.is_value(cond) and cond.dtype.is_bool()):
        raise TileTypeError(f"tl.assume expects a boolean, got {semantic.describe(cond)}")


# -- compile time -----------------------------------------------------------

@implements(tl.static_assert)
def static_assert(cg, cond, msg=""):
    if isinstance(cond, Value):
        raise TileTypeError("tl.static_assert needs a compile-time condition")
    if not cond:
        raise TileTypeError("static assertion failed" + (f": {msg}" if msg else ""))


@implements(tl.device_print)
def device_print(cg, prefix, *args, hex=False):
    if not isinstance(hex, bool):
        raise TileTypeError("tl.device_print: hex must be True or False")
    semantic.device_print(cg.b, prefix, args, hex)


@implements(tl.device_assert)
def device_assert(cg, cond, msg="", mask=None):
    semantic.device_assert(cg.b, cond, msg, mask)


@implements(tl.static_print)
def static_print(cg, *values, sep=" ", end="\n", file=None, flush=False):
    print(*[v.type if isinstance(v, Value) else v for v in values], sep=sep, end=end,
          file=sys.stderr, flush=bool(flush))


# -- loops: CodeGenerator.visit_For compiles a for loop over these; any other
# call of them is this error.

@implements(tl.static_range)
def static_range(cg, arg1, arg2=None, step=None):
    raise TileTypeError("tl.static_range can only be used as the iterator of a for loop")


@implements(tl.range)
def range_(cg, arg1, arg2=None, step=None, num_stages=None, loop_unroll_factor=None,
           disallow_acc_multi_buffer=False, flatten=False, warp_specialize=False):
    raise TileTypeError("tl.range can only be used as the iterator of a for loop")
