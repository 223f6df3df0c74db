#!/usr/bin/env python3
"""Where a kernel's register spills are: the local-memory loads and stores
(LDL, STL) of its SASS, counted inside each loop and in all.

ptxas -v says how many bytes spill, not where; a spill in the prologue or
the epilogue runs once a program, one in the main loop every step.

    python3 spill_sites.py kernels/attn_bwd_fp16_d128_causal.cubin [...]
    cuobjdump -sass X.cubin | python3 spill_sites.py -

A loop is the address range a backward branch closes; loops shorter than
MIN_LOOP_INSTRUCTIONS (the short retry loops of atomics, division slow
paths) are left out.
"""

import re
import subprocess
import sys

MIN_LOOP_INSTRUCTIONS = 64
_INSTRUCTION = re.compile(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
_BRANCH = re.compile(r"\bBRA\s+(?:`\(\.L_x_\d+\)\s*)?0x([0-9a-f]+)")
_SPILL = re.compile(r"\b(LDL|STL)\b")
_FUNCTION = re.compile(r"\s*Function\s*:\s*(\S+)")


def parse(sass):
    """{kernel name: [(address, instruction text)]} of a cuobjdump listing."""
    kernels, current = {}, None
    for line in sass.splitlines():
        function = _FUNCTION.match(line)
        if function:
            current = kernels.setdefault(function.group(1), [])
            continue
        instruction = _INSTRUCTION.match(line)
        if instruction and current is not None:
            current.append((int(instruction.group(1), 16), instruction.group(2)))
    return kernels


def loops(instructions):
    """(start, end) address ranges closed by backward branches of at least
    MIN_LOOP_INSTRUCTIONS instructions; nested loops are listed each."""
    if len(instructions) < 2:
        return []
    size = instructions[1][0] - instructions[0][0]
    found = []
    for address, text in instructions:
        branch = _BRANCH.search(text)
        if branch:
            target = int(branch.group(1), 16)
            if target < address and (address - target) // size >= MIN_LOOP_INSTRUCTIONS:
                found.append((target, address))
    return sorted(set(found))


def summarize(instructions):
    """(total spill instructions, [(start, end, spills inside)])."""
    spills = [address for address, text in instructions if _SPILL.search(text)]
    per_loop = [(start, end, sum(start <= a <= end for a in spills))
                for start, end in loops(instructions)]
    return len(spills), per_loop


def report(sass, out=sys.stdout):
    for name, instructions in parse(sass).items():
        total, per_loop = summarize(instructions)
        print(f"{name}: {total} LDL/STL", file=out)
        for start, end, count in per_loop:
            print(f"  loop {start:#x}-{end:#x}: {count} LDL/STL", file=out)


def main(argv):
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    for path in argv:
        if path == "-":
            report(sys.stdin.read())
            continue
        try:
            sass = subprocess.run(["cuobjdump", "-sass", path], check=True,
                                  capture_output=True, text=True).stdout
        except FileNotFoundError:
            print("spill_sites: cuobjdump not found (it comes with the CUDA toolkit)",
                  file=sys.stderr)
            return 1
        except subprocess.CalledProcessError as error:
            print(f"spill_sites: cuobjdump -sass {path} failed: {error.stderr.strip()}",
                  file=sys.stderr)
            return 1
        report(sass)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
