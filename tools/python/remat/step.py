"""One training step's peak when the step runs several planned graphs
(docs/torch.md, "Graph breaks" and "Data parallel").

Dynamo hands the backend one graph per piece of the model: at a graph break,
or at each of DDP's gradient buckets. The pieces' forwards run in order and
their backwards in reverse, so while piece j runs, the tensors every earlier
piece saved for its backward are live, and so is piece j's input, the
output of piece j - 1. remat plans each piece on its own; its report gives
the piece's peak, and the partition adds what the piece's forward saves.
"""

import torch
import torch.fx as fx

from . import aot


def _storage_key(value, keep):
    """An identity for `value`'s storage, shared by its views: PyTorch keeps
    one Python object per storage while the storage lives, fake ones
    included; `keep` holds it so that its id is not reused."""
    if not isinstance(value, torch.Tensor):
        return None  # no value (an older trace's metadata)
    storage = value.untyped_storage()
    keep.append(storage)
    return id(storage)


def saved_bytes(joint_graph, forward, num_fwd_outputs, static_inputs=None):
    """`saved_bytes`, `saved_input_bytes`, `saved_handed_bytes` and
    `output_bytes` of the `forward` module: the storage its saved tensors
    (its outputs past `num_fwd_outputs`) hold, split into the joint graph's
    inputs without a gradient (a batch), its inputs with a gradient that
    are not of static lifetime (the previous piece's outputs, handed over),
    and the rest; and the storage of its outputs not saved as well, which
    the next piece reads. Each storage counts once; parameters do not.
    `static_inputs` are the indices of the primals of static lifetime
    (AOT Autograd's `static_lifetime_input_indices`): without them, every
    primal with a gradient is taken for a parameter."""
    primals, inputs, handed, keep = set(), set(), set(), []
    for index, (primal, grad) in enumerate(zip(joint_graph.primals,
                                               joint_graph.bwd_outputs)):
        key = _storage_key(aot.tensor_value(primal), keep)
        primals.add(key)
        if not isinstance(grad, fx.Node):
            inputs.add(key)
        elif static_inputs is not None and index not in static_inputs:
            handed.add(key)
    output = next(n for n in forward.graph.nodes if n.op == "output")
    values = [aot.tensor_value(n) for n in output.args[0]]
    storages = {}
    for value in values:
        key = _storage_key(value, keep)
        if key is not None:
            storages[key] = value.untyped_storage().nbytes()
    saved = {_storage_key(v, keep) for v in values[num_fwd_outputs:]}
    outputs = {_storage_key(v, keep) for v in values[:num_fwd_outputs]}
    saved -= primals - inputs - handed
    counted = {"saved_bytes": 0, "saved_input_bytes": 0,
               "saved_handed_bytes": 0, "output_bytes": 0}
    for key, size in storages.items():
        if key in saved:
            kind = ("saved_input_bytes" if key in inputs else
                    "saved_handed_bytes" if key in handed else "saved_bytes")
            counted[kind] += size
        elif key in outputs and key not in primals:
            counted["output_bytes"] += size
    return counted


def step_bytes(report, key="peak_bytes_after"):
    """A report's planned peak (`key="peak_bytes_before"`: plain
    autodiff's) as remat/measure.py measures a step: less the params and
    inputs, which the process holds before the step."""
    breakdown = report["peak_breakdown_after"]
    return report[key] - breakdown["params"] - breakdown["inputs"]


def predicted_step_bytes(reports, gradients_held=True):
    """remat's prediction of a step's peak over the pieces whose `reports`
    are given in forward order, as remat/measure.py measures it (params and
    the first piece's inputs excluded): the largest, over pieces j, of the
    tensors pieces before j saved, piece j - 1's outputs (piece j's input),
    and piece j's planned peak less its params and inputs.

    `gradients_held=False` is DDP's case: the reducer gives each parameter
    its gradient in bucket storage made with the model, not in the step, so
    a piece's parameter gradients are left out. Otherwise (graph breaks) the
    gradients of the pieces after j, already computed when j's backward
    runs, are added: those each holds at its own peak, which a report gives
    (all of them when the piece peaks at its backward's end, as an MLP's
    does; fewer otherwise, and the prediction is then low by the rest)."""
    later_grads = 0
    if gradients_held:
        later_grads = sum(r["peak_breakdown_after"]["param_grads"]
                          for r in reports)
    peak, saved_before, handed_over = 0, 0, 0
    for j, report in enumerate(reports):
        breakdown = report["peak_breakdown_after"]
        own = step_bytes(report)
        if gradients_held:
            later_grads -= breakdown["param_grads"]
        else:
            own -= breakdown["param_grads"]
        peak = max(peak, saved_before + handed_over + own + later_grads)
        saved_before += report["saved_bytes"]
        if j > 0:
            saved_before += report["saved_input_bytes"]
        # What piece j saves of its input lives on through the later
        # pieces. It is piece j - 1's output: counted already where piece
        # j - 1 saved it too, else at most what j - 1 handed over.
        saved_before += min(report.get("saved_handed_bytes", 0), handed_over)
        handed_over = report["output_bytes"]
    return peak
