"""scripts/gpu/sass_hotspots.py --opcodes: executed instructions by opcode."""

import contextlib
import importlib.util
import io
import os
import sys

_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "gpu")
sys.path.insert(0, _DIR)   # sass_hotspots imports spill_sites, beside it
_spec = importlib.util.spec_from_file_location("sass_hotspots",
                                               os.path.join(_DIR, "sass_hotspots.py"))
sass_hotspots = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sass_hotspots)

_HEADER = '"Address","Source","Instructions Executed","Warp Stall Sampling (All Samples)"'


def _run(tmp_path, rows, *args):
    path = tmp_path / "source.csv"
    path.write_text("\n".join([_HEADER, *rows]) + "\n")
    out = io.StringIO()
    argv = sys.argv
    sys.argv = ["sass_hotspots.py", *args, str(path)]
    try:
        with contextlib.redirect_stdout(out):
            sass_hotspots.main()
    finally:
        sys.argv = argv
    return out.getvalue().splitlines()


def test_opcodes_sum_executed_instructions_of_the_first_kernel(tmp_path):
    rows = ['"0","@!P0 R2UR UR16, R4","300","5"', '"1","R2UR UR17, R5","300","1"',
            '"2","HGMMA.64x128x16.F32 R24, gdesc[UR16], R24","400","9"',
            # A second kernel's rows, after its own header, are not counted.
            _HEADER, '"0","FADD R1, R2, R3","1000","1"']
    assert _run(tmp_path, rows, "--opcodes") == [
        "          1000  instructions executed (warp-level), by opcode:",
        "           600   60.0%  R2UR",
        "           400   40.0%  HGMMA"]
