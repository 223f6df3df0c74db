"""The FlashAttention-2 forward of the puzzles: one head, fp32.

O = softmax(Q @ K^T * sm_scale) @ V for contiguous row-major (n, D) tensors.
One program per block of BR query rows, grid (cdiv(n, BR),); key blocks of
BC rows are masked where they run past n.
"""

import tile
import tile.language as tl


@tile.jit(launch=tile.Launch(grid="cdiv(n, BR)"))
def flash_attn_puzzle(Q, K, V, O, n, sm_scale,
                      D: tl.constexpr, BR: tl.constexpr, BC: tl.constexpr):
    rows = tl.program_id(0) * BR + tl.arange(0, BR)
    cols = tl.arange(0, D)
    row_mask = rows < n
    q_offsets = rows[:, None] * D + cols[None, :]
    # Rows past n load zeros: their scores stay finite (never all -inf), and
    # they are not stored.
    q = tl.load(Q + q_offsets, mask=row_mask[:, None], other=0.0)
    o = tl.zeros([BR, D], tl.float32)
    row_sum = tl.zeros([BR], tl.float32)
    row_max = tl.full([BR], -float("inf"), tl.float32)
    for start in range(0, n, BC):
        keys = start + tl.arange(0, BC)
        key_mask = keys < n
        kv_offsets = keys[:, None] * D + cols[None, :]
        k = tl.load(K + kv_offsets, mask=key_mask[:, None], other=0.0)
        v = tl.load(V + kv_offsets, mask=key_mask[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k)) * sm_scale
        s = tl.where(key_mask[None, :], s, -float("inf"))
        # The first block holds key 0, so new_max is finite from then on.
        new_max = tl.maximum(row_max, tl.max(s, axis=1))
        p = tl.exp(s - new_max[:, None])
        alpha = tl.exp(row_max - new_max)
        row_sum = row_sum * alpha + tl.sum(p, axis=1)
        o = o * alpha[:, None] + tl.dot(p, v)
        row_max = new_max
    tl.store(O + q_offsets, o / row_sum[:, None], mask=row_mask[:, None])
