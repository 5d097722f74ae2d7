// ClusterSession (app/cluster.h): the few MPI collectives numprobe needs, over MPI_COMM_WORLD.
// Only the calling thread talks to MPI (the thread pools compute, never communicate).
#include <climits>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <mpi.h>

#include "numprobe/app/cluster.h"

namespace numprobe {

bool LaunchedUnderMpi() {
  // Open MPI's mpirun, MPICH/Hydra and srun (PMI-1/PMI-2), PMIx launchers (srun --mpi=pmix).
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

Result<std::unique_ptr<ClusterSession>> ClusterSession::Start() {
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    return Status::Internal("MPI_Init_thread failed");
  }
  int process = 0;
  int processes = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &process);
  MPI_Comm_size(MPI_COMM_WORLD, &processes);
  return std::unique_ptr<ClusterSession>(new ClusterSession(process, processes));
}

ClusterSession::~ClusterSession() { MPI_Finalize(); }

std::string ClusterSession::Broadcast(const std::string& text) const {
  uint64_t size = leader() ? text.size() : 0;
  MPI_Bcast(&size, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  std::string out = leader() ? text : std::string(size, '\0');
  // Texts broadcast here are short (a timestamp, an error message).
  MPI_Bcast(out.data(), static_cast<int>(size), MPI_CHAR, 0, MPI_COMM_WORLD);
  return out;
}

Status ClusterSession::Agree(const Status& local, int64_t key) const {
  // MINLOC over (failure key, process): the first failure in the caller's order, else "none".
  struct {
    int64_t key;
    int64_t process;
  } mine{local.ok() ? INT64_MAX : key, process_}, first{};
  MPI_Datatype pair = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(2, MPI_INT64_T, &pair);
  MPI_Type_commit(&pair);
  MPI_Op min_pair = MPI_OP_NULL;
  MPI_Op_create(
      [](void* in, void* inout, int* count, MPI_Datatype* /*type*/) {
        auto* a = static_cast<int64_t*>(in);
        auto* b = static_cast<int64_t*>(inout);
        for (int i = 0; i < *count; ++i, a += 2, b += 2) {
          if (a[0] < b[0] || (a[0] == b[0] && a[1] < b[1])) {
            b[0] = a[0];
            b[1] = a[1];
          }
        }
      },
      /*commute=*/1, &min_pair);
  MPI_Allreduce(&mine, &first, 1, pair, min_pair, MPI_COMM_WORLD);
  MPI_Op_free(&min_pair);
  MPI_Type_free(&pair);
  if (first.key == INT64_MAX) return Status::Ok();
  const int owner = static_cast<int>(first.process);
  int code = static_cast<int>(local.code());
  MPI_Bcast(&code, 1, MPI_INT, owner, MPI_COMM_WORLD);
  std::string message = process_ == owner ? local.message() : std::string();
  uint64_t size = message.size();
  MPI_Bcast(&size, 1, MPI_UINT64_T, owner, MPI_COMM_WORLD);
  message.resize(size);
  MPI_Bcast(message.data(), static_cast<int>(size), MPI_CHAR, owner, MPI_COMM_WORLD);
  switch (static_cast<ErrorCode>(code)) {
    case ErrorCode::kInvalidArgument:
      return Status::InvalidArgument(std::move(message));
    case ErrorCode::kNotFound:
      return Status::NotFound(std::move(message));
    case ErrorCode::kIoError:
      return Status::IoError(std::move(message));
    case ErrorCode::kCorrupt:
      return Status::Corrupt(std::move(message));
    case ErrorCode::kUnsupported:
      return Status::Unsupported(std::move(message));
    case ErrorCode::kOutOfRange:
      return Status::OutOfRange(std::move(message));
    case ErrorCode::kRejected:
      return Status::Rejected(std::move(message));
    case ErrorCode::kOk:
    case ErrorCode::kInternal:
      break;
  }
  return Status::Internal(std::move(message));
}

Result<std::vector<std::string>> ClusterSession::GatherToLeader(const std::string& text) const {
  // MPI counts are int: a process's facts over 2 GiB cannot be gathered in one message.
  const int size = text.size() > static_cast<size_t>(INT_MAX) ? -1 : static_cast<int>(text.size());
  std::vector<int> sizes(leader() ? static_cast<size_t>(processes_) : 0);
  MPI_Gather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  bool too_large = size < 0;
  std::vector<int> offsets(sizes.size());
  int64_t total = 0;
  for (size_t p = 0; p < sizes.size(); ++p) {
    offsets[p] = static_cast<int>(total);
    total += sizes[p];
    if (sizes[p] < 0 || total > INT_MAX) too_large = true;
  }
  int any_too_large = too_large ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &any_too_large, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any_too_large != 0) {
    return Status::OutOfRange(
        "the per-rank results of the processes exceed 2 GiB, more than one "
        "MPI gather carries");
  }
  std::string all(leader() ? static_cast<size_t>(total) : 0, '\0');
  MPI_Gatherv(text.data(), size, MPI_CHAR, all.data(), sizes.data(), offsets.data(), MPI_CHAR, 0,
              MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (size_t p = 0; p < sizes.size(); ++p) {
    out.push_back(all.substr(static_cast<size_t>(offsets[p]), static_cast<size_t>(sizes[p])));
  }
  return out;
}

std::vector<uint64_t> ClusterSession::SumAcross(const std::vector<uint64_t>& values) const {
  std::vector<uint64_t> out(values.size());
  MPI_Allreduce(values.data(), out.data(), static_cast<int>(values.size()), MPI_UINT64_T, MPI_SUM,
                MPI_COMM_WORLD);
  return out;
}

}  // namespace numprobe
