"""Launch plans: one call's launches, replayed by later calls of its shape.

The attention API's Python path chooses kernels, checks layouts and index
ranges, computes grids and packs each kernel's arguments by name: tens of
microseconds of host time a call, more than the kernels of a small shape
take (the GPU then waits for the host). All of that depends on the shapes,
strides, dtype, device and mask alone, so a plan records it from a call
that took the whole path: the kernels, their grids, their scalar
arguments, which of the call's tensors each pointer argument is, and the
shapes of the tensors the call made. A later call with the same key (the
caller's: whatever decides the launches but the tensors' addresses)
allocates those tensors again and launches each kernel through
runtime.Kernel.fixed_launch, whose arguments the runtime still checks.
"""

import torch

from .. import runtime

# More keys than this (many sequence lengths, say) and the cache starts
# over: a plan is cheap to make again, an unbounded cache is not.
MAX_PLANS = 256


class _Unplannable(Exception):
    """The call's launches are not a function of the key and its tensors."""


class LaunchPlan:
    """The launches of one call, as functions of the call's input tensors
    and of the tensors it allocates."""

    def __init__(self, inputs, made, launches, device):
        """inputs: the tensors the call was given, in the order run() takes
        them; made: the tensors the call allocated, in the order run()
        returns them; launches: [(runtime.Kernel, values by parameter
        name)], as runtime.launch_all took them on `device` (a CUDA
        device index: the grids). _Unplannable when a pointer argument is
        not exactly one of these tensors' addresses."""
        num_sms = runtime.multiprocessor_count(device)
        tensors = [*inputs, *made]
        addresses = [t.data_ptr() for t in tensors]
        constants = []
        alignments = [1] * len(inputs)
        self._launches = []
        for kernel, values in launches:
            sources = []
            for param in kernel.params:
                value = values[param.name]
                if not param.is_pointer:
                    sources.append((len(tensors) + len(constants), None))
                    constants.append(value)
                    continue
                owners = [i for i, a in enumerate(addresses) if a == value.address]
                if len(owners) != 1:
                    raise _Unplannable(param.name)
                owner = owners[0]
                sources.append((owner, value.element_type))
                if owner < len(inputs):
                    alignments[owner] = max(alignments[owner], param.divisibility)
            try:
                launch = kernel.fixed_launch(sources)
            except ValueError as error:   # a kernel with tensor descriptors
                raise _Unplannable(str(error)) from error
            self._launches.append((launch, kernel.check(values, num_sms)))
        self._constants = tuple(constants)
        self._alignments = tuple(alignments)
        self._allocations = [(t.shape, t.stride(), t.dtype) for t in made]

    def run(self, inputs, device, stream):
        """The made tensors, after launching every kernel on `stream` of
        `device` over `inputs`; None, launching nothing, when an input's
        address breaks the alignment the kernels were compiled for (the
        whole path copies such a tensor)."""
        for tensor, alignment in zip(inputs, self._alignments):
            if tensor.data_ptr() % alignment:
                return None
        made = [torch.empty_strided(shape, stride, dtype=dtype, device=device)
                for shape, stride, dtype in self._allocations]
        values = (*inputs, *made, *self._constants)
        for launch, grid in self._launches:
            launch(values, device.index, stream, grid)
        return made


class PlanCache:
    """Launch plans by key."""

    def __init__(self):
        self._plans = {}

    def get(self, key):
        """The plan for `key`, or None."""
        return self._plans.get(key)

    def record(self, key, inputs, made, launches, device):
        """Makes the plan for `key` from a call that launched `launches`
        on CUDA device index `device` over `inputs` and the tensors it
        `made`; records nothing when the launches do not follow from
        them."""
        try:
            plan = LaunchPlan(inputs, made, launches, device)
        except _Unplannable:
            return
        if len(self._plans) >= MAX_PLANS:
            self._plans.clear()
        self._plans[key] = plan

    def __len__(self):
        return len(self._plans)
