"""What remat needs to know of an aten op to plan it: its FLOPs, whether its
result is a view of its first tensor operand, whether it may run twice, and
the workspace it allocates and frees while it runs.

FLOPs count multiply-adds as two and one per element elsewhere
(docs/torch.md, "The op table"). An op the table does not know is planned
conservatively: never recomputed, its FLOPs its output elements, with one
warning naming it.

The rules read the call's arguments with every tensor replaced by its shape
(remat/fx.py passes them so).
"""

import math

import torch

# Results that alias their first tensor operand (no new storage). An op
# with several results (`split`) is planned as an op with new ones, each its
# share of the operand: remat's views have one result.
VIEWS = frozenset("""
    _reshape_alias _unsafe_view alias as_strided chunk detach diagonal expand
    permute select slice split split_with_sizes squeeze t transpose unbind
    unfold unsqueeze unsafe_split view view_as
""".split())

# Ops whose rerun draws other numbers: never recomputed. PyTorch 2 also
# tags them `nondeterministic_seeded`.
RANDOM = frozenset("""
    bernoulli native_dropout normal rand rand_like randint randint_like randn
    randn_like uniform
""".split())

# Attention ops, random only with dropout: the position of `dropout_p`.
_ATTENTION_DROPOUT = {"_scaled_dot_product_flash_attention_for_cpu": 3}

# Batch norm's running statistics, by position. In training mode a batch
# norm reads them only to make the new running statistics, which the
# backward's batch norm reads and, in training, ignores.
_RUNNING_STATS = {"_native_batch_norm_legit_functional": (3, 4)}

# Ops with an effect their schema does not declare: `native_batch_norm`
# writes the running statistics it is given. PyTorch 2's joint graphs are
# functional (`_native_batch_norm_legit_functional` returns the new
# statistics instead); should the old op appear, it is never recomputed.
STATEFUL = frozenset(["native_batch_norm"])

# Inductor's own prims, which its decompositions put in the joint graph:
# max pooling that keeps each maximum's offset in its window (int8) and
# turns the offsets into PyTorch's int64 indices for the backward.
INDUCTOR_PRIMS = frozenset(["_low_memory_max_pool_with_offsets",
                            "_low_memory_max_pool_offsets_to_indices"])

# One FLOP per element of the (largest) output.
ELEMENTWISE = frozenset("""
    _low_memory_max_pool_offsets_to_indices _to_copy abs add addcmul clamp
    clamp_max clamp_min clone copy cos div eq erf exp expm1 fill flip full
    full_like ge gelu gelu_backward gt hardswish hardswish_backward hardtanh
    hardtanh_backward le leaky_relu leaky_relu_backward lift_fresh_copy log
    log1p logical_not lt masked_fill maximum minimum mul
    native_dropout_backward ne neg new_empty new_empty_strided new_full
    new_ones new_zeros ones ones_like pow reciprocal relu rsqrt rsub
    scalar_tensor select_backward select_scatter sigmoid sigmoid_backward sign
    silu silu_backward sin slice_backward slice_scatter sqrt sub tanh
    tanh_backward threshold threshold_backward where zeros zeros_like
""".split())

# One FLOP per element of the first tensor operand (reductions, gathers,
# scatters).
PER_INPUT_ELEMENT = frozenset("""
    _unsafe_index_put _unsafe_masked_index_put_accumulate amax amin any argmax
    cat constant_pad_nd embedding embedding_dense_backward gather index
    index_add index_put index_select log_softmax logsumexp max mean min
    nll_loss_backward nll_loss_forward prod scatter_add stack sum var var_mean
""".split())


def numel(shape):
    return math.prod(shape)


def _matmul(inputs, outputs, inner_operand):
    """2 * output elements * the contracted size, read from the last
    dimension of the tensor operand `inner_operand`."""
    return 2 * numel(outputs[0]) * inputs[inner_operand][-1]


def _convolution(inputs, outputs):
    weight = inputs[1]
    return 2 * numel(outputs[0]) * numel(weight[1:])


def _convolution_backward(inputs, outputs, args):
    grad_out, weight = inputs[0], inputs[2]
    per_output = 2 * numel(grad_out) * numel(weight[1:])
    mask = args[-1]
    return (per_output * (int(mask[0]) + int(mask[1])) +
            numel(grad_out) * int(mask[2]))


def _pool(inputs, outputs, args):
    return numel(outputs[0]) * numel(args[1])


def _attention(query, key, value, causal, backward):
    """Attention over `query` (..., L, E), `key` (..., S, E) and `value`
    (..., S, Ev): the scores and their product with the values,
    2 * L * S * (E + Ev) per batch and head, and 5 per score for the softmax.
    The backward computes the scores again and the gradients of the values,
    of the probabilities, of the query and of the key:
    2 * L * S * (3E + 2Ev), and 5 per score. A causal mask halves both."""
    *batch, length, width = query
    scores = numel(batch) * length * key[-2]
    matmuls = 3 * width + 2 * value[-1] if backward else width + value[-1]
    total = scores * (2 * matmuls + 5)
    return total // 2 if causal else total


def _arg(args, index, default):
    return args[index] if len(args) > index else default


# Rules that read shapes (`inputs`, `outputs`: the shapes of the tensor
# operands and results) and, where needed, the call's arguments (`a`, each
# tensor its shape).
_RULES = {
    "mm": lambda i, o, a: _matmul(i, o, 0),
    "bmm": lambda i, o, a: _matmul(i, o, 0),
    "addmm": lambda i, o, a: _matmul(i, o, 1) + numel(o[0]),
    "baddbmm": lambda i, o, a: _matmul(i, o, 1) + numel(o[0]),
    "convolution": lambda i, o, a: _convolution(i, o),
    "convolution_backward": lambda i, o, a: _convolution_backward(i, o, a),
    "max_pool2d_with_indices": lambda i, o, a: _pool(i, o, a),
    "_low_memory_max_pool_with_offsets": lambda i, o, a: _pool(i, o, a),
    "max_pool2d_with_indices_backward": lambda i, o, a: numel(i[1]),
    "avg_pool2d": lambda i, o, a: _pool(i, o, a),
    "avg_pool2d_backward": lambda i, o, a: numel(i[1]),
    "_adaptive_avg_pool2d": lambda i, o, a: numel(i[0]),
    "_adaptive_avg_pool2d_backward": lambda i, o, a: numel(i[0]),
    "native_batch_norm": lambda i, o, a: 8 * numel(i[0]),
    "_native_batch_norm_legit": lambda i, o, a: 8 * numel(i[0]),
    "_native_batch_norm_legit_functional": lambda i, o, a: 8 * numel(i[0]),
    # Evaluation mode: the statistics are given.
    "_native_batch_norm_legit_no_training": lambda i, o, a: 4 * numel(i[0]),
    "native_batch_norm_backward": lambda i, o, a: 12 * numel(i[1]),
    "native_layer_norm": lambda i, o, a: 8 * numel(i[0]),
    "native_layer_norm_backward": lambda i, o, a: 12 * numel(i[1]),
    "_softmax": lambda i, o, a: 5 * numel(i[0]),
    "_log_softmax": lambda i, o, a: 5 * numel(i[0]),
    "_softmax_backward_data": lambda i, o, a: 3 * numel(i[0]),
    "_log_softmax_backward_data": lambda i, o, a: 3 * numel(i[0]),
    "_scaled_dot_product_flash_attention_for_cpu": lambda i, o, a: _attention(
        a[0], a[1], a[2], _arg(a, 4, False), backward=False),
    "_scaled_dot_product_flash_attention_for_cpu_backward":
        lambda i, o, a: _attention(a[1], a[2], a[3], a[7], backward=True),
}


def _mkldnn_reorders(operand):
    """Whether PyTorch runs a convolution whose first operand is `operand`
    with oneDNN in its plain (NCHW) layout, which oneDNN reorders to a
    blocked one and back. A channels-last operand it reads as it is."""
    device = getattr(operand, "device", None)
    return device is not None and device.type == "cpu" and \
        torch.backends.mkldnn.is_available() and \
        torch.backends.mkldnn.enabled and operand.is_contiguous()


def _convolution_backward_workspace(inputs, args):
    """oneDNN's convolution backward reorders `grad_output` to its blocked
    layout and, for the weight's gradient, the input too; the forward
    reorders its output. Measured on PyTorch 2.14.1 (docs/torch.md,
    "torch.compile"): a 64-channel 3x3 convolution of a 16 MiB batch holds
    16 MiB beside its operands and result, its backward 32 MiB."""
    grad_out, data = inputs[0], inputs[1]
    mask = args[-1]
    return numel(grad_out) + numel(data) * int(mask[1])


# Elements, of its first operand's dtype, that a call on oneDNN holds beside
# its operands and results while it runs.
_MKLDNN_WORKSPACE = {
    "convolution": lambda i, o, a: numel(o[0]),
    "convolution_backward": lambda i, o, a: _convolution_backward_workspace(
        i, a),
}


def workspace_bytes(target, args, inputs, outputs, operand):
    """The bytes a call allocates and frees while it runs, beside its
    operands and results: what the op's step adds to the plan's memory
    (remat/fx.py). `args`, `inputs` and `outputs` as for `flops`;
    `operand` the tensor value (a FakeTensor) of its first tensor operand,
    whose device, dtype and layout it reads. 0 where the table knows of
    none: on a GPU, channels-last, or a value with no device."""
    name = op_name(target)
    if name in _MKLDNN_WORKSPACE and _mkldnn_reorders(operand):
        elements = _MKLDNN_WORKSPACE[name](inputs, outputs, args)
        return int(elements) * operand.dtype.itemsize
    return 0


def op_name(target):
    """`aten.convolution.default` -> `convolution`, and the same for one of
    `INDUCTOR_PRIMS`; None for any other target."""
    schema = getattr(target, "_schema", None)
    if schema is None:
        return None
    namespace, _, name = schema.name.partition("::")
    if namespace == "aten" or (namespace == "prims" and
                               name in INDUCTOR_PRIMS):
        return name
    return None


def mutates(target):
    """Whether the op writes one of its operands (never recomputed)."""
    schema = getattr(target, "_schema", None)
    return schema is not None and any(
        arg.alias_info is not None and arg.alias_info.is_write
        for arg in schema.arguments)


def is_view(target):
    return op_name(target) in VIEWS


def is_random(target, args=()):
    """Whether the call draws random numbers."""
    name = op_name(target)
    if name in _ATTENTION_DROPOUT:
        return _arg(args, _ATTENTION_DROPOUT[name], 0.0) != 0
    return name in RANDOM or \
        torch.Tag.nondeterministic_seeded in getattr(target, "tags", ())


def running_stats(target, args):
    """The positions of the running statistics a training-mode batch norm
    reads only to update them; () for any other call."""
    name = op_name(target)
    if name in _RUNNING_STATS and _arg(args, 5, False):
        return _RUNNING_STATS[name]
    return ()


def must_not_rerun(target, args=()):
    """Whether a second run of the call would change the step: it draws
    random numbers, writes an operand or has an effect its schema hides."""
    return op_name(target) in STATEFUL or is_random(target, args) or \
        mutates(target)


def may_recompute(target, args=()):
    """Whether the table knows the op and the call may run twice (or not
    at all, when nothing reads it)."""
    name = op_name(target)
    known = name in VIEWS or name in ELEMENTWISE or \
        name in PER_INPUT_ELEMENT or name in _RULES
    return known and not must_not_rerun(target, args)


def flops(target, args, inputs, outputs):
    """The FLOPs of one call; `args` are its arguments, each tensor its
    shape, and `inputs` and `outputs` the shapes of its tensor operands and
    results. Unknown ops: their output elements."""
    name = op_name(target)
    if name in VIEWS:
        return 0
    if name in _RULES:
        return int(_RULES[name](inputs, outputs, args))
    if name in PER_INPUT_ELEMENT and inputs:
        return numel(inputs[0])
    return max((numel(shape) for shape in outputs), default=0)
