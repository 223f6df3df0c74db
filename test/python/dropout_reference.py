"""The dropout masks of Tile's attention kernels, written apart from them
in numpy: Philox 2x32-10 on the counter (key', query' ^ hi32(seed)), x' the
index x without its bit 3 (the bits above it shifted down one), under the
key lo32(seed) + query head, each sequence's int64 seed; word (key >> 3) &
1 of it, its high 16 bits where (query >> 3) & 1 else its low, over 2^16 as
a uniform in [0, 1), the probability kept when the uniform is at least
dropout_p.  Shared by the
interpreter's tests (test_kernels_numeric.py, test_attention_api.py) and
the GPU's (test/gpu/check_flash_attn_api.py); test_random.py checks the
Philox against Random123's known answers."""

import numpy as np

LOW32 = 0xFFFFFFFF


def philox2x32_numpy(key, c0, c1, rounds=10):
    """Philox 2x32 of the counters (numpy arrays below 2^32 that broadcast)
    under the 32-bit keys `key` (an array that broadcasts with them): two
    uint64 arrays of 32-bit words."""
    shape = np.broadcast_shapes(np.shape(key), np.shape(c0), np.shape(c1))
    key, c0, c1 = (np.broadcast_to(np.asarray(x, np.uint64), shape).copy()
                   for x in (key, c0, c1))
    low = np.uint64(LOW32)
    for _ in range(rounds):
        product = np.uint64(0xD256D193) * c0
        c0, c1 = (product >> np.uint64(32)) ^ key ^ c1, product & low
        key = (key + np.uint64(0x9E3779B9)) & low
    return c0, c1


def uniform_numpy(words):
    """tl.uint_to_uniform_float of 32-bit words (uint64 arrays): float32."""
    x = words.astype(np.uint32).view(np.int32).astype(np.int64)
    x = np.where(x < 0, -x - 1, x)
    return x.astype(np.float32) * np.float32(4.6566127342e-10)


def without_bit3(index):
    """index with its bit 3 taken out, the bits above it shifted down."""
    return ((index >> 4) << 3) | (index & 7)


def dropout_kept(seeds, heads, n, n_kv, dropout_p):
    """keep / (1 - dropout_p), [Z, H, N, N_KV]: the kernels' masks, from
    the reference Philox (the module's docstring), sequence z's under
    seeds[z]."""
    keys = np.arange(n_kv)[None, None, :]
    queries = np.arange(n)[None, :, None]
    head = np.arange(heads)[:, None, None]
    kept = []
    for seed in seeds:
        seed = int(seed) % 2**64
        words = philox2x32_numpy((seed + head) & LOW32, without_bit3(keys),
                                 without_bit3(queries) ^ (seed >> 32))
        word = np.where(keys & 8, words[1], words[0])
        half = np.where(queries & 8, word >> np.uint64(16), word) & np.uint64(0xFFFF)
        keep = half.astype(np.float32) * np.float32(1 / 65536) >= np.float32(dropout_p)
        kept.append(keep / (1.0 - np.float64(np.float32(dropout_p))))
    return np.stack(kept)
