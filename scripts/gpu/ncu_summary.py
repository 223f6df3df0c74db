#!/usr/bin/env python3
"""One line a kernel from Nsight Compute reports: time, clock, tensor
pipe and issue activity, registers, block, grid, shared memory and the
largest warp stall reasons (cycles per issued instruction):

    python3 ncu_summary.py REPORT.ncu-rep [REPORT.ncu-rep ...]
    python3 ncu_summary.py --list TEXT REPORT.ncu-rep   (metrics naming TEXT)

Reads each report's raw page (``ncu -i REPORT --page raw --csv``); a metric
the report did not collect prints as '-'.
"""
import csv
import io
import os
import subprocess
import sys

COLUMNS = (  # (heading, metric, scale)
    ("us", "gpu__time_duration.sum", 1e-3),
    ("MHz", "gpc__cycles_elapsed.avg.per_second", 1e-6),
    ("tensor%", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", 1),
    ("issue%", "smsp__issue_active.avg.pct_of_peak_sustained_active", 1),
    ("regs", "launch__registers_per_thread", 1),
    ("block", "launch__block_size", 1),
    ("grid", "launch__grid_size", 1),
    ("smemKB", "launch__shared_mem_per_block_dynamic", 1 / 1024),
)
STALL = "smsp__average_warps_issue_stalled_"
STALL_END = "_per_issue_active.ratio"


def _number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def _rows(report):
    text = subprocess.run(["ncu", "-i", report, "--page", "raw", "--csv",
                           "--print-units", "base"], check=True,
                          capture_output=True, text=True).stdout
    rows = [row for row in csv.reader(io.StringIO(text)) if row]
    if len(rows) < 3:
        return []
    # Row 1 holds the units: base ones (nanoseconds, cycles a second, bytes).
    return [dict(zip(rows[0], row)) for row in rows[2:]]


def _value(row, metric, scale):
    value = _number(row.get(metric, ""))
    return "-" if value is None else f"{value * scale:.0f}"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    if sys.argv[1] == "--list" and len(sys.argv) == 4:
        rows = _rows(sys.argv[3])
        for name in sorted(rows[0] if rows else ()):
            if sys.argv[2] in name:
                print(name, rows[0][name])
        return
    print(f"{'report':<24} {'kernel':<34} " + " ".join(f"{h:>7}" for h, _, _ in COLUMNS)
          + "  largest stalls per issue")
    for report in sys.argv[1:]:
        rows = _rows(report)
        if not rows:
            print(f"{os.path.basename(report):<24} no kernel profiled")
        for row in rows:
            name = row.get("Kernel Name", "?")
            stalls = sorted(((_number(v) or 0.0, k[len(STALL):-len(STALL_END)])
                             for k, v in row.items()
                             if k.startswith(STALL) and k.endswith(STALL_END)), reverse=True)
            named = ", ".join(f"{k} {v:.2f}" for v, k in stalls[:4] if v)
            print(f"{os.path.basename(report)[:24]:<24} {name[:34]:<34} "
                  + " ".join(f"{_value(row, m, s):>7}" for _, m, s in COLUMNS)
                  + f"  {named}")


if __name__ == "__main__":
    main()
