"""Textual MLIR emission: SSA values, indentation, locations, constants."""

import contextlib
import math
import struct

from ..language import core
from .errors import TileTypeError


class Value:
    """An SSA value of the program being compiled, with its tile-language type
    (a ``dtype``, ``pointer_type``, ``block_type`` or ``block_ptr_type``)."""

    __slots__ = ("ssa", "type")

    def __init__(self, ssa, type):
        self.ssa = ssa
        self.type = type

    @property
    def shape(self):
        return self.type.shape if isinstance(self.type, core.block_type) else ()

    @property
    def dtype(self):
        """The scalar (element) type."""
        return self.type.scalar

    def is_block(self):
        return isinstance(self.type, core.block_type)

    def __repr__(self):
        return f"Value({self.ssa}: {self.type!r})"


def type_with_scalar(ty, scalar):
    """``ty`` with its element type replaced (shape kept)."""
    if isinstance(ty, core.block_type):
        return core.block_type(scalar, ty.shape)
    return scalar


def make_type(scalar, shape):
    return core.block_type(scalar, shape) if shape else scalar


class Builder:
    """Accumulates the lines of one function body."""

    def __init__(self):
        self.lines = []
        self.depth = 2
        self._next_id = 0
        self.loc = None   # the location string attached to emitted ops

    def fresh(self):
        name = f"%{self._next_id}"
        self._next_id += 1
        return name

    def line(self, text, with_loc=True):
        suffix = f" {self.loc}" if (with_loc and self.loc) else ""
        self.lines.append("  " * self.depth + text + suffix)

    def op(self, text, ty):
        """Emits ``%N = text`` and returns the new value of type ``ty``."""
        name = self.fresh()
        self.line(f"{name} = {text}")
        return Value(name, ty)

    @contextlib.contextmanager
    def capture(self):
        """Redirects emitted lines into a fresh list (yielded), one level
        deeper; used to build region bodies before their op's header."""
        saved_lines, saved_depth = self.lines, self.depth
        captured = []
        self.lines, self.depth = captured, saved_depth + 1
        try:
            yield captured
        finally:
            self.lines, self.depth = saved_lines, saved_depth

    # -- constants ---------------------------------------------------------

    def constant(self, value, scalar, shape=()):
        """A constant of scalar type ``scalar``, splatted to ``shape``."""
        literal = format_literal(value, scalar)
        ty = make_type(scalar, shape)
        if shape:
            return self.op(f"arith.constant dense<{literal}> : {ty.mlir}", ty)
        if scalar.is_bool():
            return self.op(f"arith.constant {literal}", ty)
        return self.op(f"arith.constant {literal} : {ty.mlir}", ty)


def _float_bits(value, scalar):
    """The bit pattern of ``value`` (an inf or NaN) in type ``scalar``."""
    name = scalar.name
    if name == "fp64":
        return f"0x{struct.unpack('<Q', struct.pack('<d', value))[0]:016X}"
    if name == "fp32":
        return f"0x{struct.unpack('<I', struct.pack('<f', value))[0]:08X}"
    if name == "bf16":
        return f"0x{struct.unpack('<I', struct.pack('<f', value))[0] >> 16:04X}"
    if name == "fp16":
        return f"0x{struct.unpack('<H', struct.pack('<e', value))[0]:04X}"
    if name == "fp8e5":
        return f"0x{struct.unpack('<H', struct.pack('<e', value))[0] >> 8:02X}"
    if name == "fp8e4nv":
        if math.isnan(value):
            return "0x7F"
        raise TileTypeError("float8e4nv has no infinity")
    raise TileTypeError(f"no float constant of type {scalar}")


def format_literal(value, scalar):
    """``value`` spelled as an MLIR literal of type ``scalar``."""
    if scalar.is_bool():
        return "true" if value else "false"
    if scalar.is_int():
        value = int(value)
        bits = scalar.primitive_bitwidth
        if not -(1 << (bits - 1)) <= value < (1 << bits):
            raise TileTypeError(f"integer constant {value} does not fit in {scalar}")
        if value >= (1 << (bits - 1)):   # an unsigned spelling: wrap
            value -= 1 << bits
        return str(value)
    if scalar.is_floating():
        value = float(value)
        if math.isinf(value) or math.isnan(value):
            return _float_bits(value, scalar)
        text = repr(value)
        if "e" in text and "." not in text.split("e")[0]:
            mantissa, exponent = text.split("e")
            text = f"{mantissa}.0e{exponent}"
        return text
    raise TileTypeError(f"no constant of type {scalar}")


def quote(text):
    """``text`` as an MLIR string literal."""
    out = []
    for byte in text.encode("utf-8"):
        char = chr(byte)
        if char in '"\\':
            out.append("\\" + char)
        elif 0x20 <= byte < 0x7F:
            out.append(char)
        else:
            out.append(f"\\{byte:02X}")
    return '"' + "".join(out) + '"'


def format_attribute(value):
    """A Python constant as an MLIR attribute, for what a module records
    (``tile.constexprs``, ``tile.metadata``): tile-compile writes it back as
    JSON.  None is ``unit`` (JSON null), a dtype its name, anything else its
    repr as a string."""
    if value is None:
        return "unit"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if not -(1 << 63) <= value < (1 << 63):
            raise TileTypeError(f"{value} does not fit in 64 bits")
        return f"{value} : i64"
    if isinstance(value, float):
        return f"{format_literal(value, core.float64)} : f64"
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, core.dtype):
        return quote(value.name)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_attribute(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{quote(str(k))} = {format_attribute(v)}"
                               for k, v in value.items()) + "}"
    return quote(repr(value))
