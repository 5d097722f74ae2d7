// `numprobe serve` over HTTP on loopback: it binds 127.0.0.1 by default, serves the embedded UI
// and the API, refuses request paths that leave the served tree (raw, percent-encoded, double
// encoded, backslashes, absolute-form), foreign Host headers and non-GET methods, and answers a
// bounded concurrent load (50 clients x 200 requests) without a single error.
#include <atomic>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "ui/http_server.h"
#include "ui/workspace.h"

namespace numprobe::ui {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(NUMPROBE_FIXTURES_DIR) / "msprobe";

// Sends `request` as is over a fresh connection and returns everything the server answered.
std::string RawRequest(int port, const std::string& request) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return {};
  timeval timeout{30, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  std::string response;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    size_t sent = 0;
    while (sent < request.size()) {
      const ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    char buf[4096];
    for (;;) {
      const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) break;
      response.append(buf, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  return response;
}

int StatusOf(const std::string& response) {
  int status = 0;
  if (std::sscanf(response.c_str(), "HTTP/1.%*d %d", &status) != 1) return -1;
  return status;
}

std::string Get(int port, const std::string& target, const std::string& host = "") {
  return RawRequest(port,
                    fmt::format("GET {} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n", target,
                                host.empty() ? fmt::format("127.0.0.1:{}", port) : host));
}

class ServerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    LoadOptions options;
    options.golden = kFixtures / "dump_tensor_base" / "step0";
    auto ws = LoadWorkspace(kFixtures / "dump_tensor_bf16" / "step0", options);
    ASSERT_TRUE(ws.ok()) << ws.error().message();
    workspace_ = std::shared_ptr<const Workspace>(std::move(*ws));
  }
  static void TearDownTestSuite() { workspace_.reset(); }

  void Start(ServeOptions options) {
    auto server = CreateServer(workspace_, options);
    ASSERT_TRUE(server.ok()) << server.error().message();
    server_ = std::move(*server);
    thread_ = std::thread([this] { run_status_ = server_->Run(); });
  }
  void TearDown() override {
    if (server_) {
      server_->Stop();
      thread_.join();
      EXPECT_TRUE(run_status_.ok()) << run_status_.message();
    }
  }
  int port() const { return server_->port(); }

  static std::shared_ptr<const Workspace> workspace_;
  std::unique_ptr<Server> server_;
  std::thread thread_;
  Status run_status_;
};
std::shared_ptr<const Workspace> ServerTest::workspace_;

// Local addresses (hex "0100007F:1F90") of the sockets listening on `port`, from /proc/net/tcp.
std::vector<std::string> ListeningAddresses(int port) {
  std::vector<std::string> out;
  std::ifstream tcp("/proc/net/tcp");
  std::string line;
  std::getline(tcp, line);  // header
  const std::string suffix = fmt::format(":{:04X}", port);
  while (std::getline(tcp, line)) {
    char local[64] = {};
    char remote[64] = {};
    char state[8] = {};
    if (std::sscanf(line.c_str(), " %*d: %63s %63s %7s", local, remote, state) != 3) continue;
    const std::string l = local;
    if (std::string(state) == "0A" && l.size() > suffix.size() &&
        l.compare(l.size() - suffix.size(), suffix.size(), suffix) == 0) {
      out.push_back(l.substr(0, l.size() - suffix.size()));
    }
  }
  return out;
}

TEST_F(ServerTest, BindsLoopbackByDefault) {
  ServeOptions options;
  EXPECT_EQ(options.host, "127.0.0.1");
  options.port = 0;  // the only change from the defaults: any free port
  Start(options);
  EXPECT_EQ(server_->host(), "127.0.0.1");
  EXPECT_EQ(server_->url(), fmt::format("http://127.0.0.1:{}/", port()));
  EXPECT_EQ(ListeningAddresses(port()), std::vector<std::string>{"0100007F"});
}

TEST_F(ServerTest, ServesTheEmbeddedUiAndTheApi) {
  Start({.host = "127.0.0.1", .port = 0});
  const std::string index = Get(port(), "/");
  EXPECT_EQ(StatusOf(index), 200);
  EXPECT_NE(index.find("<div id=\"app\"></div>"), std::string::npos);
  EXPECT_NE(index.find("Content-Security-Policy"), std::string::npos);
  const std::string js = Get(port(), "/assets/app.js");
  EXPECT_EQ(StatusOf(js), 200);
  EXPECT_NE(js.find("text/javascript"), std::string::npos);
  const std::string info = Get(port(), "/api/info");
  EXPECT_EQ(StatusOf(info), 200);
  EXPECT_NE(info.find("\"divergence_source\":\"analysis\""), std::string::npos);
  EXPECT_EQ(StatusOf(Get(port(), "/api/rows?run=0&limit=5&sort=NPU%20max&desc=1")), 200);
  EXPECT_EQ(StatusOf(Get(port(), "/api/rows?run=7")), 400);
  EXPECT_EQ(StatusOf(Get(port(), "/no/such/asset.js")), 404);
}

TEST_F(ServerTest, RefusesPathsOutsideTheServedTree) {
  Start({.host = "127.0.0.1", .port = 0});
  const std::vector<std::string> traversal = {
      "/../etc/passwd",
      "/assets/../../etc/passwd",
      "/assets/./app.js",
      "/%2e%2e/%2e%2e/etc/passwd",
      "/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd",
      "/..%2f..%2fetc%2fpasswd",
      "/%252e%252e/%252e%252e/etc/passwd",
      "/%25252e%25252e/etc/passwd",
      "/assets/..%5c..%5cetc%5cpasswd",
      "/assets\\..\\..\\etc\\passwd",
      "//etc/passwd",
      "/api/..%2f..%2fetc/passwd",
      "/%00/etc/passwd",
      "http://127.0.0.1/../etc/passwd",
      "../etc/passwd",
  };
  for (const std::string& target : traversal) {
    const std::string r = Get(port(), target);
    EXPECT_EQ(StatusOf(r), 400) << target << "\n" << r.substr(0, 200);
    EXPECT_EQ(r.find("root:"), std::string::npos) << target;
  }
  // Absolute file paths are just unknown URLs: nothing is read from disk.
  for (const std::string target : {"/etc/passwd", "/proc/self/environ", "/api/../../etc/passwd"}) {
    const std::string r = Get(port(), target);
    EXPECT_TRUE(StatusOf(r) == 404 || StatusOf(r) == 400) << target;
    EXPECT_EQ(r.find("root:"), std::string::npos) << target;
  }
  // A query string is not a path (a pattern may contain dots); it is still only a filter.
  EXPECT_EQ(StatusOf(Get(port(), "/api/rows?run=0&q=..%2F..%2Fetc%2Fpasswd")), 200);
}

TEST_F(ServerTest, RefusesForeignHostsAndWrites) {
  Start({.host = "127.0.0.1", .port = 0});
  EXPECT_EQ(StatusOf(Get(port(), "/api/info", fmt::format("evil.example:{}", port()))), 403);
  EXPECT_EQ(StatusOf(Get(port(), "/api/info", "127.0.0.1:1")), 403);
  EXPECT_EQ(StatusOf(Get(port(), "/api/info", fmt::format("localhost:{}", port()))), 200);
  EXPECT_EQ(StatusOf(RawRequest(port(), "GET /api/info HTTP/1.0\r\n\r\n")), 403);
  for (const char* method : {"POST", "PUT", "DELETE", "PATCH"}) {
    const std::string r = RawRequest(
        port(), fmt::format("{} /api/info HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: 2\r\n"
                            "Connection: close\r\n\r\n{{}}",
                            method, port()));
    EXPECT_EQ(StatusOf(r), 405) << method;
  }
  EXPECT_TRUE(IsAllowedHost("[::1]:8765", "127.0.0.1", 8765));
  EXPECT_FALSE(IsAllowedHost("127.0.0.1.evil.example:8765", "127.0.0.1", 8765));
  EXPECT_FALSE(IsAllowedHost("", "127.0.0.1", 8765));
  EXPECT_TRUE(IsAllowedHost("10.1.2.3:80", "10.1.2.3", 80));
  EXPECT_FALSE(IsAllowedHost("evil.example:80", "10.1.2.3", 80));
}

TEST_F(ServerTest, AnswersFiftyClientsTimesTwoHundredRequests) {
  Start({.host = "127.0.0.1", .port = 0});
  constexpr int kClients = 50;
  constexpr int kRequests = 200;
  const std::vector<std::string> paths = {
      "/api/info",
      "/api/rows?run=0&offset=0&limit=50",
      "/api/rows?run=0&offset=20&limit=20&sort=NPU%20max&desc=1",
      "/api/rows?run=0&result=error&q=linear",
      "/api/tree?run=0&node=Module.conv1.Conv2d.forward.0",
      "/api/tree/search?run=0&q=relu",
      "/api/row?run=0&row=10",
      "/api/tensor?run=0&row=10",
      "/",
  };
  std::atomic<int> ok{0};
  std::atomic<int> failed{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      httplib::Client client("127.0.0.1", port());
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      client.set_read_timeout(60, 0);
      client.set_connection_timeout(60, 0);
      for (int r = 0; r < kRequests; ++r) {
        const std::string& path = paths[static_cast<size_t>(c + r) % paths.size()];
        auto res = client.Get(path.c_str());
        const bool good = res && res->status == 200 && !res->body.empty() &&
                          (path == "/" || res->body.front() == '{');
        (good ? ok : failed)++;
      }
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(ok.load(), kClients * kRequests);
}

TEST(RequestTargetTest, SafeTargets) {
  EXPECT_TRUE(IsSafeRequestTarget("/"));
  EXPECT_TRUE(IsSafeRequestTarget("/assets/app.js"));
  EXPECT_TRUE(IsSafeRequestTarget("/api/rows?run=0&q=../x"));
  EXPECT_TRUE(IsSafeRequestTarget("/api/tree?node=Module.a..b"));
  EXPECT_TRUE(IsSafeRequestTarget("/a..b/c"));
  EXPECT_FALSE(IsSafeRequestTarget("/a/../b"));
  EXPECT_FALSE(IsSafeRequestTarget("/a/%2e%2e/b"));
  EXPECT_FALSE(IsSafeRequestTarget("/a/%2525252e%2525252e/b"));  // still encoded after 3 rounds
  EXPECT_FALSE(IsSafeRequestTarget(""));
  EXPECT_FALSE(IsSafeRequestTarget("*"));
}

}  // namespace
}  // namespace numprobe::ui
