"""Pointwise chains planned as the one kernel a fusing compiler makes of
each (remat/fusion.py): which nodes join, what the op costs, and that the
modules built back from a fused plan compute eager's gradients."""

import re
import unittest
import warnings

import torch
import torch.nn.functional as F
from functorch.compile import aot_function
from torch._inductor.decomposition import select_decomp_table

import remat.torch

OP = re.compile(r'= extern(?:_view)?\(.*\{fn = "([^"]+)".*flops = (\d+)')
# An extern op's operands, `fn` and `inplace` operands (None without).
INPLACE = re.compile(r'= extern\(([^)]*)\) \{fn = "([^"]+)"'
                     r'(?:.*inplace = \[([\d, ]*)\])?')


def _wide(x, w):
    # x @ w * 0.1 has one reader, exp; exp's result has two (the
    # subtraction and its own backward), so it ends a chain. The last
    # subtraction's one reader is a reduction.
    for _ in range(4):
        x = torch.exp((x @ w) * 0.1) - 1.0
    return x.sum(dim=1)


def _dropped(x, w):
    # The mask is random: it must not join a chain that a plan may rerun.
    for _ in range(4):
        x = F.dropout(torch.tanh(x @ w) * 3.0, p=0.5)
    return x.sum(dim=1)


def _tied(ids, table):
    # The table is read twice: as an embedding and as an output layer, so
    # its gradient adds the output layer's product to the embedding's
    # scatter, which Inductor's decompositions write into a fill.
    h = torch.tanh(F.embedding(ids, table))
    return (h.view(-1, 16) @ table.t()).sum(dim=1)


def _exp_sum(x, w):
    # exp alone reads the product; in the backward, the product of the
    # gradient and exp reads exp, whose other reader ran in the forward.
    return torch.exp(x @ w).sum(dim=1)


def _siblings(x, w):
    # The product has two forward readers, exp and sin, which may share a
    # kernel; its backward reads it again for cos.
    t = x @ w
    return (torch.exp(t) + torch.sin(t)).sum(dim=1)


def _cross_entropy(x, w):
    # The gradient's product of the tangent and the targets' mask is read
    # by a sum and by the gradient; the log-softmax's exp is a forward op
    # only the gradient reads.
    return F.cross_entropy(x @ w, torch.arange(512) % 32, reduction="none")


def _gradients(f):
    """x's and w's gradients after one step of `f`, from the same inputs
    and random numbers every call."""
    torch.manual_seed(0)
    x = torch.randn(512, 32, requires_grad=True)
    w = torch.randn(32, 32, requires_grad=True)
    torch.manual_seed(1)
    f(x, w).sum().backward()
    return x.grad, w.grad


def _plan(f, fuse, budget="50%", inputs=_gradients, decompositions=None):
    """(joint text, report, gradients) of one step of `f`."""
    partition = remat.torch.partition(budget=budget)
    partition.fuse_pointwise = fuse
    compiled = aot_function(f, fw_compiler=remat.torch.boxed_compiler,
                            bw_compiler=remat.torch.boxed_compiler,
                            partition_fn=partition,
                            decompositions=decompositions)
    grads = inputs(compiled)
    return partition.last_joint, partition.last_report, grads


def _tied_gradient(f):
    """The table's gradient after one step of `f`."""
    torch.manual_seed(0)
    ids = torch.randint(0, 100, (8, 4))
    table = torch.randn(100, 16, requires_grad=True)
    f(ids, table).sum().backward()
    return (table.grad,)


def _inplace(text):
    """{fn: (operands, the operands its result may be written over)} of
    the text's extern ops, one per fn."""
    found = {}
    for m in INPLACE.finditer(text):
        operands = [o.strip() for o in m.group(1).split(",")]
        listed = [int(i) for i in m.group(3).split(",")] if m.group(3) \
            else []
        found[m.group(2)] = (operands, [operands[i] for i in listed])
    return found


def _ops(text):
    """[(fn, flops)] of the text's extern ops."""
    return [(m.group(1), int(m.group(2))) for m in OP.finditer(text)]


class FusionTest(unittest.TestCase):

    def test_a_chain_is_one_op_costing_its_nodes(self):
        fused, _, _ = _plan(_wide, fuse=True)
        plain, _, _ = _plan(_wide, fuse=False)
        names = [fn for fn, _ in _ops(fused)]
        self.assertIn("aten.mul.Tensor+aten.exp.default", names)
        self.assertIn("aten.sub.Tensor+aten.sum.dim_IntList", names)
        # exp has two readers, so no chain runs through it.
        self.assertNotIn("aten.mul.Tensor+aten.exp.default+aten.sub.Tensor",
                         "\n".join(names))
        self.assertLess(len(_ops(fused)), len(_ops(plain)))
        self.assertEqual(sum(f for _, f in _ops(fused)),
                         sum(f for _, f in _ops(plain)))

    def test_fused_modules_compute_eager_s_gradients(self):
        for f in (_wide, _dropped):
            expected = _gradients(f)
            recomputed = 0
            for budget in ("90%", "75%"):
                with self.subTest(f=f.__name__, budget=budget):
                    _, report, grads = _plan(f, fuse=True, budget=budget)
                    recomputed += report["flops_recompute"]
                    for got, want in zip(grads, expected):
                        torch.testing.assert_close(got, want)
            self.assertGreater(recomputed, 0, f.__name__)

    def test_a_scatter_joins_its_fill_and_its_pointwise_reader(self):
        """Inductor scatters the embedding's gradient into the fill it
        starts from, and adds the output layer's gradient in place: one
        buffer, so one op, which computes eager's gradient."""
        expected = _tied_gradient(_tied)
        with warnings.catch_warnings():  # 50% is below this graph's floor
            warnings.simplefilter("ignore", remat.torch.RematBudgetWarning)
            fused, _, grads = _plan(_tied, fuse=True, inputs=_tied_gradient,
                                    decompositions=select_decomp_table())
        self.assertIn("aten.full.default+"
                      "aten._unsafe_masked_index_put_accumulate.default+"
                      "aten.add.Tensor", [fn for fn, _ in _ops(fused)])
        torch.testing.assert_close(grads[0], expected[0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", remat.torch.RematBudgetWarning)
            plain, _, _ = _plan(_tied, fuse=False, inputs=_tied_gradient,
                                decompositions=select_decomp_table())
        self.assertIn("aten._unsafe_masked_index_put_accumulate.default",
                      [fn for fn, _ in _ops(plain)])

    def test_a_pointwise_op_names_the_dead_operands_it_may_overwrite(self):
        """Inductor writes a pointwise kernel's result over an operand of
        its type whose other readers ran in earlier kernels: a buffer only
        it reads in its pass (remat/fusion.py)."""
        decompositions = select_decomp_table()
        ops = _inplace(_plan(_exp_sum, fuse=True, budget="100%",
                             decompositions=decompositions)[0])
        self.assertEqual(ops["aten.exp.default"], (["%mm"], ["%mm"]))
        # In the backward: exp (through its alias), not the tangent's view.
        operands, overwritten = ops["aten.mul.Tensor"]
        self.assertEqual(len(overwritten), 1, operands)
        self.assertTrue(overwritten[0].startswith("%alias"), operands)
        ops = _inplace(_plan(_siblings, fuse=True, budget="100%",
                             decompositions=decompositions)[0])
        self.assertEqual(ops["aten.exp.default"], (["%mm"], []))
        # cos(t) is a forward op only the backward reads, of t's size: it
        # runs in the backward's kernel, which may write over t.
        backward = [v for fn, v in ops.items()
                    if fn.startswith("aten.cos.default+")]
        self.assertEqual(len(backward), 1, ops)
        self.assertIn("%mm", backward[0][1])
        unfused = _plan(_exp_sum, fuse=False, budget="100%",
                        decompositions=decompositions)[0]
        self.assertNotIn("inplace", unfused)

    def test_a_value_inlined_into_its_readers_is_in_each_chain(self):
        """Inductor computes a backward value read by several fused kernels
        in each of them, and a forward value only the backward reads, no
        smaller than what it reads, runs in the backward's kernel: the
        cross-entropy's gradient reads the log-softmax and small values
        alone, and is written over the log-softmax."""
        with warnings.catch_warnings():  # the targets' ops: not in the table
            warnings.simplefilter("ignore", UserWarning)
            text, _, grads = _plan(_cross_entropy, fuse=True, budget="100%",
                                   decompositions=select_decomp_table())
        fns = [fn for fn, _ in _ops(text)]
        product = "aten.where.self+aten.mul.Tensor"
        readers = [fn for fn in fns if fn.startswith(product + "+")]
        self.assertEqual(len(readers), 2, fns)
        self.assertNotIn(product, fns)
        self.assertNotIn("aten.exp.default", fns)
        gradient = [v for fn, v in _inplace(text).items()
                    if fn.startswith(product + "+") and "aten.exp" in fn]
        self.assertEqual(len(gradient), 1, fns)
        self.assertTrue(any(o.startswith("%alias") for o in gradient[0][1]),
                        gradient)
        for got, want in zip(grads, _gradients(_cross_entropy)):
            torch.testing.assert_close(got, want)

    def test_random_ops_stay_apart(self):
        fused, _, _ = _plan(_dropped, fuse=True)
        chains = [fn.split("+") for fn, _ in _ops(fused) if "+" in fn]
        self.assertTrue(chains)
        for chain in chains:
            self.assertNotIn("aten.native_dropout.default", chain)

    def test_the_backend_fuses_for_inductor_only(self):
        self.assertTrue(remat.torch.backend(budget="50%").partition
                        .fuse_pointwise)
        self.assertFalse(remat.torch.backend(budget="50%", compiler="eager")
                         .partition.fuse_pointwise)
        self.assertFalse(remat.torch.partition(budget="50%").fuse_pointwise)


if __name__ == "__main__":
    unittest.main()
