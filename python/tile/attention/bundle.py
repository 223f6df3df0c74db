"""Finding and reading the compiled kernels: the metadata files
(<name>.json, "manifests" here) that tile-compile writes beside each
kernel's cubin and PTX (docs/kernel-metadata.md).

Standard library only: nothing here needs PyTorch or a GPU.
"""

import json
import os
from pathlib import Path

# Where a kernel folder may be, after $TILE_KERNEL_DIR: this file lies at
# <root>/python/tile/attention/bundle.py both in a checkout (kernels under
# <root>/build/kernels; also under `pip install -e`) and in a GPU bundle
# (kernels under <root>/kernels).  A package installed with `pip install .`
# lies in site-packages, beside no kernels: it has no root (None) and finds
# them through $TILE_KERNEL_DIR (or $TILE_BUILD_DIR/kernels).
_PACKAGE = Path(__file__).resolve().parents[1]
_ROOT = _PACKAGE.parents[1] if _PACKAGE.parent.name == "python" else None

KERNEL_DIR_VARIABLE = "TILE_KERNEL_DIR"

# The kernel families the attention API launches.
FORWARD = "attn_fwd"
PREPROCESS = "attn_bwd_preprocess"
BACKWARD = "attn_bwd"
POSTPROCESS = "attn_bwd_postprocess"
ATTENTION_FAMILIES = (FORWARD, PREPROCESS, BACKWARD, POSTPROCESS)

# The parameters each family must take, by name; their order and types come
# from the manifest.
EXPECTED_PARAMS = {
    FORWARD: ("Q", "K", "V", "O", "LSE", "sm_scale", "stride_z", "stride_h",
              "stride_n", "Z", "H", "N_CTX", "causal_offset"),
    PREPROCESS: ("O", "DO", "DELTA", "DQ_ACC", "stride_z", "stride_h", "stride_n",
                 "Z", "H", "N_CTX"),
    BACKWARD: ("Q", "K", "V", "sm_scale", "DO", "DQ_ACC", "DK", "DV", "LSE",
               "DELTA", "stride_z", "stride_h", "stride_n", "Z", "H", "N_CTX",
               "causal_offset"),
    POSTPROCESS: ("DQ", "DQ_ACC", "sm_scale", "stride_z", "stride_h", "stride_n",
                  "Z", "H", "N_CTX"),
}

SCALAR_TYPES = ("i32", "i64", "fp32")

# The metadata layout this reader takes: tile::rt::kMetadataSchemaVersion
# (include/tile/Runtime/Bundle.h), which tile-compile writes.
SCHEMA_VERSION = 1


class BundleError(RuntimeError):
    """No usable kernel folder, or a manifest that cannot be used."""


class ParamSpec:
    """One kernel parameter: name, type ('*fp16', 'i32', 'fp32', ...) and
    the divisibility the kernel was compiled for (1 = none promised).  For a
    pointer, divisibility is the alignment of the address in bytes; for an
    integer, the value is a multiple of it."""

    def __init__(self, name, type, divisibility=1):
        self.name = name
        self.type = type
        self.divisibility = divisibility
        # Read on every launch: computed once.
        self.is_pointer = type.startswith("*")
        # The pointee type of a pointer parameter ('fp16' for '*fp16').
        self.element_type = type[1:] if self.is_pointer else None

    def __repr__(self):
        suffix = f":{self.divisibility}" if self.divisibility > 1 else ""
        return f"{self.name}: {self.type}{suffix}"


class KernelSpec:
    """What the manifest of one compiled kernel says, and where its code is."""

    def __init__(self, name, kernel, entry, params, constexprs, num_warps,
                 shared_bytes, image_path, manifest_path, max_n_ctx=None,
                 candidate_of=None):
        self.name = name
        self.kernel = kernel
        self.entry = entry
        self.params = params
        self.constexprs = constexprs
        self.num_warps = num_warps
        self.shared_bytes = shared_bytes
        self.image_path = image_path
        self.manifest_path = manifest_path
        # The longest sequence this variant is the faster choice for (None:
        # any); it is correct at every length.
        self.max_n_ctx = max_n_ctx
        # The shipped variant this one is a block-size candidate of
        # (benchmarks/autotune.py), or None.
        self.candidate_of = candidate_of
        # The element type of the kernel's first pointer ('fp16', ...).
        self.element_type = next((p.element_type for p in params if p.is_pointer), None)

    @property
    def threads(self):
        return 32 * self.num_warps

    def constexpr_int(self, name):
        """A positive integer constexpr (a block size), or BundleError."""
        value = self.constexprs.get(name)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise BundleError(f"kernel {self.name} ({self.manifest_path}) lacks the "
                              f"positive integer constexpr {name}")
        return value

    def read_image(self):
        """The cubin (or NUL-terminated PTX) bytes cuModuleLoadData takes."""
        try:
            data = Path(self.image_path).read_bytes()
        except OSError as error:
            raise BundleError(f"cannot read the GPU code of {self.name}: {error}") from None
        return data + b"\0" if self.image_path.endswith(".ptx") else data

    def __repr__(self):
        return f"KernelSpec({self.name})"


def _require(condition, path, what):
    if not condition:
        raise BundleError(f"{path}: {what}")


def parse_manifest(path):
    """Reads one <name>.json.  Returns a KernelSpec, or None for a kernel
    with no GPU code (no "gpu" entry, or neither cubin nor PTX beside it).
    Raises BundleError for a file that is not a valid manifest."""
    path = str(path)
    try:
        with open(path) as f:
            meta = json.load(f)
    except (OSError, ValueError) as error:
        raise BundleError(f"{path}: unreadable manifest: {error}") from None
    _require(isinstance(meta, dict), path, "a manifest must be a JSON object")
    _require(meta.get("schema_version") == SCHEMA_VERSION, path,
             f"metadata of schema_version {meta.get('schema_version', '(none)')}, but this "
             f"runtime reads version {SCHEMA_VERSION}: compile the kernel again with this "
             "Tile's tile-compile")
    for key, kind in (("name", str), ("kernel", str), ("params", list),
                      ("num_warps", int)):
        _require(isinstance(meta.get(key), kind), path,
                 f"'{key}' is missing or not a {kind.__name__}")
    _require(meta["num_warps"] > 0, path, "'num_warps' must be positive")
    constexprs = meta.get("constexprs", {})
    _require(isinstance(constexprs, dict), path, "'constexprs' must be an object")
    max_n_ctx = meta.get("max_n_ctx")
    _require(max_n_ctx is None or (type(max_n_ctx) is int and max_n_ctx > 0), path,
             "'max_n_ctx' must be a positive integer")
    tuning = meta.get("tuning")
    candidate_of = tuning.get("variant") if isinstance(tuning, dict) else None
    _require(tuning is None or (isinstance(candidate_of, str) and candidate_of), path,
             "'tuning' needs the string 'variant' it tunes")
    params = []
    for index, param in enumerate(meta["params"]):
        _require(isinstance(param, dict) and isinstance(param.get("name"), str)
                 and isinstance(param.get("type"), str), path,
                 f"parameter {index} needs a 'name' and a 'type'")
        divisibility = param.get("divisibility", 1)
        _require(isinstance(divisibility, int) and divisibility >= 1, path,
                 f"parameter {param['name']}: divisibility must be a positive integer")
        _require(param["type"].startswith("*") or param["type"] in SCALAR_TYPES, path,
                 f"parameter {param['name']}: unsupported type '{param['type']}'")
        params.append(ParamSpec(param["name"], param["type"], divisibility))

    gpu = meta.get("gpu")
    if not isinstance(gpu, dict):
        return None
    directory = os.path.dirname(path)
    image_path = None
    for key in ("cubin", "ptx"):   # the cubin needs no JIT compilation
        candidate = gpu.get(key)
        if isinstance(candidate, str) and os.path.isfile(os.path.join(directory, candidate)):
            image_path = os.path.join(directory, candidate)
            break
    if image_path is None:
        return None
    shared_bytes = gpu.get("shared_bytes", 0)
    _require(isinstance(shared_bytes, int) and shared_bytes >= 0, path,
             "'gpu.shared_bytes' must be a non-negative integer")
    return KernelSpec(name=meta["name"], kernel=meta["kernel"],
                      entry=meta.get("entry", meta["name"]), params=params,
                      constexprs=constexprs, num_warps=meta["num_warps"],
                      shared_bytes=shared_bytes, image_path=image_path,
                      manifest_path=path, max_n_ctx=max_n_ctx,
                      candidate_of=candidate_of)


def candidate_dirs():
    """The folders searched for kernels, in order."""
    override = os.environ.get(KERNEL_DIR_VARIABLE)
    if override:
        return [Path(override)]   # an explicit choice is never second-guessed
    dirs = [_ROOT / "kernels"] if _ROOT else []
    build = os.environ.get("TILE_BUILD_DIR")
    if build:
        dirs.append(Path(build) / "kernels")
    if _ROOT:
        dirs.append(_ROOT / "build" / "kernels")
    return dirs


def _has_attention_kernels(directory):
    return directory.is_dir() and any(directory.glob(f"{FORWARD}_*.json"))


def find_kernel_dir():
    """The first candidate folder that holds attention kernels."""
    dirs = candidate_dirs()
    for directory in dirs:
        if _has_attention_kernels(directory):
            return directory
    searched = ", ".join(str(d) for d in dirs) or "nowhere"
    installed = "" if _ROOT else (
        f" The tile package is installed ({_PACKAGE}), apart from any checkout or "
        f"bundle: it finds kernels only through ${KERNEL_DIR_VARIABLE} (or "
        f"$TILE_BUILD_DIR/kernels).")
    raise BundleError(
        f"no compiled attention kernels found (looked for {FORWARD}_*.json in: "
        f"{searched}).{installed} Build them (./dev.sh build, or "
        f"scripts/make_gpu_bundle.sh for a GPU bundle) or point "
        f"${KERNEL_DIR_VARIABLE} at a folder that holds them (build/kernels, or "
        f"a bundle's kernels/)")


class KernelBundle:
    """The attention kernels of one folder, indexed by what they compute."""

    def __init__(self, directory):
        self.directory = Path(directory)
        if not self.directory.is_dir():
            raise BundleError(f"kernel folder {self.directory} does not exist")
        self.kernels = {}
        self._selected = {}   # the ranked matches, by select()'s arguments
        self.without_gpu_code = []
        for path in sorted(self.directory.glob("attn_*.json")):
            spec = parse_manifest(path)
            if spec is None:
                self.without_gpu_code.append(path.stem)
                continue
            if spec.kernel not in ATTENTION_FAMILIES or spec.candidate_of:
                continue   # tuning candidates run only through tile-run --kernel
            missing = set(EXPECTED_PARAMS[spec.kernel]) - {p.name for p in spec.params}
            extra = {p.name for p in spec.params} - set(EXPECTED_PARAMS[spec.kernel])
            if missing or extra:
                raise BundleError(
                    f"{path}: {spec.kernel} takes {spec.params}, but the attention "
                    f"API passes {list(EXPECTED_PARAMS[spec.kernel])}")
            self.kernels[spec.name] = spec

    @classmethod
    def discover(cls):
        return cls(find_kernel_dir())

    def family(self, kernel):
        return [s for s in self.kernels.values() if s.kernel == kernel]

    def head_dims(self, element_type):
        """Head dims with a forward kernel for this element type."""
        return sorted({s.constexprs.get("HEAD_DIM") for s in self.family(FORWARD)
                       if s.element_type == element_type})

    def select(self, kernel, element_type, head_dim, causal=None, seq_len=None):
        """The kernel of `kernel`'s family for this element type, head dim,
        causality (for families that have one) and sequence length: among
        the variants that match, the smallest max_n_ctx covering `seq_len`,
        else the variant without one (also for seq_len None).  ValueError
        naming what the folder has when none matches."""
        key = (kernel, element_type, head_dim, causal)
        ranked = self._selected.get(key)
        if ranked is None:
            ranked = self._selected[key] = self._matching(*key)
        for spec in ranked:
            if spec.max_n_ctx is None or (seq_len is not None and seq_len <= spec.max_n_ctx):
                return spec
        return ranked[-1]   # every variant has a bound below seq_len

    def _matching(self, kernel, element_type, head_dim, causal):
        """The matching variants, bounded ones by max_n_ctx, then unbounded."""
        matching, available = [], []
        for spec in self.family(kernel):
            dims_match = spec.constexprs.get("HEAD_DIM") == head_dim
            causal_match = causal is None or bool(spec.constexprs.get("CAUSAL")) == causal
            if spec.element_type == element_type and dims_match and causal_match:
                matching.append(spec)
            available.append(f"{spec.element_type} d{spec.constexprs.get('HEAD_DIM')}"
                             + ("" if causal is None else
                                (" causal" if spec.constexprs.get("CAUSAL") else
                                 " non-causal")))
        if matching:
            return sorted(matching, key=lambda s: (s.max_n_ctx is None, s.max_n_ctx or 0,
                                                   s.name))
        wanted = f"{element_type} head_dim={head_dim}" + (
            "" if causal is None else (" causal" if causal else " non-causal"))
        raise ValueError(
            f"no compiled {kernel} kernel for {wanted} in {self.directory} "
            f"(it has: {', '.join(sorted(set(available))) or 'none'})")
