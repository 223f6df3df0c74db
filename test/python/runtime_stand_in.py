"""What the attention tests put in place of the runtime's launches on the
GPU path, so that it runs on CPU tensors: device pointers made from the
tensors (and kept, to find them again), and the launches of the whole
path (_launch_all) and of launch plans (Kernel.fixed_launch), the runtime
checking every argument and computing the grid as for a real launch.
Subclasses say what a launch computes (launch(kernel, values))."""

from tile import runtime
from tile.attention import functional


class RuntimeStandIn:
    def __init__(self, num_sms):
        self.num_sms = num_sms   # what launch specs read as NUM_SMS
        self.tensors = {}
        self.whole_paths = 0     # calls of launch_all: the path that makes plans

    def pointer(self, tensor):
        """Stands in for functional._device_pointer."""
        self.tensors[tensor.data_ptr()] = tensor
        return runtime.DevicePointer(tensor.data_ptr(),
                                     functional._ELEMENT_TYPES[tensor.dtype])

    def launch_all(self, device, launches):
        """Stands in for functional._launch_all."""
        self.whole_paths += 1
        for kernel, values in launches:
            self.launch(kernel, values)

    def fixed_launch(self, kernel, sources):
        """Stands in for runtime.Kernel.fixed_launch, which launch plans
        replay calls through: the values by name again, from the call's
        tensors and the plan's constants, launched as launch() does."""
        def launch(values, device, stream, grid):
            named = {}
            for param, (index, element_type) in zip(kernel.params, sources):
                value = values[index]
                if param.is_pointer:
                    self.tensors[value.data_ptr()] = value
                    value = runtime.DevicePointer(value.data_ptr(), element_type)
                named[param.name] = value
            assert kernel.check(named, self.num_sms) == grid
            self.launch(kernel, named)
        return launch

    def launch(self, kernel, values):
        raise NotImplementedError
