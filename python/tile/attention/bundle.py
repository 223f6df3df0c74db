"""Where the compiled attention kernels are, and which one computes what.

The kernels' metadata is read, variants chosen and launches made by the
Tile runtime (tile.runtime, over libtile_runtime.so); this module finds the
kernel folder and asks the runtime for the attention families' variants.

Standard library only: nothing here needs PyTorch or a GPU.
"""

import os
from pathlib import Path

from .. import runtime
from ..runtime import BundleError

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
# The deterministic backward's dQ (beside BACKWARD without DQ).
DQ = "attn_bwd_dq"
ATTENTION_FAMILIES = (FORWARD, PREPROCESS, BACKWARD, POSTPROCESS, DQ)

__all__ = ["BundleError", "KernelBundle", "block_width", "find_kernel_dir", "candidate_dirs"]


def block_width(constexprs):
    """An attention or decoding variant's blocks' width: its BLOCK_D, or
    its HEAD_DIM where it has none (0: the head dim).  Its dQ accumulator
    and split partials have rows this long."""
    return constexprs.get("BLOCK_D") or constexprs["HEAD_DIM"]


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
    """The attention kernels of one folder (a runtime.Bundle), chosen by
    what they compute."""

    def __init__(self, directory):
        self.directory = Path(directory)
        if not self.directory.is_dir():
            raise BundleError(f"kernel folder {self.directory} does not exist")
        self.bundle = runtime.Bundle(self.directory)
        attention = [k for k in self.bundle.kernels if k.family in ATTENTION_FAMILIES]
        self.kernels = {k.name: k for k in attention if k.has_gpu_code}
        self.without_gpu_code = [k.name for k in attention if not k.has_gpu_code]
        # The head dims the forward kernels have, ascending.
        self.head_dims = sorted({k.constexprs["HEAD_DIM"] for k in self.kernels.values()
                                 if k.family == FORWARD})
        self._kernel_dims = {}

    @classmethod
    def discover(cls):
        return cls(find_kernel_dir())

    def kernel_head_dim(self, kernel, element_type, head_dim, capability=None):
        """The head dim of the `kernel` family's variants that run head_dim
        for this element type on a device of compute capability
        `capability`: head_dim where the folder has them (kernels on a
        larger head dim's tiles, BLOCK_D, read zeros past the tensors'
        columns), else the smallest larger one (the tensors then go padded
        with zeros, as FlashAttention pads them: the zero columns add
        nothing to the scores, and the outputs' are dropped).  ValueError
        when none is large enough."""
        key = (kernel, element_type, head_dim, capability, os.environ.get("TILE_TARGET"))
        found = self._kernel_dims.get(key)
        if found is None:
            larger = [d for d in self.head_dims if d >= head_dim]
            if not larger:
                raise ValueError(f"head_dim {head_dim}: the bundle's attention kernels take "
                                 f"head dims {self.head_dims} (smaller ones padded to the "
                                 f"next)")
            first_error = None
            for dim in larger:
                try:
                    self.select(kernel, element_type, dim, capability=capability)
                except ValueError as error:
                    first_error = first_error or error
                    continue
                found = self._kernel_dims[key] = dim
                break
            else:
                # What the smallest says, when none runs here (kernels for
                # another device, say).
                raise first_error
        return found

    def select(self, kernel, element_type, head_dim, causal=None, seq_len=None,
               window=None, softcap=None, alibi=False, dropout=False, deterministic=False,
               capability=None):
        """The variant of `kernel`'s family for this element type, head dim,
        mask (CAUSAL and WINDOW, for the families that have them; None
        leaves a key out), capping of the scores (SOFTCAP, likewise), ALiBi
        and dropout (forward and backward), dQ's atomic adds in the backward
        (DQ: not when deterministic) and sequence length (the runtime's choice, by the
        families' launch specs), compiled for a device of compute capability
        `capability` ((major, minor); None on the CPU): ValueError naming
        what the folder has when none matches.  The runtime matches only
        the keys given, so the forward and backward pass both: CAUSAL=1
        alone would match the causal and the local (banded) variants
        alike."""
        keys = {"HEAD_DIM": head_dim}
        if causal is not None:
            keys["CAUSAL"] = causal
        if window is not None:
            keys["WINDOW"] = window
        if softcap is not None:
            keys["SOFTCAP"] = softcap
        if kernel in (FORWARD, BACKWARD):
            # Every caller that does not ask for ALiBi or dropout gets the
            # kernels without them.
            keys["ALIBI"] = alibi
            keys["DROPOUT"] = dropout
        if kernel == BACKWARD:
            keys["DQ"] = not deterministic
        return self.bundle.select(kernel, element_type, keys, seq_len, capability)
