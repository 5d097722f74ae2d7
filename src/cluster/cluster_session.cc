// ClusterSession (app/cluster.h): the few MPI collectives numprobe needs, over MPI_COMM_WORLD.
// Only the calling thread talks to MPI (the thread pools compute, never communicate).
#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <string>
#include <thread>
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
  // Sizes first (64-bit), then each process's text in turn, in pieces of at most 1 GiB: MPI
  // counts are int, and one gather of every process's facts would be capped at 2 GiB in all.
  constexpr uint64_t kPiece = uint64_t{1} << 30;
  constexpr int kTag = 18;
  const uint64_t size = text.size();
  std::vector<uint64_t> sizes(leader() ? static_cast<size_t>(processes_) : 0);
  MPI_Gather(&size, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  if (!leader()) {
    for (uint64_t at = 0; at < size; at += kPiece) {
      MPI_Send(text.data() + at, static_cast<int>(std::min(kPiece, size - at)), MPI_CHAR, 0, kTag,
               MPI_COMM_WORLD);
    }
    return out;
  }
  out.resize(sizes.size());
  out[0] = text;
  for (size_t p = 1; p < sizes.size(); ++p) {
    out[p].resize(sizes[p]);
    for (uint64_t at = 0; at < sizes[p]; at += kPiece) {
      MPI_Recv(out[p].data() + at, static_cast<int>(std::min(kPiece, sizes[p] - at)), MPI_CHAR,
               static_cast<int>(p), kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
  return out;
}

void ClusterSession::IdleUntilAll() const {
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Ibarrier(MPI_COMM_WORLD, &request);
  int done = 0;
  MPI_Test(&request, &done, MPI_STATUS_IGNORE);
  while (done == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
  }
}

std::vector<uint64_t> ClusterSession::SumAcross(const std::vector<uint64_t>& values) const {
  std::vector<uint64_t> out(values.size());
  MPI_Allreduce(values.data(), out.data(), static_cast<int>(values.size()), MPI_UINT64_T, MPI_SUM,
                MPI_COMM_WORLD);
  return out;
}

}  // namespace numprobe
