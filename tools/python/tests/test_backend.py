"""remat's torch.compile backend (docs/torch.md, "torch.compile"): small
models train one step through it, with Inductor and uncompiled, to eager
PyTorch's gradients; graph breaks give a plan per graph; the partition
function also serves Dynamo's `aot_autograd`."""

import copy
import unittest
import warnings

import torch
import torch.nn as nn
from torch._dynamo.backends.common import aot_autograd

import remat.torch

# Inductor reorders float sums: gradients differ from eager's in their last
# bits, as torch.compile's own default's do. remat's under Inductor are
# within TOLERANCE, or twice the default's error where the default misses
# it (1.3e-4 on the CNN's first batch-norm weight, whose gradient is small
# beside its terms), and within DEFAULT_FACTOR of the default's error or of
# float32's rounding at these sizes (other sums are fused).
DEFAULT_FACTOR = 10
ROUNDING = 1e-5
TOLERANCE = 1e-4


def _mlp():
    torch.manual_seed(0)
    layers = []
    for _ in range(6):
        layers += [nn.Linear(32, 32), nn.ReLU()]
    return nn.Sequential(*layers), torch.randn(64, 32)


def _cnn():
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
        nn.MaxPool2d(3, stride=2, padding=1),
        nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4))
    return model, torch.randn(4, 3, 16, 16)


def _transformer():
    torch.manual_seed(0)
    model = nn.TransformerEncoderLayer(d_model=32, nhead=4,
                                       dim_feedforward=64, dropout=0.0,
                                       batch_first=True)
    return model, torch.randn(2, 16, 32)


def _relative(a, b):
    return ((a - b).abs().max() / b.abs().max().clamp_min(1e-30)).item()


def _loss(output):
    # Not mean(output ** 2): a layer norm's output has that fixed.
    return output.sin().mean()


def _step(model, batch, backend=None):
    """Loss, parameter gradients and buffers after one step of a copy of
    `model`, compiled with `backend` (eager without)."""
    model = copy.deepcopy(model)
    torch._dynamo.reset()  # nn.Sequential's forward compiles once per test
    run = model if backend is None else torch.compile(model, backend=backend)
    loss = _loss(run(batch))
    loss.backward()
    return (loss.detach(), [p.grad for p in model.parameters()],
            [b.clone() for b in model.buffers() if b.is_floating_point()])


def _errors(result, reference):
    loss, grads, buffers = result
    ref_loss, ref_grads, ref_buffers = reference
    return max([_relative(loss, ref_loss)] +
               [_relative(g, r) for g, r in zip(grads, ref_grads)] +
               [_relative(b, r) for b, r in zip(buffers, ref_buffers)])


class BackendGradientTest(unittest.TestCase):

    def check(self, make, budgets):
        model, batch = make()
        eager = _step(model, batch)
        default = _errors(_step(model, batch, "inductor"), eager)
        for compiler in ("inductor", "eager"):
            for budget in budgets:
                with self.subTest(compiler=compiler, budget=budget):
                    backend = remat.torch.backend(budget=budget,
                                                  compiler=compiler)
                    error = _errors(_step(model, batch, backend), eager)
                    self.assertEqual(len(backend.reports), 1)
                    if compiler == "eager":
                        self.assertLessEqual(error, TOLERANCE)
                    else:
                        self.assertLessEqual(error,
                                             max(TOLERANCE, 2 * default))
                    self.assertLessEqual(
                        error, max(DEFAULT_FACTOR * default, ROUNDING),
                        f"torch.compile's default: {default}")
                    if budget == budgets[-1]:
                        # The low budget makes remat recompute.
                        self.assertGreater(
                            backend.reports[0]["flops_recompute"], 0)

    def test_mlp(self):
        self.check(_mlp, ["80%", "30%"])

    def test_inductor_s_joint_graph_plans_as_low(self):
        # Inductor's decompositions put ReLU's backward masks among the
        # backward's nodes; unmoved (backend._forward_early), the plan kept
        # every layer's activation and mask.
        model, batch = _mlp()
        peaks = {}
        for compiler in ("inductor", "eager"):
            backend = remat.torch.backend(budget="30%", compiler=compiler)
            _step(model, batch, backend)
            peaks[compiler] = backend.reports[0]["peak_bytes_after"]
        self.assertLessEqual(peaks["inductor"], 1.02 * peaks["eager"], peaks)

    def test_cnn_with_batch_norm(self):
        self.check(_cnn, ["80%", "40%"])

    def test_inductor_s_max_pool_may_be_recomputed(self):
        # Inductor's decomposition pools with its own prims: the pool keeps
        # int8 offsets, which a second prim turns into int64 indices for
        # the backward. Both are in remat's table.
        model, batch = _cnn()
        backend = remat.torch.backend(budget="40%")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _step(model, batch, backend)
        self.assertEqual([str(w.message) for w in caught
                          if "no entry" in str(w.message)], [])
        pool = [line for line in backend.partition.last_joint.splitlines()
                if "prims._low_memory_max_pool" in line]
        self.assertEqual(len(pool), 2, pool)
        self.assertEqual([line for line in pool
                          if "recompute = false" in line], [])

    def test_transformer_block(self):
        self.check(_transformer, ["80%", "40%"])


class BackendTest(unittest.TestCase):

    def test_a_graph_break_gives_two_plans(self):
        torch.manual_seed(0)
        first, second = nn.Linear(16, 16), nn.Linear(16, 16)

        class Broken(nn.Module):
            def __init__(self):
                super().__init__()
                self.first, self.second = first, second

            def forward(self, x):
                h = torch.relu(self.first(x))
                torch._dynamo.graph_break()
                return torch.relu(self.second(h))

        model, batch = Broken(), torch.randn(8, 16)
        backend = remat.torch.backend(budget="50%", compiler="eager")
        error = _errors(_step(model, batch, backend), _step(model, batch))
        self.assertLessEqual(error, TOLERANCE)
        self.assertEqual([r["graph_index"] for r in backend.reports], [0, 1])

    def test_a_product_runs_where_remat_planned_it(self):
        """A tied table's gradient adds the output layer's product, first in
        the backward, to the embedding's scatter, last: Inductor's default
        rewrites the two into one `addmm` at the end, holding the product's
        operands the whole backward; remat's backend keeps the product in
        its place."""
        from torch._inductor.utils import run_and_get_code

        def tied(ids, table):
            h = torch.tanh(nn.functional.embedding(ids, table))
            return torch.tanh(h.view(-1, 16) @ table.t()).sum()

        ids = torch.randint(0, 100, (8, 4))
        table = torch.randn(100, 16, requires_grad=True)
        backward_has_addmm = []
        for backend in ("inductor", remat.torch.backend(budget="90%")):
            torch._dynamo.reset()
            step = torch.compile(tied, backend=backend)
            _, (_, backward) = run_and_get_code(
                lambda: step(ids, table).backward())
            backward_has_addmm.append("addmm" in backward)
        self.assertEqual(backward_has_addmm, [True, False])

    def test_a_kernel_group_ends_where_a_buffer_dies(self):
        """Inductor's C++ generator writes a product's sum and an unrelated
        sine into one function, allocating the sine's buffer while the
        product's is still held; under the backend's generator the sum's
        kernel ends its group, the product's buffer is freed and the sine
        reuses it: one 256 x 256 buffer after the product instead of two."""
        import contextlib
        from torch._inductor import config
        from torch._inductor.codegen import common
        from torch._inductor.utils import run_and_get_code
        from remat import backend

        def product_then_sine(x, w, z):
            return (x @ w).sum(), torch.sin(z) * 2

        x, w, z = (torch.randn(256, 256) for _ in range(3))
        common.init_backend_registration()
        registered = common.device_codegens["cpu"]
        allocations = []
        for generator in (contextlib.nullcontext(),
                          backend._frees_between_kernels()):
            torch._dynamo.reset()
            with generator, config.patch(fx_graph_cache=False):
                step = torch.compile(product_then_sine)
                _, (code,) = run_and_get_code(lambda: step(x, w, z))
            allocations.append(code.count("empty_strided_cpu((256, 256)"))
        self.assertEqual(allocations, [2, 1])
        self.assertIs(common.device_codegens["cpu"], registered)

    def test_a_large_buffer_is_not_fused_ahead_of_a_product(self):
        """A scatter into an 8192 x 64 table reads a tanh that a product,
        between them in the graph's order, reads too: Inductor's default
        fuses the scatter into the tanh's kernel and allocates the table
        before the product; the backend's compiler leaves the scatter after
        the product, where the order put it."""
        from torch._inductor import config
        from torch._inductor.compile_fx import compile_fx, compile_fx_inner
        from torch._inductor.utils import run_and_get_code
        from remat import backend

        def scatter_over_a_product(x, w, ids):
            g = torch.tanh(x)
            return g @ w, torch.ops.aten.embedding_dense_backward(
                g, ids, 8192, -1, False)

        x, w = torch.randn(64, 64), torch.randn(64, 64)
        ids = torch.randint(0, 8192, (64,))
        table_first = []
        for inner in (compile_fx_inner, backend._in_plan_order):
            torch._dynamo.reset()
            with config.patch(fx_graph_cache=False):
                step = torch.compile(
                    scatter_over_a_product,
                    backend=lambda gm, inputs, inner=inner: compile_fx(
                        gm, inputs, inner_compile=inner))
                _, (code,) = run_and_get_code(lambda: step(x, w, ids))
            table_first.append(code.index("empty_strided_cpu((8192, 64)") <
                               code.index("extern_kernels.mm("))
        self.assertEqual(table_first, [True, False])

    def test_a_saved_input_from_the_graph_before_is_reported(self):
        # The second graph's first layer saves its input for its weight's
        # gradient; the first graph ends in a linear layer, whose output it
        # does not save: it hands h over, and the second graph holds it
        # through its backward (remat/step.py).
        class Broken(nn.Module):
            def __init__(self):
                super().__init__()
                self.first, self.second = nn.Linear(64, 64), nn.Linear(64, 64)

            def forward(self, x):
                h = self.first(x)
                torch._dynamo.graph_break()
                return self.second(h)

        h_bytes = 32 * 64 * 4
        for compiler in ("eager", "inductor"):
            with self.subTest(compiler=compiler):
                torch._dynamo.reset()
                backend = remat.torch.backend(budget="50%", compiler=compiler)
                torch.compile(Broken(), backend=backend)(
                    torch.randn(32, 64)).sum().backward()
                first, second = backend.reports
                self.assertEqual(first["saved_handed_bytes"], 0)
                self.assertEqual(first["output_bytes"], h_bytes)
                self.assertEqual(second["saved_handed_bytes"], h_bytes)

    def test_five_sgd_steps_track_eager(self):
        model, batch = _mlp()
        losses = {}
        for name, backend in (("eager", None),
                              ("remat", remat.torch.backend(budget="30%"))):
            trained = copy.deepcopy(model)
            torch._dynamo.reset()
            run = trained if backend is None else torch.compile(
                trained, backend=backend)
            optimizer = torch.optim.SGD(trained.parameters(), lr=0.1)
            losses[name] = []
            for _ in range(5):
                optimizer.zero_grad()
                loss = _loss(run(batch))
                loss.backward()
                optimizer.step()
                losses[name].append(loss.item())
        for remat_loss, eager_loss in zip(losses["remat"], losses["eager"]):
            self.assertAlmostEqual(remat_loss / eager_loss, 1.0, delta=1e-4,
                                   msg=losses)
        self.assertLess(losses["eager"][-1], losses["eager"][0])

    def test_the_partition_under_dynamo_s_aot_autograd(self):
        model, batch = _mlp()
        partition = remat.torch.partition(budget="30%")
        backend = aot_autograd(fw_compiler=remat.torch.boxed_compiler,
                               bw_compiler=remat.torch.boxed_compiler,
                               partition_fn=partition)
        error = _errors(_step(model, batch, backend), _step(model, batch))
        self.assertLessEqual(error, TOLERANCE)
        self.assertGreater(partition.last_report["flops_recompute"], 0)


class BackendArgumentTest(unittest.TestCase):

    def test_bad_arguments_fail_when_the_backend_is_made(self):
        for arguments, message in (({}, "needs a budget"),
                                   ({"budget": "40%", "compiler": "tvm"},
                                    "compiler"),
                                   ({"budget": "40%", "placement": "late"},
                                    "placement"),
                                   ({"budget": "40%", "costs": "time"},
                                    "costs"),
                                   ({"budget": "40%", "planner": None},
                                    "planner"),
                                   ({"budget": 0.5}, "float"),
                                   ({"budget": "40%", "strict": "yes"},
                                    "strict")):
            with self.subTest(arguments=arguments):
                with self.assertRaisesRegex(ValueError, message):
                    remat.torch.backend(**arguments)

    def test_the_backend_module_imports_first(self):
        # remat/torch.py imports remat/backend.py, which needs torch.py's
        # Partition: either may be imported first, in a fresh interpreter.
        import subprocess
        import sys
        done = subprocess.run(
            [sys.executable, "-c",
             "import remat.backend, remat.torch; "
             "remat.backend.backend(budget='40%', strict=True)"],
            capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)


class OrderTest(unittest.TestCase):

    def test_insertion_after_the_last_operand_as_a_list_would(self):
        # remat/backend.py's _Order against list.insert after a backward
        # scan, on random graphs, with labels small enough to renumber often.
        import random
        from remat import backend

        def by_list(nodes):
            order = []
            for name, operands, movable in nodes:
                at = len(order)
                while movable and at > 0 and order[at - 1] not in operands:
                    at -= 1
                order.insert(at, name)
            return order

        def by_order(nodes):
            order = backend._Order()
            order._GAP = 8
            for name, operands, movable in nodes:
                if movable:
                    order.insert_after(order.last_of(operands), name)
                else:
                    order.append(name)
            return list(order)

        rng = random.Random(1)
        for _ in range(200):
            nodes = []
            for name in range(rng.randint(1, 60)):
                operands = rng.sample([n[0] for n in nodes],
                                      rng.randint(0, min(3, len(nodes))))
                nodes.append((name, operands, rng.random() < 0.6))
            self.assertEqual(by_order(nodes), by_list(nodes))


if __name__ == "__main__":
    unittest.main()
