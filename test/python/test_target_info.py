"""tl.target_info: compile-time answers for the compilation's target
(CompileOptions.target), on the interpreter, and on the host."""

import pytest

torch = pytest.importorskip("torch")

import tile  # noqa: E402
import tile.language as tl  # noqa: E402
from tile.compiler import compile_kernel  # noqa: E402
from tile.compiler.errors import CompilationError  # noqa: E402
from tile.compiler.options import CompileOptions  # noqa: E402

pytestmark = pytest.mark.usefixtures("launcher_tools")


@tile.jit
def which_target(OUT):
    target = tl.target_info.current_target()
    tl.static_assert(tl.target_info.is_cuda() and not tl.target_info.is_hip())
    if tl.target_info.cuda_capability_geq(9, 0):
        tl.store(OUT, 90 + target.arch * 0)
    else:
        tl.store(OUT, target.arch)


@tile.jit
def run_time_argument(OUT, major):
    tl.store(OUT, tl.target_info.cuda_capability_geq(major).to(tl.int32))


def test_the_branch_follows_the_target():
    hopper = compile_kernel(which_target, "*i32", options=CompileOptions(target="sm_90a"))
    ampere = compile_kernel(which_target, "*i32", options=CompileOptions(target="sm_80"))
    assert "arith.constant 90 : i32" in hopper and "arith.constant 80 : i32" in ampere
    out = torch.zeros(1, dtype=torch.int32)
    which_target[(1,)](out)                      # the default target, sm_90a
    assert out.item() == 90


def test_arguments_must_be_constants():
    with pytest.raises(CompilationError, match="cuda_capability_geq takes compile-time"):
        run_time_argument[(1,)](torch.zeros(1, dtype=torch.int32), 9)


def test_on_the_host_it_answers_for_the_current_device():
    target = tl.target_info.current_target()
    if torch.cuda.is_available():
        major, minor = torch.cuda.get_device_capability()
        assert target.arch == major * 10 + minor
        assert tl.target_info.cuda_capability_geq(major, minor)
    else:
        assert target is None and not tl.target_info.cuda_capability_geq(7, 0)
