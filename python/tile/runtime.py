"""The Tile runtime from Python: ctypes over libtile_runtime.so.

One runtime launches Tile's compiled kernels, for ``tile-run`` and for
Python alike (include/tile/Runtime/tile_runtime.h): it reads the kernels'
metadata, chooses variants, binds arguments by parameter name, checks them
against what each kernel was compiled for, computes the grid from the
kernel's launch spec, and launches through the NVIDIA driver; it also
encodes the TMA descriptors of Hopper kernels (TensorMapDesc).  This module
only finds the library and passes values across.

Standard library only; it needs no PyTorch and, until a launch or an
encoded descriptor, no GPU.
"""

import ctypes
import json
import operator
import os
import struct
import threading
from pathlib import Path

from .tensor_descriptor import ELEMENT_TYPES, descriptor_params, expand_descriptors

# The C interface this module speaks (TILE_RUNTIME_ABI_VERSION).
ABI_VERSION = 2

LIBRARY_NAME = "libtile_runtime.so"
LIBRARY_VARIABLE = "TILE_RUNTIME_LIBRARY"

# <root>/python/tile/runtime.py in a checkout (the library in
# <root>/build/lib) and in a GPU bundle (<root>/lib); a package installed
# apart from both has no root and finds it through $TILE_RUNTIME_LIBRARY.
_PACKAGE = Path(__file__).resolve().parent
_ROOT = _PACKAGE.parents[1] if _PACKAGE.parent.name == "python" else None

_POINTER, _INT, _FLOAT = 0, 1, 2
# TileError: the request was wrong, or the GPU refused.
_ERROR_REQUEST, _ERROR_DEVICE = 1, 2
# One TileArg: int32 kind, int32 element type code, an 8-byte value.
_ARG_FORMATS = {_POINTER: "iiQ", _INT: "iiq", _FLOAT: "iid"}
_ARG_BYTES = 16
# A grid (x, y, z) as tileLaunchGrid reads it.
_GRID = struct.Struct("=3I")


class RuntimeLibraryError(RuntimeError):
    """libtile_runtime.so is missing or unusable."""


class BundleError(RuntimeError):
    """A kernel folder that cannot be used, or no variant for a request."""


class LaunchError(RuntimeError):
    """The driver refused a launch or a TMA descriptor (or the GPU is
    missing)."""


class DevicePointer:
    """A device address and the element type of what it points to
    ('fp16', 'bf16', 'fp32'): what a pointer parameter is given."""

    __slots__ = ("address", "element_type")

    def __init__(self, address, element_type):
        self.address = address
        self.element_type = element_type

    def __repr__(self):
        return f"DevicePointer({self.address:#x}, {self.element_type})"


def library_candidates():
    """Where libtile_runtime.so is looked for, in order."""
    override = os.environ.get(LIBRARY_VARIABLE)
    if override:
        return [Path(override)]
    paths = [_ROOT / "lib" / LIBRARY_NAME] if _ROOT else []
    build = os.environ.get("TILE_BUILD_DIR")
    if build:
        paths.append(Path(build) / "lib" / LIBRARY_NAME)
    if _ROOT:
        paths.append(_ROOT / "build" / "lib" / LIBRARY_NAME)
    return paths


_SIGNATURES = {
    "tileRuntimeAbiVersion": (ctypes.c_int, []),
    "tileLastError": (ctypes.c_char_p, []),
    "tileDTypeCode": (ctypes.c_int, [ctypes.c_char_p]),
    "tileBundleOpen": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]),
    "tileBundleClose": (None, [ctypes.c_void_p]),
    "tileBundleWarnings": (ctypes.c_char_p, [ctypes.c_void_p]),
    "tileBundleNumKernels": (ctypes.c_int, [ctypes.c_void_p]),
    "tileBundleKernel": (ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_int]),
    "tileBundleFind": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p,
                                      ctypes.POINTER(ctypes.c_void_p)]),
    "tileBundleSelect": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p,
                                        ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
                                        ctypes.POINTER(ctypes.c_int64), ctypes.c_int64,
                                        ctypes.c_int, ctypes.c_int,
                                        ctypes.POINTER(ctypes.c_void_p)]),
    "tileKernelName": (ctypes.c_char_p, [ctypes.c_void_p]),
    "tileKernelFamily": (ctypes.c_char_p, [ctypes.c_void_p]),
    "tileKernelMetadataPath": (ctypes.c_char_p, [ctypes.c_void_p]),
    "tileKernelNumWarps": (ctypes.c_int, [ctypes.c_void_p]),
    "tileKernelHasGpuCode": (ctypes.c_int, [ctypes.c_void_p]),
    "tileKernelNumParams": (ctypes.c_int, [ctypes.c_void_p]),
    "tileKernelParamName": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_int]),
    "tileKernelParamType": (ctypes.c_char_p, [ctypes.c_void_p, ctypes.c_int]),
    "tileKernelParamDivisibility": (ctypes.c_int64, [ctypes.c_void_p, ctypes.c_int]),
    "tileKernelMetadata": (ctypes.c_char_p, [ctypes.c_void_p]),
    "tileCheck": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int,
                                 ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint32)]),
    "tileMultiprocessorCount": (ctypes.c_int, [ctypes.c_int,
                                               ctypes.POINTER(ctypes.c_int64)]),
    "tileLaunch": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p,
                                  ctypes.c_int, ctypes.c_void_p]),
}

# Functions added to the C interface after version 1 (adding one keeps the
# version): a library without them still loads, and using them says why not.
_TENSOR_MAP_ARGS = [ctypes.c_int, ctypes.c_int, ctypes.c_uint64, ctypes.POINTER(ctypes.c_uint64),
                    ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint32),
                    ctypes.POINTER(ctypes.c_uint32), ctypes.c_int, ctypes.c_int, ctypes.c_int]
_OPTIONAL_SIGNATURES = {
    "tileCheckTensorMap": (ctypes.c_int, _TENSOR_MAP_ARGS),
    "tileEncodeTensorMap": (ctypes.c_int, [*_TENSOR_MAP_ARGS, ctypes.c_void_p]),
    # The grid (const uint32_t[3]) typed as an address: a ctypes array or
    # the bytes of one (Kernel.fixed_launch packs it so, cheaper per launch).
    "tileLaunchGrid": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p,
                                      ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]),
}


class _Library:
    """The loaded libtile_runtime.so, its functions typed."""

    def __init__(self):
        tried = []
        for path in library_candidates():
            if not path.is_file():
                tried.append(str(path))
                continue
            try:
                lib = ctypes.CDLL(str(path))
            except OSError as error:
                raise RuntimeLibraryError(f"cannot load {path}: {error}") from None
            break
        else:
            raise RuntimeLibraryError(
                f"the Tile runtime ({LIBRARY_NAME}) was not found (looked in: "
                f"{', '.join(tried) or 'nowhere'}). Build it (./dev.sh build, or "
                f"scripts/make_gpu_bundle.sh for a GPU bundle) or point "
                f"${LIBRARY_VARIABLE} at it")
        for name, (restype, argtypes) in _SIGNATURES.items():
            try:
                function = getattr(lib, name)
            except AttributeError:
                raise RuntimeLibraryError(f"{path} lacks {name}: it is from another "
                                          f"version of Tile") from None
            function.restype, function.argtypes = restype, argtypes
            setattr(self, name, function)
        for name, (restype, argtypes) in _OPTIONAL_SIGNATURES.items():
            function = getattr(lib, name, None)
            if function is not None:
                function.restype, function.argtypes = restype, argtypes
            setattr(self, name, function)
        version = self.tileRuntimeAbiVersion()
        if version != ABI_VERSION:
            raise RuntimeLibraryError(f"{path} speaks C interface version {version}, "
                                      f"this tile package {ABI_VERSION}: rebuild one of them")
        self.path = path

    def error(self):
        return self.tileLastError().decode()

    def optional(self, name):
        """A function of _OPTIONAL_SIGNATURES, or RuntimeLibraryError."""
        function = getattr(self, name)
        if function is None:
            raise RuntimeLibraryError(f"{self.path} lacks {name}: it is from an older "
                                      f"version of Tile; rebuild it")
        return function


_library = None
_library_lock = threading.Lock()


def library():
    """The process's runtime library, loaded on first use."""
    global _library
    if _library is None:
        with _library_lock:
            if _library is None:
                _library = _Library()
    return _library


class Param:
    """One kernel parameter: name, type ('*fp16', 'i32', 'fp32') and the
    power of two the kernel was compiled to assume divides it (bytes for a
    pointer's address)."""

    __slots__ = ("name", "type", "divisibility")

    def __init__(self, name, type, divisibility):
        self.name, self.type, self.divisibility = name, type, divisibility

    @property
    def is_pointer(self):
        return self.type.startswith("*")

    def __repr__(self):
        suffix = f":{self.divisibility}" if self.divisibility > 1 else ""
        return f"{self.name}: {self.type}{suffix}"


class Kernel:
    """A compiled kernel variant of a Bundle (valid while the bundle is)."""

    def __init__(self, bundle, handle):
        lib = library()
        self._bundle = bundle          # keeps the handle's owner alive
        self._handle = handle
        self.name = lib.tileKernelName(handle).decode()
        self.family = lib.tileKernelFamily(handle).decode()
        self.metadata_path = lib.tileKernelMetadataPath(handle).decode()
        self.num_warps = lib.tileKernelNumWarps(handle)
        self.has_gpu_code = bool(lib.tileKernelHasGpuCode(handle))
        self.params = [Param(lib.tileKernelParamName(handle, i).decode(),
                             lib.tileKernelParamType(handle, i).decode(),
                             lib.tileKernelParamDivisibility(handle, i))
                       for i in range(lib.tileKernelNumParams(handle))]
        self.metadata = json.loads(lib.tileKernelMetadata(handle).decode())
        self.constexprs = self.metadata.get("constexprs", {})
        self.max_n_ctx = self.metadata.get("max_n_ctx")
        self.element_type = next((p.type[1:] for p in self.params if p.is_pointer), None)
        self._index = {p.name: i for i, p in enumerate(self.params)}
        self._names = [p.name for p in self.params]
        # The common case packed with one precompiled Struct: pointers to
        # pointer parameters, ints to integer ones, numbers to float ones.
        self._kinds = [(p.name, _POINTER if p.is_pointer else
                        _FLOAT if p.type.startswith(("fp", "bf")) else _INT)
                       for p in self.params]
        self._struct = struct.Struct("=" + "".join(_ARG_FORMATS[k] for _, k in self._kinds))
        self._per_thread = threading.local()
        # Tensor descriptor parameters (tensordesc<...> in the signature), by
        # name: a launch gives each a TensorDescriptor, which stands for
        # the hidden parameters the kernel takes.
        self.descriptors = descriptor_params(self.metadata)
        # The names a launch gives values for, in order: the parameters,
        # each descriptor's in place of its hidden ones.
        by_base = {d.base: d.name for d in self.descriptors.values()}
        hidden = {name for d in self.descriptors.values() for name in d.hidden}
        self.arguments = [by_base.get(name, name) for name in self._names
                          if name in by_base or name not in hidden]
        self._types = {p.name: p.type for p in self.params}
        self._types.update((d.name, d.type) for d in self.descriptors.values())

    def constexpr_int(self, name):
        """A positive integer constexpr (a block size), or BundleError."""
        value = self.constexprs.get(name)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise BundleError(f"kernel {self.name} ({self.metadata_path}) lacks the "
                              f"positive integer constexpr {name}")
        return value

    def _pack(self, values, buffer=None):
        """The arguments as an array of TileArg, in parameter order, from
        values by parameter name (DevicePointer, int or float), in `buffer`
        or this thread's buffer of the kernel.  Names are checked here;
        types and ranges by the runtime."""
        if buffer is None:
            buffer = getattr(self._per_thread, "buffer", None)
        if buffer is None:
            buffer = self._per_thread.buffer = self._new_buffer()
        if self.descriptors:
            values = self._expand_descriptors(values)
        try:
            if len(values) != len(self._kinds):
                raise KeyError
            codes = _dtype_codes()
            fields = []
            for name, kind in self._kinds:
                value = values[name]
                if kind == _POINTER:
                    fields += (_POINTER, codes[value.element_type], value.address)
                elif kind == _INT and type(value) is int:
                    fields += (_INT, 0, value)
                elif kind == _FLOAT and type(value) in (float, int):
                    fields += (_FLOAT, 0, value)
                else:
                    raise TypeError
            self._struct.pack_into(buffer, 0, *fields)
        except (KeyError, AttributeError, TypeError, struct.error):
            self._pack_any(values, buffer)   # what the runtime is to refuse
        return buffer

    def _expand_descriptors(self, values):
        """`values` with each descriptor replaced by the values of the
        parameters it stands for, its base as a DevicePointer; ValueError
        naming the parameter a descriptor does not fit."""
        expanded = expand_descriptors(self.descriptors, values, self.name, self._types)
        for param in self.descriptors.values():
            base = expanded.get(param.base)
            if param.name not in values or type(base) is DevicePointer:
                continue
            address = getattr(base, "data_ptr", None)
            if not callable(address):
                raise ValueError(f"{self.name}: parameter {param.name}: the descriptor's "
                                 f"base, a {type(base).__name__}, has no device address "
                                 f"(data_ptr())")
            expanded[param.base] = DevicePointer(address(), param.element_type)
        return expanded

    def _pack_any(self, values, buffer):
        """_pack for values of any kind: each as what it is, so that the
        runtime's check names a mismatch."""
        if len(values) != len(self._names) or any(n not in values for n in self._names):
            # Named as the caller gives them: a descriptor, not its parts
            # (unless some of them are given).
            missing = []
            for name in self.arguments:
                parts = self.descriptors[name].hidden if name in self.descriptors else [name]
                absent = [part for part in parts if part not in values]
                missing += [name] if len(absent) == len(parts) else absent
            extra = [n for n in values if n not in self._index]
            raise ValueError(f"{self.name} takes {self.arguments}; missing {missing}, "
                             f"unexpected {extra}")
        fields, fmt = [], []
        codes = _dtype_codes()
        for name in self._names:
            value = values[name]
            if type(value) is DevicePointer:
                code = codes.get(value.element_type)
                if code is None:
                    raise ValueError(f"{self.name}: parameter {name} is given a pointer to "
                                     f"an unknown element type {value.element_type!r}")
                fields += (_POINTER, code, value.address)
                fmt.append(_ARG_FORMATS[_POINTER])
            elif isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"{self.name}: parameter {name} is given {value!r}")
            elif isinstance(value, int):
                if not -2**63 <= value < 2**63:
                    raise ValueError(f"{self.name}: parameter {name} = {value} does not "
                                     f"fit in 64 bits")
                fields += (_INT, 0, int(value))
                fmt.append(_ARG_FORMATS[_INT])
            else:
                fields += (_FLOAT, 0, float(value))
                fmt.append(_ARG_FORMATS[_FLOAT])
        struct.pack_into("=" + "".join(fmt), buffer, 0, *fields)

    def check(self, values, num_sms=None):
        """Checks `values` against the parameters (names, kinds, element
        types, ranges, the divisibility compiled for) and returns the grid
        (x, y, z) the launch spec gives, `num_sms` the multiprocessor count
        a spec may read (NUM_SMS: multiprocessor_count()); ValueError
        naming the problem."""
        return self._check_packed(self._pack(values), num_sms)

    def launch(self, values, device, stream, grid=None):
        """Launches on the raw CUDA stream handle `stream` (0: the default
        stream) of device index `device`, after the checks of check():
        ValueError for a bad argument, LaunchError for what the GPU
        refused.  `grid` (x, y, z), when given, is the grid, in place of
        the one the kernel's launch spec computes (a kernel launched with
        a grid needs no launch spec)."""
        self._launch_packed(self._pack(values), device, stream, grid)

    def fixed_launch(self, sources):
        """A launch of this kernel for a caller whose arguments keep their
        kinds from launch to launch (tile/launcher.py's kernel[grid](...)
        after the first call): ``launch(values, device, stream, grid)``,
        where ``values`` is a sequence and ``sources`` names, for each
        parameter in order, (the index of its value in ``values``, the
        element type of a pointer's tensor or None).  A pointer's value is
        a tensor (its address is data_ptr()), an integer's an int or bool,
        a float's a float or int.  The arguments are packed by one
        precompiled function, checked by the runtime as launch()'s are;
        ValueError and LaunchError as launch() raises them."""
        if self.descriptors or len(sources) != len(self._kinds):
            raise ValueError(f"{self.name}: fixed_launch takes one source a parameter "
                             f"({len(self._kinds)}), and no tensor descriptors")
        codes = _dtype_codes()
        fields, formats = [], []
        for (name, kind), (index, element_type) in zip(self._kinds, sources):
            value = f"values[{operator.index(index)}]"
            if kind == _POINTER:
                if element_type not in codes:
                    raise ValueError(f"{self.name}: parameter {name} points to an unknown "
                                     f"element type {element_type!r}")
                fields.append(f"{_POINTER}, {codes[element_type]}, {value}.data_ptr()")
            else:
                fields.append(f"{kind}, 0, {value}")
            formats.append(_ARG_FORMATS[kind])
        lib = library()
        namespace = {
            "launch_grid": lib.optional("tileLaunchGrid"), "handle": self._handle,
            "pack": struct.Struct("=" + "".join(formats)).pack, "pack_grid": _GRID.pack,
            "failed": lambda error: (LaunchError if error == _ERROR_DEVICE else
                                     ValueError)(lib.error())}
        # Generated, so that a launch is one call that packs every argument.
        source = (f"def launch(values, device, stream, grid):\n"
                  f"    error = launch_grid(handle, device, stream, {len(fields)},\n"
                  f"                        pack({', '.join(fields)}), pack_grid(*grid))\n"
                  f"    if error:\n"
                  f"        raise failed(error)\n")
        exec(compile(source, f"<{self.name} fixed_launch>", "exec"), namespace)
        return namespace["launch"]

    def _new_buffer(self):
        return ctypes.create_string_buffer(max(1, _ARG_BYTES * len(self._names)))

    def _check_packed(self, buffer, num_sms=None):
        grid = (ctypes.c_uint32 * 3)()
        lib = library()
        if lib.tileCheck(self._handle, num_sms or 0, len(self._names), buffer, grid):
            raise ValueError(lib.error())
        return tuple(grid)

    def _launch_packed(self, buffer, device, stream, grid=None):
        lib = library()
        if grid is None:
            error = lib.tileLaunch(self._handle, device, stream, len(self._names), buffer)
        else:
            error = lib.optional("tileLaunchGrid")(
                self._handle, device, stream, len(self._names), buffer,
                (ctypes.c_uint32 * 3)(*grid))
        if error:
            raise (LaunchError if error == _ERROR_DEVICE else ValueError)(lib.error())

    def __repr__(self):
        return f"Kernel({self.name})"


_multiprocessors = {}


def multiprocessor_count(device):
    """The multiprocessor count of CUDA device index `device`, which launch
    specs read as NUM_SMS; LaunchError when there is no such device."""
    if device not in _multiprocessors:
        count = ctypes.c_int64()
        lib = library()
        if lib.tileMultiprocessorCount(device, ctypes.byref(count)):
            raise LaunchError(lib.error())
        _multiprocessors[device] = count.value
    return _multiprocessors[device]


def launch_all(launches, device, stream):
    """Launches each (kernel, values by parameter name) in order on `stream`
    of `device`, after checking all of them: a bad argument launches
    nothing.  Each kernel's arguments are packed once."""
    packed, seen = [], set()
    for kernel, values in launches:
        # A kernel launched twice packs its second arguments apart.
        buffer = kernel._new_buffer() if kernel in seen else None
        seen.add(kernel)
        packed.append((kernel, kernel._pack(values, buffer)))
    if len(packed) > 1:
        num_sms = multiprocessor_count(device)
        for kernel, buffer in packed:
            kernel._check_packed(buffer, num_sms)
    for kernel, buffer in packed:
        kernel._launch_packed(buffer, device, stream)


_codes = None


def _dtype_codes():
    """Element type name -> the runtime's code, for pointer arguments."""
    global _codes
    if _codes is None:
        lib = library()
        _codes = {name: lib.tileDTypeCode(name.encode())
                  for name in ("i1", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
                               "fp16", "bf16", "fp32", "fp64", "fp8e5", "fp8e4nv")}
    return _codes


class Bundle:
    """A folder of compiled kernels."""

    def __init__(self, directory):
        lib = library()
        self.directory = Path(directory)
        handle = ctypes.c_void_p()
        if lib.tileBundleOpen(str(self.directory).encode(), ctypes.byref(handle)):
            raise BundleError(lib.error())
        self._handle = handle
        self.warnings = [w for w in lib.tileBundleWarnings(handle).decode().split("\n") if w]
        self.kernels = [Kernel(self, lib.tileBundleKernel(handle, i))
                        for i in range(lib.tileBundleNumKernels(handle))]
        self._by_handle = {k._handle: k for k in self.kernels}
        self._selected = {}

    def find(self, name):
        """The variant named `name`, or None."""
        handle = ctypes.c_void_p()
        if library().tileBundleFind(self._handle, name.encode(), ctypes.byref(handle)):
            return None
        return self._by_handle[handle.value]

    def select(self, family, element_type=None, keys=None, length=None, capability=None):
        """The variant of `family` for `element_type` whose constexprs equal
        `keys` ({name: int or bool}), compiled for a device of compute
        capability `capability` ((major, minor); None: no device, the
        interpreter; $TILE_TARGET, if set, names the target to take), and
        among several the one for sequences of `length` (the runtime's
        choice: Bundle::select).  ValueError saying what the folder has when
        none matches."""
        keys = keys or {}
        major, minor = capability if capability is not None else (-1, -1)
        cache_key = (family, element_type, tuple(keys.items()), length, major, minor,
                     os.environ.get("TILE_TARGET"))
        kernel = self._selected.get(cache_key)
        if kernel is not None:
            return kernel
        names = (ctypes.c_char_p * max(1, len(keys)))(*(k.encode() for k in keys))
        values = (ctypes.c_int64 * max(1, len(keys)))(*(int(v) for v in keys.values()))
        handle = ctypes.c_void_p()
        lib = library()
        if lib.tileBundleSelect(self._handle, family.encode(),
                                element_type.encode() if element_type else None,
                                len(keys), names, values, -1 if length is None else length,
                                major, minor, ctypes.byref(handle)):
            raise ValueError(lib.error())
        kernel = self._selected[cache_key] = self._by_handle[handle.value]
        return kernel

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle and _library is not None:
            _library.tileBundleClose(handle)


# --------------------------------------------------------------------------
# TMA descriptors
# --------------------------------------------------------------------------

TENSOR_MAP_BYTES = 128
_OOB_FILLS = {"zero": 0, "nan": 1}
# torch's dtype names (str(tensor.dtype) without "torch.") -> the runtime's.
_TORCH_ELEMENT_TYPES = ELEMENT_TYPES


def _refuse(rule, detail):
    """The runtime's form of a broken rule, for what Python checks itself."""
    return ValueError(f"TMA descriptor: {rule}: {detail}")


def _unsigned(rule, value, bits):
    if isinstance(value, bool):
        raise _refuse(rule, f"{value!r} is not an integer")
    try:
        value = operator.index(value)   # ints, and numpy's
    except TypeError:
        raise _refuse(rule, f"{value!r} is not an integer") from None
    if not 0 <= value < 2**bits:
        raise _refuse(rule, f"{value} is not a {bits}-bit unsigned integer")
    return value


def _unsigned_list(rule, values, bits):
    if isinstance(values, (str, bytes)):
        raise _refuse(rule, f"{values!r} is not a sequence of integers")
    try:
        values = list(values)
    except TypeError:
        raise _refuse(rule, f"{values!r} is not a sequence of integers") from None
    return [_unsigned(rule, value, bits) for value in values]


class TensorMapDesc:
    """A tiled view of a tensor in GPU memory, for a TMA descriptor
    (CUtensorMap): what the runtime's tileEncodeTensorMap takes.

    Dimensions are in the driver's order, the innermost (contiguous) first:
    `global_dims` (elements) and `box_dims` (the tile copied at a time) have
    one value per dimension (1 to 5), `global_strides` the bytes between
    consecutive elements of dims 1..rank-1, `element_strides` the step
    within the box (None: all 1).  `swizzle`: the span in bytes the box is
    swizzled within in shared memory (0: none, 32, 64, 128);
    `l2_promotion`: 0 (none), 64, 128 or 256 bytes; `oob_fill`: "zero", or
    "nan" (the NaN that requests zero FMAs, floats only).
    from_tensor() makes one from a PyTorch tensor and a block shape.

    check() and encode() raise ValueError naming the rule a bad request
    breaks ("TMA descriptor: global address: ..."); encode() raises
    LaunchError when the driver is missing or refuses.
    """

    __slots__ = ("element_type", "address", "global_dims", "global_strides", "box_dims",
                 "element_strides", "swizzle", "l2_promotion", "oob_fill")

    def __init__(self, element_type, address, global_dims, global_strides, box_dims,
                 element_strides=None, swizzle=0, l2_promotion=0, oob_fill="zero"):
        self.element_type = element_type
        self.address = address
        self.global_dims = global_dims
        self.global_strides = global_strides
        self.box_dims = box_dims
        self.element_strides = element_strides
        self.swizzle = swizzle
        self.l2_promotion = l2_promotion
        self.oob_fill = oob_fill

    @classmethod
    def from_tensor(cls, tensor, block_shape, **options):
        """The view of a CUDA tensor (PyTorch's, or anything with its
        dtype, shape, stride(), element_size(), data_ptr() and device)
        copied in boxes of `block_shape` (one size per dimension, in the
        tensor's order).  Its last dimension must be contiguous; the others
        are reversed into the driver's order.  `options`: element_strides
        (in the tensor's order), swizzle, l2_promotion, oob_fill."""
        torch_name = str(tensor.dtype).removeprefix("torch.")
        element_type = _TORCH_ELEMENT_TYPES.get(torch_name)
        if element_type is None:
            raise _refuse("element type", f"{tensor.dtype} has no TMA data type (Tile's "
                          f"are {', '.join(_TORCH_ELEMENT_TYPES)})")
        if getattr(tensor.device, "type", None) != "cuda":
            raise ValueError(f"TMA descriptor: the tensor is on {tensor.device}; TMA copies "
                             f"from CUDA memory")
        shape, strides = tuple(tensor.shape), tuple(tensor.stride())
        block_shape = tuple(block_shape)
        if len(block_shape) != len(shape):
            raise _refuse("box dims", f"block shape {block_shape} for a tensor of shape "
                          f"{shape}: one size per dimension")
        if shape and shape[-1] != 1 and strides[-1] != 1:
            raise _refuse("global strides", f"the last dimension (stride {strides[-1]}) is "
                          f"not contiguous; TMA steps through it element by element")
        element_bytes = tensor.element_size()
        element_strides = options.pop("element_strides", None)
        return cls(element_type, tensor.data_ptr(), shape[::-1],
                   [stride * element_bytes for stride in strides[-2::-1]], block_shape[::-1],
                   element_strides=None if element_strides is None
                   else tuple(element_strides)[::-1], **options)

    def _arguments(self):
        """The arguments of tileCheckTensorMap.  Counts and C types are
        checked here (C arrays carry no length); the rules by the runtime."""
        codes = _dtype_codes()
        if self.element_type not in codes:
            raise _refuse("element type", f"unknown element type {self.element_type!r} "
                          f"(known: {', '.join(codes)})")
        address = _unsigned("global address", self.address, 64)
        dims = _unsigned_list("global dims", self.global_dims, 64)
        strides = _unsigned_list("global strides", () if self.global_strides is None
                                 else self.global_strides, 64)
        box = _unsigned_list("box dims", self.box_dims, 32)
        rank = len(dims)
        element_strides = (None if self.element_strides is None else
                           _unsigned_list("element strides", self.element_strides, 32))
        if 1 <= rank <= 5:   # the runtime names a wrong rank itself
            for rule, values, count in (("global strides", strides, rank - 1),
                                        ("box dims", box, rank),
                                        ("element strides", element_strides, rank)):
                if values is not None and len(values) != count:
                    raise _refuse(rule, f"{len(values)} given; rank {rank} takes {count}")
        options = []
        for rule, value in (("swizzle", self.swizzle), ("L2 promotion", self.l2_promotion)):
            if isinstance(value, bool) or not isinstance(value, int) or \
                    not -2**31 <= value < 2**31:
                raise _refuse(rule, f"{value!r} is not a number of bytes")
            options.append(value)
        if self.oob_fill not in _OOB_FILLS:
            raise _refuse("OOB fill", f"{self.oob_fill!r}; 'zero', or 'nan' (the NaN that "
                          f"requests zero FMAs)")

        def array(ctype, values):
            return (ctype * max(1, len(values)))(*values)

        return (codes[self.element_type], rank, address, array(ctypes.c_uint64, dims),
                array(ctypes.c_uint64, strides), array(ctypes.c_uint32, box),
                None if element_strides is None else array(ctypes.c_uint32, element_strides),
                *options, _OOB_FILLS[self.oob_fill])

    def check(self):
        """Checks the driver's rules, without the driver; ValueError names
        the rule broken."""
        arguments = self._arguments()
        lib = library()
        if lib.optional("tileCheckTensorMap")(*arguments):
            raise ValueError(lib.error())

    def encode(self):
        """The descriptor: TENSOR_MAP_BYTES bytes from the driver's
        cuTensorMapEncodeTiled, after check().  The driver may need a
        current CUDA context (PyTorch's, once it has used the device)."""
        arguments = self._arguments()
        lib = library()
        encoded = ctypes.create_string_buffer(TENSOR_MAP_BYTES)
        error = lib.optional("tileEncodeTensorMap")(*arguments, encoded)
        if error:
            raise (LaunchError if error == _ERROR_DEVICE else ValueError)(lib.error())
        return encoded.raw

    def __repr__(self):
        fields = ", ".join(f"{name}={value:#x}" if name == "address" and isinstance(value, int)
                           else f"{name}={value!r}"
                           for name, value in ((n, getattr(self, n)) for n in self.__slots__))
        return f"TensorMapDesc({fields})"
