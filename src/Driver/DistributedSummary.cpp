//===- DistributedSummary.cpp - What remat run --distributed reports --------===//
//
// Part of the remat project.
//
//===----------------------------------------------------------------------===//

#include "DistributedSummary.h"

#include "remat/IR/Graph.h"
#include "remat/Support/Status.h"
#include "remat/Support/Units.h"

#include "llvm/ADT/StringMap.h"

#include <fmt/format.h>

#include <cstring>

namespace remat::driver {

constexpr llvm::StringLiteral kReplicaMarker = ".replica";

absl::StatusOr<DistributedSummary>
summarizeDistributed(const Graph &graph, const DistributedRun &run) {
  DistributedSummary summary;
  summary.ranks = run.ranks;
  summary.measured = run.figures;
  REMAT_ASSIGN_OR_RETURN(Placement placement, computePlacement(graph));
  summary.simulated = profileDevices(graph, placement);
  llvm::StringMap<const HostTensor *> byName;
  for (const auto &[name, tensor] : run.run.outputs)
    byName[name] = &tensor;
  for (const auto &[name, tensor] : run.run.outputs) {
    size_t marker = llvm::StringRef(name).rfind(kReplicaMarker);
    if (marker == llvm::StringRef::npos)
      continue;
    auto original = byName.find(llvm::StringRef(name).take_front(marker));
    if (original == byName.end())
      continue;
    ++summary.replicasCompared;
    const HostTensor &a = *original->second;
    bool same = a.type() == tensor.type() &&
                std::memcmp(a.view().raw(), tensor.view().raw(),
                            a.type().byteSize()) == 0;
    if (!same)
      summary.replicasDiffering.push_back(name);
  }
  return summary;
}

void printDistributedText(const DistributedSummary &summary,
                          llvm::raw_ostream &os) {
  os << fmt::format("ranks        {}\n", summary.ranks);
  os << "  device   measured peak   simulated peak  bytes sent  transfers  "
        "collectives  time\n";
  for (size_t r = 0; r < summary.measured.size(); ++r) {
    const RankFigures &m = summary.measured[r];
    const DeviceProfile &s = summary.simulated[r];
    os << fmt::format("  {:<8} {:>14}  {:>14}  {:>10}  {:>9}  {:>11}  {:.6f} s\n",
                      s.device, formatBytes(m.peakBytes),
                      formatBytes(s.peakBytes), formatBytes(m.bytesSent),
                      m.transfersSent, m.collectiveCalls, m.seconds);
  }
  os << fmt::format("replicas     {} compared, {}\n", summary.replicasCompared,
                    summary.replicasDiffering.empty()
                        ? std::string("all bitwise identical")
                        : fmt::format("{} differ",
                                      summary.replicasDiffering.size()));
}

void printDistributedJson(const DistributedSummary &summary,
                          llvm::json::OStream &json) {
  json.attributeObject("distributed", [&] {
    json.attribute("ranks", summary.ranks);
    json.attributeArray("devices", [&] {
      for (size_t r = 0; r < summary.measured.size(); ++r)
        json.object([&] {
          const RankFigures &m = summary.measured[r];
          json.attribute("device", summary.simulated[r].device);
          json.attribute("peak_bytes", m.peakBytes);
          json.attribute("simulated_peak_bytes", summary.simulated[r].peakBytes);
          json.attribute("bytes_sent", m.bytesSent);
          json.attribute("transfers_sent", m.transfersSent);
          json.attribute("collective_calls", m.collectiveCalls);
          json.attribute("seconds", m.seconds);
        });
    });
    json.attribute("replicas_compared", summary.replicasCompared);
    json.attributeArray("replicas_differing", [&] {
      for (const std::string &name : summary.replicasDiffering)
        json.value(name);
    });
  });
}

} // namespace remat::driver
