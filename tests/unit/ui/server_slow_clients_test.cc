// Slow and idle clients cannot stall `numprobe serve`: connections that send nothing, or a header
// line every few seconds, hold no worker; they are closed when their request head does not arrive
// in time, and one client's connections beyond its share make room for its newer ones. Every wait
// here has a deadline, so a server that stalls fails the test instead of hanging it.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ui/connection_gate.h"
#include "ui/http_server.h"
#include "ui/workspace.h"

namespace numprobe::ui {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;
using Clock = std::chrono::steady_clock;

const fs::path kFixtures = fs::path(NUMPROBE_FIXTURES_DIR) / "msprobe";

int Connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool SendAll(int fd, const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

// Reads until the server closes `fd`, at most until `deadline`; false when the deadline came first.
bool ReadToClose(int fd, Clock::time_point deadline, std::string* out) {
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return true;
    if (out != nullptr) out->append(buf, static_cast<size_t>(n));
  }
}

// GET `target` on a fresh connection: the HTTP status, or -1 when no whole answer came in `limit`.
int TimedGet(int port, const std::string& target, milliseconds limit) {
  const int fd = Connect(port);
  if (fd < 0) return -1;
  std::string response;
  const bool sent =
      SendAll(fd, "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                      "\r\nConnection: close\r\n\r\n");
  const bool answered = sent && ReadToClose(fd, Clock::now() + limit, &response);
  ::close(fd);
  int status = -1;
  if (!answered || std::sscanf(response.c_str(), "HTTP/1.%*d %d", &status) != 1) return -1;
  return status;
}

// The numbers of issue 17: 16 connections sending a header line every 3 s and 32 silent ones,
// with 8 workers (cpp-httplib alone gives each of them a worker for as long as it trickles).
TEST(SlowClientsTest, TricklingAndSilentConnectionsDoNotDelayARequest) {
  auto ws = LoadWorkspace(kFixtures / "dump_statistics_bf16" / "step0", {});
  ASSERT_TRUE(ws.ok()) << ws.error().message();
  ServeOptions options;
  options.port = 0;
  options.threads = 8;
  auto server = CreateServer(std::shared_ptr<const Workspace>(std::move(*ws)), options);
  ASSERT_TRUE(server.ok()) << server.error().message();
  const int port = (*server)->port();
  Status run_status;
  std::thread runner([&] { run_status = (*server)->Run(); });
  ASSERT_EQ(TimedGet(port, "/", seconds(10)), 200);

  std::vector<int> trickling;
  for (int i = 0; i < 16; ++i) {
    const int fd = Connect(port);
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(SendAll(fd, "GET / HTTP/1.1\r\n"));
    trickling.push_back(fd);
  }
  std::vector<int> silent;
  for (int i = 0; i < 32; ++i) {
    const int fd = Connect(port);
    ASSERT_GE(fd, 0);
    silent.push_back(fd);
  }
  std::atomic<bool> stop{false};
  std::thread trickler([&] {
    auto next = Clock::now() + seconds(3);
    while (!stop) {
      std::this_thread::sleep_for(milliseconds(50));
      if (Clock::now() < next) continue;
      for (int fd : trickling) SendAll(fd, "X-Slow: 1\r\n");
      next += seconds(3);
    }
  });
  std::this_thread::sleep_for(milliseconds(3500));  // each trickler has sent a second line

  // "Served" against "stalled": a stalled request never comes back while the attack lasts.
  EXPECT_EQ(TimedGet(port, "/", seconds(8)), 200) << "a normal request stalled behind slow clients";

  stop = true;
  trickler.join();
  for (int fd : trickling) ::close(fd);
  for (int fd : silent) ::close(fd);
  (*server)->Stop();
  runner.join();
  EXPECT_TRUE(run_status.ok()) << run_status.message();
}

class GateTest : public ::testing::Test {
 protected:
  void Start(const GateLimits& limits) {
    server_ = std::make_unique<GatedServer>(limits);
    server_->Get("/", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("ok", "text/plain");
    });
    port_ = server_->bind_to_any_port("127.0.0.1");
    ASSERT_GT(port_, 0);
    runner_ = std::thread([this] { server_->listen_after_bind(); });
    ASSERT_EQ(TimedGet(port_, "/", seconds(10)), 200);
  }
  void TearDown() override {
    if (!server_) return;
    while (!server_->is_running() && runner_.joinable()) {
      std::this_thread::sleep_for(milliseconds(1));
    }
    server_->stop();
    runner_.join();
    server_->Shutdown();
  }

  std::unique_ptr<GatedServer> server_;
  std::thread runner_;
  int port_ = 0;
};

TEST_F(GateTest, AConnectionWithoutARequestIsClosedAtItsDeadline) {
  GateLimits limits;
  limits.head_timeout = milliseconds(300);
  Start(limits);
  const int silent = Connect(port_);
  const int partial = Connect(port_);
  ASSERT_GE(silent, 0);
  ASSERT_GE(partial, 0);
  ASSERT_TRUE(SendAll(partial, "GET / HTTP/1.1\r\nHost: x\r\n"));
  EXPECT_TRUE(ReadToClose(silent, Clock::now() + seconds(5), nullptr)) << "silent one kept open";
  EXPECT_TRUE(ReadToClose(partial, Clock::now() + seconds(5), nullptr)) << "partial one kept open";
  ::close(silent);
  ::close(partial);
}

TEST_F(GateTest, AClientOverItsShareLosesItsOldestIdleConnection) {
  GateLimits limits;
  limits.max_per_client = 4;
  Start(limits);
  std::vector<int> idle;
  for (int i = 0; i < 4; ++i) idle.push_back(Connect(port_));
  std::this_thread::sleep_for(milliseconds(200));    // admitted in this order
  EXPECT_EQ(TimedGet(port_, "/", seconds(5)), 200);  // the fifth connection is served
  // ...and the oldest idle one was closed to make room; the newest is still open.
  EXPECT_TRUE(ReadToClose(idle.front(), Clock::now() + seconds(5), nullptr));
  pollfd p{idle.back(), POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 0), 0);
  for (int fd : idle) ::close(fd);
}

TEST_F(GateTest, KeptAliveAndPipelinedRequestsAreAllAnswered) {
  Start(GateLimits{});
  const int fd = Connect(port_);
  ASSERT_GE(fd, 0);
  const std::string one = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_TRUE(SendAll(fd, one + one + "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
  std::string response;
  ASSERT_TRUE(ReadToClose(fd, Clock::now() + seconds(10), &response));
  ::close(fd);
  size_t answers = 0;
  for (size_t at = response.find("HTTP/1.1 200"); at != std::string::npos;
       at = response.find("HTTP/1.1 200", at + 1)) {
    ++answers;
  }
  EXPECT_EQ(answers, 3u) << response;
}

}  // namespace
}  // namespace numprobe::ui
