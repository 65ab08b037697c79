"""remat.torch.partition on hostile input (issue 47): models PyTorch's own
partitioners train, budgets out of reach, and arguments that are wrong. Every
error is one line that says what is wrong."""

import copy
import re
import unittest
import warnings

import torch
import torch.nn as nn
from functorch.compile import aot_module

import remat.torch
from remat import _remat
from test_partition import _mlp, _relative_error


def _step(model, inputs, partition_fn=None):
    """Loss and parameter gradients of one step, eager without
    `partition_fn`; a model may return several tensors."""
    model = copy.deepcopy(model)
    run = model if partition_fn is None else aot_module(
        model, fw_compiler=remat.torch.boxed_compiler,
        bw_compiler=remat.torch.boxed_compiler, partition_fn=partition_fn)
    outputs = run(*inputs)
    if isinstance(outputs, torch.Tensor):
        outputs = [outputs]
    loss = sum(out.square().mean() for out in outputs)
    loss.backward()
    return loss.detach(), {name: p.grad for name, p in
                           model.named_parameters()}


class Constant(nn.Module):
    """`torch.tensor` in forward: a constant of the traced module."""

    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(8, 16), nn.Linear(16, 4)

    def forward(self, x):
        return self.b(torch.tanh(self.a(x)) * torch.tensor(2.0))


class IndexedAssignment(nn.Module):
    """`h[:, 0] = 0.0`: a fill from a constant, then a scatter."""

    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(8, 16), nn.Linear(16, 4)

    def forward(self, x):
        h = self.a(x)
        h[:, 0] = 0.0
        return self.b(torch.tanh(h))


class ReturnsHidden(nn.Module):
    """Returns a forward value the backward also reads."""

    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(8, 16), nn.Linear(16, 4)

    def forward(self, x):
        h = torch.relu(self.a(x))
        return (self.b(h), h)


class Twice(nn.Module):
    """One layer run twice on the same input."""

    def __init__(self):
        super().__init__()
        self.a = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))

    def forward(self, x):
        return self.a(x).sum() + self.a(x).sum()


def _budget_warnings(caught):
    return [w for w in caught
            if issubclass(w.category, remat.torch.RematBudgetWarning)]


class HostileModelTest(unittest.TestCase):

    def check_gradients(self, model_class, budgets):
        torch.manual_seed(0)
        model, inputs = model_class(), (torch.randn(32, 8),)
        loss, grads = _step(model, inputs)
        for budget, placement in [(b, "schedule") for b in budgets] + \
                [(budgets[-1], "start")]:
            with self.subTest(budget=budget, placement=placement), \
                    warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                got_loss, got = _step(model, inputs, remat.torch.partition(
                    budget=budget, placement=placement))
                # The op table knows every op of these models.
                self.assertEqual([str(w.message) for w in caught
                                  if "no entry" in str(w.message)], [])
                self.assertLessEqual(_relative_error(got_loss, loss), 1e-6)
                self.assertEqual(got.keys(), grads.keys())
                for key, grad in grads.items():
                    self.assertLessEqual(_relative_error(got[key], grad),
                                         1e-6, key)

    def test_a_tensor_constant(self):
        self.check_gradients(Constant, ["80%", "40%", "0%"])

    def test_an_indexed_assignment(self):
        self.check_gradients(IndexedAssignment, ["80%", "40%", "0%"])

    def test_a_returned_value_the_backward_reads(self):
        self.check_gradients(ReturnsHidden, ["80%", "40%", "0%"])

    def test_a_layer_run_twice(self):
        self.check_gradients(Twice, ["80%", "40%"])


class BudgetTest(unittest.TestCase):

    def step_mlp(self, **options):
        torch.manual_seed(0)
        model, inputs = _mlp()
        partition = remat.torch.partition(**options)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _step(model, inputs, partition)
        return partition, caught

    def test_an_unreachable_budget_warns_with_the_peak(self):
        partition, caught = self.step_mlp(budget="0%")
        found = _budget_warnings(caught)
        self.assertEqual(len(found), 1)
        message = str(found[0].message)
        peak = partition.last_report["peak_bytes_after"]
        self.assertTrue(message.startswith(
            "remat: no plan reaches the budget of 0 B (0 bytes); the lowest "
            f"peak found is "), message)
        self.assertIn(f"({peak} bytes, planner ", message)
        self.assertNotIn("\n", message)
        self.assertIs(partition.last_report["budget_met"], False)

    def test_a_reachable_budget_is_quiet(self):
        partition, caught = self.step_mlp(budget="80%")
        self.assertEqual(_budget_warnings(caught), [])
        self.assertIs(partition.last_report["budget_met"], True)

    def test_strict_raises_instead(self):
        model, inputs = _mlp()
        with self.assertRaisesRegex(
                ValueError, r"^remat: no plan reaches the budget of 0 B "
                r"\(0 bytes\); the lowest peak found is .* \(strict=True\)$"):
            _step(model, inputs,
                  remat.torch.partition(budget="0%", strict=True))

    def test_a_planner_with_a_budget_is_judged_by_it(self):
        # As `remat opt --planner=sqrtn --budget=1%`: the planner plans as
        # it does, and the budget judges its plan.
        partition, caught = self.step_mlp(planner="sqrtn", budget="1%")
        found = _budget_warnings(caught)
        self.assertEqual(len(found), 1)
        self.assertIn("planner sqrtn)", str(found[0].message))
        self.assertEqual(partition.last_report["strategy"], "sqrtn")


class ArgumentTest(unittest.TestCase):
    """Wrong arguments fail when the partition function is made, in one
    line."""

    def check_refused(self, pattern, **options):
        with self.assertRaises(ValueError) as raised:
            remat.torch.partition(**options)
        message = str(raised.exception)
        self.assertNotIn("\n", message)
        self.assertRegex(message, "^remat: " + pattern)

    def test_a_float_budget(self):
        for budget in (0.5, 1e30, 40.0):
            with self.subTest(budget=budget):
                self.check_refused(re.escape(
                    "budget must be a string such as '50%' or '2GiB', or "
                    f"an int byte count; got the float {budget!r}"),
                    budget=budget)

    def test_bad_budgets(self):
        for budget, reason in [
                ("abc%", r"invalid size 'abc%': expected a non-negative "
                         r"number"),
                ("-1", "invalid size '-1'"), (-1, "invalid size '-1'"),
                ("40 parsecs", "unknown unit 'parsecs'"),
                (10 ** 30, "more than"),
                (True, "budget must be a string")]:
            with self.subTest(budget=budget):
                self.check_refused(".*" + reason, budget=budget)

    def test_bad_planners(self):
        for planner, reason in [
                (None, "planner must be a planner's name such as 'auto' or "
                       "'sqrtn'; got None"),
                ("fastest", "unknown planner 'fastest' \\(known: "),
                ("sqrtn=many", ".*sqrtn")]:
            with self.subTest(planner=planner):
                self.check_refused(reason, planner=planner, budget="40%")

    def test_a_bad_strict(self):
        self.check_refused("strict must be True or False; got 'yes'",
                           budget="40%", strict="yes")


class PlanTrainingGraphTest(unittest.TestCase):

    def test_forward_ops_is_checked(self):
        partition = remat.torch.partition(budget="80%")
        torch.manual_seed(0)
        model, inputs = _mlp()
        _step(model, inputs, partition)
        text = partition.last_joint
        for forward_ops, reason in [
                (-1, "forward_ops must be an int from 1"),
                (0, "forward_ops must be an int from 1"),
                (2 ** 40, "forward_ops must be an int from 1"),
                (True, "forward_ops must be an int"),
                ("3", "forward_ops must be an int"),
                (2.5, "forward_ops must be an int"),
                (10 ** 6, "not a training graph whose first 1000000 ops")]:
            with self.subTest(forward_ops=forward_ops):
                with self.assertRaises(ValueError) as raised:
                    _remat.plan_training_graph(text, forward_ops,
                                               budget="80%")
                message = str(raised.exception)
                self.assertNotIn("\n", message)
                self.assertIn(reason, message)

    def test_arguments_of_the_wrong_type(self):
        for options, reason in [
                ({"planner": None}, "planner must be a str"),
                ({"budget": 0.5}, "budget must be a str or None"),
                ({"cost_unit": 1}, "cost_unit must be 'flops' or 'ns'")]:
            with self.subTest(**{k: repr(v) for k, v in options.items()}):
                with self.assertRaises(ValueError) as raised:
                    _remat.plan_training_graph("graph @g {\n}\n", 1,
                                               **options)
                message = str(raised.exception)
                self.assertNotIn("\n", message)
                self.assertIn(reason, message)


if __name__ == "__main__":
    unittest.main()
