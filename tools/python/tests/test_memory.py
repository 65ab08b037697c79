"""The memory remat's plans save, measured in PyTorch: one training step of
an MLP, and of a small CNN, in a fresh process per budget, its resident-set
peak over a baseline (as scripts/bench-torch-partition.py measures it)
against remat's prediction.
"""

import json
import os
import subprocess
import sys
import unittest

from remat.measure import MMAP_ENV

# What PyTorch adds beside the plan's tensors: autograd's records, small
# blocks from glibc's heap, page rounding. Measured here (PyTorch 2.14.1):
# the peak is 0.03 MiB under the prediction at 80% and 0.2 MiB under at 25%.
# (Until the plan let the model's output die at the forward's end, as the
# step does after `sum()`, the 25% plan predicted its 2 MiB as well. PyTorch
# 1.13 held the tangent until the backward returned and the plan did too;
# PyTorch 2 frees it after its last use.)
SLACK_BYTES = 1 << 20

CHILD = r"""
import json, sys
import torch, torch.nn as nn
from functorch.compile import aot_module
import remat.torch
from remat.measure import step_peak

torch.manual_seed(0)
torch.set_num_threads(1)
layers = []
if sys.argv[2] == "mlp":
    for _ in range(16):
        layers += [nn.Linear(256, 256), nn.ReLU()]
    batch = torch.randn(2048, 256)
elif sys.argv[2] == "exp":  # the backward's product written over exp
    class Exp(nn.Module):
        def forward(self, x):
            return torch.exp(x).sum(dim=1)
    layers = [nn.Linear(64, 8192), Exp()]
    batch = torch.randn(1024, 64)
else:  # scripts/bench-torch-compile.py's --model cnn
    channels = 3
    for width in (32, 32, 64, 64):
        layers += [nn.Conv2d(channels, width, 3, padding=1),
                   nn.BatchNorm2d(width), nn.ReLU()]
        channels = width
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)]
    batch = torch.randn(16, 3, 64, 64)
model = nn.Sequential(*layers)
if sys.argv[3] == "inductor":  # the backend, fused chains and all
    backend = remat.torch.backend(budget=sys.argv[1])
    partition = backend.partition
    run = torch.compile(model, backend=backend, dynamic=False)
else:
    partition = remat.torch.partition(budget=sys.argv[1])
    run = aot_module(model, fw_compiler=remat.torch.boxed_compiler,
                     bw_compiler=remat.torch.boxed_compiler,
                     partition_fn=partition)
step = lambda: run(batch).sum().backward()
step()  # tracing and planning
measured = step_peak(step, list(model.parameters()))
plan = partition.last_report
print(json.dumps({"measured": measured,
                  "predicted": remat.torch.step_bytes(plan),
                  "plain": remat.torch.step_bytes(plan, "peak_bytes_before")}))
"""


# The same MLP with a graph break after its 8th layer, through the backend:
# two graphs, each planned on its own, and one step's measured peak against
# remat/step.py's prediction for the two.
BREAK_CHILD = r"""
import json, sys
import torch, torch.nn as nn
import remat.torch
from remat.measure import step_peak

torch.manual_seed(0)
torch.set_num_threads(1)

class Broken(nn.Module):
    def __init__(self):
        super().__init__()
        layers = []
        for _ in range(16):
            layers += [nn.Linear(256, 256), nn.ReLU()]
        self.first, self.second = nn.Sequential(*layers[:16]), \
            nn.Sequential(*layers[16:])

    def forward(self, x):
        h = self.first(x)
        torch._dynamo.graph_break()
        return self.second(h)

model, batch = Broken(), torch.randn(2048, 256)
backend = remat.torch.backend(budget=sys.argv[1], compiler="eager")
run = torch.compile(model, backend=backend)
step = lambda: run(batch).sum().backward()
step()  # tracing and planning
measured = step_peak(step, list(model.parameters()))
print(json.dumps({"measured": measured, "graphs": len(backend.reports),
                  "predicted": remat.torch.predicted_step_bytes(
                      backend.reports)}))
"""


def measure(budget, model="mlp", child=CHILD, compiler="eager"):
    env = dict(os.environ, **MMAP_ENV)
    done = subprocess.run([sys.executable, "-c", child, budget, model,
                           compiler],
                          env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


class MeasuredPeakTest(unittest.TestCase):

    def test_the_measured_peak_follows_the_prediction(self):
        figures = {budget: measure(budget) for budget in ["80%", "25%"]}
        for budget, figure in figures.items():
            with self.subTest(budget=budget, figures=figure):
                self.assertLessEqual(figure["measured"],
                                     figure["predicted"] + SLACK_BYTES)
        # The savings are real: from 80% to 25%, PyTorch measures at least
        # 90% of the drop remat predicts, and remat predicts one of more
        # than half the step's memory.
        high, low = figures["80%"], figures["25%"]
        predicted_drop = high["predicted"] - low["predicted"]
        self.assertGreater(predicted_drop, 0.5 * high["predicted"])
        self.assertGreaterEqual(high["measured"] - low["measured"],
                                0.9 * predicted_drop, figures)

    def test_a_convolutions_workspace_is_predicted(self):
        # oneDNN's convolution backward holds a workspace of its
        # grad_output and its input (32 MiB for the 64-channel layers here,
        # remat/aten.py); before remat counted it, this plan measured 112.1
        # MiB against 96.0 predicted (+17%). Now 96.0 against 96.2: the
        # issue's target is 10%.
        figure = measure("80%", "cnn")
        self.assertLessEqual(abs(figure["measured"] - figure["predicted"]),
                             0.1 * figure["predicted"], figure)

    def test_inductor_s_fused_kernels_are_predicted(self):
        # Its batch norms decompose into pointwise chains that Inductor
        # fuses, and remat plans them as fused (remat/fusion.py), in an
        # order Inductor keeps (backend._in_plan_order).
        # Measured here: 88.9 MiB against 84.1 predicted at 80%, 49.1
        # against 48.2 at 40% (plain autodiff plans 112.0).
        for budget in ("80%", "40%"):
            figure = measure(budget, "cnn", compiler="inductor")
            with self.subTest(budget=budget, figures=figure):
                self.assertLessEqual(
                    abs(figure["measured"] - figure["predicted"]),
                    0.1 * figure["predicted"], figure)
                self.assertLess(figure["predicted"], figure["plain"])

    def test_a_result_written_in_place_is_predicted(self):
        # exp(x @ w + b) over 1024 x 8192 (32 MiB): Inductor writes exp
        # over the product, and the backward's product of the gradient and
        # exp over exp, which the forward saved and the backward then no
        # longer reads (docs/memory-model.md, "Results written in place").
        # Measured here: 33.9 MiB against 34.0 predicted; counting every
        # result's bytes, remat predicted 64.0 (plain autodiff's figure).
        figure = measure("100%", "exp", compiler="inductor")
        self.assertLessEqual(abs(figure["measured"] - figure["predicted"]),
                             0.1 * figure["predicted"], figure)
        self.assertLess(figure["predicted"], 0.6 * figure["plain"], figure)

    def test_a_step_of_two_graphs_is_predicted(self):
        # The step holds the first graph's saved tensors through the
        # second's plan, the first's output while the second runs, and the
        # second's gradients through the first's backward (remat/step.py).
        # Measured here: 23.93 MiB against 24.00 predicted at 80%, 11.95
        # against 12.00 at 40%.
        for budget in ("80%", "40%"):
            figure = measure(budget, child=BREAK_CHILD)
            with self.subTest(budget=budget, figures=figure):
                self.assertEqual(figure["graphs"], 2)
                self.assertLessEqual(
                    abs(figure["measured"] - figure["predicted"]),
                    0.1 * figure["predicted"], figure)


if __name__ == "__main__":
    unittest.main()
