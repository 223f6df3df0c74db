"""The builtins of tile.language: what is declared is what the compiler
implements, and help() shows the declaration."""

import inspect
import pydoc
import re

import pytest

import tile
import tile.language as tl
from conftest import strip_locs
from tile.compiler import compile_kernel
from tile.compiler.builtins import IMPLS
from tile.jit import JITFunction
from tile.language import core
from tile.language.extra import libdevice


def declared_builtins():
    """{spelling: function} of every public builtin of tl, tl.math and
    libdevice (tl.extra.libdevice)."""
    found = {}
    for prefix, module in (("tl", tl), ("tl.math", tl.math), ("libdevice", libdevice)):
        for name in module.__all__:
            value = getattr(module, name)
            if core.is_builtin(value):
                found[f"{prefix}.{name}"] = value
    return found


DECLARED = declared_builtins()


def descriptor_updates():
    """{name: builtin} of the methods only tensor descriptors have, as in
    Triton (desc.atomic_add, ...): builtins that are methods, not in tl."""
    return {name: value for name, value in vars(tl.tensor_descriptor).items()
            if core.is_builtin(value)}


DESCRIPTOR_UPDATES = descriptor_updates()
FUNCTIONS = set(DECLARED.values()) | set(DESCRIPTOR_UPDATES.values())


def tensor_methods():
    """{name: method} of every method tl.tensor declares."""
    return {name: value for name, value in vars(tl.tensor).items()
            if hasattr(value, "__tile_function__")}


METHODS = tensor_methods()


def parameters(signature):
    return [(p.name, p.kind, p.default) for p in signature.parameters.values()]


def test_the_lists_are_complete():
    for module in (tl, tl.math):
        assert len(set(module.__all__)) == len(module.__all__)
        public = {name for name, value in vars(module).items()
                  if not name.startswith("_") and not inspect.ismodule(value)}
        assert public == set(module.__all__) - {"math", "extra", "target_info"}
        for name in module.__all__:
            value = getattr(module, name)
            # A public function of the language is a builtin: it has a
            # declaration and an implementation.
            assert not inspect.isfunction(value) or core.is_builtin(value), name
    assert "tl.load" in DECLARED and "tl.math.exp" in DECLARED


def test_tl_math_functions_are_the_tl_functions():
    for name in tl.math.__all__:
        assert getattr(tl, name) is getattr(tl.math, name), name


def test_every_builtin_is_implemented():
    missing = sorted(name for name, fn in DECLARED.items() if fn not in IMPLS)
    assert not missing, f"declared, not implemented: {missing}"


def test_every_implementation_is_declared():
    stray = sorted(f"{impl.__module__}.{impl.__name__}" for fn, impl in IMPLS.items()
                   if fn not in FUNCTIONS)
    assert not stray, f"implemented, not declared in tl, tl.math or libdevice: {stray}"


@pytest.mark.parametrize("name", sorted(DECLARED))
def test_implementation_takes_the_declared_parameters(name):
    declared = inspect.signature(DECLARED[name])
    implemented = inspect.signature(IMPLS[DECLARED[name]])
    first, *rest = implemented.parameters.values()
    assert first.name == "cg" and first.kind == first.POSITIONAL_OR_KEYWORD
    assert [(p.name, p.kind, p.default) for p in rest] == parameters(declared)


@pytest.mark.parametrize("name", sorted(DECLARED))
def test_builtin_is_documented_and_refuses_plain_python(name):
    fn = DECLARED[name]
    assert fn.__doc__ and fn.__doc__.strip(), f"{name} has no docstring"
    with pytest.raises(RuntimeError,
                       match=rf"tl\.{fn.__name__} can only be called inside a @tile\.jit"):
        fn()


# Triton 3.9's tensor methods but atomic_poll, and exp2 beside them.
TENSOR_METHODS = frozenset("""
abs advance argmax argmin associative_scan atomic_add atomic_and atomic_cas atomic_load
atomic_max atomic_min atomic_or atomic_store atomic_xchg atomic_xor broadcast_to cast cdiv
ceil cos cumprod cumsum erf exp exp2 expand_dims flip floor gather histogram item log log2
logical_and logical_or max min permute ravel reduce reduce_or reshape rsqrt sigmoid sin
softmax sort split sqrt sqrt_rn store sum to trans view xor_sum
""".split())


def test_tensor_methods_are_declared_builtins_or_jit_functions():
    assert TENSOR_METHODS == set(METHODS)
    for name, method in METHODS.items():
        fn = method.__tile_function__
        assert core.tensor_method(name) is fn
        if isinstance(fn, JITFunction):
            # tl.sort, tl.softmax, ...: a composition, or a method only.
            assert getattr(tl, name, fn) is fn, name
            declared = fn.fn
        else:
            assert fn in FUNCTIONS and fn in IMPLS, name
            declared = fn
        # x.name(...) is fn(x, ...): the same parameters, the first one self.
        params = parameters(inspect.signature(declared))
        assert parameters(inspect.signature(method)) == [("self", *params[0][1:])] + params[1:]
        assert method.__doc__ and method.__doc__.strip(), name
    assert tl.tensor.to.__tile_function__ is tl.cast
    for name in ("dtype", "shape", "T"):
        assert isinstance(vars(tl.tensor)[name], property) and vars(tl.tensor)[name].__doc__
    assert core.tensor_method("dtype") is None and core.tensor_method("tanh") is None


def test_help_shows_the_declaration():
    assert str(inspect.signature(tl.load)) == (
        "(pointer, mask=None, other=None, boundary_check=(), padding_option='', "
        "cache_modifier='', eviction_policy='', volatile=False) -> tile.language.tensor")
    assert str(inspect.signature(tl.static_print)) == (
        "(*values, sep: str = ' ', end: str = '\\n', file=None, flush=False) -> None")
    text = pydoc.render_doc(tl.load, renderer=pydoc.plaintext)
    assert "load(pointer, mask=None, other=None, boundary_check=()" in text
    assert "Loads from global memory." in text
    assert "cache_modifier``, ``eviction_policy`` and ``volatile`` are accepted" in text
    text = pydoc.render_doc(tl.tensor, renderer=pydoc.plaintext)
    assert "to(self, dtype: tile.language.dtype, fp_downcast_rounding" in text
    assert "The same as ``tl.cast(self, ...)``" in text


@tile.jit
def _combine(a, b):
    return a + b


@tile.jit
def _as_methods(X, Y):
    x = tl.load(X + tl.arange(0, 8)[:, None] * 4 + tl.arange(0, 4)[None, :])
    y = x.exp() + x.exp2() + x.log() + x.log2() + x.sqrt() + x.abs()
    y = y + x.ceil() + x.cos() + x.erf() + x.floor() + x.rsqrt() + x.sigmoid() + x.sin()
    y = y + x.sqrt_rn() + x.softmax(1) + x.cumsum(1) + x.cumprod(0) + x.flip(0) + x.sort()
    y = y + x.associative_scan(1, _combine) + x.gather(tl.zeros([8, 4], tl.int32), 1)
    y = y.to(tl.float16).cast(tl.float32).trans().permute(1, 0)
    z = y.sum(1) + y.max(1) + y.min(axis=1, keep_dims=False) + y.reduce(1, _combine)
    z = z + y.argmax(1) + y.argmin(1) + y.sum(1).sum(0).expand_dims(0).item()
    a, b = z.reshape(4, 2).view(2, 4).reshape(8).expand_dims(1).broadcast_to(8, 2).split()
    bits = (a + b).to(tl.int32)
    flags = bits.logical_and(bits.cdiv(3)).logical_or(bits.histogram(8) > 0)
    bits = bits + flags + bits.xor_sum(0) + bits.reduce_or(0)
    tl.store(Y + tl.arange(0, 8), bits.to(tl.float32))
    tl.store(Y + tl.arange(0, 16), (a + b).expand_dims(0).broadcast_to(2, 8).ravel())


@tile.jit
def _as_functions(X, Y):
    x = tl.load(X + tl.arange(0, 8)[:, None] * 4 + tl.arange(0, 4)[None, :])
    y = tl.exp(x) + tl.exp2(x) + tl.log(x) + tl.log2(x) + tl.sqrt(x) + tl.abs(x)
    y = y + tl.ceil(x) + tl.cos(x) + tl.erf(x) + tl.floor(x) + tl.rsqrt(x) + tl.sigmoid(x)
    y = y + tl.sin(x)
    y = y + tl.sqrt_rn(x) + tl.softmax(x, 1) + tl.cumsum(x, 1) + tl.cumprod(x, 0)
    y = y + tl.flip(x, 0) + tl.sort(x)
    y = y + tl.associative_scan(x, 1, _combine) + tl.gather(x, tl.zeros([8, 4], tl.int32), 1)
    y = tl.permute(tl.trans(tl.cast(tl.cast(y, tl.float16), tl.float32)), 1, 0)
    z = tl.sum(y, 1) + tl.max(y, 1) + tl.min(y, axis=1, keep_dims=False)
    z = z + tl.reduce(y, 1, _combine)
    z = z + tl.argmax(y, 1) + tl.argmin(y, 1)
    z = z + tl.max(tl.reshape(tl.expand_dims(tl.sum(tl.sum(y, 1), 0), 0), (1,)), 0)
    z = tl.reshape(tl.view(tl.reshape(z, 4, 2), 2, 4), 8)
    a, b = tl.split(tl.broadcast_to(tl.expand_dims(z, 1), 8, 2))
    bits = (a + b).to(tl.int32)
    quotient = tl.cdiv(bits, 3)
    both = (bits != 0) & (quotient != 0)
    counted = tl.histogram(bits, 8) > 0
    flags = (both != 0) | (counted != 0)
    bits = bits + flags + tl.xor_sum(bits, 0) + tl.reduce_or(bits, 0)
    tl.store(Y + tl.arange(0, 8), bits.to(tl.float32))
    tl.store(Y + tl.arange(0, 16), tl.ravel(tl.broadcast_to(tl.expand_dims(a + b, 0), 2, 8)))


@tile.jit
def _pointer_methods(F, I):
    offs = tl.arange(0, 8)
    f, i = F + offs, I + offs
    v = f.atomic_add(1.0) + f.atomic_max(2.0) + f.atomic_min(0.5) + f.atomic_xchg(3.0)
    v = v + f.atomic_cas(3.0, 4.0) + f.atomic_load()
    w = i.atomic_and(7) + i.atomic_or(8) + i.atomic_xor(3)
    f.atomic_store(v)
    i.store(w)
    block = tl.make_block_ptr(F, (8,), (1,), (0,), (4,), (0,)).advance((4,))
    tl.store(block, tl.load(block))


@tile.jit
def _pointer_functions(F, I):
    offs = tl.arange(0, 8)
    f, i = F + offs, I + offs
    v = tl.atomic_add(f, 1.0) + tl.atomic_max(f, 2.0) + tl.atomic_min(f, 0.5)
    v = v + tl.atomic_xchg(f, 3.0)
    v = v + tl.atomic_cas(f, 3.0, 4.0) + tl.atomic_load(f)
    w = tl.atomic_and(i, 7) + tl.atomic_or(i, 8) + tl.atomic_xor(i, 3)
    tl.atomic_store(f, v)
    tl.store(i, w)
    block = tl.advance(tl.make_block_ptr(F, (8,), (1,), (0,), (4,), (0,)), (4,))
    tl.store(block, tl.load(block))


def test_methods_compile_as_their_functions():
    source = inspect.getsource(_as_methods.fn) + inspect.getsource(_pointer_methods.fn)
    assert {m for m in METHODS if f".{m}(" not in source} - {"to", "cast"} == set()

    def body(fn, signature):
        text = strip_locs(compile_kernel(fn, signature, {}))
        return text[text.index("{", text.index("func.func")):].replace(fn.__name__, "K")
    assert body(_as_methods, "*fp32,*fp32") == body(_as_functions, "*fp32,*fp32")
    assert body(_pointer_methods, "*fp32,*i32") == body(_pointer_functions, "*fp32,*i32")


@tile.jit
def _compile_time(Y):
    total = 0
    for i in tl.static_range(1, 8, step=3):
        total += i
    tl.static_print("total", total, tl.arange(0, 4), sep="|")
    tl.store(Y, total)


def test_compile_time_builtins_take_their_keywords(capfd):
    text = compile_kernel(_compile_time, "*i32", {})
    assert re.search(r"arith.constant 12 : i32", text), text   # 1 + 4 + 7
    assert capfd.readouterr().err == "total|12|int32[4]\n"


def test_descriptor_updates_are_methods_with_implementations():
    assert set(DESCRIPTOR_UPDATES) == {f"atomic_{kind}" for kind in
                                       ("add", "min", "max", "and", "or", "xor")}
    for name, fn in DESCRIPTOR_UPDATES.items():
        assert core.descriptor_method(name) is fn and not hasattr(tl, f"descriptor_{name}")
        assert parameters(inspect.signature(fn)) == [
            (p, inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.empty)
            for p in ("self", "offsets", "value")]
        assert [p.name for p in inspect.signature(IMPLS[fn]).parameters.values()] == [
            "cg", "desc", "offsets", "value"]
        assert fn.__doc__ and fn.__doc__.strip(), name

