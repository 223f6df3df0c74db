"""flash_attn_with_kvcache: FlashAttention's decoding entry point on Tile's
split-KV decoding kernels (python/tile/kernels/decode.py).

A few new query tokens of each sequence attend to that sequence's KV
cache: a contiguous cache (batch_cache, seqlen_cache, heads_k, head_dim),
or a paged one (num_blocks, page_size, heads_k, head_dim) read through a
block table.  New keys and values, when given, are first written into the
cache in place by kv_append (one launch for both), at each sequence's
cache_seqlens, after the optional rotary embedding (in PyTorch).  Then attn_decode runs
over (splits, row blocks, batch * heads_k) programs, each reading its K/V
tiles once for the query heads of its group, and attn_decode_combine
merges the splits by their log-sum-exp.

CUDA tensors run on the GPU through the Tile runtime and the compiled
variants; CPU tensors run the same variants' kernels on the interpreter
(tile-run, through kernel[grid](...)), slowly: that is how the tests check
the kernels without a GPU.
"""

import functools
import numbers

import torch

from .. import runtime
from ..kernels import decode as _decode
from ..kernels import manifest as _manifest
from . import functional as _f

DECODE = "attn_decode"
COMBINE = "attn_decode_combine"
APPEND = "kv_append"

# The split heuristic (docs/python-api.md): up to WAVES programs an SM,
# evenly (a program more on some SMs leaves the rest waiting for them),
# but no split shorter than MIN_BLOCKS_PER_SPLIT key blocks, and at most
# MAX_SPLITS; swept on an H200 (docs/performance.md).  On the CPU (the
# interpreter) the H100's SM count stands in, so that the interpreter runs
# what the H100 would.
MIN_BLOCKS_PER_SPLIT = 2
# As many as the combine reads of a row at once.
MAX_SPLITS = _manifest.DECODE_COMBINE_SPLITS
WAVES = 4
CPU_SM_COUNT = 132
# "No bound" for the mask's offsets: far past any sequence, small enough
# that the kernels' i32 sums of offsets and positions cannot overflow.
NO_BOUND = 2**30


# --------------------------------------------------------------------------
# Argument checking
# --------------------------------------------------------------------------

def _check_tensor(name, t, dims, layout):
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, not {type(t).__name__}")
    if t.dim() != dims:
        raise ValueError(f"{name} must have {dims} dimensions {layout}, but its shape is "
                         f"{tuple(t.shape)}")


def _check_index_tensor(name, t, shape, layout, device):
    """An int32 tensor of `shape` on `device` (block_table, cache_batch_idx,
    cache_seqlens)."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, not {type(t).__name__}")
    if t.dtype != torch.int32:
        raise TypeError(f"{name} must be torch.int32, not {t.dtype}")
    if tuple(t.shape) != tuple(shape):
        raise ValueError(f"{name} must have the shape {layout} = {tuple(shape)}, but its "
                         f"shape is {tuple(t.shape)}")
    if t.device != device:
        raise ValueError(f"q is on {device} but {name} is on {t.device}: they must be on "
                         f"one device")


def _check_inputs(q, k_cache, v_cache, k, v, paged):
    cache_layout = ("(num_blocks, page_size, heads_k, head_dim)" if paged
                    else "(batch_cache, seqlen_cache, heads_k, head_dim)")
    _check_tensor("q", q, 4, "(batch, seqlen_q, heads, head_dim)")
    _check_tensor("k_cache", k_cache, 4, cache_layout)
    _check_tensor("v_cache", v_cache, 4, cache_layout)
    if (k is None) != (v is None):
        raise ValueError("k and v come together: pass both new keys and new values, or "
                         "neither")
    named = [("q", q), ("k_cache", k_cache), ("v_cache", v_cache)]
    if k is not None:
        _check_tensor("k", k, 4, "(batch, seqlen_new, heads_k, head_dim)")
        _check_tensor("v", v, 4, "(batch, seqlen_new, heads_k, head_dim)")
        named += [("k", k), ("v", v)]
    _f.check_dtypes_and_devices(named, "decoding")
    if q.device.type not in ("cuda", "cpu"):
        raise ValueError(f"q is on {q.device}: the decoding kernels run CUDA tensors on "
                         f"the GPU and CPU tensors on the interpreter")
    if v_cache.shape != k_cache.shape:
        raise ValueError(f"k_cache and v_cache must have one shape {cache_layout}, but "
                         f"k_cache is {tuple(k_cache.shape)} and v_cache is "
                         f"{tuple(v_cache.shape)}")
    batch, _, heads, head_dim = q.shape
    heads_k = k_cache.shape[2]
    if head_dim == 0 or k_cache.shape[3] != head_dim:
        raise ValueError(f"q and k_cache must have one positive head_dim (dimension 3), but "
                         f"q is {tuple(q.shape)} and k_cache is {tuple(k_cache.shape)}")
    if heads_k == 0 or heads % heads_k:
        raise ValueError(f"k_cache has {heads_k} heads, which does not divide the {heads} "
                         f"heads of q (grouped-query attention shares each K/V head among "
                         f"heads / heads_k query heads)")
    if k is not None:
        if v.shape != k.shape:
            raise ValueError(f"k and v must have one shape (batch, seqlen_new, heads_k, "
                             f"head_dim), but k is {tuple(k.shape)} and v is "
                             f"{tuple(v.shape)}")
        want = (batch, k.shape[1], heads_k, head_dim)
        if tuple(k.shape) != want:
            raise ValueError(f"k must have the shape (batch, seqlen_new, heads_k, head_dim) "
                             f"= {want} (q's batch, k_cache's heads and head_dim), but its "
                             f"shape is {tuple(k.shape)}")


def _check_rotary(rotary_cos, rotary_sin, k, head_dim, device):
    """rotary_dim, or 0 without rotary."""
    if rotary_cos is None and rotary_sin is None:
        return 0
    if rotary_cos is None or rotary_sin is None:
        raise ValueError("rotary_cos and rotary_sin come together: pass both or neither")
    if k is None:
        raise ValueError("rotary_cos and rotary_sin rotate the new keys and the queries: "
                         "they need k and v (FlashAttention's rule)")
    for name, t in (("rotary_cos", rotary_cos), ("rotary_sin", rotary_sin)):
        _check_tensor(name, t, 2, "(seqlen_ro, rotary_dim / 2)")
        if not t.dtype.is_floating_point:
            raise TypeError(f"{name} must be a floating-point tensor, not {t.dtype}")
        if t.device != device:
            raise ValueError(f"q is on {device} but {name} is on {t.device}")
    if rotary_sin.shape != rotary_cos.shape:
        raise ValueError(f"rotary_cos and rotary_sin must have one shape, but rotary_cos is "
                         f"{tuple(rotary_cos.shape)} and rotary_sin is "
                         f"{tuple(rotary_sin.shape)}")
    rotary_dim = 2 * rotary_cos.shape[1]
    if rotary_dim == 0 or rotary_dim > head_dim:
        raise ValueError(f"rotary_cos has {rotary_cos.shape[1]} columns: rotary_dim = "
                         f"{rotary_dim} must be positive and at most head_dim {head_dim}")
    return rotary_dim


def _check_num_splits(num_splits):
    if isinstance(num_splits, bool) or not isinstance(num_splits, numbers.Integral) \
            or num_splits < 0:
        raise TypeError(f"num_splits must be a non-negative int (0: chosen by the "
                        f"heuristic), not {num_splits!r}")
    return int(num_splits)


def _sequence_lengths(cache_seqlens, batch, capacity, seqlen_new, device):
    """cache_seqlens as an int32 tensor [batch] on `device`: None is a full
    cache (capacity), an int the same length for every sequence; both are
    checked here to leave room for the seqlen_new new tokens."""
    if cache_seqlens is None:
        cache_seqlens = capacity
    if isinstance(cache_seqlens, numbers.Integral) and not isinstance(cache_seqlens, bool):
        if not 0 <= cache_seqlens <= capacity - seqlen_new:
            raise ValueError(f"cache_seqlens = {cache_seqlens} is outside [0, "
                             f"{capacity - seqlen_new}] (the cache holds {capacity} tokens "
                             f"a sequence and {seqlen_new} are appended)")
        return torch.full((batch,), int(cache_seqlens), dtype=torch.int32, device=device)
    _check_index_tensor("cache_seqlens", cache_seqlens, (batch,), "(batch,)", device)
    return cache_seqlens


_IDENTITY_ROWS = {}


def _identity_rows(batch, device):
    """0, 1, ..., batch - 1 (int32) on `device`: a contiguous cache's block
    table, sequence b in row b.  Made once a (batch, device) and kept, so
    that a call launches no kernel for it; made ready for every stream
    before it is kept (the current one is synchronised once).  While a CUDA
    graph is being captured a fresh one is made (and captured) instead."""
    if device.type != "cuda" or torch.cuda.is_current_stream_capturing():
        return torch.arange(batch, dtype=torch.int32, device=device)
    key = (batch, device.index)
    rows = _IDENTITY_ROWS.get(key)
    if rows is None:
        rows = torch.arange(batch, dtype=torch.int32, device=device)
        torch.cuda.current_stream(device).synchronize()
        _IDENTITY_ROWS[key] = rows
    return rows


def _check_on_host(name, values, low, high, what):
    """Values of an index tensor against [low, high): only for CPU tensors,
    which cost no synchronisation to read (CUDA ones are not read)."""
    if values.device.type != "cpu" or values.numel() == 0:
        return
    bad = (values < low) | (values >= high)
    if bool(bad.any()):
        first = values[bad].flatten()[0].item()
        raise ValueError(f"{name} holds {first}, outside [{low}, {high}) ({what})")


# --------------------------------------------------------------------------
# Rotary embedding, in PyTorch
# --------------------------------------------------------------------------

def apply_rotary(x, cos, sin, positions, interleaved):
    """x (batch, seqlen, heads, head_dim) with its first rotary_dim = 2 *
    cos.shape[1] features rotated by cos/sin at `positions` (batch,
    seqlen), in fp32, rounded back to x's dtype (as FlashAttention's rotary
    kernel).  interleaved: pairs (0, 1), (2, 3), ... (GPT-J); else (i, i +
    rotary_dim / 2) (GPT-NeoX)."""
    rotary_dim = 2 * cos.shape[1]
    c = cos[positions].float().unsqueeze(2)
    s = sin[positions].float().unsqueeze(2)
    rotated = x[..., :rotary_dim].float()
    if interleaved:
        x1, x2 = rotated[..., 0::2], rotated[..., 1::2]
        rotated = torch.stack((x1 * c - x2 * s, x1 * s + x2 * c), -1).flatten(-2)
    else:
        x1, x2 = rotated.chunk(2, -1)
        rotated = torch.cat((x1 * c - x2 * s, x1 * s + x2 * c), -1)
    return torch.cat((rotated.to(x.dtype), x[..., rotary_dim:]), -1)


# --------------------------------------------------------------------------
# Variants and the split heuristic
# --------------------------------------------------------------------------

@functools.cache
def _manifest_variants(family):
    """The manifest's variants of `family` the interpreter runs: the
    default target's (the others compute the same).  Kept: the manifest
    does not change, and a call should not scan it."""
    return tuple(v for v in _manifest.VARIANTS
                 if v.kernel == family and v.options.target == _manifest.DEFAULT_TARGET)


def _tiles(constexprs):
    """(head dims, BLOCK_Ms, BLOCK_N, {head dim: its blocks' width})."""
    return (tuple(sorted({c["HEAD_DIM"] for c in constexprs})),
            tuple(sorted({c["BLOCK_M"] for c in constexprs})),
            max(c["BLOCK_N"] for c in constexprs),
            {c["HEAD_DIM"]: _f._bundle.block_width(c) for c in constexprs})


@functools.cache
def _bundle_tiles(kernels):
    """_available's answer for a KernelBundle, kept with it."""
    constexprs = [k.constexprs for k in kernels.bundle.kernels
                  if k.family == DECODE and k.has_gpu_code]
    if not constexprs:
        raise _f._bundle.BundleError(
            f"the kernel folder {kernels.directory} has no {DECODE} "
            f"kernels: rebuild it (./dev.sh build, scripts/make_gpu_bundle.sh)")
    return _tiles(constexprs)


def _available(device):
    """(head dims, BLOCK_Ms, BLOCK_N, widths) of the attn_decode variants
    that can run on `device`: the GPU bundle's, or the manifest's on the
    CPU (_tiles)."""
    if device.type == "cuda":
        return _bundle_tiles(_f.kernel_bundle())
    return _manifest_tiles()


@functools.cache
def _manifest_tiles():
    return _tiles([v.constexprs for v in _manifest_variants(DECODE)])


def choose_block_m(rows, block_ms):
    """The smallest packing that holds a K/V head's query rows (GROUP heads
    x seqlen_q tokens), else the largest, over several row blocks."""
    for block_m in block_ms:
        if block_m >= rows:
            return block_m
    return block_ms[-1]


def choose_num_splits(programs, max_keys, sm_count, block_n):
    """num_splits=0's heuristic: 1 when the batch's programs (batch *
    heads_k * row blocks) fill the SMs already; else as many splits as give
    every SM at most WAVES programs, capped so that each split keeps at least
    MIN_BLOCKS_PER_SPLIT key blocks of the longest sequence the cache can
    hold (max_keys), and at MAX_SPLITS."""
    if programs >= sm_count:
        return 1
    wanted = WAVES * sm_count // programs
    by_keys = max(1, max_keys // (MIN_BLOCKS_PER_SPLIT * block_n))
    return max(1, min(wanted, by_keys, MAX_SPLITS))


def _mask_offsets(causal, window_size):
    """FlashAttention's causal flag and window as the kernels' (upper,
    lower) offsets from each token's bottom-right diagonal."""
    left, right = window_size
    if causal:
        right = 0
    upper = min(right, NO_BOUND) if right >= 0 else NO_BOUND
    lower = -min(left, NO_BOUND) if left >= 0 else -NO_BOUND
    return upper, lower


def _fits(tensor):
    """Whether the kernels can read `tensor` in place: last dimension
    contiguous, 16-byte aligned, strides multiples of 16 elements (the
    signature's promise) within i32."""
    strides = _strides(tensor)
    return (tensor.stride(-1) == 1 and tensor.data_ptr() % 16 == 0
            and all(s % 16 == 0 and s <= _f._INT32_MAX for s in strides))


def _strides(tensor, dims=3):
    """The strides of the first `dims` dimensions; 0 for a dimension of
    size 1."""
    return [tensor.stride(d) if tensor.shape[d] > 1 else 0 for d in range(dims)]


# --------------------------------------------------------------------------
# Launching
# --------------------------------------------------------------------------

def _on_gpu(device):
    """Whether tensors on `device` run through the runtime (else on the
    interpreter)."""
    return device.type == "cuda"


def _launch(device, launches):
    """Runs each (family, keys, element type, values, grid) in order: on the
    GPU the bundle's variant through the runtime (which computes the grid
    from the launch spec), on the CPU the manifest's variant's kernel on
    the interpreter over `grid`. Returns the runtime's (kernel, values)
    launched on the GPU, None on the CPU."""
    if not _on_gpu(device):
        _run_on_interpreter(launches)
        return None
    runtime_launches = gpu_launches(launches, device)
    _f._launch_all(device, runtime_launches)
    return runtime_launches


def gpu_launches(launches, device):
    """The runtime's (kernel, values) of each launch: the bundle's variant
    for the family, element type and keys on `device`, tensors as device
    pointers."""
    bundle = _f.kernel_bundle().bundle
    capability = _f.device_capability(device)
    return [(bundle.select(family, element_type, keys, capability=capability),
             {name: (_f._device_pointer(value) if isinstance(value, torch.Tensor) else value)
              for name, value in values.items()})
            for family, keys, element_type, values, _ in launches]


def _run_on_interpreter(launches):
    for family, keys, _, values, grid in launches:
        variant = next(v for v in _manifest_variants(family)
                       if all(v.constexprs[k] == want for k, want in keys.items()))
        kernel = getattr(_decode, family)
        kernel[grid](**values, **variant.constexprs, num_warps=variant.options.num_warps)


def flash_attn_with_kvcache(q, k_cache, v_cache, k=None, v=None, rotary_cos=None,
                            rotary_sin=None, cache_seqlens=None, cache_batch_idx=None,
                            block_table=None, softmax_scale=None, causal=False,
                            window_size=(-1, -1), softcap=0.0, rotary_interleaved=True,
                            alibi_slopes=None, num_splits=0, return_softmax_lse=False):
    """Attention of a few new query tokens against a KV cache, with
    FlashAttention's signature and semantics (docs/python-api.md).

    q: (batch, seqlen_q, heads, head_dim).  k_cache, v_cache: (batch_cache,
    seqlen_cache, heads_k, head_dim), or with block_table (batch,
    max_blocks, int32) a page pool (num_blocks, page_size, heads_k,
    head_dim), page_size a multiple of 16.  k, v (batch, seqlen_new,
    heads_k, head_dim): new keys and values, written into the cache in
    place at cache_seqlens (int, or int32 (batch,); None: the whole cache)
    before attention, which then covers cache_seqlens + seqlen_new keys of
    each sequence.  rotary_cos, rotary_sin (seqlen_ro, rotary_dim / 2):
    rotate the new keys at positions cache_seqlens + i, and q at
    cache_seqlens + i when causal or windowed, else at cache_seqlens.
    cache_batch_idx (batch,) int32: the cache row of each sequence (not
    with block_table).  causal, window_size, softcap, softmax_scale as in
    flash_attn_func, aligned bottom-right to each sequence's keys.
    num_splits: how many ranges of keys a sequence is split into; 0 picks.
    alibi_slopes, fp32 (heads,) or (batch, heads): ALiBi as in
    flash_attn_func (not with softcap).

    Returns out (batch, seqlen_q, heads, head_dim) in q's dtype and, with
    return_softmax_lse, the log-sum-exp, fp32 (batch, heads, seqlen_q).
    Rows that see no key get out 0 and lse -inf.  No autograd.
    """
    paged = block_table is not None
    _check_inputs(q, k_cache, v_cache, k, v, paged)
    causal = _f._check_flag("causal", causal)
    window_size = _f._check_window_size(window_size)
    softcap = _f._check_softcap(softcap)
    rotary_interleaved = _f._check_flag("rotary_interleaved", rotary_interleaved)
    return_softmax_lse = _f._check_flag("return_softmax_lse", return_softmax_lse)
    num_splits = _check_num_splits(num_splits)
    batch, seqlen_q, heads, head_dim = q.shape
    alibi_slopes = _f._check_alibi_slopes(alibi_slopes, batch, heads, q.device, softcap)
    heads_k = k_cache.shape[2]
    device = q.device
    scale = _f._softmax_scale(softmax_scale, head_dim)
    seqlen_new = 0 if k is None else k.shape[1]

    if paged:
        _check_tensor("block_table", block_table, 2, "(batch, max_blocks)")
        _check_index_tensor("block_table", block_table, (batch, block_table.shape[1]),
                            "(batch, max_blocks)", device)
        page_size = k_cache.shape[1]
        if page_size == 0 or page_size % 16:
            raise ValueError(f"page_size {page_size} (dimension 1 of the paged k_cache) "
                             f"must be a positive multiple of 16")
        if block_table.shape[1] == 0:
            raise ValueError("block_table has no columns: each sequence needs a page")
        if cache_batch_idx is not None:
            raise ValueError("cache_batch_idx and block_table do not go together: with a "
                             "paged cache the block table says where each sequence is")
        _check_on_host("block_table", block_table, 0, k_cache.shape[0],
                       "the pages of k_cache")
        capacity = block_table.shape[1] * page_size
        # The kernel reads a row's entries one after another.
        table = block_table if block_table.stride(1) == 1 else block_table.contiguous()
        stride_table = table.stride(0)
    else:
        capacity = k_cache.shape[1]
        page_size = max(capacity, 1)   # one page a sequence: page 0 of its row
        if cache_batch_idx is None:
            table = _identity_rows(batch, device)
        else:
            _check_index_tensor("cache_batch_idx", cache_batch_idx, (batch,), "(batch,)",
                                device)
            _check_on_host("cache_batch_idx", cache_batch_idx, 0, k_cache.shape[0],
                           "the rows of k_cache")
            table = cache_batch_idx.contiguous()
        if cache_batch_idx is None and k_cache.shape[0] < batch:
            raise ValueError(f"k_cache has {k_cache.shape[0]} sequences, fewer than q's "
                             f"batch {batch} (pass cache_batch_idx to pick rows)")
        stride_table = 1
    if capacity >= NO_BOUND:
        raise ValueError(f"the cache holds {capacity} tokens a sequence; the decoding "
                         f"kernels take fewer than {NO_BOUND}")
    seqlens = _sequence_lengths(cache_seqlens, batch, capacity, seqlen_new, device)
    _check_on_host("cache_seqlens", seqlens, 0, capacity - seqlen_new + 1,
                   f"the cache holds {capacity} tokens a sequence and {seqlen_new} are "
                   f"appended")
    rotary_dim = _check_rotary(rotary_cos, rotary_sin, k, head_dim, device)
    # Every refusal comes before the cache is written.
    head_dims, block_ms, block_n, widths = _available(device)
    kernel_dim = _f.smallest_kernel_dim(head_dim, head_dims, "the decoding")
    # The kernels' blocks' width: kernel_dim, or a wider one they read
    # zeros past (the partial outputs' rows are this long).
    width = widths[kernel_dim]
    group = heads // heads_k
    rows = group * seqlen_q
    block_m = choose_block_m(rows, block_ms)
    row_blocks = -(-rows // block_m)
    if batch * heads_k > _f.GRID_YZ_MAX or row_blocks > _f.GRID_YZ_MAX:
        raise ValueError(f"batch * heads_k = {batch * heads_k} and the row blocks "
                         f"({row_blocks}) must each be at most {_f.GRID_YZ_MAX}")

    # New tokens: rotary (PyTorch ops on the tensors' device, no
    # synchronisation), then the in-place append (kv_append, below).
    if rotary_dim:
        first = seqlens.long()[:, None]
        new_positions = first + torch.arange(seqlen_new, device=device)
        _check_on_host("the positions of k", new_positions, 0, rotary_cos.shape[0],
                       "the rows of rotary_cos")
        if seqlen_q > 1 and (causal or max(window_size) >= 0):   # FA's causal or local
            q_positions = first + torch.arange(seqlen_q, device=device)
        else:
            q_positions = first.expand(batch, seqlen_q)
        _check_on_host("the positions of q", q_positions, 0, rotary_cos.shape[0],
                       "the rows of rotary_cos")
        q = apply_rotary(q, rotary_cos, rotary_sin, q_positions, rotary_interleaved)
        k = apply_rotary(k, rotary_cos, rotary_sin, new_positions, rotary_interleaved)
    element_type = _f._ELEMENT_TYPES[q.dtype]
    append = []
    if seqlen_new and batch:
        # One kernel writes k and v into the cache and the lengths after
        # them (kv_lens, which the kernels below read).
        k, v = (t if t.stride(-1) == 1 else t.contiguous() for t in (k, v))
        kv_lens = torch.empty((batch,), dtype=torch.int32, device=device)
        stride_knz, stride_knn, stride_knh = _strides(k)
        stride_vnz, stride_vnn, stride_vnh = _strides(v)
        append_values = {
            "K": k_cache, "V": v_cache, "K_NEW": k, "V_NEW": v, "BLOCK_TABLE": table,
            "CACHE_SEQLENS": seqlens, "KV_LENS": kv_lens,
            **dict(zip(("stride_kp", "stride_kn", "stride_kh", "stride_kd"), _strides(k_cache, 4))),
            **dict(zip(("stride_vp", "stride_vn", "stride_vh", "stride_vd"), _strides(v_cache, 4))),
            "stride_knz": stride_knz, "stride_knn": stride_knn, "stride_knh": stride_knh,
            "stride_vnz": stride_vnz, "stride_vnn": stride_vnn, "stride_vnh": stride_vnh,
            "stride_bt": stride_table, "Z": batch, "H_KV": heads_k, "N_NEW": seqlen_new,
            "PAGE_SIZE": page_size, "HEAD_DIM": head_dim, "MAX_KEYS": capacity}
        append = [(APPEND, {"BLOCK_D": width}, element_type, append_values,
                   (-(-seqlen_new // _manifest.APPEND_BLOCK_T), batch * heads_k))]
    else:
        # The kernels only read the lengths: the caller's tensor serves
        # (one kernel launch fewer a call).
        kv_lens = seqlens.contiguous()

    # A call of a shape seen before launches through the plan the first
    # such call made (plan.py): the kernels, grids and scalars it chose.
    plan_key = None
    if _on_gpu(device):
        plan_key = (DECODE, q.shape, q.stride(), q.dtype, k_cache.shape, k_cache.stride(),
                    v_cache.stride(), paged, table.shape, table.stride(), seqlens.stride(),
                    None if k is None else (k.shape, k.stride(), v.stride()),
                    None if alibi_slopes is None else (alibi_slopes.shape,
                                                       alibi_slopes.stride()),
                    device, causal, window_size, softcap, scale, num_splits)
        inputs = (q, k_cache, v_cache, table) + ((seqlens, k, v) if append else (kv_lens,)) + (
            () if alibi_slopes is None else (alibi_slopes,))
        plan = _f._launch_plans().get(plan_key)
        made = None if plan is None else plan.run(inputs, device, _f._stream(device))
        if made is not None:
            return (made[0], made[1]) if return_softmax_lse else made[0]

    # Whether the kernels below read copies of q or the cache (made below,
    # by the same tests).
    copied = kernel_dim != head_dim or not (q.is_contiguous() and _fits(q)) or not (
        _fits(k_cache) and _fits(v_cache))
    out_shape = (batch, seqlen_q, heads, head_dim)
    if append and (copied or q.numel() == 0):
        # Written before a copy of the cache reads it (else it goes with
        # the kernels below, in one list).
        _launch(device, append)
        append = []
    if q.numel() == 0:
        out = q.new_empty(out_shape)
        lse = torch.empty((batch, heads, seqlen_q), dtype=torch.float32, device=device)
        return (out, lse) if return_softmax_lse else out

    if kernel_dim != head_dim:
        # A ragged head dim runs zero-padded, as in flash_attn_func: the
        # cache is copied padded (read only; the append went in place).
        q, k_cache, v_cache = _f._pad_head_dim((q, k_cache, v_cache), kernel_dim)
    # A fresh copy is contiguous and aligned (the kernels' promises).
    q = q if q.is_contiguous() and _fits(q) else q.clone(memory_format=torch.contiguous_format)
    k_cache, v_cache = (t if _fits(t) else t.clone(memory_format=torch.contiguous_format)
                        for t in (k_cache, v_cache))

    upper, lower = _mask_offsets(causal, window_size)
    max_keys = capacity
    if window_size[0] >= 0:
        max_keys = min(max_keys, window_size[0] + seqlen_q)
    if num_splits == 0:
        sm_count = runtime.multiprocessor_count(
            device.index if device.index is not None else torch.cuda.current_device()) \
            if device.type == "cuda" else CPU_SM_COUNT
        num_splits = choose_num_splits(batch * heads_k * row_blocks, max_keys, sm_count,
                                       block_n)
    # No split shorter than one key block of the longest sequence.
    num_splits = max(1, min(num_splits, -(-max_keys // block_n)))

    out = torch.empty((batch, seqlen_q, heads, kernel_dim), dtype=q.dtype, device=device)
    lse = torch.empty((batch, heads, seqlen_q), dtype=torch.float32, device=device)
    # One split writes out and lse itself: no partials, no combine.
    if num_splits == 1:
        o_acc = lse_acc = lse
    else:
        o_acc = torch.empty((num_splits, batch * heads_k, rows, width),
                            dtype=torch.float32, device=device)
        lse_acc = torch.empty((num_splits, batch * heads_k, rows), dtype=torch.float32,
                              device=device)
    stride_qz, stride_qn, stride_qh = _strides(q)
    stride_kp, stride_kn, stride_kh = _strides(k_cache)
    stride_vp, stride_vn, stride_vh = _strides(v_cache)
    shape = {"Z": batch, "H_KV": heads_k, "GROUP": group, "N_Q": seqlen_q, "ROWS": rows,
             "NUM_SPLITS": num_splits}
    stride_oz, stride_on, stride_oh = _strides(out)
    outputs = {"O": out, "LSE": lse, "stride_oz": stride_oz, "stride_on": stride_on,
               "stride_oh": stride_oh}
    decode_values = {
        "Q": q, "K": k_cache, "V": v_cache, "BLOCK_TABLE": table, "KV_LENS": kv_lens,
        "O_ACC": o_acc, "LSE_ACC": lse_acc, "sm_scale": scale, "softcap": softcap,
        "stride_qz": stride_qz, "stride_qn": stride_qn, "stride_qh": stride_qh,
        "stride_kp": stride_kp, "stride_kn": stride_kn, "stride_kh": stride_kh,
        "stride_vp": stride_vp, "stride_vn": stride_vn, "stride_vh": stride_vh,
        "stride_bt": stride_table, "PAGE_SIZE": page_size, "upper": upper, "lower": lower,
        # Not read without ALiBi: any fp32 buffer.
        "ALIBI_SLOPES": lse if alibi_slopes is None else alibi_slopes,
        **outputs, **shape}
    launches = [(DECODE, {"HEAD_DIM": kernel_dim, "BLOCK_M": block_m, "SOFTCAP": softcap > 0,
                          "ALIBI": alibi_slopes is not None},
                 element_type, decode_values, (num_splits, row_blocks, batch * heads_k))]
    if num_splits > 1:
        combine_values = {"O_ACC": o_acc, "LSE_ACC": lse_acc, **outputs, **shape}
        launches.append((COMBINE, {"HEAD_DIM": kernel_dim}, element_type, combine_values,
                         (rows, batch * heads_k)))
    runtime_launches = _launch(device, append + launches)
    if kernel_dim != head_dim:
        out = out[..., :head_dim].contiguous()
    elif plan_key is not None and not copied:
        # Only a call that copied nothing: a plan launches on the tensors
        # as given.
        made = (out, lse) + ((kv_lens,) if append else ()) + (
            () if num_splits == 1 else (o_acc, lse_acc))
        _f._launch_plans().record(plan_key, inputs, made, runtime_launches, device.index)
    return (out, lse) if return_softmax_lse else out
