// `numprobe serve`: an HTTP server for the web UI over compare results, scan outputs and dump
// trees. It binds 127.0.0.1 unless told otherwise, answers GET only, serves the front end from
// memory (embedded in the binary at build time) and a JSON API over what it loaded; no request
// names a file, and request paths that try to leave the served tree ("..", encoded or not,
// backslashes, NUL) are refused. Requests naming another host than the one it listens on are
// refused too (DNS rebinding). A Server owns the loaded data; Stop() may be called from any
// thread.
#ifndef NUMPROBE_APP_SERVER_H_
#define NUMPROBE_APP_SERVER_H_

#include <filesystem>
#include <memory>
#include <string>

#include "numprobe/result.h"

namespace numprobe {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8765;               // 0: any free port
  std::filesystem::path golden;  // compare the served dump against this one on the fly
  int threads = 0;               // worker threads; 0: max(8, 2 x hardware threads)
};

class Server {
 public:
  // Loads `path` (a compare output folder or result file, a scan output, a dump tree; with
  // options.golden, a target dump tree) and binds the socket. kNotFound / kCorrupt from loading;
  // kIoError when the address cannot be bound; kInvalidArgument for a bad port.
  static Result<std::unique_ptr<Server>> Create(const std::filesystem::path& path,
                                                const ServeOptions& options);
  virtual ~Server() = default;

  virtual int port() const = 0;
  virtual const std::string& host() const = 0;
  // "http://127.0.0.1:8765/"
  virtual std::string url() const = 0;
  // Serves until Stop(). kIoError if listening fails.
  virtual Status Run() = 0;
  virtual void Stop() = 0;
  // One line per loaded run ("step0/rank0: tensor mode, 66 rows, 18 error"), for the console.
  virtual std::string Summary() const = 0;
};

}  // namespace numprobe

#endif  // NUMPROBE_APP_SERVER_H_
