"""flash_attn_varlen_func: FlashAttention-2's packed-sequence attention on
Tile's kernels.

The batch's sequences lie one after another: q (total_q, heads, head_dim),
k and v (total_k, heads_k, head_dim); sequence b is rows cu_seqlens_q[b] ..
cu_seqlens_q[b + 1] of q and cu_seqlens_k[b] .. cu_seqlens_k[b + 1] of k
and v.  One launch of each kernel covers the whole batch (VARLEN = 1): a
program finds its sequence's rows in the cu_seqlens tensors, and masks are
aligned to each sequence's own bottom-right diagonal.
"""

import math
import numbers

import torch

from . import bundle as _bundle
from . import functional as _f


def _check_packed(q, k, v):
    named = [("q", q), ("k", k), ("v", v)]
    for name, t in named:
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, not {type(t).__name__}")
        if t.dim() != 3:
            raise ValueError(f"{name} must have 3 dimensions (total_tokens, heads, "
                             f"head_dim), the sequences packed one after another, but its "
                             f"shape is {tuple(t.shape)}")
    if k.shape != v.shape:
        raise ValueError(f"k and v must have the same shape (total_k, heads_k, head_dim), "
                         f"but k is {tuple(k.shape)} and v is {tuple(v.shape)}")
    if k.shape[2] != q.shape[2] or q.shape[2] == 0:
        raise ValueError(f"q and k must have one positive head_dim (dimension 2), but q is "
                         f"{tuple(q.shape)} and k is {tuple(k.shape)}")
    heads, heads_k = q.shape[1], k.shape[1]
    if heads_k == 0 or heads % heads_k:
        raise ValueError(f"k and v have {heads_k} heads, which does not divide the {heads} "
                         f"heads of q (grouped-query attention shares each K/V head among "
                         f"heads_q / heads_k query heads)")
    _f.check_dtypes_and_devices(named)


def _check_lengths(name, cu_seqlens, max_seqlen, total, batch, device):
    """The sequences' lengths (a CPU int64 tensor) after checking that
    cu_seqlens is FlashAttention's: int32, (batch + 1,), starting at 0,
    non-decreasing, ending at total, no length above max_seqlen.  Reading
    it costs one copy to the host; while a CUDA graph is being captured or
    torch.compile traces it cannot be read, and only its type and shape
    are checked (None)."""
    if not isinstance(cu_seqlens, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, not {type(cu_seqlens).__name__}")
    if cu_seqlens.dtype != torch.int32 or cu_seqlens.dim() != 1:
        raise TypeError(f"{name} must be a 1-D torch.int32 tensor (batch + 1 offsets), "
                        f"not {cu_seqlens.dtype} of shape {tuple(cu_seqlens.shape)}")
    if cu_seqlens.numel() < 2:
        raise ValueError(f"{name} has {cu_seqlens.numel()} entries: it needs batch + 1 >= "
                         f"2")
    if batch is not None and cu_seqlens.numel() != batch + 1:
        raise ValueError(f"{name} has {cu_seqlens.numel()} entries but cu_seqlens_q has "
                         f"{batch + 1}: both hold batch + 1 offsets")
    if cu_seqlens.device != device:
        raise ValueError(f"{name} is on {cu_seqlens.device} but q is on {device}")
    max_name = name.replace("cu_seqlens", "max_seqlen")
    if isinstance(max_seqlen, bool) or not isinstance(max_seqlen, numbers.Integral) \
            or max_seqlen < 0:
        raise TypeError(f"{max_name} must be a non-negative int, not {max_seqlen!r}")
    if torch.compiler.is_compiling() or (torch.cuda.is_available()
                                         and torch.cuda.is_current_stream_capturing()):
        return None
    offsets = cu_seqlens.to("cpu", torch.int64)
    lengths = offsets[1:] - offsets[:-1]
    if offsets[0] != 0 or offsets[-1] != total or bool((lengths < 0).any()):
        raise ValueError(f"{name} must start at 0, never decrease and end at the number "
                         f"of packed tokens ({total}), but it is {offsets.tolist()}")
    if int(lengths.max()) > max_seqlen:
        raise ValueError(f"{max_name} = {max_seqlen}, but a sequence has "
                         f"{int(lengths.max())} tokens")
    return lengths


def _packed_strides(t):
    """(stride_z, stride_h, stride_n) of a packed (total, heads, head_dim)
    tensor: no batch stride; a dimension of size 1 never multiplies an
    index."""
    return 0, t.stride(1) if t.shape[1] > 1 else 0, t.stride(0) if t.shape[0] > 1 else 0


def _fitted(t, spec, dense):
    """t, or a contiguous copy when its layout breaks the kernel's promises
    (or, `dense`, its elements do not fill its extent: outputs take its
    strides)."""
    if (dense and not _f._is_dense(t)) or not _f._fits(t, spec, _packed_strides(t)):
        return t.contiguous() if not t.is_contiguous() else t.clone()
    return t


def _check_range(t, name, max_rows):
    _, stride_h, stride_n = _packed_strides(t)
    extent = (t.shape[0] + max_rows) * stride_n + t.shape[2]
    if max(stride_h, extent) > _f._INT32_MAX:
        raise ValueError(f"{name} {tuple(t.shape)} is too large for the kernels' 32-bit "
                         f"row indexing: split the batch")


def _bounds(causal, window_size, causal_offset, max_q, max_k):
    """The mask as the kernels take it for packed sequences: offsets from
    each sequence's bottom-right diagonal (the kernels add len_k - len_q),
    (CAUSAL, WINDOW, causal_offset, window_offset).  Offsets beyond the
    longest sequences change nothing and are clamped so as to fit i32."""
    reach = max_q + max_k + 1
    upper, lower = (None if x is None else max(-reach, min(reach, x))
                    for x in _f.window_bounds(causal, window_size, causal_offset))
    if lower is not None:
        return True, True, reach if upper is None else upper, lower
    if upper is not None:
        return True, False, upper, 0
    return False, False, 0, 0


def _shape_values(q, k, cu_q, cu_k, max_q, max_k):
    stride_z, stride_h, stride_n = _packed_strides(q)
    stride_kz, stride_kh, stride_kn = _packed_strides(k)
    queries = {"stride_z": stride_z, "stride_h": stride_h, "stride_n": stride_n,
               "Z": cu_q.numel() - 1, "H": q.shape[1], "N_CTX": q.shape[0],
               "CU_SEQLENS_Q": _f._device_pointer(cu_q), "MAX_N_CTX": max(max_q, 1),
               "VARLEN": 1}
    keys = {"stride_kz": stride_kz, "stride_kh": stride_kh, "stride_kn": stride_kn,
            "H_KV": k.shape[1], "N_KV": k.shape[0], "CU_SEQLENS_K": _f._device_pointer(cu_k)}
    return queries, keys


def _varlen_forward(q, k, v, cu_q, cu_k, max_q, max_k, scale, mask, softcap,
                    alibi_slopes=None, dropout_p=0.0, dropout_seeds=None):
    """(out, lse, q, k, v): lse in the kernels' layout, (batch * heads,
    max_seqlen_q); q, k, v as the kernel read them (padded to the kernels'
    head dim, out cut back to q's)."""
    head_dim = q.shape[-1]
    padded = _f._kernel_head_dim(_bundle.FORWARD, q)
    if padded != head_dim:
        q, k, v = _f._pad_head_dim((q, k, v), padded)
        out, lse, q, k, v = _varlen_forward(q, k, v, cu_q, cu_k, max_q, max_k, scale, mask,
                                            softcap, alibi_slopes, dropout_p, dropout_seeds)
        return out[..., :head_dim].contiguous(), lse, q, k, v
    causal, window, causal_offset, window_offset = mask
    element_type = _f._ELEMENT_TYPES[q.dtype]
    spec = _f.kernel_bundle().select(_bundle.FORWARD, element_type, q.shape[2], causal,
                                     seq_len=max(max_q, 1), window=window,
                                     softcap=softcap > 0, alibi=alibi_slopes is not None,
                                     dropout=dropout_p > 0,
                                     capability=_f.device_capability(q.device))
    q = _fitted(q, spec, dense=True)
    k, v = (_fitted(t, spec, dense=False) for t in (k, v))
    batch, heads = cu_q.numel() - 1, q.shape[1]
    out = torch.empty_strided(q.shape, q.stride(), dtype=q.dtype, device=q.device)
    lse = torch.full((batch * heads, max(max_q, 1)), -math.inf, dtype=torch.float32,
                     device=q.device)
    if q.shape[0] == 0:
        return out, lse, q, k, v
    if k.shape[0] == 0:
        return out.zero_(), lse, q, k, v
    _check_range(q, "q", max_q)
    _check_range(k, "k", max_k)
    queries, keys = _shape_values(q, k, cu_q, cu_k, max_q, max_k)
    _f._launch_all(q.device, [(spec, {
        "Q": _f._device_pointer(q), "K": _f._device_pointer(k), "V": _f._device_pointer(v),
        "O": _f._device_pointer(out), "LSE": _f._device_pointer(lse), "sm_scale": scale,
        "causal_offset": causal_offset, "window_offset": window_offset,
        **_f._score_values(softcap, alibi_slopes, dropout_p, dropout_seeds, slice(None), lse),
        **queries, **keys})])
    return out, lse, q, k, v


def _varlen_backward(dout, q, k, v, out, lse, cu_q, cu_k, max_q, max_k, scale, mask,
                     softcap, alibi_slopes=None, dropout_p=0.0, dropout_seeds=None,
                     deterministic=False):
    head_dim = dout.shape[-1]
    padded = _f._kernel_head_dim(_bundle.BACKWARD, dout)
    if padded != head_dim:
        dout, q, k, v, out = _f._pad_head_dim((dout, q, k, v, out), padded)
        grads = _varlen_backward(dout, q, k, v, out, lse, cu_q, cu_k, max_q, max_k, scale,
                                 mask, softcap, alibi_slopes, dropout_p, dropout_seeds,
                                 deterministic)
        return tuple(g[..., :head_dim].contiguous() for g in grads)
    causal, window, causal_offset, window_offset = mask
    total_q, heads, head_dim = q.shape
    total_k, heads_k = k.shape[0], k.shape[1]
    element_type = _f._ELEMENT_TYPES[q.dtype]
    kernels = _f.kernel_bundle()
    capability = _f.device_capability(q.device)
    preprocess = kernels.select(_bundle.PREPROCESS, element_type, head_dim,
                                capability=capability)
    backward = kernels.select(_bundle.BACKWARD, element_type, head_dim, causal,
                              window=window, softcap=softcap > 0,
                              alibi=alibi_slopes is not None, dropout=dropout_p > 0,
                              deterministic=deterministic, capability=capability)
    if deterministic:
        postprocess = kernels.select(_bundle.DQ, element_type, head_dim, causal, window=window,
                                     capability=capability)
    else:
        postprocess = kernels.select(_bundle.POSTPROCESS, element_type, head_dim,
                                     capability=capability)
    if dout.stride() != q.stride():
        dout = torch.empty_strided(q.shape, q.stride(), dtype=q.dtype,
                                   device=q.device).copy_(dout)
    if total_q == 0 or total_k == 0:
        return torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)
    dq = torch.empty_strided(q.shape, q.stride(), dtype=q.dtype, device=q.device)
    # dK and dV per query head, summed over each group below.
    grouped = heads_k != heads
    dk = torch.empty((total_k, heads, head_dim), dtype=k.dtype, device=k.device) \
        if grouped else torch.empty_like(k)
    dv = torch.empty_strided(dk.shape, dk.stride(), dtype=dk.dtype, device=dk.device)
    _check_range(dk, "dk", max_k)
    lse_log2, delta = _f.backward_statistics(lse, max(max_q, 1))
    dq_accumulator = _f.dq_accumulator_for(preprocess, lse.shape[0], lse.shape[1], q.device)
    queries, keys = _shape_values(q, k, cu_q, cu_k, max_q, max_k)
    _, stride_dkh, stride_dkn = _packed_strides(dk)
    _f._launch_all(q.device, [
        (preprocess, {"O": _f._device_pointer(out), "DO": _f._device_pointer(dout),
                      "LSE": _f._device_pointer(lse), "LSE_LOG2": _f._device_pointer(lse_log2),
                      "DELTA": _f._device_pointer(delta),
                      "DQ_ACC": _f._device_pointer(dq_accumulator), **queries}),
        (backward, {"Q": _f._device_pointer(q), "K": _f._device_pointer(k),
                    "V": _f._device_pointer(v), "sm_scale": scale,
                    "DO": _f._device_pointer(dout),
                    "DQ_ACC": _f._device_pointer(dq_accumulator),
                    "DK": _f._device_pointer(dk), "DV": _f._device_pointer(dv),
                    "LSE_LOG2": _f._device_pointer(lse_log2), "DELTA": _f._device_pointer(delta),
                    "stride_dkz": 0, "stride_dkh": stride_dkh, "stride_dkn": stride_dkn,
                    "MAX_N_KV": max(max_k, 1), "causal_offset": causal_offset,
                    "window_offset": window_offset,
                    **_f._score_values(softcap, alibi_slopes, dropout_p, dropout_seeds,
                                       slice(None), lse),
                    **queries, **keys}),
        (postprocess, _f._dq_values(
            deterministic, dq, _f._device_pointer(dq_accumulator), scale, queries,
            lambda: {"Q": _f._device_pointer(q), "K": _f._device_pointer(k),
                     "V": _f._device_pointer(v), "DO": _f._device_pointer(dout),
                     "LSE_LOG2": _f._device_pointer(lse_log2),
                     "DELTA": _f._device_pointer(delta), "causal_offset": causal_offset,
                     "window_offset": window_offset, **keys}))])
    if grouped:
        group = heads // heads_k
        dk, dv = (per_head.view(total_k, heads_k, group, head_dim).sum(2)
                  for per_head in (dk, dv))
    return dq, dk, dv


def _packed_lse(lse, cu_q, heads, total_q):
    """The kernels' (batch * heads, max_seqlen_q) lse as FlashAttention's
    varlen functions return it: (heads, total_q)."""
    batch = cu_q.numel() - 1
    lengths = (cu_q[1:] - cu_q[:-1]).long()
    sequence = torch.repeat_interleave(torch.arange(batch, device=lse.device), lengths,
                                       output_size=total_q)
    position = torch.arange(total_q, device=lse.device) - cu_q.long()[sequence]
    return lse.view(batch, heads, -1)[sequence, :, position].transpose(0, 1).contiguous()


class FlashAttnVarlenFunction(torch.autograd.Function):
    """The forward kernel on packed sequences; the backward's three kernels."""

    @staticmethod
    def forward(ctx, q, k, v, cu_q, cu_k, max_q, max_k, scale, mask, softcap,
                alibi_slopes=None, dropout_p=0.0, dropout_seeds=None, deterministic=False):
        out, lse, q, k, v = _varlen_forward(q, k, v, cu_q, cu_k, max_q, max_k, scale, mask,
                                            softcap, alibi_slopes, dropout_p, dropout_seeds)
        ctx.save_for_backward(q, k, v, out, lse, cu_q, cu_k)
        ctx.args = (max_q, max_k, scale, mask, softcap, alibi_slopes, dropout_p, dropout_seeds,
                    deterministic)
        ctx.mark_non_differentiable(lse)
        return out, lse

    @staticmethod
    def backward(ctx, dout, unused_dlse):
        q, k, v, out, lse, cu_q, cu_k = ctx.saved_tensors
        dq, dk, dv = _varlen_backward(dout, q, k, v, out, lse, cu_q, cu_k, *ctx.args)
        return (dq, dk, dv) + (None,) * 11


# --------------------------------------------------------------------------
# torch.compile: custom ops, as functional's for flash_attn_func
# --------------------------------------------------------------------------

@torch.library.custom_op("tile::flash_attn_varlen_forward", mutates_args=())
def _varlen_forward_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                       cu_q: torch.Tensor, cu_k: torch.Tensor, max_q: int, max_k: int,
                       scale: float, causal: bool, window: bool, causal_offset: int,
                       window_offset: int, softcap: float,
                       alibi_slopes: torch.Tensor | None = None, dropout_p: float = 0.0,
                       dropout_seeds: torch.Tensor | None = None, deterministic: bool = False
                       ) -> tuple[torch.Tensor, torch.Tensor]:
    out, lse, _, _, _ = _varlen_forward(q, k, v, cu_q, cu_k, max_q, max_k, scale,
                                        (causal, window, causal_offset, window_offset),
                                        softcap, alibi_slopes, dropout_p, dropout_seeds)
    return _f._in_layout_of(out, q), lse


@_varlen_forward_op.register_fake
def _varlen_forward_fake(q, k, v, cu_q, cu_k, max_q, max_k, scale, causal, window,
                         causal_offset, window_offset, softcap, alibi_slopes=None,
                         dropout_p=0.0, dropout_seeds=None, deterministic=False):
    rows = (cu_q.shape[0] - 1) * q.shape[1]
    return torch.empty_like(q), q.new_empty((rows, max(max_q, 1)), dtype=torch.float32)


@torch.library.custom_op("tile::flash_attn_varlen_backward", mutates_args=())
def _varlen_backward_op(dout: torch.Tensor, q: torch.Tensor, k: torch.Tensor,
                        v: torch.Tensor, out: torch.Tensor, lse: torch.Tensor,
                        cu_q: torch.Tensor, cu_k: torch.Tensor, max_q: int, max_k: int,
                        scale: float, causal: bool, window: bool, causal_offset: int,
                        window_offset: int, softcap: float,
                        alibi_slopes: torch.Tensor | None = None, dropout_p: float = 0.0,
                        dropout_seeds: torch.Tensor | None = None, deterministic: bool = False
                        ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    dq, dk, dv = _varlen_backward(dout, q, k, v, out, lse, cu_q, cu_k, max_q, max_k, scale,
                                  (causal, window, causal_offset, window_offset), softcap,
                                  alibi_slopes, dropout_p, dropout_seeds, deterministic)
    return _f._in_layout_of(dq, q), _f._in_layout_of(dk, k), _f._in_layout_of(dv, v)


@_varlen_backward_op.register_fake
def _varlen_backward_fake(dout, q, k, v, out, lse, cu_q, cu_k, max_q, max_k, scale, causal,
                          window, causal_offset, window_offset, softcap, alibi_slopes=None,
                          dropout_p=0.0, dropout_seeds=None, deterministic=False):
    return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)


def _varlen_setup_context(ctx, inputs, output):
    q, k, v, cu_q, cu_k, *rest = inputs
    out, lse = output
    ctx.save_for_backward(q, k, v, out, lse, cu_q, cu_k)
    ctx.rest = rest
    ctx.mark_non_differentiable(lse)


def _varlen_op_backward(ctx, dout, unused_dlse):
    q, k, v, out, lse, cu_q, cu_k = ctx.saved_tensors
    dq, dk, dv = _varlen_backward_op(dout, q, k, v, out, lse, cu_q, cu_k, *ctx.rest)
    return (dq, dk, dv) + (None,) * 14


_varlen_forward_op.register_autograd(_varlen_op_backward,
                                     setup_context=_varlen_setup_context)


def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                           dropout_p=0.0, softmax_scale=None, causal=False,
                           window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                           deterministic=False, return_attn_probs=False, *,
                           return_lse=False, causal_offset=0):
    """Attention over a batch of packed sequences, with FlashAttention-2's
    signature and semantics.

    q: (total_q, heads, head_dim); k, v: (total_k, heads_k, head_dim),
    heads_k dividing heads; cu_seqlens_q, cu_seqlens_k: int32 (batch + 1,)
    offsets of each sequence's first token (from 0 to the total),
    max_seqlen_q/k the longest sequence's length.  Each sequence attends
    only to its own keys, masks aligned to its own bottom-right diagonal
    (causal, window_size, softcap, alibi_slopes, dropout_p, deterministic
    and causal_offset as in flash_attn_func; alibi_slopes (heads,) or
    (batch, heads)).
    A sequence may be empty; a query that sees no key gets out 0.  The
    cu_seqlens are checked (one copy to the host) except while a CUDA graph
    is being captured.  Returns out (total_q, heads, head_dim) and, with
    return_lse, lse (heads, total_q) fp32 in natural log.  Differentiable
    in q, k and v; under torch.compile it is the custom op
    tile::flash_attn_varlen_forward (no graph break; the cu_seqlens are not
    read then)."""
    _check_packed(q, k, v)
    causal = _f._check_flag("causal", causal)
    window_size = _f._check_window_size(window_size)
    softcap = _f._check_softcap(softcap)
    _f._check_fa2_options(return_attn_probs)
    return_lse = _f._check_flag("return_lse", return_lse)
    causal_offset = _f._check_causal_offset(causal_offset)
    lengths_q = _check_lengths("cu_seqlens_q", cu_seqlens_q, max_seqlen_q, q.shape[0], None,
                               q.device)
    _check_lengths("cu_seqlens_k", cu_seqlens_k, max_seqlen_k, k.shape[0],
                   cu_seqlens_q.numel() - 1, q.device)
    if lengths_q is not None and lengths_q.numel() * q.shape[1] > _f._INT32_MAX:
        raise ValueError("batch * heads is too large for the kernels' grid")
    scale = _f._softmax_scale(softmax_scale, q.shape[-1])
    alibi_slopes = _f._check_alibi_slopes(alibi_slopes, cu_seqlens_q.numel() - 1, q.shape[1],
                                          q.device, softcap)
    dropout_p = _f._check_dropout_p(dropout_p, softcap, alibi_slopes)
    deterministic = _f._check_deterministic(deterministic, softcap, alibi_slopes, dropout_p)
    _f._check_device(q, "q")
    mask = _bounds(causal, window_size, causal_offset, max_seqlen_q, max_seqlen_k)
    scores = (softcap, alibi_slopes,
              *_f._dropout_seeds(dropout_p, cu_seqlens_q.numel() - 1, q.device))
    args = (q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, scale, mask,
            *scores)
    if torch.compiler.is_compiling():
        out, lse = _varlen_forward_op(*args[:8], *mask, *scores, deterministic)
    elif torch.is_grad_enabled() and (q.requires_grad or k.requires_grad or v.requires_grad):
        out, lse = FlashAttnVarlenFunction.apply(*args, deterministic)
    else:
        out, lse, _, _, _ = _varlen_forward(*args)
    if not return_lse:
        return out
    return out, _packed_lse(lse, cu_seqlens_q, q.shape[1], q.shape[0])


def flash_attn_varlen_kvpacked_func(q, kv, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                                    max_seqlen_k, dropout_p=0.0, softmax_scale=None,
                                    causal=False, window_size=(-1, -1), softcap=0.0,
                                    alibi_slopes=None, deterministic=False,
                                    return_attn_probs=False, *, return_lse=False,
                                    causal_offset=0):
    """flash_attn_varlen_func with K and V packed in one tensor, as
    FlashAttention-2's: kv (total_k, 2, heads_k, head_dim); the gradient
    comes back to kv as one tensor."""
    k, v = _f._unpack("kv", kv, 2, "(total_k, 2, heads_k, head_dim)", dim=1)
    return flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                                  max_seqlen_k, dropout_p, softmax_scale, causal, window_size,
                                  softcap, alibi_slopes, deterministic, return_attn_probs,
                                  return_lse=return_lse, causal_offset=causal_offset)


def flash_attn_varlen_qkvpacked_func(qkv, cu_seqlens, max_seqlen, dropout_p=0.0,
                                     softmax_scale=None, causal=False, window_size=(-1, -1),
                                     softcap=0.0, alibi_slopes=None, deterministic=False,
                                     return_attn_probs=False, *, return_lse=False,
                                     causal_offset=0):
    """flash_attn_varlen_func with Q, K and V packed in one tensor, as
    FlashAttention-2's: qkv (total, 3, heads, head_dim), one cu_seqlens and
    max_seqlen for the three; the gradient comes back to qkv as one
    tensor."""
    q, k, v = _f._unpack("qkv", qkv, 3, "(total, 3, heads, head_dim)", dim=1)
    return flash_attn_varlen_func(q, k, v, cu_seqlens, cu_seqlens, max_seqlen, max_seqlen,
                                  dropout_p, softmax_scale, causal, window_size, softcap,
                                  alibi_slopes, deterministic, return_attn_probs,
                                  return_lse=return_lse, causal_offset=causal_offset)
