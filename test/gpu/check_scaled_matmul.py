"""The fp8 GEMM (matmul_scaled_fp8e4nv, matmul_scaled_fp8e5: wgmma k32, TMA
copies) on the GPU, launched from PyTorch: C = (A @ B) * a_scale * b_scale
in bf16, B column-major (its [N, K] transpose), against the float64 product
of the same fp8 inputs at shapes that are not multiples of the 128 x 256 x
128 blocks, rows padded to 16 elements. C's padding must stay untouched.
Exits 1 if a case fails.

    check_scaled_matmul.py KERNEL_FOLDER   (run from a GPU bundle)
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.abspath(os.path.join(HERE, "..", "..", "python")))

import torch  # noqa: E402

from tile import runtime  # noqa: E402

SHAPES = [(7, 8, 16), (100, 40, 70), (128, 256, 128), (129, 257, 145), (1000, 1008, 999),
          (4096, 4096, 4096)]
DTYPES = {"fp8e4nv": torch.float8_e4m3fn, "fp8e5": torch.float8_e5m2}
# Exact fp8 products summed in fp32, then one rounding to bf16 (2^-8).
LIMIT = 2.0**-8 + 1e-5
PAD = 7.0


def padded(rows, cols, dtype, fill=None):
    """A rows x cols view of a tensor whose rows are 16-element multiples."""
    width = (cols + 15) // 16 * 16
    if fill is not None:
        full = torch.full((rows, width), fill, device="cuda", dtype=dtype)
    else:
        full = torch.randn(rows, width, device="cuda").to(dtype)
    return full, full[:, :cols]


def launch(kernel, dtype_name, a, bt, c, scale_a, scale_b):
    """c = (a @ bt.T) * scale_a * scale_b by a matmul_scaled variant, on the
    current stream: a [M, K] and bt [N, K] in dtype_name, c [M, N] bf16, the
    scales one-element fp32 tensors."""
    (m, k), n = a.shape, bt.shape[0]
    kernel.launch({"A": runtime.DevicePointer(a.data_ptr(), dtype_name),
                   "B": runtime.DevicePointer(bt.data_ptr(), dtype_name),
                   "C": runtime.DevicePointer(c.data_ptr(), "bf16"),
                   "A_SCALE": runtime.DevicePointer(scale_a.data_ptr(), "fp32"),
                   "B_SCALE": runtime.DevicePointer(scale_b.data_ptr(), "fp32"),
                   "M": m, "N": n, "K": k, "stride_am": a.stride(0),
                   "stride_bn": bt.stride(0), "stride_cm": c.stride(0)},
                  a.device.index, torch.cuda.current_stream().cuda_stream)


def main():
    bundle = runtime.Bundle(sys.argv[1])
    torch.manual_seed(0)
    scale_a = torch.tensor([0.5], device="cuda")
    scale_b = torch.tensor([0.125], device="cuda")
    failed = total = 0
    for name, dtype in DTYPES.items():
        kernel = bundle.find(f"matmul_scaled_{name}")
        for m, n, k in SHAPES:
            _, a = padded(m, k, dtype)
            _, bt = padded(n, k, dtype)
            c_full, c = padded(m, n, torch.bfloat16, PAD)
            launch(kernel, name, a, bt, c, scale_a, scale_b)
            torch.cuda.synchronize()
            reference = (a.double() @ bt.double().T) * 0.5 * 0.125
            # Elementwise, relative to the row-and-column scale of the sum.
            magnitude = (a.double().abs() @ bt.double().abs().T) * 0.5 * 0.125
            error = ((c.double() - reference).abs() / magnitude.clamp_min(1e-30)).max().item()
            untouched = bool((c_full[:, n:] == PAD).all())
            ok = error <= LIMIT and untouched
            failed += not ok
            total += 1
            print(f"scaled matmul {name} {m}x{n}x{k}: max error {error:.2e} of the |A||B| "
                  f"scale (limit {LIMIT:.2e}), padding "
                  f"{'untouched' if untouched else 'WRITTEN'}: {'PASS' if ok else 'FAIL'}")
    print(f"scaled matmul: {total - failed} of {total} cases passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
