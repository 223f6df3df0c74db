"""scripts/gpu/spill_sites.py: spills counted per loop of a SASS listing."""

import importlib.util
import io
import os

_PATH = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "gpu", "spill_sites.py")
_spec = importlib.util.spec_from_file_location("spill_sites", _PATH)
spill_sites = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(spill_sites)


def _listing(body):
    """A cuobjdump-like listing of one kernel; `body` maps instruction
    indices (16 bytes apart) to text, every other slot a NOP."""
    lines = ["\tcode for sm_90a", "\t\tFunction : kern"]
    for index in range(max(body) + 1):
        text = body.get(index, "NOP")
        lines.append(f"        /*{index * 16:04x}*/                   {text} ;"
                     "   /* 0x000000000000794d */")
    return "\n".join(lines)


def test_spills_are_counted_per_loop():
    # A 100-instruction loop from 10 to 110 holding one STL and one LDL; a
    # short retry loop (a backward branch over 3 instructions) that is not
    # counted as a loop; spills before and after the loop.
    sass = _listing({
        2: "STL [R1+0x4], R2",
        20: "LDL R3, [R1+0x4]",
        30: "STL.64 [R1+0x8], R4",
        50: "@!P0 BRA 0x2d0",           # back to 45: short, not a loop
        110: "@P1 BRA 0xa0",            # back to 10: the loop
        120: "LDL.LU R2, [R1+0x4]",
        121: "EXIT",
    })
    kernels = spill_sites.parse(sass)
    assert list(kernels) == ["kern"]
    total, per_loop = spill_sites.summarize(kernels["kern"])
    assert total == 4
    assert per_loop == [(0xa0, 110 * 16, 2)]
    out = io.StringIO()
    spill_sites.report(sass, out)
    assert out.getvalue().splitlines() == ["kern: 4 LDL/STL",
                                           "  loop 0xa0-0x6e0: 2 LDL/STL"]


def test_a_kernel_without_spills():
    sass = _listing({0: "MOV R1, c[0x0][0x28]", 99: "@P0 BRA 0x0", 100: "EXIT"})
    total, per_loop = spill_sites.summarize(spill_sites.parse(sass)["kern"])
    assert total == 0 and per_loop == [(0, 99 * 16, 0)]


def _nvdisasm_listing(body, labels):
    """An nvdisasm -c listing of one kernel: branches name labels only;
    `labels` maps a label to the instruction index it precedes."""
    lines = ["\t.target\tsm_90a", ".text.kern:"]
    for index in range(max(body) + 1):
        for name, at in labels.items():
            if at == index:
                lines.append(f"{name}:")
        lines.append(f"        /*{index * 16:04x}*/                   "
                     f"{body.get(index, 'NOP')} ;")
    return "\n".join(lines)


def test_nvdisasm_labels_become_addresses():
    # nvdisasm writes BRA `(.L_x_3): the loop from 10 to 110 is found the same.
    sass = _nvdisasm_listing({20: "STL [R1+0x4], R2", 110: "@P1 BRA `(.L_x_3)",
                              111: "EXIT"}, {".L_x_3": 10})
    kernels = spill_sites.parse(sass)
    assert list(kernels) == ["kern"]
    assert spill_sites.summarize(kernels["kern"]) == (1, [(0xa0, 110 * 16, 1)])


def test_opcodes_of_the_innermost_loop():
    # An outer loop 0..200 around an inner one 10..110: only the inner is
    # listed, with its opcodes (predicates and modifiers dropped).
    body = {i: "FFMA R1, R2, R3, R1" for i in range(10, 40)}
    body.update({i: "HGMMA.64x128x16.F32 R24, gdesc[UR16], R24" for i in range(40, 44)})
    body.update({110: "@P1 BRA 0xa0", 200: "@P2 BRA.U 0x0", 201: "EXIT"})
    out = io.StringIO()
    spill_sites.report(_listing(body), out, opcodes=True)
    assert out.getvalue().splitlines() == [
        "kern: 202 instructions",
        "  loop 0xa0-0x6e0: 101 instructions; NOP 66, FFMA 30, HGMMA 4, BRA 1"]
