"""AOT Autograd's joint graph as a remat training graph, and remat's planned
graph back as the forward and backward `fx.GraphModule`s PyTorch runs.

The joint graph (PyTorch 1.13: placeholders `primals_*` and `tangents_*`,
outputs the forward's then one gradient per primal) becomes text IR:
primals are `param` (they have a gradient) or `input` declarations; every
other node an `extern` op (`extern_view` for a view) that names the node and
its aten op and carries its result types and FLOPs (remat/aten.py). Nodes
that the tangents do not reach are the forward pass and come first; each
tangent is an op of the backward that reads every forward output, so that
the whole backward follows the forward. A tuple-valued node is one op with a
result per `getitem` that reads it.

The planned graph comes back in remat's schedule. Everything before its
first tangent is the forward module; the rest, copies of forward ops
included, is the backward module, in that order. The forward saves exactly
the values of its part that the backward reads.
"""

import operator
import warnings

import torch
import torch.fx as fx
from torch.fx.node import map_arg
# functorch's own reading of a joint graph in 1.13: which placeholders are
# tangents, and which outputs are the forward's and which the gradients.
from functorch._src.partitioners import (_extract_fwd_bwd_modules,
                                         _extract_fwd_bwd_outputs,
                                         _is_tangent)

from . import aten

TANGENT = "tangent"

_DTYPES = {
    torch.float32: "f32", torch.float64: "f64", torch.float16: "f16",
    torch.bfloat16: "bf16", torch.int8: "i8", torch.int32: "i32",
    torch.int64: "i64", torch.bool: "bool",
    # remat has no such dtype: one of the same width, for the bytes.
    torch.uint8: "i8", torch.int16: "f16", torch.complex64: "f64",
}


def _type_text(meta):
    dtype = _DTYPES.get(meta.dtype)
    if dtype is None:
        raise ValueError(f"remat: no remat dtype for {meta.dtype}")
    return f"{dtype}[{','.join(str(int(d)) for d in meta.shape)}]"


def _quote(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'




class JointGraph:
    """One joint graph and its text IR, with what the way back needs."""

    def __init__(self, joint, nanoseconds=None):
        self.joint = joint
        # Measured time of each node (remat/timing.py): each op's `cost`.
        self.nanoseconds = nanoseconds
        self.fwd_outputs, self.bwd_outputs = _extract_fwd_bwd_outputs(joint)
        self.primals = [n for n in joint.graph.nodes
                        if n.op == "placeholder" and not _is_tangent(n)]
        self.tangents = [n for n in joint.graph.nodes if _is_tangent(n)]
        self.tangent_names = {t.name for t in self.tangents}
        self.nodes = {n.name: n for n in joint.graph.nodes}
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
        self.text = self._translate()

    def _backward_nodes(self):
        reached = set(self.tangents)
        for node in self.joint.graph.nodes:
            if node.op == "call_function" and any(
                    i in reached for i in node.all_input_nodes):
                reached.add(node)
        return reached

    def _translate(self):
        backward = self._backward_nodes()
        lines = ["graph @joint {"]
        for primal, grad in zip(self.primals, self.bwd_outputs):
            kind = "param" if isinstance(grad, fx.Node) else "input"
            lines.append(f"  {kind} %{primal.name} : "
                         f"{_type_text(primal.meta['tensor_meta'])}")
            self.value_of[primal] = primal.name
        calls = [n for n in self.joint.graph.nodes
                 if n.op == "call_function" and n.target is not operator.getitem]
        forward = [n for n in calls if n not in backward]
        for node in forward:
            lines.append(self._op_line(node))
        self.forward_ops = len(self.primals) + len(forward)
        reads = [self.value_of[n] for n in self.fwd_outputs
                 if isinstance(n, fx.Node)]
        for tangent in self.tangents:
            self.value_of[tangent] = tangent.name
            operands = ", ".join("%" + r for r in reads)
            lines.append(
                f"  %{tangent.name} = extern({operands}) {{fn = {_quote(TANGENT)}, "
                f"types = {_quote(_type_text(tangent.meta['tensor_meta']))}, "
                f"node = {_quote(tangent.name)}}}")
        for node in calls:
            if node in backward:
                lines.append(self._op_line(node))
        seen = set()
        # AOT Autograd (1.13) holds the tangents it makes contiguous until
        # the backward returns: outputs, they live to the end in the plan.
        for out in list(self.fwd_outputs) + list(self.bwd_outputs) + \
                self.tangents:
            if isinstance(out, fx.Node) and self.value_of[out] not in seen:
                seen.add(self.value_of[out])
                lines.append(f"  output %{self.value_of[out]}")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def _op_line(self, node):
        target = node.target
        inputs = node.all_input_nodes
        for i in inputs:
            if i not in self.value_of:
                raise ValueError(f"remat: node {node.name} reads {i.name}, "
                                 "which has no tensor value")
        self.operands[node.name] = inputs
        if "tensor_meta" in node.meta:
            results = [node]
            self.value_of[node] = node.name
        else:
            results = sorted((u for u in node.users
                              if u.target is operator.getitem),
                             key=lambda u: u.args[1])
            if not results:
                raise ValueError(f"remat: node {node.name} ({target}) has no "
                                 "tensor result")
            self.tuple_indices[node.name] = [u.args[1] for u in results]
            for u in results:
                self.value_of[u] = u.name
        self.results_of[node.name] = [self.value_of[r] for r in results]
        types = [_type_text(r.meta["tensor_meta"]) for r in results]
        in_shapes = [tuple(i.meta["tensor_meta"].shape) for i in inputs
                     if "tensor_meta" in i.meta]
        out_shapes = [tuple(r.meta["tensor_meta"].shape) for r in results]
        name = str(target)
        known = aten.may_recompute(target)
        if not known and aten.op_name(target) not in aten.RANDOM and \
                not aten.mutates(target) and name not in self.unknown:
            self.unknown.add(name)
            warnings.warn(f"remat: no entry for {name} in remat's op table; "
                          "planned conservatively (never recomputed)",
                          stacklevel=2)
        kind = "extern_view" if aten.is_view(target) and len(types) == 1 \
            and inputs else "extern"
        attrs = [f"fn = {_quote(name)}", f"types = {_quote(' '.join(types))}",
                 f"flops = {aten.flops(target, node.args, in_shapes, out_shapes)}",
                 f"node = {_quote(node.name)}"]
        if self.nanoseconds is not None:
            attrs.append(f"cost = {self.nanoseconds[node.name]}")
        if not known:
            attrs.append("recompute = false")
        names = ", ".join("%" + self.value_of[r] for r in results)
        operands = ", ".join("%" + self.value_of[i] for i in inputs)
        return f"  {names} = {kind}({operands}) {{{', '.join(attrs)}}}"


class _Emitter:
    """Emits planned ops into one fx.Graph, mapping remat's values to its
    nodes (`env`)."""

    def __init__(self, joint_graph, graph, env, origin):
        self.jg = joint_graph
        self.graph = graph
        self.env = env
        # The original value of every value emitted.
        self.origin = origin

    def emit(self, op):
        kind, results = op["kind"], op["results"]
        if kind == "stop_gradient":
            self.env[results[0]] = self.env[op["operands"][0]]
            return
        if kind not in ("extern", "extern_view"):
            raise ValueError(f"remat: the planned graph has a '{kind}' op "
                             f"(%{results[0]}), which PyTorch cannot run")
        original = self.jg.nodes[op["node"]]
        mapping = {i: self.env[v] for i, v in
                   zip(self.jg.operands[op["node"]], op["operands"])}
        args = map_arg(original.args, mapping.__getitem__)
        kwargs = map_arg(original.kwargs, mapping.__getitem__)
        originals = self.jg.results_of[op["node"]]
        is_copy = results[0] != originals[0]
        self.origin.update(zip(results, originals))
        if is_copy and aten.op_name(original.target) == "native_batch_norm" \
                and args[5]:
            # The copy normalises with the batch's statistics as the
            # original did, without updating the running ones again.
            args = args[:3] + (None, None) + args[5:]
        call = self.graph.call_function(original.target, args, kwargs)
        indices = self.jg.tuple_indices.get(op["node"])
        if indices is None:
            self.env[results[0]] = call
        else:
            for value, index in zip(results, indices):
                self.env[value] = self.graph.call_function(
                    operator.getitem, (call, index))


def build_modules(joint_graph, planned, placement="schedule"):
    """The forward and backward modules of `planned` (what
    `remat._remat.plan_training_graph` returned for `joint_graph.text`).
    With `placement="start"` the forward saves the same values but the
    backward is functorch's extraction of the joint graph, which recomputes
    at the start of the backward and never twice: for comparison."""
    jg = joint_graph
    ops = planned["ops"]
    split = next(i for i, op in enumerate(ops)
                 if op["kind"] == "extern" and op["node"] in jg.tangent_names)
    forward, backward = ops[:split], ops[split:]

    fw_graph, fw_env = fx.Graph(), {}
    for primal in jg.primals:
        fw_env[primal.name] = fw_graph.placeholder(primal.name)
    origin = {p.name: p.name for p in jg.primals}
    emitter = _Emitter(jg, fw_graph, fw_env, origin)
    for op in forward:
        if op["kind"] in ("param", "input"):
            continue
        emitter.emit(op)

    # What the backward reads of the forward part, in the order made.
    made = {v: i for i, v in enumerate(fw_env)}
    wanted = set()
    for op in backward:
        wanted.update(v for v in op["operands"] if v in made)
    for grad in jg.bwd_outputs:
        if isinstance(grad, fx.Node) and jg.value_of[grad] in made:
            wanted.add(jg.value_of[grad])
    saved = sorted(wanted, key=made.__getitem__)
    if placement == "start":
        return _extract_at_start(jg, [origin[v] for v in saved])

    fw_outputs = [fw_env[jg.value_of[o]] if isinstance(o, fx.Node) else o
                  for o in jg.fwd_outputs]
    fw_graph.output(fw_outputs + [fw_env[v] for v in saved])

    bw_graph, bw_env = fx.Graph(), {}
    for value in saved:
        bw_env[value] = bw_graph.placeholder(_placeholder_name(value))
    for tangent in jg.tangents:
        bw_env[tangent.name] = bw_graph.placeholder(tangent.name)
    emitter = _Emitter(jg, bw_graph, bw_env, origin)
    for op in backward:
        if op["kind"] == "extern" and op["node"] in jg.tangent_names:
            continue
        emitter.emit(op)
    bw_graph.output([bw_env[jg.value_of[g]] if isinstance(g, fx.Node) else g
                     for g in jg.bwd_outputs])
    for graph in (fw_graph, bw_graph):
        _erase_dead(graph)
        graph.lint()
    return (fx.GraphModule(jg.joint, fw_graph),
            fx.GraphModule(jg.joint, bw_graph))


def _erase_dead(graph):
    """Erases the calls nothing reads whose only effect is their result:
    forward ops whose readers all read copies now (a dead view would hold
    its base until the module returns). Ops with effects stay."""
    for node in reversed(list(graph.nodes)):
        if node.op == "call_function" and not node.users and (
                node.target is operator.getitem or aten.is_pure(node.target)):
            graph.erase_node(node)


def _placeholder_name(value):
    """A Python identifier for a remat value name (`relu.re` -> `relu_re`)."""
    return "".join(c if c.isalnum() or c == "_" else "_" for c in value)


def _extract_at_start(jg, saved):
    """functorch's own extraction of the joint graph with the values
    `saved` (of original nodes) saved."""
    node_of = {value: node for node, value in jg.value_of.items()}
    nodes = list(dict.fromkeys(node_of[value] for value in saved))
    return _extract_fwd_bwd_modules(jg.joint, nodes)
