"""Runs every window, softcap, ALiBi and dropout attention variant of the bundle,
forward and backward, through tile.attention.flash_attn_func at a ragged length
(head dims 32 to 256, fp16 and bf16), for compute-sanitizer
(test/gpu/sanitize.sh): outputs and gradients must be finite; their values
are checked in check_flash_attn_api.py."""

import sys

import torch

from tile.attention import flash_attn_func

# (causal, window_size, softcap, alibi, dropout_p): each window, softcap,
# ALiBi and dropout variant.
CASES = ((False, (-1, -1), 30.0, False, 0.0),   # noncausal_softcap
         (True, (-1, -1), 30.0, False, 0.0),    # causal_softcap
         (True, (17, 0), 0.0, False, 0.0),      # local
         (False, (40, 5), 30.0, False, 0.0),    # local_softcap
         (False, (-1, -1), 0.0, True, 0.0),     # noncausal_alibi
         (True, (-1, -1), 0.0, True, 0.0),      # causal_alibi
         (False, (40, 5), 0.0, True, 0.0),      # local_alibi
         (False, (-1, -1), 0.0, False, 0.2),    # noncausal_dropout
         (True, (-1, -1), 0.0, False, 0.2),     # causal_dropout
         (False, (40, 5), 0.0, False, 0.2))     # local_dropout


def main(device="cuda", head_dims=(32, 64, 128, 256)):
    torch.manual_seed(0)
    ran = 0
    for head_dim in head_dims:
        for dtype in (torch.float16, torch.bfloat16):
            for causal, window, softcap, alibi, dropout_p in CASES:
                q, k, v = (torch.randn(1, 100, 2, head_dim, device=device, dtype=dtype,
                                       requires_grad=True) for _ in range(3))
                slopes = torch.tensor([0.25, 0.0625], device=device) if alibi else None
                out = flash_attn_func(q, k, v, dropout_p, causal=causal, window_size=window,
                                      softcap=softcap, alibi_slopes=slopes)
                out.backward(torch.randn_like(out))
                for name, t in (("out", out), ("dq", q.grad), ("dk", k.grad),
                                ("dv", v.grad)):
                    if not torch.isfinite(t).all():
                        sys.exit(f"d{head_dim} {dtype} causal {causal} window {window} "
                                 f"softcap {softcap} alibi {alibi} dropout {dropout_p}: "
                                 f"{name} is not finite")
                ran += 1
    print(f"window, softcap, ALiBi and dropout variants: {ran} forward and backward "
          f"passes ran")


if __name__ == "__main__":
    main()
