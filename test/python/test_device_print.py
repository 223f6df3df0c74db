"""tl.device_print, print and tl.device_assert in kernels launched on CPU
tensors (the interpreter): the lines printed, the assertion's report, and
the frontend's errors. The GPU lowering (vprintf, __assertfail) is checked
by test/Conversion/convert-tilegpu-to-llvm.mlir."""

import pytest

torch = pytest.importorskip("torch")

import tile  # noqa: E402
import tile.language as tl  # noqa: E402
from tile.compiler.errors import CompilationError  # noqa: E402

pytestmark = pytest.mark.usefixtures("launcher_tools")


@tile.jit
def print_values(X, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < n, other=0.0)
    tl.device_print("x=", x)
    print("n", n)
    print("done")


@tile.jit
def print_hex_and_pairs(X, BLOCK: tl.constexpr):
    rows = tl.arange(0, 2)[:, None]
    cols = tl.arange(0, BLOCK)[None, :]
    x = tl.load(X + rows * BLOCK + cols)
    tl.device_print("h ", x.to(tl.float16), hex=True)
    tl.device_print("", rows + cols, x > 0)


@tile.jit
def print_percent(X):
    tl.device_print("100% of x: ", tl.load(X))


@tile.jit
def assert_in_range(X, n, limit, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs, mask=offs < n, other=0.0)
    tl.device_assert(x < limit, "x under the limit", mask=offs < n)


@tile.jit
def text_after_a_value(X):
    x = tl.load(X)
    print("x", x, "and more")


@tile.jit
def print_a_pointer(X):
    tl.device_print("p", X)


def test_each_element_a_line_in_program_order(capsys):
    x = torch.tensor([1.0, 2.5, -3.0, 1e-8, 7.0])
    print_values[(2,)](x, 5, BLOCK=4)
    assert capsys.readouterr().out.splitlines() == [
        "pid (0, 0, 0) idx (0) x=1",
        "pid (0, 0, 0) idx (1) x=2.5",
        "pid (0, 0, 0) idx (2) x=-3",
        "pid (0, 0, 0) idx (3) x=9.99999994e-09",
        "pid (0, 0, 0) n 5",
        "pid (0, 0, 0) done",
        "pid (1, 0, 0) idx (0) x=7",
        "pid (1, 0, 0) idx (1) x=0",
        "pid (1, 0, 0) idx (2) x=0",
        "pid (1, 0, 0) idx (3) x=0",
        "pid (1, 0, 0) n 5",
        "pid (1, 0, 0) done",
    ]


def test_hex_bits_and_several_operands(capsys):
    x = torch.tensor([[1.0, -2.0], [0.5, 0.0]])
    print_hex_and_pairs[(1,)](x, BLOCK=2)
    assert capsys.readouterr().out.splitlines() == [
        "pid (0, 0, 0) idx (0, 0) h 0x3c00",
        "pid (0, 0, 0) idx (0, 1) h 0xc000",
        "pid (0, 0, 0) idx (1, 0) h 0x3800",
        "pid (0, 0, 0) idx (1, 1) h 0x0",
        "pid (0, 0, 0) idx (0, 0) (operand 0) 0",
        "pid (0, 0, 0) idx (0, 1) (operand 0) 1",
        "pid (0, 0, 0) idx (1, 0) (operand 0) 1",
        "pid (0, 0, 0) idx (1, 1) (operand 0) 2",
        "pid (0, 0, 0) idx (0, 0) (operand 1) 1",
        "pid (0, 0, 0) idx (0, 1) (operand 1) 0",
        "pid (0, 0, 0) idx (1, 0) (operand 1) 1",
        "pid (0, 0, 0) idx (1, 1) (operand 1) 0",
    ]


def test_an_assertion_that_holds_says_nothing(capsys):
    assert_in_range[(1,)](torch.tensor([1.0, 2.0, 3.0]), 3, 10.0, BLOCK=4)
    assert capsys.readouterr().out == ""


def test_a_failed_assertion_names_the_message_line_program_and_element():
    # 30 fails; the masked-off fourth element would not.
    with pytest.raises(RuntimeError) as failure:
        assert_in_range[(1,)](torch.tensor([1.0, 2.0, 30.0]), 3, 2.5, BLOCK=4)
    message = str(failure.value)
    line = next(number for number, text in enumerate(open(__file__), 1)
                if "tl.device_assert(" in text)
    assert f"test_device_print.py:{line}:" in message
    assert "program (0, 0, 0)" in message
    assert "device assertion failed: x under the limit (element [2])" in message


def test_text_goes_before_the_values():
    with pytest.raises(CompilationError, match="text 'and more' comes after a value"):
        text_after_a_value[(1,)](torch.zeros(1))


def test_pointers_are_not_printed():
    with pytest.raises(CompilationError, match="prints integers and 16- to 64-bit floats"):
        print_a_pointer[(1,)](torch.zeros(1))


def test_a_percent_sign_in_the_prefix_is_text(capsys):
    # printf's % in the prefix is escaped in the line's format.
    print_percent[(1,)](torch.tensor([0.5]))
    assert capsys.readouterr().out == "pid (0, 0, 0) 100% of x: 0.5\n"
