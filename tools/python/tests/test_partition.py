"""remat.torch.partition under AOT Autograd: every model at small sizes,
gradients against eager PyTorch's at every budget."""

import copy
import pathlib
import re
import unittest
import warnings

import torch
import torch.nn as nn
import torchvision
from functorch.compile import aot_function, aot_module

import remat.torch

BUDGETS = ["80%", "60%", "40%", "20%"]


def _step(model, inputs, partition_fn=None):
    """Loss, parameter gradients and buffers after one training step, eager
    without `partition_fn`."""
    model = copy.deepcopy(model)
    run = model if partition_fn is None else aot_module(
        model, fw_compiler=remat.torch.boxed_compiler,
        bw_compiler=remat.torch.boxed_compiler, partition_fn=partition_fn)
    loss = run(*inputs).float().square().mean()
    loss.backward()
    grads = {name: p.grad for name, p in model.named_parameters()}
    buffers = {name: b.clone() for name, b in model.named_buffers()}
    return loss.detach(), grads, buffers


def _relative_error(actual, expected):
    scale = expected.abs().max().item()
    diff = (actual - expected).abs().max().item()
    return diff / scale if scale > 0 else diff


class CumsumMlp(nn.Module):
    """An MLP with an op remat's table does not know (cumsum)."""

    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(8, 16), nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(torch.cumsum(torch.relu(self.fc1(x)), dim=1))


def _mlp():
    layers = []
    for _ in range(6):
        layers += [nn.Linear(16, 16), nn.ReLU()]
    return nn.Sequential(*layers, nn.Linear(16, 4)), (torch.randn(256, 16),)


def _resnet18():
    return (torchvision.models.resnet18(num_classes=10),
            (torch.randn(2, 3, 32, 32),))


def _mobilenet_v2():
    return (torchvision.models.mobilenet_v2(num_classes=10, width_mult=0.25,
                                            dropout=0.0),
            (torch.randn(2, 3, 32, 32),))


def _vgg11():
    """torchvision's VGG-11 with a small head (its own is 120M weights)."""
    model = torchvision.models.vgg11(num_classes=10)
    model.classifier = nn.Linear(512 * 7 * 7, 10)
    return model, (torch.randn(4, 3, 64, 64),)


def _transformer():
    layer = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64,
                                       dropout=0.0, batch_first=True)
    return nn.TransformerEncoder(layer, num_layers=3), (torch.randn(2, 10, 32),)


MODELS = {"mlp": _mlp, "resnet18": _resnet18, "mobilenet_v2": _mobilenet_v2,
          "vgg11": _vgg11, "transformer": _transformer}


class PartitionTest(unittest.TestCase):

    def check_model(self, name, budgets=BUDGETS, costs="flops"):
        torch.manual_seed(0)
        model, inputs = MODELS[name]()
        model.train()
        # AOT Autograd in PyTorch 2 traces with FakeTensors, so tracing
        # leaves the running statistics alone (1.13 ran the batch norms, and
        # this test compared with default_partition's): eager's buffers are
        # the ones to match.
        loss, grads, buffers = _step(model, inputs)
        recomputed = 0
        for budget in budgets:
            with self.subTest(model=name, budget=budget):
                partition = remat.torch.partition(budget=budget,
                                                  costs=costs)
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    got_loss, got_grads, got_buffers = _step(model, inputs,
                                                             partition)
                # The table knows every op of these models: none is pinned
                # but batch norm's count of batches, whose increment reads
                # a buffer the step updates (remat/aot.py).
                unknown = [str(w.message) for w in caught
                           if "no entry" in str(w.message)]
                self.assertEqual(unknown, [])
                pinned = [line for line in partition.last_joint.splitlines()
                          if "recompute = false" in line and
                          '"aten.add.Tensor", types = "i64[]"' not in line]
                self.assertEqual(pinned, [])
                report = partition.last_report
                self.assertIsNotNone(report)
                self.assertEqual(report["cost_unit"],
                                 "ns" if costs == "measured" else "flops")
                recomputed += report["flops_recompute"]
                self.assertLessEqual(_relative_error(got_loss, loss), 1e-6)
                self.assertEqual(got_grads.keys(), grads.keys())
                for key, grad in grads.items():
                    self.assertLessEqual(
                        _relative_error(got_grads[key], grad), 1e-6, key)
                # Recomputed batch norms do not update the running
                # statistics a second time.
                for key, buffer in buffers.items():
                    self.assertTrue(torch.equal(got_buffers[key], buffer), key)
        # The budgets made remat recompute: the check above saw copies.
        self.assertGreater(recomputed, 0)

    def test_mlp(self):
        self.check_model("mlp")

    def test_resnet18(self):
        self.check_model("resnet18")

    def test_mobilenet_v2(self):
        self.check_model("mobilenet_v2", ["60%", "30%"])

    def test_vgg11(self):
        self.check_model("vgg11", ["60%", "30%"])

    def test_transformer(self):
        self.check_model("transformer")

    def test_measured_costs(self):
        # Timing runs the joint graph, which returns new running statistics
        # rather than writing them: they still equal eager's, bit for bit.
        self.check_model("resnet18", ["40%"], costs="measured")
        self.check_model("transformer", ["40%"], costs="measured")

    def test_measured_costs_leave_the_random_numbers(self):
        model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Dropout(0.5),
                              nn.Linear(64, 64), nn.ReLU(), nn.Dropout(0.5),
                              nn.Linear(64, 4))
        inputs = (torch.randn(32, 16),)
        results = {}
        for costs in ("flops", "measured"):
            partition = remat.torch.partition(budget="30%", costs=costs)
            torch.manual_seed(1)
            results[costs] = _step(model, inputs, partition)
            # Measured, every op carries its time as its cost.
            self.assertEqual("cost = " in partition.last_joint,
                             costs == "measured")
        loss, grads, _ = results["flops"]
        got_loss, got_grads, _ = results["measured"]
        # The timing run drew random numbers, then put the generator back:
        # the step's dropout masks are the same.
        self.assertEqual(got_loss.item(), loss.item())
        for key, grad in grads.items():
            self.assertLessEqual(_relative_error(got_grads[key], grad), 1e-6,
                                 key)

    def test_an_unknown_op_is_kept_with_a_warning(self):
        torch.manual_seed(0)
        model, inputs = CumsumMlp(), (torch.randn(4, 8),)
        _, grads, _ = _step(model, inputs)
        partition = remat.torch.partition(budget="30%")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _, got, _ = _step(model, inputs, partition)
        messages = [str(w.message) for w in caught]
        self.assertTrue(any("aten.cumsum" in m for m in messages), messages)
        self.assertIn("recompute = false", partition.last_joint)
        for key, grad in grads.items():
            self.assertLessEqual(_relative_error(got[key], grad), 1e-6, key)

    def compiled_modules(self, partition):
        """The forward and backward modules AOT Autograd compiles for the
        MLP with `partition`."""
        torch.manual_seed(0)
        model, inputs = _mlp()
        modules = []

        def keep(graph_module, _inputs):
            modules.append(graph_module)
            return remat.torch.boxed_compiler(graph_module, _inputs)

        run = aot_module(copy.deepcopy(model), fw_compiler=keep,
                         bw_compiler=keep, partition_fn=partition)
        run(*inputs).square().mean().backward()
        return modules

    def test_copies_run_in_the_backward_module(self):
        partition = remat.torch.partition(budget="20%")
        forward, backward = self.compiled_modules(partition)
        fw_calls = [n for n in forward.graph.nodes if n.op == "call_function"]
        bw_targets = [str(n.target) for n in backward.graph.nodes
                      if n.op == "call_function"]
        self.assertGreater(partition.last_report["flops_recompute"], 0)
        # Forward ops run again in the backward: an addmm there recomputes,
        # and not all at its start: some run after gradient matmuls.
        recomputed = [i for i, t in enumerate(bw_targets)
                      if t == "aten.addmm.default"]
        self.assertTrue(recomputed)
        self.assertGreater(recomputed[-1], bw_targets.index("aten.mm.default"))
        # The forward saves fewer tensors than it computes.
        output = next(n for n in forward.graph.nodes if n.op == "output")
        saved = len(output.args[0]) - 1
        self.assertLess(saved, len(fw_calls))

    def test_placement_start_recomputes_before_every_gradient(self):
        partition = remat.torch.partition(budget="20%", placement="start")
        _, backward = self.compiled_modules(partition)
        targets = [str(n.target) for n in backward.graph.nodes
                   if n.op == "call_function"]
        recomputed = [i for i, t in enumerate(targets)
                      if t == "aten.addmm.default"]
        self.assertTrue(recomputed)
        self.assertLess(recomputed[-1], targets.index("aten.mm.default"))
        model, inputs = _mlp()
        _, grads, _ = _step(model, inputs)
        _, got, _ = _step(model, inputs, remat.torch.partition(
            budget="20%", placement="start"))
        for key, grad in grads.items():
            self.assertLessEqual(_relative_error(got[key], grad), 1e-6, key)

    def test_aot_function_and_unknown_options(self):
        # A partition function PyTorch calls with options it does not
        # know yet still plans; aot_function passes the same contract.
        partition = remat.torch.partition(planner="sqrtn")

        def later_pytorch(joint, inputs, **options):
            return partition(joint, inputs, some_later_option=True, **options)

        weight = torch.randn(16, 16, requires_grad=True)

        def f(x, w):
            for _ in range(4):
                x = torch.tanh(x @ w)
            return x

        x = torch.randn(32, 16)
        f(x, weight).sum().backward()
        expected, weight.grad = weight.grad, None
        compiled = aot_function(f, fw_compiler=remat.torch.boxed_compiler,
                                bw_compiler=remat.torch.boxed_compiler,
                                partition_fn=later_pytorch)
        compiled(x, weight).sum().backward()
        self.assertIsNotNone(partition.last_report)
        self.assertLessEqual(_relative_error(weight.grad, expected), 1e-6)


class PackageTest(unittest.TestCase):

    def test_no_private_import(self):
        # Private modules of PyTorch change between releases: remat reads
        # the joint graph's conventions itself (remat/aot.py). The
        # torch.compile backend cannot (no public entry reaches Inductor):
        # backend.py alone imports them, inside functions, so importing
        # remat.torch touches none.
        private = re.compile(r"^(\s*)(from|import)\s+(torch|functorch)"
                             r"(\.\w+)*\._")
        package = pathlib.Path(remat.torch.__file__).parent
        lazy = 0
        for source in sorted(package.glob("*.py")):
            for number, line in enumerate(source.read_text().splitlines(), 1):
                found = private.match(line)
                with self.subTest(file=source.name, line=number):
                    if source.name != "backend.py":
                        self.assertIsNone(found, line)
                    elif found:
                        self.assertTrue(found.group(1), line)
                        lazy += 1
        self.assertGreater(lazy, 0)  # the scan reads backend.py


class PartitionErrorTest(unittest.TestCase):

    def test_auto_without_a_budget(self):
        with self.assertRaisesRegex(ValueError, "needs a budget"):
            remat.torch.partition()

    def test_an_unknown_placement(self):
        with self.assertRaisesRegex(ValueError, "placement"):
            remat.torch.partition(budget="40%", placement="late")

    def test_unknown_costs(self):
        with self.assertRaisesRegex(ValueError, "costs"):
            remat.torch.partition(budget="40%", costs="time")

    def test_a_bad_budget_is_remat_s_error(self):
        # Refused when the partition function is made, in remat's words
        # (test_hostile.py has more).
        with self.assertRaisesRegex(ValueError, "^remat: budget: invalid "
                                    "size 'lots'"):
            remat.torch.partition(budget="lots")


if __name__ == "__main__":
    unittest.main()
