"""TMA descriptors from Python without a GPU: tile.runtime.TensorMapDesc's
argument handling, the runtime's rule checks it reaches (which run before
the driver), and the view of a tensor it takes (a stand-in for a PyTorch
tensor).  Encoding on a GPU is test/gpu/check_tensor_maps.py's."""

import ctypes

import pytest

from tile import runtime
from tile.runtime import LaunchError, TensorMapDesc


def runtime_library_built():
    try:
        runtime.library()
    except runtime.RuntimeLibraryError:
        return False
    return True


def driver_installed():
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


pytestmark = pytest.mark.skipif(not runtime_library_built(),
                                reason="libtile_runtime.so is not built (./dev.sh build)")

ADDRESS = 0x7F00_0000_0000


def gemm_operand(**changes):
    """A 512 x 1024 fp16 row-major matrix read in 128 x 64 boxes with the
    128-byte swizzle, in the driver's order (innermost first)."""
    fields = dict(element_type="fp16", address=ADDRESS, global_dims=[1024, 512],
                  global_strides=[2048], box_dims=[64, 128], swizzle=128)
    return TensorMapDesc(**{**fields, **changes})


def assert_rule(desc, rule):
    with pytest.raises(ValueError) as error:
        desc.check()
    assert str(error.value).startswith(f"TMA descriptor: {rule}:"), str(error.value)


@pytest.mark.parametrize("element_type, inner_box", [("fp16", 64), ("bf16", 64),
                                                     ("fp32", 32), ("fp8e4nv", 128)])
def test_a_valid_descriptor_passes_the_check(element_type, inner_box):
    gemm_operand(element_type=element_type, box_dims=[inner_box, 128]).check()


@pytest.mark.parametrize("changes", [
    dict(global_dims=[4096], global_strides=[], box_dims=[256], swizzle=0),
    dict(global_dims=[4096], global_strides=None, box_dims=[64]),
    dict(global_dims=(64, 2, 2, 2, 2), global_strides=(128, 256, 512, 1024),
         box_dims=(64, 1, 1, 1, 1)),
    dict(element_strides=[1, 8], l2_promotion=256, oob_fill="nan"),
    dict(global_dims=[1024, 2**32], global_strides=[2**40 - 16]),
], ids=["rank1", "rank1_no_strides", "rank5", "options", "limits"])
def test_the_edges_of_the_rules_pass(changes):
    gemm_operand(**changes).check()


@pytest.mark.parametrize("changes, rule", [
    (dict(global_dims=[], global_strides=[], box_dims=[]), "rank"),
    (dict(global_dims=[2] * 6, global_strides=[16] * 5, box_dims=[8] * 6), "rank"),
    (dict(element_type="i1", box_dims=[128, 128]), "element type"),
    (dict(element_type="float17"), "element type"),
    (dict(address=ADDRESS + 8), "global address"),
    (dict(global_dims=[1024, 2**32 + 1]), "global dims"),
    (dict(global_dims=[0, 512]), "global dims"),
    (dict(global_strides=[2056]), "global strides"),
    (dict(global_strides=[2**40]), "global strides"),
    (dict(box_dims=[64, 257]), "box dims"),
    (dict(element_strides=[1, 9]), "element strides"),
    (dict(box_dims=[12, 128]), "inner box bytes"),
    (dict(swizzle=48), "swizzle"),
    (dict(box_dims=[72, 128]), "swizzle span"),
    (dict(l2_promotion=32), "L2 promotion"),
    (dict(element_type="i32", box_dims=[32, 128], oob_fill="nan"), "OOB fill"),
], ids=lambda value: value if isinstance(value, str) else "")
def test_a_broken_rule_is_named(changes, rule):
    assert_rule(gemm_operand(**changes), rule)


@pytest.mark.parametrize("changes, rule", [
    # C arrays carry no length: the counts are checked before the call.
    (dict(global_strides=[2048, 4096]), "global strides"),
    (dict(global_strides=[]), "global strides"),
    (dict(box_dims=[64]), "box dims"),
    (dict(element_strides=[1]), "element strides"),
    # Values the C types cannot hold are refused, not wrapped.
    (dict(box_dims=[64, 2**32 + 128]), "box dims"),
    (dict(address=-16), "global address"),
    (dict(address=2**64), "global address"),
    (dict(global_dims=[1024, -1]), "global dims"),
    (dict(global_dims=[1024.0, 512]), "global dims"),
    (dict(box_dims=[True, 128]), "box dims"),
    (dict(global_dims="1024"), "global dims"),
    (dict(global_dims=1024), "global dims"),
    (dict(swizzle="128B"), "swizzle"),
    (dict(swizzle=2**40), "swizzle"),
    (dict(l2_promotion=None), "L2 promotion"),
    (dict(oob_fill="nan_please"), "OOB fill"),
], ids=lambda value: value if isinstance(value, str) else "")
def test_python_refuses_what_the_c_interface_cannot_carry(changes, rule):
    assert_rule(gemm_operand(**changes), rule)


def test_integers_of_other_types_are_taken():
    class Index:
        def __init__(self, value):
            self.value = value

        def __index__(self):
            return self.value

    gemm_operand(global_dims=[Index(1024), Index(512)], address=Index(ADDRESS)).check()


def test_encode_checks_the_rules_before_the_driver():
    # Refused with the rule's name, with or without a driver.
    with pytest.raises(ValueError, match="^TMA descriptor: global address:"):
        gemm_operand(address=ADDRESS + 2).encode()


@pytest.mark.skipif(driver_installed(), reason="the NVIDIA driver is installed here")
def test_encode_without_a_driver_says_so():
    with pytest.raises(LaunchError, match="libcuda.so.1"):
        gemm_operand().encode()


def test_an_older_runtime_library_loads_and_says_what_it_lacks(monkeypatch):
    monkeypatch.setattr(runtime.library(), "tileEncodeTensorMap", None)
    with pytest.raises(runtime.RuntimeLibraryError, match="lacks tileEncodeTensorMap"):
        gemm_operand().encode()


def test_repr_shows_the_address_in_hex():
    assert "address=0x7f0000000000," in repr(gemm_operand())


# --------------------------------------------------------------------------
# From a tensor
# --------------------------------------------------------------------------

class FakeDType:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f"torch.{self.name}"


class FakeDevice:
    def __init__(self, type):
        self.type = type

    def __str__(self):
        return self.type


class FakeTensor:
    """What TensorMapDesc.from_tensor reads of a PyTorch tensor."""

    def __init__(self, shape, strides, dtype="float16", element_size=2, device="cuda",
                 address=ADDRESS):
        self.shape, self._strides, self._element_size = shape, strides, element_size
        self.dtype, self.device, self._address = FakeDType(dtype), FakeDevice(device), address

    def stride(self):
        return self._strides

    def element_size(self):
        return self._element_size

    def data_ptr(self):
        return self._address


def test_from_tensor_reverses_into_the_drivers_order_with_byte_strides():
    # A (4, 512, 1024) fp32 tensor whose rows are padded to 1056 elements.
    tensor = FakeTensor((4, 512, 1024), (512 * 1056, 1056, 1), "float32", 4)
    desc = TensorMapDesc.from_tensor(tensor, (1, 128, 32), swizzle=128,
                                     element_strides=(1, 2, 1))
    assert desc.element_type == "fp32" and desc.address == ADDRESS
    assert list(desc.global_dims) == [1024, 512, 4]
    assert list(desc.global_strides) == [1056 * 4, 512 * 1056 * 4]
    assert list(desc.box_dims) == [32, 128, 1]
    assert list(desc.element_strides) == [1, 2, 1]
    assert desc.swizzle == 128
    desc.check()


@pytest.mark.parametrize("dtype, element_type", [("float16", "fp16"), ("bfloat16", "bf16"),
                                                 ("float8_e5m2", "fp8e5")])
def test_from_tensor_names_the_element_type(dtype, element_type):
    tensor = FakeTensor((512, 1024), (1024, 1), dtype)
    assert TensorMapDesc.from_tensor(tensor, (128, 64)).element_type == element_type


def test_from_tensor_refuses_what_tma_cannot_copy():
    with pytest.raises(ValueError, match="TMA descriptor: element type: torch.complex64"):
        TensorMapDesc.from_tensor(FakeTensor((8, 8), (8, 1), "complex64", 8), (8, 8))
    with pytest.raises(ValueError, match="the tensor is on cpu"):
        TensorMapDesc.from_tensor(FakeTensor((8, 8), (8, 1), device="cpu"), (8, 8))
    with pytest.raises(ValueError, match="TMA descriptor: box dims: block shape"):
        TensorMapDesc.from_tensor(FakeTensor((8, 8), (8, 1)), (8,))
    with pytest.raises(ValueError, match="TMA descriptor: global strides: the last dimension"):
        TensorMapDesc.from_tensor(FakeTensor((64, 64), (1, 64)), (64, 64))   # transposed


def test_from_tensor_leaves_the_rules_to_the_check():
    # A row of 100 fp16 (200 bytes): the stride of dim 1 breaks the rule.
    desc = TensorMapDesc.from_tensor(FakeTensor((64, 100), (100, 1)), (64, 64))
    assert_rule(desc, "global strides")
