"""Runs every window, softcap, ALiBi, dropout and deterministic attention
variant of the bundle, forward and backward, through
tile.attention.flash_attn_func at a ragged length (head dims 32 to 256, fp16
and bf16), for compute-sanitizer (test/gpu/sanitize.sh): outputs and
gradients must be finite; their values are checked in
check_flash_attn_api.py.  At d128 the non-causal forwards are the _n4096
ones (the length is under their bound)."""

import sys

import torch

from tile.attention import flash_attn_func

# (causal, window_size, softcap, alibi, dropout_p, deterministic): each window,
# softcap, ALiBi, dropout and deterministic variant (the last, attn_bwd's
# and attn_bwd_dq's).
CASES = ((False, (-1, -1), 30.0, False, 0.0, False),   # noncausal_softcap
         (True, (-1, -1), 30.0, False, 0.0, False),    # causal_softcap
         (True, (17, 0), 0.0, False, 0.0, False),      # local
         (False, (40, 5), 30.0, False, 0.0, False),    # local_softcap
         (False, (-1, -1), 0.0, True, 0.0, False),     # noncausal_alibi
         (True, (-1, -1), 0.0, True, 0.0, False),      # causal_alibi
         (False, (40, 5), 0.0, True, 0.0, False),      # local_alibi
         (False, (-1, -1), 0.0, False, 0.2, False),    # noncausal_dropout
         (True, (-1, -1), 0.0, False, 0.2, False),     # causal_dropout
         (False, (40, 5), 0.0, False, 0.2, False),     # local_dropout
         (False, (-1, -1), 0.0, False, 0.0, True),     # noncausal_deterministic
         (True, (-1, -1), 0.0, False, 0.0, True),      # causal_deterministic
         (False, (40, 5), 0.0, False, 0.0, True))      # local_deterministic


def main(device="cuda", head_dims=(32, 64, 128, 256)):
    torch.manual_seed(0)
    ran = 0
    for head_dim in head_dims:
        for dtype in (torch.float16, torch.bfloat16):
            for causal, window, softcap, alibi, dropout_p, deterministic in CASES:
                q, k, v = (torch.randn(1, 100, 2, head_dim, device=device, dtype=dtype,
                                       requires_grad=True) for _ in range(3))
                slopes = torch.tensor([0.25, 0.0625], device=device) if alibi else None
                out = flash_attn_func(q, k, v, dropout_p, causal=causal, window_size=window,
                                      softcap=softcap, alibi_slopes=slopes,
                                      deterministic=deterministic)
                out.backward(torch.randn_like(out))
                for name, t in (("out", out), ("dq", q.grad), ("dk", k.grad),
                                ("dv", v.grad)):
                    if not torch.isfinite(t).all():
                        sys.exit(f"d{head_dim} {dtype} causal {causal} window {window} "
                                 f"softcap {softcap} alibi {alibi} dropout {dropout_p} "
                                 f"deterministic {deterministic}: "
                                 f"{name} is not finite")
                ran += 1
    print(f"window, softcap, ALiBi, dropout and deterministic variants: {ran} "
          f"forward and backward passes ran")


if __name__ == "__main__":
    main()
