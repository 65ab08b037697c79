"""remat as a `torch.compile` backend (docs/torch.md, "torch.compile"):

    import remat.torch
    compiled = torch.compile(model, backend=remat.torch.backend(budget="40%"))

This is the package's one file that imports private PyTorch modules, each
inside the function that needs it: `torch.compile` offers no public way to
give Inductor a partition function. Tested with PyTorch 2.14.1.
"""

from . import aot
from . import aten
from .modules import COPY, COPY_REACH

COMPILERS = ("inductor", "eager")


class Backend:
    """A `torch.compile` backend: AOT Autograd traces each graph Dynamo
    hands it, remat's partition plans it, and Inductor (or, with
    `compiler="eager"`, `remat.torch.boxed_compiler`) compiles the forward
    and the backward. `reports` holds one remat report (docs/report.md) per
    graph planned, in the order compiled, each with its `graph_index`."""

    def __init__(self, budget=None, planner="auto", placement="schedule",
                 costs="flops", compiler="inductor", strict=False):
        # Imported here: remat/torch.py imports this module, and either may
        # be imported first.
        from .torch import Partition
        if compiler not in COMPILERS:
            raise ValueError(f"remat: compiler must be 'inductor' or 'eager', "
                             f"got {compiler!r}")
        # Made now so that a bad argument fails here, not at the first call.
        self.partition = Partition(budget=budget, planner=planner,
                                   placement=placement, costs=costs,
                                   strict=strict)
        # Inductor lays convolutions out channels-last, which oneDNN reads
        # without the workspace it needs for NCHW (docs/torch.md).
        self.partition.count_workspaces = compiler != "inductor"
        # Inductor runs each pointwise chain as one kernel (remat/fusion.py).
        self.partition.fuse_pointwise = compiler == "inductor"
        self.compiler = compiler
        self.reports = []
        self._graphs = 0

    def __call__(self, graph_module, example_inputs):
        """Dynamo's backend call, once per graph."""
        index = self._graphs
        self._graphs += 1
        partition = _GraphPartition(self, index)
        if self.compiler == "eager":
            from torch._dynamo.backends.common import aot_autograd
            from .torch import boxed_compiler
            return aot_autograd(fw_compiler=boxed_compiler,
                                bw_compiler=boxed_compiler,
                                partition_fn=partition)(graph_module,
                                                        example_inputs)
        from torch._functorch import config as aot_config
        from torch._inductor import config
        from torch._inductor.compile_fx import compile_fx
        # Inductor's own pipeline (decompositions, joint-graph passes, the
        # fusing compilers) with remat in place of its min-cut partitioner.
        # A cached graph would skip the partition and so its report.
        with config.patch(custom_partitioner_fn=_inductor_partitioner(
                partition), fx_graph_cache=False), \
                aot_config.patch(enable_autograd_cache=False):
            return compile_fx(graph_module, example_inputs,
                              inner_compile=_in_plan_order)


# How far apart, in the order of remat's schedule, two kernels that read
# the same buffer may be and still fuse (_in_plan_order).
HORIZONTAL_REACH = 4

# A kernel that writes at least this many bytes of new buffers is not fused
# into a producer that remat's order runs before an extern call the kernel
# runs after (_allocates_ahead_of_a_call); smaller buffers are left to
# Inductor's fusion.
AHEAD_OF_A_CALL_BYTES = 1 << 20


def _in_plan_order(*args, **kwargs):
    """Inductor's compiler of one module (forward or backward), with its
    horizontal fusion held to kernels at most HORIZONTAL_REACH apart in
    remat's order. Inductor fuses two kernels that only read the same
    buffer as far as 64 kernels apart, and the fused kernel runs at the
    first one's place: two copies of one recomputed batch norm, planned one
    after the other's buffer is freed, then run at once, and ResNet-50's
    plans measured up to 58% over their prediction (docs/torch.md,
    "torch.compile")."""
    from torch._inductor.choices import InductorChoices
    from torch._inductor.compile_fx import compile_fx_inner
    from torch._inductor.virtualized import V

    # Only the lowest-peak plan's backward has copies to write.
    writes_copies = any(node.meta.get(COPY) for node in args[0].graph.nodes)
    calls = _ExternCalls()

    class InPlanOrder(InductorChoices):
        @staticmethod
        def can_fuse_vertical(scheduler, node1, node2, shared_data_score):
            # A fused producer runs at its consumer's place: a copy Inductor
            # is to write (modules.COPY) would hold what it reads there.
            if writes_copies and \
                    node2.min_order - node1.max_order > COPY_REACH and \
                    _holds_a_copy(node1):
                return False
            if _allocates_ahead_of_a_call(calls, scheduler, node1, node2):
                return False
            return InductorChoices.can_fuse_vertical(
                scheduler, node1, node2, shared_data_score)

        @staticmethod
        def can_fuse_horizontal(scheduler, node1, node2, shared_data_score):
            reach = max(abs(node1.min_order - node2.max_order),
                        abs(node2.min_order - node1.max_order))
            return reach <= HORIZONTAL_REACH and \
                InductorChoices.can_fuse_horizontal(
                    scheduler, node1, node2, shared_data_score)

    _products_stay(args[0].graph)
    with V.set_choices_handler(InPlanOrder()), _frees_between_kernels():
        return compile_fx_inner(*args, **kwargs)


class _frees_between_kernels:
    """While Inductor compiles: its C++ code generator (CppScheduling) ends
    a kernel group after each kernel that is the last to read a buffer.
    The generator writes consecutive kernels into one C++ function (a
    group) until an extern call, and allocates every buffer the group
    writes before the call and frees every buffer it last reads after it:
    a group that ends one op of remat's order and starts the next holds the
    first one's inputs beside the second one's results, where remat's plan
    frees between them. ResNet-50's plan for the 0.5 point recomputes the
    third stage's six block outputs (6 x 24.5 MiB) in one group with the
    batch norm backward before them and held 1443.8 MiB against 1424.5
    predicted; ending the group where a buffer dies, 1421.6 (docs/torch.md,
    "torch.compile"). Other devices' code generators are left alone."""

    def __enter__(self):
        from torch._inductor import config
        from torch._inductor.codegen import common
        from torch._inductor.codegen.cpp import CppScheduling

        class FreesBetweenKernels(CppScheduling):
            def codegen_node(self, node):
                super().codegen_node(node)
                if node.last_usage:
                    self._set_flush_status(True)

        common.init_backend_registration()
        self._codegen = common.device_codegens["cpu"]
        scheduling = self._codegen.scheduling

        def chosen(scheduler):
            if config.cpu_backend == "cpp":
                return FreesBetweenKernels(scheduler)
            return scheduling(scheduler)

        import dataclasses
        common.device_codegens["cpu"] = dataclasses.replace(
            self._codegen, scheduling=chosen)
        return self

    def __exit__(self, *exc):
        from torch._inductor.codegen import common
        common.device_codegens["cpu"] = self._codegen
        return False


class _ExternCalls:
    """The places, in remat's order, of a scheduler's extern calls (its
    matmuls, convolutions, attention): Inductor fuses no kernel into one,
    so they stay where they are while it fuses."""

    def __init__(self):
        self._scheduler, self._places = None, []

    def first_after(self, scheduler, place):
        """The first extern call's place after `place`; None if none."""
        import bisect
        if self._scheduler is not scheduler:
            self._scheduler = scheduler
            self._places = sorted(node.min_order for node in scheduler.nodes
                                  if node.is_extern())
        index = bisect.bisect_right(self._places, place)
        return self._places[index] if index < len(self._places) else None


def _allocates_ahead_of_a_call(calls, scheduler, node1, node2):
    """Whether fusing `node2` into its producer `node1` would run it, and
    allocate the AHEAD_OF_A_CALL_BYTES or more it writes, before an extern
    call that remat's order runs between them: the fused kernel runs at the
    producer's place, so the call would hold the consumer's buffers beside
    its own. GPT-2's tied embedding gradient (147 MiB, the scatter of the
    first layer norm's input gradient) fused into that layer norm's
    backward, ahead of the output layer's weight gradient (a 147 MiB
    matmul), and the backward measured 836.7 MiB against 788.0 predicted;
    unfused, 763.4 (docs/torch.md, "torch.compile")."""
    call = calls.first_after(scheduler, node1.max_order)
    if call is None or call >= node2.min_order:
        return False
    from torch._inductor.virtualized import V
    written = sum(
        V.graph.sizevars.optimization_hint(buffer.node.get_numel()) *
        buffer.node.get_dtype().itemsize for buffer in node2.get_outputs())
    return written >= AHEAD_OF_A_CALL_BYTES


def _holds_a_copy(scheduler_node):
    """Whether one of the kernels fused in `scheduler_node` writes a copy
    of a forward op that remat's plan reads far from it (modules.COPY)."""
    return any(origin.meta.get(COPY)
               for node in scheduler_node.get_nodes() if node.node is not None
               for origin in node.node.get_origins())


def _products_stay(graph):
    """Keeps each `mm` that is read later than at the next node of remat's
    order out of Inductor's `add(mm(a, b), c)` -> `addmm(c, a, b)` rewrite,
    which runs the product at the add's place: GPT-2's tied output layer's
    weight gradient, planned first in the backward, then held its 196 MiB
    operand (the logits' gradient) to the backward's end, where the
    embedding's gradient is added (docs/torch.md, "torch.compile")."""
    from torch._higher_order_ops.flex_gemm import _PRESERVE_FLEX_GEMM_GEMM_OP
    import torch
    order = {node: i for i, node in enumerate(graph.nodes)}
    for node in graph.nodes:
        if node.target is torch.ops.aten.mm.default and any(
                order[user] > order[node] + 1 for user in node.users):
            node.meta[_PRESERVE_FLEX_GEMM_GEMM_OP] = True


class _GraphPartition:
    """The partition function of one Dynamo graph: the backend's, keeping
    its report."""

    def __init__(self, backend, index):
        self.backend = backend
        self.index = index

    def __call__(self, joint_module, joint_inputs, **options):
        partition = self.backend.partition
        if self.backend.compiler == "inductor":
            _forward_early(joint_module.graph)
        modules = partition(joint_module, joint_inputs, **options)
        self.backend.reports.append(dict(partition.last_report,
                                         graph_index=self.index))
        return modules


def _forward_early(graph):
    """Moves each forward op of the joint `graph` (one no tangent reaches)
    that may be recomputed to just after its last operand. Inductor's
    decompositions trace parts of backward ops that read no tangent, as
    `le(relu_3, 0)` of ReLU's backward, among the backward's nodes;
    remat runs every forward op in the forward, where each would hold its
    operand to the forward's end and then be saved.

        relu_3 ... relu_15  le_15(relu_15) ... le_3(relu_3)  (backward)
        relu_3 le_3(relu_3) ... relu_15 le_15(relu_15)       (backward)
    """
    backward = set()
    order = _Order()
    for node in graph.nodes:
        if aot.is_tangent(node) or backward.intersection(
                node.all_input_nodes):
            backward.add(node)
        if (node.op != "call_function" or node in backward or
                not aten.may_recompute(node.target, node.args)):
            order.append(node)
        else:
            order.insert_after(order.last_of(node.all_input_nodes), node)
    output = next(n for n in reversed(graph.nodes) if n.op == "output")
    for node in order:
        if node.op not in ("placeholder", "output"):
            output.prepend(node)
    graph.lint()


class _Order:
    """A list with insertion after any element and order comparison in
    O(1) amortized: a linked list whose elements carry increasing integer
    labels, halved between neighbours on insertion and renumbered when two
    meet (a simple order-maintenance scheme)."""

    _GAP = 1 << 256

    def __init__(self):
        self._next = {None: None}  # None heads the list
        self._label = {None: 0}
        self._tail = None

    def append(self, item):
        self.insert_after(self._tail, item)

    def last_of(self, items):
        """The item of `items` that comes last; None (the head) if none."""
        return max(items, key=self._label.__getitem__, default=None)

    def insert_after(self, anchor, item):
        after = self._next[anchor]
        high = self._label[anchor] + 2 * self._GAP if after is None \
            else self._label[after]
        if high - self._label[anchor] < 2:
            self._renumber()
            self.insert_after(anchor, item)
            return
        self._label[item] = (self._label[anchor] + high) // 2
        self._next[anchor], self._next[item] = item, after
        if after is None:
            self._tail = item

    def _renumber(self):
        item, label = self._next[None], 0
        while item is not None:
            label += self._GAP
            self._label[item] = label
            item = self._next[item]

    def __iter__(self):
        item = self._next[None]
        while item is not None:
            yield item
            item = self._next[item]


def _inductor_partitioner(partition):
    """`partition` as Inductor's `config.custom_partitioner_fn` wants it."""
    from torch._inductor.custom_graph_pass import CustomPartitionerFn

    class RematPartitioner(CustomPartitionerFn):
        def __call__(self, joint_module, joint_inputs, **options):
            return partition(joint_module, joint_inputs, **options)

        def uuid(self):
            return None  # not cached (Backend.__call__)

    return RematPartitioner()


def backend(budget=None, planner="auto", placement="schedule", costs="flops",
            compiler="inductor", strict=False):
    """A backend for `torch.compile`: every graph Dynamo captures is planned
    by remat's partition function (`budget`, `planner`, `placement` and
    `costs` as in `remat.torch.partition`, applied to each graph on its
    own; `strict=True` raises on a budget no plan reaches).
    `compiler="inductor"` (the default) compiles the forward and backward
    with Inductor, which fuses recomputed ops as under PyTorch's own
    partitioner; `compiler="eager"` runs them as they are, for
    debugging."""
    return Backend(budget=budget, planner=planner, placement=placement,
                   costs=costs, compiler=compiler, strict=strict)
