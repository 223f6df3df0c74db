"""The frontend: specialises a ``@tile.jit`` kernel and emits ``tile`` MLIR."""

import os

from ..jit import JITFunction
from ..language import core
from .builder import format_attribute, quote
from .codegen import CodeGenerator
from .errors import CompilationError, TileTypeError, UsageError  # noqa: F401
from .options import CompileOptions

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


def compile_kernel(fn, signature, constexprs=None, options=None, entry=None,
                   metadata=None):
    """Specialises kernel ``fn`` and returns the text of a ``tile`` module that
    holds it, with everything tile-compile needs to write the kernel's
    metadata: the constexpr values (``tile.constexprs``), ``options`` (a
    CompileOptions, recorded as ``tile.options``), and ``tile.metadata``:
    the kernel's family (the Python function's name), its source file, and
    ``metadata``'s entries (facts for the runtimes, such as ``max_n_ctx``).

    ``signature`` lists the types of the run-time parameters in order;
    ``constexprs`` maps constexpr parameter names to values (parameters with
    defaults may be omitted).  Raises UsageError or CompilationError.
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
    if options is None:
        options = CompileOptions()
    elif not isinstance(options, CompileOptions):
        raise UsageError(f"options must be a CompileOptions, not {type(options).__name__}")
    source = display_path(fn.filename)
    entry = entry or fn.__name__
    if not entry.replace("_", "a").isalnum() or not entry.isascii():
        raise UsageError(f"entry '{entry}' is not a valid symbol name")
    body = CodeGenerator(display_path).generate_kernel(fn, arg_types, values, entry,
                                                       divisibilities)
    recorded = format_attribute({"kernel": fn.__name__, "source": source,
                                 **(metadata or {})})
    return (f"// Generated by tile.compile from {source}:{fn.__name__}; do not edit.\n"
            f"module attributes {{tile.metadata = {recorded}, "
            f"tile.options = {quote(options.pipeline_string())}}} {{\n{body}\n}}\n")
