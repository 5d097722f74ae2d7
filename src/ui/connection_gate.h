// Connection handling for `numprobe serve` that slow or idle clients cannot stall. cpp-httplib
// gives each accepted connection a worker thread for its whole life, so a few clients that open
// connections and send nothing, or a header line every few seconds, hold every worker and the
// server stops answering. GatedServer keeps cpp-httplib's request parsing, routing and responses
// (process_request) but owns the connections: one thread polls every connection that has no
// complete request head yet, and a worker is given a connection only when a whole head has
// arrived. A head must arrive within a deadline, a client (peer address) holds at most a fixed
// number of connections that have not sent a request (its oldest such one makes room for a new
// one) and a larger fixed number in all, and a worker's reads and writes have deadlines too.
// Keep-alive connections go back to the poller between requests.
#ifndef NUMPROBE_UI_CONNECTION_GATE_H_
#define NUMPROBE_UI_CONNECTION_GATE_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include <httplib.h>

namespace numprobe::ui {

struct GateLimits {
  size_t workers = 8;
  std::chrono::milliseconds head_timeout{10000};     // a new connection's first request head
  std::chrono::milliseconds idle_timeout{5000};      // a kept-alive connection's next request
  std::chrono::milliseconds io_timeout{5000};        // a worker's single read or write
  std::chrono::milliseconds request_timeout{60000};  // a worker's whole request and response
  size_t max_per_client = 32;        // connections of one peer address without a request yet
  size_t max_open_per_client = 256;  // all open connections of one peer address
  size_t max_waiting = 256;          // connections without a complete head, all clients together
  size_t max_head_bytes = 16384;
  size_t max_requests_per_connection = 100;
};

class GatedServer : public httplib::Server {
 public:
  explicit GatedServer(const GateLimits& limits);
  ~GatedServer() override;
  GatedServer(const GatedServer&) = delete;
  GatedServer& operator=(const GatedServer&) = delete;

  // Closes every connection and joins the threads; call after listen_after_bind() returned.
  // Idempotent.
  void Shutdown();

 private:
  using Clock = std::chrono::steady_clock;
  struct Connection {
    int fd = -1;
    std::string peer;      // address without port: the per-client key
    std::string buffered;  // bytes received and not yet parsed
    Clock::time_point deadline;
    uint64_t order = 0;  // admission order: the oldest is evicted first
    size_t served = 0;
  };

  // cpp-httplib's accept loop calls this for each new connection, in its own thread (the task
  // queue runs tasks inline): the connection is handed to the poller and the loop goes on.
  bool process_and_close_socket(socket_t sock) override;

  void Admit(Connection c, bool fresh);
  void PollLoop();
  void Dispatch(Connection c);
  void Serve(Connection c);
  void Close(Connection& c);
  void Wake();

  GateLimits limits_;
  std::unique_ptr<httplib::ThreadPool> workers_;
  int wake_fd_ = -1;
  std::thread poller_;
  std::atomic<bool> stopping_{false};

  mutable std::mutex mu_;            // guards the members below
  std::deque<Connection> incoming_;  // admitted, not yet seen by the poller
  std::unordered_map<std::string, size_t> open_per_client_;
  bool poller_done_ = false;
  bool shut_down_ = false;
  uint64_t next_order_ = 0;
};

}  // namespace numprobe::ui

#endif  // NUMPROBE_UI_CONNECTION_GATE_H_
