//===- Layers.cpp - Building blocks shared by the zoo models --------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "Layers.h"

#include "remat/Support/Status.h"

namespace remat::zoo {

Op *Net::create(llvm::StringRef kind, llvm::ArrayRef<Value *> operands,
                AttrList attrs, llvm::ArrayRef<std::string> resultNames) {
  Op *op = builder_.create(kind, operands, std::move(attrs), resultNames);
  if (!op && !failed_) {
    failed_ = true;
    failedRegion_ = builder_.region().str();
  }
  return op;
}

Value *Net::op(llvm::StringRef kind, llvm::ArrayRef<Value *> operands,
               AttrList attrs, const std::string &name) {
  Op *op = create(kind, operands, std::move(attrs), {name});
  return op ? op->result() : nullptr;
}

absl::StatusOr<std::unique_ptr<Graph>> Net::finish(llvm::StringRef model,
                                                   Value *loss) {
  const absl::Status &status = builder_.status();
  if (!status.ok()) {
    std::string where =
        failedRegion_.empty() ? "" : "in " + failedRegion_ + ": ";
    return invalidArgument("{}: {}{}", model.str(), where,
                           std::string(status.message()));
  }
  assert(loss && loss->type().isScalar() &&
         "a zoo graph ends in a scalar loss");
  graph_->addOutput(loss);
  return std::move(graph_);
}

Value *conv2d(Net &net, Value *x, const ConvSpec &spec,
              const std::string &name) {
  if (!x)
    return nullptr;
  int64_t in = x->type().rank() == 4 ? x->type().dim(1) : 0;
  Value *w = net.param(
      name + ".w", f32({spec.out, in / spec.groups, spec.kernel, spec.kernel}));
  AttrList attrs = {{"strides", Attribute({spec.stride, spec.stride})},
                    {"padding", Attribute({spec.padding, spec.padding})}};
  if (spec.groups != 1)
    attrs.push_back({"groups", Attribute(spec.groups)});
  if (!spec.bias)
    return net.op("conv2d", {x, w}, std::move(attrs), name);
  Value *y = net.op("conv2d", {x, w}, std::move(attrs), name + ".conv");
  Value *b = net.param(name + ".b", f32({spec.out, 1, 1}));
  return net.op("add", {y, b}, {}, name);
}

Value *batchNorm(Net &net, Value *x, const std::string &name) {
  if (!x)
    return nullptr;
  int64_t channels = x->type().rank() >= 2 ? x->type().dim(1) : 0;
  Value *gamma = net.param(name + ".gamma", f32({channels}));
  Value *beta = net.param(name + ".beta", f32({channels}));
  Op *op = net.create("batch_norm", {x, gamma, beta}, {},
                      {name, name + ".mean", name + ".var"});
  return op ? op->result(0) : nullptr;
}

Value *relu(Net &net, Value *x, const std::string &name) {
  return net.op("relu", {x}, {}, name);
}

Value *convBn(Net &net, Value *x, const ConvSpec &spec,
              const std::string &name) {
  return batchNorm(net, conv2d(net, x, spec, name), name + ".bn");
}

Value *convBnRelu(Net &net, Value *x, const ConvSpec &spec,
                  const std::string &name) {
  return relu(net, convBn(net, x, spec, name), name + ".relu");
}

Value *dense(Net &net, Value *x, int64_t out, const std::string &name,
             bool bias) {
  if (!x)
    return nullptr;
  int64_t in = x->type().rank() >= 1 ? x->type().dim(-1) : 0;
  Value *w = net.param(name + ".w", f32({in, out}));
  if (!bias)
    return net.op("matmul", {x, w}, {}, name);
  Value *y = net.op("matmul", {x, w}, {}, name + ".mm");
  Value *b = net.param(name + ".b", f32({out}));
  return net.op("add", {y, b}, {}, name);
}

Value *layerNorm(Net &net, Value *x, const std::string &name) {
  if (!x)
    return nullptr;
  int64_t features = x->type().rank() >= 1 ? x->type().dim(-1) : 0;
  Value *gamma = net.param(name + ".gamma", f32({features}));
  Value *beta = net.param(name + ".beta", f32({features}));
  return net.op("layer_norm", {x, gamma, beta}, {}, name);
}

Value *flatten(Net &net, Value *x, const std::string &name) {
  if (!x)
    return nullptr;
  int64_t batch = x->type().rank() >= 1 ? x->type().dim(0) : 1;
  return net.op("reshape", {x}, {{"shape", Attribute({batch, -1})}}, name);
}

Value *scalarConstant(Net &net, double value, const std::string &name) {
  return net.op("constant", {}, {{"value", Attribute(value)}}, name);
}

Value *crossEntropyLoss(Net &net, Value *logits, Value *labels) {
  return net.op("softmax_cross_entropy", {logits, labels}, {}, "loss");
}

} // namespace remat::zoo
