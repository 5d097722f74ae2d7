#include "ui/connection_gate.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

namespace numprobe::ui {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// The numeric address (and port) of a socket address.
void AddressOf(const sockaddr_storage& addr, std::string* ip, int* port) {
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto& a = reinterpret_cast<const sockaddr_in&>(addr);
    ::inet_ntop(AF_INET, &a.sin_addr, text, sizeof(text));
    *port = ntohs(a.sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto& a = reinterpret_cast<const sockaddr_in6&>(addr);
    ::inet_ntop(AF_INET6, &a.sin6_addr, text, sizeof(text));
    *port = ntohs(a.sin6_port);
  } else {
    *port = 0;
  }
  *ip = text;
}

void PeerOf(int fd, bool remote, std::string* ip, int* port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  const int rc = remote ? ::getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len)
                        : ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  if (rc != 0) {
    ip->clear();
    *port = 0;
    return;
  }
  AddressOf(addr, ip, port);
}

// Waits until `fd` is ready for `events`, at most `timeout` and never past `deadline`.
bool WaitReady(int fd, short events, milliseconds timeout, Clock::time_point deadline) {
  for (;;) {
    const auto left =
        std::min(timeout, std::chrono::duration_cast<milliseconds>(deadline - Clock::now()));
    if (left.count() <= 0) return false;
    pollfd p{fd, events, 0};
    const int rc = ::poll(&p, 1, static_cast<int>(left.count()));
    if (rc < 0 && errno == EINTR) continue;
    return rc > 0;
  }
}

// Where a request head ends ("\r\n\r\n", or "\n\n" which cpp-httplib also reads), or npos.
size_t HeadEnd(const std::string& bytes) {
  const size_t crlf = bytes.find("\r\n\r\n");
  const size_t lf = bytes.find("\n\n");
  return std::min(crlf, lf);
}

// The stream a worker hands to cpp-httplib: the bytes the poller already received first, then the
// socket, every read and write bounded by the per-operation timeout and the request's deadline.
class GateStream final : public httplib::Stream {
 public:
  GateStream(int fd, std::string buffered, milliseconds op_timeout, Clock::time_point deadline)
      : fd_(fd), buffered_(std::move(buffered)), op_timeout_(op_timeout), deadline_(deadline) {}

  bool is_readable() const override {
    return pos_ < buffered_.size() || WaitReady(fd_, POLLIN, op_timeout_, deadline_);
  }
  bool is_writable() const override { return WaitReady(fd_, POLLOUT, op_timeout_, deadline_); }

  ssize_t read(char* ptr, size_t size) override {
    if (pos_ < buffered_.size()) {
      const size_t n = std::min(size, buffered_.size() - pos_);
      std::memcpy(ptr, buffered_.data() + pos_, n);
      pos_ += n;
      return static_cast<ssize_t>(n);
    }
    if (!WaitReady(fd_, POLLIN, op_timeout_, deadline_)) return -1;
    for (;;) {
      const ssize_t n = ::recv(fd_, ptr, size, MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) continue;
      return n;
    }
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!WaitReady(fd_, POLLOUT, op_timeout_, deadline_)) return -1;
    for (;;) {
      const ssize_t n = ::send(fd_, ptr, size, MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      return n;
    }
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    PeerOf(fd_, true, &ip, &port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    PeerOf(fd_, false, &ip, &port);
  }
  socket_t socket() const override { return fd_; }

  // Bytes received past the request just served (a pipelined next request).
  std::string TakeUnread() { return buffered_.substr(std::min(pos_, buffered_.size())); }

 private:
  int fd_;
  std::string buffered_;
  size_t pos_ = 0;
  milliseconds op_timeout_;
  Clock::time_point deadline_;
};

// The accept loop's task queue: runs each task at once in the accepting thread. The only task
// cpp-httplib gives it is handing a new connection to process_and_close_socket, which the gate
// overrides to return immediately.
class InlineQueue final : public httplib::TaskQueue {
 public:
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override {}
};

}  // namespace

GatedServer::GatedServer(const GateLimits& limits)
    : limits_(limits),
      workers_(std::make_unique<httplib::ThreadPool>(std::max<size_t>(1, limits.workers))) {
  new_task_queue = [] { return new InlineQueue(); };
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  poller_ = std::thread([this] { PollLoop(); });
}

GatedServer::~GatedServer() { Shutdown(); }

void GatedServer::Shutdown() {
  {
    const std::lock_guard<std::mutex> lock(mu_);
    if (shut_down_) return;
    shut_down_ = true;
  }
  stopping_ = true;
  Wake();
  if (poller_.joinable()) poller_.join();
  workers_->shutdown();  // lets the running requests finish; their connections are then closed
  if (wake_fd_ >= 0) ::close(wake_fd_);
  wake_fd_ = -1;
}

bool GatedServer::process_and_close_socket(socket_t sock) {
  Connection c;
  c.fd = sock;
  int port = 0;
  PeerOf(sock, true, &c.peer, &port);
  const int on = 1;
  ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
  c.deadline = Clock::now() + limits_.head_timeout;
  Admit(std::move(c), true);
  return true;
}

void GatedServer::Admit(Connection c, bool fresh) {
  {
    const std::lock_guard<std::mutex> lock(mu_);
    if (!poller_done_ && !stopping_) {
      if (fresh) {
        ++open_per_client_[c.peer];
        c.order = next_order_++;
      }
      incoming_.push_back(std::move(c));
      Wake();
      return;
    }
    if (!fresh) {
      // Counted when it was admitted: uncount it as it closes.
      auto it = open_per_client_.find(c.peer);
      if (it != open_per_client_.end() && --it->second == 0) open_per_client_.erase(it);
    }
  }
  ::shutdown(c.fd, SHUT_RDWR);
  ::close(c.fd);
}

void GatedServer::Close(Connection& c) {
  if (c.fd < 0) return;
  ::shutdown(c.fd, SHUT_RDWR);
  ::close(c.fd);
  c.fd = -1;
  const std::lock_guard<std::mutex> lock(mu_);
  auto it = open_per_client_.find(c.peer);
  if (it != open_per_client_.end() && --it->second == 0) open_per_client_.erase(it);
}

void GatedServer::Wake() {
  if (wake_fd_ < 0) return;
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof(one));
}

void GatedServer::Dispatch(Connection c) {
  workers_->enqueue([this, c]() mutable { Serve(std::move(c)); });
}

void GatedServer::Serve(Connection c) {
  GateStream stream(c.fd, std::move(c.buffered), limits_.io_timeout,
                    Clock::now() + limits_.request_timeout);
  const bool last = stopping_ || c.served + 1 >= limits_.max_requests_per_connection;
  bool closed = false;
  const bool ok = process_request(stream, last, closed, nullptr);
  ++c.served;
  if (!ok || closed || last || stopping_) {
    Close(c);
    return;
  }
  c.buffered = stream.TakeUnread();
  c.deadline = Clock::now() + limits_.idle_timeout;
  Admit(std::move(c), false);
}

void GatedServer::PollLoop() {
  std::vector<Connection> waiting;
  std::vector<pollfd> fds;
  // Drops the waiting connection at `i` (swap with the last: order does not matter here).
  auto drop = [&](size_t i) {
    Close(waiting[i]);
    waiting[i] = std::move(waiting.back());
    waiting.pop_back();
  };
  auto take = [&](size_t i) {
    Connection c = std::move(waiting[i]);
    waiting[i] = std::move(waiting.back());
    waiting.pop_back();
    return c;
  };
  // Reads what the waiting connection at `i` has received, then dispatches it (a whole request
  // head arrived) or drops it (closed, or a head too large); true when it left `waiting`.
  auto settle = [&](size_t i) {
    Connection& c = waiting[i];
    char buf[4096];
    bool gone = false;
    while (c.buffered.size() < limits_.max_head_bytes) {
      const ssize_t n = ::recv(c.fd, buf, sizeof(buf), MSG_DONTWAIT);
      if (n > 0) {
        c.buffered.append(buf, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      gone = n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
      break;
    }
    if (HeadEnd(c.buffered) != std::string::npos) {
      Dispatch(take(i));
      return true;
    }
    if (gone) {
      drop(i);
      return true;
    }
    if (c.buffered.size() >= limits_.max_head_bytes) {
      static constexpr char kTooLarge[] =
          "HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n"
          "Content-Length: 0\r\n\r\n";
      [[maybe_unused]] const ssize_t n =
          ::send(c.fd, kTooLarge, sizeof(kTooLarge) - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
      drop(i);
      return true;
    }
    return false;
  };
  // The client's connections that are waiting for a first request: how many, and the oldest.
  auto unserved_of = [&](const std::string& peer) {
    size_t count = 0;
    size_t oldest = waiting.size();
    for (size_t i = 0; i < waiting.size(); ++i) {
      if (waiting[i].peer != peer || waiting[i].served != 0) continue;
      ++count;
      if (oldest == waiting.size() || waiting[i].order < waiting[oldest].order) oldest = i;
    }
    return std::pair{count, oldest};
  };
  for (;;) {
    std::deque<Connection> arrived;
    {
      const std::lock_guard<std::mutex> lock(mu_);
      if (stopping_) break;
      arrived.swap(incoming_);
    }
    for (Connection& c : arrived) {
      if (HeadEnd(c.buffered) != std::string::npos) {  // a pipelined request already here
        Dispatch(std::move(c));
        continue;
      }
      if (c.served == 0) {
        size_t open = 0;
        {
          const std::lock_guard<std::mutex> lock(mu_);
          open = open_per_client_[c.peer];
        }
        if (open > limits_.max_open_per_client) {
          Close(c);
          continue;
        }
        // A client holds at most max_per_client connections that have not sent a request yet:
        // its oldest such one (a browser's idle spare, or an attack) makes room for the new one.
        // Kept-alive connections that have been served are not touched. Before any is dropped,
        // the client's waiting connections are read: on a busy machine their requests may have
        // arrived since the last poll (50 clients connecting at once lost a request that way).
        if (unserved_of(c.peer).first >= limits_.max_per_client) {
          for (size_t i = waiting.size(); i-- > 0;) {
            if (waiting[i].peer == c.peer && waiting[i].served == 0) (void)settle(i);
          }
          const auto [unserved, oldest] = unserved_of(c.peer);
          if (unserved >= limits_.max_per_client) drop(oldest);
        }
      }
      if (waiting.size() >= limits_.max_waiting) {
        const auto oldest = std::min_element(
            waiting.begin(), waiting.end(),
            [](const Connection& a, const Connection& b) { return a.order < b.order; });
        drop(static_cast<size_t>(oldest - waiting.begin()));
      }
      waiting.push_back(std::move(c));
    }

    auto now = Clock::now();
    auto wait = milliseconds(1000);
    for (const Connection& c : waiting) {
      wait = std::min(wait, std::chrono::duration_cast<milliseconds>(c.deadline - now));
    }
    wait = std::max(wait, milliseconds(0));
    fds.assign(1, pollfd{wake_fd_, POLLIN, 0});
    for (const Connection& c : waiting) fds.push_back(pollfd{c.fd, POLLIN, 0});
    const int rc = ::poll(fds.data(), fds.size(), static_cast<int>(wait.count()));
    if (rc < 0 && errno != EINTR) break;
    if (rc > 0 && (fds[0].revents & POLLIN) != 0) {
      uint64_t count = 0;
      [[maybe_unused]] const ssize_t n = ::read(wake_fd_, &count, sizeof(count));
    }
    now = Clock::now();
    // Backwards, so that removing entry i (swapped with the last) leaves the unvisited ones and
    // their pollfd entries (index + 1) in place.
    for (size_t i = waiting.size(); i-- > 0;) {
      Connection& c = waiting[i];
      if (rc > 0 && fds[i + 1].revents != 0 && settle(i)) continue;
      if (now >= c.deadline) drop(i);  // no complete request in time
    }
  }
  // Stopping: nothing waiting is served.
  for (Connection& c : waiting) Close(c);
  std::deque<Connection> left;
  {
    const std::lock_guard<std::mutex> lock(mu_);
    poller_done_ = true;
    left.swap(incoming_);
  }
  for (Connection& c : left) Close(c);
}

}  // namespace numprobe::ui
