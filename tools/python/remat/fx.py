"""AOT Autograd's joint graph as a remat training graph in text IR.

Primals are `param` (they have a gradient) or `input` declarations, and so
are the module's tensor constants (`torch.tensor(2.0)` in `forward`); every
other node an `extern` op (`extern_view` for a view) that names the node and
its aten op and carries its result types and FLOPs (remat/aten.py); an op
that holds a workspace while it runs (aten.workspace_bytes) has one more
result, `<node>.workspace`, that nothing reads: remat counts it at the op's
step only, as the op holds it (docs/memory-model.md, "Live ranges"). Nodes
that the tangents do not reach are the forward pass and come first; each
tangent is an op of the backward that reads the scalar of `forward.end`,
which reads every forward output, so that the whole backward follows the
forward. A tuple-valued node is one op with a result per `getitem` that
reads it. With `fuse`, a chain of pointwise nodes that a fusing compiler
runs as one kernel is one op (remat/fusion.py), and a pointwise op names
the operands its result may be written in place of (`inplace`).
remat/aot.py says what PyTorch 2's joint graph holds; remat/modules.py
builds the modules back from the plan.
"""

import operator
import warnings

import torch
import torch.fx as fx
from torch.fx.node import map_arg

from . import aot
from . import aten
from . import fusion

TANGENT = "tangent"
# The op that ends the forward: it reads the forward's outputs, which then
# die unless the backward reads them (the step's loss reads them and drops
# them, docs/torch.md "Measuring"), and every tangent reads its scalar
# result. It is the graph's first output, the loss remat's planners look
# for. Not a name fx gives a node (those have no dot).
FORWARD_END = "forward.end"

_DTYPES = {
    torch.float32: "f32", torch.float64: "f64", torch.float16: "f16",
    torch.bfloat16: "bf16", torch.int8: "i8", torch.int32: "i32",
    torch.int64: "i64", torch.bool: "bool",
    # remat has no such dtype: one of the same width, for the bytes.
    torch.uint8: "i8", torch.int16: "f16", torch.complex64: "f64",
}


def _type_text(node):
    dtype = _DTYPES.get(aot.tensor_value(node).dtype)
    if dtype is None:
        raise ValueError(f"remat: no remat dtype for {node.name}'s "
                         f"{aot.tensor_value(node).dtype}")
    return f"{dtype}[{','.join(str(d) for d in aot.static_shape(node))}]"


def _quote(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _shapes_for_tensors(args):
    """`args` with each tensor node replaced by its shape, for aten.flops."""
    return map_arg(args, lambda n: aot.static_shape(n)
                   if aot.tensor_value(n) is not None else n)


class JointGraph:
    """One joint graph and its text IR, with what the way back needs."""

    def __init__(self, joint, num_fwd_outputs=None, nanoseconds=None,
                 workspaces=True, fuse=False):
        self.joint = joint
        # Whether ops' workspaces become results nothing reads.
        self.workspaces = workspaces
        # Whether a fusing compiler runs the graph: chains are one op, and a
        # pointwise op's result may be written in place of a dead operand.
        self.fuse = fuse
        # Measured time of each node (remat/timing.py): each op's `cost`.
        self.nanoseconds = nanoseconds
        self.primals, self.tangents = aot.placeholders(joint)
        self.fwd_outputs, self.bwd_outputs = aot.split_outputs(
            joint, num_fwd_outputs, len(self.primals))
        self.updated = aot.updated_primals(joint, self.primals)
        self.constants = aot.constants(joint)
        self.tangent_names = {t.name for t in self.tangents}
        self.nodes = {n.name: n for n in joint.graph.nodes}
        self.order = {n: i for i, n in enumerate(joint.graph.nodes)}
        self.backward = self._backward_nodes()
        # With `fuse`, the pointwise chains a fusing compiler runs as one
        # kernel (remat/fusion.py): each is one op, named by its last node.
        self.chains, self.fused = ({}, set()) if not fuse else \
            fusion.chains(joint, self.backward, self._reads_updated)
        # The last nodes of the chains each chain member is part of.
        self.chains_of = {}
        for last, chain in self.chains.items():
            for member in chain:
                self.chains_of.setdefault(member, []).append(last)
        # For each op's node: its tensor operands (in operand order) and,
        # for a tuple, the index of each result.
        self.operands = {}
        self.tuple_indices = {}
        # The remat values of each op's results: a copy's differ.
        self.results_of = {}
        # remat's value for each joint node that has one.
        self.value_of = {}
        self.unknown = set()
        self.forward_ops = 0
        # The graph's outputs, as remat's values.
        self.output_values = []
        self.text = self._translate()

    def _backward_nodes(self):
        reached = set(self.tangents)
        for node in self.joint.graph.nodes:
            if node.op == "call_function" and any(
                    i in reached for i in node.all_input_nodes):
                reached.add(node)
        return reached

    def _translate(self):
        lines = ["graph @joint {"]
        for primal, grad in zip(self.primals, self.bwd_outputs):
            kind = "param" if isinstance(grad, fx.Node) else "input"
            lines.append(f"  {kind} %{primal.name} : {_type_text(primal)}")
            self.value_of[primal] = primal.name
        # Each module reads a constant itself: an input that is never saved.
        for constant in self.constants:
            lines.append(f"  input %{constant.name} : {_type_text(constant)}")
            self.value_of[constant] = constant.name
        calls = [n for n in self.joint.graph.nodes
                 if n.op == "call_function" and
                 n.target is not operator.getitem and n not in self.fused]
        forward = [n for n in calls if n not in self.backward]
        for node in forward:
            lines.append(self._op_line(node))
        reads = ", ".join("%" + self.value_of[n] for n in self.fwd_outputs
                          if isinstance(n, fx.Node))
        lines.append(f"  %{FORWARD_END} = extern({reads}) {{fn = "
                     f"{_quote(FORWARD_END)}, types = \"f32[]\"}}")
        self.forward_ops = (len(self.primals) + len(self.constants) +
                            len(forward) + 1)
        for tangent in self.tangents:
            self.value_of[tangent] = tangent.name
            lines.append(
                f"  %{tangent.name} = extern(%{FORWARD_END}) {{fn = "
                f"{_quote(TANGENT)}, types = {_quote(_type_text(tangent))}, "
                f"node = {_quote(tangent.name)}}}")
        for node in calls:
            if node in self.backward:
                lines.append(self._op_line(node))
        # The tangents are not outputs: AOT Autograd in PyTorch 2 hands them
        # to the backward in the list it empties (remat/torch.py), so they
        # go after their last use (docs/torch.md, "Measuring"). Nor are the
        # forward's outputs: the step's loss reads them and drops them.
        self.output_values = [FORWARD_END] + list(dict.fromkeys(
            self.value_of[out] for out in self.bwd_outputs
            if isinstance(out, fx.Node)))
        lines += [f"  output %{value}" for value in self.output_values]
        lines.append("}")
        return "\n".join(lines) + "\n"

    def _results(self, node):
        """The nodes of `node`'s tensor results: itself, or the `getitem`s
        that read its tuple."""
        if aot.tensor_value(node) is not None:
            return [node]
        results = sorted((u for u in node.users
                          if u.target is operator.getitem and
                          aot.tensor_value(u) is not None),
                         key=lambda u: u.args[1])
        if not results:
            raise ValueError(f"remat: node {node.name} ({node.target}) has "
                             "no tensor result")
        self.tuple_indices[node.name] = [u.args[1] for u in results]
        return results

    def _reading_ops(self, node):
        """The ops that read `node`, through views: each by its node, a
        chain's by its last node, and the graph's `output` node."""
        readers, stack = set(), list(node.users)
        while stack:
            user = stack.pop()
            if user.op == "call_function" and aten.is_view(user.target):
                stack.extend(user.users)
            else:
                readers.update(self.chains_of.get(user, [user]))
        return readers

    def _reads_updated(self, node):
        """Whether a copy of `node` in the backward would read a primal the
        forward updated, other than a batch norm's running statistics
        (aten.running_stats)."""
        ignored = {node.args[i] for i in aten.running_stats(node.target,
                                                             node.args)}
        return any(i in self.updated and i not in ignored
                   for i in node.all_input_nodes)

    def _op_line(self, node):
        target = node.target
        members = self.chains.get(node, [node])
        inputs = list(dict.fromkeys(
            i for m in members for i in m.all_input_nodes
            if i not in members))
        for i in inputs:
            if i not in self.value_of:
                raise ValueError(f"remat: node {node.name} reads {i.name}, "
                                 "which has no tensor value")
        self.operands[node.name] = inputs
        results = self._results(node)
        for r in results:
            self.value_of[r] = r.name
        self.results_of[node.name] = [r.name for r in results]
        types = [_type_text(r) for r in results]
        name = "+".join(str(m.target) for m in members)
        known = aten.may_recompute(target, node.args)
        if not known and not aten.must_not_rerun(target, node.args) and \
                name not in self.unknown:
            self.unknown.add(name)
            warnings.warn(f"remat: no entry for {name} in remat's op table; "
                          "planned conservatively (never recomputed)",
                          stacklevel=2)
        kind = "extern_view" if aten.is_view(target) and len(types) == 1 \
            and inputs else "extern"
        costs = [self._costs(m, results if m is node else [m])
                 for m in members]
        op_flops = sum(flops for flops, _ in costs)
        workspace = max(workspace for _, workspace in costs)
        names = ["%" + self.value_of[r] for r in results]
        if workspace:
            names.append(f"%{node.name}.workspace")
            types.append(f"i8[{workspace}]")
        attrs = [f"fn = {_quote(name)}", f"types = {_quote(' '.join(types))}",
                 f"flops = {op_flops}", f"node = {_quote(node.name)}"]
        if self.nanoseconds is not None:
            cost = sum(self.nanoseconds[m.name] for m in members)
            attrs.append(f"cost = {cost}")
        if not known or self._reads_updated(node):
            attrs.append("recompute = false")
        inplace = self.fuse and kind == "extern" and len(results) == 1 and \
            not workspace and \
            fusion.inplace_operands(members, inputs, results[0],
                                    self._reading_ops, self.backward,
                                    self.order)
        if inplace:
            attrs.append(f"inplace = [{', '.join(map(str, inplace))}]")
        operands = ", ".join("%" + self.value_of[i] for i in inputs)
        results_text = ", ".join(names)
        return f"  {results_text} = {kind}({operands}) {{{', '.join(attrs)}}}"

    def _costs(self, node, results):
        """(FLOPs, workspace bytes) of one node whose tensor results are
        `results`."""
        tensors = [i for i in node.all_input_nodes
                   if aot.tensor_value(i) is not None]
        in_shapes = [aot.static_shape(i) for i in tensors]
        out_shapes = [aot.static_shape(r) for r in results]
        args = _shapes_for_tensors(node.args)
        flops = aten.flops(node.target, args, in_shapes, out_shapes)
        workspace = self.workspaces and aten.workspace_bytes(
            node.target, args, in_shapes, out_shapes,
            aot.tensor_value(tensors[0]) if tensors else None)
        return flops, workspace or 0
