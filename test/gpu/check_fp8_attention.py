"""The fp8 attention forward (attn_fwd_fp8e4nv_d64, _d128: wgmma k32, V
transposed) on the GPU, launched from PyTorch: e4m3 Q, K, V with per-tensor
descale factors against the float64 attention of the descaled inputs, at
lengths that are not multiples of the blocks. O may be off by 2^-4 of
max|V| (P rounded to e4m3) plus its bf16 rounding; LSE within 1e-4 plus
2^-12 of the scores' |Q| |K| scale (wgmma's fp8 sums).
Exits 1 if a case fails.

    check_fp8_attention.py KERNEL_FOLDER   (run from a GPU bundle)
"""

import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.abspath(os.path.join(HERE, "..", "..", "python")))

import torch  # noqa: E402

from tile import runtime  # noqa: E402

DESCALE = (0.5, 0.25, 2.0)
LENGTHS = (1, 100, 257, 1000, 4097)


def fp8_inputs(z, h, n, d, generator):
    """Q, K [z, h, n, d] and VT [z, h, d, n] (rows padded to 16) in e4m3."""
    fp8 = torch.float8_e4m3fn
    q = (torch.randn(z, h, n, d, generator=generator, device="cuda") * 2).to(fp8)
    k = (torch.randn(z, h, n, d, generator=generator, device="cuda") * 2).to(fp8)
    width = -(-n // 16) * 16
    vt = torch.randn(z, h, d, width, generator=generator, device="cuda").to(fp8)[..., :n]
    return q, k, vt


def launch(kernel, q, k, vt, o, lse, descale):
    z, h, n, d = q.shape
    args = {"Q": runtime.DevicePointer(q.data_ptr(), "fp8e4nv"),
            "K": runtime.DevicePointer(k.data_ptr(), "fp8e4nv"),
            "VT": runtime.DevicePointer(vt.data_ptr(), "fp8e4nv"),
            "O": runtime.DevicePointer(o.data_ptr(), "bf16"),
            "LSE": runtime.DevicePointer(lse.data_ptr(), "fp32"),
            "DESCALE": runtime.DevicePointer(descale.data_ptr(), "fp32"),
            "sm_scale": 1 / math.sqrt(d), "Z": z, "H": h, "N_CTX": n}
    for prefix, t in (("", q), ("v", vt), ("o", o)):
        for name, stride in zip(("z", "h", "n" if prefix != "v" else "d"), t.stride()[:3]):
            args[f"stride_{prefix}{name}"] = stride
    kernel.launch(args, q.device.index, torch.cuda.current_stream().cuda_stream)


def main():
    bundle = runtime.Bundle(sys.argv[1])
    generator = torch.Generator(device="cuda").manual_seed(0)
    descale = torch.tensor(DESCALE, device="cuda")
    failed = total = 0
    for d in (64, 128):
        kernel = bundle.find(f"attn_fwd_fp8e4nv_d{d}")
        for n in LENGTHS:
            z, h = 2, 3
            q, k, vt = fp8_inputs(z, h, n, d, generator)
            o = torch.full((z, h, n, d), float("nan"), device="cuda", dtype=torch.bfloat16)
            lse = torch.empty(z * h * n, device="cuda")
            launch(kernel, q, k, vt, o, lse, descale)
            torch.cuda.synchronize()
            q64, k64 = q.double() * DESCALE[0], k.double() * DESCALE[1]
            v64 = vt.double().transpose(-1, -2) * DESCALE[2]
            scores = q64 @ k64.transpose(-1, -2) / math.sqrt(d)
            o_ref = torch.softmax(scores, -1) @ v64
            lse_ref = torch.logsumexp(scores, -1)
            bound = 2.0**-4 * v64.abs().max() + 2.0**-8 * o_ref.abs()
            worst = ((o.double() - o_ref).abs() / bound).max().item()
            lse_error = (lse.view(z, h, n).double() - lse_ref).abs().max().item()
            # Hopper's wgmma sums fp8 products with about 13 bits of
            # alignment, not f32's 24: the scores may be off by 2^-12 of
            # their |Q| |K| scale.
            magnitude = (q64.abs() @ k64.abs().transpose(-1, -2)).max().item() / math.sqrt(d)
            ok = worst <= 1 and lse_error <= 1e-4 + 2.0**-12 * magnitude
            failed += not ok
            total += 1
            print(f"fp8 attention d{d} N={n}: O {worst:.3f} of its bound, LSE error "
                  f"{lse_error:.1e}: {'PASS' if ok else 'FAIL'}")
    print(f"fp8 attention: {total - failed} of {total} cases passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
