"""Typing rules of the tile language and the operations they emit.

Every function takes the ``Builder`` first and operands that are either
``Value``s or Python literals (int, float, bool).  Type promotion follows
Triton: a Python literal of a kind no higher than the other operand's
(bool < int < float) takes the other operand's type; otherwise types are
promoted (fp64 > fp32 > fp16 > bf16, ``/`` and ``%`` of 16-bit floats in
fp32, integers to the wider width).
"""

import math

from ..language import core
from .builder import Value, make_type, quote, type_with_scalar
from .errors import TileTypeError

NUMBER = (bool, int, float)


def is_value(x):
    return isinstance(x, Value)


def is_literal(x):
    return isinstance(x, NUMBER)


def describe(x):
    """A short description of an operand for error messages."""
    if is_value(x) or isinstance(x, TensorDescriptor):
        return str(x.type)
    if x is None:
        return "None"
    if isinstance(x, core.dtype):
        return f"the dtype {x}"
    if core.is_builtin(x):
        return f"the function tl.{x.__name__}"
    return f"the constant {x!r}"


def literal_dtype(x):
    """The type a Python literal gets when it becomes a value."""
    if isinstance(x, bool):
        return core.int1
    if isinstance(x, int):
        if -2**31 <= x < 2**31:
            return core.int32
        if -2**63 <= x < 2**63:
            return core.int64
        raise TileTypeError(f"integer constant {x} does not fit in 64 bits")
    if isinstance(x, float):
        return core.float32
    raise TileTypeError(f"expected a number or a tensor, got {describe(x)}")


def scalar_type(x):
    return x.type.scalar if is_value(x) else literal_dtype(x)


def require_value_or_number(x, what):
    if not (is_value(x) or is_literal(x)):
        raise TileTypeError(f"{what} expects a tensor or a number, got {describe(x)}")


def to_value(b, x, scalar=None, shape=()):
    """``x`` as a value of element type ``scalar`` broadcast to ``shape``."""
    if is_value(x):
        if scalar is not None:
            x = cast(b, x, scalar)
        return broadcast_to(b, x, shape) if shape else x
    if is_literal(x):
        scalar = scalar or literal_dtype(x)
        return b.constant(x, scalar, shape)
    raise TileTypeError(f"expected a number or a tensor, got {describe(x)}")


# --------------------------------------------------------------------------
# Shapes
# --------------------------------------------------------------------------

def is_power_of_two(n):
    return isinstance(n, int) and n > 0 and n & (n - 1) == 0


def check_shape(shape, what):
    for dim in shape:
        if not isinstance(dim, int) or isinstance(dim, bool):
            raise TileTypeError(f"{what}: shape {list(shape)} must be constexpr integers")
        if not is_power_of_two(dim):
            raise TileTypeError(
                f"{what}: every dimension must be a power of two, got shape {list(shape)}")
    try:
        core.check_tile_elements(shape)
    except core.TileSizeError as e:
        raise TileTypeError(f"{what}: {e}") from None
    return tuple(shape)


def broadcast_shapes(*shapes, opname="operation"):
    rank = max(len(s) for s in shapes)
    result = []
    for i in range(rank):
        dims = {s[i - rank + len(s)] for s in shapes if i - rank + len(s) >= 0}
        dims.discard(1)
        if len(dims) > 1:
            listed = " and ".join(str(list(s)) for s in shapes)
            raise TileTypeError(f"incompatible shapes {listed} in {opname}")
        result.append(dims.pop() if dims else 1)
    return tuple(result)


def splat(b, v, shape):
    ty = make_type(v.type, shape)
    return b.op(f"tile.splat {v.ssa} : {ty.mlir}", ty)


def expand_dims(b, v, axis):
    if not v.is_block():
        return splat(b, v, (1,))
    rank = len(v.shape)
    if axis < 0:
        axis += rank + 1
    if not 0 <= axis <= rank:
        raise TileTypeError(f"expand_dims: axis {axis} out of range for rank {rank}")
    shape = v.shape[:axis] + (1,) + v.shape[axis:]
    ty = core.block_type(v.type.element_ty, shape)
    return b.op(f"tile.expand_dims {v.ssa} {{axis = {axis} : i32}} : "
                f"{v.type.mlir} -> {ty.mlir}", ty)


def reshape(b, v, shape, opname="tl.reshape"):
    """tile.reshape: ``v``'s elements in row-major order, in ``shape`` (a
    checked tuple of powers of two)."""
    if not is_value(v) or not v.is_block():
        raise TileTypeError(f"{opname} expects a tensor, got {describe(v)}")
    numel = math.prod(v.shape)
    if math.prod(shape) != numel:
        raise TileTypeError(f"{opname}: {list(v.shape)} has {numel} elements, "
                            f"{list(shape)} has {math.prod(shape)}")
    if tuple(shape) == tuple(v.shape):
        return v
    ty = core.block_type(v.type.element_ty, tuple(shape))
    return b.op(f"tile.reshape {v.ssa} : {v.type.mlir} -> {ty.mlir}", ty)


def join(b, lhs, rhs, opname="tl.join"):
    """tile.join of ``lhs`` and ``rhs`` broadcast and promoted to one type:
    a new last dimension of 2 (scalars give a tile of 2)."""
    _check_operand(lhs, opname)
    _check_operand(rhs, opname)
    # As tl.where's two values: one type, one shape.
    ty = computation_type(scalar_type(lhs), is_literal(lhs), scalar_type(rhs),
                          is_literal(rhs), False)
    shape = broadcast_shapes(lhs.shape if is_value(lhs) else (),
                             rhs.shape if is_value(rhs) else (), opname=opname)
    lhs, rhs = to_value(b, lhs, ty, shape), to_value(b, rhs, ty, shape)
    if not lhs.is_block():
        lhs, rhs = expand_dims(b, lhs, 0), expand_dims(b, rhs, 0)
        return reshape(b, join(b, lhs, rhs, opname), (2,), opname)
    if lhs.dtype.is_ptr():
        raise TileTypeError(f"{opname}: tensors of pointers are not supported yet")
    ty = core.block_type(lhs.type.element_ty, tuple(lhs.shape) + (2,))
    return b.op(f"tile.join {lhs.ssa}, {rhs.ssa} : {lhs.type.mlir} -> {ty.mlir}", ty)


def split(b, v, opname="tl.split"):
    """tile.split of ``v``'s last dimension, of 2: two tensors (scalars for
    a tile of 2)."""
    if not is_value(v) or not v.is_block():
        raise TileTypeError(f"{opname} expects a tensor, got {describe(v)}")
    if v.shape[-1] != 2:
        raise TileTypeError(f"{opname}: the last dimension must have 2 elements, got "
                            f"{list(v.shape)}")
    if v.dtype.is_ptr():
        raise TileTypeError(f"{opname}: tensors of pointers are not supported yet")
    if len(v.shape) == 1:
        lhs, rhs = split(b, expand_dims(b, v, 0), opname)
        # The one element of each: a reduction that combines nothing.
        return reduce(b, "max", lhs, 0), reduce(b, "max", rhs, 0)
    ty = core.block_type(v.type.element_ty, tuple(v.shape[:-1]))
    name = b.fresh()
    b.line(f"{name}:2 = tile.split {v.ssa} : {v.type.mlir} -> {ty.mlir}")
    return Value(f"{name}#0", ty), Value(f"{name}#1", ty)


def broadcast_to(b, v, shape):
    shape = tuple(shape)
    if v.shape == shape:
        return v
    if not v.is_block():
        return splat(b, v, shape)
    if len(v.shape) > len(shape):
        raise TileTypeError(f"cannot broadcast shape {list(v.shape)} to {list(shape)}")
    while len(v.shape) < len(shape):
        v = expand_dims(b, v, 0)
    for have, want in zip(v.shape, shape):
        if have != want and have != 1:
            raise TileTypeError(f"cannot broadcast shape {list(v.shape)} to {list(shape)}")
    if v.shape == shape:
        return v
    ty = core.block_type(v.type.element_ty, shape)
    return b.op(f"tile.broadcast {v.ssa} : {v.type.mlir} -> {ty.mlir}", ty)


def is_permutation(order, rank):
    """Whether `order` lists each of 0 .. rank-1 once (constexpr ints)."""
    return (all(isinstance(i, int) and not isinstance(i, bool) for i in order)
            and sorted(order) == list(range(rank)))


def permute(b, v, order):
    if not is_value(v) or not v.is_block():
        raise TileTypeError(f"trans/permute expects a tensor, got {describe(v)}")
    order = tuple(order)
    if not is_permutation(order, len(v.shape)):
        raise TileTypeError(
            f"permutation {list(order)} does not match a tensor of rank {len(v.shape)}")
    if order == tuple(range(len(v.shape))):
        return v
    shape = tuple(v.shape[i] for i in order)
    ty = core.block_type(v.type.element_ty, shape)
    listed = ", ".join(str(i) for i in order)
    return b.op(f"tile.trans {v.ssa} {{order = array<i32: {listed}>}} : "
                f"{v.type.mlir} -> {ty.mlir}", ty)


# --------------------------------------------------------------------------
# Casts
# --------------------------------------------------------------------------

def cast(b, v, dst, bitcast=False):
    """``v.to(dst)``: value conversion (or reinterpretation with bitcast)."""
    if is_literal(v):
        return b.constant(v, dst) if not dst.is_bool() else b.constant(bool(v), dst)
    if not is_value(v):
        raise TileTypeError(f"cannot convert {describe(v)} to {dst}")
    src = v.type.scalar
    if not isinstance(dst, core.dtype):
        raise TileTypeError(f"expected a dtype, got {describe(dst)}")
    if src == dst:
        return v
    if isinstance(src, core.block_ptr_type) or isinstance(dst, core.block_ptr_type):
        raise TileTypeError(f"cannot convert {src} to {dst}")
    if src.is_ptr() or dst.is_ptr():
        return _address_cast(b, v, src, dst)
    ty = type_with_scalar(v.type, dst)
    s, d = v.type.mlir, ty.mlir
    if bitcast:
        if src.primitive_bitwidth != dst.primitive_bitwidth:
            raise TileTypeError(
                f"bitcast needs types of one width, got {src} and {dst}")
        return b.op(f"arith.bitcast {v.ssa} : {s} to {d}", ty)
    if src.is_floating() and dst.is_floating():
        if src.primitive_bitwidth < dst.primitive_bitwidth:
            return b.op(f"arith.extf {v.ssa} : {s} to {d}", ty)
        if src.primitive_bitwidth > dst.primitive_bitwidth:
            return b.op(f"arith.truncf {v.ssa} : {s} to {d}", ty)
        wide = cast(b, v, core.float32)   # fp16 <-> bf16, fp8 <-> fp8
        return cast(b, wide, dst)
    if src.is_bool() and dst.is_floating():
        return b.op(f"arith.uitofp {v.ssa} : {s} to {d}", ty)
    if src.is_int() and dst.is_floating():
        convert = "arith.uitofp" if src.is_int_unsigned() else "arith.sitofp"
        return b.op(f"{convert} {v.ssa} : {s} to {d}", ty)
    if src.is_floating() and dst.is_bool():
        zero = to_value(b, 0.0, src, v.shape)
        return b.op(f"arith.cmpf une, {v.ssa}, {zero.ssa} : {s}", ty)
    if src.is_floating() and dst.is_int():
        convert = "arith.fptoui" if dst.is_int_unsigned() else "arith.fptosi"
        return b.op(f"{convert} {v.ssa} : {s} to {d}", ty)
    if src.is_bool() and dst.is_int():
        return b.op(f"arith.extui {v.ssa} : {s} to {d}", ty)
    if src.is_int() and dst.is_bool():
        zero = to_value(b, 0, src, v.shape)
        return b.op(f"arith.cmpi ne, {v.ssa}, {zero.ssa} : {s}", ty)
    if src.is_int() and dst.is_int():
        if src.primitive_bitwidth < dst.primitive_bitwidth:
            # The source's sign decides how it widens.
            extend = "arith.extui" if src.is_int_unsigned() else "arith.extsi"
            return b.op(f"{extend} {v.ssa} : {s} to {d}", ty)
        if src.primitive_bitwidth == dst.primitive_bitwidth:
            return Value(v.ssa, ty)   # the same bits, read with another sign
        return b.op(f"arith.trunci {v.ssa} : {s} to {d}", ty)
    raise TileTypeError(f"cannot convert {src} to {dst}")


def _address_cast(b, v, src, dst):
    """Pointers to and from their int64 addresses (tile.int_to_ptr,
    tile.ptr_to_int), and a pointer to another pointee through its address,
    as Triton's casts do."""
    if src.is_ptr() and dst.is_ptr():
        return _address_cast(b, _address_cast(b, v, src, core.int64), core.int64, dst)
    if dst.is_ptr():
        if src != core.int64:
            raise TileTypeError(f"cannot convert {src} to {dst}: a pointer is made from "
                                f"an int64 address")
        ty = type_with_scalar(v.type, dst)
        return b.op(f"tile.int_to_ptr {v.ssa} : {v.type.mlir} -> {ty.mlir}", ty)
    if dst != core.int64:
        raise TileTypeError(f"cannot convert {src} to {dst}: a pointer's address is an int64")
    ty = type_with_scalar(v.type, dst)
    return b.op(f"tile.ptr_to_int {v.ssa} : {v.type.mlir} -> {ty.mlir}", ty)


def to_bool(b, v, what):
    """A condition or mask as i1."""
    if is_literal(v):
        return b.constant(bool(v), core.int1)
    if not is_value(v) or isinstance(v.type.scalar, core.block_ptr_type) \
            or v.type.scalar.is_ptr():
        raise TileTypeError(f"{what} must be a boolean tensor or scalar, got {describe(v)}")
    return cast(b, v, core.int1)


# --------------------------------------------------------------------------
# Printing and assertions
# --------------------------------------------------------------------------

def device_print(b, prefix, args, hexadecimal):
    """tile.print of ``args`` (numbers and numeric tensors) after
    ``prefix``."""
    if not isinstance(prefix, str):
        raise TileTypeError(f"tl.device_print: the prefix must be a compile-time string, "
                            f"got {describe(prefix)}")
    values = []
    for arg in args:
        if isinstance(arg, str):
            raise TileTypeError(f"tl.device_print: the text {arg!r} comes after a value; text "
                                f"goes in the prefix, before the values")
        if is_literal(arg):
            arg = to_value(b, arg)
        if not is_value(arg) or isinstance(arg.type.scalar, core.block_ptr_type) \
                or arg.type.scalar.is_ptr() or arg.type.scalar.is_fp8():
            raise TileTypeError(f"tl.device_print prints integers and 16- to 64-bit floats, "
                                f"not {describe(arg)}")
        if arg.type.scalar.is_int_unsigned() and arg.type.scalar.primitive_bitwidth < 64 \
                and not hexadecimal:
            arg = cast(b, arg, core.int64)   # zero-extended: printed as it is
        values.append(arg)
    text = "tile.print " + quote(prefix) + (" hex" if hexadecimal else "")
    if values:
        text += " : " + ", ".join(v.ssa for v in values)
        text += " : " + ", ".join(v.type.mlir for v in values)
    b.line(text)


def device_assert(b, cond, msg, mask):
    """tile.assert that ``cond`` holds where ``mask`` does."""
    if not isinstance(msg, str):
        raise TileTypeError(f"tl.device_assert: the message must be a compile-time string, "
                            f"got {describe(msg)}")
    cond = to_bool(b, cond, "the condition of tl.device_assert")
    if mask is not None:
        mask = to_bool(b, mask, "the mask of tl.device_assert")
        shape = broadcast_shapes(cond.shape, mask.shape, opname="tl.device_assert")
        cond, mask = broadcast_to(b, cond, shape), broadcast_to(b, mask, shape)
        unmasked = b.op(f"arith.xori {mask.ssa}, {b.constant(True, core.int1, shape).ssa} : "
                        f"{mask.type.mlir}", mask.type)
        cond = b.op(f"arith.ori {cond.ssa}, {unmasked.ssa} : {cond.type.mlir}", cond.type)
    b.line(f"tile.assert {cond.ssa}, {quote(msg)} : {cond.type.mlir}")


# --------------------------------------------------------------------------
# Binary operations
# --------------------------------------------------------------------------

def integer_promote(a, b):
    """As Triton: the wider type; of one width, the unsigned one."""
    if a.primitive_bitwidth == b.primitive_bitwidth:
        return b if b.is_int_unsigned() else a
    return a if a.primitive_bitwidth > b.primitive_bitwidth else b


def computation_type(a_ty, a_is_literal, b_ty, b_is_literal, div_or_mod):
    """Triton's promotion of two operand types (see the module docstring)."""
    if a_is_literal != b_is_literal:
        lit_ty, val_ty = (a_ty, b_ty) if a_is_literal else (b_ty, a_ty)
        if core.dtype.KIND_RANK[lit_ty.kind] <= core.dtype.KIND_RANK[val_ty.kind]:
            if div_or_mod and val_ty.name in ("fp16", "bf16"):
                return core.float32
            return val_ty
    if a_ty.is_fp64() or b_ty.is_fp64():
        return core.float64
    if a_ty.is_fp32() or b_ty.is_fp32():
        return core.float32
    if a_ty.is_fp16() or b_ty.is_fp16():
        return core.float32 if div_or_mod else core.float16
    if a_ty.is_bf16() or b_ty.is_bf16():
        if div_or_mod or not (a_ty.is_bf16() and b_ty.is_bf16()):
            return core.float32
        return core.bfloat16
    if a_ty.is_fp8() or b_ty.is_fp8():
        if a_ty == b_ty:
            return a_ty
        return core.float16
    return integer_promote(a_ty, b_ty)


def _check_operand(x, opname):
    if is_literal(x):
        return
    if not is_value(x):
        raise TileTypeError(f"unsupported operand {describe(x)} for '{opname}'")
    if isinstance(x.type.scalar, core.block_ptr_type):
        raise TileTypeError(
            f"'{opname}' is not defined on block pointers: use tl.advance")
    if x.type.scalar.is_ptr():
        raise TileTypeError(f"'{opname}' is not defined on pointers ({x.type})")


def promote(b, lhs, rhs, opname, div_or_mod=False):
    """Both operands converted to their common type and shape."""
    _check_operand(lhs, opname)
    _check_operand(rhs, opname)
    lty, rty = scalar_type(lhs), scalar_type(rhs)
    ty = computation_type(lty, is_literal(lhs), rty, is_literal(rhs), div_or_mod)
    shape = broadcast_shapes(lhs.shape if is_value(lhs) else (),
                             rhs.shape if is_value(rhs) else (), opname=f"'{opname}'")
    return to_value(b, lhs, ty, shape), to_value(b, rhs, ty, shape), ty


_FLOAT_OPS = {"+": "arith.addf", "-": "arith.subf", "*": "arith.mulf",
              "%": "arith.remf"}
_INT_OPS = {"+": "arith.addi", "-": "arith.subi", "*": "arith.muli",
            "//": "arith.divsi", "%": "arith.remsi", "&": "arith.andi",
            "|": "arith.ori", "^": "arith.xori", "<<": "arith.shli",
            ">>": "arith.shrsi"}
_FLOAT_CMP = {"==": "oeq", "!=": "une", "<": "olt", "<=": "ole", ">": "ogt",
              ">=": "oge"}
_INT_CMP = {"==": "eq", "!=": "ne", "<": "slt", "<=": "sle", ">": "sgt", ">=": "sge"}
# Unsigned integers divide, take remainders and shift right unsigned.
_UINT_OPS = {**_INT_OPS, "//": "arith.divui", "%": "arith.remui", ">>": "arith.shrui"}
_BOOL_CMP = {"==": "eq", "!=": "ne", "<": "ult", "<=": "ule", ">": "ugt", ">=": "uge"}


def _is_pointer(x):
    return is_value(x) and x.type.scalar.is_ptr() \
        and not isinstance(x.type.scalar, core.block_ptr_type)


def addptr(b, ptr, offset):
    if isinstance(offset, int) and not isinstance(offset, bool):
        offset = b.constant(offset, literal_dtype(offset))
    if not is_value(offset) or not offset.type.scalar.is_int() \
            or isinstance(offset.type.scalar, core.block_ptr_type):
        raise TileTypeError(
            f"pointer arithmetic needs an integer offset, got {describe(offset)}")
    if offset.type.scalar.is_bool():
        offset = cast(b, offset, core.int32)
    shape = broadcast_shapes(ptr.shape, offset.shape, opname="pointer arithmetic")
    ptr = broadcast_to(b, ptr, shape)
    offset = broadcast_to(b, offset, shape)
    return b.op(f"tile.addptr {ptr.ssa}, {offset.ssa} : {ptr.type.mlir}, "
                f"{offset.type.mlir}", ptr.type)


def binary(b, op, lhs, rhs):
    """``lhs op rhs`` for an arithmetic or bitwise operator."""
    if op in ("+", "-") and (_is_pointer(lhs) or _is_pointer(rhs)):
        if _is_pointer(lhs) and _is_pointer(rhs):
            raise TileTypeError(f"cannot apply '{op}' to two pointers")
        if op == "-" and _is_pointer(rhs):
            raise TileTypeError("cannot subtract a pointer from an integer")
        ptr, offset = (lhs, rhs) if _is_pointer(lhs) else (rhs, lhs)
        if op == "-":
            offset = negate(b, offset)
        return addptr(b, ptr, offset)
    if op == "/":
        return divide(b, lhs, rhs)
    lhs, rhs, ty = promote(b, lhs, rhs, op, op == "%")
    if ty.is_floating():
        if op not in _FLOAT_OPS:
            raise TileTypeError(f"'{op}' is not defined on floating-point operands ({ty})")
        mnemonic = _FLOAT_OPS[op]
    else:
        if op not in _INT_OPS:
            raise TileTypeError(f"'{op}' is not defined on {ty}")
        mnemonic = (_UINT_OPS if ty.is_int_unsigned() else _INT_OPS)[op]
    return b.op(f"{mnemonic} {lhs.ssa}, {rhs.ssa} : {lhs.type.mlir}", lhs.type)


def divide(b, lhs, rhs, ieee=False):
    """``lhs / rhs`` in floating point (integers as fp32).  On fp32, as in
    Triton, the division may be approximate (fast-math ``afn``: div.full.f32
    on the GPU, within 2 ulp) unless ``ieee`` (tl.math.div_rn)."""
    lhs, rhs, ty = promote(b, lhs, rhs, "/", div_or_mod=True)
    if ty.is_int():
        lhs, rhs = cast(b, lhs, core.float32), cast(b, rhs, core.float32)
        ty = core.float32
    if not ty.is_floating():
        raise TileTypeError(f"'/' is not defined on {ty}")
    flags = "" if ieee or ty != core.float32 else " fastmath<afn>"
    return b.op(f"arith.divf {lhs.ssa}, {rhs.ssa}{flags} : {lhs.type.mlir}", lhs.type)


def compare(b, op, lhs, rhs):
    lhs, rhs, ty = promote(b, lhs, rhs, op)
    if ty.is_floating():
        text = f"arith.cmpf {_FLOAT_CMP[op]}, {lhs.ssa}, {rhs.ssa} : {lhs.type.mlir}"
    elif ty.is_bool() or ty.is_int_unsigned():
        text = f"arith.cmpi {_BOOL_CMP[op]}, {lhs.ssa}, {rhs.ssa} : {lhs.type.mlir}"
    else:
        text = f"arith.cmpi {_INT_CMP[op]}, {lhs.ssa}, {rhs.ssa} : {lhs.type.mlir}"
    return b.op(text, type_with_scalar(lhs.type, core.int1))


def negate(b, x):
    if is_literal(x):
        return -x
    _check_operand(x, "-")
    if x.dtype.is_floating():
        return b.op(f"arith.negf {x.ssa} : {x.type.mlir}", x.type)
    zero = to_value(b, 0, x.dtype, x.shape)
    return b.op(f"arith.subi {zero.ssa}, {x.ssa} : {x.type.mlir}", x.type)


def invert(b, x):
    _check_operand(x, "~")
    if not x.dtype.is_int():
        raise TileTypeError(f"'~' needs an integer or boolean operand, got {x.type}")
    ones = to_value(b, True if x.dtype.is_bool() else -1, x.dtype, x.shape)
    return b.op(f"arith.xori {x.ssa}, {ones.ssa} : {x.type.mlir}", x.type)


def logical_not(b, x):
    cond = to_bool(b, x, "'not'")
    if cond.is_block():
        raise TileTypeError("'not' needs a scalar: use '~' on tensors")
    return invert(b, cond)


def minmax(b, kind, lhs, rhs, propagate_nan=None):
    """``tl.maximum`` / ``tl.minimum``."""
    lhs, rhs, ty = promote(b, lhs, rhs, f"tl.{kind}imum")
    if ty.is_floating():
        nan = propagate_nan == core.PropagateNan.ALL
        mnemonic = f"arith.{kind}imumf" if nan else f"arith.{kind}numf"
    elif ty.is_bool() or ty.is_int_unsigned():
        mnemonic = f"arith.{kind}ui"
    else:
        mnemonic = f"arith.{kind}si"
    return b.op(f"{mnemonic} {lhs.ssa}, {rhs.ssa} : {lhs.type.mlir}", lhs.type)


def where(b, cond, x, y):
    cond = to_bool(b, cond, "the condition of tl.where")
    _check_operand(x, "tl.where")
    _check_operand(y, "tl.where")
    xty, yty = scalar_type(x), scalar_type(y)
    ty = computation_type(xty, is_literal(x), yty, is_literal(y), False)
    shape = broadcast_shapes(cond.shape, x.shape if is_value(x) else (),
                             y.shape if is_value(y) else (), opname="tl.where")
    cond = broadcast_to(b, cond, shape)
    x, y = to_value(b, x, ty, shape), to_value(b, y, ty, shape)
    return b.op(f"tile.where {cond.ssa}, {x.ssa}, {y.ssa} : {x.type.mlir}", x.type)


# --------------------------------------------------------------------------
# Elementwise math
# --------------------------------------------------------------------------

_MATH = {"exp": "math.exp", "exp2": "tile.exp2", "log": "math.log",
         "log2": "math.log2", "sqrt": "math.sqrt", "rsqrt": "math.rsqrt",
         "sin": "math.sin", "cos": "math.cos", "tanh": "math.tanh", "floor": "math.floor",
         "ceil": "math.ceil", "trunc": "math.trunc", "erf": "math.erf", "erfc": "math.erfc",
         "atan": "math.atan",
         "asin": "math.asin", "acos": "math.acos", "cbrt": "math.cbrt"}


def math_unary(b, name, x):
    if is_literal(x):
        x = to_value(b, float(x), core.float32)
    _check_operand(x, f"tl.{name}")
    if name == "abs":
        mnemonic = "math.absf" if x.dtype.is_floating() else "math.absi"
        if x.dtype.is_bool() or x.dtype.is_int_unsigned():
            return x
        return b.op(f"{mnemonic} {x.ssa} : {x.type.mlir}", x.type)
    if not x.dtype.is_floating():
        raise TileTypeError(
            f"tl.{name} expects a floating-point operand, got {x.type}; "
            f"convert it with .to(tl.float32)")
    if name == "sigmoid":
        neg = negate(b, x)
        e = math_unary(b, "exp", neg)
        return binary(b, "/", 1.0, binary(b, "+", 1.0, e))
    return b.op(f"{_MATH[name]} {x.ssa} : {x.type.mlir}", x.type)


def atan2(b, y, x):
    """The angle of the point (x, y), elementwise (math.atan2)."""
    y, x, ty = promote(b, y, x, "atan2")
    if not ty.is_floating():
        raise TileTypeError(f"atan2 expects floating-point operands, got {ty}")
    return b.op(f"math.atan2 {y.ssa}, {x.ssa} : {y.type.mlir}", y.type)


def inline_asm_elementwise(b, asm, constraints, args, dtype, is_pure, pack):
    """tile.inline_asm_elementwise of ``asm`` over ``args`` broadcast to one
    shape: a tensor of ``dtype``, or a tuple of them for a sequence."""
    what = "tl.inline_asm_elementwise"
    for name, value in (("asm", asm), ("constraints", constraints)):
        if not isinstance(value, str):
            raise TileTypeError(f"{what}: {name} must be a constexpr string, got "
                                f"{describe(value)}")
    if not isinstance(is_pure, bool):
        raise TileTypeError(f"{what}: is_pure must be True or False, got {describe(is_pure)}")
    if isinstance(pack, bool) or not isinstance(pack, int) or not is_power_of_two(pack) \
            or pack > 32:
        raise TileTypeError(f"{what}: pack must be 1, 2, 4, 8, 16 or 32, got {describe(pack)}")
    if not isinstance(args, (tuple, list)):
        raise TileTypeError(f"{what}: args must be a tuple or list of tensors and numbers, "
                            f"got {describe(args)}")
    dtypes = tuple(dtype) if isinstance(dtype, (tuple, list)) else (dtype,)
    if not dtypes:
        raise TileTypeError(f"{what}: dtype names no result (give at least one, even one "
                            f"left unused)")

    def element_bits(ty, name):
        if not isinstance(ty, core.dtype) or isinstance(ty, core.pointer_type) \
                or ty.primitive_bitwidth not in (8, 16, 32, 64):
            raise TileTypeError(f"{what}: {name} must be of 8, 16, 32 or 64 bits (convert "
                                f"booleans to tl.int8), got {describe(ty)}")
        return ty
    dtypes = tuple(element_bits(t, "dtype") for t in dtypes)
    for a in args:
        require_value_or_number(a, what)
    tensors = [a for a in args if is_value(a) and a.is_block()]
    if not tensors:
        raise TileTypeError(f"{what}: args hold no tensor (the results take the args' "
                            f"shape)")
    shape = broadcast_shapes(*(t.shape for t in tensors), opname=what)
    operands = [to_value(b, a, None, shape) for a in args]
    for i, operand in enumerate(operands):
        element_bits(operand.dtype, f"args[{i}]")
    results = [core.block_type(t, shape) for t in dtypes]
    name = b.fresh()
    count = f":{len(results)}" if len(results) > 1 else ""
    b.line(f"{name}{count} = tile.inline_asm_elementwise {quote(asm)} "
           f"{{constraints = {quote(constraints)}, pure = {'true' if is_pure else 'false'}, "
           f"packed_element = {pack} : i32}} {', '.join(o.ssa for o in operands)} : "
           f"{', '.join(o.type.mlir for o in operands)} -> "
           f"{', '.join(r.mlir for r in results)}")
    if len(results) == 1 and not isinstance(dtype, (tuple, list)):
        return Value(name, results[0])
    if len(results) == 1:
        return (Value(name, results[0]),)
    return tuple(Value(f"{name}#{i}", r) for i, r in enumerate(results))


def fma(b, x, y, z):
    x, y, ty = promote(b, x, y, "tl.fma")
    x, z, ty = promote(b, x, z, "tl.fma")
    y = to_value(b, y, ty, x.shape)
    if not ty.is_floating():
        raise TileTypeError(f"tl.fma expects floating-point operands, got {ty}")
    return b.op(f"math.fma {x.ssa}, {y.ssa}, {z.ssa} : {x.type.mlir}", x.type)


# --------------------------------------------------------------------------
# Reductions and dot
# --------------------------------------------------------------------------

def reduce(b, kind, x, axis, keep_dims=False, opname=None):
    """tile.reduce of ``kind`` (sum, max, min, or, xor); ``opname`` names the
    builtin in errors (``tl.{kind}`` by default)."""
    opname = opname or f"tl.{kind}"
    if not is_value(x) or not x.is_block():
        raise TileTypeError(f"{opname} expects a tensor, got {describe(x)}")
    src_dtype = x.dtype
    if isinstance(src_dtype, core.block_ptr_type) or src_dtype.is_ptr():
        raise TileTypeError(f"{opname} expects numbers, got {x.type}")
    if kind in ("or", "xor") and not (src_dtype.is_int() or src_dtype.is_bool()):
        raise TileTypeError(f"{opname} combines integers, got {src_dtype}")
    if kind == "sum":
        if src_dtype.is_int_unsigned() and src_dtype.primitive_bitwidth < 32:
            x = cast(b, x, core.uint32)
        elif src_dtype.is_int() and src_dtype.primitive_bitwidth < 32:
            x = cast(b, x, core.int32)
        elif src_dtype.is_floating() and src_dtype.primitive_bitwidth < 32:
            x = cast(b, x, core.float32)
    elif src_dtype.is_bool():
        x = cast(b, x, core.int32)
    elif kind in ("max", "min") and src_dtype.is_int_unsigned():
        # tile.reduce orders integers as signed: with the sign bit flipped,
        # unsigned ones order so; flipped back after.
        bits = src_dtype.primitive_bitwidth
        signed = core.DTYPES_BY_NAME[f"int{bits}"]
        flipped = cast(b, binary(b, "^", x, 1 << (bits - 1)), signed)
        extreme = reduce(b, kind, flipped, axis, keep_dims, opname)
        return binary(b, "^", cast(b, extreme, src_dtype), 1 << (bits - 1))
    rank = len(x.shape)
    if axis is None:
        result = x
        while is_value(result) and result.is_block():
            result = _reduce_axis(b, kind, result, 0)
        if kind != "sum" and src_dtype.is_bool():
            result = cast(b, result, core.int1)
        if keep_dims:
            result = broadcast_to(b, result, (1,) * rank)
        return result
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise TileTypeError(f"{opname}: axis must be a constexpr integer, got {describe(axis)}")
    if axis < 0:
        axis += rank
    if not 0 <= axis < rank:
        raise TileTypeError(f"{opname}: axis {axis} out of range for a tensor of rank {rank}")
    result = _reduce_axis(b, kind, x, axis)
    if kind != "sum" and src_dtype.is_bool():
        result = cast(b, result, core.int1)
    if keep_dims:
        result = expand_dims(b, result, axis) if is_value(result) and result.is_block() \
            else splat(b, result, (1,))
    return result


def reduce_with_indices(b, kind, x, axis, tie_break_left=True, keep_dims=False):
    """``tl.max``/``tl.min`` with ``return_indices``: the extreme along
    ``axis`` and the index of the first element equal to it (the last
    with ``tie_break_left=False``); a NaN counts as equal to a NaN
    extreme.  Built from a reduction, a comparison and a second reduction
    of the indices."""
    if axis is None:
        raise TileTypeError(f"tl.{kind}: return_indices needs a constexpr integer axis, "
                            f"got {describe(axis)}")
    values = reduce(b, kind, x, axis, keep_dims)   # checks x and axis
    rank = len(x.shape)
    axis %= rank
    length = x.shape[axis]
    extreme = broadcast_to(b, values if keep_dims else expand_dims(b, values, axis), x.shape)
    hit = compare(b, "==", x, extreme)
    if x.dtype.is_floating():
        both_nan = binary(b, "&", compare(b, "!=", x, x), compare(b, "!=", extreme, extreme))
        hit = binary(b, "|", hit, both_nan)
    ty = core.block_type(core.int32, (length,))
    index = b.op(f"tile.arange 0 to {length} : {ty.mlir}", ty)
    for _ in range(axis):
        index = expand_dims(b, index, 0)
    while len(index.shape) < rank:
        index = expand_dims(b, index, len(index.shape))
    index = broadcast_to(b, index, x.shape)
    if tie_break_left:
        candidates = where(b, hit, index, length)
        indices = reduce(b, "min", candidates, axis, keep_dims)
    else:
        candidates = where(b, hit, index, -1)
        indices = reduce(b, "max", candidates, axis, keep_dims)
    return values, indices


def _reduce_axis(b, kind, x, axis):
    shape = x.shape[:axis] + x.shape[axis + 1:]
    ty = make_type(x.dtype, shape)
    return b.op(f"tile.reduce {kind} {x.ssa} axis {axis} : {x.type.mlir} -> {ty.mlir}", ty)


_DOT_TYPES = ("fp16", "bf16", "fp8e5", "fp8e4nv", "fp32", "int8")


def dot(b, a, bmat, acc=None, out_dtype=core.float32):
    for name, x in (("first", a), ("second", bmat)):
        if not is_value(x) or len(x.shape) != 2:
            raise TileTypeError(
                f"tl.dot: the {name} operand must be a 2-D tensor, got {describe(x)}")
    if a.dtype != bmat.dtype:
        raise TileTypeError(
            f"tl.dot: both operands must have one element type, got {a.dtype} and "
            f"{bmat.dtype}; convert one with .to()")
    if a.dtype.name not in _DOT_TYPES:
        raise TileTypeError(f"tl.dot: unsupported operand type {a.dtype}")
    (m, k), (k2, n) = a.shape, bmat.shape
    if k != k2:
        raise TileTypeError(
            f"tl.dot: inner dimensions differ: {list(a.shape)} times {list(bmat.shape)}")
    acc_dtype = core.int32 if a.dtype.name == "int8" else core.float32
    if out_dtype is None:
        out_dtype = acc_dtype
    # A narrower float result (Triton's out_dtype=tl.float16 for fp16
    # operands, which it accumulates in fp16): the product accumulates in
    # fp32 and is rounded once.
    narrowable = a.dtype in (core.float16, core.bfloat16, core.float8e5, core.float8e4nv)
    rounded = narrowable and out_dtype in (core.float16, core.bfloat16)
    if out_dtype != acc_dtype and not rounded:
        raise TileTypeError(
            f"tl.dot: out_dtype {out_dtype} is not supported for {a.dtype} operands; "
            f"they accumulate in {acc_dtype}" +
            (", and may give fp16 or bf16" if narrowable else ""))
    acc_ty = core.block_type(acc_dtype, (m, n))
    out_ty = core.block_type(out_dtype, (m, n))
    if acc is None:
        acc = b.constant(0, acc_dtype, (m, n))
    elif not is_value(acc) or acc.type != out_ty:
        raise TileTypeError(f"tl.dot: the accumulator must be {out_ty}, got {describe(acc)}")
    elif rounded:
        acc = cast(b, acc, acc_dtype)
    result = b.op(f"tile.dot {a.ssa}, {bmat.ssa}, {acc.ssa} : {a.type.mlir}, "
                  f"{bmat.type.mlir} -> {acc_ty.mlir}", acc_ty)
    return cast(b, result, out_dtype) if rounded else result


# --------------------------------------------------------------------------
# Memory
# --------------------------------------------------------------------------

def _is_block_ptr(x):
    return is_value(x) and isinstance(x.type, core.block_ptr_type)


def _boundary_check(bp, boundary_check, what):
    if boundary_check is None:
        return []
    if isinstance(boundary_check, int) and not isinstance(boundary_check, bool):
        boundary_check = (boundary_check,)
    if not isinstance(boundary_check, (tuple, list)) or not all(
            isinstance(d, int) and not isinstance(d, bool) for d in boundary_check):
        raise TileTypeError(f"{what}: boundary_check must be a tuple of constexpr integers")
    rank = len(bp.type.block.shape)
    dims = sorted(set(boundary_check))
    for d in dims:
        if not 0 <= d < rank:
            raise TileTypeError(
                f"{what}: boundary_check dimension {d} out of range for rank {rank}")
    return dims


def load(b, ptr, mask=None, other=None, boundary_check=None, padding_option=""):
    if _is_block_ptr(ptr):
        if mask is not None or other is not None:
            raise TileTypeError(
                "tl.load through a block pointer takes boundary_check and "
                "padding_option, not mask/other")
        dims = _boundary_check(ptr, boundary_check, "tl.load")
        text = f"tile.load_block {ptr.ssa}"
        if dims:
            text += " boundary_check [" + ", ".join(map(str, dims)) + "]"
        if padding_option not in ("", None, "zero", "nan"):
            raise TileTypeError(
                f"tl.load: padding_option must be 'zero' or 'nan', got {padding_option!r}")
        if padding_option == "nan":
            if not ptr.type.element_ty.is_floating():
                raise TileTypeError("tl.load: padding_option='nan' needs a float tensor")
            text += " padding nan"
        return b.op(f"{text} : {ptr.type.mlir}", ptr.type.block)
    if isinstance(ptr, TensorDescriptor):
        raise TileTypeError("tl.load takes pointers and block pointers; load through a "
                            "tensor descriptor with desc.load(offsets)")
    if not _is_pointer(ptr):
        raise TileTypeError(f"tl.load expects a pointer, got {describe(ptr)}")
    if boundary_check:
        raise TileTypeError("tl.load: boundary_check needs a block pointer")
    if other is not None and mask is None:
        raise TileTypeError("tl.load: 'other' needs a 'mask'")
    elem = ptr.dtype.element_ty
    if mask is not None:
        mask = to_bool(b, mask, "the mask of tl.load")
        shape = broadcast_shapes(ptr.shape, mask.shape, opname="tl.load")
        ptr = broadcast_to(b, ptr, shape)
        mask = broadcast_to(b, mask, shape)
    shape = ptr.shape
    text = f"tile.load {ptr.ssa}"
    if mask is not None:
        text += f" mask {mask.ssa}"
        if other is not None:
            _check_operand(other, "tl.load")
            if is_value(other) and len(other.shape) > len(shape):
                raise TileTypeError(
                    f"tl.load: 'other' of shape {list(other.shape)} does not fit the "
                    f"pointers' shape {list(shape)}")
            other = to_value(b, other, elem, shape) if is_value(other) \
                else b.constant(other, elem, shape)
            text += f" other {other.ssa}"
    return b.op(f"{text} : {ptr.type.mlir}", make_type(elem, shape))


def store(b, ptr, value, mask=None, boundary_check=None):
    if _is_block_ptr(ptr):
        if mask is not None:
            raise TileTypeError(
                "tl.store through a block pointer takes boundary_check, not mask")
        dims = _boundary_check(ptr, boundary_check, "tl.store")
        _check_writable(ptr, "tl.store")
        _check_operand(value, "tl.store")
        value = to_value(b, value, ptr.type.element_ty, ptr.type.block.shape)
        text = f"tile.store_block {ptr.ssa}, {value.ssa}"
        if dims:
            text += " boundary_check [" + ", ".join(map(str, dims)) + "]"
        b.line(f"{text} : {ptr.type.mlir}")
        return None
    if isinstance(ptr, TensorDescriptor):
        raise TileTypeError("tl.store takes pointers and block pointers; store through a "
                            "tensor descriptor with desc.store(offsets, value)")
    if not _is_pointer(ptr):
        raise TileTypeError(f"tl.store expects a pointer, got {describe(ptr)}")
    if boundary_check:
        raise TileTypeError("tl.store: boundary_check needs a block pointer")
    ptr, operands = _written_operands(b, ptr, value, mask, "tl.store")
    b.line(f"tile.store {operands} : {ptr.type.mlir}")
    return None


def _check_writable(ptr, opname):
    """Refuses a write through a pointer to const data (tl.const)."""
    if getattr(ptr.type.scalar, "const", False):
        raise TileTypeError(f"{opname} writes through a pointer to const data (made from a "
                            f"parameter annotated tl.const)")


def _written_operands(b, ptr, value, mask, opname):
    """Pointers, value and mask of a store or an atomic, broadcast to one
    shape: the pointers and the operands' text ('%p, %v mask %m')."""
    _check_writable(ptr, opname)
    _check_operand(value, opname)
    shape = ptr.shape
    if mask is not None:
        mask = to_bool(b, mask, f"the mask of {opname}")
        shape = broadcast_shapes(shape, mask.shape, opname=opname)
    if is_value(value):
        shape = broadcast_shapes(shape, value.shape, opname=opname)
    ptr = broadcast_to(b, ptr, shape)
    value = to_value(b, value, ptr.dtype.element_ty, shape)
    text = f"{ptr.ssa}, {value.ssa}"
    if mask is not None:
        text += f" mask {broadcast_to(b, mask, shape).ssa}"
    return ptr, text


# Each atomic update (tile.atomic_rmw's kind) and the elements it takes.
# Unsigned integers take the updates whose bits are the same either way
# (max and min order them otherwise).
ATOMIC_TYPES = {
    "add": ("fp32", "fp64", "int32", "int64", "uint32", "uint64"),
    "max": ("fp32", "int32", "int64"),
    "min": ("fp32", "int32", "int64"),
    "and": ("int32", "int64", "uint32", "uint64"),
    "or": ("int32", "int64", "uint32", "uint64"),
    "xor": ("int32", "int64", "uint32", "uint64"),
    "xchg": ("fp32", "int32", "int64", "uint32", "uint64"),
}


# Triton's orderings of an atomic and the threads they are with; its
# defaults are the strongest ordering at device scope.
ATOMIC_SEMANTICS = ("relaxed", "acquire", "release", "acq_rel")
ATOMIC_SCOPES = ("cta", "gpu", "sys")


def _ordering(sem, scope, opname):
    """The ' sem S scope C' of an atomic's text (Triton's defaults for None;
    the IR's, relaxed at gpu scope, left out)."""
    sem = "acq_rel" if sem is None else sem
    scope = "gpu" if scope is None else scope
    if not isinstance(sem, str) or sem not in ATOMIC_SEMANTICS:
        raise TileTypeError(f"{opname}: sem={sem!r} is not one of "
                            f"{', '.join(map(repr, ATOMIC_SEMANTICS))}")
    if not isinstance(scope, str) or scope not in ATOMIC_SCOPES:
        raise TileTypeError(f"{opname}: scope={scope!r} is not one of "
                            f"{', '.join(map(repr, ATOMIC_SCOPES))}")
    return ("" if sem == "relaxed" else f" sem {sem}") + \
        ("" if scope == "gpu" else f" scope {scope}")


def atomic_rmw(b, kind, ptr, value, mask=None, sem=None, scope=None):
    """tl.atomic_<kind>: tile.atomic_rmw, giving the old elements."""
    opname = f"tl.atomic_{kind}"
    if _is_block_ptr(ptr):
        raise TileTypeError(f"{opname} takes a tensor of pointers, not a block pointer")
    if not _is_pointer(ptr):
        raise TileTypeError(f"{opname} expects a pointer, got {describe(ptr)}")
    elem = ptr.dtype.element_ty
    if elem.name not in ATOMIC_TYPES[kind]:
        raise TileTypeError(
            f"{opname} updates {', '.join(ATOMIC_TYPES[kind])} elements, not {elem.name}")
    ordering = _ordering(sem, scope, opname)
    ptr, operands = _written_operands(b, ptr, value, mask, opname)
    result_type = core.block_type(elem, ptr.shape) if ptr.shape else elem
    return b.op(f"tile.atomic_rmw {kind} {operands}{ordering} : {ptr.type.mlir}", result_type)


def _access_ordering(sem, scope, default, opname):
    """The ' sem S scope C' of an atomic load or store: ``default`` (acquire
    or release) or relaxed."""
    sem = default if sem is None else sem
    if sem not in (default, "relaxed"):
        raise TileTypeError(f"{opname}: sem={sem!r} is not {default!r} or 'relaxed'")
    return _ordering(sem, scope, opname)


def _atomic_access_pointer(ptr, opname):
    if _is_block_ptr(ptr):
        raise TileTypeError(f"{opname} takes a tensor of pointers, not a block pointer")
    if not _is_pointer(ptr):
        raise TileTypeError(f"{opname} expects a pointer, got {describe(ptr)}")
    elem = ptr.dtype.element_ty
    if elem.is_ptr() or elem.primitive_bitwidth not in (16, 32, 64):
        raise TileTypeError(f"{opname} takes 16-, 32- or 64-bit elements, not {elem.name}")
    return elem


def atomic_load(b, ptr, mask=None, sem=None, scope=None):
    """tl.atomic_load: tile.atomic_load (masked-off elements zero)."""
    opname = "tl.atomic_load"
    elem = _atomic_access_pointer(ptr, opname)
    ordering = _access_ordering(sem, scope, "acquire", opname)
    text = ptr.ssa
    if mask is not None:
        mask = to_bool(b, mask, f"the mask of {opname}")
        shape = broadcast_shapes(ptr.shape, mask.shape, opname=opname)
        ptr = broadcast_to(b, ptr, shape)
        text = f"{ptr.ssa} mask {broadcast_to(b, mask, shape).ssa}"
    result_type = core.block_type(elem, ptr.shape) if ptr.shape else elem
    return b.op(f"tile.atomic_load {text}{ordering} : {ptr.type.mlir}", result_type)


def atomic_store(b, ptr, value, mask=None, sem=None, scope=None):
    """tl.atomic_store: tile.atomic_store."""
    opname = "tl.atomic_store"
    _atomic_access_pointer(ptr, opname)
    ordering = _access_ordering(sem, scope, "release", opname)
    ptr, operands = _written_operands(b, ptr, value, mask, opname)
    b.line(f"tile.atomic_store {operands}{ordering} : {ptr.type.mlir}")
    return None


# The elements tile.atomic_cas takes.
ATOMIC_CAS_TYPES = ("fp32", "int32", "int64", "uint32", "uint64")


def atomic_cas(b, ptr, cmp, value, sem=None, scope=None):
    """tl.atomic_cas: tile.atomic_cas, giving the old elements."""
    opname = "tl.atomic_cas"
    if _is_block_ptr(ptr):
        raise TileTypeError(f"{opname} takes a tensor of pointers, not a block pointer")
    if not _is_pointer(ptr):
        raise TileTypeError(f"{opname} expects a pointer, got {describe(ptr)}")
    _check_writable(ptr, opname)
    elem = ptr.dtype.element_ty
    if elem.name not in ATOMIC_CAS_TYPES:
        raise TileTypeError(
            f"{opname} swaps {', '.join(ATOMIC_CAS_TYPES)} elements, not {elem.name}")
    ordering = _ordering(sem, scope, opname)
    _check_operand(cmp, opname)
    _check_operand(value, opname)
    shape = ptr.shape
    for operand in (cmp, value):
        if is_value(operand):
            shape = broadcast_shapes(shape, operand.shape, opname=opname)
    ptr = broadcast_to(b, ptr, shape)
    cmp = to_value(b, cmp, elem, shape)
    value = to_value(b, value, elem, shape)
    result_type = core.block_type(elem, shape) if shape else elem
    return b.op(f"tile.atomic_cas {ptr.ssa}, {cmp.ssa}, {value.ssa}{ordering} : "
                f"{ptr.type.mlir}", result_type)


def _scalar_int(b, x, scalar, what):
    if is_literal(x) and not isinstance(x, bool):
        return b.constant(int(x), scalar)
    if is_value(x) and not x.is_block() and x.dtype.is_int() and not x.dtype.is_bool() \
            and not isinstance(x.dtype, core.block_ptr_type):
        return cast(b, x, scalar)
    raise TileTypeError(f"{what} must be integer scalars, got {describe(x)}")


def _int_list(x, what):
    if isinstance(x, (tuple, list)):
        return list(x)
    raise TileTypeError(f"{what} must be a tuple, got {describe(x)}")


def make_block_ptr(b, base, shape, strides, offsets, block_shape, order):
    if not _is_pointer(base) or base.is_block():
        raise TileTypeError(
            f"tl.make_block_ptr: base must be a scalar pointer, got {describe(base)}")
    shape = _int_list(shape, "tl.make_block_ptr: shape")
    strides = _int_list(strides, "tl.make_block_ptr: strides")
    offsets = _int_list(offsets, "tl.make_block_ptr: offsets")
    block_shape = check_shape(_int_list(block_shape, "tl.make_block_ptr: block_shape"),
                              "tl.make_block_ptr: block_shape")
    order = _int_list(order, "tl.make_block_ptr: order")
    rank = len(block_shape)
    for name, items in (("shape", shape), ("strides", strides), ("offsets", offsets),
                        ("order", order)):
        if len(items) != rank:
            raise TileTypeError(
                f"tl.make_block_ptr: {name} has {len(items)} entries but block_shape has {rank}")
    if not is_permutation(order, rank):
        raise TileTypeError(f"tl.make_block_ptr: order {order} is not a permutation "
                            f"of 0 .. {rank - 1}")
    shape_v = [_scalar_int(b, s, core.int64, "tl.make_block_ptr: shape entries") for s in shape]
    stride_v = [_scalar_int(b, s, core.int64, "tl.make_block_ptr: strides") for s in strides]
    offset_v = [_scalar_int(b, s, core.int32, "tl.make_block_ptr: offsets") for s in offsets]
    ty = core.block_ptr_type(core.block_type(base.dtype.element_ty, block_shape),
                             const=base.dtype.const)
    join = lambda vs: ", ".join(v.ssa for v in vs)  # noqa: E731
    return b.op(f"tile.make_block_ptr {base.ssa}, [{join(shape_v)}], [{join(stride_v)}], "
                f"[{join(offset_v)}] order [{', '.join(map(str, order))}] : {ty.mlir}", ty)


def advance(b, ptr, offsets):
    if not _is_block_ptr(ptr):
        raise TileTypeError(f"tl.advance expects a block pointer, got {describe(ptr)}")
    offsets = _int_list(offsets, "tl.advance: offsets")
    if len(offsets) != len(ptr.type.block.shape):
        raise TileTypeError(
            f"tl.advance: {len(offsets)} offsets for a block pointer of rank "
            f"{len(ptr.type.block.shape)}")
    offset_v = [_scalar_int(b, s, core.int32, "tl.advance: offsets") for s in offsets]
    listed = ", ".join(v.ssa for v in offset_v)
    return b.op(f"tile.advance {ptr.ssa}, [{listed}] : {ptr.type.mlir}", ptr.type)


# --------------------------------------------------------------------------
# Tensor descriptors
# --------------------------------------------------------------------------

class TensorDescriptor:
    """A tensor descriptor (``tl.make_tensor_descriptor``) while a kernel
    compiles: not an SSA value but a compile-time record of the base
    pointer, the shape and the strides (the values the user gave, as
    ``desc.shape`` and ``desc.strides`` show them, and their int64 forms,
    emitted once where the descriptor is made) and the block type.  Each
    load and store makes a block pointer from them at its offsets, so the
    compiler sees block-pointer ops only."""

    __slots__ = ("base", "shape", "strides", "type", "padding", "shape_i64", "strides_i64")

    def __init__(self, base, shape, strides, type, padding, shape_i64, strides_i64):
        self.base = base
        self.shape = shape
        self.strides = strides
        self.type = type
        self.padding = padding
        self.shape_i64 = shape_i64
        self.strides_i64 = strides_i64

    @property
    def rank(self):
        return len(self.type.block_shape)

    def __repr__(self):
        return str(self.type)


# Triton's limit: a TMA descriptor has 1 to 5 dimensions.
MAX_DESCRIPTOR_RANK = 5


def _descriptor_entry(b, x, scalar, what):
    """A shape entry or stride: a Python int stays a constant; an integer
    scalar is converted to ``scalar``."""
    if isinstance(x, int) and not isinstance(x, bool):
        literal_dtype(x)   # fits in 64 bits
        return x
    if is_value(x) and not x.is_block() and x.dtype.is_int() and not x.dtype.is_bool():
        return cast(b, x, scalar)
    raise TileTypeError(f"{what} must be integers or integer scalars, got {describe(x)}")


def make_tensor_descriptor(b, base, shape, strides, block_shape, padding_option="zero"):
    what = "tl.make_tensor_descriptor"
    if not _is_pointer(base) or base.is_block():
        raise TileTypeError(f"{what}: base must be a scalar pointer, got {describe(base)}")
    elem = base.dtype.element_ty
    shape = _int_list(shape, f"{what}: shape")
    strides = _int_list(strides, f"{what}: strides")
    block_shape = _int_list(block_shape, f"{what}: block_shape")
    rank = len(shape)
    if not 1 <= rank <= MAX_DESCRIPTOR_RANK:
        raise TileTypeError(
            f"{what}: a tensor descriptor has 1 to {MAX_DESCRIPTOR_RANK} dimensions, "
            f"got a shape of {rank}")
    for name, items in (("strides", strides), ("block_shape", block_shape)):
        if len(items) != rank:
            raise TileTypeError(
                f"{what}: {name} has {len(items)} entries but shape has {rank}")
    block_shape = check_shape(tuple(block_shape), f"{what}: block_shape")
    if elem.is_bool():
        raise TileTypeError(f"{what}: int1 elements are not supported (store booleans as int8)")
    inner_bytes = block_shape[-1] * elem.primitive_bitwidth // 8
    if inner_bytes < 16:
        raise TileTypeError(
            f"{what}: the block's last dimension must span at least 16 bytes, got "
            f"{block_shape[-1]} {elem} elements ({inner_bytes} bytes)")
    last = strides[-1]
    if is_value(last):
        raise TileTypeError(
            f"{what}: the last stride must be the constant 1 (the innermost dimension is "
            f"contiguous), got a run-time {describe(last)}; write 1 (Triton specialises "
            f"an argument equal to 1 into a constant, Tile compiles ahead of time)")
    if isinstance(last, bool) or last != 1:
        raise TileTypeError(
            f"{what}: the last stride must be 1 (the innermost dimension is contiguous), "
            f"got {last!r}")
    if padding_option in ("", None):
        padding_option = "zero"
    if padding_option not in ("zero", "nan"):
        raise TileTypeError(
            f"{what}: padding_option must be 'zero' or 'nan', got {padding_option!r}")
    if padding_option == "nan" and not elem.is_floating():
        raise TileTypeError(f"{what}: padding_option='nan' needs float elements, not {elem}")
    shape = tuple(_descriptor_entry(b, s, core.int32, f"{what}: shape entries") for s in shape)
    for s in shape:
        if isinstance(s, int) and not 0 <= s < 2**31:
            raise TileTypeError(
                f"{what}: shape entries must be in [0, 2**31) (int32), got {s}")
    shape_i64 = [_scalar_int(b, s, core.int64, f"{what}: shape entries") for s in shape]
    strides = tuple(_descriptor_entry(b, s, core.int64, f"{what}: strides") for s in strides)
    strides_i64 = [_scalar_int(b, s, core.int64, f"{what}: strides") for s in strides]
    ty = core.tensor_descriptor_type(core.block_type(elem, block_shape))
    return TensorDescriptor(base, shape, strides, ty, padding_option, shape_i64, strides_i64)


def _check_descriptor(desc, fn):
    if not isinstance(desc, TensorDescriptor):
        raise TileTypeError(
            f"{fn} expects a tensor descriptor (tl.make_tensor_descriptor), got "
            f"{describe(desc)}")


def _descriptor_offsets(b, desc, offsets, what):
    """``offsets`` as int32 values, one per dimension of ``desc``."""
    if not isinstance(offsets, (tuple, list)):
        raise TileTypeError(
            f"{what}: offsets must be a tuple or list with one integer per dimension, got "
            f"{describe(offsets)}")
    if len(offsets) != desc.rank:
        raise TileTypeError(
            f"{what}: a tensor descriptor of rank {desc.rank} takes {desc.rank} offsets, "
            f"got {len(offsets)}")
    for o in offsets:
        if isinstance(o, (bool, float)):   # _scalar_int would take them
            raise TileTypeError(f"{what}: offsets must be integer scalars, got {describe(o)}")
    return [_scalar_int(b, o, core.int32, f"{what}: offsets") for o in offsets]


def _descriptor_block_ptr(b, desc, offsets):
    """The block pointer to ``desc``'s block at ``offsets`` (int32 values):
    the innermost dimension fastest."""
    order = tuple(range(desc.rank - 1, -1, -1))
    return make_block_ptr(b, desc.base, desc.shape_i64, desc.strides_i64, offsets,
                          desc.type.block_shape, order)


def descriptor_load(b, desc, offsets):
    """``desc.load(offsets)``: a block-pointer load checked in every
    dimension, padded with the descriptor's padding."""
    _check_descriptor(desc, "tl.load_tensor_descriptor")
    offsets = _descriptor_offsets(b, desc, offsets, "desc.load")
    ptr = _descriptor_block_ptr(b, desc, offsets)
    return load(b, ptr, boundary_check=tuple(range(desc.rank)),
                padding_option=desc.padding)


def descriptor_store(b, desc, offsets, value):
    """``desc.store(offsets, value)``: ``value``, of the block's shape (no
    broadcasting, as in Triton), converted to the element type and stored
    through a block pointer checked in every dimension."""
    _check_descriptor(desc, "tl.store_tensor_descriptor")
    offsets = _descriptor_offsets(b, desc, offsets, "desc.store")
    value = _descriptor_value(b, desc, value, "desc.store")
    ptr = _descriptor_block_ptr(b, desc, offsets)
    return store(b, ptr, value, boundary_check=tuple(range(desc.rank)))


def _descriptor_value(b, desc, value, what):
    """``value``, a tensor of ``desc``'s block shape (no broadcasting, as in
    Triton), converted to its element type."""
    block = desc.type.block
    if not is_value(value) or not value.is_block() or value.shape != block.shape:
        raise TileTypeError(
            f"{what}: the value must be a tensor of the block's shape "
            f"{list(block.shape)}, got {describe(value)}")
    return cast(b, value, block.element_ty)


def descriptor_update(b, kind, desc, offsets, value):
    """``desc.atomic_<kind>(offsets, value)``: tile.atomic_rmw_block on the
    block pointer at ``offsets`` (every dimension checked); ``value`` as
    for ``desc.store``."""
    what = f"desc.atomic_{kind}"
    _check_descriptor(desc, what)
    offsets = _descriptor_offsets(b, desc, offsets, what)
    block = desc.type.block
    if block.element_ty.name not in ATOMIC_TYPES[kind]:
        raise TileTypeError(
            f"{what} updates {', '.join(ATOMIC_TYPES[kind])} elements, not "
            f"{block.element_ty.name}")
    value = _descriptor_value(b, desc, value, what)
    ptr = _descriptor_block_ptr(b, desc, offsets)
    b.line(f"tile.atomic_rmw_block {kind} {ptr.ssa}, {value.ssa} : {ptr.type.mlir}")
    return None
