#!/usr/bin/env python3
"""Lists the SASS instructions a kernel's warps were sampled stalled at most.

Reads Nsight Compute's source page as CSV (``ncu -i REPORT --page source
--csv --print-source sass``, a report with the SourceCounters section) and
prints the TOP instructions by warp-stall samples, each with its share of
all samples and its own largest stall reasons:

    python3 sass_hotspots.py SOURCE.csv [TOP]

With --opcodes, prints instead the instructions executed (warp-level) by
opcode, the largest TOP, with their total: where a kernel's issue slots go.

    python3 sass_hotspots.py --opcodes SOURCE.csv [TOP]
"""
import csv
import sys

from spill_sites import opcode  # beside this script, here and in the bundle


def _number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def _opcodes(header, body, top):
    executed = next((i for i, name in enumerate(header)
                     if name.startswith("Instructions Executed")), None)
    if executed is None:
        sys.exit("sass_hotspots: no 'Instructions Executed' column")
    source = header.index("Source")
    counts = {}
    for row in body:
        if len(row) > executed:
            op = opcode(row[source])
            counts[op] = counts.get(op, 0.0) + _number(row[executed])
    total = sum(counts.values()) or 1.0
    print(f"{total:14.4g}  instructions executed (warp-level), by opcode:")
    for op, count in sorted(counts.items(), key=lambda kv: -kv[1])[:top]:
        print(f"{count:14.4g}  {count / total:6.1%}  {op}")


def main():
    args = sys.argv[1:]
    opcodes = bool(args) and args[0] == "--opcodes"
    args = args[1:] if opcodes else args
    if not args:
        sys.exit(__doc__)
    top = int(args[1]) if len(args) > 1 else 40
    with open(args[0], newline="") as f:
        rows = [row for row in csv.reader(f) if row]
    header_at = next((i for i, row in enumerate(rows) if "Source" in row), None)
    if header_at is None:
        sys.exit(f"sass_hotspots: no 'Source' column in {args[0]}")
    header = rows[header_at]
    # A report of several kernels lists each after its own header: the
    # first kernel's rows end where the next header begins.
    end = next((i for i in range(header_at + 1, len(rows)) if rows[i] == header), len(rows))
    body = rows[header_at + 1:end]
    if opcodes:
        _opcodes(header, body, top)
        return
    samples = next((i for i, name in enumerate(header)
                    if name.startswith("Warp Stall Sampling (All")), None)
    if samples is None:
        sys.exit("sass_hotspots: no 'Warp Stall Sampling (All Samples)' column")
    source = header.index("Source")
    reasons = [i for i, name in enumerate(header) if name.startswith("stall_")]
    total = sum(_number(row[samples]) for row in body if len(row) > samples) or 1.0
    ranked = sorted((row for row in body if len(row) > samples),
                    key=lambda row: _number(row[samples]), reverse=True)
    print(f"{'share':>6}  instruction  (largest stall reasons)")
    for row in ranked[:top]:
        share = _number(row[samples]) / total
        causes = sorted(((_number(row[i]), header[i][6:]) for i in reasons), reverse=True)
        named = ", ".join(f"{name} {count:.0f}" for count, name in causes[:3] if count)
        print(f"{share:6.1%}  {row[source].strip()[:70]}  ({named})")


if __name__ == "__main__":
    main()
