#!/usr/bin/env python3
"""Checks one GEMM that tile-run wrote: C[:, :N] = A[:, :K] @ B[:, :N].

A, B and C are .npy files of the buffers tile-run ran the kernel on, rows
as long as their strides (bf16 comes back as float32 holding bf16
values).  The reference is the float64 product of the same inputs.  Each
element must be within one rounding to the element type (unit roundoff u:
2^-11 fp16, 2^-8 bf16) of it, plus K fp32 roundings of the sum of
|products| (2^-23 each: the tensor cores may truncate), a bound that grows
with K; normwise, |C - ref| / |ref| must stay below u + K * 2^-24.  The
columns of C past N were NaN and must still be.  Exits 1 on a failure.
test/gpu/matmul.sh runs it.

    check_matmul.py A.npy B.npy C.npy --m M --n N --k K --dtype fp16|bf16
"""

import argparse
import sys

import numpy as np

UNIT_ROUNDOFF = {"fp16": 2.0**-11, "bf16": 2.0**-8}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("a", "b", "c"):
        parser.add_argument(name)
    for name in ("--m", "--n", "--k"):
        parser.add_argument(name, type=int, required=True)
    parser.add_argument("--dtype", choices=UNIT_ROUNDOFF, required=True)
    args = parser.parse_args()
    m, n, k = args.m, args.n, args.k
    a, b, c = (np.load(path) for path in (args.a, args.b, args.c))
    a, b = a[:m, :k].astype(np.float64), b[:k, :n].astype(np.float64)
    out, padding = c[:m, :n].astype(np.float64), c[:m, n:]
    ref = a @ b
    u = UNIT_ROUNDOFF[args.dtype]
    bound = u * np.abs(ref) + k * 2.0**-23 * (np.abs(a) @ np.abs(b))
    error = np.abs(out - ref)
    normwise = np.linalg.norm(out - ref) / max(np.linalg.norm(ref), 1e-30)
    limit = u + k * 2.0**-24
    failures = []
    if not np.isfinite(out).all():
        failures.append(f"{np.count_nonzero(~np.isfinite(out))} elements not finite "
                        "(unwritten: NaN)")
    elif (error > bound).any():
        i, j = np.unravel_index(np.argmax(error / bound), error.shape)
        failures.append(f"{np.count_nonzero(error > bound)} elements past the bound; "
                        f"worst C[{i}, {j}] = {out[i, j]} against {ref[i, j]}")
    if normwise > limit:
        failures.append(f"normwise error {normwise:.3g} > {limit:.3g}")
    if padding.size and not np.isnan(padding).all():
        failures.append("wrote past N (the padding of C's rows)")
    print(f"matmul {args.dtype} {m}x{n}x{k}: max |error| {error.max() if error.size else 0:.3g}, "
          f"normwise {normwise:.3g} (limit {limit:.3g}): "
          + ("PASS" if not failures else "FAIL: " + "; ".join(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
