"""tile.attention without a GPU: finding and parsing the kernel manifests,
and packing launch arguments (standard library only, no PyTorch)."""

import ctypes
import json
import os
import struct
import threading

import pytest

from tile.attention import bundle
from tile.attention.bundle import BundleError, KernelBundle, parse_manifest
from tile.attention.driver import (
    CudaDriver,
    DevicePointer,
    check_arguments,
    check_grid,
    pack_arguments,
)

FWD_PARAMS = [("Q", "*fp16", 16), ("K", "*fp16", 16), ("V", "*fp16", 16),
              ("O", "*fp16", 16), ("LSE", "*fp32", 16), ("sm_scale", "fp32", 1),
              ("stride_z", "i32", 16), ("stride_h", "i32", 16), ("stride_n", "i32", 16),
              ("Z", "i32", 1), ("H", "i32", 1), ("N_CTX", "i32", 1),
              ("causal_offset", "i32", 1)]


def write_kernel(directory, name, params=FWD_PARAMS, kernel="attn_fwd",
                 constexprs=None, gpu=True, files=("cubin", "ptx"), shared_bytes=81920,
                 max_n_ctx=None, tuning=None):
    """A manifest in the format tile-compile writes, with placeholder GPU
    code beside it."""
    meta = {"schema_version": bundle.SCHEMA_VERSION, "name": name, "kernel": kernel,
            "entry": name,
            "params": [{"name": n, "type": t, **({"divisibility": d} if d > 1 else {})}
                       for n, t, d in params],
            "constexprs": constexprs if constexprs is not None else
            {"HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 64, "CAUSAL": False},
            "num_warps": 4}
    if max_n_ctx is not None:
        meta["max_n_ctx"] = max_n_ctx
    if tuning is not None:
        meta["tuning"] = tuning
    if gpu:
        meta["gpu"] = {"target": "sm_90a", "shared_bytes": shared_bytes}
        for extension in files:
            meta["gpu"][extension] = f"{name}.{extension}"
            (directory / f"{name}.{extension}").write_bytes(
                b"// ptx text" if extension == "ptx" else b"\x7fELF cubin")
    (directory / f"{name}.json").write_text(json.dumps(meta))
    return directory / f"{name}.json"


# --------------------------------------------------------------------------
# Manifests
# --------------------------------------------------------------------------

def test_parse_manifest_reads_params_in_order(tmp_path):
    spec = parse_manifest(write_kernel(tmp_path, "attn_fwd_fp16_d64_noncausal"))
    assert [p.name for p in spec.params] == [n for n, _, _ in FWD_PARAMS]
    assert [p.divisibility for p in spec.params] == [d for _, _, d in FWD_PARAMS]
    assert spec.element_type == "fp16"
    assert spec.threads == 128 and spec.shared_bytes == 81920
    assert spec.constexpr_int("BLOCK_M") == 128
    assert spec.image_path.endswith(".cubin"), "the cubin needs no JIT: it comes first"


def test_ptx_only_kernel_is_loaded_nul_terminated(tmp_path):
    spec = parse_manifest(write_kernel(tmp_path, "attn_fwd_fp16_d64_noncausal",
                                       files=("ptx",)))
    assert spec.image_path.endswith(".ptx")
    assert spec.read_image() == b"// ptx text\0"


@pytest.mark.parametrize("gpu, files", [(False, ()), (True, ())])
def test_kernel_without_gpu_code_is_skipped(tmp_path, gpu, files):
    assert parse_manifest(write_kernel(tmp_path, "attn_fwd_x", gpu=gpu, files=files)) is None


@pytest.mark.parametrize("text, message", [
    ("{not json", "unreadable manifest"),
    ("[1, 2]", "must be a JSON object"),
    ('{"name": "k", "kernel": "attn_fwd", "params": []}',
     "metadata of schema_version \\(none\\), but this runtime reads version 1"),
    ('{"schema_version": 2, "name": "k", "kernel": "attn_fwd", "params": []}',
     "metadata of schema_version 2, but this runtime reads version 1: compile the kernel"),
    ('{"schema_version": 1, "name": "k", "kernel": "attn_fwd", "params": []}',
     "'num_warps' is missing"),
    ('{"schema_version": 1, "name": "k", "kernel": "attn_fwd", "num_warps": 4, '
     '"params": [{"name": "X", "type": "f64"}]}', "unsupported type 'f64'"),
    ('{"schema_version": 1, "name": "k", "kernel": "attn_fwd", "num_warps": 4, '
     '"params": [{"name": "X", "type": "i32", "divisibility": 0}]}', "divisibility"),
])
def test_invalid_manifest_names_file_and_problem(tmp_path, text, message):
    path = tmp_path / "attn_fwd_bad.json"
    path.write_text(text)
    with pytest.raises(BundleError, match=message) as error:
        parse_manifest(path)
    assert str(path) in str(error.value)


def test_bundle_rejects_a_kernel_whose_params_differ(tmp_path):
    # e.g. kernels built before they took causal_offset.
    write_kernel(tmp_path, "attn_fwd_fp16_d64_noncausal", params=FWD_PARAMS[:-1])
    with pytest.raises(BundleError, match=r"attention API passes \[.*'causal_offset'\]"):
        KernelBundle(tmp_path)


def test_select_by_dtype_head_dim_and_causality(tmp_path):
    for causal in (False, True):
        write_kernel(tmp_path, f"attn_fwd_fp16_d64_{'causal' if causal else 'noncausal'}",
                     constexprs={"HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 64,
                                 "CAUSAL": causal})
    kernels = KernelBundle(tmp_path)
    assert kernels.select("attn_fwd", "fp16", 64, True).name == "attn_fwd_fp16_d64_causal"
    assert kernels.select("attn_fwd", "fp16", 64, False).name == \
        "attn_fwd_fp16_d64_noncausal"
    assert kernels.head_dims("fp16") == [64]
    with pytest.raises(ValueError, match=r"head_dim=96.*it has: fp16 d64"):
        kernels.select("attn_fwd", "fp16", 96, True)
    with pytest.raises(ValueError, match="bf16"):
        kernels.select("attn_fwd", "bf16", 64, True)


def test_select_by_sequence_length(tmp_path):
    constexprs = {"HEAD_DIM": 128, "BLOCK_M": 128, "BLOCK_N": 64, "CAUSAL": False}
    write_kernel(tmp_path, "attn_fwd_fp16_d128_noncausal", constexprs=constexprs)
    write_kernel(tmp_path, "attn_fwd_fp16_d128_noncausal_n1024", constexprs=constexprs,
                 max_n_ctx=1024)
    write_kernel(tmp_path, "attn_fwd_fp16_d128_noncausal_n256", constexprs=constexprs,
                 max_n_ctx=256)
    kernels = KernelBundle(tmp_path)

    def chosen(seq_len):
        return kernels.select("attn_fwd", "fp16", 128, False, seq_len=seq_len).name
    assert chosen(1) == chosen(256) == "attn_fwd_fp16_d128_noncausal_n256"
    assert chosen(257) == chosen(1024) == "attn_fwd_fp16_d128_noncausal_n1024"
    assert chosen(1025) == chosen(None) == "attn_fwd_fp16_d128_noncausal"


def test_tuning_candidates_are_never_selected(tmp_path):
    # benchmarks/autotune.py puts candidates beside the shipped variants;
    # only tile-run --kernel runs them.
    write_kernel(tmp_path, "attn_fwd_fp16_d64_noncausal")
    write_kernel(tmp_path, "attn_fwd_fp16_d64_noncausal__m64n64w4", max_n_ctx=4096,
                 tuning={"variant": "attn_fwd_fp16_d64_noncausal", "tag": "m64n64w4"})
    kernels = KernelBundle(tmp_path)
    assert list(kernels.kernels) == ["attn_fwd_fp16_d64_noncausal"]
    assert kernels.select("attn_fwd", "fp16", 64, False, seq_len=128).name == \
        "attn_fwd_fp16_d64_noncausal"
    with pytest.raises(BundleError, match="'tuning' needs the string 'variant'"):
        parse_manifest(write_kernel(tmp_path, "attn_fwd_fp16_d64_causal",
                                    tuning={"tag": "x"}))


def test_select_without_an_unbounded_variant_takes_the_longest(tmp_path):
    # max_n_ctx is a preference, not a limit: every variant is correct at
    # any length.
    write_kernel(tmp_path, "attn_fwd_fp16_d64_noncausal_n512", max_n_ctx=512)
    write_kernel(tmp_path, "attn_fwd_fp16_d64_noncausal_n2048", max_n_ctx=2048)
    kernels = KernelBundle(tmp_path)
    assert kernels.select("attn_fwd", "fp16", 64, False, seq_len=4096).name == \
        "attn_fwd_fp16_d64_noncausal_n2048"


@pytest.mark.parametrize("value", [0, -1, 1.5, "1024", True])
def test_invalid_max_n_ctx_is_reported(tmp_path, value):
    path = write_kernel(tmp_path, "attn_fwd_fp16_d64_noncausal", max_n_ctx=value)
    with pytest.raises(BundleError, match="'max_n_ctx' must be a positive integer"):
        parse_manifest(path)


def test_missing_block_size_is_reported(tmp_path):
    spec = parse_manifest(write_kernel(tmp_path, "attn_fwd_k",
                                       constexprs={"HEAD_DIM": 64, "CAUSAL": False}))
    with pytest.raises(BundleError, match="BLOCK_M"):
        spec.constexpr_int("BLOCK_M")


def test_kernel_dir_variable_overrides_the_search(tmp_path, monkeypatch):
    write_kernel(tmp_path, "attn_fwd_fp16_d64_noncausal")
    monkeypatch.setenv("TILE_KERNEL_DIR", str(tmp_path))
    assert bundle.find_kernel_dir() == tmp_path
    assert list(KernelBundle.discover().kernels) == ["attn_fwd_fp16_d64_noncausal"]


def test_no_kernels_found_names_every_place_searched(tmp_path, monkeypatch):
    monkeypatch.setenv("TILE_KERNEL_DIR", str(tmp_path))
    with pytest.raises(BundleError, match="no compiled attention kernels") as error:
        bundle.find_kernel_dir()
    assert str(tmp_path) in str(error.value) and "TILE_KERNEL_DIR" in str(error.value)


def test_default_search_covers_bundle_and_build_folders(monkeypatch):
    monkeypatch.delenv("TILE_KERNEL_DIR", raising=False)
    monkeypatch.setenv("TILE_BUILD_DIR", "/somewhere/build")
    dirs = [str(d) for d in bundle.candidate_dirs()]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(bundle.__file__)))))
    assert dirs == [os.path.join(root, "kernels"), "/somewhere/build/kernels",
                    os.path.join(root, "build", "kernels")]


def test_an_installed_package_searches_only_the_named_folders(monkeypatch):
    # `pip install .` puts the package in site-packages, beside no kernels.
    monkeypatch.setattr(bundle, "_ROOT", None)
    monkeypatch.delenv("TILE_KERNEL_DIR", raising=False)
    monkeypatch.delenv("TILE_BUILD_DIR", raising=False)
    assert bundle.candidate_dirs() == []
    with pytest.raises(BundleError, match="no compiled attention kernels") as error:
        bundle.find_kernel_dir()
    assert "installed" in str(error.value) and "$TILE_KERNEL_DIR" in str(error.value)
    monkeypatch.setenv("TILE_BUILD_DIR", "/somewhere/build")
    assert [str(d) for d in bundle.candidate_dirs()] == ["/somewhere/build/kernels"]


def built_kernel_dir():
    build = os.environ.get("TILE_BUILD_DIR") or os.path.join(
        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "build")
    return os.path.join(build, "kernels")


@pytest.mark.skipif(not os.path.isdir(built_kernel_dir()),
                    reason="the kernels are not built (./dev.sh build)")
def test_built_kernels_are_the_manifest_variants():
    """Every attention variant of tile.kernels.manifest is in the build
    folder, with its constexprs and warps, and parses."""
    from tile.kernels import manifest
    kernels = KernelBundle(built_kernel_dir())
    variants = [v for v in manifest.VARIANTS if v.kernel in bundle.ATTENTION_FAMILIES]
    assert variants
    for variant in variants:
        if variant.name in kernels.without_gpu_code:
            continue   # no GPU code (tile-compile --emit=metadata): not launchable
        spec = kernels.kernels[variant.name]
        assert spec.constexprs == variant.constexprs
        assert spec.num_warps == variant.options.num_warps
        element_type = "bf16" if "bf16" in variant.name else "fp16"
        causal = variant.constexprs.get("CAUSAL")
        assert spec.max_n_ctx == variant.max_n_ctx
        assert kernels.select(variant.kernel, element_type,
                              variant.constexprs["HEAD_DIM"], causal,
                              seq_len=variant.max_n_ctx) is spec


# --------------------------------------------------------------------------
# Argument packing
# --------------------------------------------------------------------------

@pytest.fixture
def forward_spec(tmp_path):
    # The manifest's order, not the caller's, decides the packing: shuffle it.
    params = [FWD_PARAMS[i] for i in (5, 0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12)]
    return parse_manifest(write_kernel(tmp_path, "attn_fwd_fp16_d64_noncausal",
                                       params=params))


def forward_values(**overrides):
    values = {"Q": DevicePointer(0x7F0000000000, "fp16", "q"),
              "K": DevicePointer(0x7F0000100000, "fp16", "k"),
              "V": DevicePointer(0x7F0000200000, "fp16", "v"),
              "O": DevicePointer(0x7F0000300000, "fp16", "out"),
              "LSE": DevicePointer(0x7F0000400000, "fp32", "lse"), "sm_scale": 0.125,
              "stride_z": 100 * 8 * 64, "stride_h": 64, "stride_n": 8 * 64,
              "Z": 2, "H": 8, "N_CTX": 100, "causal_offset": -1}
    values.update(overrides)
    return values


def test_pack_arguments_bytes_follow_the_manifest(forward_spec):
    packed = pack_arguments(forward_spec, forward_values())
    expected = [struct.pack("<f", 0.125)]
    expected += [struct.pack("<Q", a) for a in (0x7F0000000000, 0x7F0000100000,
                                                0x7F0000200000, 0x7F0000300000,
                                                0x7F0000400000)]
    expected += [struct.pack("<i", n) for n in (51200, 64, 512, 2, 8, 100, -1)]
    assert packed.raw_bytes() == expected
    assert len(packed.array) == 13
    # cuLaunchKernel reads argument i through array[i].
    assert [ctypes.string_at(address, len(want))
            for address, want in zip(packed.array, expected)] == expected


def test_a_refilled_buffer_holds_the_new_arguments(forward_spec):
    packed = pack_arguments(forward_spec, forward_values())
    addresses = list(packed.array)
    again = packed.fill(check_arguments(forward_spec, forward_values(N_CTX=7, sm_scale=2)))
    assert again is packed and list(packed.array) == addresses
    assert packed.raw_bytes()[0] == struct.pack("<f", 2.0)
    assert packed.raw_bytes()[11] == struct.pack("<i", 7)


@pytest.mark.parametrize("overrides, message", [
    ({"Q": DevicePointer(0x7F0000000008, "fp16", "q")}, "16-byte aligned.*q starts"),
    ({"stride_n": 8 * 64 + 8}, "multiples of 16, but it is 520"),
    ({"Z": 2**31}, "does not fit in i32"),
    ({"Q": DevicePointer(0x7F0000000000, "bf16", "q")}, "points to fp16, but q holds bf16"),
    ({"Q": 0x7F0000000000}, "is a pointer"),
    ({"Z": True}, "is i32"),
    ({"sm_scale": "0.1"}, "is fp32"),
    ({"sm_scale": 1e39}, "is fp32, not 1e\\+39"),
    ({"extra": 1}, r"unexpected \['extra'\]"),
])
def test_pack_arguments_refuses_what_breaks_the_contract(forward_spec, overrides, message):
    with pytest.raises(ValueError, match=message):
        pack_arguments(forward_spec, forward_values(**overrides))


def test_pack_arguments_reports_missing_params(forward_spec):
    values = forward_values()
    del values["N_CTX"]
    with pytest.raises(ValueError, match=r"missing \['N_CTX'\]"):
        pack_arguments(forward_spec, values)


class RecordingDriver(CudaDriver):
    """CudaDriver's launch logic over stand-ins for the driver calls."""

    def __init__(self):   # no libcuda: nothing of CudaDriver.__init__ runs
        self.calls = []
        self._thread_local = threading.local()

    def _make_current(self, device_index):
        self.calls.append(("make_current", device_index))

    def _function(self, spec, device_index):
        return spec.name

    def _check(self, result, what):
        assert result == 0

    def cuLaunchKernel(self, function, gx, gy, gz, bx, by, bz, shared, stream, params,
                       extra):
        self.calls.append((function, (gx, gy, gz), stream, ctypes.string_at(params[11], 4)))
        return 0


def test_launch_all_checks_every_launch_before_the_first(forward_spec):
    driver = RecordingDriver()
    good, bad = forward_values(N_CTX=5), forward_values(stride_n=8)
    with pytest.raises(ValueError, match="multiples of 16, but it is 8"):
        driver.launch_all([(forward_spec, (1, 1, 1), good), (forward_spec, (1, 1, 1), bad)],
                          0, 7)
    with pytest.raises(ValueError, match="dimension y = 65536"):
        driver.launch_all([(forward_spec, (1, 1, 1), good),
                           (forward_spec, (1, 65536, 1), good)], 0, 7)
    assert driver.calls == []
    driver.launch_all([(forward_spec, (2, 3, 1), good),
                       (forward_spec, (4, 3, 1), forward_values(N_CTX=9))], 0, 7)
    name = forward_spec.name
    assert driver.calls == [("make_current", 0),
                            (name, (2, 3, 1), 7, struct.pack("<i", 5)),
                            (name, (4, 3, 1), 7, struct.pack("<i", 9))]


@pytest.mark.parametrize("grid, message", [((0, 1, 1), "dimension x = 0"),
                                           ((1, 65536, 1), "dimension y = 65536")])
def test_grid_limits(grid, message):
    with pytest.raises(ValueError, match=message):
        check_grid(grid, "attn_fwd")
    check_grid((2**31 - 1, 65535, 65535), "attn_fwd")


def test_missing_driver_is_a_clear_error():
    with pytest.raises(RuntimeError, match=r"NVIDIA driver \(libcuda-missing.so.1\) "
                                           r"could not be loaded"):
        CudaDriver("libcuda-missing.so.1")
