"""Tensor descriptors made on the host and passed to kernels, as Triton's
``triton.tools.tensor_descriptor.TensorDescriptor``:

    desc = tile.TensorDescriptor.from_tensor(a, block_shape=[64, 64])
    kernel.launch({"a_desc": desc, ...}, device, stream)

A kernel parameter of signature type ``tensordesc<fp16[64, 64]>`` is, in
the kernel, the descriptor ``tl.make_tensor_descriptor`` returns; at the
kernel's boundary it is plain parameters (the frontend expands it, the
launch expands the descriptor given for it).  For a parameter ``NAME`` of
rank ``r`` they are, in order:

    NAME__base                   *T, 16-byte aligned (divisibility 16)
    NAME__shape0 .. NAME__shape{r-1}     i32
    NAME__stride0 .. NAME__stride{r-2}   i64, multiples of 16 bytes

(strides in elements; the last stride is the constant 1 and no parameter).
The kernel's metadata lists its descriptors under ``tensor_descriptors``
(docs/kernel-metadata.md), which ``tile.runtime.Kernel`` reads to expand
the descriptors of a launch after checking them against the signature.

Standard library only: the frontend uses the naming, the runtime the
checks, and neither needs PyTorch.
"""

import operator

__all__ = ["TensorDescriptor", "expand_descriptors", "hidden_names", "stride_divisibility"]

# A TMA descriptor has 1 to 5 dimensions; so does a Tile descriptor.
MAX_RANK = 5
# The base's alignment and the strides' multiple, in bytes (the TMA's).
ALIGNMENT = 16

# Element types by the names torch and numpy give their dtypes (str(dtype)
# without "torch."), in the runtime's spelling.
ELEMENT_TYPES = {"float16": "fp16", "bfloat16": "bf16", "float32": "fp32",
                 "float64": "fp64", "int8": "i8", "int16": "i16", "int32": "i32",
                 "int64": "i64", "float8_e5m2": "fp8e5", "float8_e4m3fn": "fp8e4nv"}
ELEMENT_BYTES = {"i8": 1, "i16": 2, "i32": 4, "i64": 8, "fp16": 2, "bf16": 2,
                 "fp32": 4, "fp64": 8, "fp8e5": 1, "fp8e4nv": 1}

_SEPARATOR = "__"


def hidden_names(name, rank):
    """(base, [shape names], [stride names]) of descriptor parameter
    ``name`` of rank ``rank``: the kernel's parameters it stands for."""
    prefix = name + _SEPARATOR
    return (prefix + "base", [f"{prefix}shape{i}" for i in range(rank)],
            [f"{prefix}stride{i}" for i in range(rank - 1)])


def stride_divisibility(element_type):
    """The multiple (in elements) the strides of a descriptor of
    ``element_type`` are promised to be: 16 bytes' worth."""
    return max(1, ALIGNMENT // ELEMENT_BYTES[element_type])


def _element_type(base):
    """The runtime's name of the element type ``base`` points to: a
    DevicePointer's, else that of its ``dtype`` (torch, numpy), or None."""
    element_type = getattr(base, "element_type", None)
    if isinstance(element_type, str):
        return element_type
    dtype = getattr(base, "dtype", None)
    if dtype is None:
        return None
    return ELEMENT_TYPES.get(str(dtype).removeprefix("torch."))


def _address(base):
    """The device address of ``base`` (a DevicePointer's ``address``, else
    ``data_ptr()``), or None when it has none (a numpy array for the
    interpreter)."""
    address = getattr(base, "address", None)
    if isinstance(address, int):
        return address
    data_ptr = getattr(base, "data_ptr", None)
    return data_ptr() if callable(data_ptr) else None


def _int_list(what, values):
    if isinstance(values, (str, bytes)):
        raise TypeError(f"TensorDescriptor: {what} must be a sequence of integers, "
                        f"not {values!r}")
    try:
        values = list(values)
    except TypeError:
        raise TypeError(f"TensorDescriptor: {what} must be a sequence of integers, "
                        f"not {values!r}") from None
    out = []
    for value in values:
        if isinstance(value, bool):
            raise TypeError(f"TensorDescriptor: {what} must be integers, got {value!r}")
        try:
            out.append(operator.index(value))   # ints, numpy's, torch.Size's
        except TypeError:
            raise TypeError(f"TensorDescriptor: {what} must be integers, "
                            f"got {value!r}") from None
    return out


class TensorDescriptor:
    """A tensor in GPU memory and the blocks a kernel loads and stores of
    it, made on the host: Triton's ``TensorDescriptor(base, shape, strides,
    block_shape)``.  ``base``: a tensor (PyTorch's, or anything with
    ``dtype`` and ``data_ptr()``) or a ``tile.runtime.DevicePointer``;
    ``shape``, ``strides`` (elements) and ``block_shape``: one integer per
    dimension (1 to 5).  ``padding``: "zero", what Tile's host descriptors
    read outside the tensor (Triton's "nan" is refused at launch).

    It is checked against the kernel's parameter at launch (block shape,
    element type, rank, last stride 1, 16-byte aligned base, strides of
    16 bytes' multiples): ValueError naming the parameter."""

    __slots__ = ("base", "shape", "strides", "block_shape", "padding")

    def __init__(self, base, shape, strides, block_shape, padding="zero"):
        self.base = base
        self.shape = _int_list("shape", shape)
        self.strides = _int_list("strides", strides)
        self.block_shape = _int_list("block_shape", block_shape)
        rank = len(self.shape)
        if not 1 <= rank <= MAX_RANK:
            raise ValueError(f"TensorDescriptor: a descriptor has 1 to {MAX_RANK} "
                             f"dimensions, got shape {self.shape}")
        for what, values in (("strides", self.strides), ("block_shape", self.block_shape)):
            if len(values) != rank:
                raise ValueError(f"TensorDescriptor: {what} {values} for shape {self.shape}: "
                                 f"one entry per dimension")
        if padding not in ("zero", "nan"):
            raise ValueError(f"TensorDescriptor: padding is 'zero' or 'nan', not {padding!r}")
        self.padding = padding

    @classmethod
    def from_tensor(cls, tensor, block_shape, padding="zero"):
        """The descriptor of all of ``tensor`` (its shape and strides), in
        blocks of ``block_shape``."""
        return cls(tensor, tensor.shape, tensor.stride(), block_shape, padding)

    @property
    def element_type(self):
        """The runtime's name of the base's element type ('fp16'), or None."""
        return _element_type(self.base)

    def __repr__(self):
        return (f"TensorDescriptor({self.element_type or type(self.base).__name__}, "
                f"shape={self.shape}, strides={self.strides}, "
                f"block_shape={self.block_shape}, padding={self.padding!r})")


class DescriptorParam:
    """A kernel's descriptor parameter, from an entry of its metadata's
    ``tensor_descriptors``: its name, type, element type, block shape and
    the names of the parameters it expands to."""

    __slots__ = ("name", "type", "element_type", "block_shape", "base", "shape", "strides")

    def __init__(self, entry):
        self.name = entry["name"]
        self.type = entry["type"]
        self.element_type = entry["element_type"]
        self.block_shape = list(entry["block_shape"])
        self.base = entry["base"]
        self.shape = list(entry["shape"])
        self.strides = list(entry["strides"])

    @property
    def hidden(self):
        """The names of the parameters it stands for, in order."""
        return [self.base, *self.shape, *self.strides]

    def arguments(self, desc, kernel):
        """The values of the hidden parameters (by name) for descriptor
        ``desc``, the base as given; ValueError naming what does not fit."""
        where = f"{kernel}: parameter {self.name} ({self.type})"
        if not isinstance(desc, TensorDescriptor):
            raise ValueError(f"{where} takes a tile.TensorDescriptor, not {desc!r}")
        rank = len(self.block_shape)
        if len(desc.shape) != rank:
            raise ValueError(f"{where} has rank {rank}; the descriptor has shape "
                             f"{desc.shape}")
        if desc.block_shape != self.block_shape:
            raise ValueError(f"{where} was compiled for blocks of {self.block_shape}; the "
                             f"descriptor's block shape is {desc.block_shape}")
        element_type = desc.element_type
        if element_type != self.element_type:
            raise ValueError(f"{where} takes {self.element_type} elements; the "
                             f"descriptor's base holds "
                             f"{element_type or repr(getattr(desc.base, 'dtype', desc.base))}")
        if desc.padding != "zero":
            raise ValueError(f"{where} reads zeros outside the tensor; the descriptor asks "
                             f"for padding {desc.padding!r}")
        if desc.strides[-1] != 1:
            raise ValueError(f"{where}: the last stride must be 1 (the innermost dimension "
                             f"contiguous), got strides {desc.strides}")
        for i, size in enumerate(desc.shape):
            if not 0 <= size < 2**31:
                raise ValueError(f"{where}: shape[{i}] = {size} is outside [0, 2**31)")
        element_bytes = ELEMENT_BYTES[self.element_type]
        for i, stride in enumerate(desc.strides[:-1]):
            if not -2**63 <= stride < 2**63:
                raise ValueError(f"{where}: stride[{i}] = {stride} does not fit in 64 bits")
            if stride * element_bytes % ALIGNMENT:
                raise ValueError(
                    f"{where}: stride[{i}] = {stride} elements ({stride * element_bytes} "
                    f"bytes) is not a multiple of {ALIGNMENT} bytes")
        address = _address(desc.base)
        if address is not None and address % ALIGNMENT:
            raise ValueError(f"{where}: the base address {address:#x} is not "
                             f"{ALIGNMENT}-byte aligned")
        values = {self.base: desc.base}
        values.update(zip(self.shape, desc.shape))
        values.update(zip(self.strides, desc.strides))
        return values


def descriptor_params(metadata):
    """The descriptor parameters a kernel's metadata lists, by name."""
    return {entry["name"]: DescriptorParam(entry)
            for entry in metadata.get("tensor_descriptors", ())}


def expand_descriptors(descriptors, values, kernel, param_types):
    """``values`` (arguments by parameter name) with each descriptor given
    for a descriptor parameter replaced by the values of its hidden
    parameters (``descriptors``: descriptor_params(); ``param_types``: the
    kernel's parameters' types by name).  ValueError for a descriptor given
    to any other parameter, for anything else given to a descriptor
    parameter, and for a descriptor that does not fit."""
    out = {}
    for name, value in values.items():
        param = descriptors.get(name)
        if param is not None:
            for hidden, argument in param.arguments(value, kernel).items():
                if hidden in values:
                    raise ValueError(f"{kernel}: {hidden} is given, and the descriptor "
                                     f"{name} gives it too")
                out[hidden] = argument
        elif isinstance(value, TensorDescriptor):
            what = (f"a {param_types[name]} parameter" if name in param_types
                    else "no parameter")
            raise ValueError(f"{kernel}: {name} is given a tile.TensorDescriptor, but it is "
                             f"{what}; only tensordesc<...> parameters take one "
                             f"({', '.join(descriptors) or 'none here'})")
        else:
            out[name] = value
    return out
