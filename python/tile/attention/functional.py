"""flash_attn_func: Tile's attention kernels behind FlashAttention's API.

Tensors are (batch, seqlen, heads, head_dim), fp16 or bf16, on one CUDA
device.  The kernels address (Z, H, N_CTX, HEAD_DIM) tensors through
stride_z, stride_h, stride_n (in elements, last dimension contiguous), one
set shared by Q, K, V and O (dO, dQ, dK, dV in the backward): the
FlashAttention layout is passed as stride_z = q.stride(0), stride_h =
q.stride(2), stride_n = q.stride(1), with no copy.  Inputs that do not
share such a layout (different strides, a non-dense view such as a slice of
a packed qkv tensor, strides or addresses that break the kernels' 16-element
/ 16-byte promises) are copied once to contiguous tensors.

LSE is fp32 (batch, heads, seqlen), natural log, contiguous: the kernels'
[Z * H, N_CTX].

Causal attention takes an offset: query i sees key j iff j <= i +
causal_offset.  A row that sees no key gets out 0 and lse -inf, and adds
nothing to the gradients.
"""

import functools
import math
import numbers
import os

import torch

from .. import runtime
from ..runtime import DevicePointer
from . import bundle as _bundle

_ELEMENT_TYPES = {torch.float16: "fp16", torch.bfloat16: "bf16", torch.float32: "fp32"}
_SUPPORTED_DTYPES = (torch.float16, torch.bfloat16)
_INT32_MAX = 2**31 - 1

_kernel_cache = {}


def kernel_bundle():
    """The attention kernels, found once per $TILE_KERNEL_DIR value."""
    key = os.environ.get(_bundle.KERNEL_DIR_VARIABLE)
    if key not in _kernel_cache:
        _kernel_cache[key] = _bundle.KernelBundle.discover()
    return _kernel_cache[key]


def _cdiv(a, b):
    return -(-a // b)


# --------------------------------------------------------------------------
# Argument checking
# --------------------------------------------------------------------------

def _check_tensors(named):
    """Type, rank, shape, dtype and same-device checks shared by the forward
    and the backward.  `named` is a list of (name, tensor); the first sets
    the shape that the rest must have."""
    for name, t in named:
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, not {type(t).__name__}")
    for name, t in named:
        if t.dim() != 4:
            raise ValueError(f"{name} must have 4 dimensions (batch, seqlen, heads, "
                             f"head_dim), but its shape is {tuple(t.shape)}")
    for name, t in named:
        if t.shape[-1] == 0:
            raise ValueError(f"{name} has head_dim 0 (shape {tuple(t.shape)}): the "
                             f"head dimension must be positive")
    first_name, first = named[0]
    for name, t in named[1:]:
        if t.shape != first.shape:
            raise ValueError(
                f"{first_name} and {name} must have the same shape (batch, seqlen, "
                f"heads, head_dim), but {first_name} is {tuple(first.shape)} and "
                f"{name} is {tuple(t.shape)} (different key lengths and grouped "
                f"heads are not supported)")
    for name, t in named:
        if t.dtype not in _SUPPORTED_DTYPES:
            raise TypeError(f"{name} is {t.dtype}: Tile's attention kernels take "
                            f"torch.float16 or torch.bfloat16 (convert with .half() or "
                            f".bfloat16())")
    for name, t in named[1:]:
        if t.dtype != first.dtype:
            raise TypeError(f"{first_name} is {first.dtype} but {name} is {t.dtype}: "
                            f"they must have one dtype")
    for name, t in named[1:]:
        if t.device != first.device:
            raise ValueError(f"{first_name} is on {first.device} but {name} is on "
                             f"{t.device}: they must be on one device")


def _check_device(tensor, name):
    if tensor.device.type != "cuda":
        raise ValueError(f"{name} is on {tensor.device}: Tile's attention kernels "
                         f"run on CUDA devices (move the tensors with .cuda())")


def _softmax_scale(softmax_scale, head_dim):
    if softmax_scale is None:
        return 1.0 / math.sqrt(head_dim)
    if isinstance(softmax_scale, bool) or not isinstance(softmax_scale, (int, float)):
        raise TypeError(f"softmax_scale must be a number or None, not "
                        f"{type(softmax_scale).__name__}")
    # The kernels take the row max before scaling, which keeps the order of
    # the scores only for a positive scale.
    if not math.isfinite(softmax_scale) or softmax_scale <= 0:
        raise ValueError(f"softmax_scale must be positive and finite, not "
                         f"{softmax_scale}")
    return float(softmax_scale)


def _check_flag(name, value):
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, not {value!r}")
    return value


def _check_causal_offset(value):
    # bool is an int in Python, but True here is surely a mix-up with causal.
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"causal_offset must be an int, not {value!r}")
    return int(value)


def _kernel_causal_offset(causal, causal_offset, seqlen):
    """The i32 the kernels get: 0 when not causal (they ignore it), else the
    offset clamped to [-seqlen, seqlen], which changes nothing (beyond
    those bounds every row sees every key, or none) and keeps any Python
    int in range."""
    if not causal:
        return 0
    return max(-seqlen, min(seqlen, causal_offset))


# --------------------------------------------------------------------------
# Layout: one set of strides the kernels accept
# --------------------------------------------------------------------------

def _is_dense(tensor):
    """True when the tensor's elements fill its extent exactly (a permuted
    contiguous tensor), so that an output with its strides can be made."""
    if tensor.is_contiguous():
        return True
    expected = 1
    for size, stride in sorted(zip(tensor.shape, tensor.stride()), key=lambda p: p[1]):
        if size == 1:
            continue
        if stride != expected:
            return False
        expected *= size
    return True


def kernel_strides(tensor):
    """(stride_z, stride_h, stride_n) of a (batch, seqlen, heads, head_dim)
    tensor.  The stride of a dimension of size 1 never multiplies a
    non-zero index, so it is passed as 0 (it may be anything in PyTorch)."""
    def stride(dim):
        return tensor.stride(dim) if tensor.shape[dim] > 1 else 0
    return stride(0), stride(2), stride(1)


@functools.cache
def _requirements(spec):
    """The alignment (bytes) of pointers and the multiple of strides a
    kernel was compiled for, from its manifest."""
    alignment = max([p.divisibility for p in spec.params if p.is_pointer], default=1)
    multiple = max([p.divisibility for p in spec.params
                    if p.name.startswith("stride_")], default=1)
    return alignment, multiple


def _fits(tensor, spec, strides=None):
    alignment, multiple = _requirements(spec)
    return (tensor.data_ptr() % alignment == 0 and (tensor.shape[-1] == 1 or tensor.stride(-1) == 1)
            and all(s % multiple == 0 for s in strides or kernel_strides(tensor)))


def shares_kernel_layout(tensors, spec):
    """True when the tensors can go to the kernel as they are: one set of
    strides, dense, aligned and divisible as the kernel was compiled for."""
    strides = kernel_strides(tensors[0])
    return all(kernel_strides(t) == strides and _is_dense(t) and _fits(t, spec, strides)
               for t in tensors)


def to_kernel_layout(tensors, spec):
    """The tensors themselves when they share a layout the kernel accepts,
    else contiguous copies (the documented copy)."""
    if shares_kernel_layout(tensors, spec):
        return list(tensors)
    return [t if t.is_contiguous() and _fits(t, spec)
            else t.clone(memory_format=torch.contiguous_format) for t in tensors]


def _empty_like_layout(tensor, dtype=None):
    return torch.empty_strided(tensor.shape, tensor.stride(), dtype=dtype or tensor.dtype,
                               device=tensor.device)


@functools.cache
def _largest_block(specs):
    return max(v for s in specs for k, v in s.constexprs.items()
               if k.startswith("BLOCK") and isinstance(v, int) and not isinstance(v, bool))


def _check_index_range(tensor, specs, strides=None):
    """The kernels index within a head in i32: the padded sequence times
    stride_n must stay below 2^31, and every stride must fit in i32."""
    batch, seqlen, heads, head_dim = tensor.shape
    block = _largest_block(tuple(specs))
    padded = _cdiv(seqlen, block) * block
    stride_z, stride_h, stride_n = strides or kernel_strides(tensor)
    extent = padded * stride_n + head_dim
    if max(stride_z, stride_h, extent, batch * heads) > _INT32_MAX:
        raise ValueError(
            f"shape {tuple(tensor.shape)} is too large for the kernels' 32-bit "
            f"indexing (strides {tensor.stride()}, per-head extent {extent}): split "
            f"the batch or the sequence")


def _device_pointer(tensor):
    return DevicePointer(tensor.data_ptr(), _ELEMENT_TYPES[tensor.dtype])


_current_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def _stream(device):
    """The raw handle of PyTorch's current stream on `device`, which the
    kernels of one call share.  torch.cuda.current_stream builds a Stream
    object (several microseconds); the raw lookup Triton's launcher uses
    does not, where this PyTorch has it."""
    if _current_raw_stream is not None:
        return _current_raw_stream(device.index)
    return torch.cuda.current_stream(device).cuda_stream


def _launch_all(device, launches):
    """Launches each (kernel, values by parameter name) in order on
    PyTorch's current stream of `device`: the runtime binds the values,
    checks them (all before the first launch) and computes each grid from
    the kernel's launch spec."""
    runtime.launch_all(launches, device.index, _stream(device))


# --------------------------------------------------------------------------
# Forward and backward (per block: ring attention calls these directly)
# --------------------------------------------------------------------------

def _forward(q, k, v, causal, scale, causal_offset=0):
    """Returns (out, lse, q, k, v) with q, k, v as the kernel read them."""
    head_dim = q.shape[-1]
    element_type = _ELEMENT_TYPES[q.dtype]
    spec = kernel_bundle().select(_bundle.FORWARD, element_type, head_dim, causal,
                                  seq_len=q.shape[1])
    q, k, v = to_kernel_layout([q, k, v], spec)
    batch, seqlen, heads, _ = q.shape
    out = _empty_like_layout(q)
    lse = torch.empty((batch, heads, seqlen), dtype=torch.float32, device=q.device)
    if q.numel() == 0:
        return out, lse, q, k, v
    strides = kernel_strides(q)
    _check_index_range(q, [spec], strides)
    stride_z, stride_h, stride_n = strides
    values = {"Q": _device_pointer(q), "K": _device_pointer(k),
              "V": _device_pointer(v), "O": _device_pointer(out),
              "LSE": _device_pointer(lse), "sm_scale": scale,
              "stride_z": stride_z, "stride_h": stride_h, "stride_n": stride_n,
              "Z": batch, "H": heads, "N_CTX": seqlen,
              "causal_offset": _kernel_causal_offset(causal, causal_offset, seqlen)}
    _launch_all(q.device, [(spec, values)])
    return out, lse, q, k, v


def _flash_attn_forward(q, k, v, causal, softmax_scale, causal_offset=0):
    """One attention block: (out, lse), out (batch, seqlen, heads, head_dim)
    in q's dtype, lse (batch, heads, seqlen) fp32 in natural log.  With
    causal, query i sees key j iff j <= i + causal_offset; rows that see no
    key get out 0 and lse -inf.  No autograd."""
    _check_tensors([("q", q), ("k", k), ("v", v)])
    causal = _check_flag("causal", causal)
    causal_offset = _check_causal_offset(causal_offset)
    scale = _softmax_scale(softmax_scale, q.shape[-1])
    _check_device(q, "q")
    out, lse, _, _, _ = _forward(q, k, v, causal, scale, causal_offset)
    return out, lse


def _flash_attn_backward(dout, q, k, v, out, lse, causal, softmax_scale,
                         causal_offset=0):
    """Gradients (dq, dk, dv) of one attention block, given the output and
    the log-sum-exp the rows were normalised with (for ring attention, the
    merged ones; -inf for a row that saw no key, which then gets zero
    gradients).  dk comes out of the kernel already scaled by the softmax
    scale.  causal_offset as in _flash_attn_forward.  No autograd."""
    _check_tensors([("q", q), ("k", k), ("v", v), ("out", out), ("dout", dout)])
    causal = _check_flag("causal", causal)
    causal_offset = _check_causal_offset(causal_offset)
    batch, seqlen, heads, head_dim = q.shape
    if not isinstance(lse, torch.Tensor):
        raise TypeError(f"lse must be a torch.Tensor, not {type(lse).__name__}")
    if tuple(lse.shape) != (batch, heads, seqlen) or lse.dtype != torch.float32:
        raise ValueError(f"lse must be float32 of shape {(batch, heads, seqlen)} "
                         f"(batch, heads, seqlen), not {lse.dtype} {tuple(lse.shape)}")
    if lse.device != q.device:
        raise ValueError(f"lse is on {lse.device} but q is on {q.device}")
    scale = _softmax_scale(softmax_scale, head_dim)
    _check_device(q, "q")
    return _backward(dout, q, k, v, out, lse, causal, scale, causal_offset)


def _backward(dout, q, k, v, out, lse, causal, scale, causal_offset):
    """_flash_attn_backward's work, on arguments already checked (by it, or
    by the forward whose saved tensors these are: autograd hands in a dout
    of out's shape, dtype and device)."""
    batch, seqlen, heads, head_dim = q.shape
    element_type = _ELEMENT_TYPES[q.dtype]
    kernels = kernel_bundle()
    preprocess = kernels.select(_bundle.PREPROCESS, element_type, head_dim)
    backward = kernels.select(_bundle.BACKWARD, element_type, head_dim, causal)
    postprocess = kernels.select(_bundle.POSTPROCESS, element_type, head_dim)

    q, k, v, out = to_kernel_layout([q, k, v, out], backward)
    if not shares_kernel_layout([q, dout], backward):
        dout = _empty_like_layout(q).copy_(dout)   # e.g. an expanded gradient
    lse = lse.contiguous()
    dq, dk, dv = (_empty_like_layout(q) for _ in range(3))
    if q.numel() == 0:
        return dq, dk, dv
    strides = kernel_strides(q)
    _check_index_range(q, [preprocess, backward, postprocess], strides)
    delta = torch.empty_like(lse)
    # dQ / softmax_scale accumulates here in fp32 (the preprocess kernel
    # zeros it, attn_bwd adds to it, the postprocess kernel scales it into dq).
    dq_accumulator = torch.empty((batch * heads, seqlen, head_dim), dtype=torch.float32,
                                 device=q.device)
    stride_z, stride_h, stride_n = strides
    shape_args = {"stride_z": stride_z, "stride_h": stride_h, "stride_n": stride_n,
                  "Z": batch, "H": heads, "N_CTX": seqlen}
    offset = _kernel_causal_offset(causal, causal_offset, seqlen)
    _launch_all(q.device, [
        (preprocess, {"O": _device_pointer(out), "DO": _device_pointer(dout),
                      "DELTA": _device_pointer(delta),
                      "DQ_ACC": _device_pointer(dq_accumulator), **shape_args}),
        (backward, {"Q": _device_pointer(q), "K": _device_pointer(k),
                    "V": _device_pointer(v), "sm_scale": scale,
                    "DO": _device_pointer(dout),
                    "DQ_ACC": _device_pointer(dq_accumulator),
                    "DK": _device_pointer(dk), "DV": _device_pointer(dv),
                    "LSE": _device_pointer(lse), "DELTA": _device_pointer(delta),
                    "causal_offset": offset, **shape_args}),
        (postprocess, {"DQ": _device_pointer(dq),
                       "DQ_ACC": _device_pointer(dq_accumulator),
                       "sm_scale": scale, **shape_args})])
    return dq, dk, dv


class FlashAttnFunction(torch.autograd.Function):
    """Tile's forward kernel; its backward runs the preprocess, backward and
    postprocess kernels."""

    @staticmethod
    def forward(ctx, q, k, v, causal, scale, return_lse, causal_offset=0):
        out, lse, q, k, v = _forward(q, k, v, causal, scale, causal_offset)
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.causal = causal
        ctx.scale = scale
        ctx.causal_offset = causal_offset
        if return_lse:
            ctx.mark_non_differentiable(lse)
            return out, lse
        return out

    @staticmethod
    def backward(ctx, dout, *unused_dlse):
        q, k, v, out, lse = ctx.saved_tensors
        dq, dk, dv = _backward(dout, q, k, v, out, lse, ctx.causal, ctx.scale,
                               ctx.causal_offset)
        return dq, dk, dv, None, None, None, None


# --------------------------------------------------------------------------
# torch.compile: the forward and backward as PyTorch custom ops
# --------------------------------------------------------------------------
#
# Dynamo cannot trace the launch path (data_ptr() and the runtime), so under
# torch.compile flash_attn_func calls these opaque ops instead, with fake
# implementations for tracing and the backward registered as the forward's
# autograd formula.  Their outputs' layouts must follow from the inputs'
# metadata alone: out, dq, dk, dv are laid out as torch.empty_like(q, k, v)
# would be (the kernels' own choice, unless an input had to be copied).

def _in_layout_of(tensor, like):
    """`tensor`, or a copy of it, with the strides torch.empty_like(like)
    gives."""
    want = torch.empty_like(like, device="meta").stride()
    if tensor.stride() == want:
        return tensor
    return torch.empty_like(like).copy_(tensor)


@torch.library.custom_op("tile::flash_attn_forward", mutates_args=())
def _forward_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool,
                scale: float, causal_offset: int) -> tuple[torch.Tensor, torch.Tensor]:
    out, lse, _, _, _ = _forward(q, k, v, causal, scale, causal_offset)
    return _in_layout_of(out, q), lse


@_forward_op.register_fake
def _forward_fake(q, k, v, causal, scale, causal_offset):
    batch, seqlen, heads, _ = q.shape
    return torch.empty_like(q), q.new_empty((batch, heads, seqlen), dtype=torch.float32)


@torch.library.custom_op("tile::flash_attn_backward", mutates_args=())
def _backward_op(dout: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                 out: torch.Tensor, lse: torch.Tensor, causal: bool, scale: float,
                 causal_offset: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    dq, dk, dv = _backward(dout, q, k, v, out, lse, causal, scale, causal_offset)
    return _in_layout_of(dq, q), _in_layout_of(dk, k), _in_layout_of(dv, v)


@_backward_op.register_fake
def _backward_fake(dout, q, k, v, out, lse, causal, scale, causal_offset):
    return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)


def _forward_op_setup_context(ctx, inputs, output):
    q, k, v, causal, scale, causal_offset = inputs
    out, lse = output
    ctx.save_for_backward(q, k, v, out, lse)
    ctx.causal, ctx.scale, ctx.causal_offset = causal, scale, causal_offset
    ctx.mark_non_differentiable(lse)


def _forward_op_backward(ctx, dout, unused_dlse):
    q, k, v, out, lse = ctx.saved_tensors
    dq, dk, dv = _backward_op(dout, q, k, v, out, lse, ctx.causal, ctx.scale,
                              ctx.causal_offset)
    return dq, dk, dv, None, None, None


_forward_op.register_autograd(_forward_op_backward, setup_context=_forward_op_setup_context)


def _check_fa2_options(dropout_p, window_size, softcap, alibi_slopes, deterministic,
                       return_attn_probs, causal):
    """FlashAttention-2's options Tile's kernels do not have yet: accepted at
    the values that mean "off", refused with NotImplementedError otherwise
    (never ignored: each changes the result)."""
    if isinstance(dropout_p, bool) or not isinstance(dropout_p, numbers.Real):
        raise TypeError(f"dropout_p must be a number, not {dropout_p!r}")
    if not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"dropout_p must be in [0, 1), not {dropout_p}")
    if dropout_p != 0.0:
        raise NotImplementedError(
            f"dropout_p={dropout_p}: Tile's attention kernels have no dropout yet; "
            f"pass dropout_p=0.0 (the default; FlashAttention's evaluation setting)")
    if (not isinstance(window_size, (tuple, list)) or len(window_size) != 2
            or not all(isinstance(w, numbers.Integral) and not isinstance(w, bool)
                       for w in window_size)):
        raise TypeError(f"window_size must be a pair of ints (left, right), -1 for no "
                        f"limit, not {window_size!r}")
    left, right = window_size
    # FlashAttention: a negative side is unlimited, and causal sets right = 0.
    if left >= 0 or (right >= 0 and not causal):
        raise NotImplementedError(
            f"window_size={tuple(window_size)}: Tile's attention kernels have no "
            f"sliding window yet; pass window_size=(-1, -1) (the default)")
    if isinstance(softcap, bool) or not isinstance(softcap, numbers.Real):
        raise TypeError(f"softcap must be a number, not {softcap!r}")
    if softcap != 0.0:
        raise NotImplementedError(f"softcap={softcap}: Tile's attention kernels have no "
                                  f"score capping yet; pass softcap=0.0 (the default)")
    if alibi_slopes is not None:
        raise NotImplementedError("alibi_slopes: Tile's attention kernels have no ALiBi "
                                  "yet; pass alibi_slopes=None (the default)")
    if _check_flag("deterministic", deterministic):
        raise NotImplementedError(
            "deterministic=True: Tile's backward adds dQ with atomics, whose order "
            "varies from run to run; it has no deterministic mode yet")
    if _check_flag("return_attn_probs", return_attn_probs):
        raise NotImplementedError(
            "return_attn_probs=True: Tile does not return attention probabilities; "
            "return_lse=True returns the log-sum-exp of each row")


def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False,
                    window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                    deterministic=False, return_attn_probs=False, *, return_lse=False,
                    causal_offset=0):
    """Scaled dot-product attention with Tile's FlashAttention kernels, with
    FlashAttention-2's signature: flash_attn_func(q, k, v, 0.0, None, True)
    is causal attention.

    q, k, v: (batch, seqlen, heads, head_dim) fp16 or bf16 CUDA tensors of
    one shape, dtype and device; head_dim one the bundle has kernels for
    (64 and 128).  causal: key j is visible to query i iff j <= i +
    causal_offset.  softmax_scale: defaults to 1 / sqrt(head_dim).
    dropout_p, window_size, softcap, alibi_slopes, deterministic and
    return_attn_probs are accepted at their defaults ("off") and refused
    otherwise with NotImplementedError.  Keyword-only, beyond
    FlashAttention's: return_lse, to return lse (batch, heads, seqlen) fp32,
    natural log (not differentiable), after out; causal_offset, an int, 0
    by default, any sign, ignored when not causal.  A row that sees no key
    (i + causal_offset < 0) gets out 0, lse -inf and zero gradients.
    Returns out (batch, seqlen, heads, head_dim).  Differentiable in q, k
    and v; runs on PyTorch's current stream; under torch.compile it is the
    custom op tile::flash_attn_forward (no graph break).
    """
    _check_tensors([("q", q), ("k", k), ("v", v)])
    causal = _check_flag("causal", causal)
    _check_fa2_options(dropout_p, window_size, softcap, alibi_slopes, deterministic,
                       return_attn_probs, causal)
    return_lse = _check_flag("return_lse", return_lse)
    causal_offset = _check_causal_offset(causal_offset)
    scale = _softmax_scale(softmax_scale, q.shape[-1])
    _check_device(q, "q")
    if torch.compiler.is_compiling():
        out, lse = _forward_op(q, k, v, causal, scale, causal_offset)
        return (out, lse) if return_lse else out
    if not (torch.is_grad_enabled()
            and (q.requires_grad or k.requires_grad or v.requires_grad)):
        # Nothing to differentiate: the kernel alone, without autograd's
        # bookkeeping (about 10 us of host time a call).
        out, lse, _, _, _ = _forward(q, k, v, causal, scale, causal_offset)
        return (out, lse) if return_lse else out
    return FlashAttnFunction.apply(q, k, v, causal, scale, return_lse, causal_offset)
