"""The shipped kernels, run by the numpy evaluator (ir_eval.py) on small
inputs with ragged sizes, against float64 references."""

import importlib
import math
import zlib

import pytest

np = pytest.importorskip("numpy", reason="numpy is needed to run kernels in ir_eval")

from dropout_reference import dropout_kept  # noqa: E402
from ir_eval import Interpreter, round_bf16  # noqa: E402
from tile.compiler import compile_kernel  # noqa: E402
from tile.kernels import manifest  # noqa: E402
from tile.kernels.attention import stats_stride  # noqa: E402


def interpreter(name, overrides=None):
    """The shipped variant `name`, its constexprs changed by `overrides`
    (a block-size sweep's), and its constexprs."""
    variant = manifest.BY_NAME[name]
    constexprs = {**variant.constexprs, **(overrides or {})}
    fn = getattr(importlib.import_module(variant.module), variant.kernel)
    text = compile_kernel(fn, variant.signature, constexprs, options=variant.options,
                          entry=name)
    return Interpreter(text), constexprs


# The evaluator's multiprocessor count: a persistent forward's programs
# then take several blocks each.
EVALUATOR_SMS = 3


def fwd_grid(c, max_n_ctx, heads):
    """attn_fwd's grid (attention._fwd_grid): a program a query block and
    head, or PERSISTENT programs an SM taking blocks (causal: pairs of
    them) in turn."""
    blocks = -(-max_n_ctx // c["BLOCK_M"])
    if not c["PERSISTENT"]:
        return blocks, heads
    units = -(-blocks // 2) if c["CAUSAL"] else blocks
    return (min(units * heads, c["PERSISTENT"] * EVALUATOR_SMS),)


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


def visibility(n, n_kv, causal_offset=None, window_offset=None):
    """[n, n_kv] bool: query i sees key j iff j <= i + causal_offset (when
    given) and j >= i + window_offset (when given)."""
    i = np.arange(n)[:, None]
    j = np.arange(n_kv)[None, :]
    visible = np.ones((n, n_kv), bool)
    if causal_offset is not None:
        visible &= j <= i + causal_offset
    if window_offset is not None:
        visible &= j >= i + window_offset
    return visible


def attention_ref(q, k, v, sm_scale, visible, softcap=None, slopes=None, kept=1.0):
    """P, O, LSE and the derivative of the scores' cap, of q [Z, H, N, D]
    against k, v [Z, H, N_KV, D] (heads already repeated for grouped K/V),
    keys hidden where `visible` is False, scores capped to softcap *
    tanh(score / softcap) when softcap is given, and ALiBi's bias -slope *
    |i + N_KV - N - j| added when slopes [Z, H] are; O = (P * kept) V
    (dropout: kept is keep / (1 - p), dropout_kept).  A row that sees no
    key has P = 0, O = 0 and LSE = -inf."""
    s = q @ np.swapaxes(k, -1, -2) * sm_scale
    cap_grad = np.ones_like(s)
    if softcap is not None:
        s = softcap * np.tanh(s / softcap)
        cap_grad = 1 - (s / softcap) ** 2
    if slopes is not None:
        n, n_kv = s.shape[-2:]
        distance = np.abs(np.arange(n)[:, None] + n_kv - n - np.arange(n_kv)[None, :])
        s = s - slopes[:, :, None, None] * distance
    s = np.where(visible, s, -np.inf)
    m = s.max(-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    p = np.exp(s - m)
    total = p.sum(-1, keepdims=True)
    with np.errstate(divide="ignore"):
        lse = (np.log(total) + m)[..., 0]
    p = p / np.where(total > 0, total, 1.0)
    return p, (p * kept) @ v, lse, cap_grad


def to_dtype(x, t):
    return x.astype(np.float16) if t == "fp16" else round_bf16(x.astype(np.float32))


def layout(z, h, n, d, heads_inner):
    """Strides (z, h, n) of a [Z, H, N, D] tensor, or of [Z, N, H, D]."""
    if heads_inner:
        return n * h * d, d, h * d
    return h * n * d, n * d, d


def store(x, heads_inner):
    x = np.transpose(x, (0, 2, 1, 3)) if heads_inner else x
    return np.ascontiguousarray(x).ravel().copy()


def load(buf, z, h, n, d, heads_inner):
    if heads_inner:
        return np.transpose(buf.reshape(z, n, h, d), (0, 2, 1, 3))
    return buf.reshape(z, h, n, d)


class Mask:
    """A case's mask: the variant suffix and the two offsets the kernels
    take (None: that bound is off)."""

    def __init__(self, causal_offset=None, window_offset=None):
        self.causal_offset = causal_offset
        self.window_offset = window_offset

    @property
    def suffix(self):
        if self.window_offset is not None:
            return "local"
        return "noncausal" if self.causal_offset is None else "causal"

    def args(self, n_kv):
        """causal_offset and window_offset as the kernels get them: a local
        kernel without an upper bound gets N_KV (every key)."""
        upper = self.causal_offset
        if upper is None:
            upper = n_kv if self.window_offset is not None else 0
        lower = 0 if self.window_offset is None else self.window_offset
        return [np.int32(upper), np.int32(lower)]

    def __repr__(self):
        return f"Mask({self.causal_offset}, {self.window_offset})"


NONCAUSAL = Mask()


def causal(offset=0):
    return Mask(causal_offset=offset)


def band(lower, upper=None):
    return Mask(causal_offset=upper, window_offset=lower)


# (dtype, head dim, mask, N_CTX, heads_inner) with N_KV = N_CTX and one K/V
# head a query head.
ATTENTION_CASES = [("fp16", 64, causal(), 130, False), ("fp16", 64, NONCAUSAL, 130, True),
                   ("bf16", 64, causal(), 70, True), ("fp16", 128, NONCAUSAL, 40, False),
                   # Causal offsets, with N ragged against every block size:
                   # rows 0..36 see no key (-37); every row sees every key
                   # (N + 20); no row sees a key (-N - 9).
                   ("fp16", 64, causal(-1), 300, False), ("fp16", 64, causal(-37), 300, False),
                   ("bf16", 64, causal(5), 300, True), ("fp16", 64, causal(150), 130, False),
                   ("fp16", 64, causal(-139), 130, False),
                   ("bf16", 128, causal(-37), 150, False), ("fp16", 128, causal(70), 150, True),
                   # The i32 extremes: the kernels clamp before any index
                   # arithmetic could overflow.
                   ("fp16", 64, causal(2**31 - 1), 130, False),
                   ("bf16", 128, causal(-2**31), 70, False),
                   # Windows: narrower than a block (cut on both sides),
                   # wider than several, a lower bound only, bands that
                   # leave rows without keys, the i32 extremes.
                   ("fp16", 64, band(-20, 0), 300, False),
                   ("bf16", 64, band(-150, 3), 300, True),
                   ("fp16", 128, band(-7, 9), 200, False), ("fp16", 64, band(-70), 150, False),
                   ("fp16", 64, band(40, 60), 130, False),
                   ("bf16", 128, band(-300, -200), 250, True),
                   ("fp16", 64, band(-2**31, 2**31 - 1), 70, False),
                   ("fp16", 64, band(2**31 - 1, 2**31 - 1), 70, False)]


def alibi_slopes(rng, z, h):
    """Random slopes [Z, H] (FlashAttention takes any), fp32."""
    return rng.uniform(0.05, 0.6, (z, h)).astype(np.float32)


def variant_suffix(mask, softcap, alibi, dropout_p):
    return (mask.suffix + ("" if softcap is None else "_softcap") + ("_alibi" if alibi else "")
            + ("" if dropout_p is None else "_dropout"))


def dropout_memory(memory, rng, z, dropout_p):
    """The seeds (int64, one a sequence) and the kernels' dropout
    arguments; without dropout a seed they do not read."""
    seeds = rng.randint(0, 2**62, z, dtype=np.int64) if dropout_p is not None \
        else np.zeros(1, np.int64)
    memory["SEEDS"] = seeds
    return seeds, [np.float32(dropout_p or 0.0), ("ptr", "SEEDS")]


def run_attention(t, d, mask, n, heads_inner, n_kv=None, h=2, h_kv=None, z=1,
                  softcap=None, alibi=False, dropout_p=None, deterministic=False,
                  bwd_overrides=None, fwd_overrides=None, key_growth=0.0):
    """Runs the forward and the three backward kernels of one variant on
    random inputs and checks O, LSE, DELTA, dQ, dK (per query head) and dV
    against float64.  deterministic: attn_bwd without dQ (which must leave
    DQ_ACC as the preprocess zeroed it) and attn_bwd_dq in place of the
    postprocess.  bwd_overrides, fwd_overrides: constexprs of attn_bwd's
    and attn_fwd's to change.  key_growth: key j scaled by 2^(j *
    key_growth), so that the rows' maxima grow from block to block past the
    forward's rescale headroom."""
    suffix = variant_suffix(mask, softcap, alibi, dropout_p)
    n_kv = n if n_kv is None else n_kv
    h_kv = h if h_kv is None else h_kv
    group = h // h_kv
    rng = np.random.RandomState(n + 3 * n_kv + d + h_kv + zlib.crc32(repr(mask).encode()) % 1000)
    q, do = (to_dtype(rng.randn(z, h, n, d), t) for _ in range(2))
    k, v = (to_dtype(rng.randn(z, h_kv, n_kv, d), t) for _ in range(2))
    if key_growth:
        k = to_dtype(k.astype(np.float64) * 2.0**(np.arange(n_kv) * key_growth)[:, None], t)
    qf, kf, vf, dof = (x.astype(np.float64) for x in (q, k, v, do))
    kf, vf = (np.repeat(x, group, axis=1) for x in (kf, vf))
    sm_scale = 0.5 / math.sqrt(d)
    mem_dtype = np.float16 if t == "fp16" else np.float32
    memory = {name: store(x, heads_inner)
              for name, x in (("Q", q), ("K", k), ("V", v), ("DO", do))}
    # NaN, so that an output the kernels leave unwritten fails the checks.
    for name, rows in (("O", n), ("DQ", n), ("DK", n_kv), ("DV", n_kv)):
        memory[name] = np.full(z * h * rows * d, np.nan, mem_dtype)
    memory["LSE"] = np.full(z * h * n, np.nan, np.float32)
    # The backward's statistics, in padded rows; the padding stays NaN, which
    # no kernel may read.
    stats = stats_stride(n)
    memory["LSE_LOG2"] = np.full(z * h * stats, np.nan, np.float32)
    memory["DELTA"] = np.full(z * h * stats, np.nan, np.float32)
    # The preprocess kernel must zero it: NaN would survive the adds.  Its
    # rows are the blocks' width (BLOCK_D) long.
    width = manifest.BY_NAME[f"attn_bwd_preprocess_{t}_d{d}"].constexprs["BLOCK_D"]
    memory["DQ_ACC"] = np.full(z * h * n * width, np.nan, np.float32)
    q_strides = layout(z, h, n, d, heads_inner)
    kv_strides = layout(z, h_kv, n_kv, d, heads_inner)
    dkv_strides = layout(z, h, n_kv, d, heads_inner)
    i32 = lambda values: [np.int32(x) for x in values]  # noqa: E731
    sizes = i32((z, h, h_kv, n, n_kv)) + mask.args(n_kv) + [np.float32(softcap or 0.0)]
    # One batch of equal lengths: the cu_seqlens pointers are never read,
    # nor the slopes without ALiBi.
    memory["CU"] = np.zeros(1, np.int32)
    slopes = alibi_slopes(rng, z, h) if alibi else None
    memory["ALIBI"] = slopes.ravel().copy() if alibi else np.zeros(1, np.float32)
    seeds, dropout = dropout_memory(memory, rng, z, dropout_p)
    dense = [("ptr", "CU"), ("ptr", "CU")] + i32((n, 0)) + [("ptr", "ALIBI")] + dropout
    dense_bwd = [("ptr", "CU"), ("ptr", "CU")] + i32((n, n_kv, 0)) + [("ptr", "ALIBI")] \
        + dropout
    q_dims = i32(q_strides + (z, h, n)) + [("ptr", "CU")] + i32((n, 0))

    fwd, c = interpreter(f"attn_fwd_{t}_d{d}_{suffix}", fwd_overrides)
    fwd.run([("ptr", "Q"), ("ptr", "K"), ("ptr", "V"), ("ptr", "O"), ("ptr", "LSE"),
             np.float32(sm_scale)] + i32(q_strides + kv_strides) + sizes + dense,
            fwd_grid(c, n, z * h), memory)
    visible = visibility(n, n_kv, mask.causal_offset, mask.window_offset)
    kept = 1.0 if dropout_p is None else dropout_kept(seeds, h, n, n_kv, dropout_p)
    p, o_ref, lse_ref, cap_grad = attention_ref(qf, kf, vf, sm_scale, visible, softcap, slopes,
                                                kept)
    o = load(memory["O"], z, h, n, d, heads_inner).astype(np.float64)
    np.testing.assert_allclose(o, o_ref, atol=1e-2, rtol=1e-2)
    lse = memory["LSE"].reshape(z, h, n)
    # Rows that see no key: LSE exactly -inf (assert_allclose alone would
    # also take a -inf that should be finite, or NaN against NaN).
    empty = np.isneginf(lse_ref)
    assert empty.sum() == z * h * (~visible.any(-1)).sum()
    np.testing.assert_array_equal(np.isneginf(lse), empty)
    np.testing.assert_allclose(lse[~empty], lse_ref[~empty], atol=1e-4, rtol=1e-4)

    pre, c = interpreter(f"attn_bwd_preprocess_{t}_d{d}")
    pre.run([("ptr", "O"), ("ptr", "DO"), ("ptr", "LSE"), ("ptr", "LSE_LOG2"), ("ptr", "DELTA"),
             ("ptr", "DQ_ACC")] + q_dims, (-(-n // c["BLOCK_M"]), z * h), memory)
    delta_ref = (o * dof).sum(-1)
    np.testing.assert_allclose(memory["DELTA"].reshape(z, h, stats)[..., :n], delta_ref,
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(memory["LSE_LOG2"].reshape(z, h, stats)[..., :n],
                               lse * np.float32(math.log2(math.e)), rtol=1e-6)

    bwd, c = interpreter(f"attn_bwd_{t}_d{d}_{suffix}"
                         + ("_deterministic" if deterministic else ""), bwd_overrides)
    bwd.run([("ptr", "Q"), ("ptr", "K"), ("ptr", "V"), np.float32(sm_scale), ("ptr", "DO"),
             ("ptr", "DQ_ACC"), ("ptr", "DK"), ("ptr", "DV"), ("ptr", "LSE_LOG2"),
             ("ptr", "DELTA")] + i32(q_strides + kv_strides + dkv_strides) + sizes
            + dense_bwd, (-(-n_kv // c["BLOCK_N1"]), z * h), memory)
    if deterministic:
        assert (memory["DQ_ACC"] == 0).all(), "attn_bwd without DQ added to DQ_ACC"
        dq_kernel, c = interpreter(f"attn_bwd_dq_{t}_d{d}_{suffix}")
        dq_kernel.run([("ptr", "DQ"), ("ptr", "Q"), ("ptr", "K"), ("ptr", "V"), ("ptr", "DO"),
                       ("ptr", "LSE_LOG2"), ("ptr", "DELTA"), np.float32(sm_scale)]
                      + i32(q_strides + kv_strides) + sizes[:-1] + dense[:4],
                      (-(-n // c["BLOCK_M"]), z * h), memory)
    else:
        post, c = interpreter(f"attn_bwd_postprocess_{t}_d{d}")
        post.run([("ptr", "DQ"), ("ptr", "DQ_ACC"), np.float32(sm_scale)] + q_dims,
                 (-(-n // c["BLOCK_M"]), z * h), memory)
    got = {name: load(memory[name], z, h, rows, d, heads_inner).astype(np.float64)
           for name, rows in (("DV", n_kv), ("DK", n_kv), ("DQ", n))}
    check_gradients(got, p, o_ref, qf, kf, vf, dof, sm_scale, cap_grad, visible, "", kept)


def check_gradients(got, p, o_ref, qf, kf, vf, dof, sm_scale, cap_grad, visible, where,
                    kept=1.0):
    """dV, dK (per query head) and dQ in `got` against float64 from P and
    O (O = (P * kept) V): keys no query sees and queries that see no key
    exactly zero."""
    dv_ref = np.swapaxes(p * kept, -1, -2) @ dof
    dp = (dof @ np.swapaxes(vf, -1, -2)) * kept
    delta = (o_ref * dof).sum(-1, keepdims=True)
    ds = p * (dp - delta) * cap_grad
    dq_ref = ds @ kf * sm_scale
    dk_ref = np.swapaxes(ds, -1, -2) @ qf * sm_scale
    # dS = P (dP - delta) cancels, to 0 where a row sees one key: bound the
    # errors by the size of the terms that cancel too (a tenth of it).
    ds_terms = p * (np.abs(dp) + np.abs(delta)) * cap_grad
    terms = {"DK": np.swapaxes(ds_terms, -1, -2) @ np.abs(qf) * sm_scale,
             "DQ": ds_terms @ np.abs(kf) * sm_scale, "DV": np.abs(dv_ref)}
    unseen = {"DK": ~visible.any(0), "DV": ~visible.any(0), "DQ": ~visible.any(1)}
    for name, ref in (("DV", dv_ref), ("DK", dk_ref), ("DQ", dq_ref)):
        value = got[name]
        assert (value[:, :, unseen[name]] == 0).all(), \
            f"{where} {name}: not zero where nothing is seen"
        if ref.size == 0:
            continue
        scale = max(np.abs(ref).max(), 0.1 * terms[name].max())
        assert np.abs(value - ref).max() <= 2e-2 * scale, \
            f"{where} {name}: max error {np.abs(value - ref).max()} vs scale {scale}"


@pytest.mark.parametrize("t, d, mask, n, heads_inner", ATTENTION_CASES)
def test_attention_forward_and_backward(t, d, mask, n, heads_inner):
    run_attention(t, d, mask, n, heads_inner)


# A block-size sweep's d128 backward of 32-query blocks: DQ_ACC's groups of
# 64 rows are each two of its blocks, and at N = 150 its blocks of rows 128
# to 159 share the last, partial group with the tail.
def test_attention_backward_small_query_blocks():
    run_attention("fp16", 128, causal(), 150, False, bwd_overrides={"BLOCK_M1": 32})


# The forward with each row's sum kept in 8 parts through the key blocks
# (a reshape of P in the accumulator's registers), and without: causal at
# a ragged length, a band that leaves rows without keys (LSE -inf), unequal
# lengths; keys growing so that rows rescale (lazily, past the headroom)
# in later blocks.
@pytest.mark.parametrize("parts", [0, 8])
@pytest.mark.parametrize("t, d, mask, n, n_kv", [
    ("fp16", 64, causal(), 150, 150), ("bf16", 128, band(-70, 0), 140, 140),
    ("fp16", 64, NONCAUSAL, 70, 130), ("bf16", 128, causal(-40), 130, 100)])
def test_attention_forward_rows_rescaled(t, d, mask, n, n_kv, parts):
    run_attention(t, d, mask, n, False, n_kv=n_kv, fwd_overrides={"ROW_SUM_PARTS": parts},
                  key_growth=1 / 24)


# Head dims 96 and 192, whose kernels run on 128's and 256's tiles
# (BLOCK_D), reading zeros past the tensors' columns and storing nothing
# there (O, dQ, dK and dV start NaN): the masks, unequal lengths, heads
# inner, softcap, ALiBi, dropout, the deterministic backward, grouped heads.
@pytest.mark.parametrize("t, d, mask, n, n_kv, heads_inner, extra", [
    ("fp16", 96, causal(), 150, 150, False, {}),
    ("bf16", 96, NONCAUSAL, 70, 130, True, {"h": 4, "h_kv": 2}),
    ("fp16", 96, band(-70, 0), 140, 140, False, {"softcap": 20.0}),
    ("bf16", 96, causal(), 100, 100, False, {"deterministic": True}),
    ("bf16", 192, causal(-40), 130, 100, True, {}),
    ("fp16", 192, NONCAUSAL, 100, 77, False, {"alibi": True}),
    ("bf16", 192, causal(), 90, 90, False, {"dropout_p": 0.3}),
    ("fp16", 192, band(-50, 0), 80, 80, False, {"deterministic": True})])
def test_attention_ragged_head_dims(t, d, mask, n, n_kv, heads_inner, extra):
    run_attention(t, d, mask, n, heads_inner, n_kv=n_kv, **extra)


# Unequal lengths both ways (FlashAttention's bottom-right causal alignment
# is causal_offset = N_KV - N_CTX), and grouped K/V heads: 2 and 4 query
# heads a K/V head, and one K/V head for all (multi-query).
# Head dims 32 and 256 (d256's backward has tiles of its own), with the
# masks, grouped heads and unequal lengths.
@pytest.mark.parametrize("t, d, mask, n, n_kv, h, h_kv", [
    ("fp16", 32, NONCAUSAL, 130, 100, 2, 1), ("bf16", 32, causal(), 150, 150, 2, 2),
    ("fp16", 32, band(-40, 5), 200, 200, 2, 2), ("bf16", 256, causal(), 150, 150, 2, 1),
    ("fp16", 256, NONCAUSAL, 70, 130, 2, 2), ("fp16", 256, band(-70, 0), 140, 140, 2, 2)])
def test_attention_head_dims(t, d, mask, n, n_kv, h, h_kv):
    run_attention(t, d, mask, n, False, n_kv=n_kv, h=h, h_kv=h_kv)


def run_varlen_attention(t, d, mask, lengths, h=2, h_kv=1, softcap=None, alibi=False,
                         dropout_p=None, deterministic=False):
    """The four kernels on packed sequences (VARLEN): `lengths` is a list of
    (queries, keys) per sequence, the tensors (total, heads, d) as
    FlashAttention's varlen functions take them, and the mask's offsets
    relative to each sequence's bottom-right diagonal.  Each sequence is
    checked against float64 on its own."""
    suffix = variant_suffix(mask, softcap, alibi, dropout_p)
    z = len(lengths)
    cu_q = np.cumsum([0] + [lq for lq, _ in lengths]).astype(np.int32)
    cu_k = np.cumsum([0] + [lk for _, lk in lengths]).astype(np.int32)
    total_q, total_k = int(cu_q[-1]), int(cu_k[-1])
    max_q, max_k = max(lq for lq, _ in lengths), max(lk for _, lk in lengths)
    group = h // h_kv
    rng = np.random.RandomState(total_q + 7 * total_k + d)
    q, do = (to_dtype(rng.randn(total_q, h, d), t) for _ in range(2))
    k, v = (to_dtype(rng.randn(total_k, h_kv, d), t) for _ in range(2))
    sm_scale = 0.5 / math.sqrt(d)
    mem_dtype = np.float16 if t == "fp16" else np.float32
    slopes = alibi_slopes(rng, z, h) if alibi else None
    memory = {"Q": q.ravel().copy(), "K": k.ravel().copy(), "V": v.ravel().copy(),
              "DO": do.ravel().copy(), "CU_Q": cu_q, "CU_K": cu_k,
              "ALIBI": slopes.ravel().copy() if alibi else np.zeros(1, np.float32)}
    seeds, dropout = dropout_memory(memory, rng, z, dropout_p)
    for name, rows in (("O", total_q), ("DQ", total_q), ("DK", total_k), ("DV", total_k)):
        memory[name] = np.full(rows * h * d, np.nan, mem_dtype)
    memory["LSE"] = np.full(z * h * max_q, np.nan, np.float32)
    memory["LSE_LOG2"] = np.full(z * h * stats_stride(max_q), np.nan, np.float32)
    memory["DELTA"] = np.full(z * h * stats_stride(max_q), np.nan, np.float32)
    memory["DQ_ACC"] = np.full(z * h * max_q * d, np.nan, np.float32)
    i32 = lambda values: [np.int32(x) for x in values]  # noqa: E731
    # Packed: no batch stride; a sequence's rows start at cu_seqlens.
    q_strides, kv_strides, dkv_strides = (0, d, h * d), (0, d, h_kv * d), (0, d, h * d)
    # No upper bound: one past every sequence's keys, after the kernel adds
    # its bottom-right shift.
    upper = max_q + max_k if mask.causal_offset is None else mask.causal_offset
    lower = 0 if mask.window_offset is None else mask.window_offset
    sizes = i32((z, h, h_kv, total_q, total_k, upper, lower)) + [np.float32(softcap or 0.0)]
    packed = [("ptr", "CU_Q"), ("ptr", "CU_K")]
    q_dims = i32(q_strides + (z, h, total_q)) + [("ptr", "CU_Q")] + i32((max_q, 1))

    fwd, c = interpreter(f"attn_fwd_{t}_d{d}_{suffix}")
    fwd.run([("ptr", "Q"), ("ptr", "K"), ("ptr", "V"), ("ptr", "O"), ("ptr", "LSE"),
             np.float32(sm_scale)] + i32(q_strides + kv_strides) + sizes + packed
            + i32((max_q, 1)) + [("ptr", "ALIBI")] + dropout, fwd_grid(c, max_q, z * h),
            memory)
    pre, c = interpreter(f"attn_bwd_preprocess_{t}_d{d}")
    pre.run([("ptr", "O"), ("ptr", "DO"), ("ptr", "LSE"), ("ptr", "LSE_LOG2"), ("ptr", "DELTA"),
             ("ptr", "DQ_ACC")] + q_dims, (-(-max_q // c["BLOCK_M"]), z * h), memory)
    bwd, c = interpreter(f"attn_bwd_{t}_d{d}_{suffix}"
                         + ("_deterministic" if deterministic else ""))
    bwd.run([("ptr", "Q"), ("ptr", "K"), ("ptr", "V"), np.float32(sm_scale), ("ptr", "DO"),
             ("ptr", "DQ_ACC"), ("ptr", "DK"), ("ptr", "DV"), ("ptr", "LSE_LOG2"),
             ("ptr", "DELTA")] + i32(q_strides + kv_strides + dkv_strides) + sizes + packed
            + i32((max_q, max_k, 1)) + [("ptr", "ALIBI")] + dropout,
            (-(-max_k // c["BLOCK_N1"]), z * h), memory)
    if deterministic:
        dq_kernel, c = interpreter(f"attn_bwd_dq_{t}_d{d}_{suffix}")
        dq_kernel.run([("ptr", "DQ"), ("ptr", "Q"), ("ptr", "K"), ("ptr", "V"), ("ptr", "DO"),
                       ("ptr", "LSE_LOG2"), ("ptr", "DELTA"), np.float32(sm_scale)]
                      + i32(q_strides + kv_strides) + sizes[:-1] + packed + i32((max_q, 1)),
                      (-(-max_q // c["BLOCK_M"]), z * h), memory)
    else:
        post, c = interpreter(f"attn_bwd_postprocess_{t}_d{d}")
        post.run([("ptr", "DQ"), ("ptr", "DQ_ACC"), np.float32(sm_scale)] + q_dims,
                 (-(-max_q // c["BLOCK_M"]), z * h), memory)

    out = {name: memory[name].reshape(-1, h, d).astype(np.float64)
           for name in ("O", "DQ", "DK", "DV")}
    lse = memory["LSE"].reshape(z, h, max_q)
    for b, (lq, lk) in enumerate(lengths):
        rows_q, rows_k = slice(cu_q[b], cu_q[b + 1]), slice(cu_k[b], cu_k[b + 1])
        qf, dof = (x[rows_q].transpose(1, 0, 2)[None].astype(np.float64) for x in (q, do))
        kf, vf = (np.repeat(x[rows_k].transpose(1, 0, 2)[None].astype(np.float64), group,
                            axis=1) for x in (k, v))
        got = {name: out[name][rows_q if name in ("O", "DQ") else rows_k]
               .transpose(1, 0, 2)[None] for name in out}
        where = f"sequence {b} ({lq} queries, {lk} keys)"
        if lq == 0 or lk == 0:
            # Nothing seen: out 0, lse -inf, zero gradients.
            assert all((x == 0).all() for x in got.values()), where
            assert np.isneginf(lse[b, :, :lq]).all(), where
            continue
        shift = lk - lq
        visible = visibility(lq, lk, None if mask.causal_offset is None
                             else mask.causal_offset + shift,
                             None if mask.window_offset is None
                             else mask.window_offset + shift)
        kept = 1.0 if dropout_p is None else dropout_kept(seeds[b:b + 1], h, lq, lk, dropout_p)
        p, o_ref, lse_ref, cap_grad = attention_ref(qf, kf, vf, sm_scale, visible, softcap,
                                                    None if slopes is None else slopes[b:b + 1],
                                                    kept)
        np.testing.assert_allclose(got["O"], o_ref, atol=1e-2, rtol=1e-2, err_msg=where)
        empty = np.isneginf(lse_ref[0])
        np.testing.assert_array_equal(np.isneginf(lse[b, :, :lq]), empty, err_msg=where)
        np.testing.assert_allclose(lse[b, :, :lq][~empty], lse_ref[0][~empty], atol=1e-4,
                                   rtol=1e-4, err_msg=where)
        check_gradients(got, p, o_ref, qf, kf, vf, dof, sm_scale, cap_grad, visible, where,
                        kept)


@pytest.mark.parametrize("t, d, mask, lengths, h, h_kv", [
    ("fp16", 64, NONCAUSAL, [(70, 130), (1, 1), (200, 90), (0, 5), (64, 64)], 2, 1),
    ("bf16", 64, causal(), [(130, 70), (5, 300), (1, 1), (257, 257)], 2, 2),
    ("fp16", 128, causal(-3), [(100, 100), (37, 80), (0, 0), (150, 40)], 4, 2),
    ("fp16", 64, band(-30, 0), [(90, 90), (200, 130), (1, 50)], 2, 1),
    ("bf16", 64, NONCAUSAL, [(40, 0), (70, 70)], 2, 2),
    ("fp16", 64, band(-20), [(150, 150), (33, 33)], 2, 1)])
def test_attention_packed_sequences(t, d, mask, lengths, h, h_kv):
    run_varlen_attention(t, d, mask, lengths, h, h_kv)


def test_attention_packed_sequences_softcap():
    run_varlen_attention("fp16", 64, causal(), [(90, 120), (64, 64)], 2, 1, softcap=0.7)


# The deterministic backward: attn_bwd without dQ's atomic adds and
# attn_bwd_dq, each mask, grouped heads, unequal lengths both ways, every
# head dim (d256's dK, dV keys as rows), queries past the blocks.
@pytest.mark.parametrize("t, d, mask, n, n_kv, h, h_kv", [
    ("fp16", 64, causal(), 130, 130, 2, 2), ("bf16", 128, NONCAUSAL, 150, 100, 4, 2),
    ("fp16", 32, band(-40, 5), 200, 200, 2, 1), ("fp16", 256, causal(), 90, 140, 2, 2),
    ("bf16", 64, band(-70, 0), 140, 70, 2, 2), ("fp16", 128, causal(-3), 70, 200, 2, 1)])
def test_attention_deterministic_backward(t, d, mask, n, n_kv, h, h_kv):
    run_attention(t, d, mask, n, False, n_kv=n_kv, h=h, h_kv=h_kv, z=2, deterministic=True)


# Dropout: the kernels' masks against the reference Philox's, forward and
# backward, with each mask, grouped heads, unequal lengths, queries as rows
# (d32 to d128) and keys as rows (d256), and packed sequences.
@pytest.mark.parametrize("t, d, mask, n, n_kv, h, h_kv, dropout_p", [
    ("fp16", 64, causal(), 130, 130, 2, 2, 0.3), ("bf16", 128, NONCAUSAL, 150, 100, 4, 2, 0.5),
    ("fp16", 32, band(-40, 5), 200, 200, 2, 1, 0.1), ("fp16", 256, causal(), 90, 140, 2, 2, 0.2),
    ("bf16", 64, NONCAUSAL, 70, 200, 2, 2, 0.75)])
def test_attention_dropout(t, d, mask, n, n_kv, h, h_kv, dropout_p):
    run_attention(t, d, mask, n, False, n_kv=n_kv, h=h, h_kv=h_kv, z=2, dropout_p=dropout_p)


def test_attention_packed_sequences_deterministic():
    run_varlen_attention("bf16", 64, band(-30, 0), [(90, 120), (0, 4), (1, 1), (130, 64)], 4,
                         2, deterministic=True)


def test_attention_packed_sequences_dropout():
    run_varlen_attention("fp16", 64, causal(), [(90, 120), (1, 1), (64, 64)], 2, 1,
                         dropout_p=0.4)


# ALiBi's bias, aligned bottom-right as FlashAttention's, with each mask,
# grouped heads, unequal lengths both ways, queries as rows (d64, d128) and
# keys as rows (d256), and packed sequences of their own diagonals.
@pytest.mark.parametrize("t, d, mask, n, n_kv, h, h_kv", [
    ("fp16", 64, NONCAUSAL, 130, 130, 2, 2), ("bf16", 64, causal(), 150, 150, 4, 2),
    ("fp16", 128, NONCAUSAL, 70, 200, 2, 1), ("fp16", 64, causal(200 - 90), 90, 200, 2, 2),
    ("bf16", 128, band(-40, 3), 200, 200, 2, 2), ("fp16", 256, causal(), 100, 100, 2, 2),
    ("fp16", 32, NONCAUSAL, 200, 90, 2, 2)])
def test_attention_alibi(t, d, mask, n, n_kv, h, h_kv):
    run_attention(t, d, mask, n, False, n_kv=n_kv, h=h, h_kv=h_kv, z=2, alibi=True)


def test_attention_packed_sequences_alibi():
    run_varlen_attention("fp16", 64, causal(), [(90, 120), (64, 64), (30, 10)], 2, 1,
                         alibi=True)


# Capped scores (a small cap, so that tanh bends most scores), with each
# mask, grouped heads and unequal lengths.
@pytest.mark.parametrize("t, d, mask, n, n_kv, h, h_kv, softcap", [
    ("fp16", 64, NONCAUSAL, 130, 130, 2, 2, 0.5),
    ("bf16", 128, causal(), 150, 150, 2, 1, 1.0),
    ("fp16", 64, band(-40, 3), 200, 200, 2, 2, 0.7),
    ("bf16", 64, causal(-20), 90, 70, 4, 2, 2.0),
    ("fp16", 128, band(-300, -250), 270, 70, 2, 2, 0.5)])
def test_attention_softcap(t, d, mask, n, n_kv, h, h_kv, softcap):
    run_attention(t, d, mask, n, False, n_kv=n_kv, h=h, h_kv=h_kv, softcap=softcap)


@pytest.mark.parametrize("t, d, mask, n, n_kv, h, h_kv, heads_inner", [
    ("fp16", 64, NONCAUSAL, 70, 200, 2, 2, False),
    ("bf16", 64, causal(200 - 70), 70, 200, 2, 2, True),
    ("fp16", 128, causal(90 - 260), 260, 90, 2, 2, False),
    ("fp16", 64, NONCAUSAL, 260, 90, 2, 2, True),
    ("fp16", 64, band(150 - 100 - 30, 150 - 100), 100, 150, 2, 2, False),
    ("fp16", 64, causal(), 130, 130, 4, 2, True),
    ("bf16", 128, NONCAUSAL, 70, 150, 4, 1, False),
    ("fp16", 64, band(-40, 0), 140, 140, 8, 2, False)])
def test_attention_lengths_and_grouped_heads(t, d, mask, n, n_kv, h, h_kv, heads_inner):
    run_attention(t, d, mask, n, heads_inner, n_kv=n_kv, h=h, h_kv=h_kv)


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
