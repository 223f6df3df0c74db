"""Types and builtins of the tile language (``tile.language``).

The builtins are declarations: each has Triton's signature and a docstring
saying what it computes in Tile, and is never executed.  The compiler
implements them inside ``@tile.jit`` functions (``tile.compiler.builtins``);
``tile.language.math`` declares the math functions.
"""

import enum
import functools
import inspect


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

    __module__ = "tile.language"   # as users reach it: tl.dtype (in help() too)

    # name -> (mlir spelling, kind, bit width, mantissa width)
    _INFO = {
        "int1": ("i1", "bool", 1, 0),
        "int8": ("i8", "int", 8, 0),
        "int16": ("i16", "int", 16, 0),
        "int32": ("i32", "int", 32, 0),
        "int64": ("i64", "int", 64, 0),
        # Unsigned integers are signless in the IR, as signed ones: the ops
        # the frontend picks (divui, cmpi ult, extui, ...) read them.
        "uint8": ("i8", "uint", 8, 0),
        "uint16": ("i16", "uint", 16, 0),
        "uint32": ("i32", "uint", 32, 0),
        "uint64": ("i64", "uint", 64, 0),
        "fp8e5": ("f8E5M2", "float", 8, 2),
        "fp8e4nv": ("f8E4M3FN", "float", 8, 3),
        "fp16": ("f16", "float", 16, 10),
        "bf16": ("bf16", "float", 16, 7),
        "fp32": ("f32", "float", 32, 23),
        "fp64": ("f64", "float", 64, 52),
    }
    # Triton's spelling in signatures: i32 for int32, fp16 for float16.
    _SIGNATURE = {"int1": "i1", "int8": "i8", "int16": "i16", "int32": "i32",
                  "int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32",
                  "uint64": "u64"}

    def __init__(self, name):
        if name not in self._INFO:
            raise ValueError(f"unknown dtype {name!r}")
        self.name = name
        self.mlir, self.kind, self.primitive_bitwidth, \
            self.fp_mantissa_width = self._INFO[name]

    # Kinds order the "weak" promotion of Python scalars: bool < int < float.
    KIND_RANK = {"bool": 0, "int": 1, "uint": 1, "float": 2}

    def is_floating(self):
        return self.kind == "float"

    def is_int(self):
        return self.kind in ("int", "uint", "bool")

    def is_int_signed(self):
        return self.kind == "int"

    def is_int_unsigned(self):
        """An unsigned integer (``tl.uint8`` ... ``tl.uint64``)."""
        return self.kind == "uint"

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
    """A pointer to global memory holding elements of ``element_ty``; with
    ``const``, to data the kernel only reads (a parameter annotated
    ``tl.const``, and every pointer made from it)."""

    def __init__(self, element_ty, const=False):
        if not isinstance(element_ty, dtype) or isinstance(element_ty, pointer_type):
            raise ValueError(f"cannot point to {element_ty!r}")
        self.element_ty = element_ty
        self.const = bool(const)
        self.name = f"pointer<{'const ' if const else ''}{element_ty.name}>"
        self.mlir = f"!tile.ptr<{element_ty.mlir}>"
        self.kind = "ptr"
        self.primitive_bitwidth = 64
        self.fp_mantissa_width = 0

    def is_ptr(self):
        return True

    def is_const(self):
        return self.const

    @property
    def signature_name(self):
        return "*" + self.element_ty.signature_name

    def __eq__(self, other):
        return isinstance(other, pointer_type) and other.element_ty == self.element_ty \
            and other.const == self.const

    def __hash__(self):
        return hash(("ptr", self.element_ty.name, self.const))


class const:
    """Annotates a pointer parameter whose data the kernel only reads
    (``X: tl.const``), as Triton's: a store or an atomic through it, or
    through any pointer made from it, is a compile-time error."""

    __module__ = "tile.language"


# The most elements one tile may hold, as Triton's TRITON_MAX_TENSOR_NUMEL:
# a larger tile fits no program's registers or shared memory, and its IR
# would not be worth building.
MAX_TILE_ELEMENTS = 1 << 20


class TileSizeError(ValueError):
    """A tile over MAX_TILE_ELEMENTS; the frontend reports it at the user's
    line."""


def check_tile_elements(shape):
    """Raises TileSizeError when a tile of ``shape`` holds more than
    MAX_TILE_ELEMENTS elements."""
    elements = 1
    for dim in shape:
        elements *= dim
    if elements > MAX_TILE_ELEMENTS:
        raise TileSizeError(
            f"a tile of shape {list(shape)} holds {elements} elements, more than "
            f"the {MAX_TILE_ELEMENTS} (2^20) a tile may hold")


class block_type:
    """A tile: a static power-of-two shape of scalars (MLIR ``tensor<...>``),
    of at most MAX_TILE_ELEMENTS elements."""

    def __init__(self, element_ty, shape):
        self.element_ty = element_ty
        self.shape = tuple(int(d) for d in shape)
        check_tile_elements(self.shape)

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

    def __init__(self, block, const=False):
        self.block = block
        self.const = bool(const)   # made from a pointer to const data

    @property
    def scalar(self):
        return self

    @property
    def element_ty(self):
        return self.block.element_ty

    @property
    def mlir(self):
        return f"!tile.block_ptr<{self.block.mlir}>"

    # None of the scalar kinds: where a scalar is wanted, a block pointer is
    # refused as any other wrong type is.
    def is_ptr(self):
        return False

    def is_int(self):
        return False

    def is_floating(self):
        return False

    def is_bool(self):
        return False

    def __eq__(self, other):
        return isinstance(other, block_ptr_type) and other.block == self.block \
            and other.const == self.const

    def __hash__(self):
        return hash(("block_ptr", self.block, self.const))

    def __repr__(self):
        return f"block_ptr<{self.block!r}>"

    __str__ = __repr__


class tensor_descriptor_type:
    """The type of a tensor descriptor (``tl.make_tensor_descriptor``): the
    blocks it loads and stores.  A descriptor is a compile-time value of the
    frontend, not an MLIR value: its loads and stores become block-pointer
    ops."""

    def __init__(self, block, const=False):
        self.block = block
        self.const = bool(const)   # made from a pointer to const data

    @property
    def block_type(self):
        return self.block

    @property
    def element_ty(self):
        return self.block.element_ty

    @property
    def block_shape(self):
        return self.block.shape

    def __eq__(self, other):
        return isinstance(other, tensor_descriptor_type) and other.block == self.block

    def __hash__(self):
        return hash(("tensor_descriptor", self.block))

    def __repr__(self):
        return f"tensor_descriptor<{self.block!r}>"

    __str__ = __repr__


int1 = dtype("int1")
int8 = dtype("int8")
int16 = dtype("int16")
int32 = dtype("int32")
int64 = dtype("int64")
uint8 = dtype("uint8")
uint16 = dtype("uint16")
uint32 = dtype("uint32")
uint64 = dtype("uint64")
float8e5 = dtype("fp8e5")
float8e4nv = dtype("fp8e4nv")
float16 = dtype("fp16")
bfloat16 = dtype("bf16")
float32 = dtype("fp32")
float64 = dtype("fp64")

# Triton's one predefined pointer type.
pi32_t = pointer_type(int32)

DTYPES_BY_NAME = {d.name: d for d in (int1, int8, int16, int32, int64, uint8, uint16,
                                      uint32, uint64, float8e5, float8e4nv, float16,
                                      bfloat16, float32, float64)}
# Spellings accepted in signatures and on the command line.
DTYPE_ALIASES = dict(DTYPES_BY_NAME)
DTYPE_ALIASES.update({
    "i1": int1, "i8": int8, "i16": int16, "i32": int32, "i64": int64,
    "u8": uint8, "u16": uint16, "u32": uint32, "u64": uint64,
    "float16": float16, "bfloat16": bfloat16, "float32": float32,
    "float64": float64, "float8e5": float8e5, "float8e4nv": float8e4nv,
    "fp8e5m2": float8e5, "fp8e4m3fn": float8e4nv, "bool": int1,
})


class PropagateNan(enum.Enum):
    """NaN handling of ``tl.maximum``/``tl.minimum``."""
    NONE = 0
    ALL = 1


# --------------------------------------------------------------------------
# Builtins
# --------------------------------------------------------------------------
#
# Each function below declares a builtin: its signature (Triton's) and its
# docstring are the reference users read; its body is never run.  The
# compiler implements it in tile/compiler/builtins.py, registered under the
# function object itself (``@implements(tl.load)``);
# test/python/test_builtins.py checks that the two agree.
#
# The builtins range, max, min and sum are this module's globals: no code in
# it may use Python's functions of those names (``builtins.max`` would do).

_BUILTIN_MARK = "__tile_builtin__"


def builtin(fn):
    """Declares ``fn`` a builtin: called outside ``@tile.jit``, it raises
    RuntimeError; inside, the compiler runs its implementation."""
    name = fn.__name__

    @functools.wraps(fn)
    def declared(*args, **kwargs):
        raise RuntimeError(f"tl.{name} can only be called inside a @tile.jit function")

    setattr(declared, _BUILTIN_MARK, True)
    return declared


def is_builtin(obj):
    """Whether ``obj`` is a function declared with ``@builtin``."""
    return getattr(obj, _BUILTIN_MARK, False) is True


class tensor:
    """A value in a ``@tile.jit`` function: a scalar or a tile.

    A tile has a static shape whose dimensions are powers of two; a scalar
    has the shape ``()``.  Tensors exist only while a kernel compiles: this
    class says what they offer, and is never instantiated.

    Python's arithmetic, comparison and bitwise operators work elementwise,
    promoting and broadcasting their operands (docs/language.md); ``+`` and
    ``-`` move pointers by integer offsets.  Indexing takes ``:`` and
    ``None`` only: ``x[:, None]`` inserts a dimension of length 1.  Each
    method is the ``tl`` function of the same name applied to the tensor
    (``x.sum(0)`` is ``tl.sum(x, 0)``); ``x.to(...)`` is ``tl.cast(x, ...)``.
    """

    __module__ = "tile.language"   # as users reach it: tl.tensor (in help() too)

    def __init__(self, *args, **kwargs):
        raise RuntimeError("tl.tensor values exist only inside a @tile.jit function")

    @property
    def dtype(self):
        """The element type: ``x.dtype`` of a tile of fp16 is ``tl.float16``.

        For pointers it is a ``tl.pointer_type`` (``.element_ty`` is the type
        pointed to), for a block pointer its ``tl.block_ptr_type``.
        """

    @property
    def shape(self):
        """The shape, a tuple of ints; ``()`` for a scalar."""

    @property
    def T(self):
        """The transpose: the dimensions in reverse order, as ``tl.trans(x)``."""


class tensor_descriptor:
    """A descriptor of a tensor in global memory, made by
    ``tl.make_tensor_descriptor``: loads and stores blocks of its
    ``block_shape`` at offsets given per load.

    ``desc.load(offsets)`` is ``tl.load_tensor_descriptor(desc, offsets)``
    and ``desc.store(offsets, value)`` is ``tl.store_tensor_descriptor(desc,
    offsets, value)``.  A descriptor exists only while a kernel compiles:
    it may be passed to and returned from ``@tile.jit`` helpers and used in
    loops and branches, but a name holding one may not be re-bound inside a
    run-time loop or ``if`` (make it once before).  This class says what it
    offers, and is never instantiated.
    """

    __module__ = "tile.language"   # as users reach it: tl.tensor_descriptor

    def __init__(self, *args, **kwargs):
        raise RuntimeError("tl.tensor_descriptor values exist only inside a @tile.jit function")

    @property
    def shape(self):
        """The tensor's shape, a tuple: int32 scalars, or numbers where
        ``tl.make_tensor_descriptor`` was given numbers."""

    @property
    def strides(self):
        """The tensor's strides in elements, a tuple: int64 scalars, or
        numbers where ``tl.make_tensor_descriptor`` was given numbers."""

    @property
    def block_shape(self):
        """The shape of the blocks loaded and stored, a tuple of ints."""

    @property
    def block_type(self):
        """The type of the blocks loaded: ``block_shape`` of ``dtype``."""

    @property
    def dtype(self):
        """The element type: that of the base pointer's elements."""

    @property
    def type(self):
        """The descriptor's type, a ``tl.tensor_descriptor_type``."""


def _tensor_member(fn, name=None, cls=tensor):
    """Makes the builtin ``fn`` a method of ``cls`` (``tensor`` or
    ``tensor_descriptor``) too: ``x.name(...)`` is ``fn(x, ...)``, with
    ``fn``'s signature (its first parameter named ``self``).  The method
    carries ``fn`` as ``__tile_function__``."""
    name = name or fn.__name__
    # A @tile.jit function (tl.sort, tl.softmax, ...) is described by the
    # Python function it wraps.
    described = getattr(fn, "fn", fn)
    signature = inspect.signature(described)
    params = list(signature.parameters.values())
    params[0] = params[0].replace(name="self")
    owner = cls.__name__

    def method(self, *args, **kwargs):
        raise RuntimeError(f"{owner}.{name}() can only be called inside a @tile.jit function")

    method.__name__ = name
    method.__qualname__ = f"{owner}.{name}"
    method.__module__ = described.__module__
    method.__signature__ = signature.replace(parameters=params)
    summary = " ".join(described.__doc__.strip().split("\n\n")[0].split())
    if described.__name__.startswith("_"):   # a method only, as in Triton
        method.__doc__ = summary
    else:
        call = f"tl.{described.__name__}(self{', ...' if len(params) > 1 else ''})"
        method.__doc__ = f"{summary}\n\nThe same as ``{call}``: see its help."
    method.__tile_function__ = fn
    setattr(cls, name, method)
    return fn


def tensor_method(name):
    """The builtin (or @tile.jit function) that ``x.name(...)`` calls, or
    None if tensors have no such method."""
    return getattr(getattr(tensor, name, None), "__tile_function__", None)


def descriptor_method(name):
    """The builtin that ``desc.name(...)`` calls on a tensor descriptor, or
    None if descriptors have no such method."""
    return getattr(getattr(tensor_descriptor, name, None), "__tile_function__", None)


# -- the grid ---------------------------------------------------------------

@builtin
def program_id(axis: int) -> tensor:
    """The index of this program along ``axis`` of the launch grid.

    ``axis`` is a constexpr 0, 1 or 2.  The result is an int32 scalar.
    """


@builtin
def num_programs(axis: int) -> tensor:
    """The number of programs along ``axis`` of the launch grid.

    ``axis`` is a constexpr 0, 1 or 2.  The result is an int32 scalar.
    """


# -- creation ---------------------------------------------------------------

@builtin
def arange(start: int, end: int) -> tensor:
    """The int32 tile ``[start, start + 1, ..., end - 1]``.

    ``start`` and ``end`` are constexpr integers with ``0 <= start < end``;
    the length ``end - start`` must be a power of two.
    """


@builtin
def zeros(shape, dtype: dtype) -> tensor:
    """A tile of ``shape`` filled with zeros of ``dtype``.

    ``shape`` is a constexpr integer or a tuple of them, each a power of
    two; ``dtype`` is a dtype such as ``tl.float32``.
    """


@builtin
def zeros_like(input: tensor) -> tensor:
    """Zeros of ``input``'s shape and element type (a scalar for a scalar)."""


@builtin
def full(shape, value, dtype: dtype) -> tensor:
    """A tile of ``shape`` filled with ``value`` converted to ``dtype``.

    ``shape`` is as for ``tl.zeros``; ``value`` is a number or a run-time
    scalar, not a tile.
    """


@builtin
def map_elementwise(scalar_fn, *args, pack=1):
    """``scalar_fn`` (a ``@tile.jit`` function) applied to each element of
    ``args``, broadcast to one shape; one tensor or a tuple of them, as it
    returns.

    Tile runs the function on whole tiles: an ``if`` on an element's value
    runs both branches, each under its condition, and merges what they
    assign and return with ``tl.where`` (a ``return`` inside a branch
    included). A loop on an element's value, and stores or atomics, are
    refused. ``pack`` must be 1.
    """


@builtin
def inline_asm_elementwise(asm, constraints, args, dtype, is_pure, pack):
    """Runs the inline assembly ``asm`` (PTX, a constexpr string) over the
    elements of ``args`` (tensors and numbers, broadcast to one shape), as
    Triton's: ``pack`` elements of each a run, which elements unspecified.
    Elements narrower than 32 bits go ``32 / bits`` to a 32-bit register;
    ``constraints`` (LLVM's inline-assembly syntax) names the results'
    registers first (``=r``, ``=f``, ...), then the arguments', then any
    clobbers. ``dtype``: the result's element type, or a sequence of them
    for a tuple of results. ``is_pure``: the assembly has no side effects
    (the compiler may remove or move it). Only the GPU runs it: the
    interpreter refuses a kernel that uses it.
    """


@builtin
def to_tensor(x) -> tensor:
    """``x`` as a tensor: a tensor is returned as it is; a Python number (or
    constexpr) becomes a scalar of Triton's type for it: a bool ``int1``; an
    integer ``int32``, else ``uint32``, ``int64`` or ``uint64``, the first
    that holds it; a float ``float32``, or ``float64`` for a finite value
    outside float32's normal range.
    """


class tuple_type:
    """``tl.tuple(values)``: a tuple of values, as a Python tuple is in a
    kernel (Triton's ``tl.tuple``)."""

    __module__ = "tile.language"

    def __new__(cls, values=()):
        return tuple(values)


# -- memory -----------------------------------------------------------------

@builtin
def load(pointer, mask=None, other=None, boundary_check=(), padding_option="",
         cache_modifier="", eviction_policy="", volatile=False) -> tensor:
    """Loads from global memory.

    Through a pointer or a tile of pointers, the result has the pointers'
    shape and element type.  ``mask`` (booleans, broadcast with ``pointer``)
    selects the lanes that read; a masked-off lane gives ``other`` (a number
    or tensor, converted to the element type), or, without ``other``, an
    undefined value (zero in practice).  ``other`` needs ``mask``.  Without
    ``mask`` every lane reads: an address out of bounds is an error the
    interpreter reports.

    Through a block pointer (``tl.make_block_ptr``), the result is the
    block.  ``boundary_check`` lists the dimensions (constexpr integers)
    whose elements out of bounds are not read but padded: with zeros
    (``padding_option`` ``""`` or ``"zero"``; Triton leaves ``""``
    undefined) or with NaN (``"nan"``, float elements only).  ``mask`` and
    ``other`` are refused here.

    ``cache_modifier``, ``eviction_policy`` and ``volatile`` are accepted
    and ignored.
    """


@builtin
def store(pointer, value, mask=None, boundary_check=(), cache_modifier="",
          eviction_policy="") -> None:
    """Stores ``value`` to global memory.

    Through a pointer or a tile of pointers: ``pointer``, ``value`` (a
    number or tensor) and ``mask`` (booleans) are broadcast to one shape,
    ``value`` is converted to the element type, and the lanes ``mask``
    selects write.

    Through a block pointer (``tl.make_block_ptr``): ``value`` is converted
    to the block's element type and broadcast to its shape;
    ``boundary_check`` lists the dimensions whose elements out of bounds are
    not written.  ``mask`` is refused here.

    ``cache_modifier`` and ``eviction_policy`` are accepted and ignored.
    """


@builtin
def atomic_add(pointer, val, mask=None, sem=None, scope=None) -> tensor:
    """Adds ``val`` to the elements at ``pointer`` atomically; gives the old
    values.

    ``pointer`` is a pointer or a tile of pointers (not a block pointer) to
    fp32, fp64, int32 or int64 elements.  ``pointer``, ``val`` and ``mask``
    are broadcast to one shape, ``val`` is converted to the element type,
    and masked-off lanes add nothing.

    ``sem`` orders the update with the program's other memory accesses,
    as Triton's does: ``"acq_rel"`` (the default), ``"acquire"``,
    ``"release"`` or ``"relaxed"`` (none; the fastest: an fp32 add whose
    old values are unused goes out in vectors), among the threads of
    ``scope``: ``"gpu"`` (the default), ``"cta"`` or ``"sys"``.  A scalar
    update, which one thread makes for the program, orders every thread's
    accesses.  On the GPU the old values of a tile may be used only where
    the tile's layout holds each element once, which the compiler checks; a
    scalar update's old value reaches every thread.
    """


@builtin
def atomic_max(pointer, val, mask=None, sem=None, scope=None) -> tensor:
    """Keeps the larger of ``val`` and the elements at ``pointer``,
    atomically; gives the old values.  fp32 (ordered as numbers; NaN
    unspecified), int32 or int64 (signed) elements; otherwise as
    ``tl.atomic_add``."""


@builtin
def atomic_min(pointer, val, mask=None, sem=None, scope=None) -> tensor:
    """Keeps the smaller of ``val`` and the elements at ``pointer``,
    atomically; gives the old values.  Elements as ``tl.atomic_max``;
    otherwise as ``tl.atomic_add``."""


@builtin
def atomic_and(pointer, val, mask=None, sem=None, scope=None) -> tensor:
    """The bitwise and of ``val`` and the int32 or int64 elements at
    ``pointer``, atomically; gives the old values; otherwise as
    ``tl.atomic_add``."""


@builtin
def atomic_or(pointer, val, mask=None, sem=None, scope=None) -> tensor:
    """The bitwise or of ``val`` and the int32 or int64 elements at
    ``pointer``, atomically; gives the old values; otherwise as
    ``tl.atomic_add``."""


@builtin
def atomic_xor(pointer, val, mask=None, sem=None, scope=None) -> tensor:
    """The bitwise exclusive or of ``val`` and the int32 or int64 elements
    at ``pointer``, atomically; gives the old values; otherwise as
    ``tl.atomic_add``."""


@builtin
def atomic_xchg(pointer, val, mask=None, sem=None, scope=None) -> tensor:
    """Replaces the fp32, int32 or int64 elements at ``pointer`` by ``val``,
    atomically; gives the old values; otherwise as ``tl.atomic_add``."""


@builtin
def atomic_cas(pointer, cmp, val, sem=None, scope=None) -> tensor:
    """Replaces the fp32, int32 or int64 elements at ``pointer`` that equal
    ``cmp`` (bit for bit) by ``val``, atomically; gives the old values, as
    Triton's does (a lock: ``while tl.atomic_cas(lock, 0, 1) == 1: pass``).
    ``pointer``, ``cmp`` and ``val`` are broadcast to one shape; ``sem``
    and ``scope`` as ``tl.atomic_add``'s."""


@builtin
def atomic_load(pointer, mask=None, sem=None, scope=None) -> tensor:
    """The 16-, 32- or 64-bit elements at ``pointer``, each read as one
    indivisible access: ``sem`` "acquire" (the default: later accesses stay
    after it) or "relaxed", among the threads of ``scope`` ("gpu", the
    default, "cta" or "sys").  Where ``mask`` is false nothing is read and
    the element is zero.  A scalar one orders every thread of the program's
    later accesses (a flag another program sets:
    ``while tl.atomic_load(flag) == 0: pass``)."""


@builtin
def atomic_store(pointer, val, mask=None, sem=None, scope=None) -> None:
    """Writes ``val`` (broadcast to ``pointer``'s shape) to the 16-, 32- or
    64-bit elements at ``pointer``, each as one indivisible access: ``sem``
    "release" (the default: earlier accesses stay before it) or "relaxed",
    ``scope`` as for ``tl.atomic_load``.  Where ``mask`` is false nothing
    is written.  A scalar one orders every thread of the program's earlier
    accesses."""


@builtin
def debug_barrier() -> None:
    """Every thread of the program waits here until all have arrived, their
    memory accesses before it done before those after it (on the GPU a
    barrier of the CTA; the interpreter runs a program as one)."""


@builtin
def make_block_ptr(base, shape, strides, offsets, block_shape, order) -> tensor:
    """A pointer to a block of ``block_shape`` in a tensor in global memory.

    ``base`` is a scalar pointer to the tensor's first element.  ``shape``
    and ``strides`` (in elements) hold integers or integer scalars (taken
    as int64), ``offsets`` the block's first index along each dimension
    (int32).  ``block_shape`` holds constexpr powers of two.  ``order`` is a
    permutation of the dimensions, the fastest-varying first (``(1, 0)``
    for a row-major matrix).  All five are tuples with one entry per
    dimension.  Load and store through the result; move it with
    ``tl.advance``.
    """


@builtin
def advance(base, offsets) -> tensor:
    """The block pointer ``base`` moved by ``offsets`` elements.

    ``offsets`` holds one integer or integer scalar (taken as int32) per
    dimension.  ``base`` itself does not change: use the result.
    """


@builtin
def make_tensor_descriptor(base, shape, strides, block_shape,
                           padding_option="zero") -> tensor_descriptor:
    """A descriptor of a tensor in global memory, through which blocks of
    ``block_shape`` are loaded and stored (``desc.load``, ``desc.store``).

    ``base`` is a scalar pointer to the tensor's first element.  ``shape``
    and ``strides`` (in elements) hold one integer or integer scalar per
    dimension, 1 to 5 of them; shape entries are taken as int32, strides as
    int64.  The last stride must be the constant ``1``: the innermost
    dimension is contiguous (Triton specialises an argument equal to 1 into
    a constant; Tile, ahead of time, needs it written).  ``block_shape``
    holds constexpr powers of two, one per dimension, and its last entry
    must span at least 16 bytes.  A load reads elements outside ``shape``
    as zero (``padding_option="zero"``) or NaN (``"nan"``, floats only); a
    store does not write them.

    Loads and stores are block-pointer accesses, checked in every
    dimension: ``desc.load(offsets)`` is ``tl.load(tl.make_block_ptr(base,
    shape, strides, offsets, block_shape, order=(rank-1, ..., 0)),
    boundary_check=(0, ..., rank-1))``.  On sm_90a the GPU lowering turns
    them into TMA copies where possible.  Unlike Triton's, the base need
    not be 16-byte aligned nor the other strides multiples of 16 bytes.
    """


@builtin
def load_tensor_descriptor(desc, offsets) -> tensor:
    """Loads the block of ``desc`` (``tl.make_tensor_descriptor``) that
    starts at ``offsets``.

    ``offsets`` holds one integer or integer scalar (taken as int32) per
    dimension.  The result has the descriptor's ``block_shape`` and element
    type; elements outside the tensor's shape read as the descriptor's
    padding (zero by default).  ``desc.load(offsets)`` is the same.
    """


@builtin
def store_tensor_descriptor(desc, offsets, value) -> None:
    """Stores ``value`` to the block of ``desc`` (``tl.make_tensor_descriptor``)
    that starts at ``offsets``.

    ``offsets`` is as for ``tl.load_tensor_descriptor``.  ``value`` is a
    tensor of the descriptor's ``block_shape`` (no broadcasting, as in
    Triton), converted to its element type.  Elements outside the tensor's
    shape are not written.  ``desc.store(offsets, value)`` is the same.
    """


_tensor_member(load_tensor_descriptor, name="load", cls=tensor_descriptor)
_tensor_member(store_tensor_descriptor, name="store", cls=tensor_descriptor)

# What desc.atomic_<kind>(offsets, value) does to each element, as in
# Triton: methods only, no tl.* function.
_DESCRIPTOR_UPDATES = {
    "add": "adds", "min": "keeps the smaller of", "max": "keeps the larger of",
    "and": "ands the bits of", "or": "ors the bits of", "xor": "xors the bits of",
}


def _descriptor_update(kind, does):
    def update(self, offsets, value) -> None:
        raise RuntimeError(f"tensor_descriptor.atomic_{kind}() can only be called inside a "
                           "@tile.jit function")
    update.__name__ = f"atomic_{kind}"
    update.__qualname__ = f"tensor_descriptor.atomic_{kind}"
    update.__doc__ = f"""Updates the block of the descriptor that starts at ``offsets``
    atomically, element by element: {does} the element of ``value``.

    ``offsets`` is as for ``desc.load``; ``value`` is a tensor of the
    descriptor's ``block_shape`` (no broadcasting, as in Triton), converted
    to its element type.  Each update is relaxed, at gpu scope; elements
    outside the tensor's shape are left alone, and nothing is returned.
    The element types are those ``tl.atomic_{kind}`` takes.  On sm_90a the
    TMA adds an fp32 ``tl.dot`` result, each warp its own rows.
    """
    update.__tile_function__ = update
    setattr(update, _BUILTIN_MARK, True)
    setattr(tensor_descriptor, update.__name__, update)
    return update


DESCRIPTOR_UPDATES = {kind: _descriptor_update(kind, does)
                      for kind, does in _DESCRIPTOR_UPDATES.items()}


# -- compute ----------------------------------------------------------------

@builtin
def dot(input, other, acc=None, input_precision=None, allow_tf32=None,
        max_num_imprecise_acc=None, out_dtype=float32) -> tensor:
    """The matrix product of ``input`` and ``other``, plus ``acc`` if given.

    ``input`` is ``[M, K]`` and ``other`` ``[K, N]``: 2-D tiles of one
    element type.  Products of fp16, bf16, fp8e5, fp8e4nv and fp32
    accumulate in fp32, products of int8 in int32.  ``acc``, if given, is an
    ``[M, N]`` tile of the result's type, ``out_dtype``: the accumulator's
    (the default ``tl.float32``, or ``tl.int32`` for int8 operands), or for
    fp16, bf16 and fp8 operands ``tl.float16`` or ``tl.bfloat16``, which
    Tile accumulates in fp32 and rounds once a product (Triton accumulates
    fp16 results in fp16).

    ``input_precision`` (``None``, ``"ieee"``, ``"tf32"`` or ``"tf32x3"``),
    ``allow_tf32`` and ``max_num_imprecise_acc`` are accepted and ignored:
    fp32 products are IEEE.  Unlike Triton, 3-D (batched) operands are
    refused.
    """


@builtin
def sigmoid(x) -> tensor:
    """``1 / (1 + exp(-x))``, elementwise.

    ``x`` is a floating-point tensor, or a number (taken as fp32).
    """


@builtin
def maximum(x, y, propagate_nan=PropagateNan.NONE) -> tensor:
    """The elementwise maximum of ``x`` and ``y``.

    ``x`` and ``y`` (tensors or numbers) are promoted to one type and
    broadcast to one shape as for arithmetic.  For floats, where one operand
    is NaN the result is the other with ``propagate_nan=tl.PropagateNan.NONE``
    (the default) and NaN with ``tl.PropagateNan.ALL``.  Integers compare
    signed.  Two numbers give a number.
    """


@builtin
def minimum(x, y, propagate_nan=PropagateNan.NONE) -> tensor:
    """The elementwise minimum of ``x`` and ``y``.

    As ``tl.maximum``, with the smaller operand.
    """


@builtin
def where(condition, x, y) -> tensor:
    """Elementwise ``x`` where ``condition`` is true, else ``y``.

    ``condition`` is a tensor or run-time scalar, converted to booleans
    (nonzero is true).  ``x`` and ``y`` (tensors or numbers) are promoted to
    one type as for arithmetic; all three are broadcast to one shape.  Both ``x`` and ``y``
    are computed.  A constexpr ``condition`` picks ``x`` or ``y`` while
    compiling.
    """


# -- shapes -----------------------------------------------------------------

@_tensor_member
@builtin
def trans(input, *dims) -> tensor:
    """``input`` with its dimensions permuted.

    ``dims`` is the new order, as separate integers or one tuple:
    ``tl.trans(x, 1, 0)`` or ``tl.trans(x, (1, 0))``.  Without ``dims`` the
    order is reversed (Triton's default is ``(1, 0)``, the same for 2-D
    tiles).
    """


@_tensor_member
@builtin
def permute(input, *dims) -> tensor:
    """``input`` with its dimensions in the order ``dims``.

    ``dims`` is a permutation of ``input``'s dimensions, as separate
    integers or one tuple.
    """


@_tensor_member
@builtin
def expand_dims(input, axis) -> tensor:
    """``input`` with a dimension of length 1 inserted at ``axis``.

    ``axis`` is a constexpr integer, or a tuple of them to insert several;
    it counts in the result, so ``-1`` appends.  A scalar becomes a tile of
    one element.
    """


@_tensor_member
@builtin
def reshape(input, *shape, can_reorder=False) -> tensor:
    """``input``'s elements in another shape with as many: element i in
    row-major order stays element i.

    ``shape`` is given as separate integers or one tuple, each a power of
    two.  ``can_reorder`` (Triton's deprecated hint that the order may
    change) is accepted; the order is kept either way.
    """


@_tensor_member
@builtin
def view(input, *shape) -> tensor:
    """``tl.reshape(input, *shape)``: Triton's deprecated form, which may
    reorder the elements; Tile keeps their order."""


@_tensor_member
@builtin
def ravel(x, can_reorder=False) -> tensor:
    """``x`` flattened to one dimension, in row-major order."""


@builtin
def join(a, b) -> tensor:
    """``a`` and ``b`` side by side in a new last dimension of 2:
    ``result[..., 0]`` is ``a`` and ``result[..., 1]`` is ``b``.

    The two are broadcast to one shape and promoted to one type, as for
    ``tl.where``; two scalars give a tile of 2.  The inverse of
    ``tl.split``.
    """


@_tensor_member
@builtin
def split(a) -> tuple:
    """The two halves of ``a``'s last dimension, which must have 2
    elements: ``(a[..., 0], a[..., 1])``; two scalars for a tile of 2.  The
    inverse of ``tl.join``."""


@builtin
def interleave(a, b) -> tensor:
    """``a`` and ``b`` (of one shape) interleaved along their last
    dimension: ``tl.join(a, b)`` reshaped to twice the last dimension."""


@builtin
def cat(input, other, can_reorder=False, dim=0) -> tensor:
    """``input`` and ``other`` (of one shape) concatenated along ``dim``, in
    order, as Triton 3.9 does without ``can_reorder`` (which is accepted
    and keeps the order too).  The concatenated dimension must stay a
    power of two, so it doubles.
    """


@builtin
def reduce(input, axis, combine_fn, keep_dims=False):
    """``input`` (a tensor, or a tuple of tensors of one shape) reduced along
    ``axis`` (all of it when None) by ``combine_fn``, an associative
    ``@tile.jit`` function: of two tensors, or for a tuple of k tensors of
    2k (the first operand's, then the second's) giving k.  Neighbours are
    combined in a tree, the earlier operand first; a tuple gives a tuple.
    """


@builtin
def associative_scan(input, axis, combine_fn, reverse=False):
    """The inclusive scan of ``input`` (a tensor, or a tuple of tensors of
    one shape) along ``axis`` by ``combine_fn`` (as for ``tl.reduce``):
    element i combines elements 0 .. i (i .. n-1 with ``reverse``), in a
    tree, the earlier operand first; a tuple gives a tuple.
    """


@builtin
def broadcast(input, other) -> tuple:
    """``input`` and ``other`` (tensors) broadcast to their common shape, as
    for arithmetic: a pair of tensors."""


@builtin
def squeeze(input, dim) -> tensor:
    """``input`` without its dimension ``dim`` (a constexpr), which must have
    length 1."""


@_tensor_member
@builtin
def broadcast_to(input, *shape) -> tensor:
    """``input`` broadcast to ``shape``.

    ``shape`` is given as separate integers or one tuple, each a power of
    two.  Dimensions of length 1 are repeated and missing leading ones
    added; a scalar fills the whole tile.
    """


# -- conversions ------------------------------------------------------------

@_tensor_member
@builtin
def cast(input, dtype: dtype, fp_downcast_rounding: str | None = None,
         bitcast: bool = False) -> tensor:
    """``input`` converted to the element type ``dtype``.

    Floats narrow with round-to-nearest-even: ``fp_downcast_rounding`` takes
    only ``None`` and ``"rtne"`` (Triton also takes ``"rtz"``).  Floats
    become integers rounded toward zero; a conversion to int1 tests for
    nonzero.  ``bitcast=True`` reinterprets the bits instead, between types
    of one width.  A number becomes a constant of ``dtype``.  Pointers do
    not convert.
    """


_tensor_member(cast, name="to")


# -- integer helpers and hints ----------------------------------------------

@builtin
def cdiv(x, div) -> tensor:
    """``x`` divided by ``div``, rounded up: ``(x + div - 1) // div``.

    Two numbers give a number.  ``//`` on run-time integers rounds toward
    zero: use non-negative operands.
    """


@builtin
def multiple_of(input, values) -> tensor:
    """Gives ``input``: Triton's hint that its values are multiples of
    ``values`` (an int, or one a dimension).  The compiler's axis analysis
    takes the promise (``tile.axis_hint``), so that accesses vectorise; a
    promise that does not hold is undefined behaviour.  For a kernel's
    arguments, the signature states it (``i32:16``, docs/language.md).
    """


@builtin
def max_contiguous(input, values) -> tensor:
    """Gives ``input``: Triton's hint that runs of ``values`` of its
    elements increase by one; taken as ``multiple_of``'s is."""


@builtin
def max_constancy(input, values) -> tensor:
    """Gives ``input``: Triton's hint that runs of ``values`` of its
    elements are equal; taken as ``multiple_of``'s is."""


@builtin
def assume(cond) -> None:
    """Triton's promise that ``cond`` (a boolean scalar or tensor) holds.
    Tile checks that it is a boolean and ignores the promise."""


# -- compile time -----------------------------------------------------------

@builtin
def static_assert(cond, msg="") -> None:
    """Stops the compilation with ``static assertion failed: msg`` unless
    ``cond`` is true.

    ``cond`` must be a compile-time constant.
    """


@builtin
def device_print(prefix, *args, hex=False) -> None:
    """Prints each element of each of ``args`` while the kernel runs, a
    line each: ``pid (x, y, z) idx (i, j) <prefix><value>`` (with
    ``(operand k) `` after the prefix when there are several); a scalar
    once a program, without ``idx``.  ``prefix`` is a compile-time string;
    integers print signed, floats with 9 significant digits (17 for
    float64); ``hex=True`` prints the bits in hexadecimal.  On the GPU in
    no particular order; the interpreter prints row by row.  ``print(...)``
    in a kernel is this, its leading constants forming the prefix."""


@builtin
def device_assert(cond, msg="", mask=None) -> None:
    """Stops the kernel where an element of ``cond`` is false (and
    ``mask``, when given, true), reporting ``msg``, the source line and the
    program: on the GPU the launch fails with CUDA's assertion error, the
    interpreter with an error naming the program and the element."""


@builtin
def static_print(*values, sep: str = " ", end: str = "\n", file=None, flush=False) -> None:
    """Prints ``values`` to standard error while the kernel compiles.

    A tensor prints as its type (``fp32[16, 16]``).  ``sep``, ``end`` and
    ``flush`` are as for ``print``; ``file`` is accepted and ignored.
    """


# -- loops: the iterators of for statements ---------------------------------

@builtin
def static_range(arg1, arg2=None, step=None):
    """The iterator of a ``for`` loop unrolled at compile time.

    ``tl.static_range(end)`` or ``tl.static_range(start, end, step=1)``,
    with constexpr integers: the body is compiled once per value, the loop
    variable a constant each time.  It is valid only as the iterator of a
    ``for`` loop.
    """


@builtin
def range(arg1, arg2=None, step=None, num_stages=None, loop_unroll_factor=None,
          disallow_acc_multi_buffer=False, flatten=False, warp_specialize=False):
    """The iterator of a run-time ``for`` loop (``scf.for``), as ``range``.

    ``tl.range(end)`` or ``tl.range(start, end, step=1)``, with integers or
    integer scalars.  The step must be positive (checked when it is a
    constant).  The loop variable is int32, or int64 if a bound is.  It is
    valid only as the iterator of a ``for`` loop.

    ``num_stages`` (a constexpr integer of at least 1), as in Triton, gives
    the loop its own number of stages in place of the compile option's,
    and lets the loads that feed no ``tl.dot`` (a softmax's rows) be copied
    ahead too; without it only products' operands are.  Triton's other
    loop hints are accepted and ignored.
    """


# -- reductions (the names shadow Python's max, min and sum below) ----------

@_tensor_member
@builtin
def sum(input, axis=None, keep_dims=False, dtype=None) -> tensor:
    """The sum of ``input`` along ``axis``.

    ``axis`` is a constexpr integer (negative counts from the end), or
    ``None`` to sum every dimension into a scalar.  ``keep_dims`` keeps the
    reduced dimensions, with length 1.  With ``dtype``, ``input`` is first
    converted to it.  Integers narrower than 32 bits (int1 included) sum in
    int32 and floats narrower than 32 bits in fp32, the result's type.  A
    scalar ``input`` is given back as it is.
    """


@builtin
def xor_sum(input, axis=None, keep_dims=False) -> tensor:
    """The bitwise xor of ``input``'s integers along ``axis`` (as
    ``tl.sum``'s ``axis`` and ``keep_dims``); booleans give their parity."""


@builtin
def reduce_or(input, axis, keep_dims=False) -> tensor:
    """The bitwise or of ``input``'s integers along ``axis`` (as
    ``tl.sum``'s ``axis`` and ``keep_dims``); booleans give whether any
    holds."""


@_tensor_member
@builtin
def max(input, axis=None, return_indices=False, return_indices_tie_break_left=True,
        keep_dims=False) -> tensor:
    """The maximum of ``input`` along ``axis``.

    ``axis`` and ``keep_dims`` are as for ``tl.sum``.  The result has
    ``input``'s element type.  With ``return_indices=True`` (and a
    constexpr ``axis``), a pair: the maxima and the int32 index of each,
    the first of equal elements (``return_indices_tie_break_left=True``,
    the default) or the last; a NaN maximum gives the index of a NaN.
    """


@_tensor_member
@builtin
def min(input, axis=None, return_indices=False, return_indices_tie_break_left=True,
        keep_dims=False) -> tensor:
    """The minimum of ``input`` along ``axis``.

    As ``tl.max``, with the smallest element.
    """
