"""remat's planned graph back as the forward and backward `fx.GraphModule`s
AOT Autograd runs.

The planned graph comes in remat's schedule. Everything before its first
tangent is the forward module; the rest, copies of forward ops included, is
the backward module, in that order. The forward returns its outputs, then
exactly the values of its part that the backward reads (the saved tensors);
the backward takes those, then the tangents (remat/aot.py, the layout
PyTorch 2 expects).
"""

import operator

import torch
import torch.fx as fx
from torch.fx.node import map_arg

from . import aot
from . import aten
from . import fusion
from . import fx as _fx

# The meta key that marks the node of a copy remat's plan made of a forward
# op, which Inductor is to write and not fuse far away (_written_copies).
COPY = "remat_copy"
# How far after a copy, in remat's order, its last reader may be for the
# copy to be left to Inductor, and how far apart a written copy's kernel and
# a reader's may fuse (_written_copies, backend._in_plan_order).
COPY_REACH = 4


class _Emitter:
    """Emits planned ops into one fx.Graph, mapping remat's values to its
    nodes (`env`)."""

    def __init__(self, joint_graph, graph, env, origin, written=()):
        self.jg = joint_graph
        self.graph = graph
        self.env = env
        # The original value of every value emitted.
        self.origin = origin
        # The values Inductor is to write (_written_copies).
        self.written = written

    def emit(self, op):
        kind, results = op["kind"], op["results"]
        if kind == "stop_gradient":
            self.env[results[0]] = self.env[op["operands"][0]]
            self.origin[results[0]] = self.origin[op["operands"][0]]
            return
        if kind not in ("extern", "extern_view"):
            raise ValueError(f"remat: the planned graph has a '{kind}' op "
                             f"(%{results[0]}), which PyTorch cannot run")
        original = self.jg.nodes[op["node"]]
        mapping = {i: self.env[v] for i, v in
                   zip(self.jg.operands[op["node"]], op["operands"])}
        originals = self.jg.results_of[op["node"]]
        self.origin.update(zip(results, originals))
        # The graph is functional: a copy computes what the original did
        # (a batch norm's in the backward, from _stand_in statistics). A
        # fused chain's nodes each read the one before (remat/fusion.py).
        for node in self.jg.chains.get(original, [original]):
            args = map_arg(node.args, mapping.__getitem__)
            kwargs = map_arg(node.kwargs, mapping.__getitem__)
            call = mapping[node] = aot.copy_meta(
                self.graph.call_function(node.target, args, kwargs), node)
        if self.written and self.written.intersection(results):
            call.meta[COPY] = True
            call.meta["inductor_realize_to_strides"] = True
        indices = self.jg.tuple_indices.get(op["node"])
        if indices is None:
            self.env[results[0]] = call
            return
        for value, index, name in zip(results, indices, originals):
            self.env[value] = aot.copy_meta(
                self.graph.call_function(operator.getitem, (call, index)),
                self.jg.nodes[name])


def build_modules(joint_graph, planned, placement="schedule",
                  write_copies=False):
    """The forward and backward modules of `planned` (what
    `remat._remat.plan_training_graph` returned for `joint_graph.text`).
    With `placement="start"` the forward saves the same values but both
    modules are extracted from the joint graph in its order, as PyTorch's
    partitioners do: the backward recomputes at its start, each value once.
    For comparison. With `write_copies`, Inductor is told to write the
    plan's copies that it would otherwise hold the plan over its peak with
    (_written_copies)."""
    jg = joint_graph
    ops = planned["ops"]
    split = next(i for i, op in enumerate(ops)
                 if op["kind"] == "extern" and op["node"] in jg.tangent_names)
    # The forward's outputs are what `forward.end` reads; the gradients are
    # the planned graph's outputs.
    end = next(op for op in ops[:split]
               if op["results"] == [_fx.FORWARD_END])
    fw_values = iter(end["operands"])
    fw_outputs = [next(fw_values) if isinstance(o, fx.Node) else o
                  for o in jg.fwd_outputs]
    final = dict(zip(jg.output_values, planned["outputs"]))
    grads = [final[jg.value_of[g]] if isinstance(g, fx.Node) else g
             for g in jg.bwd_outputs]
    backward = _live(ops[split:], grads, jg.tangent_names)

    fw_graph, fw_env = fx.Graph(), {}
    for primal in jg.primals:
        fw_env[primal.name] = aot.copy_meta(
            fw_graph.placeholder(primal.name), primal)
    _read_constants(jg, fw_graph, fw_env)
    origin = {n.name: n.name for n in jg.primals + jg.constants}
    emitter = _Emitter(jg, fw_graph, fw_env, origin)
    for op in ops[:split]:
        if op["kind"] not in ("param", "input") and op is not end:
            emitter.emit(op)
    constants = {c.name for c in jg.constants}
    saved = _saved_values(jg, backward, grads,
                          [v for v in fw_env if origin[v] not in constants],
                          origin)
    if placement == "start":
        return _extract_at_start(
            jg, list(dict.fromkeys(jg.nodes[origin[v]] for v in saved)))
    # Values that are one node (a stop_gradient's and its operand's) are
    # saved once.
    fw_graph.output(tuple(
        [fw_env[v] if isinstance(v, str) else v for v in fw_outputs] +
        list(dict.fromkeys(fw_env[v] for v in saved))))

    bw_graph, bw_env = fx.Graph(), {}
    placeholder_of = {}
    for value in saved:
        node = fw_env[value]
        if node not in placeholder_of:
            placeholder_of[node] = aot.copy_meta(
                bw_graph.placeholder(_placeholder_name(value)),
                jg.nodes[origin[value]])
        bw_env[value] = placeholder_of[node]
    for tangent in jg.tangents:
        bw_env[tangent.name] = aot.copy_meta(
            bw_graph.placeholder(tangent.name), tangent)
    for primal in jg.updated:
        bw_env[primal.name] = _stand_in(bw_graph, primal)
    _read_constants(jg, bw_graph, bw_env)
    emitter = _Emitter(jg, bw_graph, bw_env, origin,
                       _written_copies(jg, ops, backward, planned["timeline"])
                       if jg.fuse and write_copies else ())
    for op in backward:
        emitter.emit(op)
    bw_graph.output(tuple(bw_env[g] if isinstance(g, str) else g
                          for g in grads))
    for graph in (fw_graph, bw_graph):
        _erase_dead(graph)
        graph.lint()
    return (fx.GraphModule(jg.joint, fw_graph),
            fx.GraphModule(jg.joint, bw_graph))


def _written_copies(jg, ops, backward, timeline):
    """The results of the copies of forward ops in `backward` that Inductor
    is to write. remat plans a copy as one kernel that writes its result and
    frees its operands; Inductor would compute a pointwise copy inside each
    of its readers instead, holding what the copy reads to the last of them:
    on ResNet-50's lowest plan, a ReLU mask's copy held the 98 MiB
    activation it reads, and a batch norm, add and ReLU chain's copy both
    its convolutions' outputs (docs/benchmarks.md). A written copy costs a
    CPU kernel the write and read of its buffer: written, all of those the
    plans for PyTorch's points have slowed them by a third. So only copies
    whose inlining would take the plan over its peak (`timeline`, the live
    bytes after each of `ops`) are written: those holding the most bytes at
    the steps over it, until none is. This count of what Inductor holds is
    rough (it put the plan for ResNet-50's 0.5 point 12% over its peak,
    which measured 2.4% over): build_modules asks for it only where the
    plan misses its budget, the lowest-peak plan."""
    step = {id(op): index for index, op in enumerate(ops)}
    last_read = {}
    for op in backward:
        last_read.update(dict.fromkeys(op["operands"], step[id(op)]))
    # (first step, last step, bytes more, result) of each copy Inductor
    # would compute in its readers, holding more than its result.
    inlined = []
    for op in backward:
        copied = jg.nodes[op["node"]] if op["kind"] == "extern" else None
        if copied is None or copied in jg.backward or \
                len(op["results"]) != 1:
            continue
        start = step[id(op)]
        end = last_read.get(op["results"][0], start)
        more = sum(fusion.storage_bytes(node) for node, value in
                   zip(jg.operands[op["node"]], op["operands"])
                   if last_read[value] < end) - \
            fusion.storage_bytes(copied)
        if end - start > COPY_REACH and more > 0:
            inlined.append((start, end, more, op["results"][0]))
    peak = max(timeline, default=0)
    change = [0] * (len(timeline) + 1)
    for start, end, more, _ in inlined:
        change[start] += more
        change[end + 1] -= more
    live = list(timeline)
    for index in range(len(live)):
        change[index + 1] += change[index]
        live[index] += change[index]
    written = set()
    while inlined:
        over = max(range(len(live)), key=live.__getitem__)
        if live[over] <= peak:
            break
        covering = [c for c in inlined if c[0] <= over <= c[1]]
        if not covering:
            break
        start, end, more, result = max(covering, key=lambda c: c[2])
        inlined.remove((start, end, more, result))
        written.add(result)
        for index in range(start, end + 1):
            live[index] -= more
    return written


def _read_constants(jg, graph, env):
    """Reads the joint graph's constants in `graph` (the module keeps them:
    `fx.GraphModule` copies what `get_attr` names)."""
    for constant in jg.constants:
        env[constant.name] = aot.copy_meta(graph.get_attr(constant.target),
                                           constant)


def _saved_values(jg, backward, grads, made, origin):
    """What the backward reads of the values the forward `made`, in the
    order made, but the primals the forward updates (remat/aot.py): only
    batch norm's copies read those, as running statistics the gradients do
    not depend on."""
    updated = {p.name for p in jg.updated}
    _check_updated_reads(jg, backward, origin, updated)
    read = {v for op in backward for v in op["operands"]} | set(grads)
    return [v for v in made if v in read and origin[v] not in updated]


def _live(backward, grads, tangent_names):
    """The ops of `backward` that the gradients need, in order. Others may
    follow the first tangent in remat's schedule: a forward output's
    original, say, when the forward returns a copy of it."""
    needed = set(g for g in grads if isinstance(g, str))
    live = []
    for op in reversed(backward):
        is_tangent = op["kind"] == "extern" and op["node"] in tangent_names
        if not is_tangent and needed.intersection(op["results"]):
            live.append(op)
            needed.update(op["operands"])
    return live[::-1]


def _check_updated_reads(jg, backward, origin, updated):
    """Raises if an op of the backward reads a primal the forward updated
    other than as a batch norm's running statistics. remat/fx.py pins the
    ops that would, so only an original the schedule moved past the first
    tangent could."""
    for op in backward:
        if op["node"] not in jg.operands:
            continue  # a stop_gradient
        original = jg.nodes[op["node"]]
        ignored = {original.args[i]
                   for i in aten.running_stats(original.target, original.args)}
        for node, value in zip(jg.operands[op["node"]], op["operands"]):
            if origin.get(value) in updated and node not in ignored:
                raise ValueError(f"remat: {original.name} runs in the "
                                 f"backward and reads {origin[value]}, which "
                                 "the forward updates")


def _stand_in(graph, primal):
    """Zeros in place of a running statistic the forward updated, for a
    batch norm's copy in the backward (aten.running_stats)."""
    value = aot.tensor_value(primal)
    return graph.call_function(
        torch.ops.aten.zeros.default, (list(value.shape),),
        {"dtype": value.dtype, "device": value.device})


def _erase_dead(graph):
    """Erases the calls nothing reads that may run twice, and so not at all:
    forward ops whose readers all read copies now (a dead view would hold
    its base until the module returns), a copy's unread results. Random
    ops and ops with effects stay; unread constants go."""
    for node in reversed(list(graph.nodes)):
        if node.users:
            continue
        if node.op == "get_attr" or (node.op == "call_function" and (
                node.target is operator.getitem or
                aten.may_recompute(node.target, node.args))):
            graph.erase_node(node)


def _placeholder_name(value):
    """A Python identifier for a remat value name (`relu.re` -> `relu_re`)."""
    return "".join(c if c.isalnum() or c == "_" else "_" for c in value)


def _extract_at_start(jg, saved):
    """The forward and backward modules that save the joint graph's nodes
    `saved`, each extracted from the joint graph in its order."""
    forward = _extract(jg, jg.primals, list(jg.fwd_outputs) + saved,
                       lambda node: node not in jg.backward)
    backward = _extract(
        jg, saved + jg.tangents, jg.bwd_outputs,
        lambda node: node in jg.backward or node.target is operator.getitem
        or aten.may_recompute(node.target, node.args), jg.updated)
    return (fx.GraphModule(jg.joint, forward),
            fx.GraphModule(jg.joint, backward))


def _extract(jg, inputs, outputs, may_copy, updated=()):
    """A graph from the nodes `inputs` to `outputs`: every call of the
    joint graph that `may_copy` allows and whose operands are there, in the
    joint graph's order, then the dead ones erased. The primals `updated`
    are stand-ins (_stand_in)."""
    graph, env = fx.Graph(), {}
    for node in inputs:
        env[node] = aot.copy_meta(graph.placeholder(node.name), node)
    for constant in jg.constants:
        env[constant] = graph.node_copy(constant)
    for primal in updated:
        env[primal] = _stand_in(graph, primal)
    for node in jg.joint.graph.nodes:
        if node.op == "call_function" and node not in env and \
                may_copy(node) and \
                all(i in env for i in node.all_input_nodes):
            env[node] = graph.node_copy(node, env.__getitem__)
    graph.output(tuple(env[o] if isinstance(o, fx.Node) else o
                       for o in outputs))
    _erase_dead(graph)
    graph.lint()
    return graph
