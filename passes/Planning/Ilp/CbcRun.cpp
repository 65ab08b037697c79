//===- CbcRun.cpp - One CBC solve, in a child process ---------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// CBC's standard driver on a loaded model, run in a forked child: Debian's
/// CBC aborts the process on some internal assertions (CbcCutGenerator's,
/// seen on DenseNet-121 with a relaxation that was tried and not kept), and
/// its root may run minutes past the time limit. The child sends its
/// progress events and its outcome back as messages: a one-byte kind, then
/// fixed-size fields.
///
//===----------------------------------------------------------------------===//

#include "IlpInternal.h"

#include "remat/Support/ChildProcess.h"

#include <coin/CbcEventHandler.hpp>
#include <coin/CbcModel.hpp>
#include <coin/CbcSolver.hpp>
#include <coin/OsiClpSolverInterface.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <unistd.h>
#include <vector>

namespace remat::ilp {
namespace {

/// Message kinds.
constexpr char kProgressMessage = 'P';
constexpr char kOutcomeMessage = 'O';

/// Appends fields to a message: fixed-size ones as their bytes, an
/// optional as a flag and its value, a vector as its length and elements.
class MessageWriter {
public:
  explicit MessageWriter(char kind) : bytes_(1, kind) {}
  template <typename T> void operator()(const T &field) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.append(reinterpret_cast<const char *>(&field), sizeof field);
  }
  void operator()(const std::optional<double> &field) {
    (*this)(field.has_value());
    (*this)(field.value_or(0.0));
  }
  void operator()(const std::vector<double> &field) {
    (*this)(uint64_t(field.size()));
    for (double value : field)
      (*this)(value);
  }
  const std::string &bytes() const { return bytes_; }

private:
  std::string bytes_;
};

/// Reads a message's fields as `MessageWriter` wrote them; `ok()` is false
/// once a read ran past its end.
class MessageReader {
public:
  explicit MessageReader(llvm::StringRef bytes) : bytes_(bytes.drop_front()) {}
  template <typename T> void operator()(T &field) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (bytes_.size() < sizeof field) {
      ok_ = false;
      return;
    }
    std::memcpy(&field, bytes_.data(), sizeof field);
    bytes_ = bytes_.drop_front(sizeof field);
  }
  void operator()(std::optional<double> &field) {
    bool present = false;
    double value = 0;
    (*this)(present);
    (*this)(value);
    field = present ? std::optional<double>(value) : std::nullopt;
  }
  void operator()(std::vector<double> &field) {
    uint64_t size = 0;
    (*this)(size);
    if (size > bytes_.size() / sizeof(double)) {
      ok_ = false;
      return;
    }
    field.resize(size);
    for (double &value : field)
      (*this)(value);
  }
  bool ok() const { return ok_; }

private:
  llvm::StringRef bytes_;
  bool ok_ = true;
};

/// The fields of each message, in order, for writing and reading alike.
template <typename Io, typename Progress>
void progressFields(Io &io, Progress &progress) {
  io(progress.seconds);
  io(progress.bound);
  io(progress.nodes);
  io(progress.incumbent);
  io(progress.gap);
}
template <typename Io, typename Outcome>
void outcomeFields(Io &io, Outcome &outcome) {
  io(outcome.reachedLimit);
  io(outcome.provenOptimal);
  io(outcome.provenInfeasible);
  io(outcome.nodes);
  io(outcome.bound);
  io(outcome.values);
}

std::string progressMessage(const IlpProgress &progress) {
  MessageWriter writer(kProgressMessage);
  progressFields(writer, progress);
  return writer.bytes();
}

std::string outcomeMessage(const CbcOutcome &outcome) {
  MessageWriter writer(kOutcomeMessage);
  outcomeFields(writer, outcome);
  return writer.bytes();
}

/// The message's fields read into a `T`; nullopt when it is cut short.
template <typename T, typename Fields>
std::optional<T> readMessage(llvm::StringRef message, Fields fields) {
  MessageReader reader(message);
  T value;
  fields(reader, value);
  if (!reader.ok())
    return std::nullopt;
  return value;
}

/// Forwards CBC's search state to a sink: on every new incumbent, otherwise
/// at most once a second.
class ProgressHandler : public CbcEventHandler {
public:
  explicit ProgressHandler(std::function<void(const IlpProgress &)> sink)
      : sink_(std::move(sink)) {}

  CbcEventHandler *clone() const override { return new ProgressHandler(*this); }

  CbcAction event(CbcEvent which) override {
    bool found = which == solution || which == heuristicSolution;
    if (!found && which != node && which != endSearch)
      return noAction;
    // Heuristics (RINS, proximity search) run sub-searches whose objective
    // is not the problem's.
    if (model_->parentModel())
      return noAction;
    double seconds = model_->getCurrentSeconds();
    if (!found && which == node && seconds < lastReport_ + 1.0)
      return noAction;
    lastReport_ = seconds;
    IlpProgress progress;
    progress.seconds = seconds;
    progress.bound = integerBound(model_->getBestPossibleObjValue());
    progress.nodes = model_->getNodeCount();
    if (model_->bestSolution()) {
      double incumbent = model_->getObjValue();
      progress.incumbent = incumbent;
      progress.gap = gapOf(incumbent, progress.bound);
    }
    sink_(progress);
    return noAction;
  }

private:
  std::function<void(const IlpProgress &)> sink_;
  double lastReport_ = -1.0;
};

/// CBC's command line for `options`.
std::vector<std::string> driverArguments(const IlpOptions &options) {
  std::vector<std::string> arguments = {
      "remat-ilp", "-log", std::to_string(options.logLevel), "-timeMode",
      "elapsed", "-seconds", fmt::format("{}", options.timeLimitSeconds),
      "-ratioGap", fmt::format("{}", options.relativeGap), "-allowableGap", "0",
      "-threads", "0", "-randomSeed", std::to_string(options.seed),
      "-randomCbcSeed", std::to_string(options.seed),
      // Cuts at the root only: on MLPs Gomory and two-step MIR cuts lift
      // the root bound 2 to 5 times (the LP keeps fractions of every
      // activation); on uniform chains the bound is tight already, and
      // cuts in the tree slow the search down (docs/planning-ilp.md).
      "-cuts", "root", "-rins", "on", "-dins", "on", "-proximity", "on"};
  if (options.maxNodes)
    llvm::append_range(
        arguments, std::vector<std::string>{"-maxNodes",
                                            std::to_string(*options.maxNodes)});
  llvm::append_range(arguments, std::vector<std::string>{"-solve", "-quit"});
  return arguments;
}

/// The child's side: the driver on `cbc`, its outcome read back from the
/// model. CBC's driver prints parts of its log (the banner, preprocessing,
/// the search of the preprocessed model) on stdout, where remat writes its
/// IR: `solveInChild` makes file descriptor 1 stderr.
CbcOutcome solve(CbcModel &cbc, const IlpOptions &options,
                 ChildChannel &channel) {
  if (options.onProgress) {
    ProgressHandler handler([&channel](const IlpProgress &progress) {
      channel.send(progressMessage(progress));
    });
    cbc.passInEventHandler(&handler);
  }
  std::vector<std::string> arguments = driverArguments(options);
  std::vector<const char *> argv;
  for (const std::string &argument : arguments)
    argv.push_back(argument.c_str());
  auto start = std::chrono::steady_clock::now();
  CbcMain1(int(argv.size()), argv.data(), cbc);
  std::chrono::duration<double> seconds =
      std::chrono::steady_clock::now() - start;
  CbcOutcome outcome;
  outcome.reachedLimit = cbc.isSecondsLimitReached() ||
                         cbc.isNodeLimitReached() ||
                         seconds.count() >= options.timeLimitSeconds;
  outcome.provenOptimal = cbc.isProvenOptimal();
  outcome.nodes = cbc.getNodeCount();
  if (const double *values = cbc.bestSolution()) {
    outcome.bound = cbc.getBestPossibleObjValue();
    outcome.values.assign(values, values + cbc.getNumCols());
  } else {
    // A run that reached a limit proves nothing infeasible: stopped in its
    // root (preprocessing, cuts), CBC's driver may report infeasibility with
    // no search done (a cold 99-op MLP at 50% did, in 86 s against a 60 s
    // limit, while a warm-started run planned it).
    outcome.provenInfeasible = !outcome.reachedLimit &&
                               (cbc.isProvenInfeasible() || cbc.status() == 0);
  }
  return outcome;
}

/// `solveInChild`'s body for the linear relaxation of `rows` over
/// `columns`: CLP's simplex within the time limit.
CbcOutcome solveLinear(const RowBuilder &rows, const ModelColumns &columns,
                       const IlpOptions &options) {
  OsiClpSolverInterface solver;
  solver.messageHandler()->setLogLevel(options.logLevel);
  solver.messageHandler()->setFilePointer(stderr);
  solver.loadProblem(rows.matrix(columns.size()), columns.lower.data(),
                     columns.upper.data(), columns.objective.data(),
                     rows.lower(), rows.upper());
  solver.setObjSense(1.0);
  solver.getModelPtr()->setMaximumSeconds(options.timeLimitSeconds);
  solver.initialSolve();
  CbcOutcome outcome;
  outcome.provenOptimal = solver.isProvenOptimal();
  outcome.provenInfeasible = solver.isProvenPrimalInfeasible();
  outcome.reachedLimit = !outcome.provenOptimal && !outcome.provenInfeasible;
  if (outcome.provenOptimal)
    outcome.bound = solver.getObjValue();
  return outcome;
}

/// Runs `body` in a child process (remat/Support/ChildProcess.h), its
/// stdout sent to stderr, after `options.inSolverProcess`: its outcome, or
/// a `failure` where the child died or ran `kDeadlineGraceSeconds` or a
/// quarter of the time limit past it.
CbcOutcome
solveInChild(const IlpOptions &options,
             llvm::function_ref<CbcOutcome(ChildChannel &)> body) {
  std::optional<CbcOutcome> outcome;
  auto onMessage = [&](llvm::StringRef message) {
    char kind = message.empty() ? '\0' : message.front();
    if (kind == kOutcomeMessage) {
      outcome = readMessage<CbcOutcome>(
          message, outcomeFields<MessageReader, CbcOutcome>);
    } else if (kind == kProgressMessage && options.onProgress) {
      if (std::optional<IlpProgress> progress = readMessage<IlpProgress>(
              message, progressFields<MessageReader, IlpProgress>))
        options.onProgress(*progress);
    }
  };
  double grace = std::max(kDeadlineGraceSeconds, options.timeLimitSeconds / 4);
  absl::StatusOr<ChildExit> exit = runInChild(
      [&](ChildChannel &channel) {
        dup2(STDERR_FILENO, STDOUT_FILENO);
        if (options.inSolverProcess)
          options.inSolverProcess();
        return channel.send(outcomeMessage(body(channel))) ? 0 : 1;
      },
      onMessage, options.timeLimitSeconds + grace);
  if (exit.ok() && exit->succeeded() && outcome)
    return *outcome;
  CbcOutcome failed;
  failed.reachedLimit = true;
  if (!exit.ok())
    failed.failure = std::string(exit.status().message());
  else if (exit->kind == ChildExit::Kind::KilledAtDeadline)
    failed.failure = fmt::format("CBC ran past its {:.1f} s time limit and was "
                                 "stopped {:.1f} s later",
                                 options.timeLimitSeconds, grace);
  else
    failed.failure = fmt::format("CBC ended on {}", exit->describe());
  return failed;
}

} // namespace

CbcOutcome runCbc(CbcModel &cbc, const IlpOptions &options) {
  return solveInChild(options, [&](ChildChannel &channel) {
    return solve(cbc, options, channel);
  });
}

CbcOutcome solveLinearRelaxation(const RowBuilder &rows,
                                 const ModelColumns &columns,
                                 const IlpOptions &options) {
  return solveInChild(options, [&](ChildChannel &) {
    return solveLinear(rows, columns, options);
  });
}

int ModelColumns::add(double low, double up, double cost, bool integer) {
  int column = size();
  lower.push_back(low);
  upper.push_back(up);
  objective.push_back(cost);
  if (integer)
    integers.push_back(column);
  return column;
}

CbcOutcome solveRows(const RowBuilder &rows, const ModelColumns &columns,
                     const IlpOptions &options,
                     llvm::ArrayRef<std::pair<int, double>> start) {
  int numColumns = columns.size();
  OsiClpSolverInterface solver;
  solver.messageHandler()->setLogLevel(options.logLevel);
  solver.messageHandler()->setFilePointer(stderr);
  solver.loadProblem(rows.matrix(numColumns), columns.lower.data(),
                     columns.upper.data(), columns.objective.data(),
                     rows.lower(), rows.upper());
  solver.setInteger(columns.integers.data(), int(columns.integers.size()));
  solver.setObjSense(1.0);

  std::vector<std::pair<std::string, double>> startValues;
  if (!start.empty()) {
    solver.setIntParam(OsiNameDiscipline, 1);
    for (int column = 0; column < numColumns; ++column)
      solver.setColName(column, fmt::format("c{}", column));
    for (auto [column, value] : start)
      startValues.emplace_back(fmt::format("c{}", column), value);
  }

  CbcModel cbc(solver);
  cbc.messageHandler()->setFilePointer(stderr);
  CbcMain0(cbc);
  cbc.setLogLevel(options.logLevel);
  if (!startValues.empty())
    cbc.setMIPStart(startValues);
  return runCbc(cbc, options);
}

} // namespace remat::ilp
