"""remat as AOT Autograd's partitioner (docs/torch.md):

    from functorch.compile import aot_module
    import remat.torch
    compiled = aot_module(model, fw_compiler=remat.torch.boxed_compiler,
                          bw_compiler=remat.torch.boxed_compiler,
                          partition_fn=remat.torch.partition(budget="40%"))
"""

import json
import warnings

import torch.fx

from . import _remat
from . import fx as _fx
from . import modules as _modules
from . import step as _step
from . import timing as _timing


class _ListInputs(torch.fx.graph.CodeGen):
    """Generates `forward(self, args)`, which takes its inputs as one list
    and empties it: each input is then held by the generated code alone,
    which drops it after its last use. (PyTorch 2 has such a generator,
    torch.fx.graph._BoxedCodeGen, but private.)"""

    def gen_fn_def(self, free_vars, maybe_return_annotation, **_options):
        # A free variable may carry a type annotation: `x: "f32[4]"`.
        names = [v.split(":")[0].strip() for v in free_vars if v != "self"]
        head = f"def forward(self, args){maybe_return_annotation}:"
        if not names:
            return head
        return head + f"\n    {', '.join(names)}, = args\n    args.clear()"


def boxed_compiler(graph_module, _example_inputs):
    """A compiler for AOT Autograd that runs `graph_module` as it is and
    frees each input after its last use. AOT Autograd in PyTorch 2 hands the
    backward its saved tensors and tangents in one list that the compiled
    function may empty (`call_func_at_runtime_with_args(...,
    steal_args=True)`), having dropped its own references
    (`ctx.maybe_clear_saved_tensors()`, torch/_functorch/_aot_autograd/
    runtime_wrappers.py); functorch's `make_boxed_func` keeps the list, and
    so every saved tensor, until the backward returns. remat's plans assume
    a saved tensor is freed after its last reader, as this compiler does."""
    graph_module.graph.set_codegen(_ListInputs())
    graph_module.recompile()

    def run(args):
        return graph_module(args)

    run._boxed_call = True
    return run


class RematBudgetWarning(UserWarning):
    """No plan remat found reaches the budget: the plan of lowest peak
    found runs instead. `strict=True` raises a ValueError instead."""


def _budget_text(budget):
    """`budget` as `remat opt --budget` reads it; a one-line ValueError for
    anything else. A float is refused: 0.5 would read as 0 bytes."""
    if budget is None:
        return None
    if isinstance(budget, float):
        raise ValueError("remat: budget must be a string such as '50%' or "
                         "'2GiB', or an int byte count; got the float "
                         f"{budget!r}")
    if isinstance(budget, bool) or not isinstance(budget, (int, str)):
        raise ValueError("remat: budget must be a string such as '50%' or "
                         f"'2GiB', or an int byte count; got {budget!r}")
    text = str(budget)
    try:
        _remat.check_budget(text)
    except ValueError as error:
        raise ValueError(f"remat: budget: {error}") from None
    return text


def _check_planner(planner):
    if not isinstance(planner, str):
        raise ValueError("remat: planner must be a planner's name such as "
                         f"'auto' or 'sqrtn'; got {planner!r}")
    try:
        _remat.check_planner(planner)
    except ValueError as error:
        raise ValueError(f"remat: {error}") from None


# How remat's warning of a budget no plan reaches begins (src/Training).
_MISSED_BUDGET = "no plan reaches the budget"


class Partition:
    """A partition function: PyTorch calls it with the joint graph and its
    example inputs and runs the two modules it returns. `last_report` is
    remat's report of the last plan (docs/report.md), `last_joint` the joint
    graph's text IR."""

    def __init__(self, budget=None, planner="auto", placement="schedule",
                 costs="flops", strict=False):
        self.budget = _budget_text(budget)
        _check_planner(planner)
        if planner == "auto" and budget is None:
            raise ValueError("remat: planner 'auto' needs a budget "
                             "(budget='40%' or a byte count)")
        if not isinstance(strict, bool):
            raise ValueError(f"remat: strict must be True or False; got "
                             f"{strict!r}")
        self.planner = planner
        self.strict = strict
        if placement not in ("schedule", "start"):
            raise ValueError(f"remat: placement must be 'schedule' or "
                             f"'start', got {placement!r}")
        if costs not in ("flops", "measured"):
            raise ValueError(f"remat: costs must be 'flops' or 'measured', "
                             f"got {costs!r}")
        self.placement = placement
        self.costs = costs
        # Whether oneDNN's convolution workspaces count (remat/aten.py); a
        # compiler that lays convolutions out channels-last clears it.
        self.count_workspaces = True
        # Whether pointwise chains are planned as the one kernel a fusing
        # compiler makes of each (remat/fusion.py); a fusing compiler sets
        # it.
        self.fuse_pointwise = False
        self.last_report = None
        self.last_joint = None

    def __call__(self, joint_module, joint_inputs, *, num_fwd_outputs=None,
                 static_lifetime_input_indices=None, **_options):
        """PyTorch 2's partition-function call (remat/aot.py). The primals
        live through the whole step in every plan; those of static lifetime
        (`static_lifetime_input_indices`) tell the parameters from an
        earlier piece's outputs in the step's prediction (remat/step.py).
        Options of later PyTorch versions are ignored."""
        nanoseconds = None
        if self.costs == "measured":
            nanoseconds = _timing.node_nanoseconds(joint_module, joint_inputs)
        joint = _fx.JointGraph(joint_module, num_fwd_outputs, nanoseconds,
                               workspaces=self.count_workspaces,
                               fuse=self.fuse_pointwise)
        self.last_joint = joint.text
        # Measured `cost` attributes are nanoseconds: the report's costs and
        # overhead then count time.
        planned = _remat.plan_training_graph(
            joint.text, joint.forward_ops, planner=self.planner,
            budget=self.budget,
            cost_unit="flops" if nanoseconds is None else "ns")
        self.last_report = json.loads(planned["report"])
        self._warn(planned["warnings"])
        # The lowest-peak plan, where the budget is missed, has Inductor
        # write the copies it would hold that peak over with.
        modules = _modules.build_modules(
            joint, planned, self.placement,
            write_copies=self.last_report.get("budget_met") is False)
        self.last_report["written_copies"] = sum(
            1 for node in modules[1].graph.nodes
            if node.meta.get(_modules.COPY))
        # For a step of several graphs (remat/step.py).
        self.last_report.update(_step.saved_bytes(
            joint, modules[0], len(joint.fwd_outputs),
            static_lifetime_input_indices))
        return modules

    def _warn(self, messages):
        """remat's warnings, as `remat opt` prints them; a missed budget
        raises when `strict`, with remat's line or, should remat give none,
        the report's figures."""
        missed = self.last_report.get("budget_met") is False
        budget_lines = [m for m in messages if m.startswith(_MISSED_BUDGET)]
        for message in messages:
            if message not in budget_lines:
                warnings.warn(f"remat: {message}", stacklevel=3)
        if not missed:
            return
        line = budget_lines[-1] if budget_lines else (
            f"{_MISSED_BUDGET} of {self.budget}; the lowest peak found is "
            f"{self.last_report.get('peak_bytes_after')} bytes")
        if self.strict:
            raise ValueError(f"remat: {line} (strict=True)")
        warnings.warn(f"remat: {line}", RematBudgetWarning, stacklevel=3)


def partition(budget=None, planner="auto", placement="schedule",
              costs="flops", strict=False):
    """A partition function for `functorch.compile.aot_function` and
    `aot_module`: remat's `planner` chooses what the forward saves and what
    the backward recomputes, within `budget` ('40%' of plain autodiff's
    simulated peak, or bytes as an int or '2GiB'; a float is refused).
    Without a budget give a planner that takes none ('sqrtn', 'none'). A
    planner other than 'auto' plans as it does, and the budget judges its
    plan, as in `remat opt --planner=P --budget=SIZE`. Where no plan
    reaches the budget, remat warns (RematBudgetWarning) and runs the plan
    of lowest peak found, or with `strict=True` raises a ValueError.

    `placement="schedule"` (the default) runs the backward in remat's
    schedule: each recomputed value just before its first reader.
    `placement="start"` keeps the plan's saved values but extracts the
    backward in the joint graph's order, as PyTorch's partitioners do: it
    recomputes everything at its start, the comparison docs/torch.md
    measures.

    `costs="flops"` (the default) plans with remat/aten.py's FLOPs;
    `costs="measured"` runs the joint graph when it is traced, timing
    each op (remat/timing.py), and plans with those times: on a CPU a
    memory-bound op costs far more than its FLOPs say."""
    return Partition(budget=budget, planner=planner, placement=placement,
                     costs=costs, strict=strict)


# Last: remat/backend.py builds on Partition.
from .backend import backend  # noqa: E402,F401
from .step import predicted_step_bytes, step_bytes  # noqa: E402,F401
