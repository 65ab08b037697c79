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
output), both may be recomputed, and both run in the same pass. A forward
value that only the backward reads, and that is no smaller than what it
reads, counts as the backward's (`_pass`): saving it would save nothing
over saving what it reads, and the plan runs it in the backward, where
Inductor fuses it. A value with several readers stays an op, as remat may
want to save it, but in the backward: there Inductor computes a pointwise
value in each of its fused readers instead of writing it, as long as its
computation stays small (`_inlined`), so it is a node of each reader's
chain.

Two more joins follow how Inductor lowers a scatter (the tied embedding's
gradient, `index_put` with `accumulate`, in GPT-2 and BERT): the fill a
scatter writes into is the scatter's own buffer, and a pointwise op that
alone reads the scatter's result writes in place of it.

A pointwise kernel also writes its result into the buffer of an operand of
the same type that nothing reads after it (Inductor's `inplace_buffers`;
the saved tensors the backward reads are donated to it), where the
operand's other readers ran in earlier kernels. Whether nothing reads it
later depends on the plan's order, so the op only names its candidates
(`inplace_operands`: operands whose other readers run in the other pass or
before the op) and remat's memory simulation decides.
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


def _joins_reader(node, reader, backward, in_backward):
    """Whether `node`, fusible and with `reader` as its one use, runs in
    `reader`'s kernel; `in_backward`: whether it runs in the backward
    (`_pass`)."""
    tags, reader_tags = _tags(node), _tags(reader)
    if node.target in _FILLS and not node.all_input_nodes:
        # A fill reads nothing, so it may run in either pass.
        return reader.target in _SCATTERS and reader.args[0] is node
    if in_backward != (reader in backward):
        return False
    if node.target in _SCATTERS:
        # In place: so only a result of the scatter's size and type.
        return (torch.Tag.pointwise in reader_tags and
                _same_tensor_type(node, reader))
    return (torch.Tag.pointwise in tags and
            torch.Tag.nondeterministic_seeded not in tags and
            (torch.Tag.pointwise in reader_tags or
             torch.Tag.reduction in reader_tags))


# Inductor computes a pointwise value read by several fused kernels in each
# of them instead of writing it, unless its computation (with what is fused
# into it) reads more than `realize_reads_threshold` buffers, is large
# (`realize_opcount_threshold` ops, about this many aten ops), or on a CPU
# runs one of these ops (`should_realize_on_reuse`).
_INLINED_READS = 4
_INLINED_NODES = 10
_REALIZED_ON_CPU = frozenset(["exp", "sigmoid"])


def _tree(node, into):
    """`node` and the producers that fuse into it, and theirs, each once."""
    tree, stack = {}, [node]  # a dict: ordered, and a set
    while stack:
        member = stack.pop()
        if member in tree:
            continue  # reached twice: a value inlined into two members
        tree[member] = None
        stack.extend(p for p in member.all_input_nodes
                     if member in into.get(p, ()))
    return list(tree)


def _base(node):
    """The node whose buffer `node` is, through views."""
    while node.op == "call_function" and aten.is_view(node.target):
        node = node.args[0]
    return node


def storage_bytes(node):
    """The bytes of the buffer `node` is, through views."""
    value = aot.tensor_value(_base(node))
    return 0 if value is None else value.numel() * value.element_size()


def _reads(tree):
    """The nodes the nodes of `tree` read from outside it."""
    return {i for m in tree for i in m.all_input_nodes if i not in tree}


def _pass(node, readers, backward, into):
    """Whether `node` runs in the backward: a node of the backward, or a
    forward value that only the backward reads and that is no smaller than
    what it reads (the one-hot targets of a cross-entropy's gradient, from
    the integer targets; the `exp` of its log-softmax). Saving it saves no
    memory over saving what it reads, so the plan runs it in the backward,
    where Inductor fuses it with its readers, as PyTorch's partitioners do.
    A smaller one (a ReLU's 1-byte mask of a 4-byte value) stays in the
    forward, where the plan may save it instead."""
    if node in backward:
        return True
    if not readers or not all(r in backward for r in readers):
        return False
    read = {_base(i) for i in _reads(_tree(node, into))}
    return sum(map(storage_bytes, read)) <= storage_bytes(node)


def _inlined(node, readers, backward, pinned, into):
    """Whether the pointwise `node`, read by several `readers`, runs inside
    each of them. Only where it runs in the backward (`_pass`): another
    forward value may be what the plan saves, and then it is written."""
    tags = _tags(node)
    if not _pass(node, readers, backward, into) or \
            torch.Tag.pointwise not in tags or \
            torch.Tag.nondeterministic_seeded in tags:
        return False
    if not all(_fusible(r, pinned) and r in backward and
               not aten.is_view(r.target) and
               (torch.Tag.pointwise in _tags(r) or
                torch.Tag.reduction in _tags(r)) for r in readers):
        return False
    tree = _tree(node, into)
    # A fill or an iota reads nothing: it is computed where it is read.
    buffers = {b for b in map(_base, _reads(tree))
               if b.op != "call_function" or b.all_input_nodes}
    return (len(tree) <= _INLINED_NODES and len(buffers) <= _INLINED_READS
            and not any(aten.op_name(m.target) in _REALIZED_ON_CPU
                        for m in tree))


def chains(joint, backward, pinned):
    """{last node: the chain's nodes in graph order, itself last} for every
    chain of more than one node in `joint`'s graph, and the set of nodes
    that are part of a chain but not last. A value inlined into several
    readers (`_inlined`) is a node of each of their chains. `backward` is
    the set of the backward's nodes; `pinned(node)` whether a copy of it
    would read a primal the forward updated."""
    into = {}  # a producer's readers, for each producer that fuses
    for node in joint.graph.nodes:  # producers first
        if not _fusible(node, pinned) or aot.tensor_value(node) is None:
            continue
        readers = list(node.users)
        if len(readers) == 1 and _fusible(readers[0], pinned) and \
                _joins_reader(node, readers[0], backward,
                              _pass(node, readers, backward, into)):
            into[node] = readers
        elif len(readers) > 1 and _inlined(node, readers, backward, pinned,
                                           into):
            into[node] = readers
    order = {n: i for i, n in enumerate(joint.graph.nodes)}
    members = {}
    for node in joint.graph.nodes:
        if node in into:
            continue
        chain = _tree(node, into)
        if len(chain) > 1:
            members[node] = sorted(chain, key=order.__getitem__)
    return members, set(into)


def _runs_before(reader, op, order):
    """Whether `op` reads, through any path, what `reader` computes: then
    `reader` ran before it, in an earlier kernel or in the loop of its own
    kernel that `op`'s loop follows. A walk back from `op` that stops at
    nodes before `reader` in `order`."""
    stack, seen = [op], {op}
    while stack:
        node = stack.pop()
        for producer in node.all_input_nodes:
            if producer is reader:
                return True
            if producer not in seen and order[producer] > order[reader]:
                seen.add(producer)
                stack.append(producer)
    return False


def inplace_operands(members, inputs, result, readers, backward, order):
    """The indices into `inputs` (the op's operands, in order) whose buffer
    the kernel of the chain `members` may write `result` into, where nothing
    reads it later: every member pointwise, and an operand of the result's
    shape and type, read at the result's index (no view but `alias`), whose
    other readers all run in the other pass or before the op. Inductor
    writes in place only over a buffer whose other readers ran in earlier
    kernels or earlier in the same one (the op's ancestors), and a sibling
    reader in the same pass may share the op's kernel. `readers(node)`
    gives the ops (chains by their last node, the graph's `output` node too)
    that read `node`, through views; `backward` is the set of the backward's
    nodes; `order` numbers the graph's nodes."""
    if not all(torch.Tag.pointwise in _tags(m) for m in members):
        return []
    op, in_backward = members[-1], members[-1] in backward

    def done_elsewhere(node):
        return all(r is op or (r.op != "output" and
                               ((r in backward) != in_backward or
                                _runs_before(r, op, order)))
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
            and done_elsewhere(buffer(node))]
