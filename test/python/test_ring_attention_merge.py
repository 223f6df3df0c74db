"""The log-sum-exp merge of partial attention results (CPU)."""

import math

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is needed for tile.attention's API")

from tile.attention.merge import merge_parts, merge_two  # noqa: E402


def partial_attention(q, k, v, mask):
    """(out, lse) over the keys mask allows; rows with no key: out 0, lse -inf."""
    scores = torch.einsum("bnhd,bmhd->bhnm", q, k).masked_fill(~mask, -math.inf)
    lse = torch.logsumexp(scores, -1)
    probs = torch.exp(scores - lse[..., None]).nan_to_num(0.0)
    return torch.einsum("bhnm,bmhd->bnhd", probs, v), lse


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_merge_matches_softmax_over_concatenated_keys(dtype):
    torch.manual_seed(0)
    b, n, h, d, splits = 2, 7, 3, 8, [3, 5, 4]
    q = torch.randn(b, n, h, d, dtype=dtype) * 3
    keys = sum(splits)
    k, v = (torch.randn(b, keys, h, d, dtype=dtype) * 3 for _ in range(2))
    full = torch.ones(b, h, n, keys, dtype=torch.bool)
    want_out, want_lse = partial_attention(q, k, v, full)
    outs, lses, start = [], [], 0
    for size in splits:
        o, l = partial_attention(q, k[:, start:start + size], v[:, start:start + size],
                                 full[..., :size])
        outs.append(o)
        lses.append(l)
        start += size
    out, lse = merge_parts(outs, lses)
    tol = 1e-5 if dtype == torch.float32 else 1e-12
    torch.testing.assert_close(out, want_out, rtol=tol, atol=tol)
    torch.testing.assert_close(lse, want_lse, rtol=tol, atol=tol)
    # Pairwise merging in any order gives the same.
    out2, lse2 = None, None
    for o, l in reversed(list(zip(outs, lses))):
        out2, lse2 = merge_two(out2, lse2, o, l)
    torch.testing.assert_close(out2, want_out, rtol=tol, atol=tol)
    torch.testing.assert_close(lse2, want_lse, rtol=tol, atol=tol)


def test_rows_that_saw_no_key_contribute_nothing():
    torch.manual_seed(1)
    b, n, h, d = 1, 4, 2, 8
    q = torch.randn(b, n, h, d, dtype=torch.float64)
    k, v = (torch.randn(b, 6, h, d, dtype=torch.float64) for _ in range(2))
    # Causal-like: row i sees keys 0..i-1 (row 0 none at all).
    mask = torch.ones(6, dtype=torch.bool).expand(n, 6).tril(-1)
    mask = mask[None, None].expand(b, h, n, 6)
    o1, l1 = partial_attention(q, k[:, :3], v[:, :3], mask[..., :3])
    o2, l2 = partial_attention(q, k[:, 3:], v[:, 3:], mask[..., 3:])
    assert torch.isneginf(l2[..., :4]).all()     # block 2 seen by no row
    o2 = o2.clone()
    o2[:, :] = float("nan")                     # garbage where lse is -inf
    out, lse = merge_parts([o1, o2], [l1, l2])
    want_out, want_lse = partial_attention(q, k, v, mask)
    assert not torch.isnan(out).any()
    assert torch.isneginf(lse[:, :, 0]).all()
    assert (out[:, 0] == 0).all()
    torch.testing.assert_close(out, want_out)
    torch.testing.assert_close(lse, want_lse)


def test_all_minus_infinity_rows_give_zero_without_nan():
    out = torch.full((1, 2, 1, 4), float("nan"))
    lse = torch.full((1, 1, 2), -math.inf)
    merged, merged_lse = merge_parts([out, out], [lse, lse])
    assert (merged == 0).all() and torch.isneginf(merged_lse).all()
    merged, merged_lse = merge_two(None, None, out, lse)
    merged, merged_lse = merge_two(merged, merged_lse, out, lse)
    assert (merged == 0).all() and torch.isneginf(merged_lse).all()


def test_large_lse_does_not_overflow():
    out = torch.ones(1, 1, 1, 2, dtype=torch.float32)
    lse1 = torch.tensor([[[1000.0]]])
    lse2 = torch.tensor([[[1000.0 + math.log(3.0)]]])
    merged, lse = merge_parts([out, 3 * out], [lse1, lse2])
    torch.testing.assert_close(lse, torch.tensor([[[1000.0 + math.log(4.0)]]]))
    # lse near 1000 is rounded to float32's ulp there (6e-5): that much error.
    torch.testing.assert_close(merged, torch.full((1, 1, 1, 2), 2.5), rtol=1e-4, atol=0)


def test_half_inputs_merge_in_float32():
    out = torch.ones(1, 1, 1, 2, dtype=torch.float16)
    lse = torch.zeros(1, 1, 1)
    merged, merged_lse = merge_two(None, None, out, lse)
    assert merged.dtype == torch.float32 and merged_lse.dtype == torch.float32


def test_mismatched_parts_are_refused():
    with pytest.raises(ValueError, match="cannot merge"):
        merge_two(torch.zeros(1, 2, 1, 4), torch.zeros(1, 1, 2),
                  torch.zeros(1, 3, 1, 4), torch.zeros(1, 1, 3))
    with pytest.raises(ValueError, match="as many outs as lses"):
        merge_parts([torch.zeros(1)], [])
