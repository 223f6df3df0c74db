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
        if x > 5:
            return x  # expect-error: 'return' inside an if on a run-time condition must end its branch, or the function
        x = x + 1
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
    tl.store(X, min([n, 4]))  # expect-error: 'min' needs compile-time arguments; use tl.minimum on tensors


@tile.jit
def constexpr_from_runtime(X, n):
    LIMIT: tl.constexpr = n  # expect-error: 'LIMIT' is annotated tl.constexpr but its value


@tile.jit
def _needs_constexpr(X, BLOCK: tl.constexpr):
    return tl.load(X + tl.arange(0, BLOCK))  # expect-error: tl.arange: end must be a constexpr integer


@tile.jit
def runtime_to_constexpr_param(X, n):
    tl.store(X, _needs_constexpr(X, n))


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
    tl.atomic_add(X + offs, 1.0)  # expect-error: tl.atomic_add updates fp32, fp64, int32, int64, uint32, uint64 elements, not fp16


@tile.jit
def atomic_xor_float(X):
    tl.atomic_xor(X, 1.0)  # expect-error: tl.atomic_xor updates int32, int64, uint32, uint64 elements, not fp32


@tile.jit
def atomic_max_scope(X):
    tl.atomic_max(X, 1.0, scope="block")  # expect-error: tl.atomic_max: scope='block' is not one of 'cta', 'gpu', 'sys'


@tile.jit
def atomic_add_block_pointer(X):
    block = tl.make_block_ptr(base=X, shape=(16,), strides=(1,), offsets=(0,),
                              block_shape=(16,), order=(0,))
    tl.atomic_add(block, 1.0)  # expect-error: tl.atomic_add takes a tensor of pointers, not a block pointer


@tile.jit
def atomic_add_seq_cst(X):
    tl.atomic_add(X, 1.0, sem="seq_cst")  # expect-error: tl.atomic_add: sem='seq_cst' is not one of 'relaxed', 'acquire', 'release', 'acq_rel'


@tile.jit
def atomic_cas_fp16(X):
    tl.atomic_cas(X, 0.0, 1.0)  # expect-error: tl.atomic_cas swaps fp32, int32, int64, uint32, uint64 elements, not fp16


@tile.jit
def atomic_cas_block_pointer(X):
    block = tl.make_block_ptr(base=X, shape=(16,), strides=(1,), offsets=(0,),
                              block_shape=(16,), order=(0,))
    tl.atomic_cas(block, 0, 1)  # expect-error: tl.atomic_cas takes a tensor of pointers, not a block pointer


# -- tensor descriptors ---------------------------------------------------------

@tile.jit
def desc_base_not_pointer(X, n):
    d = tl.make_tensor_descriptor(n, [n, n], [n, 1], [16, 16])  # expect-error: tl.make_tensor_descriptor: base must be a scalar pointer, got int32


@tile.jit
def desc_rank_6(X, n):
    d = tl.make_tensor_descriptor(X, [n, n, n, n, n, n], [n, n, n, n, n, 1], [2, 2, 2, 2, 2, 16])  # expect-error: tl.make_tensor_descriptor: a tensor descriptor has 1 to 5 dimensions, got a shape of 6


@tile.jit
def desc_strides_count(X, n):
    d = tl.make_tensor_descriptor(X, [n, n], [1], [16, 16])  # expect-error: tl.make_tensor_descriptor: strides has 1 entries but shape has 2


@tile.jit
def desc_block_not_power_of_two(X, n):
    d = tl.make_tensor_descriptor(X, [n, n], [n, 1], [16, 24])  # expect-error: tl.make_tensor_descriptor: block_shape: every dimension must be a power of two, got shape [16, 24]


@tile.jit
def desc_block_too_narrow(X, n):
    d = tl.make_tensor_descriptor(X, [n, n], [n, 1], [16, 2])  # expect-error: the block's last dimension must span at least 16 bytes, got 2 fp32 elements (8 bytes)


@tile.jit
def desc_last_stride(X, n):
    d = tl.make_tensor_descriptor(X, [n, n], [n, 2], [16, 16])  # expect-error: tl.make_tensor_descriptor: the last stride must be 1 (the innermost dimension is contiguous), got 2


@tile.jit
def desc_runtime_last_stride(X, n, stride):
    d = tl.make_tensor_descriptor(X, [n, n], [n, stride], [16, 16])  # expect-error: the last stride must be the constant 1 (the innermost dimension is contiguous), got a run-time int32; write 1


@tile.jit
def desc_nan_padding_int(X, n):
    d = tl.make_tensor_descriptor(X, [n], [1], [16], padding_option="nan")  # expect-error: tl.make_tensor_descriptor: padding_option='nan' needs float elements, not int32


@tile.jit
def desc_offsets_rank(X, n):
    d = tl.make_tensor_descriptor(X, [n, n], [n, 1], [16, 16])
    tl.store(X, tl.sum(d.load([0]), axis=None))  # expect-error: desc.load: a tensor descriptor of rank 2 takes 2 offsets, got 1


@tile.jit
def desc_float_offset(X, n):
    d = tl.make_tensor_descriptor(X, [n, n], [n, 1], [16, 16])
    tl.store(X, tl.sum(d.load([0, 1.5]), axis=None))  # expect-error: desc.load: offsets must be integer scalars, got the constant 1.5


@tile.jit
def desc_store_shape(X, n):
    d = tl.make_tensor_descriptor(X, [n, n], [n, 1], [16, 16])
    d.store([0, 0], tl.zeros((16,), tl.float32))  # expect-error: desc.store: the value must be a tensor of the block's shape [16, 16], got fp32[16]


@tile.jit
def desc_through_tl_load(X, n):
    d = tl.make_tensor_descriptor(X, [n, n], [n, 1], [16, 16])
    tl.store(X, tl.sum(tl.load(d), axis=None))  # expect-error: tl.load takes pointers and block pointers; load through a tensor descriptor with desc.load(offsets)


@tile.jit
def desc_rebound_in_loop(X, n):
    d = tl.make_tensor_descriptor(X, [n, n], [n, 1], [16, 16])
    for i in range(0, n, 16):
        tl.store(X, tl.sum(d.load([i, 0]), axis=None))
        d = tl.make_tensor_descriptor(X + i, [n, n], [n, 1], [16, 16])  # expect-error: variable 'd' holds a tensor descriptor and is re-bound in a run-time if or loop


@tile.jit
def variadic(*args):  # expect-error: variadic parameters (*args, **kwargs) are not supported in a tile kernel
    pass


@tile.jit
async def asynchronous(X):  # expect-error: a tile kernel is a plain 'def' function, not 'async def'
    pass


@tile.jit
def huge_shift(X):
    tl.store(X, 1 << 100000)  # expect-error: the constant 1 << 100000 needs at least 100001 bits; integer constants in a tile kernel fit in 64


@tile.jit
def huge_power(X):
    tl.store(X, 10 ** 10 ** 8)  # expect-error: the constant 10 ** 100000000 needs at least 300000000 bits


@tile.jit
def huge_static_range(X):
    acc = 0
    for i in tl.static_range(1000000000):  # expect-error: tl.static_range unrolls 1000000000 iterations, more than 16384: use range() for a loop
        acc += i
    tl.store(X, acc)


@tile.jit
def arange_past_int32(X):
    x = tl.arange(2**31 - 16, 2**31)  # expect-error: tl.arange: end 2147483648 does not fit in int32
    tl.store(X + x, x)


@tile.jit
def huge_zeros(X):
    x = tl.zeros((1 << 20, 1 << 20), tl.float32)  # expect-error: tl.zeros: a tile of shape [1048576, 1048576] holds 1099511627776 elements, more than the 1048576 (2^20) a tile may hold
    tl.store(X, tl.sum(x, axis=None))


@tile.jit
def huge_broadcast(X):
    a = tl.arange(0, 1 << 20)
    x = a[:, None] + a[None, :]  # expect-error: a tile of shape [1048576, 1048576] holds 1099511627776 elements
    tl.store(X, tl.sum(x, axis=None))


@tile.jit
def block_ptr_order_none(X, n):
    p = tl.make_block_ptr(base=X, shape=(n, n), strides=(n, 1), offsets=(0, 0), block_shape=(16, 16), order=(None, 1))  # expect-error: tl.make_block_ptr: order [None, 1] is not a permutation of 0 .. 1
    tl.store(X, tl.sum(tl.load(p), axis=None))


@tile.jit
def permute_order_none(X):
    x = tl.zeros((4, 8), tl.float32)
    tl.store(X, tl.sum(tl.permute(x, (None, 0)), axis=None))  # expect-error: permutation [None, 0] does not match a tensor of rank 2


@tile.jit
def advance_by_block_pointer(X, n):
    p = tl.make_block_ptr(base=X, shape=(n, n), strides=(n, 1), offsets=(0, 0), block_shape=(16, 16), order=(1, 0))
    p = tl.advance(p, (0, p))  # expect-error: tl.advance: offsets must be integer scalars, got
    tl.store(X, tl.sum(tl.load(p), axis=None))


@tile.jit
def tile_rebound_to_constant(X, n, B: tl.constexpr):
    m = tl.full([B], 0.0, tl.float32)
    for i in range(0, n, 1):  # expect-error: variable 'm' changes type from fp32[16] to the constant 16
        m = B
    tl.store(X + tl.arange(0, B), m)
