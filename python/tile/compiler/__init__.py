"""The frontend: specialises a ``@tile.jit`` kernel and emits ``tile`` MLIR."""

import os

from ..jit import JITFunction
from ..language import core
from .codegen import CodeGenerator
from .errors import CompilationError, TileTypeError, UsageError  # noqa: F401

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


def display_path(path):
    """How a source file is named in diagnostics and locations: relative to
    the repository when inside it (stable build outputs), else to the
    working directory, else absolute."""
    path = os.path.abspath(path)
    for root in (REPO_ROOT, os.getcwd()):
        if path.startswith(root + os.sep):
            return os.path.relpath(path, root)
    return path


def split_divisibility(text):
    """``*fp16:16`` -> (``*fp16``, 16): the entry and the power of two the
    argument is promised to be divisible by (bytes for pointers), or None."""
    text = text.strip()
    if ":" not in text:
        return text, None
    entry, _, divisor = text.partition(":")
    if not divisor.strip().isdigit() or int(divisor) <= 0 or \
            int(divisor) & (int(divisor) - 1):
        raise UsageError(f"'{text}' in the signature: the part after ':' is the "
                         f"divisibility, a power of two (e.g. *fp16:16, i32:16)")
    return entry.strip(), int(divisor)


def parse_type(text):
    """A signature entry (``*fp16``, ``i32``, ``fp32``) as a tile type."""
    text = split_divisibility(text)[0]
    pointer = text.startswith("*")
    name = text[1:].strip() if pointer else text
    if name not in core.DTYPE_ALIASES:
        raise UsageError(f"unknown type '{text}' in the signature (expected e.g. "
                         f"*fp16, *bf16, *fp32, *i32, i32, i64, fp32)")
    ty = core.DTYPE_ALIASES[name]
    return core.pointer_type(ty) if pointer else ty


def signature_entries(signature):
    if isinstance(signature, str):
        return [s for s in signature.split(",") if s.strip()]
    return list(signature)


def parse_signature(signature):
    return [parse_type(s) if isinstance(s, str) else s
            for s in signature_entries(signature)]


def parse_divisibilities(signature):
    """The divisibility promised for each entry (None where none is)."""
    divisibilities = []
    for entry in signature_entries(signature):
        divisor = split_divisibility(entry)[1] if isinstance(entry, str) else None
        if divisor is not None and parse_type(entry).is_floating():
            raise UsageError(f"'{entry}' in the signature: only pointers and "
                             f"integers take a divisibility")
        divisibilities.append(divisor)
    return divisibilities


def json_constexpr(value):
    if isinstance(value, core.dtype):
        return value.name
    if isinstance(value, (tuple, list)):
        return [json_constexpr(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def compile_kernel(fn, signature, constexprs=None, num_warps=4, name=None, entry=None,
                   num_stages=2, thread_index_per_op=False, max_row_span=0):
    """Compiles kernel ``fn``; returns (module text, metadata dict).

    ``signature`` lists the types of the run-time parameters in order;
    ``constexprs`` maps constexpr parameter names to values (parameters with
    defaults may be omitted).  ``num_warps`` and ``num_stages`` (buffers per
    block load that the GPU lowering copies ahead in loops; 1: none) and
    ``thread_index_per_op`` (each lowered op reads the thread index itself,
    so that no index arithmetic stays live across a loop) and
    ``max_row_span`` (the bytes of a block's row one warp's lanes cover in
    a vectorised block access; 0: the whole row) are recorded in the
    metadata for the GPU lowering.  Raises UsageError or
    CompilationError.
    """
    if not isinstance(fn, JITFunction):
        raise UsageError(f"{getattr(fn, '__name__', fn)!r} is not a @tile.jit function")
    constexprs = dict(constexprs or {})
    arg_types = parse_signature(signature)
    divisibilities = parse_divisibilities(signature)
    runtime = [p for p in fn.params if not p.is_constexpr]
    if len(arg_types) != len(runtime):
        listed = ", ".join(p.name for p in runtime)
        raise UsageError(
            f"kernel '{fn.__name__}' has {len(runtime)} run-time parameters ({listed}) "
            f"but the signature gives {len(arg_types)} types")
    names = {p.name for p in fn.params if p.is_constexpr}
    for key in constexprs:
        if key not in names:
            raise UsageError(f"kernel '{fn.__name__}' has no constexpr parameter '{key}'"
                             + (f" (constexpr parameters: {', '.join(sorted(names))})"
                                if names else ""))
    values = {}
    for p in fn.params:
        if not p.is_constexpr:
            continue
        if p.name in constexprs:
            values[p.name] = constexprs[p.name]
        elif p.has_default:
            values[p.name] = p.default.value if isinstance(p.default, core.constexpr) \
                else p.default
        else:
            raise UsageError(f"constexpr parameter '{p.name}' of kernel '{fn.__name__}' "
                             f"needs a value (--constexpr {p.name}=...)")
    if not isinstance(num_warps, int) or num_warps <= 0 or num_warps & (num_warps - 1):
        raise UsageError(f"num_warps must be a power of two, got {num_warps}")
    if isinstance(num_stages, bool) or not isinstance(num_stages, int) or num_stages < 1:
        raise UsageError(f"num_stages must be a positive integer, got {num_stages!r}")
    if not isinstance(thread_index_per_op, bool):
        raise UsageError(f"thread_index_per_op must be True or False, "
                         f"got {thread_index_per_op!r}")
    if isinstance(max_row_span, bool) or not isinstance(max_row_span, int) or max_row_span < 0:
        raise UsageError(f"max_row_span must be a non-negative integer (bytes; 0: no "
                         f"limit), got {max_row_span!r}")
    source = display_path(fn.filename)
    name = name or fn.__name__
    entry = entry or fn.__name__
    if not entry.replace("_", "a").isalnum() or not entry.isascii():
        raise UsageError(f"entry '{entry}' is not a valid symbol name")
    body = CodeGenerator(display_path).generate_kernel(fn, arg_types, values, entry,
                                                       divisibilities)
    described = ", ".join(f"{k}={v!r}" for k, v in values.items()) or "none"
    text = (f"// Generated by tile.compile from {source}:{fn.__name__}; do not edit.\n"
            f"// variant {name}: constexprs {described}; num_warps {num_warps}; "
            f"num_stages {num_stages}; "
            f"thread_index_per_op {thread_index_per_op}; max_row_span {max_row_span}\n"
            f"module {{\n{body}\n}}\n")
    metadata = {
        "name": name,
        "kernel": fn.__name__,
        "entry": entry,
        "source": source,
        "params": [dict({"name": p.name, "type": t.signature_name},
                        **({"divisibility": d} if d else {}))
                   for p, t, d in zip(runtime, arg_types, divisibilities)],
        "constexprs": {k: json_constexpr(v) for k, v in values.items()},
        "num_warps": num_warps,
        "num_stages": num_stages,
        "thread_index_per_op": thread_index_per_op,
        "max_row_span": max_row_span,
        "target": "tile",
    }
    return text, metadata
