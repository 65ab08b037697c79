//===- make-model.js - A tiny ONNX model for ort-run's self-check ----------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
//
// node make-model.js OUT.onnx
//
// Writes, without Python or an ONNX library, a model that reaches the parts of
// ort-run the PyTorch fixtures do not: inputs of type int64 (`labels`), bool
// (`mask`) and float64 (`w`), an input with an initializer of the same name
// (`bias`, which may be left unfed), and output names holding '/'.
//
//   out/labels = Identity(labels)    mask/not = Not(mask)    w/scaled = w * w + bias
//
//===----------------------------------------------------------------------===//
'use strict';

const fs = require('fs');

// Protocol buffers' wire format: a field is a varint key (number << 3 | wire
// type) and a varint (type 0) or a length-prefixed byte string (type 2).
function varint(n) {
  const bytes = [];
  for (; n >= 0x80; n = Math.floor(n / 128))
    bytes.push((n % 128) | 0x80);
  bytes.push(n);
  return Buffer.from(bytes);
}
const int = (field, n) => Buffer.concat([varint(field << 3), varint(n)]);
const bytes = (field, b) => {
  const body = Buffer.isBuffer(b) ? b : Buffer.from(b);
  return Buffer.concat([varint((field << 3) | 2), varint(body.length), body]);
};
const message = (field, ...parts) => bytes(field, Buffer.concat(parts));

// onnx.proto's TensorProto.DataType values.
const INT64 = 7, BOOL = 9, DOUBLE = 11;

/// ValueInfoProto{name, type{tensor_type{elem_type, shape{dim{dim_value}...}}}}.
function valueInfo(field, name, elemType, dims) {
  const shape = dims.map((d) => message(1, int(1, d)));
  return message(field, bytes(1, name),
                 message(2, message(1, int(1, elemType), message(2, ...shape))));
}

/// NodeProto{input..., output, name, op_type}.
function node(op, inputs, output) {
  return message(1, ...inputs.map((i) => bytes(1, i)), bytes(2, output),
                 bytes(3, `${op}_${output}`), bytes(4, op));
}

const bias = Buffer.from(new Float64Array([0.5, -0.5]).buffer);
const graph = message(7,
  node('Identity', ['labels'], 'out/labels'),
  node('Not', ['mask'], 'mask/not'),
  node('Mul', ['w', 'w'], 'w_squared'),
  node('Add', ['w_squared', 'bias'], 'w/scaled'),
  bytes(2, 'ort-run-check'),
  // TensorProto{dims, data_type, name, raw_data}
  message(5, int(1, 2), int(2, DOUBLE), bytes(8, 'bias'), bytes(9, bias)),
  valueInfo(11, 'labels', INT64, [6]),
  valueInfo(11, 'mask', BOOL, [3]),
  valueInfo(11, 'w', DOUBLE, [2, 2]),
  valueInfo(11, 'bias', DOUBLE, [2]),
  valueInfo(12, 'out/labels', INT64, [6]),
  valueInfo(12, 'mask/not', BOOL, [3]),
  valueInfo(12, 'w/scaled', DOUBLE, [2, 2]));
// ModelProto{ir_version 8, opset_import{domain "", version 13}, graph}
const model = Buffer.concat([int(1, 8), message(8, bytes(1, ''), int(2, 13)), graph]);
fs.writeFileSync(process.argv[2], model);
