//===- GradientCheck.cpp - Autodiff against finite differences --------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// One run of the training graph in f64 gives the analytic gradients; each
/// sampled entry then costs two runs of the forward graph in f64 with that
/// entry of the (f64 copy of the) feeds moved by +h and -h and restored. The
/// feeds are built once; only the entry under test changes between runs.
/// Those runs use a copy of the forward graph in which every `stop_gradient`
/// result is an input fed its unperturbed value, so that a perturbation does
/// not flow where autodiff (rightly) sends no gradient.
///
//===----------------------------------------------------------------------===//

#include "remat/Runtime/GradientCheck.h"

#include "Feeds.h"

#include "remat/IR/Builder.h"
#include "remat/IR/Graph.h"
#include "remat/Pass/Autodiff.h"
#include "remat/Runtime/Executor.h"
#include "remat/Runtime/Random.h"
#include "remat/Support/Status.h"

#include "llvm/ADT/DenseSet.h"

#include <algorithm>
#include <cmath>

namespace remat {
namespace {

/// The entries of a param of `numel` elements to check: all of them when
/// there are at most `samples`, else `samples` distinct ones drawn from the
/// seed and the param's name, ascending.
std::vector<int64_t> sampleEntries(llvm::StringRef param, int64_t numel,
                                   const GradientCheckOptions &options) {
  std::vector<int64_t> entries;
  int64_t wanted = std::max<int64_t>(options.samplesPerParam, 0);
  if (numel <= wanted) {
    for (int64_t i = 0; i < numel; ++i)
      entries.push_back(i);
    return entries;
  }
  uint64_t key = streamKey(options.seed, "gradient-check/" + param.str());
  llvm::DenseSet<int64_t> chosen;
  for (uint64_t draw = 0; int64_t(entries.size()) < wanted; ++draw) {
    auto entry = int64_t(randomUniform(key, draw) * double(numel));
    entry = std::min(entry, numel - 1);
    if (chosen.insert(entry).second)
      entries.push_back(entry);
  }
  llvm::sort(entries);
  return entries;
}

/// `feeds` with every f32 tensor converted to f64, for the widened runs.
TensorMap widenFeeds(const TensorMap &feeds) {
  TensorMap wide;
  for (const auto &[name, tensor] : feeds) {
    if (tensor.dtype() != DType::F32) {
      wide.emplace(name, tensor);
      continue;
    }
    HostTensor copy(tensor.type().withDType(DType::F64));
    copyConverting(tensor.view(), copy.view());
    wide.emplace(name, std::move(copy));
  }
  return wide;
}

absl::Status checkLoss(const Graph &forward) {
  if (forward.params().empty())
    return invalidArgument("graph @{} has no params to check",
                           forward.name().str());
  if (forward.outputs().empty())
    return invalidArgument("graph @{} has no outputs (the loss is output 0)",
                           forward.name().str());
  const Value &loss = *forward.outputs().front();
  if (!loss.type().isScalar() || !loss.type().isFloat())
    return invalidArgument("the loss %{} has type {}, expected a float scalar",
                           loss.name().str(), loss.type().str());
  return absl::OkStatus();
}

/// The error floor of a param's entries: this fraction of the param's
/// largest gradient entry, or of the model's if that is larger, so that a
/// gradient that is zero in exact arithmetic (a bias feeding batch norm) is
/// not judged by its rounding noise.
constexpr double kParamFloor = 1e-3;
constexpr double kModelFloor = 1e-4;

double largestMagnitude(const HostTensor &tensor) {
  double largest = 0;
  for (int64_t i = 0, e = tensor.numel(); i < e; ++i)
    largest = std::max(largest, std::fabs(tensor.at(i)));
  return largest;
}

/// Relative error of one entry, see GradientSample::error.
double relativeError(double analytic, double numeric, double floor) {
  double scale = std::max({std::fabs(analytic), std::fabs(numeric), floor});
  double diff = std::fabs(analytic - numeric);
  if (std::isnan(diff))
    return std::numeric_limits<double>::infinity();
  return scale == 0 ? 0 : diff / scale;
}

/// Evaluates the loss of the widened forward graph on `feeds`.
absl::StatusOr<double> evaluateLoss(const Graph &forward,
                                    const TensorMap &feeds, uint64_t seed) {
  RunOptions options;
  options.seed = seed;
  options.feeds = &feeds;
  options.widenFloats = true;
  REMAT_ASSIGN_OR_RETURN(RunResult result, runGraph(forward, options));
  return result.outputs.front().second.at(0);
}

/// A copy of `forward` whose `stop_gradient` results are replaced by inputs
/// (`NAME.held`), and `wideFeeds` extended with their values in the
/// unperturbed widened run. The `stop_gradient` ops stay, unread.
absl::StatusOr<std::unique_ptr<Graph>> holdStoppedValues(const Graph &forward,
                                                         TensorMap &wideFeeds,
                                                         uint64_t seed) {
  std::unique_ptr<Graph> held = forward.clone();
  std::vector<Op *> stops;
  for (Op &op : held->ops())
    if (op.kind() == "stop_gradient")
      stops.push_back(&op);
  if (stops.empty())
    return held;

  // One run with the stopped values as extra outputs records them.
  std::vector<Value *> outputs(held->outputs().begin(), held->outputs().end());
  for (Op *stop : stops)
    held->addOutput(stop->result());
  RunOptions options;
  options.seed = seed;
  options.feeds = &wideFeeds;
  options.widenFloats = true;
  REMAT_ASSIGN_OR_RETURN(RunResult recorded, runGraph(*held, options));
  held->setOutputs(std::move(outputs));

  Builder builder(*held);
  for (size_t i = 0; i < stops.size(); ++i) {
    Value *stopped = stops[i]->result();
    builder.setInsertionPoint(stops[i]);
    Value *input = builder.input(held->uniqueName(stopped->name().str() + ".held"),
                                 stopped->type());
    held->replaceAllUsesWith(stopped, input);
    size_t output = recorded.outputs.size() - stops.size() + i;
    wideFeeds.insert_or_assign(input->name().str(),
                               std::move(recorded.outputs[output].second));
  }
  return held;
}

} // namespace

absl::StatusOr<GradientCheckReport>
checkGradients(const Graph &forward, const GradientCheckOptions &options) {
  REMAT_RETURN_IF_ERROR(checkLoss(forward));
  std::unique_ptr<Graph> training = forward.clone();
  REMAT_ASSIGN_OR_RETURN(AutodiffResult autodiff, differentiate(*training));

  TensorMap feeds = makeFeeds(forward, options.seed);
  if (options.feeds)
    for (const auto &[name, tensor] : *options.feeds)
      feeds.insert_or_assign(name, tensor);
  RunOptions analyticOptions;
  analyticOptions.seed = options.seed;
  analyticOptions.feeds = &feeds;
  analyticOptions.widenFloats = true;
  REMAT_ASSIGN_OR_RETURN(RunResult analyticRun,
                         runGraph(*training, analyticOptions));
  llvm::StringMap<const HostTensor *> outputs;
  for (const auto &[name, tensor] : analyticRun.outputs)
    outputs.try_emplace(name, &tensor);

  // The analytic gradient of every float param, in params order, and the
  // largest entry of all of them: the model's gradient scale.
  std::vector<const HostTensor *> analytics(forward.params().size(), nullptr);
  double modelLargest = 0;
  for (size_t index = 0; index < forward.params().size(); ++index) {
    const Value *param = forward.params()[index];
    if (!param->type().isFloat())
      continue;
    const Value *gradient = autodiff.gradients[index];
    auto found = gradient ? outputs.find(gradient->name()) : outputs.end();
    if (found == outputs.end())
      return invalidArgument("autodiff gave no gradient for param %{}",
                             param->name().str());
    analytics[index] = found->second;
    modelLargest = std::max(modelLargest, largestMagnitude(*found->second));
  }

  TensorMap wideFeeds = widenFeeds(feeds);
  REMAT_ASSIGN_OR_RETURN(std::unique_ptr<Graph> held,
                         holdStoppedValues(forward, wideFeeds, options.seed));
  GradientCheckReport report;
  for (size_t index = 0; index < forward.params().size(); ++index) {
    const Value *param = forward.params()[index];
    if (!analytics[index])
      continue;
    const HostTensor &analytic = *analytics[index];
    double floor = std::max(kParamFloor * largestMagnitude(analytic),
                            kModelFloor * modelLargest);

    auto feed = wideFeeds.find(param->name());
    if (feed == wideFeeds.end())
      return invalidArgument("param %{} has no data", param->name().str());
    llvm::MutableArrayRef<double> data = feed->second.values<double>();
    for (int64_t entry :
         sampleEntries(param->name(), param->type().numElements(), options)) {
      double original = data[entry];
      double h = options.step * std::max(1.0, std::fabs(original));
      data[entry] = original + h;
      absl::StatusOr<double> plus =
          evaluateLoss(*held, wideFeeds, options.seed);
      data[entry] = original - h;
      absl::StatusOr<double> minus =
          evaluateLoss(*held, wideFeeds, options.seed);
      data[entry] = original;
      REMAT_RETURN_IF_ERROR(plus.status());
      REMAT_RETURN_IF_ERROR(minus.status());

      GradientSample &sample = report.samples.emplace_back();
      sample.param = param->name().str();
      sample.index = entry;
      sample.analytic = analytic.at(entry);
      sample.numeric = (*plus - *minus) / (2 * h);
      sample.error = relativeError(sample.analytic, sample.numeric, floor);
      if (report.worstSample < 0 || sample.error > report.worstError) {
        report.worstError = sample.error;
        report.worstSample = int64_t(report.samples.size()) - 1;
      }
    }
  }
  report.passed = report.worstError <= options.tolerance;
  return report;
}

} // namespace remat
