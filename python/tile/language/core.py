"""Types and builtin declarations of the tile language (``tile.language``).

The functions declared here are markers: they are never executed.  The
compiler recognises them inside ``@tile.jit`` functions and emits the
matching ``tile`` dialect operations (see ``tile.compiler.builtins``).
"""

import enum


class constexpr:
    """Marks a compile-time constant.

    Used as a parameter annotation (``BLOCK: tl.constexpr``), as an
    annotation of an assignment (``LN2: tl.constexpr = 0.693``) or to wrap a
    module-level value a kernel reads (``SCALE = tl.constexpr(2.0)``).
    """

    def __init__(self, value=None):
        while isinstance(value, constexpr):
            value = value.value
        self.value = value

    def __repr__(self):
        return f"constexpr[{self.value!r}]"


# --------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------


class dtype:
    """A scalar element type (``tl.float16``, ``tl.int32``, ...)."""

    # name -> (mlir spelling, kind, bit width, mantissa width)
    _INFO = {
        "int1": ("i1", "bool", 1, 0),
        "int8": ("i8", "int", 8, 0),
        "int16": ("i16", "int", 16, 0),
        "int32": ("i32", "int", 32, 0),
        "int64": ("i64", "int", 64, 0),
        "fp8e5": ("f8E5M2", "float", 8, 2),
        "fp8e4nv": ("f8E4M3FN", "float", 8, 3),
        "fp16": ("f16", "float", 16, 10),
        "bf16": ("bf16", "float", 16, 7),
        "fp32": ("f32", "float", 32, 23),
        "fp64": ("f64", "float", 64, 52),
    }
    # Triton's spelling in signatures: i32 for int32, fp16 for float16.
    _SIGNATURE = {"int1": "i1", "int8": "i8", "int16": "i16", "int32": "i32",
                  "int64": "i64"}

    def __init__(self, name):
        if name not in self._INFO:
            raise ValueError(f"unknown dtype {name!r}")
        self.name = name
        self.mlir, self.kind, self.primitive_bitwidth, \
            self.fp_mantissa_width = self._INFO[name]

    # Kinds order the "weak" promotion of Python scalars: bool < int < float.
    KIND_RANK = {"bool": 0, "int": 1, "float": 2}

    def is_floating(self):
        return self.kind == "float"

    def is_int(self):
        return self.kind in ("int", "bool")

    def is_bool(self):
        return self.kind == "bool"

    def is_ptr(self):
        return False

    def is_fp8(self):
        return self.name in ("fp8e5", "fp8e4nv")

    def is_fp16(self):
        return self.name == "fp16"

    def is_bf16(self):
        return self.name == "bf16"

    def is_fp32(self):
        return self.name == "fp32"

    def is_fp64(self):
        return self.name == "fp64"

    @property
    def scalar(self):
        return self

    @property
    def signature_name(self):
        return self._SIGNATURE.get(self.name, self.name)

    def __eq__(self, other):
        return type(other) is type(self) and other.name == self.name

    def __hash__(self):
        return hash(("dtype", self.name))

    def __repr__(self):
        return self.name

    __str__ = __repr__


class pointer_type(dtype):
    """A pointer to global memory holding elements of ``element_ty``."""

    def __init__(self, element_ty):
        if not isinstance(element_ty, dtype) or isinstance(element_ty, pointer_type):
            raise ValueError(f"cannot point to {element_ty!r}")
        self.element_ty = element_ty
        self.name = f"pointer<{element_ty.name}>"
        self.mlir = f"!tile.ptr<{element_ty.mlir}>"
        self.kind = "ptr"
        self.primitive_bitwidth = 64
        self.fp_mantissa_width = 0

    def is_ptr(self):
        return True

    @property
    def signature_name(self):
        return "*" + self.element_ty.signature_name

    def __eq__(self, other):
        return isinstance(other, pointer_type) and other.element_ty == self.element_ty

    def __hash__(self):
        return hash(("ptr", self.element_ty.name))


class block_type:
    """A tile: a static power-of-two shape of scalars (MLIR ``tensor<...>``)."""

    def __init__(self, element_ty, shape):
        self.element_ty = element_ty
        self.shape = tuple(int(d) for d in shape)

    @property
    def scalar(self):
        return self.element_ty

    @property
    def mlir(self):
        dims = "x".join(str(d) for d in self.shape)
        return f"tensor<{dims}x{self.element_ty.mlir}>"

    def __eq__(self, other):
        return (isinstance(other, block_type) and other.shape == self.shape
                and other.element_ty == self.element_ty)

    def __hash__(self):
        return hash(("block", self.element_ty, self.shape))

    def __repr__(self):
        dims = ", ".join(str(d) for d in self.shape)
        return f"{self.element_ty!r}[{dims}]"

    __str__ = __repr__


class block_ptr_type:
    """The result of ``tl.make_block_ptr``: a pointer to a block of a tensor."""

    def __init__(self, block):
        self.block = block

    @property
    def scalar(self):
        return self

    @property
    def element_ty(self):
        return self.block.element_ty

    @property
    def mlir(self):
        return f"!tile.block_ptr<{self.block.mlir}>"

    def is_ptr(self):
        return False

    def __eq__(self, other):
        return isinstance(other, block_ptr_type) and other.block == self.block

    def __hash__(self):
        return hash(("block_ptr", self.block))

    def __repr__(self):
        return f"block_ptr<{self.block!r}>"

    __str__ = __repr__


int1 = dtype("int1")
int8 = dtype("int8")
int16 = dtype("int16")
int32 = dtype("int32")
int64 = dtype("int64")
float8e5 = dtype("fp8e5")
float8e4nv = dtype("fp8e4nv")
float16 = dtype("fp16")
bfloat16 = dtype("bf16")
float32 = dtype("fp32")
float64 = dtype("fp64")

DTYPES_BY_NAME = {d.name: d for d in (int1, int8, int16, int32, int64, float8e5,
                                      float8e4nv, float16, bfloat16, float32,
                                      float64)}
# Spellings accepted in signatures and on the command line.
DTYPE_ALIASES = dict(DTYPES_BY_NAME)
DTYPE_ALIASES.update({
    "i1": int1, "i8": int8, "i16": int16, "i32": int32, "i64": int64,
    "float16": float16, "bfloat16": bfloat16, "float32": float32,
    "float64": float64, "float8e5": float8e5, "float8e4nv": float8e4nv,
    "fp8e5m2": float8e5, "fp8e4m3fn": float8e4nv, "bool": int1,
})


class PropagateNan(enum.Enum):
    """NaN handling of ``tl.maximum``/``tl.minimum``."""
    NONE = 0
    ALL = 1


# --------------------------------------------------------------------------
# Builtin markers
# --------------------------------------------------------------------------

class builtin:
    """A function of the language; calling it outside ``@tile.jit`` fails."""

    def __init__(self, name, doc=""):
        self.name = name
        self.__doc__ = doc
        self.__name__ = name

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            f"tl.{self.name} can only be called inside a @tile.jit function")

    def __repr__(self):
        return f"<tile builtin {self.name}>"


def _declare(names, namespace):
    for name in names:
        namespace[name] = builtin(name)


LANGUAGE_BUILTINS = [
    "program_id", "num_programs", "arange", "zeros", "zeros_like", "full",
    "load", "store", "atomic_add", "make_block_ptr", "advance", "dot", "exp",
    "exp2", "log", "log2", "sqrt", "rsqrt", "abs", "sin", "cos", "floor", "ceil", "sigmoid",
    "max", "min", "sum", "maximum", "minimum", "where", "trans", "permute",
    "expand_dims", "broadcast_to", "cdiv", "multiple_of", "max_contiguous",
    "static_assert", "static_print", "static_range", "range", "cast", "fma",
]

MATH_BUILTINS = ["exp", "exp2", "log", "log2", "sqrt", "rsqrt", "abs", "sin",
                 "cos", "floor", "ceil", "fma"]
