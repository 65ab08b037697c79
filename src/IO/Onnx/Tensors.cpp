//===- Tensors.cpp - ONNX TensorProto data ----------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Decoding TensorProto data, from raw little-endian bytes or the typed
/// repeated fields, into known tensors (small ones the importer folds) and
/// into host tensors (the weights `readOnnxTensors` returns).
///
//===----------------------------------------------------------------------===//

#include "ImportContext.h"
#include "OnnxModel.h"

#include "remat/IO/Onnx.h"

#include "llvm/ADT/STLExtras.h"

#include <cstring>

namespace remat::onnximport {

int64_t KnownTensor::numel() const {
  int64_t n = 1;
  for (int64_t dim : shape)
    if (dim < 0 || __builtin_mul_overflow(n, dim, &n))
      return -1;
  return n;
}

KnownTensor KnownTensor::ofInts(std::vector<int64_t> values,
                                std::vector<int64_t> shape, DType dtype) {
  KnownTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.ints = std::move(values);
  return t;
}

KnownTensor KnownTensor::ofFloats(std::vector<double> values,
                                  std::vector<int64_t> shape, DType dtype) {
  KnownTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.floats = std::move(values);
  return t;
}

absl::StatusOr<DType> dtypeOfOnnx(int onnxType) {
  switch (onnxType) {
  case onnx::TensorProto::FLOAT:
    return DType::F32;
  case onnx::TensorProto::DOUBLE:
    return DType::F64;
  case onnx::TensorProto::INT64:
    return DType::I64;
  case onnx::TensorProto::INT32:
    return DType::I32;
  case onnx::TensorProto::INT8:
    return DType::I8;
  case onnx::TensorProto::BOOL:
    return DType::Bool;
  default:
    if (!onnx::TensorProto::DataType_IsValid(onnxType))
      return invalidArgument("unknown element type {}", onnxType);
    return invalidArgument("unsupported element type {} ({})",
                           onnx::TensorProto::DataType_Name(
                               onnx::TensorProto::DataType(onnxType)),
                           onnxType);
  }
}

namespace {

/// Calls `store(i, value)` for every element of `proto`, as double (floats)
/// or int64 (the rest), after checking that the data holds `numel` elements.
template <typename Store>
absl::Status forEachElement(const onnx::TensorProto &proto, DType dtype,
                            int64_t numel, Store store) {
  if (proto.data_location() == onnx::TensorProto::EXTERNAL)
    return invalidArgument("tensor '{}' keeps its data in an external file, "
                           "which is not supported",
                           proto.name());
  auto count = [&](int64_t have) -> absl::Status {
    if (have != numel)
      return invalidArgument("tensor '{}' holds {} elements, its shape needs {}",
                             proto.name(), have, numel);
    return absl::OkStatus();
  };
  if (proto.has_raw_data()) {
    const std::string &raw = proto.raw_data();
    int64_t width = dtypeBytes(dtype);
    if (int64_t(raw.size()) % width != 0)
      return invalidArgument("tensor '{}' has {} raw bytes, not a multiple of "
                             "{}",
                             proto.name(), raw.size(), width);
    REMAT_RETURN_IF_ERROR(count(int64_t(raw.size()) / width));
    const char *p = raw.data();
    for (int64_t i = 0; i < numel; ++i, p += width) {
      switch (dtype) {
      case DType::F32: {
        float v;
        std::memcpy(&v, p, 4);
        store(i, double(v), 0);
        break;
      }
      case DType::F64: {
        double v;
        std::memcpy(&v, p, 8);
        store(i, v, 0);
        break;
      }
      case DType::I64: {
        int64_t v;
        std::memcpy(&v, p, 8);
        store(i, 0.0, v);
        break;
      }
      case DType::I32: {
        int32_t v;
        std::memcpy(&v, p, 4);
        store(i, 0.0, v);
        break;
      }
      case DType::I8:
        store(i, 0.0, int64_t(int8_t(*p)));
        break;
      default:
        store(i, 0.0, int64_t(*p != 0));
        break;
      }
    }
    return absl::OkStatus();
  }
  switch (dtype) {
  case DType::F32:
    REMAT_RETURN_IF_ERROR(count(proto.float_data_size()));
    for (int64_t i = 0; i < numel; ++i)
      store(i, double(proto.float_data(int(i))), 0);
    return absl::OkStatus();
  case DType::F64:
    REMAT_RETURN_IF_ERROR(count(proto.double_data_size()));
    for (int64_t i = 0; i < numel; ++i)
      store(i, proto.double_data(int(i)), 0);
    return absl::OkStatus();
  case DType::I64:
    REMAT_RETURN_IF_ERROR(count(proto.int64_data_size()));
    for (int64_t i = 0; i < numel; ++i)
      store(i, 0.0, proto.int64_data(int(i)));
    return absl::OkStatus();
  default:
    REMAT_RETURN_IF_ERROR(count(proto.int32_data_size()));
    for (int64_t i = 0; i < numel; ++i)
      store(i, 0.0, int64_t(proto.int32_data(int(i))));
    return absl::OkStatus();
  }
}

/// An error unless `proto` stores as many elements as `type` has, checked
/// before any buffer of that size is allocated: the dims of a malformed
/// model may ask for terabytes its data does not hold.
absl::Status checkStoredElements(const onnx::TensorProto &proto,
                                 const Type &type) {
  return forEachElement(proto, type.dtype(), type.numElements(),
                        [](int64_t, double, int64_t) {});
}

} // namespace

absl::StatusOr<Type> tensorType(const onnx::TensorProto &proto) {
  absl::StatusOr<DType> dtype = dtypeOfOnnx(proto.data_type());
  if (!dtype.ok())
    return invalidArgument("tensor '{}': {}", proto.name(),
                           std::string(dtype.status().message()));
  std::vector<int64_t> shape(proto.dims().begin(), proto.dims().end());
  int64_t numel = 1;
  for (int64_t dim : shape) {
    if (dim < 0 || (dim > 0 && numel > (int64_t(1) << 40) / dim))
      return invalidArgument("tensor '{}' has an invalid shape", proto.name());
    numel *= dim;
  }
  return Type(*dtype, shape);
}

absl::StatusOr<KnownTensor> decodeTensor(const onnx::TensorProto &proto) {
  REMAT_ASSIGN_OR_RETURN(Type type, tensorType(proto));
  KnownTensor tensor;
  tensor.dtype = type.dtype();
  tensor.shape.assign(type.shape().begin(), type.shape().end());
  int64_t numel = type.numElements();
  REMAT_RETURN_IF_ERROR(checkStoredElements(proto, type));
  if (tensor.isFloat())
    tensor.floats.resize(numel);
  else
    tensor.ints.resize(numel);
  REMAT_RETURN_IF_ERROR(forEachElement(
      proto, type.dtype(), numel, [&](int64_t i, double f, int64_t n) {
        if (tensor.isFloat())
          tensor.floats[i] = f;
        else
          tensor.ints[i] = n;
      }));
  return tensor;
}

absl::StatusOr<HostTensor> decodeHostTensor(const onnx::TensorProto &proto) {
  REMAT_ASSIGN_OR_RETURN(Type type, tensorType(proto));
  REMAT_RETURN_IF_ERROR(checkStoredElements(proto, type));
  HostTensor host(type);
  Tensor view = host.view();
  bool isFloat = type.isFloat();
  REMAT_RETURN_IF_ERROR(forEachElement(
      proto, type.dtype(), type.numElements(),
      [&](int64_t i, double f, int64_t n) {
        setElementFromDouble(view, i, isFloat ? f : double(n));
      }));
  return host;
}

} // namespace remat::onnximport

namespace remat {
using namespace onnximport;

absl::StatusOr<std::map<std::string, HostTensor, std::less<>>>
readOnnxTensors(llvm::StringRef bytes, llvm::StringRef fileName) {
  REMAT_ASSIGN_OR_RETURN(onnx::ModelProto model, parseModel(bytes, fileName));
  std::map<std::string, HostTensor, std::less<>> tensors;
  auto add = [&](const onnx::TensorProto &proto,
                 const std::string &name) -> absl::Status {
    absl::StatusOr<HostTensor> host = decodeHostTensor(proto);
    if (!host.ok())
      return invalidArgument("{}: error: {}", fileName.str(),
                             std::string(host.status().message()));
    tensors.insert_or_assign(name, std::move(*host));
    return absl::OkStatus();
  };
  for (const onnx::TensorProto &proto : model.graph().initializer())
    REMAT_RETURN_IF_ERROR(add(proto, proto.name()));
  for (const onnx::NodeProto &node : model.graph().node()) {
    if (node.op_type() != "Constant" || node.output_size() != 1)
      continue;
    for (const onnx::AttributeProto &a : node.attribute())
      if (a.name() == "value" && a.has_t())
        REMAT_RETURN_IF_ERROR(add(a.t(), node.output(0)));
  }
  return tensors;
}

} // namespace remat
