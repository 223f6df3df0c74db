#!/usr/bin/env python3
"""Where a kernel's register spills are: the local-memory loads and stores
(LDL, STL) of its SASS, counted inside each loop and in all; with
--opcodes, each innermost loop's instructions by opcode instead (what a change to the
lowering does to a step, before it is timed).

ptxas -v says how many bytes spill, not where; a spill in the prologue or
the epilogue runs once a program, one in the main loop every step.

    python3 spill_sites.py [--opcodes] kernels/attn_bwd_fp16_d128_causal.cubin [...]
    cuobjdump -sass X.cubin | python3 spill_sites.py [--opcodes] -

It disassembles with cuobjdump (the CUDA toolkit's), else nvdisasm (on the
PATH, or from `pip install nvidia-cuda-nvdisasm`): no GPU needed.

A loop is the address range a backward branch closes; loops shorter than
MIN_LOOP_INSTRUCTIONS (the short retry loops of atomics, division slow
paths) are left out.
"""

import collections
import glob
import os
import re
import shutil
import subprocess
import sys
import sysconfig

MIN_LOOP_INSTRUCTIONS = 64
_INSTRUCTION = re.compile(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
_BRANCH = re.compile(r"\bBRA\s+(?:`\(\.L_x_\d+\)\s*)?0x([0-9a-f]+)")
_SPILL = re.compile(r"\b(LDL|STL)\b")
_FUNCTION = re.compile(r"\s*Function\s*:\s*(\S+)|^\.text\.(\S+):$")
_LABEL = re.compile(r"^(\.L_x_\d+):")
_LABEL_ONLY = re.compile(r"`\((\.L_x_\d+)\)(?!\s*0x)")


def parse(sass):
    """{kernel name: [(address, instruction text)]} of a cuobjdump or
    nvdisasm listing; a branch to a label alone (nvdisasm) gets the label's
    address appended, as cuobjdump writes it."""
    kernels, current, labels = {}, None, {}
    for line in sass.splitlines():
        function = _FUNCTION.match(line)
        if function:
            current = kernels.setdefault(function.group(1) or function.group(2), [])
            continue
        label = _LABEL.match(line.strip())
        if label and current is not None:
            labels[label.group(1)] = len(current)
            continue
        instruction = _INSTRUCTION.match(line)
        if instruction and current is not None:
            current.append((int(instruction.group(1), 16), instruction.group(2)))
    for instructions in kernels.values():
        for i, (address, text) in enumerate(instructions):
            target = _LABEL_ONLY.search(text)
            if target and labels.get(target.group(1), len(instructions)) < len(instructions):
                at = instructions[labels[target.group(1)]][0]
                instructions[i] = (address, f"{text} 0x{at:x}")
    return kernels


def opcode(text):
    """The opcode of an instruction, without its predicate and modifiers."""
    words = text.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0].split(".")[0] if words else "?"


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


def report(sass, out=sys.stdout, opcodes=False):
    for name, instructions in parse(sass).items():
        if opcodes:
            print(f"{name}: {len(instructions)} instructions", file=out)
            found = loops(instructions)
            # The innermost loops: the steps.
            for start, end in found:
                if any((a, b) != (start, end) and start <= a and b <= end for a, b in found):
                    continue
                body = [text for address, text in instructions if start <= address <= end]
                counts = collections.Counter(opcode(text) for text in body)
                common = ", ".join(f"{op} {n}" for op, n in counts.most_common(12))
                print(f"  loop {start:#x}-{end:#x}: {len(body)} instructions; {common}",
                      file=out)
            continue
        total, per_loop = summarize(instructions)
        print(f"{name}: {total} LDL/STL", file=out)
        for start, end, count in per_loop:
            print(f"  loop {start:#x}-{end:#x}: {count} LDL/STL", file=out)


def _disassembler():
    """The command that prints a cubin's SASS: cuobjdump, else nvdisasm."""
    if shutil.which("cuobjdump"):
        return ["cuobjdump", "-sass"]
    # nvdisasm on the PATH, else the newest from NVIDIA's pip wheels.
    wheels = sorted(glob.glob(os.path.join(sysconfig.get_paths()["purelib"], "nvidia", "cu*",
                                           "bin", "nvdisasm")))
    found = shutil.which("nvdisasm") or (wheels[-1] if wheels else None)
    return [found, "-c"] if found else None


def main(argv):
    opcodes = bool(argv) and argv[0] == "--opcodes"
    argv = argv[1:] if opcodes else argv
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    for path in argv:
        if path == "-":
            report(sys.stdin.read(), opcodes=opcodes)
            continue
        command = _disassembler()
        if command is None:
            print("spill_sites: neither cuobjdump (the CUDA toolkit's) nor nvdisasm "
                  "(pip install nvidia-cuda-nvdisasm) was found", file=sys.stderr)
            return 1
        try:
            sass = subprocess.run([*command, path], check=True,
                                  capture_output=True, text=True).stdout
        except subprocess.CalledProcessError as error:
            print(f"spill_sites: {' '.join(command)} {path} failed: {error.stderr.strip()}",
                  file=sys.stderr)
            return 1
        report(sass, opcodes=opcodes)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
