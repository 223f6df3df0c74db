#!/usr/bin/env python3
"""TMA descriptors encoded by the NVIDIA driver through Tile's runtime
(tile.runtime.TensorMapDesc -> tileEncodeTensorMap -> cuTensorMapEncodeTiled).

For fp16, bf16 and fp32 512 x 1024 CUDA tensors read in boxes of 128 rows
by one 128-byte row with the 128-byte swizzle: the descriptor from the
tensor encodes (128 bytes, not all zero) and equals the one from the same
plain values.  A view that starts 2 bytes into the tensor (t[:, 1:] of
fp16) must be refused before the driver, with the rule named ("global
address").  No kernel reads the descriptors yet: that comes with the
compiler's TMA lowering (issue #34).  test/gpu/tensor_maps.sh (run.sh tma)
runs it; needs PyTorch with CUDA.

    python3 test/gpu/check_tensor_maps.py [--junit FILE]

Prints PASS or FAIL per case; exits 1 on a failure.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# test/gpu/ below the root of a checkout or of a GPU bundle: python/ holds tile.
sys.path.insert(0, os.path.abspath(os.path.join(HERE, "..", "..", "python")))

import torch  # noqa: E402

import junit  # noqa: E402  (beside this file)
from tile import runtime  # noqa: E402
from tile.runtime import TensorMapDesc  # noqa: E402

ROWS, COLUMNS, BOX_ROWS, SWIZZLE = 512, 1024, 128, 128
DTYPES = {torch.float16: "fp16", torch.bfloat16: "bf16", torch.float32: "fp32"}


def check_encodes(dtype):
    """The descriptor of a whole 2-D tensor, from the tensor and from plain
    values; an error's text, or None."""
    tensor = torch.zeros(ROWS, COLUMNS, device="cuda", dtype=dtype)
    box_columns = SWIZZLE // tensor.element_size()   # one swizzle span per row
    encoded = TensorMapDesc.from_tensor(tensor, (BOX_ROWS, box_columns),
                                        swizzle=SWIZZLE).encode()
    if not isinstance(encoded, bytes) or len(encoded) != runtime.TENSOR_MAP_BYTES:
        return f"encode() gave {type(encoded).__name__} of {len(encoded)} bytes, not 128"
    if not any(encoded):
        return "the descriptor is all zeros"
    plain = TensorMapDesc(DTYPES[dtype], tensor.data_ptr(), [COLUMNS, ROWS],
                          [COLUMNS * tensor.element_size()], [box_columns, BOX_ROWS],
                          swizzle=SWIZZLE).encode()
    if plain != encoded:
        return "the descriptors from the tensor and from plain values differ"
    return None


def check_misaligned_is_refused():
    tensor = torch.zeros(ROWS, COLUMNS, device="cuda", dtype=torch.float16)
    view = tensor[:, 1:]   # starts 2 bytes in
    try:
        TensorMapDesc.from_tensor(view, (BOX_ROWS, 64), swizzle=SWIZZLE).encode()
    except ValueError as error:
        if str(error).startswith("TMA descriptor: global address:"):
            return None
        return f"refused, but not by the global address rule: {error}"
    return "a descriptor 2 bytes past a 16-byte boundary was encoded"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--junit", metavar="FILE", help="write the cases as JUnit XML")
    args = parser.parse_args()
    print(f"device: {torch.cuda.get_device_name()}; runtime: {runtime.library().path}")
    checks = [(f"encode {name} {ROWS}x{COLUMNS}, box {BOX_ROWS}x{SWIZZLE}B, swizzle "
               f"{SWIZZLE}B", lambda dtype=dtype: check_encodes(dtype))
              for dtype, name in DTYPES.items()]
    checks.append(("a misaligned address is refused (global address)",
                   check_misaligned_is_refused))
    cases = []
    for name, check in checks:
        try:
            problem = check()
        except Exception as error:   # a case's failure, reported with the others
            problem = f"{type(error).__name__}: {error}"
        print(f"{'PASS' if problem is None else 'FAIL'} {name}"
              + ("" if problem is None else f": {problem}"))
        cases.append((name, problem is None, problem or ""))
    if args.junit:
        junit.write(args.junit, "tensor_maps", cases)
    return 0 if all(passed for _, passed, _ in cases) else 1


if __name__ == "__main__":
    sys.exit(main())
