//===- Distributed.cpp - Running one device per MPI rank ---------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Sets up MPI (once per process, finalised at exit), checks that the graph's
/// devices match the ranks, runs the executor with an `MpiDeviceShare`, and
/// gathers outputs and figures on rank 0. Without MPI in the build, every
/// entry point reports that plainly.
///
//===----------------------------------------------------------------------===//

#include "remat/Runtime/Distributed.h"

#include "remat/Support/Status.h"

#include "llvm/ADT/StringRef.h"

#include <cstdlib>

#if REMAT_WITH_MPI
#include "MpiDeviceShare.h"

#include "remat/Analysis/Placement.h"
#include "remat/IR/Graph.h"

#include "llvm/Support/raw_ostream.h"

#include <mpi.h>

#include <algorithm>
#endif

namespace remat {

int launcherRank() {
  // Open MPI's, then the PMI names of MPICH's Hydra and of PMIx launchers.
  for (const char *name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (const char *value = std::getenv(name)) {
      int rank = 0;
      if (!llvm::StringRef(value).getAsInteger(10, rank) && rank >= 0)
        return rank;
    }
  return 0;
}

#if REMAT_WITH_MPI

bool haveDistributedRuntime() { return true; }

namespace {

/// Initialises MPI on first use and finalises it when the process exits.
void ensureMpi() {
  static bool initialised = [] {
    int done = 0;
    MPI_Initialized(&done);
    if (!done)
      MPI_Init(nullptr, nullptr);
    std::atexit([] {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized)
        MPI_Finalize();
    });
    return true;
  }();
  (void)initialised;
}

absl::Status checkDevices(const Placement &placement, int ranks) {
  if (placement.devices.empty())
    return invalidArgument(
        "the graph has no devices, so {} rank{} cannot share it; place it "
        "on devices first (remat opt -p 'autodiff,data-parallel{{towers={}}}', "
        "docs/multi-device.md)",
        ranks, ranks == 1 ? "" : "s", std::max(ranks, 2));
  if (int(placement.devices.size()) != ranks)
    return invalidArgument("the graph has {} devices but {} ranks run it; "
                           "start one rank per device (mpirun -n {})",
                           placement.devices.size(), ranks,
                           placement.devices.size());
  for (int k = 0; k < ranks; ++k) {
    REMAT_ASSIGN_OR_RETURN(int number, deviceNumber(placement.devices[k]));
    if (number != k)
      return invalidArgument("devices must be numbered 0..{}, got '{}'",
                             ranks - 1, placement.devices[k]);
  }
  return absl::OkStatus();
}

/// Moves every output to rank 0, in output order.
void gatherOutputs(const Graph &graph, const Placement &placement, int rank,
                   RunResult &run) {
  std::vector<std::pair<std::string, HostTensor>> gathered;
  size_t local = 0;
  for (const Value *output : graph.outputs()) {
    int owner = placement.valueDevice[output->id()];
    if (owner == Placement::kReplicated)
      owner = 0;
    bool heldHere = placement.valueDevice[output->id()] ==
                        Placement::kReplicated ||
                    owner == rank;
    HostTensor *mine = heldHere ? &run.outputs[local++].second : nullptr;
    if (rank == 0) {
      if (owner == 0) {
        gathered.emplace_back(output->name().str(), std::move(*mine));
        continue;
      }
      HostTensor tensor(output->type());
      MPI_Recv(tensor.view().raw(), int(tensor.type().byteSize()), MPI_BYTE,
               owner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      gathered.emplace_back(output->name().str(), std::move(tensor));
    } else if (owner == rank) {
      MPI_Send(mine->view().raw(), int(mine->type().byteSize()), MPI_BYTE, 0,
               1, MPI_COMM_WORLD);
    }
  }
  if (rank == 0)
    run.outputs = std::move(gathered);
}

} // namespace

absl::StatusOr<DistributedRun> runDistributed(const Graph &graph,
                                              const RunOptions &options) {
  ensureMpi();
  DistributedRun result;
  MPI_Comm_rank(MPI_COMM_WORLD, &result.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &result.ranks);
  REMAT_ASSIGN_OR_RETURN(Placement placement, computePlacement(graph));
  REMAT_RETURN_IF_ERROR(checkDevices(placement, result.ranks));
  for (const Value *output : graph.outputs())
    if (output->type().byteSize() > INT32_MAX)
      return invalidArgument("output %{} is too large for one MPI message",
                             output->name().str());
  REMAT_ASSIGN_OR_RETURN(auto share, MpiDeviceShare::create(
                                         graph, placement, result.rank));
  RunOptions rankOptions = options;
  rankOptions.share = share.get();
  absl::StatusOr<RunResult> run = runGraph(graph, rankOptions);
  if (!run.ok()) {
    llvm::errs() << "remat: error: rank " << result.rank << ": "
                 << std::string(run.status().message()) << '\n';
    llvm::errs().flush();
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  result.run = std::move(*run);
  RankFigures mine{.peakBytes = result.run.peakBytes,
                   .bytesSent = share->bytesSent(),
                   .transfersSent = share->transfersSent(),
                   .collectiveCalls = share->collectiveCalls(),
                   .seconds = result.run.seconds};
  int64_t packed[4] = {mine.peakBytes, mine.bytesSent, mine.transfersSent,
                       mine.collectiveCalls};
  std::vector<int64_t> all(4 * size_t(result.ranks));
  std::vector<double> times(result.ranks);
  MPI_Gather(packed, 4, MPI_INT64_T, all.data(), 4, MPI_INT64_T, 0,
             MPI_COMM_WORLD);
  MPI_Gather(&mine.seconds, 1, MPI_DOUBLE, times.data(), 1, MPI_DOUBLE, 0,
             MPI_COMM_WORLD);
  if (result.rank == 0)
    for (int r = 0; r < result.ranks; ++r)
      result.figures.push_back({all[4 * r], all[4 * r + 1], all[4 * r + 2],
                                all[4 * r + 3], times[r]});
  gatherOutputs(graph, placement, result.rank, result.run);
  return result;
}

#else

bool haveDistributedRuntime() { return false; }

absl::StatusOr<DistributedRun> runDistributed(const Graph &,
                                              const RunOptions &) {
  return invalidArgument("this remat was built without MPI; install "
                         "libopenmpi-dev and rebuild to use --distributed");
}

#endif

} // namespace remat
