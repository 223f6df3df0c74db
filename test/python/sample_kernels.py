"""Small kernels exercising the language, compiled by test_frontend.py."""

import tile
import tile.language as tl

SCALE = tl.constexpr(3)


@tile.jit
def promote(A, B, C, s, n, OP: tl.constexpr):
    offs = tl.arange(0, 16)
    a = tl.load(A + offs)
    b = tl.load(B + offs)
    if OP == "lit_float":
        c = a + 1.5
    elif OP == "lit_int":
        c = a * 2
    elif OP == "scalar":
        c = a * s
    elif OP == "tensors":
        c = a + b
    elif OP == "div":
        c = a / b
    elif OP == "div_rn":
        c = tl.math.div_rn(a, b)
    elif OP == "fdiv_ieee":
        c = tl.fdiv(a, b, ieee_rounding=True)
    elif OP == "fdiv":
        c = tl.fdiv(a, b)
    elif OP == "div_f64":
        c = a.to(tl.float64) / b.to(tl.float64)
    elif OP == "int_div":
        c = offs / n
    elif OP == "int_float_lit":
        c = offs * 0.5
    elif OP == "int64":
        c = offs + n.to(tl.int64)
    elif OP == "floordiv":
        c = offs // 3 + offs % n
    else:
        c = a
    tl.store(C + offs, c)


@tile.jit
def carried(X, Y, n):
    total = 0.0
    best = -float("inf")
    offs = tl.arange(0, 32)
    acc = tl.zeros([32], tl.float32)
    for start in range(0, n, 32):
        x = tl.load(X + start + offs, mask=start + offs < n, other=0.0)
        acc += x
        total = total + tl.sum(x, axis=0)
        best = tl.maximum(best, tl.max(x, axis=0))
        unused_after = x  # noqa: F841 (assigned in the loop, never read: not carried)
    tl.store(Y + offs, acc * total + best)


@tile.jit
def branches(X, Y, flag, MODE: tl.constexpr):
    offs = tl.arange(0, 8)
    x = tl.load(X + offs)
    if MODE == 1:
        x = x * 2.0
    else:
        x = x * 3.0
    scale = 1.0
    if flag > 0:
        x = x + 1.0
        scale = 0.5
    else:
        x = x - 1.0
    y = x * scale if flag > 1 else x
    tl.store(Y + offs, y)


@tile.jit
def _scaled(x, factor: tl.constexpr):
    return x * factor, factor + 1


@tile.jit
def _twice(x, factor: tl.constexpr):
    y, next_factor = _scaled(x, factor)
    return _scaled(y, next_factor)[0]


@tile.jit
def helpers(X, Y):
    offs = tl.arange(0, 8)
    x = tl.load(X + offs)
    tl.store(Y + offs, _twice(x, SCALE))


@tile.jit
def countdown(X, n):
    i = n
    total = 0
    while i > 0:
        total += i
        i -= 1
    tl.store(X, total)


@tile.jit
def shapes(X, Y):
    rows = tl.arange(0, 4)
    cols = tl.arange(0, 8)
    ptrs = X + rows[:, None] * 8 + cols[None, :]
    x = tl.load(ptrs)
    t = x.T
    s = tl.sum(t, axis=0) + tl.max(x, 1) + tl.min(x, axis=-1)
    tl.static_assert(x.shape[0] == 4 and t.shape == (8, 4))
    z = tl.where(x > 0, x, 0.0).to(tl.float16)
    w = tl.dot(z, tl.trans(z).to(tl.float16))
    for k in tl.static_range(2):
        s = s + k
    tl.store(Y + rows, s + tl.sum(w, axis=1) + (~(rows > 2)).to(tl.float32))


@tile.jit
def block_pointers(X, Y, n, stride):
    bp = tl.make_block_ptr(X, shape=(n, 16), strides=(stride, 1), offsets=(0, 0),
                           block_shape=(8, 16), order=(1, 0))
    out = tl.make_block_ptr(Y, shape=(n, 16), strides=(stride, 1), offsets=(0, 0),
                            block_shape=(8, 16), order=(1, 0))
    for _ in range(0, n, 8):
        x = tl.load(bp, boundary_check=(0, 1), padding_option="zero")
        tl.store(out, x * 2, boundary_check=(0,))
        bp = tl.advance(bp, (8, 0))
        out = tl.advance(out, (8, 0))
