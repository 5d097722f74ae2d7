// RunSharedWork (shared_work.h).
#include "cluster/shared_work.h"

#include <utility>

#include "cluster/byte_shares.h"
#include "cluster/dump_bytes.h"

namespace numprobe::detail {

Result<SharedWork> RunSharedWork(const ClusterSession& session, size_t n,
                                 const std::function<uint64_t(size_t)>& bytes,
                                 const std::function<Result<std::string>(size_t)>& work) {
  std::vector<uint64_t> sizes(n, 0);
  for (size_t i = static_cast<size_t>(session.process()); i < n;
       i += static_cast<size_t>(session.processes())) {
    sizes[i] = bytes(i);
  }
  sizes = session.SumAcross(sizes);
  const std::vector<int> owner = ShareByBytes(sizes, session.processes());
  SharedWork out;
  out.bytes_per_process.assign(static_cast<size_t>(session.processes()), 0);
  for (size_t i = 0; i < n; ++i) out.bytes_per_process[static_cast<size_t>(owner[i])] += sizes[i];

  // This process's items in order: its first failure is the first of its share.
  std::vector<std::pair<size_t, std::string>> records;
  Status status;
  int64_t failed = 0;
  for (size_t i = 0; i < n; ++i) {
    if (owner[i] != session.process()) continue;
    auto record = work(i);
    if (!record) {
      status = record.error();
      failed = static_cast<int64_t>(i);
      break;
    }
    records.emplace_back(i, std::move(*record));
  }
  session.IdleUntilAll();  // processes done early wait asleep for the others
  NUMPROBE_RETURN_IF_ERROR(session.Agree(status, failed));

  std::string framed = FrameRecords(records);
  records.clear();
  auto gathered = session.GatherToLeader(framed);
  std::string().swap(framed);
  NUMPROBE_RETURN_IF_ERROR(session.Agree(gathered.ok() ? Status::Ok() : gathered.error(), 0));
  Status unframed;
  if (session.leader()) {
    out.records.resize(n);
    unframed = UnframeRecords(*gathered, &out.records);
  }
  NUMPROBE_RETURN_IF_ERROR(session.Agree(unframed, 0));
  return out;
}

}  // namespace numprobe::detail
