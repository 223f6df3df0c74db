#!/usr/bin/env python3
"""Lists the SASS instructions a kernel's warps were sampled stalled at most.

Reads Nsight Compute's source page as CSV (``ncu -i REPORT --page source
--csv --print-source sass``, a report with the SourceCounters section) and
prints the TOP instructions by warp-stall samples, each with its share of
all samples and its own largest stall reasons:

    python3 sass_hotspots.py SOURCE.csv [TOP]
"""
import csv
import sys


def _number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    with open(sys.argv[1], newline="") as f:
        rows = [row for row in csv.reader(f) if row]
    header_at = next((i for i, row in enumerate(rows) if "Source" in row), None)
    if header_at is None:
        sys.exit(f"sass_hotspots: no 'Source' column in {sys.argv[1]}")
    header = rows[header_at]
    body = rows[header_at + 1:]
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
