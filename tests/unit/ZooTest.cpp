//===- ZooTest.cpp - Model zoo generators ---------------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Parameter counts against the published figures, verification and the loss
/// at small sizes, determinism, region tags and option errors.
///
//===----------------------------------------------------------------------===//

#include "remat/Zoo/Zoo.h"

#include "SmallZooModels.h"

#include "remat/IR/Graph.h"
#include "remat/IR/Verifier.h"
#include "remat/IO/TextFormat.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

namespace remat {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::unique_ptr<Graph> build(llvm::StringRef model, const ZooOptions &options) {
  absl::StatusOr<std::unique_ptr<Graph>> graph = buildZooModel(model, options);
  EXPECT_TRUE(graph.ok()) << model.str() << ": " << graph.status();
  return graph.ok() ? std::move(*graph) : nullptr;
}

std::string buildError(llvm::StringRef model, const ZooOptions &options) {
  absl::StatusOr<std::unique_ptr<Graph>> graph = buildZooModel(model, options);
  EXPECT_FALSE(graph.ok()) << model.str() << " built";
  return graph.ok() ? "" : std::string(graph.status().message());
}

int64_t countParams(const Graph &graph) {
  int64_t total = 0;
  for (const Value *param : graph.params())
    total += param->type().numElements();
  return total;
}

TEST(ZooTest, ListsEveryModelSortedByName) {
  std::vector<std::string> names;
  for (const ZooModelInfo &info : listZooModels()) {
    names.push_back(info.name);
    EXPECT_FALSE(info.summary.empty()) << info.name;
    bool hasBatch = false;
    for (const ZooOptionInfo &option : info.options)
      hasBatch |= option.name == "batch";
    EXPECT_TRUE(hasBatch) << info.name;
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"densenet", "lstm", "mlp", "mobilenet_v2",
                                      "resnet", "transformer", "unet", "vgg"}));
}

// Published parameter counts (torchvision's model summaries and the GPT-2
// paper's smallest model as Hugging Face counts it). Batch norm contributes
// gamma and beta; running statistics are not parameters. Only the graph is
// built, never executed, so full sizes are cheap.

TEST(ZooParamCountTest, ResNet18) {
  // Also by hand (convolutions have no bias, batch norm 2 per channel):
  //  stem conv 3*64*49 = 9408, bn 128                              =     9536
  //  layer1: 4 convs 64*64*9 = 36864 with bn 128                   =   147968
  //  layer2: block0 64*128*9 + 256 + 128*128*9 + 256 + shortcut
  //          64*128 + 256 = 230144; block1 2*(147456 + 256)        =   525568
  //  layer3: block0 294912 + 512 + 589824 + 512 + 32768 + 512
  //          = 919040; block1 2*(589824 + 512)                     =  2099712
  //  layer4: block0 1179648 + 1024 + 2359296 + 1024 + 131072 + 1024
  //          = 3673088; block1 2*(2359296 + 1024)                  =  8393728
  //  fc 512*1000 + 1000                                            =   513000
  //  total                                                         = 11689512
  auto graph = build("resnet", {{"depth", "18"}, {"batch", "1"}});
  ASSERT_TRUE(graph);
  EXPECT_EQ(countParams(*graph), 11'689'512);
}

TEST(ZooParamCountTest, ResNet50) {
  auto graph = build("resnet", {{"depth", "50"}, {"batch", "1"}});
  ASSERT_TRUE(graph);
  EXPECT_EQ(countParams(*graph), 25'557'032);
}

TEST(ZooParamCountTest, Vgg16) {
  auto graph = build("vgg", {{"depth", "16"}, {"batch", "1"}});
  ASSERT_TRUE(graph);
  EXPECT_EQ(countParams(*graph), 138'357'544);
}

TEST(ZooParamCountTest, MobileNetV2) {
  auto graph = build("mobilenet_v2", {{"batch", "1"}});
  ASSERT_TRUE(graph);
  EXPECT_EQ(countParams(*graph), 3'504'872);
}

TEST(ZooParamCountTest, Gpt2Small) {
  // wte 50257*768 = 38597376, wpe 1024*768 = 786432; per block ln 2*1536,
  // qkv 768*2304 + 2304, proj 768*768 + 768, fc 768*3072 + 3072,
  // proj 3072*768 + 768: 7087872, times 12 = 85054464; ln_f 1536.
  // 38597376 + 786432 + 85054464 + 1536 = 124439808.
  auto graph = build("transformer", {});
  ASSERT_TRUE(graph);
  EXPECT_EQ(countParams(*graph), 124'439'808);
}

TEST(ZooParamCountTest, DenseNet121) {
  auto graph = build("densenet", {{"depth", "121"}, {"batch", "1"}});
  ASSERT_TRUE(graph);
  EXPECT_EQ(countParams(*graph), 7'978'856);
}

TEST(ZooParamCountTest, PreActResNet164) {
  // He et al. report "1.7M". By hand, n = (164-2)/9 = 18 bottleneck blocks per
  // stage, no conv biases, batch norm = 2 params per channel:
  //  stem conv 3*16*9                                         =       432
  //  stage 1 (width 16, out 64):
  //   first  bn16 32 + 16*16 + bn 32 + 16*16*9 + bn 32 + 16*64
  //          + shortcut 16*64                                  =      4704
  //   others bn64 128 + 64*16 + 32 + 2304 + 32 + 1024 = 4544, x17 = 77248
  //  stage 2 (width 32, out 128):
  //   first  bn64 128 + 64*32 + 64 + 9216 + 64 + 32*128
  //          + shortcut 64*128                                 =     23808
  //   others bn128 256 + 4096 + 64 + 9216 + 64 + 4096 = 17792, x17 = 302464
  //  stage 3 (width 64, out 256):
  //   first  bn128 256 + 128*64 + 128 + 36864 + 128 + 64*256
  //          + shortcut 128*256                                =     94720
  //   others bn256 512 + 16384 + 128 + 36864 + 128 + 16384 = 70400,
  //          x17                                               =   1196800
  //  final bn256 512, fc 256*10 + 10 = 2570
  // 432 + 4704 + 77248 + 23808 + 302464 + 94720 + 1196800 + 512 + 2570
  //   = 1703258.
  auto graph =
      build("resnet", {{"preact", "true"}, {"depth", "164"}, {"batch", "1"}});
  ASSERT_TRUE(graph);
  EXPECT_EQ(countParams(*graph), 1'703'258);
}

TEST(ZooParamCountTest, PreActResNet110Basic) {
  // "1.7M" too. n = (110-2)/6 = 18 basic blocks per stage:
  //  stem 432; stage 1: (32 + 2304 + 32 + 2304) x18 = 84096;
  //  stage 2: first 32 + 16*32*9 + 64 + 9216 + shortcut 16*32 = 14432,
  //           others (64 + 9216) x2 = 18560, x17 = 315520;
  //  stage 3: first 64 + 32*64*9 + 128 + 36864 + 32*64 = 57536,
  //           others (128 + 36864) x2 = 73984, x17 = 1257728;
  //  final bn 128, fc 64*10 + 10 = 650.
  // 432 + 84096 + 14432 + 315520 + 57536 + 1257728 + 128 + 650 = 1730522.
  auto graph = build("resnet", {{"preact", "true"},
                                {"block", "basic"},
                                {"depth", "110"},
                                {"batch", "1"}});
  ASSERT_TRUE(graph);
  EXPECT_EQ(countParams(*graph), 1'730'522);
}

class ZooSmallModelTest : public ::testing::TestWithParam<SmallModel> {};

TEST_P(ZooSmallModelTest, VerifiesAndEndsInAScalarLoss) {
  auto graph = build(GetParam().model, GetParam().options);
  ASSERT_TRUE(graph);
  absl::Status status = verify(*graph);
  EXPECT_TRUE(status.ok()) << status;
  ASSERT_FALSE(graph->outputs().empty());
  const Value *loss = graph->outputs()[0];
  EXPECT_EQ(loss->name(), "loss");
  EXPECT_EQ(loss->type(), Type::scalar(DType::F32));
  EXPECT_EQ(loss->producer()->kind(), "softmax_cross_entropy");
  EXPECT_FALSE(graph->params().empty());
  const Value *labels = graph->lookupValue("labels");
  ASSERT_NE(labels, nullptr);
  EXPECT_EQ(labels->type().dtype(), DType::I32);
  EXPECT_EQ(labels->producer()->kind(), "input");
}

TEST_P(ZooSmallModelTest, SameOptionsGiveTheSameGraph) {
  auto first = build(GetParam().model, GetParam().options);
  auto second = build(GetParam().model, GetParam().options);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->name(), second->name());
  ASSERT_EQ(first->numOps(), second->numOps());
  auto a = first->ops().begin();
  auto b = second->ops().begin();
  for (; a != first->ops().end(); ++a, ++b) {
    ASSERT_EQ(a->kind(), b->kind());
    EXPECT_EQ(a->region(), b->region());
    EXPECT_EQ(a->attrs(), b->attrs());
    ASSERT_EQ(a->numResults(), b->numResults());
    for (unsigned i = 0; i < a->numResults(); ++i) {
      EXPECT_EQ(a->result(i)->name(), b->result(i)->name());
      EXPECT_EQ(a->result(i)->type(), b->result(i)->type());
    }
    ASSERT_EQ(a->numOperands(), b->numOperands());
    for (unsigned i = 0; i < a->numOperands(); ++i)
      EXPECT_EQ(a->operand(i)->name(), b->operand(i)->name());
  }
}

TEST_P(ZooSmallModelTest, PrintParsePrintIsTheIdentity) {
  auto graph = build(GetParam().model, GetParam().options);
  ASSERT_TRUE(graph);
  std::string printed = printGraph(*graph);
  absl::StatusOr<std::unique_ptr<Graph>> parsed = parseGraph(printed, "zoo");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(printGraph(**parsed), printed);
}

std::string smallModelName(const ::testing::TestParamInfo<SmallModel> &info) {
  return fmt::format("{}_{}", info.param.model, info.index);
}

INSTANTIATE_TEST_SUITE_P(AllModels, ZooSmallModelTest,
                         ::testing::ValuesIn(smallModels()), smallModelName);

TEST(ZooTest, ResNetTagsRegionsAndNamesLayers) {
  auto graph =
      build("resnet", {{"depth", "50"}, {"batch", "2"}, {"image", "32"}});
  ASSERT_TRUE(graph);
  // layer3 has 6 blocks; block 2's first convolution maps 1024 -> 256
  // channels at 32/16 = 2x2 (stem /4, layer2 /2, layer3 /2).
  const Value *conv = graph->lookupValue("layer3.block2.conv1");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->producer()->kind(), "conv2d");
  EXPECT_EQ(conv->producer()->region(), "layer3/block2");
  EXPECT_EQ(conv->type(), Type(DType::F32, {2, 256, 2, 2}));
  const Value *weight = graph->lookupValue("layer3.block2.conv1.w");
  ASSERT_NE(weight, nullptr);
  EXPECT_EQ(weight->type(), Type(DType::F32, {256, 1024, 1, 1}));
  // Only the first block of a stage projects its shortcut.
  EXPECT_NE(graph->lookupValue("layer3.block0.downsample"), nullptr);
  EXPECT_EQ(graph->lookupValue("layer3.block1.downsample"), nullptr);
  EXPECT_EQ(graph->lookupValue("fc")->type(), Type(DType::F32, {2, 1000}));
}

TEST(ZooTest, TransformerShapesRegionsAndTiedEmbedding) {
  auto graph = build("transformer", {{"layers", "2"},
                                     {"d-model", "32"},
                                     {"heads", "2"},
                                     {"seq", "8"},
                                     {"batch", "2"},
                                     {"vocab", "50"}});
  ASSERT_TRUE(graph);
  // Positions keep GPT-2's 1024 rows even for a short sequence.
  EXPECT_EQ(graph->lookupValue("wpe")->type(), Type(DType::F32, {1024, 32}));
  const Value *scores = graph->lookupValue("h1.attn.scores");
  ASSERT_NE(scores, nullptr);
  EXPECT_EQ(scores->type(), Type(DType::F32, {2, 2, 8, 8}));
  EXPECT_EQ(scores->producer()->region(), "h1/attn");
  EXPECT_EQ(graph->lookupValue("h1.mlp.gelu")->producer()->region(), "h1/mlp");
  const Value *logits = graph->lookupValue("logits");
  EXPECT_EQ(logits->type(), Type(DType::F32, {2, 8, 50}));
  EXPECT_EQ(logits->producer()->operand(1)->name(), "wte");
  for (const Op &op : graph->ops())
    EXPECT_NE(op.kind(), "dropout");
}

TEST(ZooTest, TransformerDropoutSeedsAreDistinct) {
  auto graph = build("transformer", {{"layers", "2"},
                                     {"d-model", "32"},
                                     {"heads", "2"},
                                     {"seq", "8"},
                                     {"batch", "2"},
                                     {"vocab", "50"},
                                     {"dropout", "0.1"}});
  ASSERT_TRUE(graph);
  // One after the embedding, then per block the attention probabilities and
  // both residual branches: 1 + 2 * 3 = 7, seeded 1..7 in graph order.
  std::vector<int64_t> seeds;
  for (const Op &op : graph->ops()) {
    if (op.kind() != "dropout")
      continue;
    seeds.push_back(op.findAttr("seed")->asInt());
    EXPECT_EQ(op.findAttr("rate")->asFloat(), 0.1);
  }
  EXPECT_EQ(seeds, (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7}));
}

TEST(ZooTest, UNetLossIsPerPixel) {
  auto graph = build("unet", {{"depth", "2"},
                              {"channels", "4"},
                              {"batch", "2"},
                              {"image", "16"},
                              {"classes", "3"}});
  ASSERT_TRUE(graph);
  EXPECT_EQ(graph->lookupValue("labels")->type(),
            Type(DType::I32, {2, 16, 16}));
  EXPECT_EQ(graph->lookupValue("logits.nhwc")->type(),
            Type(DType::F32, {2, 16, 16, 3}));
  // The level-1 decoder concatenates the 4-channel skip with 4 upsampled
  // channels at full size.
  EXPECT_EQ(graph->lookupValue("up1.concat")->type(),
            Type(DType::F32, {2, 8, 16, 16}));
}

TEST(ZooTest, LstmStepsShareWeights) {
  auto graph = build("lstm", {{"steps", "5"},
                              {"hidden", "8"},
                              {"batch", "2"},
                              {"input", "3"},
                              {"classes", "4"}});
  ASSERT_TRUE(graph);
  // w_ih, w_hh, b, then the classifier's w and b.
  EXPECT_EQ(graph->params().size(), 5u);
  const Value *wHh = graph->lookupValue("lstm.w_hh");
  EXPECT_EQ(wHh->type(), Type(DType::F32, {8, 32}));
  EXPECT_EQ(wHh->uses().size(), 5u);
  EXPECT_EQ(graph->lookupValue("step4.h")->producer()->region(), "step4");
}

TEST(ZooTest, DenseNetLayersConcatenateEveryEarlierMap) {
  auto graph = build(
      "densenet",
      {{"depth", "121"}, {"growth", "4"}, {"batch", "2"}, {"image", "32"}});
  ASSERT_TRUE(graph);
  // Block 1 starts from 2k = 8 channels; layer 6 reads the stem and the 5
  // earlier layers' 4 channels each: 8 + 5*4 = 28. The block ends at
  // 8 + 6*4 = 32, halved to 16 by transition 1.
  const Value *concat = graph->lookupValue("denseblock1.layer6.concat");
  ASSERT_NE(concat, nullptr);
  EXPECT_EQ(concat->producer()->numOperands(), 6u);
  EXPECT_EQ(concat->type().dim(1), 28);
  EXPECT_EQ(graph->lookupValue("transition1.conv")->type().dim(1), 16);
}

TEST(ZooTest, MlpBuildsDeepChains) {
  // 20000 hidden layers of param w, param b, matmul, add, relu (5 ops), two
  // inputs, a classifier (2 params, matmul, add) and the loss:
  // 2 + 5 * 20000 + 4 + 1 = 100007 ops. The million-op run is the
  // `scale-mlp-1m` test and the scale benchmark.
  auto graph = build("mlp", {{"layers", "20000"},
                             {"width", "2"},
                             {"batch", "1"},
                             {"input", "2"},
                             {"classes", "2"}});
  ASSERT_TRUE(graph);
  EXPECT_EQ(graph->numOps(), 100'007u);
}

struct ErrorCase {
  std::string model;
  ZooOptions options;
  std::string message;
};

class ZooErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ZooErrorTest, NamesTheProblem) {
  EXPECT_EQ(buildError(GetParam().model, GetParam().options),
            GetParam().message);
}

std::vector<ErrorCase> errorCases() {
  return {
      {"alexnet",
       {},
       "unknown zoo model 'alexnet' (models: densenet, lstm, mlp, "
       "mobilenet_v2, resnet, transformer, unet, vgg)"},
      {"vgg",
       {{"width", "3"}},
       "vgg: unknown option '--width' (options: --depth, --batch, --image, "
       "--classes)"},
      {"resnet",
       {{"batch", "2x"}},
       "resnet: option '--batch' must be an integer, got '2x'"},
      {"resnet",
       {{"batch", ""}},
       "resnet: option '--batch' must be an integer, got ''"},
      {"mlp",
       {{"batch", "0"}},
       "mlp: option '--batch' must be between 1 and 65536, got 0"},
      {"resnet",
       {{"depth", "20"}},
       "resnet: option '--depth' must be one of 18, 34, 50, 101, 152 (or "
       "6n+2 / 9n+2 with --preact), got 20"},
      {"resnet",
       {{"preact", "true"}, {"block", "basic"}, {"depth", "21"}},
       "resnet: option '--depth' must be 6n+2 with n >= 1 for --block=basic "
       "pre-activation networks (e.g. 110 or 1202), got 21"},
      {"resnet",
       {{"preact", "true"}, {"depth", "100"}},
       "resnet: option '--depth' must be 9n+2 with n >= 1 for "
       "--block=bottleneck pre-activation networks (e.g. 164 or 1001), got "
       "100"},
      {"resnet",
       {{"preact", "true"}, {"block", "wide"}},
       "resnet: option '--block' must be one of bottleneck, basic, got 'wide'"},
      {"resnet",
       {{"block", "basic"}},
       "resnet: option '--block' needs --preact (ImageNet depths fix the block "
       "type)"},
      {"resnet",
       {{"preact", "yes"}},
       "resnet: option '--preact' must be true or false, got 'yes'"},
      {"vgg",
       {{"depth", "11"}},
       "vgg: option '--depth' must be 16 or 19, got 11"},
      {"densenet",
       {{"depth", "161"}},
       "densenet: option '--depth' must be one of 121, 169, 201, got 161"},
      {"transformer",
       {{"d-model", "30"}, {"heads", "4"}},
       "transformer: option '--d-model' (30) must be divisible by '--heads' "
       "(4)"},
      {"transformer",
       {{"dropout", "1"}},
       "transformer: option '--dropout' must be at least 0 and below 1, got 1"},
      {"transformer",
       {{"dropout", "nan"}},
       "transformer: option '--dropout' must be a number, got 'nan'"},
      {"unet",
       {{"image", "100"}},
       "unet: option '--image' must be a multiple of 2^depth = 16 (--depth=4), "
       "got 100"},
  };
}

/// `resnet_3`: the model and the case's index, so ctest lists readable names.
std::string errorCaseName(const ::testing::TestParamInfo<ErrorCase> &info) {
  return info.param.model + "_" + std::to_string(info.index);
}

INSTANTIATE_TEST_SUITE_P(Options, ZooErrorTest,
                         ::testing::ValuesIn(errorCases()), errorCaseName);

TEST(ZooImageSizeTest, TooSmallSurfacesTheShapeError) {
  // VGG halves the image five times: 16 -> 8 -> 4 -> 2 -> 1, and the fifth
  // 2x2 pool has nothing left to pool.
  std::string message = buildError("vgg", {{"batch", "1"}, {"image", "16"}});
  EXPECT_THAT(message, StartsWith("vgg: in stage5: "));
  EXPECT_THAT(message, HasSubstr("max_pool2d"));
  // DenseNet-121: 16 -> stem 8 -> pool 4 -> transitions 2, 1, and the third
  // transition's 2x2 average pool fails.
  message = buildError("densenet", {{"batch", "1"}, {"image", "16"}});
  EXPECT_THAT(message, StartsWith("densenet: in transition3: "));
  EXPECT_THAT(message, HasSubstr("avg_pool2d"));
}

} // namespace
} // namespace remat
