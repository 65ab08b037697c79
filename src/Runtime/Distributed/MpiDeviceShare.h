//===- MpiDeviceShare.h - One rank's device over MPI -------------*- C++ -*-===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The device share of one MPI rank: it holds the values placed on its
/// device and the replicated ones, runs `all_reduce` as MPI_Allreduce on a
/// communicator of the group's ranks and `transfer` as MPI_Send/MPI_Recv,
/// and counts what it sends. Every rank walks the same schedule, so sends,
/// receives and collectives match in order. Private to src/Runtime.
///
//===----------------------------------------------------------------------===//

#ifndef REMAT_SRC_RUNTIME_DISTRIBUTED_MPIDEVICESHARE_H
#define REMAT_SRC_RUNTIME_DISTRIBUTED_MPIDEVICESHARE_H

#include "remat/Analysis/Placement.h"
#include "remat/IR/Value.h"
#include "remat/Runtime/DeviceShare.h"

#include "absl/status/statusor.h"

#include <mpi.h>

#include <map>
#include <memory>
#include <vector>

namespace remat {

class Graph;

class MpiDeviceShare : public DeviceShare {
public:
  /// Creates the communicators of every all_reduce group of `graph`; a
  /// collective call that every rank makes with the same graph.
  static absl::StatusOr<std::unique_ptr<MpiDeviceShare>>
  create(const Graph &graph, const Placement &placement, int rank);
  ~MpiDeviceShare() override;

  bool holds(const Value &value) const override;
  absl::Status exchange(const Op &op, llvm::ArrayRef<Tensor> operands,
                        llvm::ArrayRef<Tensor> results) override;

  int64_t bytesSent() const { return bytesSent_; }
  int64_t transfersSent() const { return transfersSent_; }
  int64_t collectiveCalls() const { return collectiveCalls_; }

private:
  MpiDeviceShare(const Placement &placement, int rank)
      : placement_(placement), rank_(rank) {}
  absl::Status allReduce(const Op &op, llvm::ArrayRef<Tensor> operands,
                         llvm::ArrayRef<Tensor> results);
  absl::Status transfer(const Op &op, llvm::ArrayRef<Tensor> operands,
                        llvm::ArrayRef<Tensor> results);
  int deviceOf(const Value &value) const {
    return placement_.valueDevice[value.id()];
  }

  const Placement &placement_;
  int rank_;
  /// A communicator per group of ranks (sorted), null when not a member.
  std::map<std::vector<int>, MPI_Comm> groups_;
  int64_t bytesSent_ = 0;
  int64_t transfersSent_ = 0;
  int64_t collectiveCalls_ = 0;
};

} // namespace remat

#endif // REMAT_SRC_RUNTIME_DISTRIBUTED_MPIDEVICESHARE_H
