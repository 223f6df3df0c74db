"""flash_attn_func: Tile's attention kernels behind FlashAttention-2's API.

Tensors are (batch, seqlen, heads, head_dim), fp16 or bf16, on one CUDA
device: q (batch, seqlen_q, heads, head_dim) and k, v (batch, seqlen_k,
heads_k, head_dim), heads_k dividing heads (grouped-query attention; query
head h reads K/V head h // (heads // heads_k)).  The kernels address
Q and O (dO, dQ in the backward) through one set of strides stride_z,
stride_h, stride_n (elements, last dimension contiguous), and K and V
through another, stride_kz, stride_kh, stride_kn: the FlashAttention layout
is passed as stride_z = q.stride(0), stride_h = q.stride(2), stride_n =
q.stride(1), with no copy.  A group that does not fit (different strides
within it, strides or addresses that break the kernels' 16-element /
16-byte promises; for q, a non-dense view such as a slice of a packed qkv
tensor, since out is made with q's strides) is copied once to contiguous
tensors.

LSE is fp32 (batch, heads, seqlen_q), natural log, contiguous: the kernels'
[Z * H, N_CTX].

Masks, FlashAttention's, aligned bottom-right: with shift = seqlen_k -
seqlen_q + causal_offset, causal keeps key j for query i iff j <= i +
shift, and window_size (left, right) keeps j >= i + shift - left (left >=
0) and j <= i + shift + right (right >= 0).  The kernels take the same
bounds as two offsets aligned top-left (causal_offset: j <= i + offset;
window_offset: j >= i + offset), which _forward and _backward take too.
A row that sees no key gets out 0 and lse -inf, and adds nothing to the
gradients.
"""

import functools
import math
import numbers
import os
import typing

import torch

from .. import runtime
from ..kernels.attention import stats_stride
from ..runtime import DevicePointer
from . import bundle as _bundle
from .plan import PlanCache

_ELEMENT_TYPES = {torch.float16: "fp16", torch.bfloat16: "bf16", torch.float32: "fp32",
                  torch.int32: "i32", torch.int64: "i64"}
_SUPPORTED_DTYPES = (torch.float16, torch.bfloat16)
_INT32_MAX = 2**31 - 1

# $TILE_KERNEL_DIR's value -> (its KernelBundle, the launch plans of its
# kernels).
_kernel_cache = {}


def _kernels_and_plans():
    key = os.environ.get(_bundle.KERNEL_DIR_VARIABLE)
    found = _kernel_cache.get(key)
    if found is None:
        found = _kernel_cache[key] = (_bundle.KernelBundle.discover(), PlanCache())
    return found


def kernel_bundle():
    """The attention kernels, found once per $TILE_KERNEL_DIR value."""
    return _kernels_and_plans()[0]


def _launch_plans():
    """The launch plans made from kernel_bundle()'s kernels (plan.py)."""
    return _kernels_and_plans()[1]


@functools.cache
def _cuda_capability(index):
    return torch.cuda.get_device_capability(index)


def device_capability(device):
    """(major, minor) of a CUDA device, whose kernels' target the runtime
    chooses by it; None for the CPU (the interpreter)."""
    if device.type != "cuda":
        return None
    return _cuda_capability(device.index if device.index is not None
                            else torch.cuda.current_device())


def _cdiv(a, b):
    return -(-a // b)


# --------------------------------------------------------------------------
# Argument checking
# --------------------------------------------------------------------------

def _shape_error(first_name, first, name, tensor, dims):
    return ValueError(f"{first_name} and {name} must have the same shape {dims}, but "
                      f"{first_name} is {tuple(first.shape)} and {name} is "
                      f"{tuple(tensor.shape)}")


def _check_tensors(queries, keys=()):
    """Type, rank, shape, dtype and same-device checks shared by the forward
    and the backward.  `queries` is a list of (name, tensor) of q's shape
    (q, out, dout), `keys` of k's (k, v): k and v share one shape, of q's
    batch and head_dim, with a number of heads that divides q's (grouped
    and multi-query attention); the key length is free."""
    named = [*queries, *keys]
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
    for name, t in queries[1:]:
        if t.shape != first.shape:
            raise _shape_error(first_name, first, name, t,
                               "(batch, seqlen_q, heads, head_dim)")
    if keys:
        _check_key_shapes(first_name, first, keys)
    check_dtypes_and_devices(named)


def check_dtypes_and_devices(named, kernels="attention"):
    """The (name, tensor) pairs are fp16 or bf16, all of the first's dtype
    and on its device; `kernels` names the kernels in the error."""
    first_name, first = named[0]
    for name, t in named:
        if t.dtype not in _SUPPORTED_DTYPES:
            raise TypeError(f"{name} is {t.dtype}: Tile's {kernels} kernels take "
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


def _check_key_shapes(q_name, q, keys):
    """k and v against q: FlashAttention-2's shape rules."""
    (k_name, k), *others = keys
    for name, t in others:
        if t.shape != k.shape:
            raise _shape_error(k_name, k, name, t, "(batch, seqlen_k, heads_k, head_dim)")
    shapes = f"{q_name} is {tuple(q.shape)} and {k_name} is {tuple(k.shape)}"
    if k.shape[0] != q.shape[0]:
        raise ValueError(f"{q_name} and {k_name} must have the same batch size (dimension "
                         f"0 of (batch, seqlen, heads, head_dim)), but {shapes}")
    if k.shape[3] != q.shape[3]:
        raise ValueError(f"{q_name} and {k_name} must have the same head_dim (dimension "
                         f"3 of (batch, seqlen, heads, head_dim)), but {shapes}")
    heads, heads_k = q.shape[2], k.shape[2]
    if heads_k == 0 or heads % heads_k:
        kv_names = " and ".join(name for name, _ in keys)
        raise ValueError(f"{kv_names} have {heads_k} heads, which does not divide the "
                         f"{heads} heads of {q_name} (grouped-query attention shares each "
                         f"K/V head among heads_q / heads_k query heads): {shapes}")


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


class KernelMask(typing.NamedTuple):
    """What the kernels are given for a mask: the CAUSAL and WINDOW keys of
    the variant, and the two offsets (i32, both passed to every variant)."""
    causal: bool
    window: bool
    causal_offset: int
    window_offset: int


def _clamp(offset, seqlen_q, seqlen_k):
    # Past these bounds a bound hides every key or none, and so it does at
    # them: clamping changes nothing and keeps any Python int within i32.
    return max(-seqlen_q, min(seqlen_k, offset))


def _kernel_mask(causal, causal_offset, window_offset, seqlen_q, seqlen_k):
    """The variant and offsets for query i seeing key j iff j <= i +
    causal_offset (when causal) and j >= i + window_offset (when not None).
    A bound that hides no key is dropped, for a variant with fewer masks
    and the same result: the upper bound once it is at least seqlen_k - 1
    (row 0 sees every key), the lower bound once at most 1 - seqlen_q (the
    last row does).  A lower bound alone runs the local variant with the
    upper bound at seqlen_k, which hides nothing."""
    upper = causal_offset if causal else None
    lower = window_offset
    if upper is not None and upper >= seqlen_k - 1:
        upper = None
    if lower is not None and lower <= 1 - seqlen_q:
        lower = None
    if lower is not None:
        upper = seqlen_k if upper is None else upper
        return KernelMask(True, True, _clamp(upper, seqlen_q, seqlen_k),
                          _clamp(lower, seqlen_q, seqlen_k))
    if upper is not None:
        return KernelMask(True, False, _clamp(upper, seqlen_q, seqlen_k), 0)
    return KernelMask(False, False, 0, 0)


def window_bounds(causal, window_size, diagonal):
    """FlashAttention-2's causal flag and window_size as bounds on the key
    j a query i sees: (upper, lower), j <= i + upper and j >= i + lower,
    None where unbounded, around the diagonal j = i + diagonal.  causal
    sets the window's right side to 0, as in FlashAttention; a negative
    side is unlimited."""
    left, right = window_size
    if causal:
        right = 0
    return (diagonal + right if right >= 0 else None,
            diagonal - left if left >= 0 else None)


def _flash_attn_bounds(causal, window_size, causal_offset, seqlen_q, seqlen_k):
    """FlashAttention-2's mask as the kernels' top-left bounds: (causal,
    causal_offset, window_offset), window_offset None for no lower bound.
    Bottom-right alignment: the diagonal of the last query is the last key,
    moved by causal_offset."""
    upper, lower = window_bounds(causal, window_size, seqlen_k - seqlen_q + causal_offset)
    upper = None if upper is None else _clamp(upper, seqlen_q, seqlen_k)
    lower = None if lower is None else _clamp(lower, seqlen_q, seqlen_k)
    return upper is not None, 0 if upper is None else upper, lower


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


def _broadcasts(tensor):
    """True when a dimension of more than one element has stride 0 (an
    expanded tensor): rows that alias one another."""
    return any(size > 1 and stride == 0 for size, stride in zip(tensor.shape, tensor.stride()))


def shares_kernel_layout(tensors, spec, dense=True):
    """True when the tensors can go to the kernel as they are: one set of
    strides, aligned and divisible as the kernel was compiled for, and
    dense where an output is made with these strides (q: out and dq share
    its strides).  Tensors the kernels only read (dense=False: k and v, whose
    gradients have strides of their own) may be views with gaps, such as the
    halves of a packed kv tensor; broadcast ones are still copied (a zero
    stride along rows is no layout the kernels' bulk copies are checked
    with)."""
    strides = kernel_strides(tensors[0])
    return all(kernel_strides(t) == strides and _fits(t, spec, strides)
               and (_is_dense(t) if dense else not _broadcasts(t)) for t in tensors)


def to_kernel_layout(tensors, spec, dense=True):
    """The tensors themselves when they share a layout the kernel accepts,
    else contiguous copies (the documented copy).  The tensors have one
    shape, so contiguous ones share their strides."""
    if shares_kernel_layout(tensors, spec, dense):
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


def _check_index_range(tensor, specs, strides=None, name="q"):
    """The kernels index within a head in i32: the padded sequence times
    stride_n must stay below 2^31, and every stride must fit in i32."""
    batch, seqlen, heads, head_dim = tensor.shape
    block = _largest_block(tuple(specs))
    padded = _cdiv(seqlen, block) * block
    stride_z, stride_h, stride_n = strides or kernel_strides(tensor)
    extent = padded * stride_n + head_dim
    if max(stride_z, stride_h, extent, batch * heads) > _INT32_MAX:
        raise ValueError(
            f"{name} of shape {tuple(tensor.shape)} is too large for the kernels' 32-bit "
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


def _same(tensors, others):
    """True when the kernels got the caller's tensors themselves (no copy)."""
    return all(a is b for a, b in zip(tensors, others))


def _launch_all(device, launches):
    """Launches each (kernel, values by parameter name) in order on
    PyTorch's current stream of `device`: the runtime binds the values,
    checks them (all before the first launch) and computes each grid from
    the kernel's launch spec."""
    runtime.launch_all(launches, device.index, _stream(device))


# --------------------------------------------------------------------------
# Forward and backward (per block: ring attention calls these directly)
# --------------------------------------------------------------------------

def _shape_values(q, k):
    """The shape and stride values every kernel of a call takes: q's
    (stride_z, stride_h, stride_n, Z, H, N_CTX, CU_SEQLENS_Q, MAX_N_CTX,
    VARLEN) and, for attn_fwd and attn_bwd, k's (stride_kz, stride_kh,
    stride_kn, H_KV, N_KV, CU_SEQLENS_K; attn_bwd also takes MAX_N_KV).
    Not packed (VARLEN 0), the kernels read an int32 at each cu_seqlens
    pointer and multiply it by 0: q's and k's first elements serve."""
    batch, seqlen_q, heads, _ = q.shape
    stride_z, stride_h, stride_n = kernel_strides(q)
    queries = {"stride_z": stride_z, "stride_h": stride_h, "stride_n": stride_n,
               "Z": batch, "H": heads, "N_CTX": seqlen_q,
               "CU_SEQLENS_Q": DevicePointer(q.data_ptr(), "i32"), "MAX_N_CTX": seqlen_q,
               "VARLEN": 0}
    stride_kz, stride_kh, stride_kn = kernel_strides(k)
    keys = {"stride_kz": stride_kz, "stride_kh": stride_kh, "stride_kn": stride_kn,
            "H_KV": k.shape[2], "N_KV": k.shape[1],
            "CU_SEQLENS_K": DevicePointer(k.data_ptr(), "i32")}
    return queries, keys


# The most programs a grid's y (and z) dimension holds: the kernels put
# batch x heads there.
GRID_YZ_MAX = 65535


def _batch_parts(batch, heads):
    """Slices of the batch each launched on its own, so that batch x heads
    fits a grid (one sequence with more heads than that is refused by the
    runtime, by name).  Parts start at multiples of 4 sequences: the fp32
    rows of LSE and DELTA start 16-byte aligned, as the kernels need."""
    fits = max(1, GRID_YZ_MAX // heads)
    step = fits // 4 * 4 or fits
    return [slice(start, min(start + step, batch)) for start in range(0, batch, step)]


def _score_values(softcap, alibi_slopes, dropout_p, dropout_seeds, part, lse):
    """attn_fwd's and attn_bwd's arguments that change the scores and
    probabilities, for the batch part `part` (a slice of the sequences):
    the cap, ALiBi's slopes and dropout's probability and seeds, one a
    sequence.  A pointer the kernel does not read (no ALiBi, no dropout)
    is lse's address."""
    unread = lse[part]
    return {"softcap": softcap, "dropout_p": dropout_p,
            "ALIBI_SLOPES": _device_pointer(unread if alibi_slopes is None
                                            else alibi_slopes[part]),
            "DROPOUT_SEEDS": DevicePointer(unread.data_ptr(), "i64") if dropout_seeds is None
            else _device_pointer(dropout_seeds[part])}


def backward_statistics(lse, max_n_ctx):
    """The backward's LSE_LOG2 and DELTA for the forward's lse, whose rows
    hold max_n_ctx queries: fp32 of lse's leading shape, rows of
    stats_stride(max_n_ctx) (64-byte aligned, for the TMA), which the
    preprocess kernel fills."""
    shape = (*lse.shape[:-1], stats_stride(max_n_ctx))
    return tuple(torch.empty(shape, dtype=torch.float32, device=lse.device) for _ in range(2))


def _dq_values(deterministic, dq, accumulator, scale, queries, dq_inputs):
    """The arguments of the backward's last kernel, which writes dq: the
    postprocess's (from the accumulator attn_bwd added to), or
    deterministic, attn_bwd_dq's (dq_inputs(): the tensors, K's shape and
    the mask it recomputes dS from; built only then)."""
    values = {"DQ": _device_pointer(dq), "sm_scale": scale, **queries}
    if deterministic:
        return {**values, **dq_inputs()}
    return {**values, "DQ_ACC": accumulator}


def _mask_values(mask):
    return {"causal_offset": mask.causal_offset, "window_offset": mask.window_offset}


def dq_accumulator_for(preprocess, heads, seqlen, device):
    """dQ / softmax_scale's fp32 accumulator for (heads, seqlen) queries:
    the preprocess kernel zeros it, attn_bwd adds to it, the postprocess
    kernel scales it into dq.  Its rows are the kernels' blocks' width
    (BLOCK_D: the head dim, or the wider one a ragged head dim runs on)."""
    return torch.empty((heads, seqlen, _bundle.block_width(preprocess.constexprs)),
                       dtype=torch.float32, device=device)


def _kernel_head_dim(family, like):
    """The head dim of the `family` kernels that run on tensor `like`'s
    head dim, dtype and device (KernelBundle.kernel_head_dim): its own, or
    a larger one that the tensors go padded to."""
    return kernel_bundle().kernel_head_dim(family, _ELEMENT_TYPES[like.dtype], like.shape[-1],
                                           device_capability(like.device))


def smallest_kernel_dim(head_dim, dims, kernels):
    """The smallest of the (ascending) kernel head dims `dims` at least
    head_dim; `kernels` names the kernels in the error."""
    for dim in dims:
        if dim >= head_dim:
            return dim
    raise ValueError(f"head_dim {head_dim}: {kernels} kernels take head dims "
                     f"{list(dims)} (smaller ones padded to the next)")


def _pad_head_dim(tensors, head_dim):
    """The tensors with their last dimension zero-padded to head_dim."""
    return [t if t.shape[-1] == head_dim
            else torch.nn.functional.pad(t, (0, head_dim - t.shape[-1])) for t in tensors]


def _forward(q, k, v, causal, scale, causal_offset=0, window_offset=None, softcap=0.0,
             alibi_slopes=None, dropout_p=0.0, dropout_seeds=None):
    """_forward_kernels on q, k, v padded to the kernels' head dim
    (_kernel_head_dim), out cut back to q's."""
    head_dim = q.shape[-1]
    padded = _kernel_head_dim(_bundle.FORWARD, q)
    if padded == head_dim:
        return _forward_kernels(q, k, v, causal, scale, causal_offset, window_offset, softcap,
                                alibi_slopes, dropout_p, dropout_seeds)
    q, k, v = _pad_head_dim((q, k, v), padded)
    out, lse, q, k, v = _forward_kernels(q, k, v, causal, scale, causal_offset, window_offset,
                                         softcap, alibi_slopes, dropout_p, dropout_seeds)
    return out[..., :head_dim].contiguous(), lse, q, k, v


def _forward_kernels(q, k, v, causal, scale, causal_offset=0, window_offset=None,
                     softcap=0.0, alibi_slopes=None, dropout_p=0.0, dropout_seeds=None):
    """Returns (out, lse, q, k, v) with q, k, v as the kernel read them.
    Query i sees key j iff j <= i + causal_offset (when causal) and j >= i
    + window_offset (when not None): top-left offsets, of any size.  With
    softcap > 0 the scores are capped to softcap * tanh(score / softcap);
    with alibi_slopes (batch, heads) fp32 contiguous, ALiBi's -slope * |i +
    seqlen_k - seqlen_q - j| is added to them.  With dropout_p > 0 each
    probability is dropped with that probability (dropout_seeds: int64, one
    a sequence, draw the mask) and the kept ones scaled by 1 / (1 -
    dropout_p)."""
    plans, plan_key = _launch_plans(), None
    if alibi_slopes is None and not dropout_p:
        # Everything the launches depend on but the tensors' addresses.
        plan_key = (_bundle.FORWARD, q.shape, q.stride(), k.shape, k.stride(), v.stride(),
                    q.dtype, q.device, causal, scale, causal_offset, window_offset, softcap)
        plan = plans.get(plan_key)
        made = None if plan is None else plan.run((q, k, v), q.device, _stream(q.device))
        if made is not None:
            return (*made, q, k, v)
    given = (q, k, v)
    batch, seqlen_q, heads, head_dim = q.shape
    seqlen_k = k.shape[1]
    element_type = _ELEMENT_TYPES[q.dtype]
    mask = _kernel_mask(causal, causal_offset, window_offset, seqlen_q, seqlen_k)
    spec = kernel_bundle().select(_bundle.FORWARD, element_type, head_dim, mask.causal,
                                  seq_len=seqlen_q, window=mask.window,
                                  softcap=softcap > 0, alibi=alibi_slopes is not None,
                                  dropout=dropout_p > 0,
                                  capability=device_capability(q.device))
    q, = to_kernel_layout([q], spec)
    k, v = to_kernel_layout([k, v], spec, dense=False)
    out = _empty_like_layout(q)
    lse = torch.empty((batch, heads, seqlen_q), dtype=torch.float32, device=q.device)
    if q.numel() == 0:
        return out, lse, q, k, v
    if k.numel() == 0:
        # No keys at all: every row is empty (the kernels are not asked to
        # reduce over nothing).
        return out.zero_(), lse.fill_(-math.inf), q, k, v
    _check_index_range(q, [spec])
    _check_index_range(k, [spec], name="k")
    launches = []
    for part in _batch_parts(batch, heads):
        queries, keys = _shape_values(q[part], k[part])
        launches.append((spec, {
            "Q": _device_pointer(q[part]), "K": _device_pointer(k[part]),
            "V": _device_pointer(v[part]), "O": _device_pointer(out[part]),
            "LSE": _device_pointer(lse[part]), "sm_scale": scale,
            **_score_values(softcap, alibi_slopes, dropout_p, dropout_seeds, part, lse),
            **queries, **keys, **_mask_values(mask)}))
    _launch_all(q.device, launches)
    if plan_key is not None and len(launches) == 1 and _same(given, (q, k, v)):
        plans.record(plan_key, given, (out, lse), launches, q.device.index)
    return out, lse, q, k, v


def _check_block_arguments(causal, causal_offset):
    return _check_flag("causal", causal), _check_causal_offset(causal_offset)


def _flash_attn_forward(q, k, v, causal, softmax_scale, causal_offset=0):
    """One attention block: (out, lse), out (batch, seqlen_q, heads,
    head_dim) in q's dtype, lse (batch, heads, seqlen_q) fp32 in natural log.
    With causal, query i sees key j iff j <= i + causal_offset (aligned
    top-left, whatever the lengths: ring attention's blocks); rows that see
    no key get out 0 and lse -inf.  k, v as for flash_attn_func.  No
    autograd."""
    _check_tensors([("q", q)], [("k", k), ("v", v)])
    causal, causal_offset = _check_block_arguments(causal, causal_offset)
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
    scale; with grouped heads, dk and dv are summed over each group.
    causal_offset as in _flash_attn_forward.  No autograd."""
    _check_tensors([("q", q), ("out", out), ("dout", dout)], [("k", k), ("v", v)])
    causal, causal_offset = _check_block_arguments(causal, causal_offset)
    batch, seqlen, heads, head_dim = q.shape
    if not isinstance(lse, torch.Tensor):
        raise TypeError(f"lse must be a torch.Tensor, not {type(lse).__name__}")
    if tuple(lse.shape) != (batch, heads, seqlen) or lse.dtype != torch.float32:
        raise ValueError(f"lse must be float32 of shape {(batch, heads, seqlen)} "
                         f"(batch, heads, seqlen_q), not {lse.dtype} {tuple(lse.shape)}")
    if lse.device != q.device:
        raise ValueError(f"lse is on {lse.device} but q is on {q.device}")
    scale = _softmax_scale(softmax_scale, head_dim)
    _check_device(q, "q")
    return _backward(dout, q, k, v, out, lse, causal, scale, causal_offset)


def _backward(dout, q, k, v, out, lse, causal, scale, causal_offset=0, window_offset=None,
              softcap=0.0, alibi_slopes=None, dropout_p=0.0, dropout_seeds=None,
              deterministic=False):
    """_backward_kernels on the tensors padded to the kernels' head dim
    (q, k, v may come padded already, from _forward), the gradients cut
    back to dout's."""
    head_dim = dout.shape[-1]
    padded = _kernel_head_dim(_bundle.BACKWARD, dout)
    if padded == head_dim:
        return _backward_kernels(dout, q, k, v, out, lse, causal, scale, causal_offset,
                                 window_offset, softcap, alibi_slopes, dropout_p, dropout_seeds,
                                 deterministic)
    dout, q, k, v, out = _pad_head_dim((dout, q, k, v, out), padded)
    dq, dk, dv = _backward_kernels(dout, q, k, v, out, lse, causal, scale, causal_offset,
                                   window_offset, softcap, alibi_slopes, dropout_p,
                                   dropout_seeds, deterministic)
    return tuple(g[..., :head_dim].contiguous() for g in (dq, dk, dv))


def _backward_kernels(dout, q, k, v, out, lse, causal, scale, causal_offset=0,
                      window_offset=None, softcap=0.0, alibi_slopes=None, dropout_p=0.0,
                      dropout_seeds=None, deterministic=False):
    """_flash_attn_backward's work, on arguments already checked (by it, or
    by the forward whose saved tensors these are: autograd hands in a dout
    of out's shape, dtype and device).  The mask, softcap, ALiBi and
    dropout (the forward's seeds) as in _forward.  deterministic: dQ by
    attn_bwd_dq, summed in one order, instead of attn_bwd's atomic adds
    (bit-identical gradients run to run)."""
    plans, plan_key = _launch_plans(), None
    if alibi_slopes is None and not dropout_p:
        # Everything the launches depend on but the tensors' addresses.
        plan_key = (_bundle.BACKWARD, q.shape, q.stride(), k.shape, k.stride(), v.stride(),
                    dout.stride(), out.stride(), lse.shape, lse.stride(), q.dtype, q.device,
                    causal, scale, causal_offset, window_offset, softcap, deterministic)
        plan = plans.get(plan_key)
        made = None if plan is None else plan.run((dout, q, k, v, out, lse), q.device,
                                                  _stream(q.device))
        if made is not None:
            return _group_sums(*made[:3], k, v)
    given = (dout, q, k, v, out, lse)
    batch, seqlen_q, heads, head_dim = q.shape
    seqlen_k, heads_k = k.shape[1], k.shape[2]
    element_type = _ELEMENT_TYPES[q.dtype]
    mask = _kernel_mask(causal, causal_offset, window_offset, seqlen_q, seqlen_k)
    kernels = kernel_bundle()
    capability = device_capability(q.device)
    preprocess = kernels.select(_bundle.PREPROCESS, element_type, head_dim,
                                capability=capability)
    backward = kernels.select(_bundle.BACKWARD, element_type, head_dim, mask.causal,
                              window=mask.window, softcap=softcap > 0,
                              alibi=alibi_slopes is not None, dropout=dropout_p > 0,
                              deterministic=deterministic, capability=capability)
    if deterministic:
        postprocess = kernels.select(_bundle.DQ, element_type, head_dim, mask.causal,
                                     window=mask.window, capability=capability)
    else:
        postprocess = kernels.select(_bundle.POSTPROCESS, element_type, head_dim,
                                     capability=capability)

    q, out = to_kernel_layout([q, out], backward)
    k, v = to_kernel_layout([k, v], backward, dense=False)
    if not shares_kernel_layout([q, dout], backward):
        dout = _empty_like_layout(q).copy_(dout)   # e.g. an expanded gradient
    lse = lse.contiguous()
    if q.numel() == 0 or k.numel() == 0:
        # No query or no key: nothing is seen, every gradient is zero.
        return (_empty_like_layout(q).zero_(), torch.zeros_like(k), torch.zeros_like(v))
    dq = _empty_like_layout(q)
    # attn_bwd writes dK and dV per query head.  With grouped heads they go
    # to a (batch, seqlen_k, heads, head_dim) buffer whose groups are summed
    # below (as FlashAttention-2 does); else straight into dk and dv, laid
    # out as torch.empty_like(k) would be (k's strides when k is dense).
    grouped = heads_k != heads
    if grouped:
        dk = torch.empty((batch, seqlen_k, heads, head_dim), dtype=k.dtype, device=k.device)
    else:
        dk = torch.empty_like(k)
    dv = _empty_like_layout(dk)
    _check_index_range(q, [preprocess, backward, postprocess])
    _check_index_range(k, [backward], name="k")
    _check_index_range(dk, [backward], name="dk")
    lse_log2, delta = backward_statistics(lse, seqlen_q)
    dq_accumulator = dq_accumulator_for(preprocess, batch * heads, seqlen_q, q.device)
    stride_dkz, stride_dkh, stride_dkn = kernel_strides(dk)
    launches = []
    for part in _batch_parts(batch, heads):
        queries, keys = _shape_values(q[part], k[part])
        accumulator = _device_pointer(dq_accumulator[part.start * heads:part.stop * heads])
        launches += [
            (preprocess, {"O": _device_pointer(out[part]), "DO": _device_pointer(dout[part]),
                          "LSE": _device_pointer(lse[part]),
                          "LSE_LOG2": _device_pointer(lse_log2[part]),
                          "DELTA": _device_pointer(delta[part]), "DQ_ACC": accumulator,
                          **queries}),
            (backward, {"Q": _device_pointer(q[part]), "K": _device_pointer(k[part]),
                        "V": _device_pointer(v[part]), "sm_scale": scale,
                        "DO": _device_pointer(dout[part]), "DQ_ACC": accumulator,
                        "DK": _device_pointer(dk[part]), "DV": _device_pointer(dv[part]),
                        "LSE_LOG2": _device_pointer(lse_log2[part]),
                        "DELTA": _device_pointer(delta[part]),
                        "stride_dkz": stride_dkz, "stride_dkh": stride_dkh,
                        "stride_dkn": stride_dkn, "MAX_N_KV": seqlen_k,
                        **_score_values(softcap, alibi_slopes, dropout_p, dropout_seeds,
                                        part, lse),
                        **queries, **keys, **_mask_values(mask)}),
            (postprocess, _dq_values(
                deterministic, dq[part], accumulator, scale, queries,
                lambda part=part, keys=keys: {
                    "Q": _device_pointer(q[part]), "K": _device_pointer(k[part]),
                    "V": _device_pointer(v[part]), "DO": _device_pointer(dout[part]),
                    "LSE_LOG2": _device_pointer(lse_log2[part]),
                    "DELTA": _device_pointer(delta[part]), **keys, **_mask_values(mask)}))]
    _launch_all(q.device, launches)
    if (plan_key is not None and len(launches) == 3
            and _same(given, (dout, q, k, v, out, lse))):
        plans.record(plan_key, given, (dq, dk, dv, lse_log2, delta, dq_accumulator),
                     launches, q.device.index)
    return _group_sums(dq, dk, dv, k, v)


def _group_sums(dq, dk, dv, k, v):
    """(dq, dk, dv) with attn_bwd's per-query-head dk and dv summed over each
    group of heads that shares a K/V head, when k's heads are fewer than
    q's.  Query head h used K/V head h // group: consecutive heads share
    one.  The sums are laid out as in the ungrouped case."""
    batch, seqlen_k, heads, head_dim = dk.shape
    heads_k = k.shape[2]
    if heads_k == heads:
        return dq, dk, dv
    group = heads // heads_k
    dk, dv = (torch.sum(per_head.view(batch, seqlen_k, heads_k, group, head_dim), 3,
                        out=torch.empty_like(like))
              for per_head, like in ((dk, k), (dv, v)))
    return dq, dk, dv


class FlashAttnFunction(torch.autograd.Function):
    """Tile's forward kernel; its backward runs the preprocess, backward and
    postprocess kernels.  The mask, softcap, ALiBi and dropout as in
    _forward."""

    @staticmethod
    def forward(ctx, q, k, v, causal, scale, return_lse, causal_offset=0,
                window_offset=None, softcap=0.0, alibi_slopes=None, dropout_p=0.0,
                dropout_seeds=None, deterministic=False):
        out, lse, q, k, v = _forward(q, k, v, causal, scale, causal_offset, window_offset,
                                     softcap, alibi_slopes, dropout_p, dropout_seeds)
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.mask = (causal, scale, causal_offset, window_offset, softcap, alibi_slopes,
                    dropout_p, dropout_seeds, deterministic)
        if return_lse:
            ctx.mark_non_differentiable(lse)
            return out, lse
        return out

    @staticmethod
    def backward(ctx, dout, *unused_dlse):
        q, k, v, out, lse = ctx.saved_tensors
        dq, dk, dv = _backward(dout, q, k, v, out, lse, *ctx.mask)
        return (dq, dk, dv) + (None,) * 10


# --------------------------------------------------------------------------
# torch.compile: the forward and backward as PyTorch custom ops
# --------------------------------------------------------------------------
#
# Dynamo cannot trace the launch path (data_ptr() and the runtime), so under
# torch.compile flash_attn_func calls these opaque ops instead, with fake
# implementations for tracing and the backward registered as the forward's
# autograd formula.  Their outputs' layouts must follow from the inputs'
# metadata alone: out, dq, dk, dv are laid out as torch.empty_like(q, k, v)
# would be (the kernels' own choice, unless an input had to be copied or
# the heads were grouped).  The mask travels as _forward takes it.

def _in_layout_of(tensor, like):
    """`tensor`, or a copy of it, with the strides torch.empty_like(like)
    gives."""
    want = torch.empty_like(like, device="meta").stride()
    if tensor.stride() == want:
        return tensor
    return torch.empty_like(like).copy_(tensor)


@torch.library.custom_op("tile::flash_attn_forward", mutates_args=())
def _forward_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool,
                scale: float, causal_offset: int, window_offset: int | None,
                softcap: float, alibi_slopes: torch.Tensor | None = None,
                dropout_p: float = 0.0, dropout_seeds: torch.Tensor | None = None,
                deterministic: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    # deterministic is the backward's: carried for the autograd formula.
    out, lse, _, _, _ = _forward(q, k, v, causal, scale, causal_offset, window_offset,
                                 softcap, alibi_slopes, dropout_p, dropout_seeds)
    return _in_layout_of(out, q), lse


@_forward_op.register_fake
def _forward_fake(q, k, v, causal, scale, causal_offset, window_offset, softcap,
                  alibi_slopes=None, dropout_p=0.0, dropout_seeds=None, deterministic=False):
    batch, seqlen_q, heads, _ = q.shape
    return torch.empty_like(q), q.new_empty((batch, heads, seqlen_q), dtype=torch.float32)


@torch.library.custom_op("tile::flash_attn_backward", mutates_args=())
def _backward_op(dout: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                 out: torch.Tensor, lse: torch.Tensor, causal: bool, scale: float,
                 causal_offset: int, window_offset: int | None, softcap: float,
                 alibi_slopes: torch.Tensor | None = None, dropout_p: float = 0.0,
                 dropout_seeds: torch.Tensor | None = None, deterministic: bool = False
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    dq, dk, dv = _backward(dout, q, k, v, out, lse, causal, scale, causal_offset,
                           window_offset, softcap, alibi_slopes, dropout_p, dropout_seeds,
                           deterministic)
    return _in_layout_of(dq, q), _in_layout_of(dk, k), _in_layout_of(dv, v)


@_backward_op.register_fake
def _backward_fake(dout, q, k, v, out, lse, causal, scale, causal_offset, window_offset,
                   softcap, alibi_slopes=None, dropout_p=0.0, dropout_seeds=None,
                   deterministic=False):
    return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)


def _forward_op_setup_context(ctx, inputs, output):
    q, k, v, causal, scale, causal_offset, window_offset, *scores = inputs
    out, lse = output
    ctx.save_for_backward(q, k, v, out, lse)
    ctx.mask = (causal, scale, causal_offset, window_offset, *scores)
    ctx.mark_non_differentiable(lse)


def _forward_op_backward(ctx, dout, unused_dlse):
    q, k, v, out, lse = ctx.saved_tensors
    dq, dk, dv = _backward_op(dout, q, k, v, out, lse, *ctx.mask)
    return (dq, dk, dv) + (None,) * 9


_forward_op.register_autograd(_forward_op_backward, setup_context=_forward_op_setup_context)


def _check_window_size(window_size):
    """(left, right) as ints; FlashAttention: a negative side is unlimited."""
    if (not isinstance(window_size, (tuple, list)) or len(window_size) != 2
            or not all(isinstance(w, numbers.Integral) and not isinstance(w, bool)
                       for w in window_size)):
        raise TypeError(f"window_size must be a pair of ints (left, right), -1 for no "
                        f"limit, not {window_size!r}")
    return int(window_size[0]), int(window_size[1])


def _check_alibi_slopes(alibi_slopes, batch, heads, device, softcap):
    """FlashAttention's alibi_slopes, fp32 (heads,) or (batch, heads), as a
    contiguous (batch, heads) tensor on `device`; None stays None."""
    if alibi_slopes is None:
        return None
    if not isinstance(alibi_slopes, torch.Tensor):
        raise TypeError(f"alibi_slopes must be a torch.Tensor or None, not "
                        f"{type(alibi_slopes).__name__}")
    if alibi_slopes.dtype != torch.float32:
        raise TypeError(f"alibi_slopes must be float32, not {alibi_slopes.dtype}")
    if tuple(alibi_slopes.shape) not in ((heads,), (batch, heads)):
        raise ValueError(f"alibi_slopes must have the shape ({heads},) (heads) or "
                         f"({batch}, {heads}) (batch, heads), not "
                         f"{tuple(alibi_slopes.shape)}")
    if alibi_slopes.device != device:
        raise ValueError(f"alibi_slopes is on {alibi_slopes.device} but q is on {device}")
    if softcap > 0:
        raise NotImplementedError("alibi_slopes with softcap > 0: Tile's attention kernels "
                                  "have ALiBi or capped scores, not both")
    return alibi_slopes.expand(batch, heads).contiguous()


def _check_softcap(softcap):
    """softcap as a float: 0 (off) or positive and finite, as in
    FlashAttention (scores capped to softcap * tanh(score / softcap))."""
    if isinstance(softcap, bool) or not isinstance(softcap, numbers.Real):
        raise TypeError(f"softcap must be a number, not {softcap!r}")
    if not (math.isfinite(softcap) and softcap >= 0):
        raise ValueError(f"softcap must be 0 (off) or positive and finite, not {softcap}")
    return float(softcap)


def _refuse_alongside(option, others, reason):
    """NotImplementedError naming `option` and the first of `others`
    ((name, given) pairs) given with it."""
    for name, given in others:
        if given:
            raise NotImplementedError(f"{option} with {name}: {reason}")


def _check_dropout_p(dropout_p, softcap, alibi_slopes):
    """FlashAttention's dropout_p as a float in [0, 1), applied whenever it
    is not 0 (FlashAttention's callers pass 0.0 in evaluation); not with
    capped scores or ALiBi."""
    if isinstance(dropout_p, bool) or not isinstance(dropout_p, numbers.Real):
        raise TypeError(f"dropout_p must be a number, not {dropout_p!r}")
    if not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"dropout_p must be in [0, 1), not {dropout_p}")
    if dropout_p > 0:
        _refuse_alongside("dropout_p > 0", (("softcap > 0", softcap > 0),
                                            ("alibi_slopes", alibi_slopes is not None)),
                          "Tile's attention kernels have dropout alone")
    return float(dropout_p)


def _dropout_seeds(dropout_p, batch, device):
    """(dropout_p, the seeds of its masks): int64 seeds, one a sequence
    (batch of them), drawn from PyTorch's generator of `device`, so that
    torch.manual_seed repeats them and a CUDA graph's replays draw fresh
    ones; None without dropout."""
    if dropout_p == 0.0:
        return 0.0, None
    seeds = torch.randint(0, 2**62, (batch,), dtype=torch.int64, device=device)
    return dropout_p, seeds


def _check_deterministic(deterministic, softcap, alibi_slopes, dropout_p):
    """deterministic as a bool: the backward's dQ summed in one order
    (attn_bwd_dq) rather than with atomics; its kernels have the masks
    alone, so not with softcap, ALiBi or dropout (refused by name)."""
    deterministic = _check_flag("deterministic", deterministic)
    if deterministic:
        _refuse_alongside("deterministic=True", (("softcap > 0", softcap > 0),
                                                 ("alibi_slopes", alibi_slopes is not None),
                                                 ("dropout_p > 0", dropout_p > 0)),
                          "Tile's deterministic backward has the masks alone")
    return deterministic


def _check_fa2_options(return_attn_probs):
    """FlashAttention-2's options Tile's kernels do not have yet: accepted at
    the values that mean "off", refused with NotImplementedError otherwise
    (never ignored: each changes the result)."""
    if _check_flag("return_attn_probs", return_attn_probs):
        raise NotImplementedError(
            "return_attn_probs=True: Tile does not return attention probabilities; "
            "return_lse=True returns the log-sum-exp of each row")


def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False,
                    window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                    deterministic=False, return_attn_probs=False, *, return_lse=False,
                    causal_offset=0):
    """Scaled dot-product attention with Tile's FlashAttention kernels, with
    FlashAttention-2's signature and semantics: flash_attn_func(q, k, v,
    0.0, None, True) is causal attention.

    q: (batch, seqlen_q, heads, head_dim); k, v: (batch, seqlen_k, heads_k,
    head_dim), one shape, heads_k dividing heads (grouped-query attention,
    multi-query with heads_k = 1: query head h uses K/V head h // (heads //
    heads_k)); fp16 or bf16 CUDA tensors of one dtype and device; head_dim
    up to the widest the bundle has kernels for (32, 64, 128 and 256; the
    others run zero-padded to the next).  softmax_scale: defaults to 1 /
    sqrt(head_dim).

    Masks are aligned bottom-right, as FlashAttention's: with shift =
    seqlen_k - seqlen_q + causal_offset, causal keeps key j for query i
    iff j <= i + shift; window_size (left, right) keeps j >= i + shift -
    left when left >= 0 and j <= i + shift + right when right >= 0 (a
    negative side is unlimited; causal sets right to 0).  A row that sees
    no key gets out 0, lse -inf and zero gradients.  softcap > 0 caps the
    scores (softmax_scale * q . k) to softcap * tanh(score / softcap), as
    Gemma 2 does; 0 (the default) leaves them.  alibi_slopes, fp32
    (heads,) or (batch, heads), adds -slope * |i + seqlen_k - seqlen_q - j|
    to the score of query i and key j (ALiBi, as FlashAttention; not
    with softcap).  dropout_p in [0, 1) drops each attention probability
    with that probability and scales the kept ones by 1 / (1 - dropout_p),
    as FlashAttention's training does (each call draws new masks from
    PyTorch's generator, which torch.manual_seed repeats; the backward
    uses the forward's; not with softcap or ALiBi); pass 0.0 to evaluate.

    deterministic=True runs a backward whose gradients are bit-identical
    run to run (dQ summed in one order, without atomics; slower; not with
    softcap, ALiBi or dropout).  return_attn_probs is accepted at its
    default ("off") and refused otherwise with NotImplementedError.
    Keyword-only, beyond FlashAttention's: return_lse, to return lse
    (batch, heads, seqlen_q) fp32, natural log (not differentiable), after
    out; causal_offset, an int of any sign, 0 by default, which moves the
    diagonal the causal mask and the window refer to (-1 hides the
    diagonal too).

    Returns out (batch, seqlen_q, heads, head_dim).  Differentiable in q, k
    and v (with grouped heads dk and dv sum their group's gradients); runs
    on PyTorch's current stream; under torch.compile it is the custom op
    tile::flash_attn_forward (no graph break).
    """
    _check_tensors([("q", q)], [("k", k), ("v", v)])
    causal = _check_flag("causal", causal)
    window_size = _check_window_size(window_size)
    softcap = _check_softcap(softcap)
    _check_fa2_options(return_attn_probs)
    return_lse = _check_flag("return_lse", return_lse)
    causal_offset = _check_causal_offset(causal_offset)
    scale = _softmax_scale(softmax_scale, q.shape[-1])
    alibi_slopes = _check_alibi_slopes(alibi_slopes, q.shape[0], q.shape[2], q.device,
                                       softcap)
    dropout_p = _check_dropout_p(dropout_p, softcap, alibi_slopes)
    deterministic = _check_deterministic(deterministic, softcap, alibi_slopes, dropout_p)
    _check_device(q, "q")
    # What changes the scores and probabilities: _forward's last four.
    scores = (softcap, alibi_slopes, *_dropout_seeds(dropout_p, q.shape[0], q.device))
    # FlashAttention's bottom-right mask as the kernels' top-left bounds:
    # j <= i + upper when has_upper, j >= i + lower when lower is not None.
    has_upper, upper, lower = _flash_attn_bounds(causal, window_size, causal_offset,
                                                 q.shape[1], k.shape[1])
    if torch.compiler.is_compiling():
        out, lse = _forward_op(q, k, v, has_upper, scale, upper, lower, *scores, deterministic)
        return (out, lse) if return_lse else out
    if not (torch.is_grad_enabled()
            and (q.requires_grad or k.requires_grad or v.requires_grad)):
        # Nothing to differentiate: the kernel alone, without autograd's
        # bookkeeping (about 10 us of host time a call).
        out, lse, _, _, _ = _forward(q, k, v, has_upper, scale, upper, lower, *scores)
        return (out, lse) if return_lse else out
    return FlashAttnFunction.apply(q, k, v, has_upper, scale, return_lse, upper, lower,
                                   *scores, deterministic)


def _unpack(name, packed, count, layout, dim=2):
    """The `count` tensors packed along dimension `dim` of `packed` (2 for
    batches, 1 for packed sequences), as views."""
    if not isinstance(packed, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, not {type(packed).__name__}")
    if packed.dim() != dim + 3 or packed.shape[dim] != count:
        raise ValueError(f"{name} must have the shape {layout}, but its shape is "
                         f"{tuple(packed.shape)}")
    return packed.unbind(dim)


def flash_attn_kvpacked_func(q, kv, dropout_p=0.0, softmax_scale=None, causal=False,
                             window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                             deterministic=False, return_attn_probs=False, *,
                             return_lse=False, causal_offset=0):
    """flash_attn_func with K and V packed in one tensor, as
    FlashAttention-2's: q (batch, seqlen_q, heads, head_dim), kv (batch,
    seqlen_k, 2, heads_k, head_dim).  k and v go to the kernels as views
    of kv, without a copy, when kv's strides fit them (a contiguous kv's
    do); the gradient comes back to kv as one tensor."""
    k, v = _unpack("kv", kv, 2, "(batch, seqlen_k, 2, heads_k, head_dim)")
    return flash_attn_func(q, k, v, dropout_p, softmax_scale, causal, window_size, softcap,
                           alibi_slopes, deterministic, return_attn_probs,
                           return_lse=return_lse, causal_offset=causal_offset)


def flash_attn_qkvpacked_func(qkv, dropout_p=0.0, softmax_scale=None, causal=False,
                              window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                              deterministic=False, return_attn_probs=False, *,
                              return_lse=False, causal_offset=0):
    """flash_attn_func with Q, K and V packed in one tensor, as
    FlashAttention-2's: qkv (batch, seqlen, 3, heads, head_dim) (for grouped
    heads, flash_attn_kvpacked_func).  k and v are read in place; q is
    copied once (out is made with q's strides, which a slice of qkv does
    not leave room for).  The gradient comes back to qkv as one tensor."""
    q, k, v = _unpack("qkv", qkv, 3, "(batch, seqlen, 3, heads, head_dim)")
    return flash_attn_func(q, k, v, dropout_p, softmax_scale, causal, window_size, softcap,
                           alibi_slopes, deterministic, return_attn_probs,
                           return_lse=return_lse, causal_offset=causal_offset)
