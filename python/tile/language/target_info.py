"""``tl.target_info``: what the kernel is compiled for, as Triton's
``triton.language.target_info``, answered at compile time.

In a kernel each function is a compile-time constant of the compilation's
target (``CompileOptions.target``: ``sm_90a`` or ``sm_80``), so that a
kernel can choose its code for it::

    if tl.target_info.cuda_capability_geq(9, 0):
        ...   # Hopper

On the host they answer for PyTorch's current CUDA device (``None`` and
``False`` without one).
"""

import collections

# Triton's GPUTarget: backend, arch (an int: 90 for sm_90a), warp size.
GPUTarget = collections.namedtuple("GPUTarget", ("backend", "arch", "warp_size"))


def _target_function(fn):
    """Marks a function the compiler calls at compile time with the
    compilation's target (its ``_target`` keyword)."""
    fn.__tile_target_function__ = True
    return fn


def _host_target():
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    major, minor = torch.cuda.get_device_capability()
    return GPUTarget("cuda", major * 10 + minor, 32)


def _resolve(target):
    if target is None:
        return _host_target()
    if isinstance(target, str):   # "sm_90a", "sm_80"
        return GPUTarget("cuda", int("".join(c for c in target if c.isdigit())), 32)
    return target


@_target_function
def current_target(_target=None):
    """The target: ``GPUTarget(backend, arch, warp_size)``."""
    return _resolve(_target)


@_target_function
def is_cuda(_target=None):
    """Whether the target is an NVIDIA GPU (always, for Tile's targets)."""
    target = _resolve(_target)
    return target is not None and target.backend == "cuda"


@_target_function
def cuda_capability_geq(major, minor=0, _target=None):
    """Whether the target's compute capability is at least (major, minor)."""
    target = _resolve(_target)
    return target is not None and target.backend == "cuda" and \
        target.arch >= major * 10 + minor


@_target_function
def is_hip(_target=None):
    """Whether the target is an AMD GPU (never, for Tile's targets)."""
    target = _resolve(_target)
    return target is not None and target.backend == "hip"


@_target_function
def is_hip_cdna3(_target=None):
    """Whether the target is AMD's CDNA3 (never, for Tile's targets)."""
    return False


@_target_function
def is_hip_cdna4(_target=None):
    """Whether the target is AMD's CDNA4 (never, for Tile's targets)."""
    return False
