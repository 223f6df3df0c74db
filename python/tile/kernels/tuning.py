"""Block-size candidates of the attention variants, and how a sweep's
choices go back into the build.

``python3 -m tile.tools.autotune`` compiles, for each attention variant it tunes, the
candidates below as ``<variant>__<tag>`` beside the shipped kernels (their
metadata says ``"tuning": {"variant": ...}``, so that the runtimes never
pick one by themselves), checks and times them on the GPU, and writes its
choices to a file that ``python3 -m tile.compile --manifest --tuning FILE``
(or CMake's ``-DTILE_KERNEL_TUNING=FILE``) applies.

A choice is made for a *problem*: kernel family, head dim and causality
(``attn_fwd_d128_causal``, say).  It is measured on one element type and
applied to every element type of that problem, whose kernels differ only in
the type of their loads and stores.
"""

import json

from .manifest import DEFAULT_TARGET, VARIANTS

# Tags spell a candidate's overrides in this order, with these letters.
_TAG_LETTERS = (("BLOCK_M", "m"), ("BLOCK_N", "n"), ("BLOCK_M1", "m"),
                ("BLOCK_N1", "n"), ("num_warps", "w"), ("num_stages", "s"))


def _fwd(block_m, block_n, warps):
    return {"BLOCK_M": block_m, "BLOCK_N": block_n, "num_warps": warps}


def _bwd(block_m1, block_n1, warps, stages=None):
    overrides = {"BLOCK_M1": block_m1, "BLOCK_N1": block_n1, "num_warps": warps}
    if stages is not None:
        overrides["num_stages"] = stages
    return overrides


# Each warp of the forward should own whole 16-row mma slabs: BLOCK_M is at
# least 16 a warp; BLOCK_N divides BLOCK_M.  In the backward BLOCK_M1
# divides BLOCK_N1.  The shipped choice needs no entry: it is always
# measured.  These are the tiles measured by hand before (docs/performance.md).
_CANDIDATES = {
    ("attn_fwd", 64): [_fwd(128, 32, 4), _fwd(256, 64, 8), _fwd(128, 64, 8),
                       _fwd(64, 64, 4)],
    ("attn_fwd", 128): [_fwd(128, 64, 4), _fwd(128, 32, 4), _fwd(256, 64, 8),
                        _fwd(128, 64, 8), _fwd(64, 64, 4)],
    ("attn_bwd", 64): [_bwd(32, 128, 4), _bwd(128, 128, 8), _bwd(64, 128, 8),
                       _bwd(64, 64, 4), _bwd(32, 64, 4), _bwd(16, 128, 4)],
    ("attn_bwd", 128): [_bwd(64, 128, 8, 3), _bwd(64, 128, 8, 2), _bwd(32, 128, 8),
                        _bwd(16, 128, 8), _bwd(64, 64, 8), _bwd(32, 64, 8)],
}

TUNED_FAMILIES = ("attn_fwd", "attn_bwd")


def problem(variant):
    """'attn_fwd_d128_causal': what a tuning choice is made for; a variant
    bounded by max_n_ctx is a problem of its own ('..._causal_n2048'),
    timed at the lengths it is picked for."""
    constexprs = variant.constexprs
    mask = ("local" if constexprs.get("WINDOW") else
            "causal" if constexprs["CAUSAL"] else "noncausal")
    cap = "_softcap" if constexprs.get("SOFTCAP") else ""
    cap += "_alibi" if constexprs.get("ALIBI") else ""
    cap += "_dropout" if constexprs.get("DROPOUT") else ""
    cap += "" if constexprs.get("DQ", True) else "_deterministic"
    bound = f"_n{variant.max_n_ctx}" if variant.max_n_ctx else ""
    return f"{variant.kernel}_d{constexprs['HEAD_DIM']}_{mask}{cap}{bound}"


def tag(overrides):
    """'m128n64w4' for {'BLOCK_M': 128, 'BLOCK_N': 64, 'num_warps': 4}."""
    return "".join(f"{letter}{overrides[name]}" for name, letter in _TAG_LETTERS
                   if name in overrides)


def shipped_overrides(variant, names):
    """The variant's own values of the override names `names`."""
    return {name: getattr(variant.options, name) if name in ("num_warps", "num_stages")
            else variant.constexprs[name] for name in names}


def candidates(variant):
    """[(tag, overrides)] of a tunable variant, the shipped tile excluded."""
    if variant.kernel not in TUNED_FAMILIES:
        return []
    out = []
    for overrides in _CANDIDATES.get((variant.kernel, variant.constexprs["HEAD_DIM"]), []):
        if overrides != shipped_overrides(variant, overrides):
            out.append((tag(overrides), overrides))
    return out


def tunable_variants(dtype="fp16"):
    """The shipped variants a sweep tunes: one element type of each problem."""
    return [v for v in VARIANTS if v.kernel in TUNED_FAMILIES
            and v.signature.startswith(f"*{dtype}") and v.options.target == DEFAULT_TARGET]


class TuningError(Exception):
    """A tuning file that cannot be applied."""


def load_choices(path):
    """{problem: overrides} from an autotune.json ("choices")."""
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, ValueError) as error:
        raise TuningError(f"cannot read the tuning file {path}: {error}") from None
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, dict):
        raise TuningError(f"{path}: a tuning file holds an object 'choices' "
                          "(python3 -m tile.tools.autotune writes one)")
    known = {problem(v) for v in VARIANTS if v.kernel in TUNED_FAMILIES}
    out = {}
    for key, choice in choices.items():
        if key not in known:
            raise TuningError(f"{path}: '{key}' is no problem of the manifest "
                              f"(it has {', '.join(sorted(known))})")
        overrides = choice.get("overrides") if isinstance(choice, dict) else None
        if not isinstance(overrides, dict):
            raise TuningError(f"{path}: choice '{key}' lacks its object 'overrides'")
        out[key] = overrides
    return out


def overrides_for(variant, choices):
    """What `choices` (load_choices) changes in `variant`: {} if nothing.
    The choices were timed on the default target's kernels, and apply to
    those alone."""
    if variant.kernel not in TUNED_FAMILIES or variant.options.target != DEFAULT_TARGET:
        return {}
    return choices.get(problem(variant), {})
