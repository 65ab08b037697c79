//===- IlpInternal.h - Shared internals of the Checkmate MILP ---*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// What the files of passes/Planning/Ilp/ share and nobody else uses: the
/// MILP's columns and rows.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_PASSES_PLANNING_ILP_ILPINTERNAL_H
#define REMAT_PASSES_PLANNING_ILP_ILPINTERNAL_H

#include "CheckmateIlp.h"

#include <coin/CoinFinite.hpp>
#include <coin/CoinPackedMatrix.hpp>

#include <climits>
#include <memory>
#include <string>

class CbcModel;
class OsiClpSolverInterface;

namespace remat::ilp {

using problem::buildDag;
using problem::RematDag;

/// The MILP's column layout. R, S and U are lower-triangular, stage-major;
/// FREE[t][k][j] pairs the computation of k in stage t with the j-th node of
/// `freeSources(k)` (its deps, then k itself).
class IlpColumns {
public:
  IlpColumns(const RematProblem &problem, const RematDag &dag);

  /// The column count; -1 above INT_MAX.
  int numColumns() const { return total_ > INT_MAX ? -1 : int(total_); }
  int64_t totalColumns() const { return total_; }
  int r(int t, int i) const { return int(triangle(t) + i); }
  int s(int t, int i) const { return int(sBase_ + triangle(t - 1) + i); }
  int u(int t, int k) const { return int(uBase_ + triangle(t) + k); }
  int free(int t, int k, int j) const {
    return int(freeBase_ + freeStart_[t] + freeOffset_[k] + j);
  }
  /// The nodes whose memory may be freed right after computing `k`.
  llvm::ArrayRef<int> freeSources(int k) const { return freeSources_[k]; }

private:
  /// 0 + 1 + ... + t.
  static int64_t triangle(int t) { return int64_t(t) * (t + 1) / 2; }

  int64_t sBase_ = 0, uBase_ = 0, freeBase_ = 0;
  std::vector<int64_t> freeOffset_, freeStart_;
  std::vector<std::vector<int>> freeSources_;
  int64_t total_ = 0;
};

/// The most columns the MILP is built with. Its rows and CLP's copies take
/// about 900 bytes a column in remat's process, CBC's own copies coming on
/// top in its child (the 809-node MLP's 2.0 million columns: 1.75 GB;
/// 2,409 nodes, 15 million: 14 GB), and from about 800 nodes CBC's root
/// alone outlasts a minute. 4 million is about 1,150 nodes.
constexpr int64_t kMaxMilpColumns = 4'000'000;

/// The MILP of docs/planning-ilp.md loaded into a CLP solver, with the
/// layout of its columns; bytes are in units of `byteScale`.
struct IlpModel {
  std::unique_ptr<OsiClpSolverInterface> solver;
  std::unique_ptr<IlpColumns> columns;
  double byteScale = 1;
};

/// Builds the MILP; an error when it would have more than INT_MAX columns.
absl::StatusOr<IlpModel> buildIlpModel(const RematProblem &problem,
                                       const RematDag &dag);

/// The R and S column values of `schedule`, a valid schedule.
std::vector<std::pair<int, double>>
scheduleColumns(const RematProblem &problem, const RematDag &dag,
                const IlpColumns &columns, const RematSchedule &schedule);

/// The schedule a solution's column values encode, with recomputations of
/// resident nodes dropped.
RematSchedule columnsSchedule(const RematProblem &problem,
                              const IlpColumns &columns, const double *values);

/// Row-major rows with their bounds, loaded into CLP at once.
class RowBuilder {
public:
  void add(llvm::ArrayRef<std::pair<int, double>> terms, double lower,
           double upper);
  CoinPackedMatrix matrix(int numColumns) const;
  int numRows() const { return int(starts_.size()); }
  const double *lower() const { return lower_.data(); }
  const double *upper() const { return upper_.data(); }

private:
  std::vector<CoinBigIndex> starts_;
  std::vector<int> lengths_, indices_;
  std::vector<double> elements_, lower_, upper_;
};

/// (cost - bound) / cost, 0 when the cost is 0.
double gapOf(double cost, double bound);

/// CBC's lower bound as a bound on an integer cost: rounded up, with slack
/// for its tolerance, and never below 0.
double integerBound(double bound);

/// An LP optimum (CLP's) as a bound on an integer cost: `integerBound` of
/// it less a relative 1e-9, since the simplex meets the rows only to its
/// tolerances, on coefficients of up to about 1e8 bytes.
double linearBound(double optimum);

/// What one CBC run (`runCbc`) ended with.
struct CbcOutcome {
  /// It stopped at a limit (time, nodes, the deadline): nothing it says is
  /// proven.
  bool reachedLimit = false;
  bool provenOptimal = false;
  /// No solution, and CBC proved there is none before any limit.
  bool provenInfeasible = false;
  int64_t nodes = 0;
  /// CBC's lower bound on the objective; meaningful with `values`.
  double bound = 0;
  /// The best solution's column values; empty when none came back.
  std::vector<double> values;
  /// Why no outcome came back from CBC ("signal 6 (Aborted)", killed past
  /// its limit); empty when one did.
  std::string failure;
};

/// The least time a CBC solve may run past its limit before it is killed.
constexpr double kDeadlineGraceSeconds = 5;

/// Runs CBC's standard driver (preprocessing, root cuts, heuristics, branch
/// and bound) on `cbc` with the limits, gap, seed, log level and progress
/// sink of `options`, CBC's stdout output sent to stderr. It runs in a
/// child process (remat/Support/ChildProcess.h): an assertion that aborts
/// inside CBC, or a root that runs past the time limit, is a `failure` and
/// not the end of remat. A child still running `kDeadlineGraceSeconds` or a
/// quarter of the limit, whichever is more, after the time limit is killed.
CbcOutcome runCbc(CbcModel &cbc, const IlpOptions &options);

/// A model's columns: bounds, costs (minimised), which are integers.
struct ModelColumns {
  std::vector<double> lower, upper, objective;
  std::vector<int> integers;

  /// A new column; returns its index.
  int add(double low, double up, double cost, bool integer);
  int size() const { return int(lower.size()); }
};

/// The linear relaxation of `rows` over `columns` (no column an integer) on
/// CLP, in a child process as `runCbc` runs CBC: `bound` is its optimum
/// where `provenOptimal`.
CbcOutcome solveLinearRelaxation(const RowBuilder &rows,
                                 const ModelColumns &columns,
                                 const IlpOptions &options);

/// `runCbc` on `rows` over `columns`, from `start` where given: values of
/// integer columns that CBC's driver fixes, completing the others by an LP.
CbcOutcome solveRows(const RowBuilder &rows, const ModelColumns &columns,
                     const IlpOptions &options,
                     llvm::ArrayRef<std::pair<int, double>> start = {});

/// Checkmate's MILP restricted to a neighbourhood of a schedule (docs/
/// planning-ilp.md#windows): the bits of the free nodes are columns,
/// every other bit keeps the schedule's value.
struct NeighborhoodModel {
  /// Where a free node may be computed and kept, and its columns.
  struct FreeNode {
    int node = 0;
    /// Stages after its own that may compute it, ascending, and their
    /// columns.
    std::vector<int> recomputeStages, recomputeColumns;
    /// Its own stage, then every stage that may compute or read it,
    /// ascending; `keepColumns[k]` holds it in memory over the stages after
    /// `events[k]` up to `events[k + 1]`, none after the last.
    std::vector<int> events, keepColumns;
  };

  RowBuilder rows;
  ModelColumns columns;
  /// The schedule's own values of the integer columns: a start that fits
  /// wherever the schedule does.
  std::vector<std::pair<int, double>> start;
  /// Ascending by node.
  std::vector<FreeNode> freeNodes;
};

/// The restricted MILP around `schedule`, a valid schedule within the
/// budget, with `freeNodes` (ascending forward nodes) free. O(F N / 64 + the
/// free nodes' stages times their degree) to build, F the free nodes.
NeighborhoodModel buildNeighborhoodModel(const RematProblem &problem,
                                         const RematDag &dag,
                                         const RematSchedule &schedule,
                                         llvm::ArrayRef<int> freeNodes);

/// `schedule` with the free nodes' bits read from a solution's `values`;
/// recomputations of resident nodes dropped.
RematSchedule neighborhoodSchedule(const NeighborhoodModel &model,
                                   RematSchedule schedule,
                                   llvm::ArrayRef<double> values);

/// From `schedule` (which fits, at `cost`), windows of consecutive forward
/// nodes, each solved as a `NeighborhoodModel` within `kWindowSearchNodes`
/// nodes, every improvement kept; the window doubles after a sweep that
/// improves nothing. Stops at `options`' time limit or window count
/// (`maxNeighborhoods`), when the schedule meets
/// `bound` (a proven lower bound), or when a window of every node improves
/// nothing. A window's solution that fails the exact check is passed over
/// and named in `solverFailure`.
IlpResult searchNeighborhoods(const RematProblem &problem,
                              const RematDag &dag, RematSchedule schedule,
                              ScheduleCost cost, double bound,
                              const IlpOptions &options);

/// Memory is counted in units of the gcd of all sizes, so that every
/// coefficient and every live total is an integer and the budget's rounding
/// is exact.
int64_t byteUnit(const RematProblem &problem);

/// The schedule that computes every node at its own stage and each node of
/// `recomputed` once more, at the first backward stage that reads it or
/// recomputes one of its readers; every node stays resident until its next
/// read. Valid for any set (a node whose readers all run before the backward
/// pass is not recomputed); whether it fits the budget is the caller's
/// check. O(N^2) bits, O(N + E) stages set.
RematSchedule recomputeOnceSchedule(const RematProblem &problem,
                                    const RematDag &dag,
                                    const llvm::BitVector &recomputed);

/// `recomputeOnceSchedule`, and where it does not fit the budget, moves
/// that keep its cost: a value live at the peak only for a later reader kept
/// from the forward pass instead and recomputed after the peak (the move
/// that lowers the peak most), else the recomputations of the peak's stage
/// run a stage earlier; again and again (at most 200 schedules tried, each
/// O(N^2 + N E), fewer above 1,600 nodes): the first schedule that fits,
/// with its cost, or nullopt.
std::optional<std::pair<RematSchedule, ScheduleCost>>
fitRecomputeOnce(const RematProblem &problem, const RematDag &dag,
                 const llvm::BitVector &recomputed);

} // namespace remat::ilp

#endif // REMAT_PASSES_PLANNING_ILP_ILPINTERNAL_H
