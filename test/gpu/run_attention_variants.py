"""Runs every window, softcap and ALiBi attention variant of the bundle,
forward and backward, through tile.attention.flash_attn_func at a ragged length
(head dims 32 to 256, fp16 and bf16), for compute-sanitizer
(test/gpu/sanitize.sh): outputs and gradients must be finite; their values
are checked in check_flash_attn_api.py."""

import sys

import torch

from tile.attention import flash_attn_func

# (causal, window_size, softcap, alibi): each window, softcap and ALiBi
# variant.
CASES = ((False, (-1, -1), 30.0, False),   # noncausal_softcap
         (True, (-1, -1), 30.0, False),    # causal_softcap
         (True, (17, 0), 0.0, False),      # local
         (False, (40, 5), 30.0, False),    # local_softcap
         (False, (-1, -1), 0.0, True),     # noncausal_alibi
         (True, (-1, -1), 0.0, True),      # causal_alibi
         (False, (40, 5), 0.0, True))      # local_alibi


def main(device="cuda", head_dims=(32, 64, 128, 256)):
    torch.manual_seed(0)
    ran = 0
    for head_dim in head_dims:
        for dtype in (torch.float16, torch.bfloat16):
            for causal, window, softcap, alibi in CASES:
                q, k, v = (torch.randn(1, 100, 2, head_dim, device=device, dtype=dtype,
                                       requires_grad=True) for _ in range(3))
                slopes = torch.tensor([0.25, 0.0625], device=device) if alibi else None
                out = flash_attn_func(q, k, v, causal=causal, window_size=window,
                                      softcap=softcap, alibi_slopes=slopes)
                out.backward(torch.randn_like(out))
                for name, t in (("out", out), ("dq", q.grad), ("dk", k.grad),
                                ("dv", v.grad)):
                    if not torch.isfinite(t).all():
                        sys.exit(f"d{head_dim} {dtype} causal {causal} window {window} "
                                 f"softcap {softcap} alibi {alibi}: {name} is not finite")
                ran += 1
    print(f"window, softcap and ALiBi variants: {ran} forward and backward passes ran")


if __name__ == "__main__":
    main()
