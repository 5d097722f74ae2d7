// numprobe serve PATH [GOLDEN] [--golden GOLDEN] [--host H] [--port N]: the web UI over a compare
// output folder, a scan output, a dump tree, or two dump trees compared on the fly. Runs until
// Ctrl-C (SIGINT) or SIGTERM; signals are taken by a dedicated thread (sigwait), so the server is
// stopped from ordinary code, not from a signal handler.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include <pthread.h>
#include <unistd.h>

#include "cli.h"

#if NUMPROBE_WITH_WEBUI
#include "numprobe/app/server.h"
#endif

namespace numprobe::cli {
namespace {

struct ServeArgs {
  std::string path;
  std::string second;  // a second positional path: the golden dump tree
  std::string golden;
  std::string host = "127.0.0.1";
  int port = 8765;
  int threads = 0;
};

#if NUMPROBE_WITH_WEBUI
bool IsLoopback(const std::string& host) {
  return host == "127.0.0.1" || host == "localhost" || host == "::1";
}

int RunServe(const ServeArgs& args) {
  if (!args.second.empty() && !args.golden.empty()) {
    return ReportError(Status::InvalidArgument("give the golden dump once: GOLDEN or --golden"));
  }
  if (args.threads < 0) return ReportError(Status::InvalidArgument("--threads must be >= 0"));
  ServeOptions options;
  options.host = args.host;
  options.port = args.port;
  options.threads = args.threads;
  options.golden = args.second.empty() ? args.golden : args.second;
  // Block the stop signals before any thread starts, so every thread inherits the mask and only
  // the waiter below receives them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  // The waiter runs from the start: a signal while the dump is still loading ends the process at
  // once (nothing is written, so nothing is left half done); once serving, it stops the server.
  std::atomic<Server*> serving{nullptr};
  std::atomic<bool> load_failed{false};
  std::thread waiter([&serving, &load_failed, stop_signals] {
    int signal = 0;
    sigwait(&stop_signals, &signal);
    if (load_failed) return;
    Server* s = serving.load();
    if (s == nullptr) {
      std::fputs("numprobe: interrupted while loading\n", stderr);
      std::_Exit(128 + signal);
    }
    s->Stop();
  });
  auto server = Server::Create(args.path, options);
  if (!server) {
    load_failed = true;
    pthread_kill(waiter.native_handle(), SIGTERM);  // nothing to serve: release the waiter
    waiter.join();
    return ReportError(server.error());
  }
  std::fputs((*server)->Summary().c_str(), stdout);
  if (!IsLoopback((*server)->host())) {
    ReportWarning("listening beyond this machine (--host " + (*server)->host() +
                  "): anyone who can reach it can read these results");
  }
  std::printf("numprobe: serving %s (Ctrl-C to stop)\n", (*server)->url().c_str());
  std::fflush(stdout);
  serving = server->get();
  const Status status = (*server)->Run();
  // Wake the waiter if the server ended on its own.
  if (!status.ok()) kill(getpid(), SIGTERM);
  waiter.join();
  if (!status.ok()) return ReportError(status);
  std::printf("numprobe: stopped\n");
  return kExitOk;
}
#else
int RunServe(const ServeArgs&) {
  return ReportError(Status::InvalidArgument(
      "this numprobe was built without the web UI (configure with -DNUMPROBE_WITH_WEBUI=ON)"));
}
#endif

}  // namespace

void SetupServe(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* sub =
      app.add_subcommand("serve", "Browse compare results, scan outputs or dumps in a web browser");
  sub->footer(
      "Views: the overview, the model tree coloured by divergence, the compare table, tensor "
      "histograms, trends, the scan.");
  sub->add_option("PATH", args->path,
                  "A compare output folder (compare_result_*.json), a scan output, a dump tree, "
                  "or the target dump tree when a golden one is given")
      ->required();
  sub->add_option("GOLDEN", args->second, "A golden dump tree: compare PATH against it on the fly");
  sub->add_option("--golden,-g", args->golden, "The same as GOLDEN");
  sub->add_option("--host", args->host,
                  "Address to listen on (default 127.0.0.1: this machine only)");
  sub->add_option("--port", args->port, "Port (default 8765; 0 picks a free port)");
  sub->add_option("--threads", args->threads, "Worker threads (default max(8, 2 x cores))");
  sub->callback([args, exit_code] { *exit_code = RunServe(*args); });
}

}  // namespace numprobe::cli
