"""The frontend: specialises a ``@tile.jit`` kernel and emits ``tile`` MLIR."""

import os
import re

from ..jit import JITFunction
from ..language import core
from ..tensor_descriptor import hidden_names
from . import semantic
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


# Triton's spelling of a descriptor parameter's type: tensordesc<fp16[64, 64]>.
_DESCRIPTOR = re.compile(r"tensordesc\s*<\s*([\w]+)\s*\[([^\]]*)\]\s*>")


def parse_descriptor_type(text):
    """``tensordesc<fp16[64, 64]>`` as a tensor_descriptor_type, checked
    as tl.make_tensor_descriptor checks its arguments."""
    match = _DESCRIPTOR.fullmatch(text)
    if match is None:
        raise UsageError(f"'{text}' in the signature: a tensor descriptor is spelled "
                         f"tensordesc<ELEMENT[BLOCK, ...]>, e.g. tensordesc<fp16[64, 64]>")
    name, dims = match.group(1), match.group(2).split(",")
    if name not in core.DTYPE_ALIASES:
        raise UsageError(f"'{text}' in the signature: unknown element type '{name}'")
    elem = core.DTYPE_ALIASES[name]
    if not all(d.strip().isdigit() for d in dims):
        raise UsageError(f"'{text}' in the signature: the block shape is integers")
    block_shape = tuple(int(d) for d in dims)
    if not 1 <= len(block_shape) <= semantic.MAX_DESCRIPTOR_RANK:
        raise UsageError(f"'{text}' in the signature: a tensor descriptor has 1 to "
                         f"{semantic.MAX_DESCRIPTOR_RANK} dimensions")
    if not all(semantic.is_power_of_two(d) for d in block_shape):
        raise UsageError(f"'{text}' in the signature: every block dimension must be a "
                         f"power of two")
    if elem.is_bool():
        raise UsageError(f"'{text}' in the signature: int1 elements are not supported "
                         f"(store booleans as int8)")
    inner_bytes = block_shape[-1] * elem.primitive_bitwidth // 8
    if inner_bytes < 16:
        raise UsageError(f"'{text}' in the signature: the block's last dimension must span "
                         f"at least 16 bytes, got {block_shape[-1]} {elem} elements "
                         f"({inner_bytes} bytes)")
    return core.tensor_descriptor_type(core.block_type(elem, block_shape))


def descriptor_spelling(element, block_shape):
    """Triton's spelling of a descriptor type of `element` (a signature
    name, ``fp16``) and `block_shape`: tensordesc<fp16[64, 64]>."""
    return f"tensordesc<{element}{list(block_shape)}>"


def descriptor_signature(ty):
    """A tensor_descriptor_type in Triton's spelling (descriptor_spelling)."""
    return descriptor_spelling(ty.element_ty.signature_name, ty.block_shape)


def parse_type(text):
    """A signature entry (``*fp16``, ``i32``, ``fp32``, ``tensordesc<fp16[64,
    64]>``) as a tile type."""
    text = split_divisibility(text)[0]
    if text.startswith("tensordesc"):
        return parse_descriptor_type(text)
    pointer = text.startswith("*")
    name = text[1:].strip() if pointer else text
    if name not in core.DTYPE_ALIASES:
        raise UsageError(f"unknown type '{text}' in the signature (expected e.g. "
                         f"*fp16, *bf16, *fp32, *i32, i32, i64, fp32, "
                         f"tensordesc<fp16[64, 64]>)")
    ty = core.DTYPE_ALIASES[name]
    return core.pointer_type(ty) if pointer else ty


def signature_entries(signature):
    """The entries of a signature: a list as it is, a string split at the
    commas outside brackets (``tensordesc<fp16[64, 64]>`` is one entry)."""
    if not isinstance(signature, str):
        return list(signature)
    entries, depth, start = [], 0, 0
    for i, c in enumerate(signature + ","):
        if c in "<[":
            depth += 1
        elif c in ">]":
            depth -= 1
        elif c == "," and depth <= 0:
            entries.append(signature[start:i])
            start = i + 1
    return [s for s in entries if s.strip()]


def parse_signature(signature):
    return [parse_type(s) if isinstance(s, str) else s
            for s in signature_entries(signature)]


def parse_divisibilities(signature):
    """The divisibility promised for each entry (None where none is)."""
    divisibilities = []
    for entry in signature_entries(signature):
        divisor = split_divisibility(entry)[1] if isinstance(entry, str) else None
        if divisor is not None:
            ty = parse_type(entry)
            if isinstance(ty, core.tensor_descriptor_type):
                raise UsageError(
                    f"'{entry}' in the signature: a tensor descriptor takes no "
                    f"divisibility (its base is 16-byte aligned and its strides "
                    f"multiples of 16 bytes, always)")
            if ty.is_floating():
                raise UsageError(f"'{entry}' in the signature: only pointers and "
                                 f"integers take a divisibility")
        divisibilities.append(divisor)
    return divisibilities


def descriptor_entries(fn, arg_types, constants=()):
    """What the metadata's ``tensor_descriptors`` records of each
    descriptor parameter of ``fn`` (``arg_types``: its run-time
    parameters', but those specialised as ``constants``), in order;
    UsageError where a hidden parameter's name is taken by another
    parameter."""
    runtime = [p for p in fn.params if not p.is_constexpr and p.name not in constants]
    taken = {p.name for p in fn.params}
    entries = []
    for param, ty in zip(runtime, arg_types):
        if not isinstance(ty, core.tensor_descriptor_type):
            continue
        base, shape, strides = hidden_names(param.name, len(ty.block_shape))
        for hidden in (base, *shape, *strides):
            if hidden in taken:
                raise UsageError(
                    f"kernel '{fn.__name__}': '{hidden}' names a parameter and a hidden "
                    f"parameter of the tensor descriptor '{param.name}' (docs/language.md, "
                    f"Tensor descriptors): rename one")
            taken.add(hidden)
        entries.append({"name": param.name, "type": descriptor_signature(ty),
                        "element_type": ty.element_ty.signature_name,
                        "block_shape": list(ty.block_shape),
                        "base": base, "shape": shape, "strides": strides})
    return entries


def compile_kernel(fn, signature, constexprs=None, options=None, entry=None,
                   metadata=None, constants=None):
    """Specialises kernel ``fn`` and returns the text of a ``tile`` module that
    holds it, with everything tile-compile needs to write the kernel's
    metadata: the constexpr values (``tile.constexprs``), ``options`` (a
    CompileOptions, recorded as ``tile.options``), and ``tile.metadata``:
    the kernel's family (the Python function's name), its source file, and
    ``metadata``'s entries (facts for the runtimes, such as ``max_n_ctx``),
    and ``tensor_descriptors`` when the signature has descriptors.

    ``signature`` lists the types of the run-time parameters in order;
    ``constexprs`` maps constexpr parameter names to values (parameters with
    defaults may be omitted).  ``constants`` maps run-time parameters to the
    value they are specialised on (Triton's integers equal to 1, and None):
    such a parameter takes no signature entry, is no parameter of the
    compiled kernel, and the metadata records it under ``constants``.
    Raises UsageError or CompilationError.
    """
    if not isinstance(fn, JITFunction):
        raise UsageError(f"{getattr(fn, '__name__', fn)!r} is not a @tile.jit function")
    try:
        fn.parse()   # an 'async def' or *args is refused before its parameters are bound
    except CompilationError as e:
        e.filename = display_path(e.filename)
        raise
    constexprs = dict(constexprs or {})
    constants = dict(constants or {})
    arg_types = parse_signature(signature)
    divisibilities = parse_divisibilities(signature)
    runtime_names = [p.name for p in fn.params if not p.is_constexpr]
    for key, value in constants.items():
        if key not in runtime_names:
            raise UsageError(f"kernel '{fn.__name__}' has no run-time parameter '{key}' "
                             f"to specialise as a constant")
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise UsageError(f"run-time parameter '{key}' of kernel '{fn.__name__}' is "
                             f"specialised on an integer or None, not {value!r}")
    runtime = [name for name in runtime_names if name not in constants]
    if len(arg_types) != len(runtime):
        listed = ", ".join(runtime)
        raise UsageError(
            f"kernel '{fn.__name__}' has {len(runtime)} run-time parameters ({listed}) "
            f"but the signature gives {len(arg_types)} types")
    descriptors = descriptor_entries(fn, arg_types, constants)
    for key in ("tensor_descriptors", "constants"):
        if metadata and key in metadata:
            raise UsageError(f"the metadata key '{key}' is the frontend's: it lists the "
                             f"signature's {key.replace('_', ' ')}")
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
    body = CodeGenerator(display_path, options.target).generate_kernel(
        fn, arg_types, values, entry, divisibilities, constants)
    recorded = {"kernel": fn.__name__, "source": source, **(metadata or {})}
    if descriptors:
        recorded["tensor_descriptors"] = descriptors
    if constants:
        recorded["constants"] = constants
    recorded = format_attribute(recorded)
    return (f"// Generated by tile.compile from {source}:{fn.__name__}; do not edit.\n"
            f"module attributes {{tile.metadata = {recorded}, "
            f"tile.options = {quote(options.pipeline_string())}}} {{\n{body}\n}}\n")
