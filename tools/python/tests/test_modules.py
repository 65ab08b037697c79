"""Which of a plan's copies the backend has Inductor write
(remat/modules.py, `_written_copies`): on a hand-made plan whose copy of a
ReLU mask (a 100-byte bool) reads a 400-byte activation."""

import types
import unittest

import torch
import torch.fx as fx

from remat import modules


def _plan(mask_read_at, activation_read_at, timeline):
    """A joint graph and the backward of its plan: the mask's copy at step
    0, read at `mask_read_at`; the activation read by a backward op at
    `activation_read_at`; the other steps read nothing."""
    graph = fx.Graph()
    nodes = {}
    for name, value in [("relu", torch.empty(100)),
                        ("le", torch.empty(100, dtype=torch.bool)),
                        ("grad", torch.empty(100))]:
        nodes[name] = graph.placeholder(name)
        nodes[name].meta["val"] = value
    jg = types.SimpleNamespace(nodes=nodes, backward={nodes["grad"]},
                               operands={"le": [nodes["relu"]], "grad": []})
    ops = [{"kind": "extern", "node": "le", "operands": ["relu"],
            "results": ["le.re"]}]
    for step in range(1, len(timeline)):
        read = ([["le.re"]] if step == mask_read_at else []) + \
            ([["relu"]] if step == activation_read_at else [])
        ops.append({"kind": "extern", "node": "grad",
                    "operands": sum(read, []), "results": [f"g{step}"]})
    return jg, ops


class WrittenCopiesTest(unittest.TestCase):

    def written(self, mask_read_at, activation_read_at, timeline):
        jg, ops = _plan(mask_read_at, activation_read_at, timeline)
        return modules._written_copies(jg, ops, ops, timeline)

    def test_a_copy_whose_inlining_passes_the_peak_is_written(self):
        # Inlined into its reader at step 8, the mask holds the activation
        # (400 bytes, read last at step 1) instead of itself (100): 300
        # more from step 0 to 8 takes them over the peak, 600 at step 9.
        self.assertEqual(self.written(8, 1, [500, 500] + [400] * 7 + [600]),
                         {"le.re"})

    def test_a_copy_whose_inlining_stays_under_the_peak_is_not(self):
        # 300 more on at most 300 until step 8; the peak, 1000, at 9.
        self.assertEqual(self.written(8, 1, [300] * 9 + [1000]), set())

    def test_a_copy_read_nearby_is_left_to_inductor(self):
        # Read 4 steps after it (modules.COPY_REACH): Inductor may fuse it
        # into its reader, whatever that holds.
        self.assertEqual(modules.COPY_REACH, 4)
        self.assertEqual(self.written(4, 1, [900] * 5 + [100] * 5), set())

    def test_a_copy_holding_nothing_more_is_not_written(self):
        # The activation is read at step 9, after the mask's reader: it is
        # live there either way.
        self.assertEqual(self.written(8, 9, [900] * 9 + [100]), set())

    def test_the_copy_holding_most_at_the_steps_over_is_written_first(self):
        # Two masks over the same steps: writing the one that holds more
        # (a 4-times larger activation) takes the plan back under its peak.
        jg, ops = _plan(8, 1, [0] * 10)
        jg.nodes["wide"] = fx.Graph().placeholder("wide")
        jg.nodes["wide"].meta["val"] = torch.empty(400)
        jg.nodes["le2"] = fx.Graph().placeholder("le2")
        jg.nodes["le2"].meta["val"] = torch.empty(100, dtype=torch.bool)
        jg.operands["le2"] = [jg.nodes["wide"]]
        ops.insert(1, {"kind": "extern", "node": "le2", "operands": ["wide"],
                       "results": ["le2.re"]})
        ops[2]["operands"] = ["relu", "wide"]
        ops[9]["operands"] = ["le.re", "le2.re"]
        # More when inlined: 300 (le) and 1600 - 100 = 1500 (le2), from
        # steps 0 and 1 to 9; the peak is 2000, at step 10.
        timeline = [1000] * 10 + [2000]
        self.assertEqual(modules._written_copies(jg, ops, ops, timeline),
                         {"le2.re"})


if __name__ == "__main__":
    unittest.main()
