//===- Reduce.cpp - The gradient reduction modes -----------------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Each mode turns one tensor per tower into its (averaged) sum on every
/// tower. `allreduce` is one collective; the others are built from
/// `transfer`s and `add_n`s on chosen devices, summing in ascending tower
/// order so that every tower receives the same bits.
///
//===----------------------------------------------------------------------===//

#include "Towers.h"

#include "remat/IR/Builder.h"
#include "remat/Support/Status.h"

#include <fmt/format.h>

#include <algorithm>

namespace remat::dp {

absl::StatusOr<Op *> Reducer::emit(llvm::StringRef kind,
                                   llvm::ArrayRef<Value *> operands,
                                   AttrList attrs, llvm::StringRef device,
                                   llvm::ArrayRef<std::string> names) {
  Builder builder(graph_);
  builder.setDevice(device.str());
  REMAT_ASSIGN_OR_RETURN(Op * op,
                         builder.tryCreate(kind, operands, std::move(attrs),
                                           names));
  created_.push_back(op);
  return op;
}

absl::StatusOr<Value *> Reducer::moveTo(Value *value, int64_t from,
                                        int64_t to) {
  if (from == to)
    return value;
  REMAT_ASSIGN_OR_RETURN(
      Op * op, emit("transfer", {value}, {{"to", Attribute(towerDevice(to))}},
                    "", {fmt::format("{}.to{}", value->name().str(), to)}));
  return op->result();
}

absl::StatusOr<Value *> Reducer::sumOn(llvm::ArrayRef<Value *> values,
                                       int64_t firstTower, int64_t at,
                                       llvm::StringRef name) {
  llvm::SmallVector<Value *, 8> local;
  for (size_t j = 0; j < values.size(); ++j) {
    REMAT_ASSIGN_OR_RETURN(Value * moved,
                           moveTo(values[j], firstTower + int64_t(j), at));
    local.push_back(moved);
  }
  if (local.size() == 1)
    return local.front();
  REMAT_ASSIGN_OR_RETURN(Op * op, emit("add_n", local, {}, towerDevice(at),
                                       {fmt::format("{}.sum{}", name.str(), at)}));
  return op->result();
}

absl::StatusOr<Value *> Reducer::scaled(Value *sum, int64_t at,
                                        llvm::StringRef name) {
  if (!options_.average || towers_ == 1)
    return sum;
  std::string device = towerDevice(at);
  REMAT_ASSIGN_OR_RETURN(
      Op * scale,
      emit("constant", {},
           {{"value", Attribute(1.0 / double(towers_))},
            {"dtype", Attribute(dtypeName(sum->type().dtype()).str())}},
           device, {fmt::format("{}.scale{}", name.str(), at)}));
  REMAT_ASSIGN_OR_RETURN(
      Op * op, emit("mul", {sum, scale->result()}, {}, device,
                    {fmt::format("{}.mean{}", name.str(), at)}));
  return op->result();
}

absl::StatusOr<std::vector<Value *>>
Reducer::spread(Value *total, int64_t at, llvm::StringRef name) {
  std::vector<Value *> result(towers_);
  for (int64_t k = 0; k < towers_; ++k) {
    REMAT_ASSIGN_OR_RETURN(Value * here, moveTo(total, at, k));
    REMAT_ASSIGN_OR_RETURN(result[k], scaled(here, k, name));
  }
  return result;
}

absl::StatusOr<std::vector<Value *>>
Reducer::reduce(llvm::ArrayRef<Value *> perTower, size_t index, size_t count,
                int64_t home, llvm::StringRef name) {
  switch (options_.reduce) {
  case ReduceMode::AllReduce: {
    std::vector<std::string> names;
    for (int64_t k = 0; k < towers_; ++k)
      names.push_back(fmt::format("{}.all{}", name.str(), k));
    REMAT_ASSIGN_OR_RETURN(Op * op, emit("all_reduce", perTower, {}, "", names));
    std::vector<Value *> result(towers_);
    for (int64_t k = 0; k < towers_; ++k) {
      REMAT_ASSIGN_OR_RETURN(result[k], scaled(op->result(k), k, name));
    }
    return result;
  }
  case ReduceMode::Hierarchical: {
    // Two halves; this gradient's main tower in each is picked round-robin.
    int64_t half = towers_ / 2;
    int64_t main0 = int64_t(index) % towers_;
    int64_t main1 = (main0 + half) % towers_;
    auto sumHalf = [&](int64_t main) {
      int64_t start = main < half ? 0 : half;
      return sumOn(perTower.slice(start, half), start, main, name);
    };
    REMAT_ASSIGN_OR_RETURN(Value * sum0, sumHalf(main0));
    REMAT_ASSIGN_OR_RETURN(Value * sum1, sumHalf(main1));
    REMAT_ASSIGN_OR_RETURN(Value * moved, moveTo(sum0, main0, main1));
    REMAT_ASSIGN_OR_RETURN(Op * total,
                           emit("add", {moved, sum1}, {}, towerDevice(main1),
                                {fmt::format("{}.total", name.str())}));
    return spread(total->result(), main1, name);
  }
  case ReduceMode::Colocate: {
    REMAT_ASSIGN_OR_RETURN(Value * sum, sumOn(perTower, 0, home, name));
    return spread(sum, home, name);
  }
  case ReduceMode::Naive: {
    // Walking the gradients from the last, the i-th from the end goes to the
    // (i mod n)-th device.
    llvm::ArrayRef<std::string> devices = options_.paramDevices;
    size_t fromEnd = count - 1 - index;
    int64_t at = int64_t(fromEnd % size_t(towers_));
    if (!devices.empty()) {
      REMAT_ASSIGN_OR_RETURN(at,
                             deviceNumber(devices[fromEnd % devices.size()]));
    }
    REMAT_ASSIGN_OR_RETURN(Value * sum, sumOn(perTower, 0, at, name));
    return spread(sum, at, name);
  }
  }
  return invalidArgument("data-parallel: unknown reduction mode");
}

absl::StatusOr<std::vector<int64_t>>
placeParams(llvm::ArrayRef<int64_t> elements,
            const DataParallelOptions &options, int64_t towers) {
  std::vector<int64_t> devices;
  if (options.paramDevices.empty())
    for (int64_t k = 0; k < towers; ++k)
      devices.push_back(k);
  for (const std::string &device : options.paramDevices) {
    REMAT_ASSIGN_OR_RETURN(int64_t k, deviceNumber(device));
    devices.push_back(k);
  }
  REMAT_ASSIGN_OR_RETURN(int64_t smallDevice,
                         deviceNumber(options.smallParamDevice));
  std::vector<int64_t> load(devices.size(), 0);
  std::vector<int64_t> home;
  for (int64_t size : elements) {
    if (size < options.smallParamElements) {
      home.push_back(smallDevice);
      continue;
    }
    size_t least = std::min_element(load.begin(), load.end()) - load.begin();
    load[least] += size;
    home.push_back(devices[least]);
  }
  return home;
}

} // namespace remat::dp
