"""Kernels from Python without a GPU: the Tile runtime (libtile_runtime.so,
through tile.runtime) reading kernel folders, choosing variants, checking
arguments and computing grids, and tile.attention finding its kernels
(standard library only, no PyTorch)."""

import json
import os
import re

import pytest

from tile import runtime
from tile.attention import bundle
from tile.attention.bundle import BundleError, KernelBundle
from tile.runtime import DevicePointer, LaunchError

FWD_PARAMS = [("Q", "*fp16", 16), ("K", "*fp16", 16), ("V", "*fp16", 16),
              ("O", "*fp16", 16), ("LSE", "*fp32", 16), ("sm_scale", "fp32", 1),
              ("stride_z", "i32", 16), ("stride_h", "i32", 16), ("stride_n", "i32", 16),
              ("Z", "i32", 1), ("H", "i32", 1), ("N_CTX", "i32", 1),
              ("causal_offset", "i32", 1)]
FWD_LAUNCH = {"grid": ["cdiv(N_CTX, BLOCK_M)", "Z * H"], "keys": ["HEAD_DIM", "CAUSAL"],
              "length": "N_CTX"}


def runtime_library_built():
    try:
        runtime.library()
    except runtime.RuntimeLibraryError:
        return False
    return True


pytestmark = pytest.mark.skipif(not runtime_library_built(),
                                reason="libtile_runtime.so is not built (./dev.sh build)")


def write_kernel(directory, name, params=FWD_PARAMS, kernel="attn_fwd",
                 constexprs=None, gpu=True, files=("cubin", "ptx"), shared_bytes=81920,
                 max_n_ctx=None, tuning=None, launch=FWD_LAUNCH):
    """Metadata in the format tile-compile writes, with placeholder GPU code
    beside it."""
    meta = {"schema_version": 2, "name": name, "kernel": kernel, "entry": name,
            "params": [{"name": n, "type": t, **({"divisibility": d} if d > 1 else {})}
                       for n, t, d in params],
            "constexprs": constexprs if constexprs is not None else
            {"HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 64, "CAUSAL": False, "ALIBI": False,
             "DROPOUT": False},
            "num_warps": 4}
    if launch is not None:
        meta["launch"] = launch
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
# Reading kernel folders
# --------------------------------------------------------------------------

def test_kernel_metadata_reads_params_in_order(tmp_path):
    write_kernel(tmp_path, "attn_fwd_fp16_d64_noncausal")
    kernel, = runtime.Bundle(tmp_path).kernels
    assert [p.name for p in kernel.params] == [n for n, _, _ in FWD_PARAMS]
    assert [p.divisibility for p in kernel.params] == [d for _, _, d in FWD_PARAMS]
    assert kernel.element_type == "fp16" and kernel.num_warps == 4
    assert kernel.constexpr_int("BLOCK_M") == 128
    assert kernel.has_gpu_code and kernel.family == "attn_fwd"


@pytest.mark.parametrize("gpu, files", [(False, ()), (True, ())])
def test_kernel_without_gpu_code_is_kept_apart(tmp_path, gpu, files):
    write_kernel(tmp_path, "attn_fwd_x", gpu=gpu, files=files)
    kernels = KernelBundle(tmp_path)
    assert kernels.kernels == {} and kernels.without_gpu_code == ["attn_fwd_x"]


@pytest.mark.parametrize("text, message", [
    ("{not json", "JSON"),
    ("[1, 2]", "not a JSON object"),
    ('{"name": "k", "kernel": "attn_fwd", "params": []}',
     r"schema_version \(none\), but this runtime reads version 2"),
    ('{"schema_version": 3, "name": "k", "kernel": "attn_fwd", "params": []}',
     "schema_version 3, but this runtime reads version 2: compile the kernel"),
    ('{"schema_version": 2, "name": "k", "kernel": "attn_fwd", "num_warps": 4, '
     '"params": [{"name": "X", "type": "f65"}]}', "unknown type 'f65'"),
    ('{"schema_version": 2, "name": "k", "kernel": "attn_fwd", "num_warps": 4, '
     '"params": [{"name": "X", "type": "i32", "divisibility": 3}]}', "divisibility"),
    ('{"schema_version": 2, "name": "k", "kernel": "attn_fwd", "num_warps": 4, '
     '"params": [], "launch": {"grid": ["cdiv(N, 2)"]}}', "'N' is no integer parameter"),
])
def test_unreadable_metadata_is_skipped_with_its_reason(tmp_path, text, message):
    path = tmp_path / "attn_fwd_bad.json"
    path.write_text(text)
    opened = runtime.Bundle(tmp_path)
    assert opened.kernels == []
    warning, = opened.warnings
    assert str(path) in warning
    assert re.search(message, warning), warning


def test_select_by_dtype_head_dim_and_causality(tmp_path):
    for causal in (False, True):
        write_kernel(tmp_path, f"attn_fwd_fp16_d64_{'causal' if causal else 'noncausal'}",
                     constexprs={"HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 64,
                                 "CAUSAL": causal, "ALIBI": False, "DROPOUT": False})
    kernels = KernelBundle(tmp_path)
    assert kernels.select("attn_fwd", "fp16", 64, True).name == "attn_fwd_fp16_d64_causal"
    assert kernels.select("attn_fwd", "fp16", 64, False).name == \
        "attn_fwd_fp16_d64_noncausal"
    with pytest.raises(ValueError, match=r"no attn_fwd variant for HEAD_DIM=96 CAUSAL=1 "
                                         r"ALIBI=0 DROPOUT=0 fp16 \(it has: HEAD_DIM=64 "
                                         r"CAUSAL=1 ALIBI=0 DROPOUT=0 fp16, HEAD_DIM=64 "
                                         r"CAUSAL=0 ALIBI=0 DROPOUT=0 fp16\)"):
        kernels.select("attn_fwd", "fp16", 96, True)
    with pytest.raises(ValueError, match="bf16"):
        kernels.select("attn_fwd", "bf16", 64, True)


def test_select_by_window(tmp_path):
    # The runtime matches the keys given: CAUSAL=1 alone would match both
    # the causal and the local variant, so the window is a key of its own.
    for suffix, causal, window in (("noncausal", False, False), ("causal", True, False),
                                   ("local", True, True)):
        write_kernel(tmp_path, f"attn_fwd_fp16_d64_{suffix}",
                     constexprs={"HEAD_DIM": 64, "BLOCK_M": 128, "BLOCK_N": 64,
                                 "CAUSAL": causal, "WINDOW": window, "ALIBI": False,
                                 "DROPOUT": False})
    kernels = KernelBundle(tmp_path)
    for suffix, causal, window in (("noncausal", False, False), ("causal", True, False),
                                   ("local", True, True)):
        assert kernels.select("attn_fwd", "fp16", 64, causal, window=window).name == \
            f"attn_fwd_fp16_d64_{suffix}"
    with pytest.raises(ValueError, match=r"no attn_fwd variant for HEAD_DIM=64 CAUSAL=0 "
                                         r"WINDOW=1 ALIBI=0 DROPOUT=0 fp16"):
        kernels.select("attn_fwd", "fp16", 64, False, window=True)


def test_select_by_sequence_length(tmp_path):
    constexprs = {"HEAD_DIM": 128, "BLOCK_M": 128, "BLOCK_N": 64, "CAUSAL": False,
                  "ALIBI": False, "DROPOUT": False}
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
    # tile.tools.autotune puts candidates beside the shipped variants;
    # only tile-run --kernel runs them.
    write_kernel(tmp_path, "attn_fwd_fp16_d64_noncausal")
    write_kernel(tmp_path, "attn_fwd_fp16_d64_noncausal__m64n64w4", max_n_ctx=4096,
                 tuning={"variant": "attn_fwd_fp16_d64_noncausal", "tag": "m64n64w4"})
    kernels = KernelBundle(tmp_path)
    assert kernels.select("attn_fwd", "fp16", 64, False, seq_len=128).name == \
        "attn_fwd_fp16_d64_noncausal"
    write_kernel(tmp_path, "attn_fwd_fp16_d64_causal", tuning={"tag": "x"})
    assert any("'tuning' needs the string 'variant'" in w
               for w in runtime.Bundle(tmp_path).warnings)


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
    write_kernel(tmp_path, "attn_fwd_fp16_d64_noncausal", max_n_ctx=value)
    warning, = runtime.Bundle(tmp_path).warnings
    assert "'max_n_ctx' is not a positive integer" in warning


def test_missing_block_size_is_reported(tmp_path):
    write_kernel(tmp_path, "attn_fwd_k", constexprs={"HEAD_DIM": 64, "CAUSAL": False,
                                                     "ALIBI": False, "DROPOUT": False},
                 launch={"grid": ["Z * H"]})
    kernel, = runtime.Bundle(tmp_path).kernels
    with pytest.raises(BundleError, match="BLOCK_M"):
        kernel.constexpr_int("BLOCK_M")


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
    libraries = [str(p) for p in runtime.library_candidates()]
    if "TILE_RUNTIME_LIBRARY" not in os.environ:
        assert libraries == [os.path.join(root, "lib", "libtile_runtime.so"),
                             "/somewhere/build/lib/libtile_runtime.so",
                             os.path.join(root, "build", "lib", "libtile_runtime.so")]


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
    folder, with its constexprs, warps and launch spec, and is chosen for
    what it computes."""
    from tile.kernels import manifest
    kernels = KernelBundle(built_kernel_dir())
    variants = [v for v in manifest.VARIANTS if v.kernel in bundle.ATTENTION_FAMILIES]
    assert variants
    for variant in variants:
        if variant.name in kernels.without_gpu_code:
            continue   # no GPU code (tile-compile --emit=metadata): not launchable
        kernel = kernels.kernels[variant.name]
        assert kernel.constexprs == variant.constexprs
        assert kernel.num_warps == variant.options.num_warps
        grid = kernel.metadata["launch"]["grid"]
        if variant.constexprs.get("PERSISTENT") and variant.constexprs["CAUSAL"]:
            assert grid == ["min(cdiv(cdiv(MAX_N_CTX, BLOCK_M), 2) * Z * H, "
                            "PERSISTENT * NUM_SMS)"]
        elif variant.constexprs.get("PERSISTENT"):
            assert grid == ["min(cdiv(MAX_N_CTX, BLOCK_M) * Z * H, PERSISTENT * NUM_SMS)"]
        else:
            assert grid[1] == "Z * H"
        element_type = "bf16" if "bf16" in variant.name else "fp16"
        causal = variant.constexprs.get("CAUSAL")
        window = variant.constexprs.get("WINDOW")
        softcap = variant.constexprs.get("SOFTCAP")
        alibi = variant.constexprs.get("ALIBI", False)
        dropout = variant.constexprs.get("DROPOUT", False)
        deterministic = not variant.constexprs.get("DQ", True)
        assert kernel.max_n_ctx == variant.max_n_ctx
        # An sm_80 variant is an A100's choice, the sm_90a one an H100's
        # and the interpreter's.
        capability = {"sm_80": (8, 0), "sm_90a": None}[variant.options.target]
        assert kernels.select(variant.kernel, element_type,
                              variant.constexprs["HEAD_DIM"], causal,
                              seq_len=variant.max_n_ctx, window=window,
                              softcap=softcap, alibi=alibi, dropout=dropout,
                              deterministic=deterministic, capability=capability) is kernel
        if variant.options.target == "sm_90a":
            assert kernels.select(variant.kernel, element_type,
                                  variant.constexprs["HEAD_DIM"], causal,
                                  seq_len=variant.max_n_ctx, window=window,
                                  softcap=softcap, alibi=alibi, dropout=dropout,
                                  deterministic=deterministic,
                                  capability=(9, 0)) is kernel


# --------------------------------------------------------------------------
# Arguments and grids: the runtime's checks
# --------------------------------------------------------------------------

@pytest.fixture
def forward(tmp_path):
    # The metadata's order, not the caller's, decides the binding: shuffle it.
    params = [FWD_PARAMS[i] for i in (5, 0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12)]
    write_kernel(tmp_path, "attn_fwd_fp16_d64_noncausal", params=params)
    return runtime.Bundle(tmp_path).kernels[0]


def forward_values(**overrides):
    values = {"Q": DevicePointer(0x7F0000000000, "fp16"),
              "K": DevicePointer(0x7F0000100000, "fp16"),
              "V": DevicePointer(0x7F0000200000, "fp16"),
              "O": DevicePointer(0x7F0000300000, "fp16"),
              "LSE": DevicePointer(0x7F0000400000, "fp32"), "sm_scale": 0.125,
              "stride_z": 100 * 8 * 64, "stride_h": 64, "stride_n": 8 * 64,
              "Z": 2, "H": 8, "N_CTX": 300, "causal_offset": -1}
    values.update(overrides)
    return values


def test_the_grid_comes_from_the_launch_spec(forward):
    assert forward.check(forward_values()) == (3, 16, 1)
    assert forward.check(forward_values(N_CTX=256, Z=1)) == (2, 8, 1)


@pytest.mark.parametrize("overrides, message", [
    ({"Q": DevicePointer(0x7F0000000008, "fp16")}, "Q .* 16-byte aligned addresses"),
    ({"stride_n": 8 * 64 + 8}, "stride_n .* multiples of 16, but it is 520"),
    ({"Z": 2**31}, "does not fit in i32"),
    ({"Q": DevicePointer(0x7F0000000000, "bf16")}, r"Q \(\*fp16\) is given a pointer to bf16"),
    ({"Q": 0x7F0000000000}, r"Q \(\*fp16\) is given the integer"),
    ({"Z": True}, "parameter Z is given True"),
    ({"sm_scale": "0.1"}, "parameter sm_scale is given '0.1'"),
    ({"sm_scale": 1e39}, "does not fit in fp32"),
    ({"H": 70000}, "grid dimension y = 140000 lies outside"),
    ({"N_CTX": 0}, "grid dimension x = 0 lies outside"),
    ({"extra": 1}, r"unexpected \['extra'\]"),
])
def test_arguments_that_break_the_contract_are_refused(forward, overrides, message):
    with pytest.raises(ValueError, match=message):
        forward.check(forward_values(**overrides))


def test_missing_arguments_are_named(forward):
    values = forward_values()
    del values["N_CTX"]
    with pytest.raises(ValueError, match=r"missing \['N_CTX'\]"):
        forward.check(values)


def test_a_launch_without_a_gpu_is_a_clear_error(forward, monkeypatch):
    # No GPU in CI: the launch reaches the driver, which is missing or sees
    # no device. A bad argument is refused before that.
    with pytest.raises(ValueError, match="multiples of 16"):
        forward.launch(forward_values(stride_n=8), 0, 0)
    # On a GPU machine the placeholder code fails to load instead.
    with pytest.raises(LaunchError, match="NVIDIA driver|loading the GPU code|failed"):
        forward.launch(forward_values(), 0, 0)


def test_multiprocessor_count_names_a_missing_gpu():
    """What launch grids read as NUM_SMS: the device's count, or without a
    GPU (CI) an error that says why."""
    try:
        count = runtime.multiprocessor_count(0)
    except LaunchError as error:
        assert re.search("NVIDIA driver|CUDA device 0|no CUDA", str(error)), str(error)
    else:
        assert count > 0


def test_a_launch_over_a_given_grid(tmp_path):
    """kernel[grid](...)'s path, tileLaunchGrid: the caller's grid, for a
    kernel without a launch spec; the grid and the arguments are checked
    before the driver is reached."""
    if runtime.library().tileLaunchGrid is None:
        pytest.skip("libtile_runtime.so predates tileLaunchGrid: rebuild it")
    write_kernel(tmp_path, "no_spec", launch=None)
    kernel = runtime.Bundle(tmp_path).kernels[0]
    with pytest.raises(ValueError, match="has no launch spec"):
        kernel.check(forward_values())
    with pytest.raises(ValueError, match="grid dimension y = 0 lies outside"):
        kernel.launch(forward_values(), 0, 0, grid=(4, 0, 1))
    with pytest.raises(ValueError, match="multiples of 16"):
        kernel.launch(forward_values(stride_n=8), 0, 0, grid=(4, 1, 1))
    with pytest.raises(LaunchError, match="NVIDIA driver|loading the GPU code|failed"):
        kernel.launch(forward_values(), 0, 0, grid=(4, 2, 1))


def test_a_missing_runtime_library_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("TILE_RUNTIME_LIBRARY", str(tmp_path / "libtile_runtime.so"))
    with pytest.raises(runtime.RuntimeLibraryError,
                       match=r"the Tile runtime \(libtile_runtime.so\) was not found"):
        runtime._Library()
