"""tile.attention's PyTorch API without a GPU: argument checking, the
layout the kernels are given, the Attention module, and the autograd wiring
run against CPU emulations of the kernels' contract."""

import math
import os

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is needed for tile.attention's API")

from tile import runtime  # noqa: E402
from tile.attention import (  # noqa: E402
    Attention,
    AttentionType,
    BundleError,
    flash_attn_func,
    functional,
    register_attention,
)

BUILD = os.environ.get("TILE_BUILD_DIR") or os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "build")
KERNEL_DIR = os.path.join(BUILD, "kernels")
needs_kernels = pytest.mark.skipif(
    not os.path.isfile(os.path.join(KERNEL_DIR, "attn_fwd_fp16_d64_causal.json")),
    reason="the kernels are not built (./dev.sh build)")


def qkv(shape=(2, 17, 3, 64), dtype=torch.float16, device="cpu"):
    return [torch.randn(shape, dtype=torch.float32).to(dtype=dtype, device=device)
            for _ in range(3)]


# --------------------------------------------------------------------------
# Argument checking: every error names the problem
# --------------------------------------------------------------------------

@pytest.mark.parametrize("make, error, message", [
    (lambda: (qkv()[0], "k", qkv()[2]), TypeError, "k must be a torch.Tensor, not str"),
    (lambda: [t[0] for t in qkv()], ValueError, r"q must have 4 dimensions.*\(17, 3, 64\)"),
    (lambda: (qkv()[0], *qkv((2, 20, 3, 64))[1:]), ValueError,
     r"q and k must have the same shape.*\(2, 20, 3, 64\).*different key lengths"),
    (lambda: (qkv()[0], *qkv((2, 17, 1, 64))[1:]), ValueError, "grouped heads"),
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
    ((0.1,), {}, NotImplementedError, "dropout_p=0.1: .* no dropout yet"),
    ((1.5,), {}, ValueError, r"dropout_p must be in \[0, 1\), not 1.5"),
    ((), {"window_size": (128, 0)}, NotImplementedError, "no sliding window yet"),
    ((), {"window_size": (-1, 4)}, NotImplementedError, r"window_size=\(-1, 4\)"),
    ((), {"window_size": 128}, TypeError, "window_size must be a pair of ints"),
    ((), {"window_size": (-1.0, -1)}, TypeError, "window_size must be a pair of ints"),
    ((), {"softcap": 30.0}, NotImplementedError, "softcap=30.0: .* no score capping"),
    ((), {"softcap": "30"}, TypeError, "softcap must be a number"),
    ((), {"alibi_slopes": torch.ones(3)}, NotImplementedError, "no ALiBi yet"),
    ((), {"deterministic": True}, NotImplementedError, "no deterministic mode yet"),
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


def test_kernel_causal_offset_is_clamped_to_the_sequence():
    # Beyond +-seqlen every row sees every key, or none: clamping changes
    # nothing and keeps any Python int within the kernels' i32.
    assert functional._kernel_causal_offset(True, 10**20, 17) == 17
    assert functional._kernel_causal_offset(True, -10**20, 17) == -17
    assert functional._kernel_causal_offset(True, -5, 17) == -5
    assert functional._kernel_causal_offset(False, -5, 17) == 0


def test_unsupported_head_dim_lists_what_the_bundle_has(monkeypatch, tmp_path):
    # One real-format forward kernel for d64, then a d96 request.
    from test_attention_bundle import write_kernel
    write_kernel(tmp_path, "attn_fwd_fp16_d64_noncausal")
    monkeypatch.setenv("TILE_KERNEL_DIR", str(tmp_path))
    q, k, v = qkv((1, 8, 2, 96))
    with pytest.raises(ValueError, match=r"no attn_fwd variant for HEAD_DIM=96 CAUSAL=0 "
                                         r"fp16 \(it has: HEAD_DIM=64 CAUSAL=0 fp16"):
        functional._forward(q, k, v, False, 0.1)


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


# --------------------------------------------------------------------------
# The autograd wiring, against CPU emulations of the kernels' contract
# --------------------------------------------------------------------------

def strided(tensor, values, head_dim):
    """The (Z, H, N_CTX, HEAD_DIM) tensor a kernel sees through its stride
    arguments."""
    return torch.as_strided(
        tensor, (values["Z"], values["H"], values["N_CTX"], head_dim),
        (values["stride_z"], values["stride_h"], values["stride_n"], 1),
        tensor.storage_offset())


class EmulatedKernels:
    """Stands in for _launch_all: has the runtime check the arguments and
    compute the grid as for a launch, then computes what each kernel's
    docstring promises, in float32, reading and writing the tensors only
    through the pointers and strides it is given."""

    def __init__(self):
        self.tensors = {}
        self.launches = []

    def pointer(self, tensor):
        self.tensors[tensor.data_ptr()] = tensor
        return functional.DevicePointer(tensor.data_ptr(),
                                        functional._ELEMENT_TYPES[tensor.dtype])

    def launch_all(self, device, launches):
        for spec, values in launches:
            self.launch(spec, values)

    def launch(self, spec, values):
        # The runtime's checks (types, alignment, strides) and grid.
        grid = spec.check(values)
        self.launches.append((spec.family, grid))
        z, h, n, d = values["Z"], values["H"], values["N_CTX"], spec.constexprs["HEAD_DIM"]
        block = spec.constexprs["BLOCK_N1" if spec.family == "attn_bwd" else "BLOCK_M"]
        assert grid == (math.ceil(n / block), z * h, 1)

        def tensor(name):
            return self.tensors[values[name].address]

        def view(name):
            return strided(tensor(name), values, d)

        def rows(name):   # LSE, DELTA: contiguous fp32 [Z * H, N_CTX]
            return tensor(name).view(z, h, n)

        def accumulator():   # DQ_ACC: contiguous fp32 [Z * H, N_CTX, HEAD_DIM]
            return tensor("DQ_ACC").view(z, h, n, d)

        if spec.family == "attn_bwd_preprocess":
            rows("DELTA").copy_((view("O").float() * view("DO").float()).sum(-1))
            accumulator().zero_()
            return
        if spec.family == "attn_bwd_postprocess":
            view("DQ").copy_(accumulator() * values["sm_scale"])
            return
        q, k, v = (view(x).float() for x in "QKV")
        scores = q @ k.transpose(-1, -2) * values["sm_scale"]
        if spec.constexprs["CAUSAL"]:
            hidden = torch.ones(n, n, dtype=torch.bool).triu(1 + values["causal_offset"])
            scores = scores.masked_fill(hidden, -math.inf)

        def probabilities(lse):   # rows with lse -inf see no key: P = 0
            return torch.exp(scores - lse.masked_fill(torch.isneginf(lse), 0)[..., None])

        if spec.family == "attn_fwd":
            lse = torch.logsumexp(scores, -1)
            rows("LSE").copy_(lse)
            view("O").copy_(probabilities(lse) @ v)
            return
        p = probabilities(rows("LSE"))
        do = view("DO").float()
        ds = p * (do @ v.transpose(-1, -2) - rows("DELTA")[..., None])
        view("DV").copy_(p.transpose(-1, -2) @ do)
        accumulator().add_(ds @ k)
        view("DK").copy_(ds.transpose(-1, -2) @ q * values["sm_scale"])


@pytest.fixture
def emulated(monkeypatch):
    kernels = EmulatedKernels()
    monkeypatch.setenv("TILE_KERNEL_DIR", KERNEL_DIR)
    monkeypatch.setattr(functional, "_check_device", lambda tensor, name: None)
    monkeypatch.setattr(functional, "_device_pointer", kernels.pointer)
    monkeypatch.setattr(functional, "_launch_all", kernels.launch_all)
    return kernels


def reference(q, k, v, dout, causal, scale, causal_offset=0):
    q, k, v = (t.detach().float().requires_grad_() for t in (q, k, v))
    scores = torch.einsum("bnhd,bmhd->bhnm", q, k) * scale
    n = q.shape[1]
    hidden = torch.zeros(n, n, dtype=torch.bool)
    if causal:
        hidden = torch.ones(n, n, dtype=torch.bool).triu(1 + causal_offset)
    # Rows that see no key: out 0, lse -inf.  Their scores are zeroed before
    # the softmax, so that no NaN reaches autograd, and their P set to 0.
    empty = hidden.all(-1)[:, None]
    scores = scores.masked_fill(hidden & ~empty, -math.inf).masked_fill(empty, 0)
    lse = torch.logsumexp(scores, -1).masked_fill(empty[:, 0], -math.inf)
    probs = torch.softmax(scores, -1).masked_fill(empty, 0)
    out = torch.einsum("bhnm,bmhd->bnhd", probs, v)
    return (out, lse.detach(), *torch.autograd.grad(out, (q, k, v), dout.float()))


LAYOUTS = {
    "contiguous": lambda shape, dtype: qkv(shape, dtype),
    "heads major": lambda shape, dtype: [
        t.transpose(1, 2) for t in qkv((shape[0], shape[2], shape[1], shape[3]), dtype)],
    "packed qkv": lambda shape, dtype: torch.randn(
        shape[0], shape[1], 3, *shape[2:]).to(dtype).unbind(2),
}


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
    ref = reference(q, k, v, dout, causal, 0.2)
    assert out.shape == shape and lse.shape == (2, 3, 37) and lse.dtype == torch.float32
    assert not lse.requires_grad
    # The emulation is float32; only the rounding of inputs to outputs in
    # `dtype` separates it from the reference: 4 unit roundoffs, normwise.
    limit = 4 * (2.0**-8 if dtype == torch.bfloat16 else 2.0**-11)
    for name, got, want in zip(("out", "lse", "dq", "dk", "dv"), (out, lse, dq, dk, dv), ref):
        error = ((got.double() - want.double()).norm() / want.double().norm()).item()
        assert error <= limit, f"{name}: relative error {error:.2e} > {limit:.2e}"
    assert [kernel for kernel, _ in emulated.launches] == [
        "attn_fwd", "attn_bwd_preprocess", "attn_bwd", "attn_bwd_postprocess"]


def relative_error(got, want):
    return ((got.double() - want.double()).norm() / want.double().norm()).item()


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
    ref = reference(q, k, v, dout, True, 0.2, causal_offset)
    empty = max(0, min(37, -causal_offset))       # rows i with i + offset < 0
    assert torch.isneginf(lse[:, :, :empty]).all() and torch.isfinite(lse[:, :, empty:]).all()
    assert (out[:, :empty] == 0).all() and (dq[:, :empty] == 0).all()
    limit = 4 * 2.0**-11
    for name, got, want in zip(("out", "dq", "dk", "dv"), (out, dq, dk, dv),
                               (ref[0], *ref[2:])):
        if want.norm() > 0:
            assert relative_error(got, want) <= limit, name
        else:
            assert (got == 0).all(), name
    if empty < 37:
        torch.testing.assert_close(lse[:, :, empty:], ref[1][:, :, empty:])


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
    assert [kernel for kernel, _ in emulated.launches] == ["attn_fwd"]


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
    want = layer.out_proj(out.reshape(2, 11, 96))
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


@pytest.mark.parametrize("make, message", [
    (lambda: Attention(100, 3), "not a multiple of num_heads"),
    (lambda: Attention(128, 0), "num_heads must be a positive int, not 0"),
    (lambda: Attention(0, 4), "embed_dim must be a positive int, not 0"),
    (lambda: Attention(64.0, 4), "embed_dim must be a positive int, not 64.0"),
    (lambda: Attention(64, 2)(torch.randn(2, 5, 32)), r"expected input \(batch, seqlen, 64\)"),
])
def test_module_refuses_bad_shapes(make, message):
    with pytest.raises(ValueError, match=message):
        make()


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

    want = step(q, k, v)
    want_grads = torch.autograd.grad(want, (q, k, v), dout)
    emulated.launches.clear()
    torch._dynamo.reset()
    got = torch.compile(step, fullgraph=True, backend="aot_eager")(q, k, v)
    got_grads = torch.autograd.grad(got, (q, k, v), dout)
    assert torch.equal(got, want)
    for name, g, w in zip("qkv", got_grads, want_grads):
        assert torch.equal(g, w), f"d{name}"
        assert g.stride() == w.stride(), f"d{name} {g.stride()} != {w.stride()}"
    assert [kernel for kernel, _ in emulated.launches] == [
        "attn_fwd", "attn_bwd_preprocess", "attn_bwd", "attn_bwd_postprocess"]


@needs_kernels
def test_custom_ops_agree_with_their_fake_implementations(emulated):
    """torch.library.opcheck: the ops' fake implementations give the real
    ones' shapes, dtypes and strides, and the autograd registration holds."""
    q, k, v = (t.requires_grad_() for t in LAYOUTS["heads major"]((1, 20, 2, 64),
                                                                   torch.float16))
    torch.library.opcheck(torch.ops.tile.flash_attn_forward.default,
                          (q, k, v, True, 0.125, 0))
    out, lse = torch.ops.tile.flash_attn_forward(q, k, v, True, 0.125, 0)
    dout = torch.randn_like(out)
    torch.library.opcheck(torch.ops.tile.flash_attn_backward.default,
                          (dout, q.detach(), k.detach(), v.detach(), out.detach(), lse,
                           True, 0.125, 0))
