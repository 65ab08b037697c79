"""Each node's time in runs of the joint graph, for planning with what
PyTorch's ops cost on this machine instead of their FLOPs (docs/torch.md,
"Costs: FLOPs or measured times").

FLOPs are a poor proxy on a CPU: a softmax, a layer norm or a copy moves
memory for every FLOP it does, and recomputing it costs far more than its
FLOPs say. `node_nanoseconds` runs the joint graph on tensors like its
example inputs, timing every call, and leaves no trace: the joint graph is
functional (batch norm returns its new running statistics), and the random
number generator is restored, so the step that follows draws what it would
have drawn.
"""

import time

import torch
import torch.fx as fx


class _TimingInterpreter(fx.Interpreter):

    def __init__(self, module):
        super().__init__(module)
        self.nanoseconds = {}

    def run_node(self, node):
        if node.op != "call_function":
            return super().run_node(node)
        started = time.perf_counter_ns()
        result = super().run_node(node)
        self.nanoseconds[node.name] = time.perf_counter_ns() - started
        return result


def _real(example):
    """A real tensor like `example`, a FakeTensor (PyTorch 2 traces with
    them): uniform in [0, 1) if floating (valid as a variance, too), else
    zeros (valid as an index); the values change no op's time here."""
    tensor = torch.empty_strided(example.shape, example.stride(),
                                 dtype=example.dtype, device=example.device)
    if tensor.is_floating_point() or tensor.is_complex():
        return tensor.uniform_()
    return tensor.zero_()


def _real_inputs(joint_inputs):
    """`joint_inputs`, the primals' and the tangents' lists (or one flat
    list), with each tensor made real."""
    if isinstance(joint_inputs, tuple):
        return [_real_inputs(part) for part in joint_inputs]
    return [_real(x) if isinstance(x, torch.Tensor) else x
            for x in joint_inputs]


def node_nanoseconds(joint_module, joint_inputs, runs=3):
    """{node name: nanoseconds} of every call of `joint_module` on real
    tensors like `joint_inputs`: the least of `runs` runs. One run's times
    vary by 2x on a busy machine, and a first call pays for its kernels'
    setup."""
    least = {}
    with torch.random.fork_rng(devices=_cuda_devices(joint_inputs)):
        inputs = _real_inputs(joint_inputs)
        with torch.no_grad():
            for _ in range(runs):
                interpreter = _TimingInterpreter(joint_module)
                interpreter.run(*inputs)
                for name, ns in interpreter.nanoseconds.items():
                    least[name] = min(ns, least.get(name, ns))
    return least


def _cuda_devices(joint_inputs):
    """The CUDA devices whose generators the run may draw from."""
    parts = joint_inputs if isinstance(joint_inputs, tuple) else [joint_inputs]
    return sorted({x.device.index or 0 for part in parts for x in part
                   if isinstance(x, torch.Tensor) and x.device.type == "cuda"})
