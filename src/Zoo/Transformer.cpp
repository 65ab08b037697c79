//===- Transformer.cpp - A GPT-2 style decoder-only transformer -----------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// GPT-2 (Radford et al. 2019) as a language-model training graph: token
/// embedding `wte [vocab, d]` plus learned positions (`wpe`, max(1024, seq)
/// rows, sliced to the sequence), then pre-norm blocks of causal multi-head
/// self-attention and a 4d gelu MLP, each in a residual; a final layer norm
/// and logits against the tied token embedding. With `--dropout` > 0, dropout
/// follows the embedding, the attention probabilities and both residual
/// branches, each op with its own seed (1, 2, 3, ... in graph order).
///
//===----------------------------------------------------------------------===//

#include "Layers.h"
#include "Models.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace remat::zoo {

namespace {
struct TransformerConfig {
  int64_t batch;
  int64_t seq;
  int64_t dModel;
  int64_t heads;
  double dropout;
};

/// Builds the blocks; remembers the configuration and the next dropout seed.
class TransformerBuilder {
public:
  TransformerBuilder(Net &net, const TransformerConfig &config)
      : net_(net), config_(config) {}

  Value *dropout(Value *x, const std::string &name);
  Value *attention(Value *x, const std::string &name);
  Value *mlp(Value *x, const std::string &name);

private:
  /// [B, S, D] -> [B, H, S, D/H].
  Value *splitHeads(Value *x, const std::string &name);

  Net &net_;
  TransformerConfig config_;
  int64_t nextSeed_ = 1;
};
} // namespace

Value *TransformerBuilder::dropout(Value *x, const std::string &name) {
  if (config_.dropout == 0.0)
    return x;
  return net_.op(
      "dropout", {x},
      {{"rate", Attribute(config_.dropout)}, {"seed", Attribute(nextSeed_++)}},
      name);
}

Value *TransformerBuilder::splitHeads(Value *x, const std::string &name) {
  const TransformerConfig &c = config_;
  Value *y = net_.op(
      "reshape", {x},
      {{"shape", Attribute({c.batch, c.seq, c.heads, c.dModel / c.heads})}},
      name + ".split");
  return net_.op("transpose", {y}, {{"perm", Attribute({0, 2, 1, 3})}},
                 name + ".heads");
}

Value *TransformerBuilder::attention(Value *x, const std::string &name) {
  const TransformerConfig &c = config_;
  Value *qkv = dense(net_, x, 3 * c.dModel, name + ".qkv");
  Op *split =
      net_.create("split", {qkv},
                  {{"axis", Attribute(-1)},
                   {"sizes", Attribute({c.dModel, c.dModel, c.dModel})}},
                  {name + ".q", name + ".k", name + ".v"});
  if (!split)
    return nullptr;
  Value *q = splitHeads(split->result(0), name + ".q");
  Value *k = splitHeads(split->result(1), name + ".k");
  Value *v = splitHeads(split->result(2), name + ".v");
  Value *scores = net_.op("matmul", {q, k}, {{"transpose_b", Attribute(true)}},
                          name + ".scores");
  double scale = 1.0 / std::sqrt(double(c.dModel / c.heads));
  scores =
      net_.op("mul", {scores, scalarConstant(net_, scale, name + ".scale")}, {},
              name + ".scaled");
  scores = net_.op("causal_mask", {scores}, {}, name + ".masked");
  Value *probs =
      net_.op("softmax", {scores}, {{"axis", Attribute(-1)}}, name + ".probs");
  probs = dropout(probs, name + ".probs.dropout");
  Value *context = net_.op("matmul", {probs, v}, {}, name + ".context");
  context = net_.op("transpose", {context}, {{"perm", Attribute({0, 2, 1, 3})}},
                    name + ".context.t");
  context = net_.op("reshape", {context},
                    {{"shape", Attribute({c.batch, c.seq, c.dModel})}},
                    name + ".merged");
  Value *out = dense(net_, context, c.dModel, name + ".proj");
  return dropout(out, name + ".proj.dropout");
}

Value *TransformerBuilder::mlp(Value *x, const std::string &name) {
  Value *y = dense(net_, x, 4 * config_.dModel, name + ".fc");
  y = net_.op("gelu", {y}, {}, name + ".gelu");
  y = dense(net_, y, config_.dModel, name + ".proj");
  return dropout(y, name + ".proj.dropout");
}

static absl::StatusOr<std::unique_ptr<Graph>>
buildTransformer(const OptionReader &opts) {
  REMAT_ASSIGN_OR_RETURN(int64_t layers, opts.getInt("layers", 12, 1, 10'000));
  REMAT_ASSIGN_OR_RETURN(int64_t dModel,
                         opts.getInt("d-model", 768, 1, 1 << 16));
  REMAT_ASSIGN_OR_RETURN(int64_t heads, opts.getInt("heads", 12, 1, 1 << 16));
  REMAT_ASSIGN_OR_RETURN(int64_t seq, opts.getInt("seq", 1024, 1, 1 << 20));
  REMAT_ASSIGN_OR_RETURN(int64_t batch, opts.getInt("batch", 1, 1, kMaxBatch));
  REMAT_ASSIGN_OR_RETURN(int64_t vocab,
                         opts.getInt("vocab", 50257, 1, 1 << 24));
  REMAT_ASSIGN_OR_RETURN(double rate, opts.getFloat("dropout", 0.0, 0.0, 1.0));
  if (dModel % heads != 0)
    return opts.error("option '--d-model' ({}) must be divisible by "
                      "'--heads' ({})",
                      dModel, heads);
  int64_t positions = std::max<int64_t>(1024, seq);

  Net net("transformer");
  TransformerBuilder blocks(net, {batch, seq, dModel, heads, rate});
  Value *tokens = net.input("tokens", i32({batch, seq}));
  Value *labels = net.input("labels", i32({batch, seq}));
  Value *wte;
  Value *h;
  {
    Builder::RegionScope region(net.builder(), "embed");
    wte = net.param("wte", f32({vocab, dModel}));
    Value *wpe = net.param("wpe", f32({positions, dModel}));
    Value *tok = net.op("embedding", {wte, tokens}, {}, "embed.tokens");
    Value *pos = net.op(
        "slice", {wpe},
        {{"starts", Attribute({0, 0})}, {"ends", Attribute({seq, dModel})}},
        "embed.positions");
    h = net.op("add", {tok, pos}, {}, "embed");
    h = blocks.dropout(h, "embed.dropout");
  }
  for (int64_t i = 0; i < layers; ++i) {
    std::string name = fmt::format("h{}", i);
    Builder::RegionScope block(net.builder(), name);
    {
      Builder::RegionScope region(net.builder(), "attn");
      Value *a = layerNorm(net, h, name + ".ln_1");
      a = blocks.attention(a, name + ".attn");
      h = net.op("add", {h, a}, {}, name + ".attn.residual");
    }
    Builder::RegionScope region(net.builder(), "mlp");
    Value *m = layerNorm(net, h, name + ".ln_2");
    m = blocks.mlp(m, name + ".mlp");
    h = net.op("add", {h, m}, {}, name + ".mlp.residual");
  }
  Builder::RegionScope region(net.builder(), "head");
  h = layerNorm(net, h, "ln_f");
  Value *logits =
      net.op("matmul", {h, wte}, {{"transpose_b", Attribute(true)}}, "logits");
  return net.finish(opts.model(), crossEntropyLoss(net, logits, labels));
}

ZooModel transformerModel() {
  return {{.name = "transformer",
           .summary = "GPT-2 style decoder-only transformer with tied "
                      "embeddings; next-token loss",
           .options = {{"layers", "12", "transformer blocks"},
                       {"d-model", "768", "model width (divisible by --heads)"},
                       {"heads", "12", "attention heads"},
                       {"seq", "1024", "sequence length"},
                       {"batch", "1", "batch size"},
                       {"vocab", "50257", "vocabulary size"},
                       {"dropout", "0.0",
                        "dropout rate in [0, 1); 0 adds no dropout ops"}}},
          buildTransformer};
}

} // namespace remat::zoo
