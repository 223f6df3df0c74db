"""CompileOptions: the Python mirror of include/tile/Pipeline/Options.h."""

import dataclasses
import subprocess

import pytest

from tile.compiler import options as compile_options
from tile.compiler.errors import UsageError
from tile.compiler.options import CompileOptions


def test_mirror_matches_the_cpp_options(tile_compile):
    # Names, defaults and their spelling: one check for all three.
    result = subprocess.run([tile_compile, "--print-default-options"], capture_output=True,
                            text=True, check=True)
    assert CompileOptions().pipeline_string() == result.stdout.strip()


def test_pipeline_string_round_trips():
    options = CompileOptions(num_warps=8, target="sm_80", num_stages=3,
                             thread_index_per_op=True, max_row_span=128, fp_fusion=False)
    assert CompileOptions.from_pipeline_string(options.pipeline_string()) == options
    assert CompileOptions.from_pipeline_string("num-stages=3") == CompileOptions(num_stages=3)


def test_options_are_immutable_and_replace_validates():
    options = CompileOptions()
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.num_warps = 8
    assert options.replace(num_warps=8).num_warps == 8
    with pytest.raises(UsageError, match="no compile option num_wraps"):
        options.replace(num_wraps=8)


@pytest.mark.parametrize("changes, message", [
    ({"num_warps": 3}, "num_warps must be a power of two from 1 to 32, got 3"),
    ({"num_warps": 64}, "num_warps must be a power of two from 1 to 32, got 64"),
    ({"num_warps": True}, "num_warps must be an integer, got True"),
    ({"num_stages": 0}, "num_stages must be at least 1, got 0"),
    ({"max_row_span": -1}, "max_row_span must be a non-negative number of bytes"),
    ({"thread_index_per_op": 1}, "thread_index_per_op must be True or False, got 1"),
    ({"target": "sm_70"}, "target must be one of sm_80, sm_90a, got 'sm_70'"),
])
def test_bad_values_are_refused(changes, message):
    with pytest.raises(UsageError, match=message):
        CompileOptions(**changes)


def test_unknown_pipeline_option_is_refused():
    with pytest.raises(UsageError, match="'num-wraps=4' is no compile option"):
        CompileOptions.from_pipeline_string("num-wraps=4")


def test_every_option_has_help():
    for name in compile_options.names():
        assert compile_options.help_text(name)


def test_a_device_compiles_for_its_own_target():
    """kernel[grid](...) on a GPU compiles for its compute capability: wgmma
    on Hopper, mma.sync elsewhere (PTX the driver compiles beyond Ada),
    nothing below Ampere."""
    target_for_capability = compile_options.target_for_capability
    assert target_for_capability(9, 0) == "sm_90a"
    assert [target_for_capability(8, minor) for minor in (0, 6, 9)] == ["sm_80"] * 3
    assert target_for_capability(10, 0) == target_for_capability(12, 0) == "sm_80"
    assert target_for_capability(7, 5) is None
    assert {target_for_capability(m, n) for m, n in ((8, 0), (9, 0))} == set(
        compile_options.TARGETS)
