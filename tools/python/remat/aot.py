"""What remat reads of AOT Autograd's joint graph, and what it must hand
back, in PyTorch 2. Written out here rather than imported: PyTorch's own
helpers (`_is_tangent`, `_extract_fwd_bwd_outputs` in
torch/_functorch/partitioners.py) are private and have changed between
releases.

The partition function is called as
`partition_fn(joint_module, joint_inputs, *, num_fwd_outputs,
static_lifetime_input_indices)` (`_partition_joint_graph_into_fw_bw` in
torch/_functorch/_aot_autograd/graph_compile.py). The joint graph's
placeholders are the primals (`primals_*`), then the tangents
(`tangents_*`); `joint_inputs` are FakeTensors, as is each node's
`meta["val"]` (a tuple of them for an op with several results). Its
outputs, flattened, are the forward's `num_fwd_outputs` outputs (updated
buffers such as batch norm's running statistics among them: the graph is
functional), then one gradient or None per primal.

The forward module must return the forward outputs, then the saved tensors,
then any saved symbolic ints; the backward module takes the saved symbolic
ints, then the saved tensors, then the tangents, and returns the gradients
(`_extract_fwd_bwd_modules`). PyTorch tells saved tensors from symbolic ints
by `meta["val"]` (`_categorize_saved_tensors_for_backward`). remat plans
static shapes only, so it saves no symbolic ints.
"""

import torch


def is_tangent(node):
    """Tangent placeholders are named `tangents_*` (AOT Autograd's own
    `_is_tangent` asks the same)."""
    return node.op == "placeholder" and "tangents" in str(node.target)


def _is_rng_seed(node):
    # The seed and offset inputs of functionalized random numbers
    # (torch._functorch.config.functionalize_rng_ops, off by default).
    return node.op == "placeholder" and any(
        key in str(node.target) for key in
        ("fwd_seed", "fwd_base_offset", "bwd_seed", "bwd_base_offset"))


def placeholders(joint):
    """The joint graph's primals and tangents, in order; a ValueError for a
    joint graph remat cannot plan."""
    nodes = [n for n in joint.graph.nodes if n.op == "placeholder"]
    if any(_is_rng_seed(n) for n in nodes):
        raise ValueError("remat: the joint graph has functionalized random "
                         "numbers (functionalize_rng_ops), which remat does "
                         "not plan")
    return ([n for n in nodes if not is_tangent(n)],
            [n for n in nodes if is_tangent(n)])


def _leaves(value):
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def split_outputs(joint, num_fwd_outputs, num_primals):
    """The forward's outputs and the gradients (a node or None per primal).
    Without `num_fwd_outputs` (a caller that does not pass it),
    the outputs past one per primal are the forward's."""
    output = next(n for n in joint.graph.nodes if n.op == "output")
    outputs = _leaves(output.args)
    if num_fwd_outputs is None:
        num_fwd_outputs = len(outputs) - num_primals
    fwd, grads = outputs[:num_fwd_outputs], outputs[num_fwd_outputs:]
    if len(grads) != num_primals:
        raise ValueError(f"remat: the joint graph returns {len(grads)} "
                         f"gradients for {num_primals} primals "
                         f"(num_fwd_outputs={num_fwd_outputs})")
    return fwd, grads


def updated_primals(joint, primals):
    """The primals the forward updates (batch norm's running statistics):
    AOT Autograd copies their new values, forward outputs, into them when
    the forward returns, so the backward may neither save nor read them.
    Named by the output's descriptors (`meta["desc"]`): an update's
    `mutated_input` is the primal's own descriptor."""
    output = next(n for n in joint.graph.nodes if n.op == "output")
    updated = [d.mutated_input for d in _leaves(output.meta.get("desc", []))
               if hasattr(d, "mutated_input")]
    return {p for p in primals if p.meta.get("desc") in updated}


def constants(joint):
    """The joint graph's `get_attr` nodes: tensors the traced module holds
    (`torch.tensor(2.0)` in `forward` becomes `_tensor_constant0`, which
    `lift_fresh_copy` reads); a ValueError for one that is no tensor."""
    nodes = [n for n in joint.graph.nodes if n.op == "get_attr"]
    for node in nodes:
        if tensor_value(node) is None:
            raise ValueError(f"remat: the joint graph reads {node.target}, "
                             "which is not a tensor; remat plans tensors "
                             "only")
    return nodes


def tensor_value(node):
    """The FakeTensor (or, from an older trace, the TensorMetadata) of a
    node with one tensor result; None for any other node."""
    val = node.meta.get("val")
    if isinstance(val, torch.Tensor):
        return val
    meta = node.meta.get("tensor_meta")
    return meta if hasattr(meta, "shape") else None


def static_shape(node):
    """The shape of `node`'s tensor as ints; a ValueError for a symbolic
    one (a trace with dynamic shapes)."""
    shape = tensor_value(node).shape
    if not all(isinstance(d, int) for d in shape):
        raise ValueError(f"remat: {node.name} has the symbolic shape "
                         f"{tuple(shape)}; remat plans static shapes only")
    return tuple(shape)


def copy_meta(new, original):
    """Gives an emitted node `original`'s metadata, as PyTorch's extraction
    does: AOT Autograd reads `val` of the saved values and outputs."""
    new.meta = dict(original.meta)
    return new
