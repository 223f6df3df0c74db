"""The tile language: ``import tile.language as tl``.

Names follow Triton's ``triton.language``.  Each builtin is a function with
Triton's signature and a docstring saying what it does in Tile
(``help(tl.load)``); docs/language.md says what is supported and how it
differs.
"""

from . import math
from .core import (
    PropagateNan,
    advance,
    arange,
    assume,
    atomic_add,
    bfloat16,
    block_ptr_type,
    block_type,
    broadcast,
    broadcast_to,
    cast,
    cdiv,
    constexpr,
    dot,
    dtype,
    expand_dims,
    float8e4nv,
    float8e5,
    float16,
    float32,
    float64,
    full,
    int1,
    int8,
    int16,
    int32,
    int64,
    load,
    load_tensor_descriptor,
    make_block_ptr,
    make_tensor_descriptor,
    max,
    max_constancy,
    max_contiguous,
    maximum,
    min,
    minimum,
    multiple_of,
    num_programs,
    permute,
    pointer_type,
    program_id,
    range,
    reduce_or,
    sigmoid,
    squeeze,
    static_assert,
    static_print,
    static_range,
    store,
    store_tensor_descriptor,
    sum,
    tensor,
    tensor_descriptor,
    tensor_descriptor_type,
    trans,
    where,
    xor_sum,
    zeros,
    zeros_like,
)
from .math import (
    abs,
    ceil,
    cos,
    div_rn,
    erf,
    exp,
    exp2,
    fdiv,
    floor,
    fma,
    log,
    log2,
    rsqrt,
    sin,
    sqrt,
    sqrt_rn,
    tanh,
    umulhi,
)
from . import extra  # noqa: E402  (libdevice's jit functions need the builtins)
from .random import philox, rand, rand4x, randint, randint4x, randn, randn4x
from .standard import (
    TRITON_MAX_TENSOR_NUMEL,
    add,
    argmax,
    argmin,
    clamp,
    mul,
    softmax,
    sub,
    swizzle2d,
    unsqueeze,
)

__all__ = [
    # types
    "constexpr", "dtype", "pointer_type", "block_type", "block_ptr_type", "tensor",
    "tensor_descriptor", "tensor_descriptor_type",
    "PropagateNan", "int1", "int8", "int16", "int32", "int64", "float8e5", "float8e4nv",
    "float16", "bfloat16", "float32", "float64",
    # builtins (core.py)
    "program_id", "num_programs", "arange", "zeros", "zeros_like", "full", "load", "store",
    "atomic_add", "make_block_ptr", "advance", "make_tensor_descriptor",
    "load_tensor_descriptor", "store_tensor_descriptor", "dot", "sigmoid", "maximum", "minimum",
    "where", "trans", "permute", "expand_dims", "broadcast_to", "cast", "cdiv",
    "multiple_of", "max_contiguous", "max_constancy", "assume", "broadcast", "squeeze",
    "static_assert", "static_print", "static_range",
    "range", "sum", "max", "min", "xor_sum", "reduce_or",
    # tl.math, also here
    "math", "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "tanh", "erf", "floor",
    "ceil", "fma", "abs", "div_rn", "fdiv", "sqrt_rn", "umulhi",
    # Triton's triton.language.extra (libdevice)
    "extra",
    # random numbers (random.py, Philox 4x32-10)
    "philox", "randint", "randint4x", "rand", "rand4x", "randn", "randn4x",
    # compositions of the above (standard.py)
    "TRITON_MAX_TENSOR_NUMEL", "add", "sub", "mul", "clamp", "argmax", "argmin", "unsqueeze",
    "softmax", "swizzle2d",
]
