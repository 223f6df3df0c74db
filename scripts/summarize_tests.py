#!/usr/bin/env python3
"""Sums JUnit XML reports (lit, GoogleTest, pytest) into one closing line.

Prints one line per report and then `tile: N passed, N failed, N skipped`.
Exits non-zero when a test failed, a report is missing or unreadable, or no
test ran at all.
"""

import sys
import xml.etree.ElementTree as ET


def count(path):
    """Returns (passed, failed, skipped) of one JUnit XML report."""
    root = ET.parse(path).getroot()
    passed = failed = skipped = 0
    for case in root.iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
        elif case.find("skipped") is not None or case.get("result") in (
                "skipped", "suppressed") or case.get("status") == "notrun":
            skipped += 1
        else:
            passed += 1
    return passed, failed, skipped


def main(paths):
    totals = [0, 0, 0]
    ok = True
    for path in paths:
        try:
            counts = count(path)
        except (OSError, ET.ParseError) as error:
            print(f"{path}: unreadable report: {error}")
            ok = False
            continue
        print(f"  {path.rsplit('/', 1)[-1]}: {counts[0]} passed, "
              f"{counts[1]} failed, {counts[2]} skipped")
        totals = [t + c for t, c in zip(totals, counts)]
    print(f"tile: {totals[0]} passed, {totals[1]} failed, {totals[2]} skipped")
    return 0 if ok and totals[1] == 0 and totals[0] > 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
