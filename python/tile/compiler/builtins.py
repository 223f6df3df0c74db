"""Implementations of the ``tl.*`` builtins and tensor methods.

Each implementation takes the code generator first, then the arguments of
the Triton function of the same name (hints Tile does not use, such as
``cache_modifier``, are accepted and ignored).
"""

import inspect

from ..language import core
from . import semantic
from .builder import Value
from .errors import TileTypeError

IMPLS = {}
METHODS = {}


def builtin(name, method=None):
    def register(fn):
        IMPLS[name] = fn
        if method:
            METHODS[method] = fn
        return fn
    return register


def call_builtin(cg, name, args, kwargs, method=False):
    table = METHODS if method else IMPLS
    impl = table.get(name)
    spelled = f".{name}()" if method else f"tl.{name}"
    if impl is None:
        raise TileTypeError(f"{spelled} can only be used as the iterator of a for loop"
                            if name in ("range", "static_range")
                            else f"{spelled} is not supported")
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


@builtin("program_id")
def program_id(cg, axis):
    axis = constexpr_int(axis, "tl.program_id: axis")
    if not 0 <= axis <= 2:
        raise TileTypeError(f"tl.program_id: axis must be 0, 1 or 2, got {axis}")
    return cg.b.op(f"tile.program_id {_AXES[axis]}", core.int32)


@builtin("num_programs")
def num_programs(cg, axis):
    axis = constexpr_int(axis, "tl.num_programs: axis")
    if not 0 <= axis <= 2:
        raise TileTypeError(f"tl.num_programs: axis must be 0, 1 or 2, got {axis}")
    return cg.b.op(f"tile.num_programs {_AXES[axis]}", core.int32)


# -- creation ---------------------------------------------------------------

@builtin("arange")
def arange(cg, start, end):
    start = constexpr_int(start, "tl.arange: start")
    end = constexpr_int(end, "tl.arange: end")
    if start < 0 or end <= start:
        raise TileTypeError(f"tl.arange: need 0 <= start < end, got {start} and {end}")
    if not semantic.is_power_of_two(end - start):
        raise TileTypeError(
            f"tl.arange: the length end - start = {end - start} must be a power of two")
    ty = core.block_type(core.int32, (end - start,))
    return cg.b.op(f"tile.arange {start} to {end} : {ty.mlir}", ty)


@builtin("zeros")
def zeros(cg, shape, dtype):
    shape = shape_arg(shape, "tl.zeros")
    dtype = constexpr_dtype(dtype, "tl.zeros: dtype")
    return cg.b.constant(0, dtype, shape)


@builtin("zeros_like")
def zeros_like(cg, input):
    input = tensor_arg(input, "tl.zeros_like")
    return cg.b.constant(0, input.dtype, input.shape) if input.is_block() \
        else cg.b.constant(0, input.dtype)


@builtin("full")
def full(cg, shape, value, dtype):
    shape = shape_arg(shape, "tl.full")
    dtype = constexpr_dtype(dtype, "tl.full: dtype")
    if semantic.is_literal(value):
        return cg.b.constant(value, dtype, shape)
    value = tensor_arg(value, "tl.full: value")
    if value.is_block():
        raise TileTypeError("tl.full: value must be a scalar")
    return semantic.broadcast_to(cg.b, semantic.cast(cg.b, value, dtype), shape)


# -- memory -----------------------------------------------------------------

@builtin("load")
def load(cg, pointer, mask=None, other=None, boundary_check=(), padding_option="",
         cache_modifier="", eviction_policy="", volatile=False):
    return semantic.load(cg.b, pointer, mask, other, boundary_check, padding_option)


@builtin("store")
def store(cg, pointer, value, mask=None, boundary_check=(), cache_modifier="",
          eviction_policy=""):
    return semantic.store(cg.b, pointer, value, mask, boundary_check)


@builtin("atomic_add")
def atomic_add(cg, pointer, val, mask=None, sem=None, scope=None):
    # The GPU adds with relaxed ordering at device scope: say so rather than
    # silently weaken a stronger request.
    if sem not in (None, "relaxed"):
        raise TileTypeError(f"tl.atomic_add: sem={sem!r} is not supported (relaxed only)")
    if scope not in (None, "gpu"):
        raise TileTypeError(f"tl.atomic_add: scope={scope!r} is not supported (gpu only)")
    return semantic.atomic_add(cg.b, pointer, val, mask)


@builtin("make_block_ptr")
def make_block_ptr(cg, base, shape, strides, offsets, block_shape, order):
    return semantic.make_block_ptr(cg.b, base, shape, strides, offsets, block_shape, order)


@builtin("advance")
def advance(cg, base, offsets):
    return semantic.advance(cg.b, base, offsets)


# -- compute ----------------------------------------------------------------

@builtin("dot")
def dot(cg, input, other, acc=None, input_precision=None, allow_tf32=None,
        max_num_imprecise_acc=None, out_dtype=core.float32):
    if input_precision not in (None, "ieee", "tf32", "tf32x3"):
        raise TileTypeError(f"tl.dot: unknown input_precision {input_precision!r}")
    return semantic.dot(cg.b, input, other, acc, out_dtype)


def _math(name):
    def impl(cg, x):
        return semantic.math_unary(cg.b, name, x)
    impl.__name__ = name
    return impl


for _name in ("exp", "exp2", "log", "log2", "sqrt", "rsqrt", "abs", "sin", "cos",
              "floor", "ceil", "sigmoid"):
    builtin(_name, method=_name)(_math(_name))


@builtin("fma")
def fma(cg, x, y, z):
    return semantic.fma(cg.b, x, y, z)


def _reduction(kind):
    def impl(cg, input, axis=None, keep_dims=False, return_indices=False, dtype=None):
        if return_indices:
            raise TileTypeError(f"tl.{kind}: return_indices is not supported")
        input = tensor_arg(input, f"tl.{kind}")
        if dtype is not None:
            input = semantic.cast(cg.b, input, constexpr_dtype(dtype, f"tl.{kind}: dtype"))
        if input.is_block() is False:
            return input
        return semantic.reduce(cg.b, kind, input, axis, bool(keep_dims))
    impl.__name__ = kind
    return impl


for _kind in ("max", "min", "sum"):
    builtin(_kind, method=_kind)(_reduction(_kind))


def _elementwise_minmax(kind):
    def impl(cg, x, y, propagate_nan=core.PropagateNan.NONE):
        if semantic.is_literal(x) and semantic.is_literal(y):
            return max(x, y) if kind == "max" else min(x, y)
        return semantic.minmax(cg.b, kind, x, y, propagate_nan)
    return impl


builtin("maximum")(_elementwise_minmax("max"))
builtin("minimum")(_elementwise_minmax("min"))


@builtin("where")
def where(cg, condition, x, y):
    if semantic.is_literal(condition) or isinstance(condition, bool):
        return x if condition else y
    return semantic.where(cg.b, condition, x, y)


# -- shapes -----------------------------------------------------------------

def _dims(dims):
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        return tuple(dims[0])
    return tuple(dims)


@builtin("trans", method="trans")
def trans(cg, input, *dims):
    input = tensor_arg(input, "tl.trans")
    order = _dims(dims) or tuple(reversed(range(len(input.shape))))
    return semantic.permute(cg.b, input, order)


@builtin("permute", method="permute")
def permute(cg, input, *dims):
    input = tensor_arg(input, "tl.permute")
    return semantic.permute(cg.b, input, _dims(dims))


@builtin("expand_dims", method="expand_dims")
def expand_dims(cg, input, axis):
    input = tensor_arg(input, "tl.expand_dims")
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    for a in sorted(constexpr_int(a, "tl.expand_dims: axis") for a in axes):
        input = semantic.expand_dims(cg.b, input, a)
    return input


@builtin("broadcast_to", method="broadcast_to")
def broadcast_to(cg, input, *shape):
    input = tensor_arg(input, "tl.broadcast_to")
    shape = shape_arg(_dims(shape), "tl.broadcast_to")
    return semantic.broadcast_to(cg.b, input, shape)


# -- conversions ------------------------------------------------------------

@builtin("cast")
def cast(cg, input, dtype, fp_downcast_rounding=None, bitcast=False):
    dtype = constexpr_dtype(dtype, "the target type")
    if fp_downcast_rounding not in (None, "rtne"):
        raise TileTypeError(f"fp_downcast_rounding={fp_downcast_rounding!r} is not "
                            f"supported (conversions round to nearest even)")
    if semantic.is_literal(input):
        return semantic.to_value(cg.b, input, dtype)
    input = tensor_arg(input, "cast")
    return semantic.cast(cg.b, input, dtype, bitcast=bool(bitcast))


METHODS["to"] = cast
METHODS["cast"] = cast


# -- integer helpers and hints ----------------------------------------------

@builtin("cdiv")
def cdiv(cg, x, div):
    if semantic.is_literal(x) and semantic.is_literal(div):
        return -(-x // div)
    numerator = semantic.binary(cg.b, "+", x, div)
    numerator = semantic.binary(cg.b, "-", numerator, 1)
    return semantic.binary(cg.b, "//", numerator, div)


@builtin("multiple_of")
def multiple_of(cg, input, values):
    return input


@builtin("max_contiguous")
def max_contiguous(cg, input, values):
    return input


@builtin("static_assert")
def static_assert(cg, cond, msg=""):
    if isinstance(cond, Value):
        raise TileTypeError("tl.static_assert needs a compile-time condition")
    if not cond:
        raise TileTypeError("static assertion failed" + (f": {msg}" if msg else ""))


@builtin("static_print")
def static_print(cg, *values):
    import sys
    print(*[v.type if isinstance(v, Value) else v for v in values], file=sys.stderr)

