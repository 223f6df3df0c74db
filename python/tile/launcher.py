"""Launching ``@tile.jit`` kernels from PyTorch, as Triton's are:

    add_kernel[(tile.cdiv(n, 256),)](x, y, out, n, BLOCK=256, num_warps=4)
    add_kernel[lambda meta: (tile.cdiv(n, meta["BLOCK"]),)](x, y, out, n, BLOCK=256)

The call binds its arguments by the kernel's Python signature and
specialises the kernel on them (``specialise``): a tensor is a pointer to
its element type, an int an ``i32`` (``i64`` when it does not fit), a float
an ``fp32``, a bool an ``i1``; pointers whose address and integers whose
value are multiples of 16 are promised to be (the signature's ``:16``, as
Triton's ``tt.divisibility``), and integers equal to 1 and None become
constants, but for the parameters the kernel's ``do_not_specialize``
names.  Each specialisation is compiled once per process through the
compiler driver (tile/compiler/driver.py, which also caches it on disk),
then:

- CUDA tensors: launched on the GPU on the current PyTorch stream through
  the one runtime (tile/runtime.py), over the grid given;
- CPU tensors (and CUDA tensors with ``TILE_INTERPRET=1``): run by the
  interpreter (``tile-run run --backend interp``), the tensors written to
  .npy files and what the kernel stored read back into them in place, as
  ``TRITON_INTERPRET=1`` does.

A GPU launch after the first of a specialisation skips the specialising: the call
is bound by a function generated from the kernel's parameters, keyed by
what specialisation decides from its arguments (dtypes, devices, 16-byte
alignment, ints equal to 1 or multiples of 16, constexprs, options), and
launched by the function made for that key (``run``, _FastLaunch).

The frontend stays standard-library only: this module imports PyTorch when
a kernel is launched, never before.
"""

import ctypes
import functools
import hashlib
import json
import operator
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import typing

from .compiler import REPO_ROOT, compile_kernel, descriptor_spelling, driver
from .compiler import options as compile_options
from .compiler.errors import UsageError
from .compiler.options import CompileOptions
from .tensor_descriptor import ELEMENT_TYPES, TensorDescriptor, descriptor_params

# The power of two that addresses and integers are specialised on when they
# are multiples of it (Triton's divisibility 16).
DIVISIBILITY = 16
# Set to 1: run CUDA tensors on the interpreter too (copied to the CPU and
# back), as Triton's TRITON_INTERPRET=1.
INTERPRET_VARIABLE = "TILE_INTERPRET"
# Names the tile-run that runs the interpreter.
RUN_VARIABLE = "TILE_RUN"

# A tensor's pointer type, by its dtype's name (str(dtype) without "torch.").
POINTER_TYPES = {**ELEMENT_TYPES, "bool": "i1", "uint8": "u8", "uint16": "u16",
                 "uint32": "u32", "uint64": "u64"}
# How the interpreter's .npy files hold each element type: NumPy's type
# string; bf16 and fp8 travel as raw bits (tile-run reads them so, and
# writes them back as float32).
_NPY_TYPES = {"i1": "|b1", "i8": "|i1", "i16": "<i2", "i32": "<i4", "i64": "<i8",
              "fp16": "<f2", "fp32": "<f4", "fp64": "<f8", "bf16": "<u2", "fp8e5": "|u1",
              "fp8e4nv": "|u1",
              # Unsigned integers as the signed ones of their width: the bits.
              "u8": "|i1", "u16": "<i2", "u32": "<i4", "u64": "<i8"}

_INT32 = (-2**31, 2**31 - 1)
_INT64 = (-2**63, 2**63 - 1)
# The grid's limits, as the runtime's (x, y, z).
_GRID_LIMITS = (2**31 - 1, 65535, 65535)


def cdiv(a, b):
    """``a`` divided by ``b``, rounded up (for grids: blocks of ``b`` that
    cover ``a``)."""
    return (a + b - 1) // b


def next_power_of_2(n):
    """The smallest power of two not below ``n`` (1 for ``n`` <= 1)."""
    n = operator.index(n)
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def _torch():
    try:
        import torch
    except ImportError:
        raise RuntimeError("kernel[grid](...) launches with PyTorch tensors; PyTorch is "
                           "not installed") from None
    return torch


def interpreting():
    """Whether $TILE_INTERPRET asks for the interpreter for every launch."""
    return os.environ.get(INTERPRET_VARIABLE, "").lower() not in ("", "0", "false", "no")


# os.environ.get encodes the name and decodes the value, half a microsecond
# a launch; that the variable is unset, the common case, is read from the
# environment's bytes mapping (POSIX) instead.
_ENVIRON = os.environ
_ENVIRON_BYTES = getattr(os.environ, "_data", None) if os.name == "posix" else None
_INTERPRET_BYTES = INTERPRET_VARIABLE.encode()


def _interpreting_now():
    """interpreting(), quicker when $TILE_INTERPRET is unset."""
    if os.environ is _ENVIRON and isinstance(_ENVIRON_BYTES, dict) and \
            _INTERPRET_BYTES not in _ENVIRON_BYTES:
        return False
    return interpreting()


# --------------------------------------------------------------------------
# Specialisation
# --------------------------------------------------------------------------


class Specialization:
    """What one call compiles for: the signature of the run-time
    parameters that stay parameters (``*fp16:16``, ``i32``, ...), the ones
    that became constants, the constexprs and the compile options; and
    the arguments, in the compiled kernel's parameter order."""

    def __init__(self, fn, signature, constants, constexprs, options, arguments, tensors):
        self.fn = fn
        self.signature = signature        # [entry], the kept run-time parameters'
        self.constants = constants        # {name: 1 or None}
        self.constexprs = constexprs      # {name: value}
        self.options = options            # CompileOptions
        self.arguments = arguments        # [(name, value)], the kept parameters
        self.tensors = tensors            # {name: tensor}

    def key(self, backend):
        return (backend, tuple(self.signature), tuple(self.constants.items()),
                tuple((name, _hashable(value)) for name, value in self.constexprs.items()),
                self.options)


def _hashable(value):
    try:
        hash(value)
    except TypeError:
        return (type(value).__name__, repr(value))
    return (type(value).__name__, value)


def _describe(value):
    text = repr(value)
    return text if len(text) <= 40 else type(value).__name__


class _Parameters(typing.NamedTuple):
    """What every call of a kernel binds against, found once: whether its
    parameters are all plain (positional or keyword), their names and
    defaults, and the launch options a keyword may name."""
    plain: bool
    names: tuple
    defaults: dict
    options: frozenset


@functools.cache
def _parameters(fn):
    params = fn.signature.parameters.values()
    names = tuple(p.name for p in params)
    return _Parameters(all(p.kind is p.POSITIONAL_OR_KEYWORD for p in params), names,
                       {p.name: p.default for p in params if p.default is not p.empty},
                       frozenset(compile_options.names()) - set(names))


def _bind(fn, parameters, args, kwargs):
    """{name: value} of every parameter of a call, defaults filled in, in
    the parameters' order. A plain call binds here (inspect's bind costs a
    launch microseconds); any other goes through inspect, whose TypeError
    names the problem."""
    names = parameters.names
    rest = names[len(args):]
    if parameters.plain and len(args) <= len(names) and all(k in rest for k in kwargs):
        given = dict(zip(names, args), **kwargs)
        if all(name in given or name in parameters.defaults for name in names):
            return {name: given[name] if name in given else parameters.defaults[name]
                    for name in names}
    try:
        bound = fn.signature.bind(*args, **kwargs)
    except TypeError as error:
        raise TypeError(f"{fn.__name__}[grid](...): {error} (it takes "
                        f"{', '.join(names)}; launch options: "
                        f"{', '.join(sorted(parameters.options))})") from None
    bound.apply_defaults()
    return dict(bound.arguments)


@functools.lru_cache(maxsize=1024)
def _call_options(given, target):
    """CompileOptions of the launch options `given` ((name, type, value)
    triples: the type keeps True apart from 1, which hash alike), on
    `target` unless it is None: made once per distinct call, since a
    dataclass's checks of every option cost a launch tens of
    microseconds. UsageError names a bad option."""
    options = CompileOptions(**{name: value for name, _, value in given})
    return options if target is None else options.replace(target=target)


def specialise(fn, args, kwargs):
    """Binds a call's arguments to kernel ``fn``'s parameters and returns
    (Specialization, {name: value} of every parameter and option given);
    TypeError or ValueError naming the problem."""
    torch = _torch()
    parameters = _parameters(fn)
    given_options = {k: kwargs.pop(k) for k in list(kwargs) if k in parameters.options}
    values = _bind(fn, parameters, args, kwargs)
    signature, constants, constexprs, arguments, tensors = [], {}, {}, [], {}
    for param in fn.params:
        value = values[param.name]
        if param.is_constexpr:
            constexprs[param.name] = getattr(value, "value", value) \
                if type(value).__name__ == "constexpr" else value
            continue
        specialize = param.name not in fn.do_not_specialize
        if isinstance(value, torch.Tensor):
            element = _element_type(value.dtype)
            if element is None:
                raise TypeError(f"{fn.__name__}[grid](...): parameter {param.name} is a "
                                f"tensor of {value.dtype}, which Tile has no pointer to "
                                f"(it has {', '.join(f'torch.{n}' for n in POINTER_TYPES)})")
            aligned = specialize and value.data_ptr() % DIVISIBILITY == 0
            signature.append(f"*{element}" + (f":{DIVISIBILITY}" if aligned else ""))
            arguments.append((param.name, value))
            tensors[param.name] = value
        elif value is None:
            constants[param.name] = None
        elif isinstance(value, bool):
            signature.append("i1")
            arguments.append((param.name, value))
        elif isinstance(value, int):
            if specialize and value == 1:
                constants[param.name] = 1
                continue
            if _INT32[0] <= value <= _INT32[1]:
                entry = "i32"
            elif _INT64[0] <= value <= _INT64[1]:
                entry = "i64"
            else:
                raise ValueError(f"{fn.__name__}[grid](...): parameter {param.name} = "
                                 f"{value} does not fit in 64 bits")
            if specialize and value % DIVISIBILITY == 0:
                entry += f":{DIVISIBILITY}"
            signature.append(entry)
            arguments.append((param.name, value))
        elif isinstance(value, float):
            signature.append("fp32")
            arguments.append((param.name, value))
        elif isinstance(value, TensorDescriptor):
            signature.append(_descriptor_type(fn, param.name, value))
            arguments.append((param.name, value))
            tensors[param.name] = value.base
        else:
            raise TypeError(f"{fn.__name__}[grid](...): parameter {param.name} is given "
                            f"{_describe(value)} ({type(value).__name__}); a run-time "
                            f"parameter takes a torch.Tensor, a tile.TensorDescriptor, an "
                            f"int, a float, a bool or None")
    # The target the tensors' GPU runs, unless the call names one (their
    # devices are checked at launch: warmup takes any).
    target = None if "target" in given_options else next(
        (_device_target(t.device) for t in tensors.values() if t.is_cuda), None)
    given = tuple(sorted((name, type(value), value) for name, value in given_options.items()))
    try:
        hash(given)
        cached = True
    except TypeError:    # an unhashable value, which CompileOptions names
        cached = False
    try:
        options = (_call_options if cached else _call_options.__wrapped__)(given, target)
    except UsageError as error:
        raise ValueError(f"{fn.__name__}[grid](...): {error}") from None
    meta = {**values, **given_options}
    return Specialization(fn, signature, constants, constexprs, options, arguments,
                          tensors), meta


def _descriptor_type(fn, name, desc):
    """The signature type of host descriptor ``desc`` given for parameter
    ``name`` (``tensordesc<fp16[64, 64]>``): of a torch tensor's elements
    and the descriptor's block shape; TypeError for another base. Its
    strides and alignment are checked at launch."""
    base = desc.base
    element = _element_type(base.dtype) if isinstance(base, _torch().Tensor) else None
    if element is None:
        raise TypeError(f"{fn.__name__}[grid](...): parameter {name} is given a "
                        f"TensorDescriptor of {_describe(base)}; its base must be a "
                        f"torch.Tensor of a type Tile has pointers to")
    return descriptor_spelling(element, desc.block_shape)


@functools.cache
def _element_type(dtype):
    """The pointer element type of torch `dtype` ('fp16', ...), or None."""
    return POINTER_TYPES.get(str(dtype).removeprefix("torch."))


def _device_target(device):
    """The target the CUDA `device` (a torch.device) runs: its compute
    capability's (compile_options.target_for_capability), or None."""
    index = device.index if device.index is not None else _torch().cuda.current_device()
    return _capability_target(index)


@functools.cache
def _capability_target(index):
    return compile_options.target_for_capability(
        *_torch().cuda.get_device_capability(index))


def _device(fn, tensors):
    """The one device of the call's tensors (None: no tensors);
    ValueError for tensors on several, or on a device Tile cannot run."""
    devices = {}
    for name, tensor in tensors.items():
        devices.setdefault(tensor.device, []).append(name)
    if len(devices) > 1:
        listed = "; ".join(f"{', '.join(names)} on {device}" for device, names in
                           devices.items())
        raise ValueError(f"{fn.__name__}[grid](...): the tensors are on different devices "
                         f"({listed}); a launch takes them all on one")
    if not devices:
        return None
    device = next(iter(devices))
    if device.type not in ("cpu", "cuda"):
        raise ValueError(f"{fn.__name__}[grid](...): the tensors are on {device}; Tile "
                         f"launches CUDA tensors on the GPU and runs CPU tensors on the "
                         f"interpreter")
    return device


def check_grid(fn, grid, meta):
    """The grid as (x, y, z): ``grid`` is one to three positive ints, or a
    callable of the meta-parameters (the bound arguments by name) that
    returns them; ValueError or TypeError naming the problem."""
    if callable(grid):
        return _checked_grid(fn, grid(meta), True)
    return _checked_grid(fn, grid, False)


def _checked_grid(fn, grid, returned):
    """check_grid of a grid given (`returned`: by the grid function)."""
    if isinstance(grid, (list, tuple)):
        dims = list(grid)
    else:
        dims = [grid]
    what = (f"the grid function returned {grid!r}" if returned
            else f"the grid is {grid!r}")
    if not 1 <= len(dims) <= 3:
        raise ValueError(f"{fn.__name__}[grid]: {what}; a grid is one to three positive "
                         f"ints")
    sizes = []
    for axis, size in enumerate(dims):
        try:
            if isinstance(size, bool):
                raise TypeError
            size = operator.index(size)
        except TypeError:
            raise TypeError(f"{fn.__name__}[grid]: {what}; a grid is one to three "
                            f"positive ints") from None
        if not 1 <= size <= _GRID_LIMITS[axis]:
            raise ValueError(f"{fn.__name__}[grid]: {what}; its {'xyz'[axis]} size must "
                             f"lie in [1, {_GRID_LIMITS[axis]}]")
        sizes.append(size)
    return tuple(sizes + [1] * (3 - len(sizes)))


# --------------------------------------------------------------------------
# Compilation
# --------------------------------------------------------------------------


class Compiled:
    """One specialisation compiled: its folder (a bundle of one kernel)
    and the kernel's name there; ``kernel`` is its runtime Kernel, loaded
    on first use (a GPU launch)."""

    def __init__(self, folder, name):
        self.folder = folder
        self.name = name
        self.metadata = os.path.join(folder, name + ".json")
        self._kernel = None

    @property
    def kernel(self):
        if self._kernel is None:
            from . import runtime
            self._bundle = runtime.Bundle(self.folder)
            kernel = self._bundle.find(self.name)
            if kernel is None:
                raise RuntimeError(f"the compiled kernel {self.name} is missing from "
                                   f"{self.folder}")
            self._kernel = kernel
        return self._kernel


_scratch = None


def _jit_dir():
    """Where compiled specialisations go: the driver's cache folder's
    jit/, else (caching off) a folder of this process's."""
    global _scratch
    cache = driver.cache_dir()
    if cache:
        return os.path.join(cache, "jit")
    if _scratch is None:
        _scratch = tempfile.mkdtemp(prefix="tile-jit-")
    return _scratch


def compile_specialization(spec, backend):
    """Compiles ``spec`` for ``backend`` ('interp': the metadata the
    interpreter needs; 'cuda': GPU code too) into a folder named by the
    module's text.  Without tile-compile, a folder compiled before (a GPU
    bundle's, say) is used as it is."""
    fn = spec.fn
    text = compile_kernel(fn, spec.signature, spec.constexprs, options=spec.options,
                          constants=spec.constants)
    emit = "metadata" if backend == "interp" else "auto"
    digest = hashlib.sha256((text + "\0" + emit).encode()).hexdigest()[:32]
    folder = os.path.join(_jit_dir(), f"{fn.__name__}-{digest}")
    name = fn.__name__
    module = os.path.join(folder, name + ".mlir")
    try:
        driver.find_tile_compile()
        found = True
    except UsageError:
        found = False
    ready = os.path.isfile(os.path.join(folder, name + ".json")) and (
        backend == "interp" or any(os.path.isfile(os.path.join(folder, name + ext))
                                   for ext in (".cubin", ".ptx")))
    if not found and not ready:
        raise RuntimeError(
            f"{fn.__name__}: this specialisation ({', '.join(spec.signature)}) has not "
            f"been compiled for {'the interpreter' if backend == 'interp' else 'the GPU'} "
            f"in {_jit_dir()}, and tile-compile, which would compile it, was not found "
            f"(build it with ./dev.sh build, or name it with ${driver.TOOL_VARIABLE}; on a "
            f"machine without it, compile ahead with kernel.warmup(...) and $TILE_CACHE_DIR)")
    if found:
        driver.write_module(text, module)
        driver.run_tile_compile([module], emit=emit)
    return Compiled(folder, name)


# --------------------------------------------------------------------------
# Launching
# --------------------------------------------------------------------------


def warmup(fn, args, kwargs, grid=None):
    """Compiles ``fn`` for the GPU as ``fn[grid](*args, **kwargs)`` would
    on CUDA tensors, and launches nothing: the tensors may be on any device
    (their addresses decide the divisibility; a meta tensor's, 0, is
    aligned as CUDA's are).  ``grid``, when given, is checked.  Returns the
    Compiled, whose folder holds the kernel; ahead of time, for a machine
    without tile-compile (a GPU bundle, with $TILE_CACHE_DIR there)."""
    spec, meta = specialise(fn, args, dict(kwargs))
    if grid is not None:
        check_grid(fn, grid, meta)
    key = spec.key("cuda")
    with fn._launch_lock:
        compiled = fn._launch_cache.get(key)
    if compiled is None:
        compiled = compile_specialization(spec, "cuda")
        with fn._launch_lock:
            fn._launch_cache[key] = compiled
    return compiled


class PreparedLaunch:
    """One ``fn[grid](...)`` call specialised and compiled, not yet run:
    ``launch()`` runs it (again and again, on the same arguments: the
    autotuner times it so)."""

    __slots__ = ("spec", "compiled", "backend", "device", "grid")

    def __init__(self, spec, compiled, backend, device, grid):
        self.spec = spec
        self.compiled = compiled
        self.backend = backend    # "cuda" or "interp"
        self.device = device      # the tensors' torch.device, or None
        self.grid = grid          # (x, y, z)

    def launch(self):
        if self.backend == "cuda":
            _launch_gpu(self.spec, self.compiled, self.device, self.grid)
        else:
            _run_interpreter(self.spec, self.compiled, self.grid)


def prepare(fn, grid, args, kwargs):
    """``fn[grid](*args, **kwargs)`` up to the launch: specialise, check
    the grid, compile once (per process); returns a PreparedLaunch."""
    spec, meta = specialise(fn, args, dict(kwargs))
    device = _device(fn, spec.tensors)
    backend = "cuda" if device is not None and device.type == "cuda" and \
        not interpreting() else "interp"
    sizes = check_grid(fn, grid, meta)
    key = spec.key(backend)
    with fn._launch_lock:
        compiled = fn._launch_cache.get(key)
    if compiled is None:
        compiled = compile_specialization(spec, backend)
        with fn._launch_lock:
            fn._launch_cache[key] = compiled
    return PreparedLaunch(spec, compiled, backend, device, sizes)


def run(fn, grid, args, kwargs):
    """``fn[grid](*args, **kwargs)``: specialise, compile once, launch.
    A call whose arguments have the types, alignments and specialised
    values of an earlier GPU launch's takes that launch's kernel and
    argument packing by one dictionary lookup (_FastLaunch); any other
    goes the whole way (prepare), which also raises every error."""
    key, fast, values, options = _look_up_fast_launch(fn, args, kwargs)
    if fast is not None:
        fast.launch(fn, values, _fast_grid(fn, grid, values, options))
        return
    prepared = prepare(fn, grid, args, kwargs)
    prepared.launch()
    _keep_fast_launch(fn, prepared, key)


def _binder(fn):
    """``fn``'s _Binder, made on its first call (False: none)."""
    binder = fn._launch_binder
    if binder is None:
        binder = fn._launch_binder = _Binder.of(fn)
    return binder


def _look_up_fast_launch(fn, args, kwargs):
    """(key, fast launch or None, the parameters' values, the options) of
    a GPU call of ``fn``; key None where the call goes the whole way
    (the interpreter, a kernel or an argument the binder does not key)."""
    binder = _binder(fn)
    if binder and not _interpreting_now():
        try:
            key, values, options = binder.bind(*args, **kwargs)
            return key, fn._fast_launches.get(key), values, options
        except Exception:   # what the whole way refuses, and says why
            pass
    return None, None, None, None


def begin(fn, grid, args, kwargs):
    """``fn[grid](*args, **kwargs)`` as run() does it, in two halves, for
    the wrappers of tile/autotuner.py (which note their choice between
    them, as they did between prepare and launch): returns something whose
    ``launch()`` launches.  Everything before the launch (binding,
    specialising, checking the grid) has raised its errors by then.  (run
    keeps the halves together: the object between them costs a plain call
    a tenth of a microsecond.)"""
    key, fast, values, options = _look_up_fast_launch(fn, args, kwargs)
    if fast is not None:
        return _ReadyLaunch(fn, fast, values, _fast_grid(fn, grid, values, options))
    return _FirstLaunch(fn, prepare(fn, grid, args, kwargs), key)


def first_launch(fn, prepared, args, kwargs):
    """``prepared`` (a PreparedLaunch of ``fn[grid](*args, **kwargs)``,
    made elsewhere: the autotuner's chosen config) as begin() returns a
    call that went the whole way: its ``launch()`` leaves behind the fast
    launch for later calls keyed as this one."""
    key = None
    binder = _binder(fn)
    if binder and prepared.backend == "cuda":
        try:
            key = binder.bind(*args, **kwargs)[0]
            hash(key)
        except Exception:   # a kind the fast path does not key: none kept
            key = None
    return _FirstLaunch(fn, prepared, key)


def _keep_fast_launch(fn, prepared, key):
    """After ``prepared`` launched: keeps its fast launch under ``key``
    (the binder's key of its call; None: not keyed)."""
    if key is not None and prepared.backend == "cuda":
        fast = _FastLaunch.of(fn, prepared)
        if fast is not None:
            fn._fast_launches[key] = fast


class _FirstLaunch:
    """begin()'s call that went the whole way: launching it keeps its fast
    launch (a launch the runtime refused keeps none)."""

    __slots__ = ("fn", "prepared", "key")

    def __init__(self, fn, prepared, key):
        self.fn = fn
        self.prepared = prepared
        self.key = key

    def launch(self):
        self.prepared.launch()
        _keep_fast_launch(self.fn, self.prepared, self.key)


class _ReadyLaunch:
    """begin()'s call found among the fast launches, its grid checked."""

    __slots__ = ("fn", "fast", "values", "sizes")

    def __init__(self, fn, fast, values, sizes):
        self.fn = fn
        self.fast = fast
        self.values = values
        self.sizes = sizes

    def launch(self):
        self.fast.launch(self.fn, self.values, self.sizes)


# --------------------------------------------------------------------------
# Launches after the first: keyed by what the arguments specialise
# --------------------------------------------------------------------------


class _Uncached(Exception):
    """An argument of a kind the fast path does not key (specialise
    decides on it, or refuses it)."""


# The two's-complement bounds, for a key's integer class.
_INT32_LOW, _INT32_HIGH = _INT32
_INT64_LOW, _INT64_HIGH = _INT64


def _argument_keys(tensor_type):
    """(specialised, unspecialised): functions giving what ``specialise``
    decides from a run-time argument, for a parameter it specialises and
    for one of do_not_specialize: a tensor's dtype, device and (if
    specialised) 16-byte alignment; an int's width, and whether it is 1
    or a multiple of 16; None, a bool and a float by their types.  They
    raise _Uncached for what specialise refuses or keys otherwise."""

    def integer(value, specialise):
        # The width, plus 1 for a multiple of 16 (specialised).
        if _INT32_LOW <= value <= _INT32_HIGH:
            width = 32
        elif _INT64_LOW <= value <= _INT64_HIGH:
            width = 64
        else:
            raise _Uncached
        return width + 1 if specialise and value % DIVISIBILITY == 0 else width

    # torch.Tensor and the subclasses seen (nn.Parameter, say): tested by
    # type first, as cheaply as the exact type.
    tensor_types = {tensor_type}

    def other(value, specialise):
        # Subclasses, as specialise's isinstance tests take them, in its order.
        if value is None:
            return None
        if isinstance(value, tensor_type):
            tensor_types.add(type(value))
            return (value.dtype, value.device, specialise and
                    value.data_ptr() % DIVISIBILITY == 0)
        if isinstance(value, bool):
            return "i1"
        if isinstance(value, int):
            return "1" if specialise and value == 1 else integer(value, specialise)
        if isinstance(value, float):
            return "fp32"
        raise _Uncached

    def specialised(value):
        kind = type(value)
        if kind in tensor_types:
            return (value.dtype, value.device, value.data_ptr() % DIVISIBILITY == 0)
        if kind is int:
            if value == 1:
                return "1"
            if _INT32_LOW <= value <= _INT32_HIGH:
                return 33 if value % DIVISIBILITY == 0 else 32
            return integer(value, True)
        return other(value, True)

    def unspecialised(value):
        kind = type(value)
        if kind in tensor_types:
            return (value.dtype, value.device, False)
        if kind is int:
            return integer(value, False)
        return other(value, False)

    return specialised, unspecialised


class _Binder:
    """A kernel's call binder for the fast path, generated from its
    parameter list once: ``bind(*args, **kwargs)`` binds as Python binds
    the kernel's own signature (defaults included; the launch options land
    in ``**options``) and returns (key, every parameter's value in order,
    the options).  The key is what specialise would decide: each run-time
    argument's (_argument_keys), each constexpr's type and value, and the
    options with their types (True and 1 hash alike)."""

    __slots__ = ("bind", "names")

    def __init__(self, bind, names):
        self.bind = bind
        self.names = names

    @classmethod
    def of(cls, fn):
        """The binder of kernel ``fn``, or False where a call must go the
        whole way each time (parameters other than plain ones)."""
        parameters = _parameters(fn)
        names = parameters.names
        if not parameters.plain or any(name.startswith("_tile_") for name in names):
            return False
        specialised, unspecialised = _argument_keys(_torch().Tensor)
        keys = []
        for param in fn.params:
            if param.is_constexpr:
                keys.append(f"_tile_type({param.name}), {param.name}")
            elif param.name in fn.do_not_specialize:
                keys.append(f"_tile_unspecialised({param.name})")
            else:
                keys.append(f"_tile_specialised({param.name})")
        signature = ", ".join(f"{name}=_tile_defaults[{name!r}]"
                              if name in parameters.defaults else name for name in names)
        source = (
            f"def bind({signature}{', ' if names else ''}**_tile_options):\n"
            f"    return (({''.join(key + ', ' for key in keys)}\n"
            f"             (_tile_tuple(_tile_options.items()),\n"
            f"              _tile_tuple(_tile_map(_tile_type, _tile_options.values())))\n"
            f"             if _tile_options else ()),\n"
            f"            ({''.join(name + ', ' for name in names)}), _tile_options)\n")
        # Builtins under names no parameter takes (a parameter may be `type`).
        namespace = {"_tile_defaults": parameters.defaults, "_tile_type": type,
                     "_tile_tuple": tuple, "_tile_map": map,
                     "_tile_specialised": specialised, "_tile_unspecialised": unspecialised}
        exec(compile(source, f"<{fn.__name__} launch binder>", "exec"), namespace)
        return cls(namespace["bind"], names)


# A grid tuple's sizes padded to (x, y, z), by its length.
_GRID_PADDING = (None, (1, 1), (1,), ())
_GRID_X_MAX, _GRID_Y_MAX, _GRID_Z_MAX = _GRID_LIMITS


def _plain_grid(grid):
    """(x, y, z) of a grid that is a tuple of one to three ints in range,
    else None (check_grid takes it, or says what is wrong)."""
    if type(grid) is tuple and 0 < len(grid) <= 3:
        sizes = grid + _GRID_PADDING[len(grid)]
        x, y, z = sizes
        if type(x) is int and type(y) is int and type(z) is int and \
                0 < x <= _GRID_X_MAX and 0 < y <= _GRID_Y_MAX and 0 < z <= _GRID_Z_MAX:
            return sizes
    return None


class _FastLaunch:
    """A GPU launch of one specialisation, made from its first call: the
    device, its raw stream getter, and the runtime kernel's fixed_launch,
    which packs a call's arguments (all the parameters' values, in order)
    in one precompiled function."""

    __slots__ = ("device", "stream", "fixed_launch")

    def __init__(self, device, stream, fixed_launch):
        self.device = device
        self.stream = stream
        self.fixed_launch = fixed_launch

    @classmethod
    def of(cls, fn, prepared):
        """The fast launch of a PreparedLaunch that has run on the GPU, or
        None where its kernel takes what fixed_launch does not pack."""
        spec, kernel, device = prepared.spec, prepared.compiled.kernel, prepared.device
        if device.index is None or kernel.descriptors or \
                [p.name for p in kernel.params] != [name for name, _ in spec.arguments]:
            return None
        torch = _torch()
        index = {param.name: i for i, param in enumerate(fn.params)}
        sources = [(index[name], _element_type(value.dtype)
                    if isinstance(value, torch.Tensor) else None)
                   for name, value in spec.arguments]
        if any((element is not None) != param.is_pointer
               for (_, element), param in zip(sources, kernel.params)):
            return None
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        return cls(device.index, raw or (lambda i: torch.cuda.current_stream(i).cuda_stream),
                   kernel.fixed_launch(sources))

    def launch(self, fn, values, sizes):
        """Launches over ``sizes``, a checked (x, y, z) (_fast_grid)."""
        device = self.device
        try:
            self.fixed_launch(values, device, self.stream(device), sizes)
        except ValueError as error:
            raise ValueError(f"{fn.__name__}[grid](...): {error}") from None


def _fast_grid(fn, grid, values, options):
    """(x, y, z) of ``grid`` for a fast launch (ints, or a function of the
    arguments by name and the options), checked as check_grid does."""
    if callable(grid):
        meta = dict(zip(fn._launch_binder.names, values))
        meta.update(options)
        grid = grid(meta)
        return _plain_grid(grid) or _checked_grid(fn, grid, True)
    return _plain_grid(grid) or _checked_grid(fn, grid, False)


def _launch_gpu(spec, compiled, device, grid):
    from . import runtime
    torch = _torch()
    values = {}
    for name, value in spec.arguments:
        if isinstance(value, torch.Tensor):
            values[name] = runtime.DevicePointer(value.data_ptr(),
                                                 _element_type(value.dtype))
        elif isinstance(value, TensorDescriptor):
            base = runtime.DevicePointer(value.base.data_ptr(), _element_type(value.base.dtype))
            values[name] = TensorDescriptor(base, value.shape, value.strides,
                                            value.block_shape, value.padding)
        else:
            values[name] = int(value) if isinstance(value, bool) else value
    index = device.index if device.index is not None else torch.cuda.current_device()
    stream = _raw_stream(torch, index)
    try:
        compiled.kernel.launch(values, index, stream, grid=grid)
    except ValueError as error:
        raise ValueError(f"{spec.fn.__name__}[grid](...): {error}") from None


def _raw_stream(torch, index):
    """The handle of device `index`'s current stream: PyTorch's raw getter
    where it has one (what Triton's launcher calls), a few microseconds a
    launch less than building the Stream object."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    return raw(index) if raw is not None else torch.cuda.current_stream(index).cuda_stream


def find_tile_run():
    """$TILE_RUN, else a GPU bundle's or a build folder's bin/tile-run
    ($TILE_BUILD_DIR, then this checkout's build/), else the one on PATH."""
    override = os.environ.get(RUN_VARIABLE)
    if override:
        if not os.access(override, os.X_OK):
            raise RuntimeError(f"${RUN_VARIABLE} names {override}, which is no executable")
        return override
    folders = [REPO_ROOT, os.environ.get("TILE_BUILD_DIR"), os.path.join(REPO_ROOT, "build")]
    for folder in filter(None, folders):
        candidate = os.path.join(folder, "bin", "tile-run")
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("tile-run")
    if found:
        return found
    raise RuntimeError(f"the interpreter runs CPU tensors, and tile-run was not found "
                       f"(build it with ./dev.sh build, or name it with ${RUN_VARIABLE})")


def _flat(tensor):
    """The tensor's storage from its first element on, as a flat tensor of
    its dtype (a view): what the kernel's pointer can reach."""
    count = tensor.untyped_storage().nbytes() // tensor.element_size() - \
        tensor.storage_offset()
    return tensor.as_strided((max(count, 0),), (1,), tensor.storage_offset())


def _write_npy(path, descr, count, data):
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': ({count},), }}"
    header += " " * (-(len(header) + 11) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(data)


def _read_npy(path):
    """(descr, the data bytes) of a .npy file tile-run wrote."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:6] != b"\x93NUMPY":
        raise RuntimeError(f"{path} is no .npy file")
    if raw[6] == 1:
        length, start = struct.unpack("<H", raw[8:10])[0], 10
    else:
        length, start = struct.unpack("<I", raw[8:12])[0], 12
    header = raw[start:start + length].decode("latin1")
    descr = header.split("'descr':")[1].split("'")[1]
    return descr, raw[start + length:]


_TORCH_OF_DESCR = {"|b1": "bool", "|i1": "int8", "<i2": "int16", "<i4": "int32",
                   "<i8": "int64", "<f2": "float16", "<f4": "float32", "<f8": "float64"}
# Same-sized integer types, to compare elements bit for bit.
_BITS = {1: "uint8", 2: "int16", 4: "int32", 8: "int64"}


def _kernel_output(stdout, name):
    """What the kernel printed (tl.device_print) in ``tile-run run``'s
    output: the lines between its report's ``kernel NAME grid ...`` line
    and the ``wrote ...`` lines that end it."""
    lines = stdout.splitlines(keepends=True)
    start = next((i + 1 for i, line in enumerate(lines)
                  if line.startswith(f"kernel {name} grid ")), len(lines))
    end = len(lines)
    while end > start and lines[end - 1].startswith("wrote "):
        end -= 1
    return "".join(lines[start:end])


def _expanded_arguments(spec, compiled):
    """The call's (name, value) pairs, each host descriptor's replaced by
    its hidden parameters' (its base tensor, shape and strides), checked
    as a GPU launch checks them."""
    descriptors = None
    for name, value in spec.arguments:
        if not isinstance(value, TensorDescriptor):
            yield name, value
            continue
        if descriptors is None:
            with open(compiled.metadata) as f:
                descriptors = descriptor_params(json.load(f))
        yield from descriptors[name].arguments(value, f"{spec.fn.__name__}[grid](...)").items()


def _run_interpreter(spec, compiled, grid):
    torch = _torch()
    tool = find_tile_run()
    command = [tool, "run", compiled.metadata, "--backend", "interp", "--grid",
               ",".join(map(str, grid))]
    buffers = []
    with tempfile.TemporaryDirectory(prefix="tile-interp-") as scratch:
        for name, value in _expanded_arguments(spec, compiled):
            if isinstance(value, torch.Tensor):
                flat = _flat(value)
                host = flat.detach().to("cpu", copy=True).contiguous()
                element = POINTER_TYPES[str(value.dtype).removeprefix("torch.")]
                data = ctypes.string_at(host.data_ptr(), host.numel() * host.element_size()) \
                    if host.numel() else b""
                path = os.path.join(scratch, f"{name}.npy")
                out = os.path.join(scratch, f"{name}.out.npy")
                _write_npy(path, _NPY_TYPES[element], host.numel(), data)
                command += [f"{name}={path}", "--out", f"{name}={out}"]
                buffers.append((flat, host, out))
            elif isinstance(value, bool):
                command.append(f"{name}={'true' if value else 'false'}")
            elif isinstance(value, float):
                command.append(f"{name}={value!r}")
            else:
                command.append(f"{name}={value}")
        result = subprocess.run(command, capture_output=True, text=True)
        sys.stdout.write(_kernel_output(result.stdout, spec.fn.__name__))
        if result.returncode != 0:
            message = (result.stderr or result.stdout).strip()
            raise RuntimeError(f"{spec.fn.__name__}[grid](...) on the interpreter failed: "
                               f"{message}")
        for flat, host, out in buffers:
            descr, data = _read_npy(out)
            written = torch.frombuffer(bytearray(data), dtype=getattr(
                torch, _TORCH_OF_DESCR[descr])) if data else host.new_empty(0)
            if written.element_size() == host.element_size() and \
                    str(host.dtype).removeprefix("torch.").startswith("uint"):
                written = written.view(host.dtype)   # the bits, unsigned
            written = written.to(host.dtype).reshape(host.shape)
            # What the kernel stored: the elements whose bits changed (two
            # arguments may share the storage; each brings back its own).
            bits = getattr(torch, _BITS[host.element_size()])
            changed = written.view(bits) != host.view(bits)
            if bool(changed.any()):
                # Copied as bits of the same size (torch indexes few
                # unsigned types).
                updated = flat.detach().view(bits)
                updated[changed.to(flat.device)] = written.view(bits)[changed].to(flat.device)


class Launcher:
    """``kernel[grid]``: calling it launches the kernel over ``grid``."""

    __slots__ = ("fn", "grid")

    def __init__(self, fn, grid):
        if not callable(grid) and not isinstance(grid, (tuple, list, int)):
            raise TypeError(f"{fn.__name__}[grid]: the grid is one to three positive ints "
                            f"or a function of the meta-parameters, not "
                            f"{type(grid).__name__}")
        self.fn = fn
        self.grid = grid

    def __call__(self, *args, **kwargs):
        return run(self.fn, self.grid, args, kwargs)

    def __repr__(self):
        return f"<launcher of {self.fn.__name__} over {self.grid!r}>"

