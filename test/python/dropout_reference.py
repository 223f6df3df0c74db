"""The dropout masks of Tile's attention kernels, written apart from them
in numpy: Philox 4x32-10 on the counter (key, query, query head, 0) under
each sequence's int64 seed, the first word as a uniform in [0, 1), the
probability kept when the uniform is at least dropout_p.  Shared by the
interpreter's tests (test_kernels_numeric.py, test_attention_api.py) and
the GPU's (test/gpu/check_flash_attn_api.py); test_random.py checks the
Philox against Random123's known answers."""

import numpy as np

LOW32 = 0xFFFFFFFF


def philox_numpy(seed, c0, c1, c2, c3, rounds=10):
    """Philox 4x32 (Salmon et al., SC'11) of the counters (numpy arrays of
    any shapes that broadcast, values below 2^32) under the 64-bit key
    `seed`: four uint64 arrays of 32-bit words."""
    c0, c1, c2, c3 = (np.broadcast_to(np.asarray(c, np.uint64), np.broadcast_shapes(
        *(np.shape(x) for x in (c0, c1, c2, c3)))).copy() for c in (c0, c1, c2, c3))
    k0, k1 = np.uint64(seed & LOW32), np.uint64((seed >> 32) & LOW32)
    low = np.uint64(LOW32)
    for _ in range(rounds):
        p0, p2 = np.uint64(0xD2511F53) * c0, np.uint64(0xCD9E8D57) * c2
        c0, c1, c2, c3 = ((p2 >> np.uint64(32)) ^ c1 ^ k0, p2 & low,
                          (p0 >> np.uint64(32)) ^ c3 ^ k1, p0 & low)
        k0, k1 = (k0 + np.uint64(0x9E3779B9)) & low, (k1 + np.uint64(0xBB67AE85)) & low
    return c0, c1, c2, c3


def uniform_numpy(words):
    """tl.uint_to_uniform_float of 32-bit words (uint64 arrays): float32."""
    x = words.astype(np.uint32).view(np.int32).astype(np.int64)
    x = np.where(x < 0, -x - 1, x)
    return x.astype(np.float32) * np.float32(4.6566127342e-10)


def dropout_kept(seeds, heads, n, n_kv, dropout_p):
    """keep / (1 - dropout_p), [Z, H, N, N_KV]: the kernels' mask (Philox
    4x32-10 on the counter (key, query, head, 0) under sequence z's seed,
    its first word as a uniform kept when at least dropout_p), from the
    reference Philox."""
    keys = np.arange(n_kv)[None, None, :]
    queries = np.arange(n)[None, :, None]
    head = np.arange(heads)[:, None, None]
    kept = []
    for seed in seeds:
        words, _, _, _ = philox_numpy(int(seed), keys, queries, head, 0)
        keep = uniform_numpy(words) >= np.float32(dropout_p)
        kept.append(keep / (1.0 - np.float64(np.float32(dropout_p))))
    return np.stack(kept)
