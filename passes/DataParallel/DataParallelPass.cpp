//===- DataParallelPass.cpp - The data-parallel pass -------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Replicates the graph into towers, reduces each param gradient (alone or in
/// buckets), makes the reduced gradients the outputs — tower 0's named
/// `<param>.grad`, tower k's `<param>.grad.replica<k>` — drops the original
/// ops and schedules the reductions early. Options are documented in
/// docs/passes.md.
///
//===----------------------------------------------------------------------===//

#include "Towers.h"

#include "remat/Pass/PassRegistry.h"
#include "remat/Support/Status.h"

#include "llvm/ADT/StringSwitch.h"

#include <fmt/format.h>

namespace remat {

std::optional<ReduceMode> parseReduceMode(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ReduceMode>>(name)
      .Case("allreduce", ReduceMode::AllReduce)
      .Case("hierarchical", ReduceMode::Hierarchical)
      .Case("colocate", ReduceMode::Colocate)
      .Case("naive", ReduceMode::Naive)
      .Default(std::nullopt);
}

llvm::StringRef reduceModeName(ReduceMode mode) {
  switch (mode) {
  case ReduceMode::AllReduce:
    return "allreduce";
  case ReduceMode::Hierarchical:
    return "hierarchical";
  case ReduceMode::Colocate:
    return "colocate";
  case ReduceMode::Naive:
    return "naive";
  }
  return "";
}

namespace {

using namespace dp;

class DataParallelPass : public Pass {
public:
  static constexpr llvm::StringLiteral kArgument = "data-parallel";
  static constexpr llvm::StringLiteral kSummary =
      "Replicates a training graph over towers on gpu:0..K-1, each on a slice "
      "of the batch, and reduces the param gradients across them";

  explicit DataParallelPass(DataParallelOptions options)
      : options_(std::move(options)) {}

  llvm::StringRef argument() const override { return kArgument; }
  llvm::StringRef summary() const override { return kSummary; }

  absl::StatusOr<bool> run(Graph &graph) override {
    REMAT_RETURN_IF_ERROR(checkOptions());
    REMAT_ASSIGN_OR_RETURN(Towers towers,
                           replicateTowers(graph, options_.towers));
    Reducer reducer(graph, options_, options_.towers);
    std::optional<std::vector<std::vector<Value *>>> reduced;
    if (options_.pack > 1) {
      REMAT_ASSIGN_OR_RETURN(reduced, reducePacked(towers, reducer, options_));
    }
    if (!reduced) {
      REMAT_ASSIGN_OR_RETURN(reduced, reduceEach(towers, reducer));
    }
    setOutputs(graph, towers, *reduced);
    eraseOriginals(graph, towers);
    nameGradients(graph, towers, *reduced);
    scheduleEarly(graph, towers.order, reducer.created());
    return true;
  }

private:
  absl::Status checkOptions() const {
    int64_t k = options_.towers;
    if (k < 1)
      return invalidArgument("data-parallel: towers must be at least 1, got {}",
                             k);
    if (options_.reduce == ReduceMode::Hierarchical && k % 2 != 0)
      return invalidArgument("data-parallel: reduce=hierarchical needs an "
                             "even number of towers, got {}",
                             k);
    if (options_.pack < 0)
      return invalidArgument("data-parallel: pack must be non-negative, got {}",
                             options_.pack);
    std::vector<std::string> devices = options_.paramDevices;
    devices.push_back(options_.smallParamDevice);
    for (const std::string &device : devices) {
      REMAT_ASSIGN_OR_RETURN(int number, deviceNumber(device));
      if (device != towerDevice(number) || number >= k)
        return invalidArgument("data-parallel: device '{}' is not one of the "
                               "towers gpu:0..gpu:{}",
                               device, k - 1);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<std::vector<Value *>>>
  reduceEach(const Towers &towers, Reducer &reducer) const {
    std::vector<int64_t> sizes;
    for (const Value *param : towers.params)
      sizes.push_back(param->type().numElements());
    REMAT_ASSIGN_OR_RETURN(std::vector<int64_t> homes,
                           placeParams(sizes, options_, towers.count));
    std::vector<std::vector<Value *>> reduced;
    for (size_t i = 0; i < towers.grads.size(); ++i) {
      REMAT_ASSIGN_OR_RETURN(
          reduced.emplace_back(),
          reducer.reduce(towers.grads[i], i, towers.grads.size(), homes[i],
                         towers.params[i]->name().str() + ".grad"));
    }
    return reduced;
  }

  /// Tower 0's copy of every output, the reduced gradient in place of each
  /// gradient, then the other towers' reduced gradients.
  static void setOutputs(Graph &graph, const Towers &towers,
                         const std::vector<std::vector<Value *>> &reduced) {
    std::vector<Value *> outputs;
    size_t grad = 0;
    for (size_t j = 0; j < towers.outputs.size(); ++j) {
      bool isGrad = grad < towers.grads.size() &&
                    towers.outputCopies[j] == towers.grads[grad];
      outputs.push_back(isGrad ? reduced[grad++][0]
                               : towers.outputCopies[j][0]);
    }
    for (int64_t k = 1; k < towers.count; ++k)
      for (const auto &perTower : reduced)
        outputs.push_back(perTower[k]);
    graph.setOutputs(std::move(outputs));
  }

  /// Collections move to tower 0's copies; the originals go.
  static void eraseOriginals(Graph &graph, const Towers &towers) {
    for (Op *op : llvm::reverse(towers.originals)) {
      for (unsigned i = 0; i < op->numResults(); ++i)
        graph.replaceAllUsesWith(op->result(i),
                                 towers.firstCopy[op->result(i)->id()]);
      graph.erase(op);
    }
  }

  static void nameGradients(Graph &graph, const Towers &towers,
                            const std::vector<std::vector<Value *>> &reduced) {
    for (size_t i = 0; i < reduced.size(); ++i) {
      std::string name = towers.params[i]->name().str() + ".grad";
      for (int64_t k = 0; k < towers.count; ++k) {
        std::string wanted =
            k == 0 ? name : fmt::format("{}.replica{}", name, k);
        if (!graph.renameValue(reduced[i][k], wanted))
          graph.renameValue(reduced[i][k], graph.uniqueName(wanted));
      }
    }
  }

  DataParallelOptions options_;
};

/// Splits a comma-separated list, dropping blanks.
std::vector<std::string> splitList(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef, 8> parts;
  text.split(parts, ',', -1, /*KeepEmpty=*/false);
  std::vector<std::string> result;
  for (llvm::StringRef part : parts)
    if (!part.trim().empty())
      result.push_back(part.trim().str());
  return result;
}

} // namespace

std::unique_ptr<Pass> createDataParallelPass(DataParallelOptions options) {
  return std::make_unique<DataParallelPass>(std::move(options));
}

void registerDataParallelPass(PassRegistry &registry) {
  registry.add(
      {.argument = DataParallelPass::kArgument.str(),
       .summary = DataParallelPass::kSummary.str(),
       .options = {{"towers", "Number of towers (devices gpu:0..K-1)",
                    PassOptionKind::Int, "2"},
                   {"reduce", "allreduce, hierarchical, colocate or naive",
                    PassOptionKind::String, "allreduce"},
                   {"average", "Divides the summed gradients by the towers",
                    PassOptionKind::Bool, "true"},
                   {"pack", "Reduces the gradients in this many buckets",
                    PassOptionKind::Int, "0"},
                   {"devices",
                    "Param devices, e.g. \"gpu:0,gpu:1\" (default every tower)",
                    PassOptionKind::String, ""},
                   {"small", "Params under this many elements go to "
                             "small-device",
                    PassOptionKind::Int, "0"},
                   {"small-device", "Device of the small params",
                    PassOptionKind::String, "gpu:0"}},
       .factory = [](const PassOptions &options)
           -> absl::StatusOr<std::unique_ptr<Pass>> {
         DataParallelOptions parsed;
         REMAT_ASSIGN_OR_RETURN(parsed.towers, options.getInt("towers", 2));
         std::string mode = options.getString("reduce", "allreduce");
         std::optional<ReduceMode> reduce = parseReduceMode(mode);
         if (!reduce)
           return invalidArgument("data-parallel: unknown reduce mode '{}' "
                                  "(allreduce, hierarchical, colocate, naive)",
                                  mode);
         parsed.reduce = *reduce;
         REMAT_ASSIGN_OR_RETURN(parsed.average,
                                options.getBool("average", true));
         REMAT_ASSIGN_OR_RETURN(parsed.pack, options.getInt("pack", 0));
         parsed.paramDevices = splitList(options.getString("devices", ""));
         REMAT_ASSIGN_OR_RETURN(parsed.smallParamElements,
                                options.getInt("small", 0));
         parsed.smallParamDevice = options.getString("small-device", "gpu:0");
         return createDataParallelPass(std::move(parsed));
       }});
}

} // namespace remat
