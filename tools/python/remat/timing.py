"""Each node's time in runs of the joint graph, for planning with what
PyTorch's ops cost on this machine instead of their FLOPs (docs/torch.md,
"Costs: FLOPs or measured times").

FLOPs are a poor proxy on a CPU: a softmax, a layer norm or a copy moves
memory for every FLOP it does, and recomputing it costs far more than its
FLOPs say. `node_nanoseconds` runs the joint graph on copies of its example
inputs, timing every call, and leaves no trace: the tensors it would update
in place (batch norm's running statistics) are copies, and the random
number generator is restored, so the step that follows draws what it would
have drawn.
"""

import time

import torch
import torch.fx as fx
import torch.utils._pytree as pytree


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


def node_nanoseconds(joint_module, joint_inputs, runs=3):
    """{node name: nanoseconds} of every call of `joint_module` on copies
    of `joint_inputs`: the least of `runs` runs. One run's times vary by 2x
    on a busy machine, and a first call pays for its kernels' setup."""
    inputs = pytree.tree_map(
        lambda x: x.detach().clone() if isinstance(x, torch.Tensor) else x,
        joint_inputs)
    rng = torch.get_rng_state()
    least = {}
    try:
        with torch.no_grad():
            for _ in range(runs):
                interpreter = _TimingInterpreter(joint_module)
                interpreter.run(*inputs)
                for name, ns in interpreter.nanoseconds.items():
                    least[name] = min(ns, least.get(name, ns))
    finally:
        torch.set_rng_state(rng)
    return least
