"""tile.attention's PyTorch API without a GPU: argument checking, the
layout the kernels are given, the Attention module, and the autograd wiring
run against CPU emulations of the kernels' contract: FlashAttention-2's
semantics (grouped heads, unequal lengths aligned bottom-right, windows)
against a float64 autograd reference."""

import itertools
import math
import os

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is needed for tile.attention's API")

from dropout_reference import dropout_kept  # noqa: E402
from runtime_stand_in import RuntimeStandIn  # noqa: E402
from tile import runtime  # noqa: E402
from tile.attention import (  # noqa: E402
    Attention,
    AttentionType,
    BundleError,
    flash_attn_func,
    flash_attn_kvpacked_func,
    flash_attn_qkvpacked_func,
    flash_attn_varlen_func,
    flash_attn_varlen_kvpacked_func,
    flash_attn_varlen_qkvpacked_func,
    functional,
    register_attention,
)
from tile.attention.bundle import block_width  # noqa: E402
from tile.attention.plan import PlanCache  # noqa: E402
from tile.kernels.attention import stats_stride  # noqa: E402

BUILD = os.environ.get("TILE_BUILD_DIR") or os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "build")
KERNEL_DIR = os.path.join(BUILD, "kernels")
needs_kernels = pytest.mark.skipif(
    not os.path.isfile(os.path.join(KERNEL_DIR, "attn_fwd_fp16_d64_causal.json")),
    reason="the kernels are not built (./dev.sh build)")


def qkv(shape=(2, 17, 3, 64), dtype=torch.float16, device="cpu", kv_shape=None):
    """q of `shape`, k and v of `kv_shape` (default: `shape`)."""
    shapes = (shape, kv_shape or shape, kv_shape or shape)
    return [torch.randn(s, dtype=torch.float32).to(dtype=dtype, device=device)
            for s in shapes]


# --------------------------------------------------------------------------
# Argument checking: every error names the problem
# --------------------------------------------------------------------------

@pytest.mark.parametrize("make, error, message", [
    (lambda: (qkv()[0], "k", qkv()[2]), TypeError, "k must be a torch.Tensor, not str"),
    (lambda: [t[0] for t in qkv()], ValueError, r"q must have 4 dimensions.*\(17, 3, 64\)"),
    (lambda: (qkv()[0], qkv((2, 20, 3, 64))[1], qkv()[2]), ValueError,
     r"k and v must have the same shape \(batch, seqlen_k, heads_k, head_dim\), but k is "
     r"\(2, 20, 3, 64\) and v is \(2, 17, 3, 64\)"),
    (lambda: qkv(kv_shape=(2, 17, 2, 64)), ValueError,
     r"k and v have 2 heads, which does not divide the 3 heads of q \(grouped-query "
     r"attention.*q is \(2, 17, 3, 64\) and k is \(2, 17, 2, 64\)"),
    (lambda: qkv((2, 17, 8, 64), kv_shape=(2, 17, 3, 64)), ValueError,
     "k and v have 3 heads, which does not divide the 8 heads of q"),
    (lambda: qkv(kv_shape=(2, 17, 0, 64)), ValueError, "k and v have 0 heads"),
    (lambda: qkv(kv_shape=(3, 17, 3, 64)), ValueError,
     r"q and k must have the same batch size.*q is \(2, 17, 3, 64\) and k is "
     r"\(3, 17, 3, 64\)"),
    (lambda: qkv(kv_shape=(2, 17, 3, 128)), ValueError,
     r"q and k must have the same head_dim.*\(2, 17, 3, 128\)"),
    (lambda: qkv(dtype=torch.float32), TypeError, "q is torch.float32.*float16 or "
                                                  "torch.bfloat16"),
    (lambda: qkv(dtype=torch.float64), TypeError, "torch.float64"),
    (lambda: (qkv()[0], *qkv(dtype=torch.bfloat16)[1:]), TypeError,
     "q is torch.float16 but k is torch.bfloat16"),
    (lambda: qkv((2, 17, 3, 0)), ValueError, r"q has head_dim 0 \(shape \(2, 17, 3, 0\)\)"),
    (lambda: qkv(), ValueError, "q is on cpu: Tile's attention kernels run on CUDA"),
    (lambda: qkv(device="meta"), ValueError, "q is on meta"),
    (lambda: (*qkv()[:2], qkv(device="meta")[2]), ValueError,
     "q is on cpu but v is on meta"),
])
def test_flash_attn_func_refuses_bad_inputs(make, error, message):
    with pytest.raises(error, match=message):
        flash_attn_func(*make())


@pytest.mark.parametrize("kwargs, error, message", [
    ({"softmax_scale": "0.1"}, TypeError, "softmax_scale must be a number"),
    ({"softmax_scale": float("nan")}, ValueError, "softmax_scale must be positive and finite"),
    ({"softmax_scale": -0.125}, ValueError, "softmax_scale must be positive and finite"),
    ({"softmax_scale": 0.0}, ValueError, "softmax_scale must be positive and finite"),
    ({"causal": "yes"}, TypeError, "causal must be True or False"),
    ({"return_lse": 1}, TypeError, "return_lse must be True or False"),
    ({"causal": True, "causal_offset": True}, TypeError,
     "causal_offset must be an int, not True"),
    ({"causal": True, "causal_offset": -1.0}, TypeError,
     "causal_offset must be an int, not -1.0"),
    ({"causal_offset": "2"}, TypeError, "causal_offset must be an int, not '2'"),
])
def test_flash_attn_func_refuses_bad_options(kwargs, error, message):
    with pytest.raises(error, match=message):
        flash_attn_func(*qkv(), **kwargs)


@pytest.mark.parametrize("args, kwargs, error, message", [
    # Tile's old positional order (causal first) is now dropout_p's place.
    ((True,), {}, TypeError, "dropout_p must be a number, not True"),
    ((0.1,), {"softcap": 5.0}, NotImplementedError, "dropout_p > 0 with softcap > 0"),
    ((1.5,), {}, ValueError, r"dropout_p must be in \[0, 1\), not 1.5"),
    ((), {"window_size": 128}, TypeError, "window_size must be a pair of ints"),
    ((), {"window_size": (-1.0, -1)}, TypeError, "window_size must be a pair of ints"),
    ((), {"window_size": (4, 2, 1)}, TypeError, "window_size must be a pair of ints"),
    ((), {"window_size": (True, -1)}, TypeError, "window_size must be a pair of ints"),
    ((), {"softcap": -1.0}, ValueError, "softcap must be 0 .off. or positive and finite"),
    ((), {"softcap": math.inf}, ValueError, "softcap must be 0 .off. or positive"),
    ((), {"softcap": "30"}, TypeError, "softcap must be a number"),
    ((), {"softcap": True}, TypeError, "softcap must be a number"),
    ((), {"alibi_slopes": torch.ones(4)}, ValueError,
     r"alibi_slopes must have the shape \(3,\) \(heads\) or \(2, 3\)"),
    ((), {"alibi_slopes": torch.ones(3, dtype=torch.float16)}, TypeError,
     "alibi_slopes must be float32, not torch.float16"),
    ((), {"alibi_slopes": [0.5, 0.25, 0.125]}, TypeError,
     "alibi_slopes must be a torch.Tensor or None, not list"),
    ((), {"alibi_slopes": torch.ones(3), "softcap": 30.0}, NotImplementedError,
     "ALiBi or capped scores, not both"),
    ((), {"deterministic": True, "softcap": 5.0}, NotImplementedError,
     "deterministic=True with softcap > 0"),
    ((), {"deterministic": 1}, TypeError, "deterministic must be True or False"),
    ((), {"return_attn_probs": True}, NotImplementedError,
     "does not return attention probabilities; return_lse=True"),
])
def test_flash_attn_func_refuses_what_it_does_not_have(args, kwargs, error, message):
    """FlashAttention-2's options are accepted when off and refused clearly
    when on, never ignored."""
    with pytest.raises(error, match=message):
        flash_attn_func(*qkv(), *args, **kwargs)


def test_backward_entry_checks_lse():
    q, k, v = qkv()
    lse = torch.zeros(2, 3, 16)
    with pytest.raises(ValueError, match=r"lse must be float32 of shape \(2, 3, 17\)"):
        functional._flash_attn_backward(q, q, k, v, q, lse, False, None)


def test_block_entries_check_causal_offset():
    q, k, v = qkv()
    lse = torch.zeros(2, 3, 17)
    with pytest.raises(TypeError, match="causal_offset must be an int, not False"):
        functional._flash_attn_forward(q, k, v, True, None, False)
    with pytest.raises(TypeError, match="causal_offset must be an int, not 0.5"):
        functional._flash_attn_backward(q, q, k, v, q, lse, True, None, 0.5)


@pytest.mark.parametrize("make, error, message", [
    (lambda: (qkv()[0], "kv"), TypeError, "kv must be a torch.Tensor, not str"),
    (lambda: (qkv()[0], torch.randn(2, 17, 3, 64).half()), ValueError,
     r"kv must have the shape \(batch, seqlen_k, 2, heads_k, head_dim\), but its shape "
     r"is \(2, 17, 3, 64\)"),
    (lambda: (qkv()[0], torch.randn(2, 17, 3, 3, 64).half()), ValueError,
     r"kv must have the shape .*\(2, 17, 3, 3, 64\)"),
    (lambda: (qkv()[0], torch.randn(2, 17, 2, 2, 64).half()), ValueError,
     "k and v have 2 heads, which does not divide the 3 heads of q"),
])
def test_kvpacked_refuses_bad_inputs(make, error, message):
    with pytest.raises(error, match=message):
        flash_attn_kvpacked_func(*make())


@pytest.mark.parametrize("qkv_packed, error, message", [
    (None, TypeError, "qkv must be a torch.Tensor, not NoneType"),
    (torch.randn(2, 17, 2, 3, 64).half(), ValueError,
     r"qkv must have the shape \(batch, seqlen, 3, heads, head_dim\), but its shape is "
     r"\(2, 17, 2, 3, 64\)"),
    (torch.randn(2, 17, 3, 3, 64).float(), TypeError, "q is torch.float32"),
])
def test_qkvpacked_refuses_bad_inputs(qkv_packed, error, message):
    with pytest.raises(error, match=message):
        flash_attn_qkvpacked_func(qkv_packed)


def test_kernel_mask_clamps_offsets_and_drops_bounds_that_hide_nothing():
    # Beyond [-seqlen_q, seqlen_k] a bound hides every key or none: clamping
    # changes nothing and keeps any Python int within the kernels' i32.
    mask = functional._kernel_mask
    assert mask(True, -10**20, None, 17, 30) == (True, False, -17, 0)
    assert mask(True, -5, None, 17, 30) == (True, False, -5, 0)
    assert mask(True, 28, None, 17, 30) == (True, False, 28, 0)
    # Row 0 sees every key: the upper bound hides nothing.
    assert mask(True, 29, None, 17, 30) == (False, False, 0, 0)
    assert mask(True, 10**20, None, 17, 30) == (False, False, 0, 0)
    assert mask(False, -5, None, 17, 30) == (False, False, 0, 0)
    # A lower bound runs the local kernels, with an upper bound or without
    # (seqlen_k: nothing hidden), unless the last row sees every key.
    assert mask(False, 0, -3, 17, 30) == (True, True, 30, -3)
    assert mask(True, 4, 10**20, 17, 30) == (True, True, 4, 30)
    assert mask(True, 4, -15, 17, 30) == (True, True, 4, -15)
    assert mask(True, 4, -16, 17, 30) == (True, False, 4, 0)
    assert mask(False, 0, -10**20, 17, 30) == (False, False, 0, 0)


@pytest.mark.parametrize("causal, window, offset, seqlen_q, seqlen_k, want", [
    (False, (-1, -1), 0, 10, 20, (False, 0, None)),
    (True, (-1, -1), 0, 10, 20, (True, 10, None)),        # bottom-right: shift 10
    (True, (-1, -1), -1, 10, 20, (True, 9, None)),
    (True, (-1, 5), 0, 20, 10, (True, -10, None)),        # causal sets right to 0
    (False, (-1, 5), 0, 20, 10, (True, -5, None)),
    (False, (3, -1), 0, 20, 10, (False, 0, -13)),
    (True, (3, -1), 2, 10, 10, (True, 2, -1)),
    (False, (3, 4), 0, 10, 10, (True, 4, -3)),
    (True, (-1, -1), 10**15, 10, 20, (True, 20, None)),   # clamped to seqlen_k
    (False, (10**15, -1), 0, 10, 20, (False, 0, -10)),    # clamped to -seqlen_q
])
def test_flash_attention_masks_become_top_left_bounds(causal, window, offset, seqlen_q,
                                                      seqlen_k, want):
    assert functional._flash_attn_bounds(causal, window, offset, seqlen_q, seqlen_k) == want


def test_unsupported_head_dim_lists_what_the_bundle_has(monkeypatch, tmp_path):
    # One real-format forward kernel for d64, then a d96 request: no kernel
    # is wide enough to run it padded.
    from test_attention_bundle import write_kernel
    write_kernel(tmp_path, "attn_fwd_fp16_d64_noncausal",
                 constexprs={"HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 64, "CAUSAL": False,
                             "WINDOW": False, "SOFTCAP": False, "ALIBI": False,
                             "DROPOUT": False})
    monkeypatch.setenv("TILE_KERNEL_DIR", str(tmp_path))
    q, k, v = qkv((1, 8, 2, 96))
    with pytest.raises(ValueError, match=r"head_dim 96: the bundle's attention kernels take "
                                         r"head dims \[64\] \(smaller ones padded"):
        functional._forward(q, k, v, False, 0.1)
    # A bundle without a kernel of the mask asked for names what it has.
    q, k, v = qkv((1, 8, 2, 64))
    with pytest.raises(ValueError, match=r"no attn_fwd variant for HEAD_DIM=64 CAUSAL=1 "
                                         r"WINDOW=0 SOFTCAP=0 ALIBI=0 DROPOUT=0 fp16 \(it has: "
                                         r"HEAD_DIM=64 CAUSAL=0 WINDOW=0 SOFTCAP=0 ALIBI=0 "
                                         r"DROPOUT=0 fp16"):
        functional._forward(q, k, v, True, 0.1)


@needs_kernels
@pytest.mark.parametrize("head_dim, kernel_dim", [
    (16, 32), (48, 64), (96, 96), (80, 96), (192, 192), (200, 256), (8, 32)])
def test_ragged_head_dims_run_padded(emulated, head_dim, kernel_dim):
    """A head dim without kernels of its own runs on the next wider ones,
    zero-padded (the scale stays 1/sqrt(head_dim)); 96 and 192 have kernels
    of their own (on 128's and 256's tiles, BLOCK_D): out, lse and the
    gradients against the float64 reference, of the caller's shape."""
    q, k, v = (t.requires_grad_() for t in qkv((2, 37, 4, head_dim),
                                               kv_shape=(2, 50, 2, head_dim)))
    dout = torch.randn(2, 37, 4, head_dim).half()
    out, lse = flash_attn_func(q, k, v, causal=True, return_lse=True)
    dq, dk, dv = torch.autograd.grad(out, (q, k, v), dout)
    assert out.shape == dq.shape == q.shape and dk.shape == dv.shape == k.shape
    want = reference(q, k, v, dout, True, 1 / math.sqrt(head_dim))
    assert_matches_reference((out, lse, dq, dk, dv), want, torch.float16)
    assert [spec.constexprs["HEAD_DIM"] for spec, _ in emulated.launches] == [kernel_dim] * 4


@needs_kernels
def test_head_dims_past_the_widest_kernel_are_refused(emulated):
    q, k, v = qkv((1, 8, 2, 264))
    with pytest.raises(ValueError, match=r"head_dim 264: the bundle's attention kernels take "
                                         r"head dims \[32, 64, 96, 128, 192, 256\]"):
        flash_attn_func(q, k, v)


def test_no_bundle_found_is_a_runtime_error(monkeypatch, tmp_path):
    monkeypatch.setenv("TILE_KERNEL_DIR", str(tmp_path / "nowhere"))
    with pytest.raises(RuntimeError, match="no compiled attention kernels") as error:
        functional.kernel_bundle()
    assert isinstance(error.value, BundleError)


def fake_kernel(tmp_path, params, constexprs):
    """A runtime.Kernel of the given parameters (name, type, divisibility)
    and constexprs, read by the runtime from metadata written here."""
    from test_attention_bundle import write_kernel
    write_kernel(tmp_path, "attn_fwd_k", params=params, constexprs=constexprs,
                 launch={"grid": ["1"]})
    return runtime.Bundle(tmp_path).kernels[0]


def test_kernels_too_large_for_32_bit_indexing_are_refused(tmp_path):
    spec = fake_kernel(tmp_path, [("Q", "*fp16", 16)], {"BLOCK_M": 128})
    q = torch.empty((1, 2**21, 16, 128), dtype=torch.float16, device="meta")
    with pytest.raises(ValueError, match="too large for the kernels' 32-bit indexing"):
        functional._check_index_range(q, [spec])
    functional._check_index_range(q[:, :2**19], [spec])


# --------------------------------------------------------------------------
# Layout: what the kernels receive
# --------------------------------------------------------------------------

@pytest.fixture
def fwd_spec(tmp_path):
    return fake_kernel(tmp_path, [("Q", "*fp16", 16), ("stride_z", "i32", 16),
                                  ("stride_h", "i32", 16), ("stride_n", "i32", 16)], {})


def test_flash_attention_layout_is_passed_without_copy(fwd_spec):
    q, k, v = qkv((2, 10, 4, 64))
    assert functional.kernel_strides(q) == (10 * 4 * 64, 64, 4 * 64)
    assert functional.shares_kernel_layout([q, k, v], fwd_spec)
    assert all(a is b for a, b in zip(functional.to_kernel_layout([q, k, v], fwd_spec),
                                      (q, k, v)))


def test_heads_major_view_is_passed_without_copy(fwd_spec):
    views = [t.transpose(1, 2) for t in qkv((2, 4, 10, 64))]   # (B, H, N, D) memory
    assert functional.kernel_strides(views[0]) == (4 * 10 * 64, 10 * 64, 64)
    assert functional.to_kernel_layout(views, fwd_spec)[0] is views[0]


def test_size_one_dimensions_pass_stride_zero():
    q = torch.randn(1, 1, 1, 64)[:, :, :, :]
    assert functional.kernel_strides(q) == (0, 0, 0)


@pytest.mark.parametrize("make", [
    lambda: torch.randn(2, 10, 3, 4, 64).half().unbind(2),          # packed qkv slices
    lambda: [t[..., :64] for t in qkv((2, 10, 4, 72))],              # padded rows
    lambda: [torch.randn(2 * 10 * 4 * 64 + 4).half()[4:].view(2, 10, 4, 64)] * 3,  # 8 B off
    lambda: [torch.randn(1, 10, 4, 64).half().expand(2, 10, 4, 64)] * 3,  # overlapping
    lambda: (qkv()[0], qkv()[1].transpose(1, 2).contiguous().transpose(1, 2), qkv()[2]),
])
def test_other_layouts_are_copied_contiguous(fwd_spec, make):
    tensors = list(make())
    assert not functional.shares_kernel_layout(tensors, fwd_spec)
    copies = functional.to_kernel_layout(tensors, fwd_spec)
    assert functional.shares_kernel_layout(copies, fwd_spec)
    for original, copy in zip(tensors, copies):
        assert copy.is_contiguous() and torch.equal(original, copy)


def test_packed_kv_halves_are_read_in_place(fwd_spec):
    """K and V are only read (their gradients get strides of their own): the
    halves of a packed kv tensor go in as views, which q (whose strides out
    and dq take) could not."""
    k, v = torch.randn(2, 10, 2, 4, 64).half().unbind(2)
    assert not functional.shares_kernel_layout([k, v], fwd_spec)
    assert functional.shares_kernel_layout([k, v], fwd_spec, dense=False)
    kept = functional.to_kernel_layout([k, v], fwd_spec, dense=False)
    assert kept[0] is k and kept[1] is v


@pytest.mark.parametrize("make", [
    lambda: [torch.randn(1, 10, 4, 64).half().expand(2, 10, 4, 64)] * 2,   # broadcast
    lambda: [t[..., :64] for t in qkv((2, 10, 4, 72))[:2]],               # 8-element rows
    lambda: (qkv()[1], qkv()[2].transpose(1, 2).contiguous().transpose(1, 2)),
])
def test_key_layouts_that_do_not_fit_are_copied(fwd_spec, make):
    tensors = list(make())
    assert not functional.shares_kernel_layout(tensors, fwd_spec, dense=False)
    copies = functional.to_kernel_layout(tensors, fwd_spec, dense=False)
    for original, copy in zip(tensors, copies):
        assert copy.is_contiguous() and torch.equal(original, copy)


# --------------------------------------------------------------------------
# The autograd wiring, against CPU emulations of the kernels' contract
# --------------------------------------------------------------------------

QUERY_STRIDES = ("stride_z", "stride_h", "stride_n")
KEY_STRIDES = ("stride_kz", "stride_kh", "stride_kn")
GRADIENT_STRIDES = ("stride_dkz", "stride_dkh", "stride_dkn")


def strided(tensor, values, head_dim, heads="H", length="N_CTX", strides=QUERY_STRIDES):
    """The (Z, heads, length, HEAD_DIM) tensor a kernel sees through its
    stride arguments."""
    return torch.as_strided(
        tensor, (values["Z"], values[heads], values[length], head_dim),
        tuple(values[name] for name in strides) + (1,), tensor.storage_offset())


# The multiprocessors of the emulated GPU (an H100's): what launch specs
# read as NUM_SMS.
EMULATED_SMS = 132


class EmulatedKernels(RuntimeStandIn):
    """Stands in for _launch_all: has the runtime check the arguments and
    compute the grid as for a launch, then computes what each kernel's
    docstring promises, in float32, reading and writing the tensors only
    through the pointers and strides it is given: Q, O, dO, dQ [Z, H,
    N_CTX, D] through stride_z/h/n; K, V [Z, H_KV, N_KV, D] through
    stride_kz/kh/kn, query head h reading K/V head h // (H // H_KV); dK, dV
    per query head, [Z, H, N_KV, D] through stride_dkz/dkh/dkn; key j
    visible to query i iff j <= i + causal_offset (CAUSAL) and j >= i +
    window_offset (WINDOW)."""

    def __init__(self):
        super().__init__(EMULATED_SMS)
        self.launches = []

    def names(self):
        return [spec.name for spec, _ in self.launches]

    def families(self):
        return [spec.family for spec, _ in self.launches]

    def launch(self, spec, values):
        # The runtime's checks (every parameter by name, types, alignment,
        # strides) and grid.
        grid = spec.check(values, EMULATED_SMS)
        self.launches.append((spec, dict(values)))
        z, h = values["Z"], values["H"]
        if spec.family == "attn_bwd":
            assert grid == (math.ceil(values["MAX_N_KV"] / spec.constexprs["BLOCK_N1"]),
                            z * h, 1)
        elif spec.constexprs.get("PERSISTENT"):
            # Programs an SM, taking blocks (causal: pairs of them) in turn.
            blocks = math.ceil(values["MAX_N_CTX"] / spec.constexprs["BLOCK_M"])
            units = math.ceil(blocks / 2) if spec.constexprs["CAUSAL"] else blocks
            assert grid == (min(units * z * h, spec.constexprs["PERSISTENT"] * EMULATED_SMS),
                            1, 1)
        else:
            assert grid == (math.ceil(values["MAX_N_CTX"] / spec.constexprs["BLOCK_M"]),
                            z * h, 1)
        if values["VARLEN"]:
            self.emulate_packed(spec, values)
        else:
            assert values["MAX_N_CTX"] == values["N_CTX"]
            self.emulate(spec, values)

    def emulate_packed(self, spec, values):
        """VARLEN: each sequence b emulated on its own, as a batch of one
        of its lengths: views of its rows (cu_seqlens[b] on), its LSE,
        DELTA and DQ_ACC rows copied in and out, its offsets moved to its
        bottom-right diagonal and clamped as the kernels clamp them."""
        h, width = values["H"], block_width(spec.constexprs)
        max_q = values["MAX_N_CTX"]
        cu_q = self.tensors[values["CU_SEQLENS_Q"].address].tolist()
        cu_k = (self.tensors[values["CU_SEQLENS_K"].address].tolist()
                if "CU_SEQLENS_K" in values else None)
        row_strides = {"Q": ("stride_n", cu_q), "O": ("stride_n", cu_q),
                       "DO": ("stride_n", cu_q), "DQ": ("stride_n", cu_q),
                       "K": ("stride_kn", cu_k), "V": ("stride_kn", cu_k),
                       "DK": ("stride_dkn", cu_k), "DV": ("stride_dkn", cu_k)}
        for b in range(values["Z"]):
            lq = cu_q[b + 1] - cu_q[b]
            sub = dict(values, Z=1, N_CTX=lq, MAX_N_CTX=lq, VARLEN=0)
            if cu_k is not None:
                lk = cu_k[b + 1] - cu_k[b]
                sub.update(N_KV=lk, MAX_N_KV=lk)
                for name in ("causal_offset", "window_offset"):
                    sub[name] = max(-lq, min(lk, values[name] + lk - lq))
            if "ALIBI_SLOPES" in values and spec.constexprs.get("ALIBI"):
                row = self.tensors[values["ALIBI_SLOPES"].address].view(-1, h)[b]
                self.tensors[id(row)] = row
                sub["ALIBI_SLOPES"] = functional.DevicePointer(id(row), "view")
            if "DROPOUT_SEEDS" in values and spec.constexprs.get("DROPOUT"):
                seed = self.tensors[values["DROPOUT_SEEDS"].address][b:b + 1]
                self.tensors[id(seed)] = seed
                sub["DROPOUT_SEEDS"] = functional.DevicePointer(id(seed), "view")
            for name, (stride, cu) in row_strides.items():
                if name in values:
                    t = self.tensors[values[name].address]
                    start = t.storage_offset() + cu[b] * values[stride]
                    view = t.as_strided((1,), (1,), start)
                    self.tensors[id(view)] = view
                    sub[name] = functional.DevicePointer(id(view), "view")
            copies = []
            padded, own = stats_stride(max_q), stats_stride(lq)
            for name, shape, stride in (("LSE", (h, max_q), lq),
                                        ("LSE_LOG2", (h, padded), own),
                                        ("DELTA", (h, padded), own),
                                        ("DQ_ACC", (h, max_q, width), lq)):
                if name in values:
                    rows = self.tensors[values[name].address].view(
                        values["Z"], *shape)[b, :, :lq]
                    # The sequence's rows, laid out as a batch of one.
                    scratch = rows.new_zeros((h, stride, *shape[2:]))
                    scratch[:, :lq] = rows
                    self.tensors[id(scratch)] = scratch
                    sub[name] = functional.DevicePointer(id(scratch), "scratch")
                    copies.append((rows, scratch))
            self.emulate(spec, sub)
            for rows, scratch in copies:
                rows.copy_(scratch[:, :lq])

    def emulate(self, spec, values):
        """What the kernel computes, for one batch of equal lengths."""
        z, h, n, d = values["Z"], values["H"], values["N_CTX"], spec.constexprs["HEAD_DIM"]

        def tensor(name):
            return self.tensors[values[name].address]

        def view(name):
            return strided(tensor(name), values, d)

        def rows(name):   # LSE: contiguous fp32 [Z * H, N_CTX]
            return tensor(name).view(z, h, n)

        def stats(name):   # LSE_LOG2, DELTA: fp32 [Z * H, stats_stride(N_CTX)]
            return tensor(name).view(z, h, stats_stride(values["MAX_N_CTX"]))[..., :n]

        def accumulator():   # DQ_ACC: contiguous fp32 [Z * H, N_CTX, BLOCK_D]
            return tensor("DQ_ACC").view(z, h, n, block_width(spec.constexprs))[..., :d]

        if spec.family == "attn_bwd_preprocess":
            stats("DELTA").copy_((view("O").float() * view("DO").float()).sum(-1))
            stats("LSE_LOG2").copy_(rows("LSE") * math.log2(math.e))
            accumulator().zero_()
            return
        if spec.family == "attn_bwd_postprocess":
            view("DQ").copy_(accumulator() * values["sm_scale"])
            return
        h_kv, n_kv = values["H_KV"], values["N_KV"]
        assert h % h_kv == 0, (h, h_kv)
        # The API passes offsets clamped to [-N_CTX, N_KV], so that they fit.
        for name in ("causal_offset", "window_offset"):
            assert -n <= values[name] <= n_kv, (name, values[name], n, n_kv)
        causal, window = spec.constexprs["CAUSAL"], spec.constexprs["WINDOW"]
        assert causal or not window

        def keys(name):   # K, V, expanded to one head per query head
            kv = strided(tensor(name), values, d, "H_KV", "N_KV", KEY_STRIDES).float()
            return kv.repeat_interleave(h // h_kv, dim=1)

        q, k, v = view("Q").float(), keys("K"), keys("V")
        scores = q @ k.transpose(-1, -2) * values["sm_scale"]
        cap_grad = torch.ones_like(scores)
        if spec.constexprs.get("SOFTCAP"):
            cap = values["softcap"]
            scores = cap * torch.tanh(scores / cap)
            cap_grad = 1 - (scores / cap) ** 2
        query, key = torch.arange(n)[:, None], torch.arange(n_kv)[None, :]
        if spec.constexprs.get("ALIBI"):
            slopes = tensor("ALIBI_SLOPES").view(z, h)
            scores = scores - slopes[:, :, None, None] * (query + n_kv - n - key).abs()
        hidden = torch.zeros(n, n_kv, dtype=torch.bool)
        if causal:
            hidden |= key > query + values["causal_offset"]
        if window:
            hidden |= key < query + values["window_offset"]
        scores = scores.masked_fill(hidden, -math.inf)

        def probabilities(lse):   # rows with lse -inf see no key: P = 0
            return torch.exp(scores - lse.masked_fill(torch.isneginf(lse), 0)[..., None])

        # Dropout: O = (P * kept) V, the reference Philox's masks.
        kept = torch.ones(())
        if spec.constexprs.get("DROPOUT"):
            kept = torch.from_numpy(dropout_kept(tensor("DROPOUT_SEEDS")[:z].numpy(), h, n,
                                                 n_kv, values["dropout_p"])).float()
        if spec.family == "attn_fwd":
            lse = torch.logsumexp(scores, -1)
            rows("LSE").copy_(lse)
            view("O").copy_((probabilities(lse) * kept) @ v)
            return
        p = probabilities(stats("LSE_LOG2") * math.log(2))
        do = view("DO").float()
        ds = p * ((do @ v.transpose(-1, -2)) * kept - stats("DELTA")[..., None]) * cap_grad
        if spec.family == "attn_bwd_dq":
            view("DQ").copy_(ds @ k * values["sm_scale"])
            return
        if spec.constexprs.get("DQ", True):
            accumulator().add_(ds @ k)

        def gradient(name):   # DK, DV: per query head
            return strided(tensor(name), values, d, "H", "N_KV", GRADIENT_STRIDES)
        gradient("DV").copy_((p * kept).transpose(-1, -2) @ do)
        gradient("DK").copy_(ds.transpose(-1, -2) @ q * values["sm_scale"])


@pytest.fixture
def emulated(monkeypatch):
    kernels = EmulatedKernels()
    monkeypatch.setenv("TILE_KERNEL_DIR", KERNEL_DIR)
    monkeypatch.setattr(functional, "_check_device", lambda tensor, name: None)
    monkeypatch.setattr(functional, "_device_pointer", kernels.pointer)
    monkeypatch.setattr(functional, "_launch_all", kernels.launch_all)
    monkeypatch.setattr(functional, "_stream", lambda device: 0)
    monkeypatch.setattr(runtime, "multiprocessor_count", lambda device: EMULATED_SMS)
    monkeypatch.setattr(runtime.Kernel, "fixed_launch",
                        lambda spec, sources: kernels.fixed_launch(spec, sources))
    # Plans launch through the emulator of the test that made them.
    plans = PlanCache()
    monkeypatch.setattr(functional, "_launch_plans", lambda: plans)
    kernels.plans = plans
    return kernels


def fa_visible(seqlen_q, seqlen_k, causal=False, window_size=(-1, -1), causal_offset=0):
    """FlashAttention-2's mask, from its definition: the diagonal of query i
    is key i + seqlen_k - seqlen_q (bottom-right; Tile's causal_offset moves
    it); causal sets the window's right side to 0; a side >= 0 keeps keys
    within that distance of the diagonal on that side."""
    left, right = window_size
    if causal:
        right = 0
    query = torch.arange(seqlen_q)[:, None]
    key = torch.arange(seqlen_k)[None, :]
    diagonal = query + seqlen_k - seqlen_q + causal_offset
    visible = torch.ones(seqlen_q, seqlen_k, dtype=torch.bool)
    if right >= 0:
        visible &= key <= diagonal + right
    if left >= 0:
        visible &= key >= diagonal - left
    return visible


def test_reference_mask_is_flash_attention_s():
    """The examples of FlashAttention's README (2.1: causal with seqlen_q !=
    seqlen_k is aligned to the bottom right corner)."""
    assert fa_visible(2, 5, causal=True).int().tolist() == [[1, 1, 1, 1, 0],
                                                            [1, 1, 1, 1, 1]]
    assert fa_visible(5, 2, causal=True).int().tolist() == [[0, 0], [0, 0], [0, 0],
                                                            [1, 0], [1, 1]]
    assert fa_visible(4, 4, window_size=(1, 0)).int().tolist() == [
        [1, 0, 0, 0], [1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1]]


def reference(q, k, v, dout, causal, scale, causal_offset=0, window_size=(-1, -1),
              softcap=0.0, alibi_slopes=None, kept=None):
    """(out, lse, dq, dk, dv) in float64 through autograd: K/V heads repeated
    for their query heads (autograd sums the group's gradients), the mask
    of fa_visible, scores capped to softcap * tanh(score / softcap) when
    softcap > 0, FlashAttention's ALiBi bias -slope * |i + seqlen_k -
    seqlen_q - j| added when alibi_slopes ((heads,) or (batch, heads)) are
    given, and out = (P * kept) V when kept (dropout's keep / (1 - p),
    (batch, heads, seqlen_q, seqlen_k)) is."""
    q, k, v = (t.detach().double().requires_grad_() for t in (q, k, v))
    group = q.shape[2] // k.shape[2]
    expanded_k, expanded_v = (t.repeat_interleave(group, dim=2) for t in (k, v))
    scores = torch.einsum("bnhd,bmhd->bhnm", q, expanded_k) * scale
    if softcap > 0:
        scores = softcap * torch.tanh(scores / softcap)
    if alibi_slopes is not None:
        slopes = alibi_slopes.double().expand(q.shape[0], q.shape[2])
        query, key = torch.arange(q.shape[1])[:, None], torch.arange(k.shape[1])[None, :]
        distance = (query + k.shape[1] - q.shape[1] - key).abs()
        scores = scores - slopes[:, :, None, None] * distance
    hidden = ~fa_visible(q.shape[1], k.shape[1], causal, window_size, causal_offset)
    # Rows that see no key: out 0, lse -inf.  Their scores are zeroed before
    # the softmax, so that no NaN reaches autograd, and their P set to 0.
    empty = hidden.all(-1)[:, None]
    scores = scores.masked_fill(hidden & ~empty, -math.inf).masked_fill(empty, 0)
    lse = torch.logsumexp(scores, -1).masked_fill(empty[:, 0], -math.inf)
    probs = torch.softmax(scores, -1).masked_fill(empty, 0)
    if kept is not None:
        probs = probs * kept
    out = torch.einsum("bhnm,bmhd->bnhd", probs, expanded_v)
    return (out, lse.detach(), *torch.autograd.grad(out, (q, k, v), dout.double()))


LAYOUTS = {
    "contiguous": lambda shape, dtype: qkv(shape, dtype),
    "heads major": lambda shape, dtype: [
        t.transpose(1, 2) for t in qkv((shape[0], shape[2], shape[1], shape[3]), dtype)],
    "packed qkv": lambda shape, dtype: torch.randn(
        shape[0], shape[1], 3, *shape[2:]).to(dtype).unbind(2),
}


UNIT_ROUNDOFF = {torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8}
MASKED_FAMILIES = ("attn_fwd", "attn_bwd")


def relative_error(got, want):
    return ((got.double() - want.double()).norm() / want.double().norm()).item()


def assert_matches_reference(got, want, dtype):
    """got, want: (out, lse, dq, dk, dv).  The emulation is float32; only
    the rounding of inputs and outputs to `dtype` separates it from the
    float64 reference: 4 unit roundoffs, normwise, the reference's norm
    floored at an RMS of 1e-3 (a row that sees one key has dq = 0 exactly,
    and rounding noise in float32).  lse is -inf exactly in the rows that
    see no key."""
    limit = 4 * UNIT_ROUNDOFF[dtype]
    for name, g, w in zip(("out", "lse", "dq", "dk", "dv"), got, want):
        assert g.shape == w.shape, f"{name}: shape {tuple(g.shape)} != {tuple(w.shape)}"
        if name == "lse":
            assert torch.equal(torch.isneginf(g), torch.isneginf(w)), "lse: -inf rows"
            g, w = g[torch.isfinite(w)], w[torch.isfinite(w)]
        if w.numel() == 0:
            continue
        norm = max(w.double().norm().item(), 1e-3 * math.sqrt(w.numel()))
        error = (g.double() - w.double()).norm().item() / norm
        assert error <= limit, f"{name}: relative error {error:.2e} > {limit:.2e}"


def masks_launched(emulated):
    """(CAUSAL, WINDOW) of each attn_fwd and attn_bwd launched."""
    return [(spec.constexprs["CAUSAL"], spec.constexprs["WINDOW"])
            for spec, _ in emulated.launches if spec.family in MASKED_FAMILIES]


@needs_kernels
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("dtype, head_dim", [(torch.float16, 64), (torch.bfloat16, 128)])
def test_autograd_wiring_against_emulated_kernels(emulated, layout, causal, dtype, head_dim):
    shape = (2, 37, 3, head_dim)
    q, k, v = (t.requires_grad_() for t in LAYOUTS[layout](shape, dtype))
    dout = torch.randn(shape).to(dtype).transpose(0, 1).contiguous().transpose(0, 1)
    out, lse = flash_attn_func(q, k, v, causal=causal, softmax_scale=0.2, return_lse=True)
    dq, dk, dv = torch.autograd.grad(out, (q, k, v), dout)
    assert out.shape == shape and lse.shape == (2, 3, 37) and lse.dtype == torch.float32
    assert not lse.requires_grad
    assert_matches_reference((out, lse, dq, dk, dv), reference(q, k, v, dout, causal, 0.2),
                             dtype)
    assert emulated.families() == [
        "attn_fwd", "attn_bwd_preprocess", "attn_bwd", "attn_bwd_postprocess"]


@needs_kernels
def test_more_programs_than_a_grid_holds_launch_in_parts(emulated):
    """batch x heads past a grid's 65535 rows: each kernel launched on
    parts of the batch (views at the parts' offsets), each within it."""
    shape = (21846, 5, 3, 32)       # 65538 (batch, head) pairs
    q, k, v = (t.requires_grad_() for t in qkv(shape))
    dout = torch.randn(shape).half()
    out, lse = flash_attn_func(q, k, v, causal=True, softmax_scale=0.2, return_lse=True)
    dq, dk, dv = torch.autograd.grad(out, (q, k, v), dout)
    assert [values["Z"] for spec, values in emulated.launches
            if spec.family == "attn_fwd"] == [21844, 2]
    assert all(values["Z"] * values["H"] <= 65535 for _, values in emulated.launches)
    assert_matches_reference((out, lse, dq, dk, dv), reference(q, k, v, dout, True, 0.2),
                             torch.float16)


@needs_kernels
@pytest.mark.parametrize("causal_offset", [-1, -20, 3, -37, 10**12])
def test_causal_offset_reaches_the_kernels(emulated, causal_offset):
    """The offset goes to both kernels (clamped to +-seqlen); rows that see no
    key come back with out 0, lse -inf and zero dq."""
    shape = (1, 37, 2, 64)
    q, k, v = (t.requires_grad_() for t in qkv(shape))
    dout = torch.randn(shape).half()
    out, lse = flash_attn_func(q, k, v, causal=True, softmax_scale=0.2, return_lse=True,
                               causal_offset=causal_offset)
    dq, dk, dv = torch.autograd.grad(out, (q, k, v), dout)
    empty = max(0, min(37, -causal_offset))       # rows i with i + offset < 0
    assert torch.isneginf(lse[:, :, :empty]).all() and torch.isfinite(lse[:, :, empty:]).all()
    assert (out[:, :empty] == 0).all() and (dq[:, :empty] == 0).all()
    assert_matches_reference((out, lse, dq, dk, dv),
                             reference(q, k, v, dout, True, 0.2, causal_offset), torch.float16)


# FlashAttention-2's semantics: (q shape, k/v shape, causal, window_size,
# causal_offset) and the kernels' mask, (CAUSAL, WINDOW), they must run.
NONCAUSAL, CAUSAL, LOCAL = (False, False), (True, False), (True, True)
FA2_CASES = {
    "gqa 2": ((2, 37, 4, 64), (2, 37, 2, 64), False, (-1, -1), 0, NONCAUSAL),
    "gqa 2 causal": ((2, 37, 4, 64), (2, 37, 2, 64), True, (-1, -1), 0, CAUSAL),
    "gqa 8 causal": ((1, 37, 16, 64), (1, 37, 2, 64), True, (-1, -1), 0, CAUSAL),
    "gqa 8 window": ((1, 41, 8, 64), (1, 41, 1, 64), False, (6, 6), 0, LOCAL),
    "mqa": ((2, 29, 8, 64), (2, 29, 1, 64), False, (-1, -1), 0, NONCAUSAL),
    "mqa causal": ((2, 29, 8, 64), (2, 29, 1, 64), True, (-1, -1), 0, CAUSAL),
    "nq > nk": ((2, 50, 2, 64), (2, 23, 2, 64), False, (-1, -1), 0, NONCAUSAL),
    # Bottom-right: queries 0..26 see no key.
    "nq > nk causal": ((2, 50, 2, 64), (2, 23, 2, 64), True, (-1, -1), 0, CAUSAL),
    "nq < nk": ((2, 23, 2, 64), (2, 50, 2, 64), False, (-1, -1), 0, NONCAUSAL),
    "nq < nk causal": ((2, 23, 2, 64), (2, 50, 2, 64), True, (-1, -1), 0, CAUSAL),
    "nq < nk causal mqa": ((1, 23, 4, 64), (1, 70, 1, 64), True, (-1, -1), 0, CAUSAL),
    # One query, the last: it sees every key, so no mask is needed.
    "decode causal": ((2, 1, 4, 64), (2, 40, 2, 64), True, (-1, -1), 0, NONCAUSAL),
    "causal offset nq < nk": ((1, 30, 2, 64), (1, 50, 2, 64), True, (-1, -1), -25, CAUSAL),
    "causal offset nq > nk": ((1, 50, 2, 64), (1, 30, 2, 64), True, (-1, -1), 7, CAUSAL),
    "window left": ((1, 45, 2, 64), (1, 45, 2, 64), False, (7, -1), 0, LOCAL),
    "window right": ((1, 45, 2, 64), (1, 45, 2, 64), False, (-1, 5), 0, CAUSAL),
    "window both": ((1, 45, 2, 64), (1, 45, 2, 64), False, (6, 3), 0, LOCAL),
    "window causal": ((1, 45, 2, 64), (1, 45, 2, 64), True, (9, -1), 0, LOCAL),
    # causal sets the right side to 0, as in FlashAttention.
    "window causal right ignored": ((1, 45, 2, 64), (1, 45, 2, 64), True, (9, 4), 0, LOCAL),
    "window nq > nk": ((1, 60, 4, 64), (1, 25, 2, 64), True, (4, -1), 0, LOCAL),
    "window nq < nk": ((1, 20, 2, 64), (1, 64, 2, 64), False, (5, 2), 0, LOCAL),
    # Keys j >= i + 5: the last five rows see none.
    "window hides the last rows": ((1, 40, 2, 64), (1, 40, 2, 64), False, (5, -1), 10,
                                   LOCAL),
    # One key a row, i - 1: row 0 sees none.
    "window of one key": ((1, 30, 2, 64), (1, 30, 2, 64), True, (0, -1), -1, LOCAL),
    # Wider than the keys: the window hides nothing, causal does.
    "window wider than the keys": ((1, 30, 2, 64), (1, 30, 2, 64), True, (100, -1), 0,
                                   CAUSAL),
    "window everything hidden": ((1, 30, 2, 64), (1, 20, 2, 64), False, (2, 3), 40, LOCAL),
    "bf16 d128 gqa window": ((2, 33, 6, 128), (2, 47, 3, 128), True, (10, -1), 0, LOCAL),
}


@needs_kernels
@pytest.mark.parametrize("case", FA2_CASES)
def test_flash_attention_2_semantics(emulated, case):
    """Grouped heads, unequal lengths aligned bottom-right, and windows:
    out, lse and the gradients (dk, dv summed over each group) against the
    float64 reference, with the kernels of the mask each case needs."""
    shape, kv_shape, causal, window, offset, mask = FA2_CASES[case]
    dtype = torch.bfloat16 if "bf16" in case else torch.float16
    q, k, v = (t.requires_grad_() for t in qkv(shape, dtype, kv_shape=kv_shape))
    dout = torch.randn(shape).to(dtype)
    out, lse = flash_attn_func(q, k, v, 0.0, 0.2, causal, window, return_lse=True,
                               causal_offset=offset)
    dq, dk, dv = torch.autograd.grad(out, (q, k, v), dout)
    assert dk.shape == dv.shape == kv_shape
    want = reference(q, k, v, dout, causal, 0.2, offset, window)
    assert_matches_reference((out, lse, dq, dk, dv), want, dtype)
    empty = ~fa_visible(shape[1], kv_shape[1], causal, window, offset).any(-1)
    assert (out[:, empty] == 0).all() and (dq[:, empty] == 0).all()
    assert masks_launched(emulated) == [mask, mask]


# softcap: (q shape, k/v shape, causal, window_size, softcap) and the
# kernels' mask; a small cap, so that tanh bends most scores.
SOFTCAP_CASES = {
    "full": ((2, 37, 2, 64), (2, 37, 2, 64), False, (-1, -1), 0.5, NONCAUSAL),
    "causal gqa": ((1, 41, 4, 64), (1, 41, 2, 64), True, (-1, -1), 1.0, CAUSAL),
    "window nq < nk": ((1, 20, 2, 128), (1, 64, 2, 128), False, (5, 2), 0.7, LOCAL),
    "gemma-like": ((1, 33, 4, 64), (1, 33, 2, 64), True, (8, -1), 50.0, LOCAL),
}


@needs_kernels
@pytest.mark.parametrize("case", SOFTCAP_CASES)
def test_softcap_caps_the_scores(emulated, case):
    """softcap > 0: scores capped to softcap * tanh(score / softcap), out,
    lse and the gradients against the float64 reference, with the SOFTCAP
    kernels of the case's mask."""
    shape, kv_shape, causal, window, softcap, mask = SOFTCAP_CASES[case]
    dtype = torch.bfloat16 if shape[-1] == 128 else torch.float16
    q, k, v = (t.requires_grad_() for t in qkv(shape, dtype, kv_shape=kv_shape))
    dout = torch.randn(shape).to(dtype)
    out, lse = flash_attn_func(q, k, v, 0.0, 0.2, causal, window, softcap, return_lse=True)
    dq, dk, dv = torch.autograd.grad(out, (q, k, v), dout)
    want = reference(q, k, v, dout, causal, 0.2, 0, window, softcap)
    assert_matches_reference((out, lse, dq, dk, dv), want, dtype)
    assert masks_launched(emulated) == [mask, mask]
    assert [spec.constexprs["SOFTCAP"] for spec, _ in emulated.launches
            if spec.family in MASKED_FAMILIES] == [True, True]
    # The cap changes the result: without it, another answer.
    uncapped = reference(q, k, v, dout, causal, 0.2, 0, window)
    assert relative_error(out, uncapped[0]) > 1e-2 or softcap >= 50


# ALiBi: (q shape, k/v shape, causal, window_size, slopes' shape) and the
# kernels' mask.
ALIBI_CASES = {
    "full, per head": ((2, 37, 2, 64), (2, 37, 2, 64), False, (-1, -1), (2,), NONCAUSAL),
    "causal gqa, per batch and head": ((2, 41, 4, 64), (2, 41, 2, 64), True, (-1, -1),
                                       (2, 4), CAUSAL),
    "nq < nk": ((1, 20, 2, 128), (1, 64, 2, 128), False, (-1, -1), (2,), NONCAUSAL),
    "window nq > nk": ((1, 50, 2, 64), (1, 30, 1, 64), False, (6, 3), (1, 2), LOCAL),
}


@needs_kernels
@pytest.mark.parametrize("case", ALIBI_CASES)
def test_alibi_biases_the_scores(emulated, case):
    """alibi_slopes: -slope * |i + seqlen_k - seqlen_q - j| added to the
    scores; out, lse and the gradients against the float64 reference, with
    the ALIBI kernels of the case's mask; the slopes reach the kernels as
    (batch, heads)."""
    shape, kv_shape, causal, window, slopes_shape, mask = ALIBI_CASES[case]
    dtype = torch.bfloat16 if shape[-1] == 128 else torch.float16
    q, k, v = (t.requires_grad_() for t in qkv(shape, dtype, kv_shape=kv_shape))
    dout = torch.randn(shape).to(dtype)
    slopes = torch.rand(slopes_shape) * 0.5 + 0.05
    out, lse = flash_attn_func(q, k, v, 0.0, 0.2, causal, window, alibi_slopes=slopes,
                               return_lse=True)
    dq, dk, dv = torch.autograd.grad(out, (q, k, v), dout)
    want = reference(q, k, v, dout, causal, 0.2, 0, window, alibi_slopes=slopes)
    assert_matches_reference((out, lse, dq, dk, dv), want, dtype)
    assert masks_launched(emulated) == [mask, mask]
    assert [spec.constexprs["ALIBI"] for spec, _ in emulated.launches
            if spec.family in MASKED_FAMILIES] == [True, True]
    # The bias changes the result: without it, another answer.
    unbiased = reference(q, k, v, dout, causal, 0.2, 0, window)
    assert relative_error(out, unbiased[0]) > 1e-2


# Dropout: (q shape, k/v shape, causal, window_size, dropout_p) and the
# kernels' mask.
DROPOUT_CASES = {
    "full": ((2, 37, 2, 64), (2, 37, 2, 64), False, (-1, -1), 0.3, NONCAUSAL),
    "causal gqa": ((2, 41, 4, 64), (2, 41, 2, 64), True, (-1, -1), 0.1, CAUSAL),
    "nq < nk": ((1, 20, 2, 128), (1, 64, 2, 128), False, (-1, -1), 0.5, NONCAUSAL),
    "window nq > nk": ((1, 50, 2, 64), (1, 30, 1, 64), False, (6, 3), 0.2, LOCAL),
}


def seeds_after(seed, batch):
    """The dropout seeds a call made right after torch.manual_seed(seed)
    draws, one a sequence (functional._dropout_seeds on the CPU)."""
    torch.manual_seed(seed)
    return functional._dropout_seeds(0.5, batch, torch.device("cpu"))[1]


def seeded_kept(seed, batch, heads, seqlen_q, seqlen_k, dropout_p):
    """dropout's keep / (1 - p) for a call made right after
    torch.manual_seed(seed), through the reference Philox
    (dropout_reference.dropout_kept)."""
    return torch.from_numpy(dropout_kept(seeds_after(seed, batch).numpy(), heads, seqlen_q,
                                         seqlen_k, dropout_p))


@needs_kernels
@pytest.mark.parametrize("case", DROPOUT_CASES)
def test_dropout_drops_by_the_seeded_masks(emulated, case):
    """dropout_p: out = (P * keep / (1 - p)) V, lse that of P, with the
    masks the seeds PyTorch's generator gives draw (torch.manual_seed
    repeats them); out, lse and the gradients against the float64
    reference with those masks, on the DROPOUT kernels of the case's
    mask."""
    shape, kv_shape, causal, window, dropout_p, mask = DROPOUT_CASES[case]
    dtype = torch.bfloat16 if shape[-1] == 128 else torch.float16
    q, k, v = (t.requires_grad_() for t in qkv(shape, dtype, kv_shape=kv_shape))
    dout = torch.randn(shape).to(dtype)
    torch.manual_seed(1234)
    out, lse = flash_attn_func(q, k, v, dropout_p, 0.2, causal, window, return_lse=True)
    dq, dk, dv = torch.autograd.grad(out, (q, k, v), dout)
    kept = seeded_kept(1234, shape[0], shape[2], shape[1], kv_shape[1], dropout_p)
    want = reference(q, k, v, dout, causal, 0.2, 0, window, kept=kept)
    assert_matches_reference((out, lse, dq, dk, dv), want, dtype)
    assert masks_launched(emulated) == [mask, mask]
    assert [(spec.constexprs["DROPOUT"], values["dropout_p"]) for spec, values
            in emulated.launches if spec.family in MASKED_FAMILIES] == [(True, dropout_p)] * 2
    # About dropout_p of the probabilities dropped, and a result of its own.
    assert abs((kept == 0).double().mean().item() - dropout_p) < 0.05
    assert relative_error(out, reference(q, k, v, dout, causal, 0.2, 0, window)[0]) > 1e-2


@needs_kernels
def test_dropout_masks_repeat_with_the_seed_and_change_between_calls(emulated):
    q, k, v = qkv((2, 30, 2, 64))
    torch.manual_seed(5)
    first, second = (flash_attn_func(q, k, v, 0.25) for _ in range(2))
    torch.manual_seed(5)
    again = flash_attn_func(q, k, v, 0.25)
    assert torch.equal(first, again) and not torch.equal(first, second)
    # Evaluation: dropout_p=0.0 runs the kernels without dropout.
    flash_attn_func(q, k, v, 0.0)
    assert [spec.constexprs["DROPOUT"] for spec, _ in emulated.launches] == [True] * 3 + [False]


@needs_kernels
def test_varlen_dropout_masks_each_sequence_by_its_seed(emulated):
    """Packed sequences: sequence b's mask is drawn under the b-th seed, as
    flash_attn_func draws a batch's b-th sequence's."""
    lens_q, lens_k = VARLEN_LENGTHS
    q, k, v, dout, cu_q, cu_k = grouped_varlen_inputs()
    torch.manual_seed(99)
    out, lse = flash_attn_varlen_func(q, k, v, cu_q, cu_k, max(lens_q), max(lens_k), 0.4,
                                      0.2, True, return_lse=True)
    dq, dk, dv = torch.autograd.grad(out, (q, k, v), dout)
    seeds = seeds_after(99, len(lens_q))
    for b in range(len(lens_q)):
        rq, rk = slice(cu_q[b], cu_q[b + 1]), slice(cu_k[b], cu_k[b + 1])
        kept = torch.from_numpy(dropout_kept(seeds[b:b + 1].numpy(), 4, lens_q[b], lens_k[b],
                                             0.4))
        want = reference(q[rq][None], k[rk][None], v[rk][None], dout[rq][None], True, 0.2,
                         kept=kept)
        got = (out[rq][None], lse[:, rq][None], dq[rq][None], dk[rk][None], dv[rk][None])
        assert_matches_reference(got, want, torch.float16)


@needs_kernels
@pytest.mark.parametrize("case", ["full", "causal gqa", "nq < nk", "window nq > nk"])
def test_deterministic_backward_sums_dq_without_atomics(emulated, case):
    """deterministic=True: attn_bwd without dQ's atomic adds, then
    attn_bwd_dq in place of the postprocess; the gradients against the
    float64 reference, each mask."""
    shape, kv_shape, causal, window, _, mask = DROPOUT_CASES[case]
    dtype = torch.bfloat16 if shape[-1] == 128 else torch.float16
    q, k, v = (t.requires_grad_() for t in qkv(shape, dtype, kv_shape=kv_shape))
    dout = torch.randn(shape).to(dtype)
    out, lse = flash_attn_func(q, k, v, 0.0, 0.2, causal, window, deterministic=True,
                               return_lse=True)
    dq, dk, dv = torch.autograd.grad(out, (q, k, v), dout)
    want = reference(q, k, v, dout, causal, 0.2, 0, window)
    assert_matches_reference((out, lse, dq, dk, dv), want, dtype)
    assert emulated.families() == ["attn_fwd", "attn_bwd_preprocess", "attn_bwd",
                                   "attn_bwd_dq"]
    assert masks_launched(emulated) == [mask, mask]
    bwd, dq_kernel = (spec for spec, _ in emulated.launches[2:])
    assert bwd.constexprs["DQ"] is False and bwd.name.endswith("_deterministic")
    assert (dq_kernel.constexprs["CAUSAL"], dq_kernel.constexprs["WINDOW"]) == \
        (bwd.constexprs["CAUSAL"], bwd.constexprs["WINDOW"])


@needs_kernels
def test_varlen_deterministic_backward(emulated):
    lens_q, lens_k = VARLEN_LENGTHS
    q, k, v, dout, cu_q, cu_k = grouped_varlen_inputs()
    out = flash_attn_varlen_func(q, k, v, cu_q, cu_k, max(lens_q), max(lens_k), 0.0, 0.2, True,
                                 (7, 0), deterministic=True)
    dq, dk, dv = torch.autograd.grad(out, (q, k, v), dout)
    assert emulated.families()[-1] == "attn_bwd_dq"
    for b in range(len(lens_q)):
        rq, rk = slice(cu_q[b], cu_q[b + 1]), slice(cu_k[b], cu_k[b + 1])
        want = reference(q[rq][None], k[rk][None], v[rk][None], dout[rq][None], True, 0.2,
                         window_size=(7, 0))
        got = (out[rq][None], want[1], dq[rq][None], dk[rk][None], dv[rk][None])
        assert_matches_reference(got, want, torch.float16)


@needs_kernels
def test_grouped_heads_sum_the_gradients_of_their_group(emulated):
    """With K/V repeated for each query head, flash_attn_func gives the
    same out, and dk, dv are the sums of the repeated heads' gradients."""
    q, k, v = qkv((2, 33, 6, 64), kv_shape=(2, 40, 2, 64))
    dout = torch.randn(2, 33, 6, 64).half()
    grouped = [t.clone().requires_grad_() for t in (q, k, v)]
    out = flash_attn_func(*grouped, causal=True, window_size=(8, -1))
    grads = torch.autograd.grad(out, grouped, dout)
    repeated = [q.clone().requires_grad_(),
                *(t.repeat_interleave(3, dim=2).requires_grad_() for t in (k, v))]
    want = flash_attn_func(*repeated, causal=True, window_size=(8, -1))
    want_grads = torch.autograd.grad(want, repeated, dout)
    assert torch.equal(out, want) and torch.equal(grads[0], want_grads[0])
    for got, each_head in zip(grads[1:], want_grads[1:]):
        summed = each_head.view(2, 40, 2, 3, 64).float().sum(3)
        assert torch.allclose(got.float(), summed, rtol=2**-10, atol=1e-3)
    # Again, through the plans the first grouped call made: the same sums.
    whole_paths = emulated.whole_paths
    again = [t.clone().requires_grad_() for t in (q, k, v)]
    out = flash_attn_func(*again, causal=True, window_size=(8, -1))
    assert all(torch.equal(got, want) for got, want in zip(
        (out, *torch.autograd.grad(out, again, dout)), (want, *grads)))
    assert emulated.whole_paths == whole_paths


@needs_kernels
def test_packed_functions_read_k_and_v_in_place(emulated):
    """kv and qkv packed as FlashAttention-2 packs them: k and v go to the
    kernels as views of the packed tensor (their addresses are its own),
    and the gradient comes back to it as one tensor."""
    q = torch.randn(2, 31, 4, 64).half().requires_grad_()
    kv = torch.randn(2, 45, 2, 2, 64).half().requires_grad_()
    dout = torch.randn(2, 31, 4, 64).half()
    out, lse = flash_attn_kvpacked_func(q, kv, 0.0, 0.2, True, (5, -1), return_lse=True)
    dq, dkv = torch.autograd.grad(out, (q, kv), dout)
    forward = emulated.launches[0][1]
    element = kv.element_size()
    assert forward["K"].address == kv.data_ptr()
    assert forward["V"].address == kv.data_ptr() + 2 * 64 * element
    assert forward["Q"].address == q.data_ptr()
    k, v = kv.unbind(2)
    want = reference(q, k, v, dout, True, 0.2, 0, (5, -1))
    assert dkv.shape == kv.shape
    assert_matches_reference((out, lse, dq, *dkv.unbind(2)), want, torch.float16)

    emulated.launches.clear()
    qkv_packed = torch.randn(2, 31, 3, 4, 64).half().requires_grad_()
    out, lse = flash_attn_qkvpacked_func(qkv_packed, softmax_scale=0.2, causal=True,
                                         return_lse=True)
    (dqkv,) = torch.autograd.grad(out, qkv_packed, dout)
    forward = emulated.launches[0][1]
    # q is copied (out takes q's strides), k and v are read in place.
    assert forward["Q"].address != qkv_packed.data_ptr()
    assert forward["K"].address == qkv_packed.data_ptr() + 4 * 64 * element
    assert forward["V"].address == qkv_packed.data_ptr() + 2 * 4 * 64 * element
    want = reference(*qkv_packed.unbind(2), dout, True, 0.2)
    assert dqkv.shape == qkv_packed.shape
    assert_matches_reference((out, lse, *dqkv.unbind(2)), want, torch.float16)


@needs_kernels
def test_block_entries_keep_top_left_offsets(emulated):
    """_flash_attn_forward / _backward (ring attention's blocks) take the
    offset as it is, whatever the lengths: query i sees key j iff j <= i +
    causal_offset, FlashAttention's causal_offset - (seqlen_k - seqlen_q)."""
    q, k, v = qkv((1, 30, 4, 64), kv_shape=(1, 50, 2, 64))
    dout = torch.randn(1, 30, 4, 64).half()
    out, lse = functional._flash_attn_forward(q, k, v, True, 0.2, 3)
    dq, dk, dv = functional._flash_attn_backward(dout, q, k, v, out, lse, True, 0.2, 3)
    want = reference(q, k, v, dout, True, 0.2, 3 - 20)
    assert_matches_reference((out, lse, dq, dk, dv), want, torch.float16)


@needs_kernels
def test_no_keys_or_no_queries_give_zeros_without_launches(emulated):
    q, k, v = (t.requires_grad_() for t in qkv((2, 9, 4, 64), kv_shape=(2, 0, 2, 64)))
    out, lse = flash_attn_func(q, k, v, return_lse=True)
    assert (out == 0).all() and torch.isneginf(lse).all() and lse.shape == (2, 4, 9)
    dq, dk, dv = torch.autograd.grad(out, (q, k, v), torch.ones_like(out))
    assert (dq == 0).all() and dk.shape == dv.shape == (2, 0, 2, 64)
    q, k, v = (t.requires_grad_() for t in qkv((2, 0, 4, 64), kv_shape=(2, 9, 2, 64)))
    out = flash_attn_func(q, k, v, causal=True)
    assert out.shape == (2, 0, 4, 64)
    dq, dk, dv = torch.autograd.grad(out, (q, k, v), torch.ones_like(out))
    assert (dk == 0).all() and (dv == 0).all() and dk.shape == (2, 9, 2, 64)
    assert emulated.launches == []


@needs_kernels
def test_flash_attention_2_calls_work_unchanged(emulated):
    """FlashAttention-2's positional order and its options at their "off"
    values, causal's window included, give what Tile's keywords give."""
    q, k, v = qkv()
    causal = flash_attn_func(q, k, v, causal=True, softmax_scale=0.2)
    assert torch.equal(flash_attn_func(q, k, v, 0.0, 0.2, True), causal)
    assert torch.equal(flash_attn_func(q, k, v, 0.0, 0.2, True, (-1, 0), 0.0, None, False,
                                       False), causal)
    assert torch.equal(flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=0.2,
                                       causal=True, window_size=(-1, -1)), causal)
    # A window with no left side and right side 0 is the causal mask.
    assert torch.equal(flash_attn_func(q, k, v, 0.0, 0.2, False, (-1, 0)), causal)
    full = flash_attn_func(q, k, v)
    assert torch.equal(flash_attn_func(q, k, v, 0.0), full)
    assert torch.equal(flash_attn_func(q, k, v, 0, None, False, [-1, -1]), full)


@needs_kernels
def test_causal_offset_is_ignored_without_causal(emulated):
    q, k, v = qkv((1, 20, 2, 64))
    plain = flash_attn_func(q, k, v)
    assert torch.equal(flash_attn_func(q, k, v, causal_offset=-5), plain)


@needs_kernels
def test_no_grad_runs_the_forward_only(emulated):
    q, k, v = (t.requires_grad_() for t in qkv())
    with torch.no_grad():
        out = flash_attn_func(q, k, v)
    assert not out.requires_grad
    assert emulated.families() == ["attn_fwd"]


@needs_kernels
def test_inputs_without_grad_give_what_the_autograd_path_gives(emulated):
    q, k, v = qkv()
    out, lse = flash_attn_func(q, k, v, causal=True, return_lse=True)
    assert not out.requires_grad and not lse.requires_grad
    tracked = [t.clone().requires_grad_() for t in (q, k, v)]
    want_out, want_lse = flash_attn_func(*tracked, causal=True, return_lse=True)
    assert want_out.requires_grad
    assert torch.equal(out, want_out.detach()) and torch.equal(lse, want_lse)
    assert torch.equal(flash_attn_func(q, k, v, causal=True), out)


@needs_kernels
def test_repeated_calls_replay_the_first_calls_launches(emulated):
    """The second and later calls of a shape launch through the plans the
    first made (no whole path): fresh tensors each time, each call's
    results against the float64 reference."""
    shape = (2, 37, 3, 64)
    for _ in range(3):
        q, k, v = (t.requires_grad_() for t in qkv(shape))
        dout = torch.randn(shape).half()
        out, lse = flash_attn_func(q, k, v, causal=True, softmax_scale=0.2, return_lse=True)
        dq, dk, dv = torch.autograd.grad(out, (q, k, v), dout)
        assert_matches_reference((out, lse, dq, dk, dv), reference(q, k, v, dout, True, 0.2),
                                 torch.float16)
    assert emulated.whole_paths == 2 and len(emulated.plans) == 2
    assert emulated.families() == [
        "attn_fwd", "attn_bwd_preprocess", "attn_bwd", "attn_bwd_postprocess"] * 3


@needs_kernels
def test_plans_are_kept_apart_by_what_decides_the_launches(emulated):
    """A mask, scale, length or layout of its own takes the whole path once
    and gets a plan of its own, which gives what the whole path gave."""
    q, k, v = qkv()
    shorter = dict(zip("qkv", qkv((2, 11, 3, 64))))
    calls = [dict(causal=True), dict(causal=False), dict(softmax_scale=0.5),
             dict(window_size=(4, 2)), dict(causal=True, causal_offset=-3),
             dict(softcap=3.0), shorter,
             dict(q=q.transpose(1, 2).contiguous().transpose(1, 2))]
    first = []
    for kwargs in calls:
        tensors = dict(q=q, k=k, v=v)
        tensors.update((name, kwargs.pop(name)) for name in list(kwargs) if name in tensors)
        kwargs.update(tensors)
        first.append(flash_attn_func(return_lse=True, **kwargs))
    assert emulated.whole_paths == len(calls) == len(emulated.plans)
    for kwargs, (out, lse) in zip(calls, first):
        got_out, got_lse = flash_attn_func(return_lse=True, **kwargs)
        assert torch.equal(got_out, out) and torch.equal(got_lse, lse)
    assert emulated.whole_paths == len(calls)


@needs_kernels
def test_inputs_a_plan_cannot_take_go_the_whole_way(emulated):
    """A q misaligned for the kernels (the whole path copies it), and one
    tensor given as q, k and v (whose pointers no plan can tell apart): each
    call right, the second through the whole path again."""
    q, k, v = qkv()
    want = flash_attn_func(q, k, v, causal=True)
    storage = torch.empty(q.numel() + 1, dtype=q.dtype)
    misaligned = storage[1:].view(q.shape).copy_(q)
    assert misaligned.stride() == q.stride() and misaligned.data_ptr() % 16
    assert torch.equal(flash_attn_func(misaligned, k, v, causal=True), want)
    assert emulated.whole_paths == 2 and len(emulated.plans) == 1
    for _ in range(2):
        got = flash_attn_func(q, q, q)
        assert torch.equal(got, flash_attn_func(q, q.clone(), q.clone()))
    assert len(emulated.plans) == 2   # the second call's, with q apart


def test_plan_cache_starts_over_past_its_bound(monkeypatch):
    from tile.attention import plan
    monkeypatch.setattr(plan, "MAX_PLANS", 2)
    cache = plan.PlanCache()
    monkeypatch.setattr(plan, "LaunchPlan", lambda inputs, made, launches, device: launches)
    for key in range(5):
        cache.record(key, (), (), key, 0)
        assert cache.get(key) == key
    assert len(cache) == 1


@needs_kernels
def test_empty_sequence_launches_nothing(emulated):
    out, lse = functional._flash_attn_forward(*qkv((2, 0, 3, 64)), False, None)
    assert out.shape == (2, 0, 3, 64) and lse.shape == (2, 3, 0)
    assert emulated.launches == []


# --------------------------------------------------------------------------
# The Attention module
# --------------------------------------------------------------------------

def test_attention_type_parsing():
    assert AttentionType.parse("FLASH") is AttentionType.FLASH
    assert AttentionType.parse(AttentionType.RING) is AttentionType.RING
    with pytest.raises(ValueError, match="unknown attention type 'fast'.*sdpa, flash"):
        AttentionType.parse("fast")


@pytest.mark.parametrize("kind", ["ring", "striped", "step"])
def test_sequence_parallel_types_need_torch_distributed(kind):
    # Implemented in ring.py (tested in test_ring_attention.py).
    layer = Attention(64, 2, attention_type=kind)
    with pytest.raises(RuntimeError, match=f"{kind} attention needs torch.distributed"):
        layer(torch.randn(1, 4, 64))


@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_module_matches_hand_written_attention(causal):
    torch.manual_seed(0)
    layer = Attention(96, 3, causal=causal, attention_type="sdpa")
    x = torch.randn(2, 11, 96)
    q, k, v = layer.qkv(x).view(2, 11, 3, 3, 32).unbind(2)
    out, _, _, _, _ = reference(q, k, v, torch.zeros(2, 11, 3, 32), causal,
                                1 / math.sqrt(32))
    want = layer.out_proj(out.float().reshape(2, 11, 96))
    torch.testing.assert_close(layer(x), want, rtol=1e-5, atol=1e-5)


def test_registered_implementation_gets_the_process_group(monkeypatch):
    from tile.attention import module
    monkeypatch.setattr(module, "_IMPLEMENTATIONS", dict(module._IMPLEMENTATIONS))
    seen = {}

    def fake_ring(q, k, v, causal, softmax_scale, process_group=None):
        seen.update(shape=tuple(q.shape), causal=causal, group=process_group)
        return v
    register_attention("ring", fake_ring)
    group = object()
    layer = Attention(64, 4, causal=True, attention_type=AttentionType.RING,
                      process_group=group)
    assert layer(torch.randn(2, 5, 64)).shape == (2, 5, 64)
    assert seen == {"shape": (2, 5, 4, 16), "causal": True, "group": group}


@needs_kernels
def test_module_dropout_runs_in_training_only(emulated):
    """Attention(dropout=p) passes dropout_p to flash_attn_func in training
    (the _dropout kernels) and nothing in eval (the plain ones)."""
    layer = Attention(128, 2, causal=True, dropout=0.25).half()
    x = torch.randn(2, 9, 128).half()
    layer.train()
    layer(x)
    layer.eval()
    layer(x)
    assert [(spec.constexprs["DROPOUT"], values["dropout_p"])
            for spec, values in emulated.launches] == [(True, 0.25), (False, 0.0)]


def test_module_dropout_with_sdpa_and_its_refusal_by_ring_attention():
    torch.manual_seed(0)
    layer = Attention(96, 3, attention_type="sdpa", dropout=0.5)
    x = torch.randn(2, 11, 96)
    dropped = layer(x)
    layer.eval()
    assert not torch.allclose(dropped, layer(x))
    layer = Attention(64, 2, attention_type="ring", dropout=0.1)
    with pytest.raises(NotImplementedError, match="ring_attn_func has no dropout"):
        layer(torch.randn(1, 4, 64))
    layer.eval()   # no dropout in eval: the ring's own requirement is what fails
    with pytest.raises(RuntimeError, match="ring attention needs torch.distributed"):
        layer(torch.randn(1, 4, 64))


@pytest.mark.parametrize("make, message", [
    (lambda: Attention(100, 3), "not a multiple of num_heads"),
    (lambda: Attention(128, 0), "num_heads must be a positive int, not 0"),
    (lambda: Attention(0, 4), "embed_dim must be a positive int, not 0"),
    (lambda: Attention(64.0, 4), "embed_dim must be a positive int, not 64.0"),
    (lambda: Attention(64, 2)(torch.randn(2, 5, 32)), r"expected input \(batch, seqlen, 64\)"),
    (lambda: Attention(64, 2, dropout=1.0), r"dropout must be a number in \[0, 1\), not 1.0"),
    (lambda: Attention(64, 2, dropout="0.1"), "dropout must be a number"),
])
def test_module_refuses_bad_shapes(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def compiled_equals_eager(emulated, step, inputs, dout, extra=()):
    """step(*inputs, *extra) compiled (aot_eager, fullgraph) against eager:
    the output and the gradients in `inputs` bit for bit, laid out alike.
    The launches left in `emulated` are the compiled run's."""
    want = step(*inputs, *extra)
    want_grads = torch.autograd.grad(want, inputs, dout)
    emulated.launches.clear()
    torch._dynamo.reset()
    got = torch.compile(step, fullgraph=True, backend="aot_eager")(*inputs, *extra)
    got_grads = torch.autograd.grad(got, inputs, dout)
    assert torch.equal(got, want)
    for name, g, w in zip("qkv", got_grads, want_grads):
        assert torch.equal(g, w), f"d{name}"
        assert g.shape == w.shape and g.stride() == w.stride(), \
            f"d{name} {g.stride()} != {w.stride()}"


@needs_kernels
@pytest.mark.parametrize("layout", LAYOUTS)
def test_torch_compile_traces_without_graph_breaks(emulated, layout):
    """Under torch.compile(fullgraph=True) flash_attn_func is the custom op
    tile::flash_attn_forward, its backward tile::flash_attn_backward: the
    compiled step gives eager's values and gradients bit for bit."""
    shape = (2, 37, 3, 64)
    q, k, v = (t.requires_grad_() for t in LAYOUTS[layout](shape, torch.float16))
    dout = torch.randn(shape).half()

    def step(q, k, v):
        return flash_attn_func(q, k, v, 0.0, 0.2, True) * 2

    compiled_equals_eager(emulated, step, (q, k, v), dout)
    assert emulated.families() == [
        "attn_fwd", "attn_bwd_preprocess", "attn_bwd", "attn_bwd_postprocess"]


def grouped_window_step(q, k, v):
    return flash_attn_func(q, k, v, 0.0, 0.2, True, (9, -1), causal_offset=-2) * 2


def softcap_step(q, k, v):
    return flash_attn_func(q, k, v, 0.0, 0.2, True, softcap=0.8) * 2


def deterministic_step(q, k, v):
    return flash_attn_func(q, k, v, 0.0, 0.2, True, deterministic=True) * 2


def kvpacked_step(q, k, v):
    return flash_attn_kvpacked_func(q, torch.stack([k, v], dim=2), 0.0, 0.2, False,
                                    (-1, 4)) * 2


@needs_kernels
@pytest.mark.parametrize("step, mask", [(grouped_window_step, LOCAL),
                                        (kvpacked_step, CAUSAL), (softcap_step, CAUSAL),
                                        (deterministic_step, CAUSAL)])
def test_torch_compile_with_grouped_heads_unequal_lengths_and_windows(emulated, step, mask):
    """The custom ops carry the key shapes and the mask: compiled
    (aot_eager, fullgraph) equals eager bit for bit, gradients (summed over
    each group, of k's shape) included."""
    q = torch.randn(2, 37, 8, 64).half().requires_grad_()
    k, v = (t.transpose(1, 2).requires_grad_() for t in qkv((2, 2, 50, 64))[:2])
    dout = torch.randn(2, 37, 8, 64).half()
    compiled_equals_eager(emulated, step, (q, k, v), dout)
    assert masks_launched(emulated) == [mask, mask]


@needs_kernels
def test_torch_compile_with_dropout_draws_the_eager_masks(emulated):
    """Dropout's seeds are drawn in the traced graph (torch.randint): after
    the same torch.manual_seed, compiled (aot_eager, fullgraph) equals
    eager bit for bit, gradients included."""
    def step(q, k, v):
        return flash_attn_func(q, k, v, 0.3, 0.2, True) * 2

    q, k, v = (t.requires_grad_() for t in qkv((2, 37, 4, 64), kv_shape=(2, 37, 2, 64)))
    dout = torch.randn(2, 37, 4, 64).half()
    results = []
    for run in (step, torch.compile(step, fullgraph=True, backend="aot_eager")):
        torch._dynamo.reset()
        torch.manual_seed(3)
        out = run(q, k, v)
        results.append((out, *torch.autograd.grad(out, (q, k, v), dout)))
    for name, got, want in zip(("out", "dq", "dk", "dv"), *results):
        assert torch.equal(got, want), name
    assert [spec.constexprs["DROPOUT"] for spec, _ in emulated.launches
            if spec.family in MASKED_FAMILIES] == [True] * 4


@needs_kernels
def test_custom_ops_agree_with_their_fake_implementations(emulated):
    """torch.library.opcheck: the ops' fake implementations give the real
    ones' shapes, dtypes and strides, and the autograd registration holds."""
    q, k, v = (t.requires_grad_() for t in LAYOUTS["heads major"]((1, 20, 2, 64),
                                                                   torch.float16))
    check_ops(q, k, v, (True, 0.125, 0, None, 0.0))


@needs_kernels
@pytest.mark.parametrize("mask", [(True, 0.125, 20, -3, 0.0), (False, 0.2, 0, None, 0.0),
                                  (False, 0.2, 0, 12, 0.0), (True, 0.2, 25, 3, 1.5),
                                  (True, 0.2, 13, None, 0.0, torch.tensor([[0.5, 0.25, 0.125,
                                                                            0.0625]])),
                                  (True, 0.2, 13, None, 0.0, None, 0.3,
                                   torch.tensor([123456789], dtype=torch.int64)),
                                  (True, 0.2, 13, -5, 0.0, None, 0.0, None, True)])
def test_custom_ops_with_grouped_heads_and_unequal_lengths(emulated, mask):
    q = torch.randn(1, 20, 4, 64).half().requires_grad_()
    k, v = (t.requires_grad_() for t in qkv((1, 33, 2, 64))[:2])
    check_ops(q, k, v, mask)


def check_ops(q, k, v, mask):
    """torch.library.opcheck of the forward op and of the backward op, for
    (causal, scale, causal_offset, window_offset, softcap[, alibi_slopes[,
    dropout_p, dropout_seeds[, deterministic]]]) `mask`."""
    torch.library.opcheck(torch.ops.tile.flash_attn_forward.default, (q, k, v, *mask))
    out, lse = torch.ops.tile.flash_attn_forward(q, k, v, *mask)
    assert lse.shape == (q.shape[0], q.shape[2], q.shape[1])
    dout = torch.randn_like(out)
    torch.library.opcheck(torch.ops.tile.flash_attn_backward.default,
                          (dout, q.detach(), k.detach(), v.detach(), out.detach(), lse,
                           *mask))
    dq, dk, dv = torch.ops.tile.flash_attn_backward(dout, q.detach(), k.detach(), v.detach(),
                                                    out.detach(), lse, *mask)
    assert dq.shape == q.shape and dk.shape == dv.shape == k.shape


# --------------------------------------------------------------------------
# flash_attn_varlen_func: packed sequences
# --------------------------------------------------------------------------

def packed(lengths, heads, dtype=torch.float16, head_dim=64):
    """A packed (total, heads, head_dim) tensor and its int32 cu_seqlens."""
    cu = torch.tensor([0] + list(itertools.accumulate(lengths)), dtype=torch.int32)
    return torch.randn(int(cu[-1]), heads, head_dim).to(dtype), cu


# Three packed sequences, (query lengths, key lengths): more keys than
# queries, a single token, fewer keys than queries.
VARLEN_LENGTHS = ([30, 1, 45], [50, 9, 20])


def grouped_varlen_inputs():
    """q (4 heads), k, v (2 heads), requiring gradients, and dout, packed
    as VARLEN_LENGTHS says, with cu_seqlens_q and cu_seqlens_k."""
    lens_q, lens_k = VARLEN_LENGTHS
    q, cu_q = packed(lens_q, 4)
    k, cu_k = packed(lens_k, 2)
    v, _ = packed(lens_k, 2)
    dout = torch.randn_like(q)
    q, k, v = (t.requires_grad_() for t in (q, k, v))
    return q, k, v, dout, cu_q, cu_k


# (query lengths, key lengths, heads, heads_k, causal, window_size, softcap)
# and the kernels' mask.
VARLEN_CASES = {
    "full": ([37, 1, 0, 64, 100], [50, 1, 5, 20, 100], 2, 2, False, (-1, -1), 0.0,
             NONCAUSAL),
    "causal gqa": ([37, 1, 64, 100], [50, 1, 20, 100], 4, 2, True, (-1, -1), 0.0, CAUSAL),
    "window mqa": ([90, 33, 1], [90, 60, 40], 4, 1, True, (7, -1), 0.0, LOCAL),
    "window both": ([45, 70], [45, 30], 2, 2, False, (5, 3), 0.0, LOCAL),
    "softcap": ([40, 17], [40, 60], 2, 1, True, (-1, -1), 0.8, CAUSAL),
    "keys missing": ([20, 30], [0, 30], 2, 2, False, (-1, -1), 0.0, NONCAUSAL),
}


@needs_kernels
@pytest.mark.parametrize("case", VARLEN_CASES)
def test_varlen_matches_each_sequence_alone(emulated, case):
    """Each packed sequence gives what flash_attn_func's float64 reference
    gives for it alone (out, lse, dq, dk, dv), through one launch of each
    kernel over the whole batch."""
    lens_q, lens_k, heads, heads_k, causal, window, softcap, mask = VARLEN_CASES[case]
    q, cu_q = packed(lens_q, heads)
    k, cu_k = packed(lens_k, heads_k)
    v, _ = packed(lens_k, heads_k)
    dout = torch.randn_like(q)
    q, k, v = (t.requires_grad_() for t in (q, k, v))
    out, lse = flash_attn_varlen_func(q, k, v, cu_q, cu_k, max(lens_q), max(lens_k), 0.0,
                                      0.2, causal, window, softcap, return_lse=True)
    dq, dk, dv = torch.autograd.grad(out, (q, k, v), dout)
    assert out.shape == q.shape and lse.shape == (heads, q.shape[0])
    assert dk.shape == k.shape and dv.shape == v.shape
    for b in range(len(lens_q)):
        rq, rk = slice(cu_q[b], cu_q[b + 1]), slice(cu_k[b], cu_k[b + 1])
        if lens_q[b] == 0:
            continue
        if lens_k[b] == 0:
            assert (out[rq] == 0).all() and torch.isneginf(lse[:, rq]).all()
            assert (dq[rq] == 0).all()
            continue
        want = reference(q[rq][None], k[rk][None], v[rk][None], dout[rq][None], causal, 0.2,
                         0, window, softcap)
        got = (out[rq][None], lse[:, rq][None], dq[rq][None], dk[rk][None], dv[rk][None])
        assert_matches_reference(got, want, torch.float16)
    assert masks_launched(emulated) == [mask, mask]
    assert emulated.families() == [
        "attn_fwd", "attn_bwd_preprocess", "attn_bwd", "attn_bwd_postprocess"]
    assert all(values["VARLEN"] == 1 for _, values in emulated.launches)


@needs_kernels
@pytest.mark.parametrize("slopes_shape", [(4,), (3, 4)])
def test_varlen_alibi_matches_each_sequence_alone(emulated, slopes_shape):
    """ALiBi on packed sequences: each sequence's bias from its own
    bottom-right diagonal and its row of the slopes (batch, heads), as
    flash_attn_func's reference gives for it alone."""
    lens_q, lens_k = VARLEN_LENGTHS
    q, k, v, dout, cu_q, cu_k = grouped_varlen_inputs()
    slopes = torch.rand(slopes_shape) * 0.5 + 0.05
    out, lse = flash_attn_varlen_func(q, k, v, cu_q, cu_k, max(lens_q), max(lens_k), 0.0,
                                      0.2, True, alibi_slopes=slopes, return_lse=True)
    dq, dk, dv = torch.autograd.grad(out, (q, k, v), dout)
    for b in range(len(lens_q)):
        rq, rk = slice(cu_q[b], cu_q[b + 1]), slice(cu_k[b], cu_k[b + 1])
        row = slopes if slopes.dim() == 1 else slopes[b:b + 1]
        want = reference(q[rq][None], k[rk][None], v[rk][None], dout[rq][None], True, 0.2,
                         alibi_slopes=row)
        got = (out[rq][None], lse[:, rq][None], dq[rq][None], dk[rk][None], dv[rk][None])
        assert_matches_reference(got, want, torch.float16)
    assert [spec.constexprs["ALIBI"] for spec, _ in emulated.launches
            if spec.family in MASKED_FAMILIES] == [True, True]


@needs_kernels
@pytest.mark.parametrize("change, error, message", [
    (lambda a: a.update(cu_q=a["cu_q"].long()), TypeError, "cu_seqlens_q must be a 1-D "
     "torch.int32 tensor"),
    (lambda a: a.update(cu_q=a["cu_q"] + 1), ValueError, "cu_seqlens_q must start at 0"),
    (lambda a: a.update(cu_k=a["cu_k"][:-1]), ValueError,
     "cu_seqlens_k has 3 entries but cu_seqlens_q has 4"),
    (lambda a: a.update(cu_k=torch.tensor([0, 30, 20, 40], dtype=torch.int32)), ValueError,
     "never decrease"),
    (lambda a: a.update(max_q=10), ValueError, "max_seqlen_q = 10, but a sequence has 20 "
     "tokens"),
    (lambda a: a.update(max_k=-1), TypeError, "max_seqlen_k must be a non-negative int"),
    (lambda a: a.update(q=a["q"][None]), ValueError, "q must have 3 dimensions"),
    (lambda a: a.update(k=torch.cat([a["k"], a["k"][:, :1]], 1),
                        v=torch.cat([a["v"], a["v"][:, :1]], 1)), ValueError,
     "have 3 heads, which does not divide the 4 heads of q"),
    (lambda a: a.update(k=a["k"][:, :, :32], v=a["v"][:, :, :32]), ValueError,
     "one positive head_dim"),
])
def test_varlen_refuses_bad_input(emulated, change, error, message):
    q, cu_q = packed([20, 13, 7], 4)
    k, cu_k = packed([10, 20, 10], 2)
    args = {"q": q, "k": k, "v": k.clone(), "cu_q": cu_q, "cu_k": cu_k, "max_q": 20,
            "max_k": 20}
    change(args)
    with pytest.raises(error, match=message):
        flash_attn_varlen_func(args["q"], args["k"], args["v"], args["cu_q"], args["cu_k"],
                               args["max_q"], args["max_k"])


def varlen_step(q, k, v, cu_q, cu_k):
    return flash_attn_varlen_func(q, k, v, cu_q, cu_k, 40, 50, 0.0, 0.2, True, (9, -1),
                                  0.5) * 2


@needs_kernels
def test_varlen_under_torch_compile(emulated):
    """flash_attn_varlen_func is the custom op tile::flash_attn_varlen_forward
    under torch.compile: fullgraph (aot_eager) equals eager bit for bit,
    gradients included."""
    q, cu_q = packed([40, 1, 23], 4)
    k, cu_k = packed([50, 3, 23], 2)
    v, _ = packed([50, 3, 23], 2)
    q, k, v = (t.requires_grad_() for t in (q, k, v))
    dout = torch.randn_like(q)
    compiled_equals_eager(emulated, varlen_step, (q, k, v), dout, extra=(cu_q, cu_k))
    assert masks_launched(emulated) == [LOCAL, LOCAL]


@needs_kernels
def test_varlen_custom_ops_agree_with_their_fake_implementations(emulated):
    q, cu_q = packed([30, 7], 4)
    k, cu_k = packed([20, 40], 2)
    v, _ = packed([20, 40], 2)
    args = (q, k, v, cu_q, cu_k, 30, 40, 0.2, True, False, 0, 0, 0.0)
    torch.library.opcheck(torch.ops.tile.flash_attn_varlen_forward.default, args)
    out, lse = torch.ops.tile.flash_attn_varlen_forward(*args)
    assert lse.shape == (2 * 4, 30)
    dout = torch.randn_like(out)
    torch.library.opcheck(torch.ops.tile.flash_attn_varlen_backward.default,
                          (dout, q, k, v, out, lse, *args[3:]))


@needs_kernels
def test_varlen_ragged_head_dim(emulated):
    q, cu_q = packed([30, 9], 4, head_dim=96)
    k, cu_k = packed([20, 40], 2, head_dim=96)
    v, _ = packed([20, 40], 2, head_dim=96)
    q, k, v = (t.requires_grad_() for t in (q, k, v))
    dout = torch.randn_like(q)
    out = flash_attn_varlen_func(q, k, v, cu_q, cu_k, 30, 40, causal=True)
    dq, dk, dv = torch.autograd.grad(out, (q, k, v), dout)
    assert out.shape == q.shape and dk.shape == k.shape
    for b in range(2):
        rq, rk = slice(cu_q[b], cu_q[b + 1]), slice(cu_k[b], cu_k[b + 1])
        want = reference(q[rq][None], k[rk][None], v[rk][None], dout[rq][None], True,
                         1 / math.sqrt(96))
        got = (out[rq][None], want[1], dq[rq][None], dk[rk][None], dv[rk][None])
        assert_matches_reference(got, want, torch.float16)
    # d96 has kernels of its own (on d128's tiles).
    assert [spec.constexprs["HEAD_DIM"] for spec, _ in emulated.launches] == [96] * 4


@needs_kernels
def test_varlen_packed_forms_equal_the_unpacked_call(emulated):
    """flash_attn_varlen_kvpacked_func (kv (total_k, 2, heads_k, head_dim))
    and flash_attn_varlen_qkvpacked_func (qkv (total, 3, heads, head_dim),
    one cu_seqlens): out and the gradients of flash_attn_varlen_func on
    the unpacked tensors, bit for bit, the gradients packed as the input."""
    lengths = [30, 1, 45]
    q, cu = packed(lengths, 4)
    k, _ = packed(lengths, 2)
    v, _ = packed(lengths, 2)
    dout = torch.randn_like(q)
    top = max(lengths)

    def unpacked(q, k, v):
        q, k, v = (t.detach().requires_grad_() for t in (q, k, v))
        out = flash_attn_varlen_func(q, k, v, cu, cu, top, top, 0.0, 0.2, True, (9, 0))
        return (out, *torch.autograd.grad(out, (q, k, v), dout))

    kv = torch.stack([k, v], dim=1).requires_grad_()
    qg = q.clone().requires_grad_()
    out = flash_attn_varlen_kvpacked_func(qg, kv, cu, cu, top, top, 0.0, 0.2, True, (9, 0))
    dq, dkv = torch.autograd.grad(out, (qg, kv), dout)
    want = unpacked(q, k, v)
    assert dkv.shape == kv.shape
    assert all(torch.equal(a, b) for a, b in zip((out, dq, *dkv.unbind(1)), want))

    k2, _ = packed(lengths, 4)
    v2, _ = packed(lengths, 4)
    qkv = torch.stack([q, k2, v2], dim=1).requires_grad_()
    out = flash_attn_varlen_qkvpacked_func(qkv, cu, top, 0.0, 0.2, True, (9, 0))
    (dqkv,) = torch.autograd.grad(out, qkv, dout)
    want = unpacked(q, k2, v2)
    assert dqkv.shape == qkv.shape
    assert all(torch.equal(a, b) for a, b in zip((out, *dqkv.unbind(1)), want))


@needs_kernels
@pytest.mark.parametrize("call, message", [
    (lambda q, kv, cu: flash_attn_varlen_kvpacked_func(q, kv[:, :1], cu, cu, 8, 8),
     r"kv must have the shape \(total_k, 2, heads_k, head_dim\)"),
    (lambda q, kv, cu: flash_attn_varlen_qkvpacked_func(kv, cu, 8),
     r"qkv must have the shape \(total, 3, heads, head_dim\)")])
def test_varlen_packed_forms_check_their_packing(emulated, call, message):
    q, cu = packed([8], 2)
    kv = torch.stack([q, q], dim=1)
    with pytest.raises(ValueError, match=message):
        call(q, kv, cu)

