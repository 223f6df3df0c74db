"""The GEMM of examples/descriptor_matmul.py on the GPU: launched from
PyTorch with tile.TensorDescriptor arguments (host-side descriptors), its K
loop copied by the TMA, against the float64 product of the same inputs at
shapes that are not multiples of the 64 x 64 blocks. Rows are padded to 16
bytes, as descriptors need; C's padding must stay untouched. Exits 1 if a
shape fails.

    check_descriptor_matmul.py KERNEL_FOLDER   (run from a GPU bundle)
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.abspath(os.path.join(HERE, "..", "..", "python")))

import torch  # noqa: E402

import tile  # noqa: E402
from tile import runtime  # noqa: E402

SHAPES = [(7, 8, 9), (100, 40, 70), (64, 64, 64), (129, 257, 65), (1000, 1008, 999)]
# fp16 products accumulated in fp32: the normwise error stays near 2e-4.
LIMIT = 4e-3
PAD = 7.0


def padded(rows, cols, fill=None):
    """A rows x cols fp16 view of a tensor whose rows are 16-byte multiples."""
    width = (cols + 7) // 8 * 8
    full = (torch.full((rows, width), fill, device="cuda", dtype=torch.float16)
            if fill is not None else
            torch.empty(rows, width, device="cuda", dtype=torch.float16).uniform_(-1, 1))
    return full, full[:, :cols]


def main():
    kernel = runtime.Bundle(sys.argv[1]).find("descriptor_matmul")
    torch.manual_seed(0)
    failed = 0
    for m, n, k in SHAPES:
        _, a = padded(m, k)
        _, b = padded(k, n)
        c_full, c = padded(m, n, PAD)
        kernel.launch({"a_desc": tile.TensorDescriptor.from_tensor(a, [64, 64]),
                       "b_desc": tile.TensorDescriptor.from_tensor(b, [64, 64]),
                       "c_desc": tile.TensorDescriptor.from_tensor(c, [64, 64])},
                      torch.cuda.current_device(), torch.cuda.current_stream().cuda_stream)
        torch.cuda.synchronize()
        reference = a.double() @ b.double()
        error = ((c.double() - reference).norm() / reference.norm()).item()
        untouched = bool((c_full[:, n:] == PAD).all())
        ok = error < LIMIT and untouched
        failed += not ok
        print(f"descriptor matmul {m}x{n}x{k}: normwise {error:.2e} (limit {LIMIT}), "
              f"padding {'untouched' if untouched else 'WRITTEN'}: {'PASS' if ok else 'FAIL'}")
    print(f"descriptor matmul: {len(SHAPES) - failed} of {len(SHAPES)} shapes passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
