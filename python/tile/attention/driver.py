"""Launching compiled kernels through the CUDA driver (ctypes over
libcuda.so.1), in the primary context PyTorch's runtime uses.

Standard library only: PyTorch hands in device indices, raw pointers and
the raw stream handle.  Mirrors lib/Runtime/CudaBackend.cpp.
"""

import ctypes
import math
import struct
import threading

# CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: a kernel may use more than
# 48 KiB of dynamic shared memory only after raising this.
_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
DEFAULT_SHARED_LIMIT = 48 * 1024

# Launch limits of compute capability 9.0.
GRID_LIMITS = (2**31 - 1, 65535, 65535)

_INT_RANGES = {"i32": (-2**31, 2**31 - 1), "i64": (-2**63, 2**63 - 1)}


class DevicePointer:
    """A device address and the element type of what it points to
    ('fp16', 'bf16', 'fp32'): what a pointer parameter is given."""

    __slots__ = ("address", "element_type", "label")

    def __init__(self, address, element_type, label=None):
        self.address = address
        self.element_type = element_type
        self.label = label

    def __repr__(self):
        return f"DevicePointer({self.address:#x}, {self.element_type})"


# One 8-byte slot an argument (cuLaunchKernel reads each through its own
# pointer, so each only needs its type's alignment): pointers as u64, then
# i32, i64 and fp32, native byte order, packed by one struct call.
_SLOT_FORMATS = {"i32": "i4x", "i64": "q", "fp32": "f4x"}
_SLOT_BYTES = {"i32": 4, "i64": 8, "fp32": 4}
_FP32_MAX = 3.4028234663852886e38


class ArgumentLayout:
    """Where each of a kernel's arguments goes in the buffer the launch
    passes: computed once a kernel."""

    def __init__(self, spec):
        formats, self.sizes = [], []
        for param in spec.params:
            if param.is_pointer:
                formats.append("Q")
                self.sizes.append(8)
            elif param.type in _SLOT_FORMATS:
                formats.append(_SLOT_FORMATS[param.type])
                self.sizes.append(_SLOT_BYTES[param.type])
            else:
                raise ValueError(f"{spec.name}: parameter {param.name} has a type the "
                                 f"runtime cannot pass: {param.type}")
        self.struct = struct.Struct("=" + "".join(formats))


_layouts = {}   # KernelSpec -> ArgumentLayout


def argument_layout(spec):
    layout = _layouts.get(spec)
    if layout is None:
        layout = _layouts[spec] = ArgumentLayout(spec)
    return layout


class PackedArguments:
    """The kernel parameters as cuLaunchKernel takes them: an array of
    pointers, one to each argument's slot of one buffer, in the manifest's
    order.  `fill` repacks the same buffer (the driver copies the values
    when the launch is made, so a buffer may serve the next launch)."""

    def __init__(self, layout):
        self.layout = layout
        self.buffer = ctypes.create_string_buffer(max(layout.struct.size, 1))
        base = ctypes.addressof(self.buffer)
        count = len(layout.sizes)
        self.array = (ctypes.c_void_p * count)(*(base + 8 * i for i in range(count)))

    def fill(self, ordered_values):
        self.layout.struct.pack_into(self.buffer, 0, *ordered_values)
        return self

    def raw_bytes(self):
        """Each argument's bytes, for tests and debugging."""
        raw = self.buffer.raw
        return [raw[8 * i:8 * i + size] for i, size in enumerate(self.layout.sizes)]


_MISSING = object()


def check_arguments(spec, values):
    """Checks `values` (parameter name -> DevicePointer, int or float)
    against the kernel's parameters; returns what goes in each slot, in the
    manifest's order (a pointer's address, the number).  Raises ValueError
    naming the parameter when a value is missing, extra, of the wrong kind,
    out of range, or breaks the divisibility the kernel was compiled for.
    Runs on every launch: the messages are built only for an error."""
    params = spec.params
    if len(values) != len(params):
        _refuse_names(spec, values)
    ordered = []
    for param in params:
        value = values.get(param.name, _MISSING)
        if value is _MISSING:
            _refuse_names(spec, values)
        if param.is_pointer:
            if (type(value) is not DevicePointer
                    or value.element_type != param.element_type
                    or value.address % param.divisibility):
                _check_pointer(spec, param, value)
            ordered.append(value.address)
        elif param.type in _INT_RANGES:
            low, high = _INT_RANGES[param.type]
            if (type(value) is not int or not low <= value <= high
                    or value % param.divisibility):
                _check_integer(spec, param, value)
                value = int(value)   # an int subclass that passed
            ordered.append(value)
        elif param.type == "fp32":
            if (isinstance(value, bool) or not isinstance(value, (int, float))
                    or abs(value) > _FP32_MAX and math.isfinite(value)):
                raise ValueError(f"{spec.name}: parameter {param.name} is fp32, not "
                                 f"{value!r}")
            ordered.append(value)
        else:
            raise ValueError(f"{spec.name}: parameter {param.name} has a type the "
                             f"runtime cannot pass: {param.type}")
    return ordered


def pack_arguments(spec, values):
    """check_arguments, packed into a buffer of their own."""
    ordered = check_arguments(spec, values)
    return PackedArguments(argument_layout(spec)).fill(ordered)


def _refuse_names(spec, values):
    names = [p.name for p in spec.params]
    missing = [n for n in names if n not in values]
    extra = [n for n in values if n not in names]
    raise ValueError(f"{spec.name} takes {names}; missing {missing}, unexpected {extra}")


def _check_pointer(spec, param, value):
    """The full check of a pointer argument the fast test did not pass."""
    where = f"{spec.name}: parameter {param.name}"
    if not isinstance(value, DevicePointer):
        raise ValueError(f"{where} is a pointer ({param.type}), not {value!r}")
    if value.element_type != param.element_type:
        raise ValueError(f"{where} points to {param.element_type}, but "
                         f"{value.label or 'the tensor'} holds {value.element_type}")
    if value.address % param.divisibility:
        raise ValueError(f"{where} was compiled for {param.divisibility}-byte aligned "
                         f"addresses, but {value.label or 'the tensor'} starts at "
                         f"{value.address:#x}")


def _check_integer(spec, param, value):
    """The full check of an integer argument the fast test did not pass."""
    where = f"{spec.name}: parameter {param.name}"
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{where} is {param.type}, not {value!r}")
    low, high = _INT_RANGES[param.type]
    if not low <= value <= high:
        raise ValueError(f"{where} = {value} does not fit in {param.type}")
    if value % param.divisibility:
        raise ValueError(f"{where} was compiled for multiples of "
                         f"{param.divisibility}, but it is {value}")


def check_grid(grid, name):
    for axis, (size, limit) in enumerate(zip(grid, GRID_LIMITS)):
        if not 1 <= size <= limit:
            raise ValueError(f"{name}: grid dimension {'xyz'[axis]} = {size} lies "
                             f"outside [1, {limit}]")


class CudaError(RuntimeError):
    """A driver call failed."""


class CudaDriver:
    """The few driver entry points the attention API needs, bound once."""

    def __init__(self, library="libcuda.so.1"):
        try:
            self._lib = ctypes.CDLL(library)
        except OSError as error:
            raise RuntimeError(
                f"the NVIDIA driver ({library}) could not be loaded: {error}. Tile's "
                "kernels need an NVIDIA GPU and its driver") from None
        void_p, c_int, c_uint = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint
        signatures = {
            "cuInit": [c_uint],
            "cuGetErrorString": [c_int, ctypes.POINTER(ctypes.c_char_p)],
            "cuDeviceGet": [ctypes.POINTER(c_int), c_int],
            "cuDevicePrimaryCtxRetain": [ctypes.POINTER(void_p), c_int],
            "cuCtxGetCurrent": [ctypes.POINTER(void_p)],
            "cuCtxSetCurrent": [void_p],
            "cuModuleLoadData": [ctypes.POINTER(void_p), ctypes.c_char_p],
            "cuModuleGetFunction": [ctypes.POINTER(void_p), void_p, ctypes.c_char_p],
            "cuFuncSetAttribute": [void_p, c_int, c_int],
            "cuLaunchKernel": [void_p, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint,
                               c_uint, void_p, ctypes.POINTER(void_p), ctypes.POINTER(void_p)],
        }
        for name, argtypes in signatures.items():
            try:
                function = getattr(self._lib, name)
            except AttributeError:
                raise RuntimeError(f"{library} lacks {name}: the NVIDIA driver is too "
                                   "old for Tile") from None
            function.argtypes = argtypes
            function.restype = c_int
            setattr(self, name, function)
        self._lock = threading.Lock()
        self._contexts = {}    # device index -> primary context
        self._functions = {}   # (device index, manifest path) -> CUfunction
        # Each thread's argument buffers: .by_spec, KernelSpec -> PackedArguments.
        self._thread_local = threading.local()
        self._check(self.cuInit(0), "cuInit")

    def _check(self, result, what):
        if result != 0:
            text = ctypes.c_char_p()
            self.cuGetErrorString(result, ctypes.byref(text))
            reason = text.value.decode() if text.value else f"CUDA error {result}"
            raise CudaError(f"{what} failed: {reason}")

    def _make_current(self, device_index):
        """Makes the device's primary context (the one PyTorch's runtime
        uses) current on this thread."""
        context = self._contexts.get(device_index)
        if context is None:
            device = ctypes.c_int()
            self._check(self.cuDeviceGet(ctypes.byref(device), device_index), "cuDeviceGet")
            handle = ctypes.c_void_p()
            self._check(self.cuDevicePrimaryCtxRetain(ctypes.byref(handle), device),
                        "cuDevicePrimaryCtxRetain")
            context = self._contexts[device_index] = handle.value
        current = ctypes.c_void_p()
        self._check(self.cuCtxGetCurrent(ctypes.byref(current)), "cuCtxGetCurrent")
        if current.value != context:
            self._check(self.cuCtxSetCurrent(context), "cuCtxSetCurrent")

    def _function(self, spec, device_index):
        key = (device_index, spec.manifest_path)
        function = self._functions.get(key)
        if function is None:
            with self._lock:
                function = self._functions.get(key)
                if function is None:
                    function = self._load(spec)
                    self._functions[key] = function
        return function

    def _load(self, spec):
        module = ctypes.c_void_p()
        self._check(self.cuModuleLoadData(ctypes.byref(module), spec.read_image()),
                    f"loading the GPU code of {spec.name} ({spec.image_path})")
        function = ctypes.c_void_p()
        self._check(self.cuModuleGetFunction(ctypes.byref(function), module,
                                             spec.entry.encode()),
                    f"finding entry {spec.entry} of {spec.name}")
        if spec.shared_bytes > DEFAULT_SHARED_LIMIT:
            self._check(self.cuFuncSetAttribute(function, _MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                spec.shared_bytes),
                        f"allowing {spec.name} {spec.shared_bytes} bytes of shared memory")
        return function.value

    def _arguments_buffer(self, spec):
        """This thread's buffer for `spec`'s arguments, made on first use."""
        by_spec = getattr(self._thread_local, "by_spec", None)
        if by_spec is None:
            by_spec = self._thread_local.by_spec = {}
        packed = by_spec.get(spec)
        if packed is None:
            packed = by_spec[spec] = PackedArguments(argument_layout(spec))
        return packed

    def launch_all(self, launches, device_index, stream):
        """Launches each (spec, grid (x, y, z), values by parameter name) in
        order on the raw stream handle `stream` of device `device_index`,
        after checking the grids and arguments of all of them: a bad
        argument launches nothing."""
        checked = []
        for spec, grid, values in launches:
            check_grid(grid, spec.name)
            checked.append((spec, grid, check_arguments(spec, values)))
        self._make_current(device_index)
        for spec, grid, ordered in checked:
            function = self._function(spec, device_index)
            packed = self._arguments_buffer(spec).fill(ordered)
            self._check(self.cuLaunchKernel(function, grid[0], grid[1], grid[2],
                                            spec.threads, 1, 1, spec.shared_bytes,
                                            stream, packed.array, None),
                        f"launching {spec.name} over grid {tuple(grid)}")


_driver = None
_driver_lock = threading.Lock()


def get_driver():
    """The process's CudaDriver, created on first use."""
    global _driver
    if _driver is None:
        with _driver_lock:
            if _driver is None:
                _driver = CudaDriver()
    return _driver
