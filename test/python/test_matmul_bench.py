"""benchmarks/matmul_bench.py's bookkeeping, without a GPU: shapes parse,
rows are padded as the kernels' signature promises, and the table gives
Tile / cuBLAS.  (The timing needs a GPU: run the script on the device.)"""

import argparse
import os
import sys

import pytest

from conftest import REPO

pytest.importorskip("torch")
sys.path.insert(0, os.path.join(REPO, "benchmarks"))
import matmul_bench  # noqa: E402


def test_shapes_parse_and_refuse_what_is_no_shape():
    assert matmul_bench.parse_shapes("4096x4096x4096,100x72x40") == [
        (4096, 4096, 4096), (100, 72, 40)]
    for wrong in ("4096x4096", "0x1x1", "ax1x1", ""):
        with pytest.raises(argparse.ArgumentTypeError):
            matmul_bench.parse_shapes(wrong)


def test_rows_are_padded_to_sixteen_elements():
    assert [matmul_bench.padded(n) for n in (1, 16, 17, 4096, 4099)] == [
        16, 16, 32, 4096, 4112]


def test_the_table_gives_tile_over_cublas(capsys):
    records = [{"impl": "tile", "dtype": "fp16", "m": 8, "n": 8, "k": 8, "tflops": 450.0,
                "rel_error": 2e-4},
               {"impl": "cublas", "dtype": "fp16", "m": 8, "n": 8, "k": 8, "tflops": 600.0,
                "rel_error": None}]
    matmul_bench.print_table(records, ["fp16"], [(8, 8, 8)])
    row = capsys.readouterr().out.strip().splitlines()[-1].split()
    assert row == ["fp16", "8x8x8", "450.0", "600.0", "0.75", "0.000200"]
