#include "ui/http_server.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include <fmt/format.h>
#include <httplib.h>

#include "ui/api.h"
#include "ui/assets.h"
#include "ui/connection_gate.h"

namespace numprobe::ui {

namespace {

// The UI loads its script and style from the server itself; ECharts paints on canvas and sets
// inline styles.
constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' "
    "data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string PercentDecode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      const int hi = HexValue(s[i + 1]);
      const int lo = HexValue(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

bool PathLooksSafe(std::string_view path) {
  if (path.empty() || path.front() != '/') return false;
  if (path.find('\\') != std::string_view::npos) return false;
  if (path.find('\0') != std::string_view::npos) return false;
  if (path.find("//") != std::string_view::npos) return false;
  size_t start = 1;
  while (start <= path.size()) {
    const size_t slash = std::min(path.find('/', start), path.size());
    const std::string_view segment = path.substr(start, slash - start);
    if (segment == ".." || segment == ".") return false;
    start = slash + 1;
  }
  return true;
}

std::string_view StripPort(std::string_view host) {
  if (!host.empty() && host.front() == '[') {
    const size_t close = host.find(']');
    return close == std::string_view::npos ? host : host.substr(0, close + 1);
  }
  const size_t colon = host.rfind(':');
  return colon == std::string_view::npos ? host : host.substr(0, colon);
}

bool IsLoopbackName(std::string_view h) {
  return h == "127.0.0.1" || h == "localhost" || h == "[::1]" || h == "::1";
}

class HttpServer final : public Server {
 public:
  HttpServer(std::shared_ptr<const Workspace> workspace, const ServeOptions& options)
      : api_(std::move(workspace)), host_(options.host), http_(LimitsFor(options)) {
    http_.set_keep_alive_max_count(20);
    // Headers and body go out in separate writes; without TCP_NODELAY, Nagle's algorithm holds
    // the body until the client's delayed ACK (40 ms per request).
    http_.set_tcp_nodelay(true);
    http_.set_payload_max_length(size_t{64} * 1024);
    http_.set_pre_routing_handler(
        [this](const httplib::Request& req, httplib::Response& res) { return PreRoute(req, res); });
    http_.Get(R"(/api/.*)", [this](const httplib::Request& req, httplib::Response& res) {
      const ApiResponse r = api_.Handle(req.path, req.params);
      res.status = r.status;
      res.set_header("Cache-Control", "no-store");
      res.set_content(r.body, "application/json");
    });
    http_.Get(R"(/.*)", [](const httplib::Request& req, httplib::Response& res) {
      const auto asset = FindAsset(req.path);
      if (!asset) {
        res.status = 404;
        res.set_content(R"({"error":"not found"})", "application/json");
        return;
      }
      res.set_header("Cache-Control", "no-cache");
      res.set_content(asset->bytes.data(), asset->bytes.size(), std::string(asset->mime).c_str());
    });
    http_.set_error_handler([](const httplib::Request&, httplib::Response& res) {
      if (res.body.empty()) {
        res.set_content(fmt::format(R"({{"error":"HTTP {}"}})", res.status), "application/json");
      }
    });
    http_.set_exception_handler(
        [](const httplib::Request&, httplib::Response& res, const std::exception_ptr&) {
          res.status = 500;
          res.set_content(R"({"error":"internal error"})", "application/json");
        });
  }

  Status Bind(int port) {
    if (port < 0 || port > 65535) return Status::InvalidArgument("--port must be 0..65535");
    if (port == 0) {
      port_ = http_.bind_to_any_port(host_);
      if (port_ < 0) return Status::IoError(fmt::format("cannot listen on {}", host_));
    } else {
      if (!http_.bind_to_port(host_, port)) {
        return Status::IoError(fmt::format(
            "cannot listen on {}:{} (in use? try --port 0 for any free port)", host_, port));
      }
      port_ = port;
    }
    return Status::Ok();
  }

  int port() const override { return port_; }
  const std::string& host() const override { return host_; }
  std::string url() const override {
    const bool v6 = host_.find(':') != std::string::npos;
    return fmt::format("http://{}{}{}:{}/", v6 ? "[" : "", host_, v6 ? "]" : "", port_);
  }
  // httplib's stop() does nothing until listen has begun, so a Stop() that races a starting Run()
  // would leave Run() listening forever: Stop() marks the request (a Run() that has not begun
  // returns at once) and waits for a begun Run() to be listening before stopping it.
  Status Run() override {
    run_entered_ = true;
    if (stop_requested_) {
      run_finished_ = true;
      return Status::Ok();
    }
    const bool listened = http_.listen_after_bind();
    http_.Shutdown();
    run_finished_ = true;
    if (!listened) return Status::IoError("the server stopped listening");
    return Status::Ok();
  }
  void Stop() override {
    stop_requested_ = true;
    while (run_entered_ && !run_finished_ && !http_.is_running()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    http_.stop();
  }
  std::string Summary() const override {
    std::string out;
    for (const auto& run : api_.workspace().runs) {
      const ResultStore& s = *run->store;
      out += fmt::format("{}: {}{}, {} rows: {} pass, {} warning, {} error, {} unmatched\n",
                         run->label, run->mode, run->mode == "dump" ? "" : " mode", s.row_count(),
                         s.LevelCount(Verdict::kPass), s.LevelCount(Verdict::kWarning),
                         s.LevelCount(Verdict::kError), s.LevelCount(Verdict::kUnmatched));
    }
    if (api_.workspace().scan) out += fmt::format("scan: {}\n", api_.workspace().scan->file);
    for (const std::string& w : api_.workspace().warnings) out += "warning: " + w + "\n";
    return out;
  }

 private:
  httplib::Server::HandlerResponse PreRoute(const httplib::Request& req, httplib::Response& res) {
    SecurityHeaders(res);
    if (req.method != "GET" && req.method != "HEAD") {
      res.status = 405;
      res.set_header("Allow", "GET, HEAD");
      res.set_content(R"({"error":"read-only server: GET only"})", "application/json");
      return httplib::Server::HandlerResponse::Handled;
    }
    const std::string target = req.target.empty() ? req.path : req.target;
    if (!IsSafeRequestTarget(target) || !PathLooksSafe(req.path)) {
      res.status = 400;
      res.set_content(R"({"error":"request path leaves the served tree"})", "application/json");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (!IsAllowedHost(req.get_header_value("Host"), host_, port_)) {
      res.status = 403;
      res.set_content(R"({"error":"unexpected Host header"})", "application/json");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  }

  static void SecurityHeaders(httplib::Response& res) {
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("X-Frame-Options", "DENY");
    res.set_header("Referrer-Policy", "no-referrer");
    res.set_header("Content-Security-Policy", kContentSecurityPolicy);
    res.set_header("Cross-Origin-Resource-Policy", "same-origin");
  }

  // Workers: --threads, by default max(8, 2 x cores); the other limits are GateLimits' defaults.
  static GateLimits LimitsFor(const ServeOptions& options) {
    const unsigned hw = std::max(1U, std::thread::hardware_concurrency());
    GateLimits limits;
    limits.workers = options.threads > 0 ? static_cast<size_t>(options.threads)
                                         : std::max<size_t>(8, size_t{2} * hw);
    return limits;
  }

  Api api_;
  std::string host_;
  int port_ = 0;
  std::atomic<bool> stop_requested_{false};
  std::atomic<bool> run_entered_{false};
  std::atomic<bool> run_finished_{false};
  GatedServer http_;
};

}  // namespace

bool IsSafeRequestTarget(std::string_view target) {
  if (target.empty() || target.front() != '/') return false;
  std::string path(target.substr(0, target.find('?')));
  for (int round = 0; round < 4; ++round) {
    if (!PathLooksSafe(path)) return false;
    std::string decoded = PercentDecode(path);
    if (decoded == path) return true;
    path = std::move(decoded);
  }
  return false;  // still encoded after three decodings: refuse rather than guess
}

bool IsAllowedHost(std::string_view host_header, std::string_view bound_host, int port) {
  if (host_header.empty()) return false;
  const std::string_view name = StripPort(host_header);
  const std::string_view rest = host_header.substr(name.size());
  const std::string expected_port = fmt::format(":{}", port);
  if (!rest.empty() && rest != expected_port) return false;
  const bool loopback = IsLoopbackName(bound_host);
  if (loopback) return IsLoopbackName(name);
  // Bound to a named address: that address, or any name when bound to all interfaces (the user
  // chose to expose the server).
  if (bound_host == "0.0.0.0" || bound_host == "::") return true;
  return name == bound_host || (name.size() > 2 && name.substr(1, name.size() - 2) == bound_host);
}

Result<std::unique_ptr<Server>> CreateServer(std::shared_ptr<const Workspace> workspace,
                                             const ServeOptions& options) {
  auto server = std::make_unique<HttpServer>(std::move(workspace), options);
  NUMPROBE_RETURN_IF_ERROR(server->Bind(options.port));
  return std::unique_ptr<Server>(std::move(server));
}

}  // namespace numprobe::ui

namespace numprobe {

Result<std::unique_ptr<Server>> Server::Create(const std::filesystem::path& path,
                                               const ServeOptions& options) {
  ui::LoadOptions load;
  load.golden = options.golden;
  NUMPROBE_ASSIGN_OR_RETURN(auto workspace, ui::LoadWorkspace(path, load));
  return ui::CreateServer(std::shared_ptr<const ui::Workspace>(std::move(workspace)), options);
}

}  // namespace numprobe
