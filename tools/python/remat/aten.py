"""What remat needs to know of an aten op to plan it: its FLOPs, whether its
result is a view of its first tensor operand, and whether it may run twice.

FLOPs count multiply-adds as two and one per element elsewhere
(docs/torch.md, "The op table"). An op the table does not know is planned
conservatively: never recomputed, its FLOPs its output elements, with one
warning naming it.
"""

import math

# Results that alias their first tensor operand (no new storage). An op
# with several results (`split`) is planned as an op with new ones, each its
# share of the operand: remat's views have one result.
VIEWS = frozenset("""
    _reshape_alias _unsafe_view alias as_strided chunk detach diagonal expand
    permute select slice split split_with_sizes squeeze t transpose unbind
    unfold unsqueeze unsafe_split view view_as
""".split())

# Ops whose rerun draws other numbers: never recomputed.
RANDOM = frozenset("""
    bernoulli native_dropout normal rand rand_like randint randint_like randn
    randn_like uniform
""".split())

# Ops with an effect besides their results: batch norm updates the running
# statistics it is given.
STATEFUL = frozenset(["native_batch_norm"])

# One FLOP per element of the (largest) output.
ELEMENTWISE = frozenset("""
    _to_copy abs add addcmul clamp clamp_max clamp_min clone cos div eq erf
    exp expm1 fill full full_like ge gelu gelu_backward gt hardswish
    hardswish_backward hardtanh hardtanh_backward le leaky_relu
    leaky_relu_backward log log1p logical_not lt masked_fill maximum minimum
    mul ne neg new_empty new_full new_ones new_zeros ones ones_like pow
    reciprocal relu rsqrt rsub scalar_tensor sigmoid sigmoid_backward sign
    silu silu_backward sin sqrt sub tanh tanh_backward threshold
    threshold_backward where zeros zeros_like
""".split())

# One FLOP per element of the first tensor operand (reductions, gathers).
PER_INPUT_ELEMENT = frozenset("""
    amax amin any argmax cat constant_pad_nd embedding
    embedding_dense_backward gather index index_select log_softmax
    logsumexp max mean min nll_loss_backward nll_loss_forward prod
    scatter_add stack sum var var_mean
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


# Rules that read shapes (`inputs`, `outputs`: the shapes of the tensor
# operands and results) and, where needed, the call's arguments.
_RULES = {
    "mm": lambda i, o, a: _matmul(i, o, 0),
    "bmm": lambda i, o, a: _matmul(i, o, 0),
    "addmm": lambda i, o, a: _matmul(i, o, 1) + numel(o[0]),
    "baddbmm": lambda i, o, a: _matmul(i, o, 1) + numel(o[0]),
    "convolution": lambda i, o, a: _convolution(i, o),
    "convolution_backward": lambda i, o, a: _convolution_backward(i, o, a),
    "max_pool2d_with_indices": lambda i, o, a: _pool(i, o, a),
    "max_pool2d_with_indices_backward": lambda i, o, a: numel(i[1]),
    "avg_pool2d": lambda i, o, a: _pool(i, o, a),
    "avg_pool2d_backward": lambda i, o, a: numel(i[1]),
    "_adaptive_avg_pool2d": lambda i, o, a: numel(i[0]),
    "_adaptive_avg_pool2d_backward": lambda i, o, a: numel(i[0]),
    "native_batch_norm": lambda i, o, a: 8 * numel(i[0]),
    "native_batch_norm_backward": lambda i, o, a: 12 * numel(i[1]),
    "native_layer_norm": lambda i, o, a: 8 * numel(i[0]),
    "native_layer_norm_backward": lambda i, o, a: 12 * numel(i[1]),
    "_softmax": lambda i, o, a: 5 * numel(i[0]),
    "_log_softmax": lambda i, o, a: 5 * numel(i[0]),
    "_softmax_backward_data": lambda i, o, a: 3 * numel(i[0]),
    "_log_softmax_backward_data": lambda i, o, a: 3 * numel(i[0]),
}


def op_name(target):
    """`aten.convolution.default` -> `convolution`; None for a target that
    is not an aten op overload."""
    schema = getattr(target, "_schema", None)
    if schema is None or not schema.name.startswith("aten::"):
        return None
    return schema.name[len("aten::"):]


def mutates(target):
    """Whether the op writes one of its operands (never recomputed)."""
    schema = getattr(target, "_schema", None)
    return schema is not None and any(
        arg.alias_info is not None and arg.alias_info.is_write
        for arg in schema.arguments)


def is_view(target):
    return op_name(target) in VIEWS


def may_recompute(target):
    """Whether the table knows the op and it may run twice."""
    name = op_name(target)
    if name is None or name in RANDOM or mutates(target):
        return False
    return name in VIEWS or name in ELEMENTWISE or \
        name in PER_INPUT_ELEMENT or name in _RULES


def is_pure(target):
    """Whether the op's only effect is its results: a call nothing reads
    may go."""
    return may_recompute(target) and op_name(target) not in STATEFUL


def flops(target, args, inputs, outputs):
    """The FLOPs of one call; `inputs` and `outputs` are the shapes of its
    tensor operands and results. Unknown ops: their output elements."""
    name = op_name(target)
    if name in VIEWS:
        return 0
    if name in _RULES:
        return int(_RULES[name](inputs, outputs, args))
    if name in PER_INPUT_ELEMENT and inputs:
        return numel(inputs[0])
    return max((numel(shape) for shape in outputs), default=0)
