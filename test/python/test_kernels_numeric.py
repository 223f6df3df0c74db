"""The shipped kernels, run by the numpy evaluator (ir_eval.py) on small
inputs with ragged sizes, against float64 references."""

import importlib
import math

import pytest

np = pytest.importorskip("numpy", reason="numpy is needed to run kernels in ir_eval")

from ir_eval import Interpreter, round_bf16  # noqa: E402
from tile.compiler import compile_kernel  # noqa: E402
from tile.kernels import manifest  # noqa: E402


def interpreter(name):
    variant = manifest.BY_NAME[name]
    fn = getattr(importlib.import_module(variant.module), variant.kernel)
    text = compile_kernel(fn, variant.signature, variant.constexprs,
                          options=variant.options, entry=name)
    return Interpreter(text), variant.constexprs


def softmax_ref(x):
    x = x.astype(np.float64)
    m = np.max(x, axis=1, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("name, rows, cols", [
    ("softmax_v1_n256", 3, 200), ("softmax_v1_n1024", 2, 1024), ("softmax_v2", 3, 2500),
    ("softmax_v3", 3, 2500), ("softmax_v4", 19, 700), ("softmax_v4", 5, 3)])
def test_softmax(name, rows, cols):
    rng = np.random.RandomState(rows * cols)
    stride = cols + 5   # padded rows: strides differ from n_cols
    x = (rng.randn(rows, stride) * 3).astype(np.float32)
    if name in ("softmax_v3", "softmax_v4"):
        x[0, :min(cols - 1, 1500)] = -np.inf   # a first block of -inf stays NaN-free
    memory = {"X": x.ravel().copy(), "Y": np.full(rows * stride, 7.0, np.float32)}
    it, constexprs = interpreter(name)
    grid = (rows,) if name != "softmax_v4" else (-(-rows // constexprs["BLOCK_M"]),)
    it.run([("ptr", "X"), ("ptr", "Y"), np.int32(stride), np.int32(stride), np.int32(rows),
            np.int32(cols)], grid, memory)
    y = memory["Y"].reshape(rows, stride)
    np.testing.assert_allclose(y[:, :cols], softmax_ref(x[:, :cols]), rtol=1e-5, atol=1e-6)
    assert np.all(y[:, cols:] == 7.0), "wrote past n_cols"


def test_flash_attn_puzzle():
    n, d = 100, 64
    rng = np.random.RandomState(1)
    q, k, v = (rng.randn(n, d).astype(np.float32) for _ in range(3))
    sm_scale = 1 / math.sqrt(d)
    memory = {"Q": q.ravel().copy(), "K": k.ravel().copy(), "V": v.ravel().copy(),
              "O": np.zeros(n * d, np.float32)}
    it, constexprs = interpreter("flash_attn_puzzle")
    it.run([("ptr", "Q"), ("ptr", "K"), ("ptr", "V"), ("ptr", "O"), np.int32(n),
            np.float32(sm_scale)], (-(-n // constexprs["BR"]),), memory)
    p = softmax_ref(q.astype(np.float64) @ k.T.astype(np.float64) * sm_scale)
    np.testing.assert_allclose(memory["O"].reshape(n, d), p @ v, rtol=1e-4, atol=1e-5)


def attention_ref(q, k, v, sm_scale, causal, causal_offset=0):
    """P, O and LSE; with causal, query i sees key j iff j <= i + offset.  A
    row that sees no key has P = 0, O = 0 and LSE = -inf."""
    s = q @ np.swapaxes(k, -1, -2) * sm_scale
    n = q.shape[-2]
    if causal:
        s = np.where(np.tril(np.ones((n, n), bool), k=causal_offset), s, -np.inf)
    m = s.max(-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    p = np.exp(s - m)
    total = p.sum(-1, keepdims=True)
    with np.errstate(divide="ignore"):
        lse = (np.log(total) + m)[..., 0]
    p = p / np.where(total > 0, total, 1.0)
    return p, p @ v, lse


def to_dtype(x, t):
    return x.astype(np.float16) if t == "fp16" else round_bf16(x.astype(np.float32))


def layout(z, h, n, d, heads_inner):
    """Strides (z, h, n) of a [Z, H, N, D] tensor, or of [Z, N, H, D]."""
    if heads_inner:
        return n * h * d, d, h * d
    return h * n * d, n * d, d


def store(x, z, h, n, d, heads_inner):
    x = np.transpose(x, (0, 2, 1, 3)) if heads_inner else x
    return np.ascontiguousarray(x).ravel().copy()


def load(buf, z, h, n, d, heads_inner):
    if heads_inner:
        return np.transpose(buf.reshape(z, n, h, d), (0, 2, 1, 3))
    return buf.reshape(z, h, n, d)


ATTENTION_CASES = [("fp16", 64, True, 130, False, 0), ("fp16", 64, False, 130, True, 0),
                   ("bf16", 64, True, 70, True, 0), ("fp16", 128, False, 40, False, 0),
                   # Causal offsets, with N ragged against every block size:
                   # rows 0..36 see no key (-37); every row sees every key
                   # (N + 20); no row sees a key (-N - 9).
                   ("fp16", 64, True, 300, False, -1), ("fp16", 64, True, 300, False, -37),
                   ("bf16", 64, True, 300, True, 5), ("fp16", 64, True, 130, False, 150),
                   ("fp16", 64, True, 130, False, -139), ("bf16", 128, True, 150, False, -37),
                   ("fp16", 128, True, 150, True, 70),
                   # The i32 extremes: the kernels clamp before any index
                   # arithmetic could overflow.
                   ("fp16", 64, True, 130, False, 2**31 - 1),
                   ("bf16", 128, True, 70, False, -2**31),
                   # A non-causal kernel ignores the offset.
                   ("fp16", 128, False, 40, False, -5)]


@pytest.mark.parametrize("t, d, causal, n, heads_inner, causal_offset", ATTENTION_CASES)
def test_attention_forward_and_backward(t, d, causal, n, heads_inner, causal_offset):
    z, h = 1, 2
    rng = np.random.RandomState(n + d + causal_offset % 1000)
    q, k, v, do = (to_dtype(rng.randn(z, h, n, d), t) for _ in range(4))
    f64 = [x.astype(np.float64) for x in (q, k, v, do)]
    sm_scale = 0.5 / math.sqrt(d)
    suffix = "causal" if causal else "noncausal"
    sz, sh, sn = layout(z, h, n, d, heads_inner)
    mem_dtype = np.float16 if t == "fp16" else np.float32
    memory = {name: store(x, z, h, n, d, heads_inner)
              for name, x in zip(("Q", "K", "V", "DO"), (q, k, v, do))}
    # NaN, so that an output the kernels leave unwritten fails the checks.
    for name in ("O", "DQ", "DK", "DV"):
        memory[name] = np.full(z * h * n * d, np.nan, mem_dtype)
    memory["LSE"] = np.full(z * h * n, np.nan, np.float32)
    memory["DELTA"] = np.full(z * h * n, np.nan, np.float32)
    # The preprocess kernel must zero it: NaN would survive the adds.
    memory["DQ_ACC"] = np.full(z * h * n * d, np.nan, np.float32)
    dims = [np.int32(x) for x in (sz, sh, sn, z, h, n)]
    offset = [np.int32(causal_offset)]

    fwd, c = interpreter(f"attn_fwd_{t}_d{d}_{suffix}")
    fwd.run([("ptr", "Q"), ("ptr", "K"), ("ptr", "V"), ("ptr", "O"), ("ptr", "LSE"),
             np.float32(sm_scale)] + dims + offset, (-(-n // c["BLOCK_M"]), z * h), memory)
    p, o_ref, lse_ref = attention_ref(*f64[:3], sm_scale, causal, causal_offset)
    o = load(memory["O"], z, h, n, d, heads_inner).astype(np.float64)
    np.testing.assert_allclose(o, o_ref, atol=1e-2, rtol=1e-2)
    lse = memory["LSE"].reshape(z, h, n)
    # Rows that see no key: LSE exactly -inf (assert_allclose alone would
    # also take a -inf that should be finite, or NaN against NaN).
    empty = np.isneginf(lse_ref)
    if causal:
        assert empty.sum() == z * h * min(n, max(0, -causal_offset))
    np.testing.assert_array_equal(np.isneginf(lse), empty)
    np.testing.assert_allclose(lse[~empty], lse_ref[~empty], atol=1e-4, rtol=1e-4)

    pre, c = interpreter(f"attn_bwd_preprocess_{t}_d{d}")
    pre.run([("ptr", "O"), ("ptr", "DO"), ("ptr", "DELTA"), ("ptr", "DQ_ACC")] + dims,
            (-(-n // c["BLOCK_M"]), z * h), memory)
    delta_ref = (o * f64[3]).sum(-1)
    np.testing.assert_allclose(memory["DELTA"].reshape(z, h, n), delta_ref,
                               rtol=1e-5, atol=1e-5)

    bwd, c = interpreter(f"attn_bwd_{t}_d{d}_{suffix}")
    bwd.run([("ptr", "Q"), ("ptr", "K"), ("ptr", "V"), np.float32(sm_scale), ("ptr", "DO"),
             ("ptr", "DQ_ACC"), ("ptr", "DK"), ("ptr", "DV"), ("ptr", "LSE"),
             ("ptr", "DELTA")] + dims + offset, (-(-n // c["BLOCK_N1"]), z * h), memory)
    post, c = interpreter(f"attn_bwd_postprocess_{t}_d{d}")
    post.run([("ptr", "DQ"), ("ptr", "DQ_ACC"), np.float32(sm_scale)] + dims,
             (-(-n // c["BLOCK_M"]), z * h), memory)
    qf, kf, vf, dof = f64
    dv_ref = np.swapaxes(p, -1, -2) @ dof
    dp = dof @ np.swapaxes(vf, -1, -2)
    ds = p * (dp - (o_ref * dof).sum(-1, keepdims=True))
    dq_ref = ds @ kf * sm_scale
    dk_ref = np.swapaxes(ds, -1, -2) @ qf * sm_scale
    for name, ref in (("DV", dv_ref), ("DK", dk_ref), ("DQ", dq_ref)):
        got = load(memory[name], z, h, n, d, heads_inner).astype(np.float64)
        scale = np.abs(ref).max()
        assert np.abs(got - ref).max() <= 2e-2 * scale, \
            f"{name}: max error {np.abs(got - ref).max()} vs scale {scale}"


UNIT_ROUNDOFF = {"fp16": 2.0**-11, "bf16": 2.0**-8}


def matmul_case(name, t, m, n, k, block=None, seed=0):
    """Runs the matmul variant `name` (with the constexprs `block`
    overriding the variant's, when given) on random [m, k] @ [k, n] in
    type t, rows padded to multiples of 16 elements as the signature
    promises, and checks C against the float64 product of the same
    inputs: within one rounding to t, plus the fp32 accumulation's error
    (K roundings of the running sum, at most).  The padding of C must stay
    unwritten."""
    variant = manifest.BY_NAME[name]
    fn = getattr(importlib.import_module(variant.module), variant.kernel)
    constexprs = dict(variant.constexprs, **(block or {}))
    it = Interpreter(compile_kernel(fn, variant.signature, constexprs,
                                    options=variant.options, entry=name))
    pad = lambda x: -(-x // 16) * 16 + 16  # noqa: E731 - padded, never dense
    stride_a, stride_b = pad(k), pad(n)
    rng = np.random.RandomState(seed)
    a = to_dtype(rng.randn(m, stride_a), t)
    b = to_dtype(rng.randn(k, stride_b), t)
    mem_dtype = np.float16 if t == "fp16" else np.float32
    memory = {"A": a.ravel().copy(), "B": b.ravel().copy(),
              "C": np.full(m * stride_b, np.nan, mem_dtype)}
    grid = (-(-m // constexprs["BLOCK_M"]) * -(-n // constexprs["BLOCK_N"]),)
    it.run([("ptr", "A"), ("ptr", "B"), ("ptr", "C")]
           + [np.int32(x) for x in (m, n, k, stride_a, stride_b, stride_b)], grid, memory)
    a64, b64 = a[:, :k].astype(np.float64), b[:, :n].astype(np.float64)
    c = memory["C"].reshape(m, stride_b)
    assert np.isnan(c[:, n:]).all(), "wrote past N"
    ref = a64 @ b64
    bound = UNIT_ROUNDOFF[t] * np.abs(ref) + k * 2.0**-24 * (np.abs(a64) @ np.abs(b64))
    error = np.abs(c[:, :n].astype(np.float64) - ref)
    assert (error <= bound).all(), \
        f"{name} {m}x{n}x{k}: max error {error.max()}, worst ratio {(error / bound).max()}"


# Small blocks so that the shapes span several programs and GROUP_M groups
# (the last group short), full and partial blocks along M and N, whole K
# steps and a K tail; a shape inside one block; K below BLOCK_K.
SMALL_BLOCKS = {"BLOCK_M": 32, "BLOCK_N": 16, "BLOCK_K": 16, "GROUP_M": 2}


@pytest.mark.parametrize("t", ["fp16", "bf16"])
@pytest.mark.parametrize("m, n, k", [(100, 72, 40), (64, 48, 32), (7, 5, 3), (33, 17, 70)])
def test_matmul_small_blocks(t, m, n, k):
    matmul_case(f"matmul_{t}", t, m, n, k, SMALL_BLOCKS, seed=m + n + k)


@pytest.mark.parametrize("t", ["fp16", "bf16"])
def test_matmul_shipped_blocks(t):
    """The variant as shipped, on a shape that crosses its blocks along M,
    N and K."""
    c = manifest.BY_NAME[f"matmul_{t}"].constexprs
    matmul_case(f"matmul_{t}", t, c["BLOCK_M"] + 3, c["BLOCK_N"] + 5, c["BLOCK_K"] + 9)
