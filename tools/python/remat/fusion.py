"""The pointwise chains a fusing compiler runs as one kernel, as one op.

Inductor fuses a pointwise op into the pointwise op or reduction that reads
it: the fused kernel computes the producer's values in registers and never
writes them to memory. remat plans what the compiler runs, so each such
chain becomes one op of the text IR (remat/fx.py): it reads what the chain
reads from outside, holds only its last node's result, and costs the sum of
its nodes' FLOPs. Planned one node at a time instead, a chain looks like
several full-size tensors to save or recompute that no kernel makes, which
hides the cheap plans: the training batch norm Inductor decomposes into
`sub`, `mul` and `add` around `var_mean`, or the vocabulary-wide
`sub`/`exp` of a cross-entropy (docs/torch.md, "Fused pointwise chains").

A producer joins its reader only where nothing is lost by it: it is
pointwise and deterministic, has one reader and no other use (not an
output), and both run in the same pass and may be recomputed. A value with
several readers stays an op, as remat may want to save it.

Two more joins follow how Inductor lowers a scatter (the tied embedding's
gradient, `index_put` with `accumulate`, in GPT-2 and BERT): the fill a
scatter writes into is the scatter's own buffer, and a pointwise op that
alone reads the scatter's result writes in place of it.

A pointwise kernel also writes its result into the buffer of an operand of
the same type that nothing reads after it (Inductor's `inplace_buffers`;
the saved tensors the backward reads are donated to it), where the
operand's other readers ran in earlier kernels. Whether nothing reads it
later depends on the plan's order, so the op only names its candidates
(`inplace_operands`: operands whose other readers are in the other pass, so
in another kernel) and remat's memory simulation decides.
"""

import torch

from . import aot
from . import aten


def _tags(node):
    return getattr(node.target, "tags", ())


def _fusible(node, pinned):
    """Whether `node` may be part of a chain: an aten call remat may rerun
    (aten.may_recompute) whose copies read nothing the forward updated
    (`pinned` says which do)."""
    return (node.op == "call_function" and
            aten.may_recompute(node.target, node.args) and
            not pinned(node))


# Ops whose result is a copy of operand 0 with some elements written or
# added to: Inductor fills the result's buffer with operand 0 and scatters
# into it.
_SCATTERS = frozenset([
    torch.ops.aten.index_put.default,
    torch.ops.aten._unsafe_index_put.default,
    torch.ops.aten._unsafe_masked_index_put_accumulate.default,
    torch.ops.aten.scatter_add.default,
    torch.ops.aten.index_add.default,
])
_FILLS = frozenset([torch.ops.aten.full.default, torch.ops.aten.zeros.default])


def _same_tensor_type(a, b):
    a, b = aot.tensor_value(a), aot.tensor_value(b)
    return (a is not None and b is not None and a.shape == b.shape and
            a.dtype == b.dtype)


def _joins_reader(node, reader, backward):
    """Whether `node`, fusible and with `reader` as its one use, runs in
    `reader`'s kernel."""
    tags, reader_tags = _tags(node), _tags(reader)
    if node.target in _FILLS and not node.all_input_nodes:
        # A fill reads nothing, so it may run in either pass.
        return reader.target in _SCATTERS and reader.args[0] is node
    if (node in backward) != (reader in backward):
        return False
    if node.target in _SCATTERS:
        # In place: so only a result of the scatter's size and type.
        return (torch.Tag.pointwise in reader_tags and
                _same_tensor_type(node, reader))
    return (torch.Tag.pointwise in tags and
            torch.Tag.nondeterministic_seeded not in tags and
            (torch.Tag.pointwise in reader_tags or
             torch.Tag.reduction in reader_tags))


def chains(joint, backward, pinned):
    """{last node: the chain's nodes in graph order, itself last} for every
    chain of more than one node in `joint`'s graph, and the set of nodes
    that are part of a chain but not last. `backward` is the set of the
    backward's nodes; `pinned(node)` whether a copy of it would read a
    primal the forward updated."""
    into = {}  # a producer's reader, for each producer that fuses
    for node in joint.graph.nodes:
        if not _fusible(node, pinned) or len(node.users) != 1 or \
                aot.tensor_value(node) is None:
            continue
        (reader,) = node.users
        if _fusible(reader, pinned) and _joins_reader(node, reader, backward):
            into[node] = reader
    order = {n: i for i, n in enumerate(joint.graph.nodes)}
    members = {}
    for node in joint.graph.nodes:
        if node in into:
            continue
        chain = [node]
        # A tree: a node's producers fuse into it, and theirs into them.
        stack = [p for p in node.all_input_nodes if into.get(p) is node]
        while stack:
            producer = stack.pop()
            chain.append(producer)
            stack.extend(p for p in producer.all_input_nodes
                         if into.get(p) is producer)
        if len(chain) > 1:
            members[node] = sorted(chain, key=order.__getitem__)
    return members, set(into)


def inplace_operands(members, inputs, result, readers, backward):
    """The indices into `inputs` (the op's operands, in order) whose buffer
    the kernel of the chain `members` may write `result` into, where nothing
    reads it later: every member pointwise, and an operand of the result's
    shape and type, read at the result's index (no view but `alias`), whose
    other readers all run in the other pass. Inductor writes in place only over a
    buffer whose other readers ran in earlier kernels, and a reader in the
    same pass may be fused with this kernel (a sibling reading the same
    buffer). `readers(node)` gives the ops (chains by their last node, the
    graph's `output` node too) that read `node`, through views; `backward`
    is the set of the backward's nodes."""
    if not all(torch.Tag.pointwise in _tags(m) for m in members):
        return []
    op, in_backward = members[-1], members[-1] in backward

    def other_pass_only(node):
        return all(r is op or (r.op != "output" and
                               (r in backward) != in_backward)
                   for r in readers(node))

    def buffer(node):
        """The node whose buffer `node` reads at the same index, or None."""
        while node.op == "call_function" and aten.op_name(node.target) == \
                "alias":
            node = node.args[0]
        is_buffer = node.op == "call_function" and \
            not aten.is_view(node.target)
        return node if is_buffer else None

    return [i for i, node in enumerate(inputs)
            if buffer(node) is not None and _same_tensor_type(node, result)
            and other_pass_only(buffer(node))]
