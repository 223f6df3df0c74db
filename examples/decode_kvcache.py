"""Decoding with a paged KV cache: flash_attn_with_kvcache
(docs/python-api.md, "flash_attn_with_kvcache") appends each step's new
key and value to the cache in place and attends to everything cached so
far, grouped-query heads (8 query heads share each of 2 K/V heads).

    PYTHONPATH=python python3 examples/decode_kvcache.py

runs on CUDA tensors where PyTorch has a GPU and the kernels are built,
else on CPU tensors (the kernels on the interpreter, small sizes), and
compares each step with PyTorch's attention on the same keys.
"""

import torch

from tile.attention import flash_attn_with_kvcache

device = "cuda" if torch.cuda.is_available() else "cpu"
dtype = torch.bfloat16
batch, heads, heads_k, head_dim = 3, 16, 2, 64
page_size, pages_per_sequence = 16, 8            # up to 128 tokens a sequence
torch.manual_seed(0)

# The page pool, and a block table that gives each sequence its pages.
num_pages = batch * pages_per_sequence
k_cache = torch.zeros(num_pages, page_size, heads_k, head_dim, dtype=dtype, device=device)
v_cache = torch.zeros_like(k_cache)
block_table = torch.randperm(num_pages, device=device).view(batch, -1).to(torch.int32)

# A prompt of a different length for each sequence, written into the cache
# by a first call (its queries are the prompt's last token).
prompt = [5, 40, 77]
cache_seqlens = torch.zeros(batch, dtype=torch.int32, device=device)
keys = [torch.randn(n, heads_k, head_dim, dtype=dtype, device=device) for n in prompt]
values = [torch.randn(n, heads_k, head_dim, dtype=dtype, device=device) for n in prompt]
for b in range(batch):
    # One sequence at a time: the chunks differ in length.
    flash_attn_with_kvcache(torch.randn(1, 1, heads, head_dim, dtype=dtype, device=device),
                            k_cache, v_cache, keys[b][None], values[b][None],
                            cache_seqlens=cache_seqlens[b:b + 1],
                            block_table=block_table[b:b + 1])
cache_seqlens += torch.tensor(prompt, dtype=torch.int32, device=device)


def reference(q, b):
    """PyTorch's attention of sequence b's query to its keys so far."""
    k = keys[b].transpose(0, 1).repeat_interleave(heads // heads_k, 0).float()
    v = values[b].transpose(0, 1).repeat_interleave(heads // heads_k, 0).float()
    return torch.nn.functional.scaled_dot_product_attention(
        q[b].transpose(0, 1).float(), k, v).transpose(0, 1)


for step in range(4):
    q = torch.randn(batch, 1, heads, head_dim, dtype=dtype, device=device)
    k_new = torch.randn(batch, 1, heads_k, head_dim, dtype=dtype, device=device)
    v_new = torch.randn(batch, 1, heads_k, head_dim, dtype=dtype, device=device)
    out = flash_attn_with_kvcache(q, k_cache, v_cache, k_new, v_new,
                                  cache_seqlens=cache_seqlens, block_table=block_table,
                                  causal=True)
    cache_seqlens += 1
    for b in range(batch):
        keys[b] = torch.cat((keys[b], k_new[b]))
        values[b] = torch.cat((values[b], v_new[b]))
    error = max((out[b].float() - reference(q, b)).abs().max().item() for b in range(batch))
    print(f"step {step}: cache lengths {cache_seqlens.tolist()}, max |out - SDPA| = "
          f"{error:.4f} ({device})")
    assert error < 3e-2, "flash_attn_with_kvcache disagrees with PyTorch"
