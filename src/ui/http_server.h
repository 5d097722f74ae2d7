// The HTTP side of `numprobe serve` (cpp-httplib): routing, the request-path and Host checks,
// and security headers. Kept apart from server.h so that tests can serve a workspace they built
// in memory.
#ifndef NUMPROBE_UI_HTTP_SERVER_H_
#define NUMPROBE_UI_HTTP_SERVER_H_

#include <memory>
#include <string_view>

#include "numprobe/app/server.h"

#include "ui/workspace.h"

namespace numprobe::ui {

// Serves `workspace` (binds now; serves on Run()).
Result<std::unique_ptr<Server>> CreateServer(std::shared_ptr<const Workspace> workspace,
                                             const ServeOptions& options);

// Whether a raw request target (path and query, as received) stays inside the served tree: it
// must start with '/', and its path, percent-decoded up to three times, must hold no ".."
// segment, no backslash, no NUL and no "//". Query strings are not paths and are not checked.
bool IsSafeRequestTarget(std::string_view target);

// Whether the Host header names the address the server listens on (for a loopback server:
// 127.0.0.1, localhost or [::1] with its port), which defeats DNS rebinding.
bool IsAllowedHost(std::string_view host_header, std::string_view bound_host, int port);

}  // namespace numprobe::ui

#endif  // NUMPROBE_UI_HTTP_SERVER_H_
