"""Compile options: the Python mirror of include/tile/Pipeline/Options.h.

Each field is one option of the C++ ``CompileOptions``, named with ``_``
where C++ writes ``-``, with the same default; test_options.py checks both
against ``tile-compile --print-default-options``.  A module the frontend
writes records its options as ``tile.options`` in the pipeline's syntax
(:meth:`CompileOptions.pipeline_string`), and the kernel's metadata file
carries the same string as ``"options"``.
"""

import dataclasses

from .errors import UsageError

TARGETS = ("sm_80", "sm_90a")


def target_for_capability(major, minor):
    """The target to compile for a GPU of compute capability major.minor:
    sm_90a on Hopper (wgmma, TMA), sm_80 elsewhere (mma.sync: a cubin on
    Ampere and Ada, PTX that the driver compiles on newer GPUs), None below
    8.0, which Tile's kernels do not run on."""
    if (major, minor) == (9, 0):
        return "sm_90a"
    return "sm_80" if major >= 8 else None


def _option(default, help):
    return dataclasses.field(default=default, metadata={"help": help})


@dataclasses.dataclass(frozen=True)
class CompileOptions:
    """What the compiler does with a kernel beyond its source: validated on
    construction, immutable (``replace`` makes a changed copy)."""

    num_warps: int = _option(4, "warps per program instance (a power of two up to 32)")
    target: str = _option("sm_90a", "the GPU architecture: " + ", ".join(TARGETS))
    num_stages: int = _option(2, "buffers per block load copied ahead in loops (1: none)")
    tma: bool = _option(
        True, "on sm_90a, copy the blocks loops stage for wgmma with the TMA where the "
        "runtime can describe their tensor (else cp.async)")
    tma_stores: bool = _option(
        False, "on sm_90a, store the blocks a kernel writes after its loops with the "
        "TMA where the runtime can describe their tensor (measured no faster yet)")
    bulk_reductions: bool = _option(
        False, "on sm_90a, add f32 tiles whose pointers cover a contiguous block once each "
        "(tl.atomic_add, relaxed, unmasked) through shared memory and the bulk copy "
        "engine's reductions, a run a warpgroup or warp")
    warp_specialize: bool = _option(
        False, "on sm_90a, have a warpgroup of producer warps issue the TMA copies of a "
        "kernel's loops, through mbarrier rings, while the kernel's warps compute")
    overlap_products: bool = _option(
        False, "on sm_90a, issue a loop's next independent product before its carried "
        "one, so that the work between them (attention's softmax) overlaps it")
    ping_pong: bool = _option(
        False, "on sm_90a, have the program's warpgroups take turns at issuing each loop "
        "iteration's asynchronous products, so that one's softmax runs beside another's "
        "products")
    thread_index_per_op: bool = _option(
        False, "each op reads the thread index itself, so that no index arithmetic "
        "stays live across a loop")
    max_row_span: int = _option(
        0, "the most bytes of a block's row under one warp's lanes (0: no limit)")
    fp_fusion: bool = _option(
        True, "fuse floating-point multiplies and adds into fma, as nvcc and Triton do")
    distribute_disjoint_constants: bool = _option(
        True, "move constants out of disjoint ors, so that registers share their "
        "per-thread index")

    def __post_init__(self):
        for field in dataclasses.fields(self):
            _check(field.name, getattr(self, field.name))

    def replace(self, **changes):
        """A copy with `changes` (option name -> value); UsageError names an
        unknown option or a bad value."""
        unknown = sorted(set(changes) - set(names()))
        if unknown:
            raise UsageError(f"no compile option {', '.join(unknown)} (the options: "
                             f"{', '.join(names())})")
        return dataclasses.replace(self, **changes)

    def pipeline_string(self):
        """'distribute-disjoint-constants=true fp-fusion=true ...': every
        option in the pipeline's syntax, in the order C++ prints them."""
        spelled = {name.replace("_", "-"): getattr(self, name) for name in names()}
        return " ".join(f"{key}={_spell(value)}" for key, value in sorted(spelled.items()))

    @classmethod
    def from_pipeline_string(cls, text):
        """The options a pipeline string (a metadata file's "options") names,
        the rest at their defaults."""
        changes = {}
        for item in text.split():
            key, equals, value = item.partition("=")
            name = key.replace("-", "_")
            if not equals or name not in names():
                raise UsageError(f"'{item}' is no compile option (the options: "
                                 f"{', '.join(names())})")
            default = getattr(cls, name)
            changes[name] = (value == "true" if isinstance(default, bool)
                             else int(value) if isinstance(default, int) else value)
        return cls(**changes)


def names():
    """The option names, in declaration order."""
    return [field.name for field in dataclasses.fields(CompileOptions)]


def help_text(name):
    return next(f.metadata["help"] for f in dataclasses.fields(CompileOptions)
                if f.name == name)


def _spell(value):
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _check(name, value):
    """Raises UsageError unless `value` is valid for option `name`."""
    default = getattr(CompileOptions, name)
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise UsageError(f"{name} must be True or False, got {value!r}")
    elif isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int):
            raise UsageError(f"{name} must be an integer, got {value!r}")
        if name == "num_warps" and not (1 <= value <= 32 and value & (value - 1) == 0):
            raise UsageError(f"num_warps must be a power of two from 1 to 32, got {value}")
        if name == "num_stages" and value < 1:
            raise UsageError(f"num_stages must be at least 1, got {value}")
        if name == "max_row_span" and value < 0:
            raise UsageError(f"max_row_span must be a non-negative number of bytes "
                             f"(0: no limit), got {value}")
    elif name == "target" and value not in TARGETS:
        raise UsageError(f"target must be one of {', '.join(TARGETS)}, got {value!r}")
