"""remat/aten.py's rules for the ops PyTorch 2 emits, against counts made
by hand."""

import unittest

import torch

from remat import aten

ops = torch.ops.aten


class AttentionTest(unittest.TestCase):
    # Two batches of four heads: queries 10 x 8, keys 12 x 8, values 12 x 16,
    # so 2 * 4 * 10 * 12 = 960 scores.
    QUERY, KEY, VALUE = (2, 4, 10, 8), (2, 4, 12, 8), (2, 4, 12, 16)

    def test_forward(self):
        op = ops._scaled_dot_product_flash_attention_for_cpu.default
        args = (self.QUERY, self.KEY, self.VALUE, 0.0, False)
        # Per score: 2 * (8 + 16) for the two matmuls, 5 for the softmax.
        self.assertEqual(aten.flops(op, args, [], []), 960 * (48 + 5))
        causal = args[:4] + (True,)
        self.assertEqual(aten.flops(op, causal, [], []), 960 * 53 // 2)

    def test_backward(self):
        op = ops._scaled_dot_product_flash_attention_for_cpu_backward.default
        args = ((2, 4, 10, 16), self.QUERY, self.KEY, self.VALUE,
                (2, 4, 10, 16), (2, 4, 10), 0.0, False)
        # Per score: the scores again and the query's and key's gradients,
        # 3 * 2 * 8; the values' and probabilities' gradients, 2 * 2 * 16;
        # the softmax's 5.
        self.assertEqual(aten.flops(op, args, [], []), 960 * (48 + 64 + 5))

    def test_random_only_with_dropout(self):
        op = ops._scaled_dot_product_flash_attention_for_cpu.default
        self.assertTrue(aten.may_recompute(op, ("q", "k", "v", 0.0)))
        self.assertTrue(aten.may_recompute(op, ("q", "k", "v")))
        self.assertTrue(aten.is_random(op, ("q", "k", "v", 0.1)))
        self.assertFalse(aten.may_recompute(op, ("q", "k", "v", 0.1)))


class BatchNormTest(unittest.TestCase):

    def test_the_functional_batch_norm_may_run_twice(self):
        op = ops._native_batch_norm_legit_functional.default
        training = ("x", "w", "b", "mean", "var", True, 0.1, 1e-5)
        self.assertTrue(aten.may_recompute(op, training))
        self.assertEqual(aten.running_stats(op, training), (3, 4))
        evaluating = training[:5] + (False,) + training[6:]
        self.assertEqual(aten.running_stats(op, evaluating), ())
        self.assertEqual(aten.flops(op, training, [(4, 3, 2, 2)], []), 8 * 48)

    def test_batch_norms_that_write_their_statistics_never_do(self):
        # One declares its writes, one hides them.
        legit = ops._native_batch_norm_legit
        self.assertFalse(aten.may_recompute(legit.default))
        self.assertTrue(aten.must_not_rerun(ops.native_batch_norm.default))
        self.assertTrue(aten.may_recompute(legit.no_stats))


class TableTest(unittest.TestCase):

    def test_random_ops_by_tag(self):
        self.assertTrue(aten.is_random(ops.native_dropout.default))
        self.assertTrue(aten.is_random(ops.randperm.default))  # tagged only
        self.assertFalse(aten.is_random(ops.relu.default))

    def test_backward_of_select_is_one_per_output_element(self):
        op = ops.select_backward.default
        self.assertTrue(aten.may_recompute(op))
        self.assertEqual(aten.flops(op, ((3,), [4, 3], 0, 1), [(3,)],
                                    [(4, 3)]), 12)

    def test_inductor_s_max_pool_prims_may_run_twice(self):
        import torch._inductor.inductor_prims  # noqa: F401 (registers them)
        prims = torch.ops.prims
        pool = prims._low_memory_max_pool_with_offsets.default
        to_indices = prims._low_memory_max_pool_offsets_to_indices.default
        self.assertTrue(aten.may_recompute(pool))
        self.assertTrue(aten.may_recompute(to_indices))
        # A 3x3 window over each of 2x4x5x5 outputs.
        args = ((2, 4, 10, 10), [3, 3], [2, 2], [1, 1], [1, 1], False)
        self.assertEqual(aten.flops(pool, args, [(2, 4, 10, 10)],
                                    [(2, 4, 5, 5), (2, 4, 5, 5)]), 200 * 9)
        self.assertEqual(aten.flops(to_indices, (), [(2, 4, 5, 5)],
                                    [(2, 4, 5, 5)]), 200)
        # Other prims stay unknown.
        self.assertIsNone(aten.op_name(prims.convert_element_type.default))


if __name__ == "__main__":
    unittest.main()
