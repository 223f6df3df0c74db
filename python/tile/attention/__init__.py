"""Tile's FlashAttention kernels for PyTorch users.

    from tile.attention import flash_attn_func, Attention, AttentionType
    out = flash_attn_func(q, k, v, causal=True)   # (batch, seqlen, heads, head_dim)

flash_attn_func, flash_attn_kvpacked_func, flash_attn_qkvpacked_func,
flash_attn_varlen_func and its packed forms follow FlashAttention-2 (grouped-query heads,
unequal lengths aligned bottom-right, sliding windows, softcap, packed
sequences); flash_attn_with_kvcache is its decoding entry point (a KV
cache, contiguous or paged, split-KV kernels).

Needs PyTorch and the compiled kernels (build/kernels in a checkout, the
bundle's kernels/ folder, or $TILE_KERNEL_DIR) and the NVIDIA driver; see
docs/python-api.md.  The submodules bundle and driver use the standard
library only; the rest is imported on first use, so that a missing PyTorch
is reported where it matters.
"""

import importlib

_EXPORTS = {
    "flash_attn_func": "functional",
    "flash_attn_kvpacked_func": "functional",
    "flash_attn_qkvpacked_func": "functional",
    "flash_attn_varlen_func": "varlen",
    "flash_attn_varlen_kvpacked_func": "varlen",
    "flash_attn_varlen_qkvpacked_func": "varlen",
    "flash_attn_with_kvcache": "kvcache",
    "FlashAttnFunction": "functional",
    "_flash_attn_forward": "functional",
    "_flash_attn_backward": "functional",
    "kernel_bundle": "functional",
    "Attention": "module",
    "AttentionType": "module",
    "register_attention": "module",
    "ring_attn_func": "ring",
    "striped_attn_func": "ring",
    "step_attn_func": "ring",
    "KernelBundle": "bundle",
    "BundleError": "bundle",
    "find_kernel_dir": "bundle",
}

__all__ = ["flash_attn_func", "flash_attn_kvpacked_func", "flash_attn_qkvpacked_func",
           "flash_attn_varlen_func", "flash_attn_varlen_kvpacked_func",
           "flash_attn_varlen_qkvpacked_func", "flash_attn_with_kvcache",
           "ring_attn_func", "striped_attn_func", "step_attn_func",
           "Attention", "AttentionType", "register_attention",
           "KernelBundle", "BundleError", "find_kernel_dir"]


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        module = importlib.import_module(f".{_EXPORTS[name]}", __name__)
    except ModuleNotFoundError as error:
        if error.name == "torch":
            raise ImportError(f"tile.attention.{name} needs PyTorch, which is not "
                              f"installed") from error
        raise
    return getattr(module, name)
