"""Writes the model of ort-run's self-check: python make_model.py OUT.onnx

It reaches the parts of ort-run the PyTorch fixtures do not: inputs of type
int64 (`labels`), bool (`mask`) and float64 (`w`), an input with an
initializer of the same name (`bias`, which may be left unfed), and output
names holding '/'.

    out/labels = Identity(labels)    mask/not = Not(mask)    w/scaled = w * w + bias
"""

import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save


def node(op, inputs, output):
    return helper.make_node(op, inputs, [output], name=f"{op}_{output}")


def main(path):
    value = helper.make_tensor_value_info
    graph = helper.make_graph(
        [node("Identity", ["labels"], "out/labels"),
         node("Not", ["mask"], "mask/not"),
         node("Mul", ["w", "w"], "w_squared"),
         node("Add", ["w_squared", "bias"], "w/scaled")],
        "ort-run-check",
        [value("labels", TensorProto.INT64, [6]),
         value("mask", TensorProto.BOOL, [3]),
         value("w", TensorProto.DOUBLE, [2, 2]),
         value("bias", TensorProto.DOUBLE, [2])],
        [value("out/labels", TensorProto.INT64, [6]),
         value("mask/not", TensorProto.BOOL, [3]),
         value("w/scaled", TensorProto.DOUBLE, [2, 2])],
        initializer=[numpy_helper.from_array(np.array([0.5, -0.5]), "bias")])
    model = helper.make_model(graph, ir_version=8,
                              opset_imports=[helper.make_opsetid("", 13)])
    save(model, path)


if __name__ == "__main__":
    main(sys.argv[1])
