"""One training step's memory as Linux counts it, the way
scripts/bench-torch-partition.py and the tests measure remat's plans in
PyTorch (docs/torch.md, "Measuring").

Run the process with `MALLOC_MMAP_THRESHOLD_=65536` (`MMAP_ENV`): glibc then
returns every block of 64 KiB or more to the system when it is freed, so the
resident set follows PyTorch's live tensors.
"""

import gc

MMAP_ENV = {"MALLOC_MMAP_THRESHOLD_": "65536"}


def resident_bytes(field="VmRSS"):
    """`VmRSS` (now) or `VmHWM` (the peak) of this process."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def step_peak(step, parameters):
    """The peak resident bytes `step()` adds over what the process holds
    before it, gradients dropped (and dropped again after): the memory one
    training step needs beside the model and its batch."""
    for p in parameters:
        p.grad = None
    gc.collect()
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")  # resets VmHWM to VmRSS
    baseline = resident_bytes()
    step()
    peak = resident_bytes("VmHWM") - baseline
    for p in parameters:
        p.grad = None
    return peak
