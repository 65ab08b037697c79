"""Writes the models of ort-run's self-check: python make_model.py DIR

They reach the parts of ort-run the PyTorch fixtures do not. DIR/m.onnx has
inputs of type int64 (`labels`), bool (`mask`) and float64 (`w`), an input
with an initializer of the same name (`bias`, which ORT lets a feed override
and keeps when none does), and output names holding '/':

    out/labels = Identity(labels)    mask/not = Not(mask)    w/scaled = w * w + bias

DIR/add.onnx adds `a[N]` and `b[M]`, which fails in ORT's run unless the
lengths broadcast, into two outputs whose `--dump=DIR` file names collide:

    sum/0 = Add(a, b)    sum_0 = Identity(sum/0)

DIR/mistyped.onnx adds a float32 to an int64, which ORT refuses to load.
"""

import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

value = helper.make_tensor_value_info


def node(op, inputs, output):
    return helper.make_node(op, inputs, [output], name=f"{op}_{output}")


def save_graph(path, nodes, inputs, outputs, initializer=()):
    graph = helper.make_graph(nodes, "ort-run-check", inputs, outputs,
                              initializer=list(initializer))
    save(helper.make_model(graph, ir_version=8,
                           opset_imports=[helper.make_opsetid("", 13)]), path)


def main(folder):
    save_graph(
        os.path.join(folder, "m.onnx"),
        [node("Identity", ["labels"], "out/labels"),
         node("Not", ["mask"], "mask/not"),
         node("Mul", ["w", "w"], "w_squared"),
         node("Add", ["w_squared", "bias"], "w/scaled")],
        [value("labels", TensorProto.INT64, [6]),
         value("mask", TensorProto.BOOL, [3]),
         value("w", TensorProto.DOUBLE, [2, 2]),
         value("bias", TensorProto.DOUBLE, [2])],
        [value("out/labels", TensorProto.INT64, [6]),
         value("mask/not", TensorProto.BOOL, [3]),
         value("w/scaled", TensorProto.DOUBLE, [2, 2])],
        [numpy_helper.from_array(np.array([0.5, -0.5]), "bias")])
    save_graph(
        os.path.join(folder, "add.onnx"),
        [helper.make_node("Add", ["a", "b"], ["sum/0"], name="add"),
         node("Identity", ["sum/0"], "sum_0")],
        [value("a", TensorProto.FLOAT, ["N"]), value("b", TensorProto.FLOAT, ["M"])],
        [value("sum/0", TensorProto.FLOAT, None), value("sum_0", TensorProto.FLOAT, None)])
    save_graph(
        os.path.join(folder, "mistyped.onnx"),
        [helper.make_node("Add", ["a", "b"], ["c"], name="add")],
        [value("a", TensorProto.FLOAT, [2]), value("b", TensorProto.INT64, [2])],
        [value("c", TensorProto.FLOAT, [2])])


if __name__ == "__main__":
    main(sys.argv[1])
