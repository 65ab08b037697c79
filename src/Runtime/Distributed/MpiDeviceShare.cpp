//===- MpiDeviceShare.cpp - One rank's device over MPI -----------------------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#if REMAT_WITH_MPI

#include "MpiDeviceShare.h"

#include "remat/IR/Graph.h"
#include "remat/Support/Status.h"

#include "llvm/ADT/STLExtras.h"

#include <climits>
#include <cstring>

namespace remat {
namespace {

/// The ranks taking part in `op` (an all_reduce), ascending.
std::vector<int> groupOf(const Op &op, const Placement &placement) {
  std::vector<int> ranks;
  for (const Value *operand : op.operands())
    ranks.push_back(placement.valueDevice[operand->id()]);
  llvm::sort(ranks);
  return ranks;
}

absl::StatusOr<MPI_Datatype> mpiType(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return MPI_FLOAT;
  case DType::F64:
    return MPI_DOUBLE;
  case DType::I8:
    return MPI_INT8_T;
  case DType::I32:
    return MPI_INT32_T;
  case DType::I64:
    return MPI_INT64_T;
  default:
    return invalidArgument("cannot sum {} tensors over MPI",
                           dtypeName(dtype).str());
  }
}

/// MPI counts are int.
absl::StatusOr<int> messageCount(int64_t count) {
  if (count > INT_MAX)
    return invalidArgument("{} elements are too many for one MPI message",
                           count);
  return int(count);
}

} // namespace

absl::StatusOr<std::unique_ptr<MpiDeviceShare>>
MpiDeviceShare::create(const Graph &graph, const Placement &placement,
                       int rank) {
  std::unique_ptr<MpiDeviceShare> share(new MpiDeviceShare(placement, rank));
  // Device index k is rank k (checked by the caller).
  for (const Op &op : graph.ops()) {
    if (op.kind() != "all_reduce")
      continue;
    std::vector<int> ranks = groupOf(op, placement);
    if (share->groups_.count(ranks))
      continue;
    bool member = llvm::is_contained(ranks, rank);
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, member ? 0 : MPI_UNDEFINED, rank, &comm);
    share->groups_[ranks] = comm;
  }
  return share;
}

MpiDeviceShare::~MpiDeviceShare() {
  for (auto &[ranks, comm] : groups_)
    if (comm != MPI_COMM_NULL)
      MPI_Comm_free(&comm);
}

bool MpiDeviceShare::holds(const Value &value) const {
  int device = deviceOf(value);
  return device == Placement::kReplicated || device == rank_;
}

absl::Status MpiDeviceShare::exchange(const Op &op,
                                      llvm::ArrayRef<Tensor> operands,
                                      llvm::ArrayRef<Tensor> results) {
  if (op.kind() == "all_reduce")
    return allReduce(op, operands, results);
  return transfer(op, operands, results);
}

absl::Status MpiDeviceShare::allReduce(const Op &op,
                                       llvm::ArrayRef<Tensor> operands,
                                       llvm::ArrayRef<Tensor> results) {
  for (unsigned i = 0; i < op.numOperands(); ++i) {
    if (deviceOf(*op.operand(i)) != rank_)
      continue;
    const Tensor &in = operands[i];
    REMAT_ASSIGN_OR_RETURN(MPI_Datatype type, mpiType(in.dtype()));
    REMAT_ASSIGN_OR_RETURN(int count, messageCount(in.numel()));
    MPI_Comm comm = groups_.at(groupOf(op, placement_));
    MPI_Allreduce(in.raw(), results[i].raw(), count, type, MPI_SUM, comm);
    bytesSent_ += in.type().byteSize();
    ++collectiveCalls_;
  }
  return absl::OkStatus();
}

absl::Status MpiDeviceShare::transfer(const Op &op,
                                      llvm::ArrayRef<Tensor> operands,
                                      llvm::ArrayRef<Tensor> results) {
  int from = deviceOf(*op.operand(0));
  int to = deviceOf(*op.result());
  int64_t bytes = op.result()->type().byteSize();
  REMAT_ASSIGN_OR_RETURN(int count, messageCount(bytes));
  if (from == Placement::kReplicated || from == to) {
    // The destination holds the operand already.
    if (to == rank_ && bytes > 0)
      std::memcpy(results[0].raw(), operands[0].raw(), bytes);
    return absl::OkStatus();
  }
  if (from == rank_) {
    MPI_Send(operands[0].raw(), count, MPI_BYTE, to, 0, MPI_COMM_WORLD);
    bytesSent_ += bytes;
    ++transfersSent_;
  } else if (to == rank_) {
    MPI_Recv(results[0].raw(), count, MPI_BYTE, from, 0, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
  }
  return absl::OkStatus();
}

} // namespace remat

#endif // REMAT_WITH_MPI
