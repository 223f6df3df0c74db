"""Kernels with one mistake each; the faulty line ends with an
"expect-error" comment holding (part of) the message the compiler must give."""

import tile
import tile.language as tl


def not_a_kernel_function(x):
    return x


@tile.jit
def undefined_name(X):
    tl.store(X, y)  # expect-error: name 'y' is not defined


@tile.jit
def runtime_arange(X, n):
    offs = tl.arange(0, n)  # expect-error: tl.arange: end must be a constexpr integer
    tl.store(X + offs, 0.0)


@tile.jit
def arange_not_power_of_two(X):
    offs = tl.arange(0, 12)  # expect-error: must be a power of two
    tl.store(X + offs, 0.0)


@tile.jit
def dot_type_mismatch(X, Y):
    offs = tl.arange(0, 16)
    a = tl.load(X + offs[:, None] * 16 + offs[None, :])
    b = tl.load(Y + offs[:, None] * 16 + offs[None, :])
    c = tl.dot(a, b)  # expect-error: tl.dot: both operands must have one element type, got fp16 and fp32
    tl.store(Y + offs[:, None] * 16 + offs[None, :], c)


@tile.jit
def uses_break(X, n):
    for i in range(0, n):
        break  # expect-error: unsupported construct in a tile kernel: 'break'


@tile.jit
def loop_type_change(X, n):
    acc = 0
    for i in range(0, n):
        acc = acc + 0.5  # expect-error: loop-carried variable 'acc' is int32 before the loop but fp32
    tl.store(X, acc)


@tile.jit
def shape_mismatch(X):
    a = tl.arange(0, 16)
    b = tl.arange(0, 32)
    tl.store(X + a, a + b)  # expect-error: incompatible shapes [16] and [32] in '+'


@tile.jit
def assign_element(X):
    a = tl.arange(0, 16)
    a[0] = 1  # expect-error: assignment to an element is not supported


@tile.jit
def tensor_condition(X):
    a = tl.arange(0, 16)
    if a > 3:  # expect-error: the condition of if must be a scalar
        tl.store(X + a, 1.0)


@tile.jit
def _early_return(x):
    if x > 0:
        return x  # expect-error: 'return' inside an if on a run-time condition is not supported
    return -x


@tile.jit
def runtime_return(X, n):
    tl.store(X, _early_return(n))


@tile.jit
def static_assert_fails(X, BLOCK: tl.constexpr):
    tl.static_assert(BLOCK % 32 == 0, "BLOCK must be a multiple of 32")  # expect-error: static assertion failed: BLOCK must be a multiple of 32


@tile.jit
def calls_python(X):
    tl.store(X, not_a_kernel_function(1.0))  # expect-error: call to 'not_a_kernel_function' is not supported


@tile.jit
def python_min_on_tensor(X, n):
    tl.store(X, min(n, 4))  # expect-error: 'min' needs compile-time arguments; use tl.minimum on tensors


@tile.jit
def constexpr_from_runtime(X, n):
    LIMIT: tl.constexpr = n  # expect-error: 'LIMIT' is annotated tl.constexpr but its value


@tile.jit
def _needs_constexpr(x, BLOCK: tl.constexpr):
    return x


@tile.jit
def runtime_to_constexpr_param(X, n):
    tl.store(X, _needs_constexpr(1.0, n))  # expect-error: parameter 'BLOCK' is tl.constexpr but the argument


@tile.jit
def branch_type_mismatch(X, n):
    if n > 0:
        v = 1.0
    else:
        v = n  # no marker: the error points at the if
    tl.store(X, v)


@tile.jit
def bad_pointer_math(X, Y):
    tl.store(X, X + Y)  # expect-error: cannot apply '+' to two pointers


@tile.jit
def float_offset(X):
    tl.store(X + 1.5, 1.0)  # expect-error: pointer arithmetic needs an integer offset, got the constant 1.5


@tile.jit
def atomic_add_fp16(X):
    offs = tl.arange(0, 16)
    tl.atomic_add(X + offs, 1.0)  # expect-error: tl.atomic_add adds fp32, fp64, int32, int64 elements, not fp16


@tile.jit
def atomic_add_block_pointer(X):
    block = tl.make_block_ptr(base=X, shape=(16,), strides=(1,), offsets=(0,),
                              block_shape=(16,), order=(0,))
    tl.atomic_add(block, 1.0)  # expect-error: tl.atomic_add takes a tensor of pointers, not a block pointer


@tile.jit
def atomic_add_acq_rel(X):
    tl.atomic_add(X, 1.0, sem="acq_rel")  # expect-error: tl.atomic_add: sem='acq_rel' is not supported (relaxed only)
