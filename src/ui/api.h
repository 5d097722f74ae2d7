// The UI's JSON API over a Workspace, independent of HTTP: a request path and its query
// parameters in, a status and a JSON body out. The HTTP server routes /api/* here; the report
// writer calls the same functions to build the data it embeds. Every parameter is validated
// (numbers parsed fully, runs and rows bounds-checked, column names looked up); none names a
// file. Thread-safe: tensor details are cached behind a mutex.
#ifndef NUMPROBE_UI_API_H_
#define NUMPROBE_UI_API_H_

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "ui/workspace.h"

namespace numprobe::ui {

using Params = std::multimap<std::string, std::string>;

struct ApiResponse {
  int status = 200;
  std::string body;  // JSON
};

class Api {
 public:
  explicit Api(std::shared_ptr<const Workspace> workspace);

  // Routes `path` ("/api/rows", ...). Unknown paths: 404; bad parameters: 400; both with
  // {"error": "..."}.
  ApiResponse Handle(std::string_view path, const Params& params) const;

  const Workspace& workspace() const { return *workspace_; }

  // Pieces the report embeds.
  std::string InfoJson() const;
  std::string TreeJson(size_t run) const;  // the whole tree of a run, flat
  // The tensor detail of a row as /api/tensor returns it (status 200), or an error response.
  ApiResponse TensorJson(size_t run, uint32_t row, int64_t slice) const;

 private:
  ApiResponse Rows(const Params& params) const;
  ApiResponse Row(const Params& params) const;
  ApiResponse Tree(const Params& params) const;
  ApiResponse TreeSearch(const Params& params) const;
  ApiResponse Tensor(const Params& params) const;
  ApiResponse Trend(const Params& params) const;
  ApiResponse Heatmap(const Params& params) const;
  ApiResponse Scan() const;
  ApiResponse ScanHeadroom(const Params& params) const;
  ApiResponse Precheck() const;

  std::shared_ptr<const Workspace> workspace_;
  mutable std::mutex mutex_;
  mutable std::list<std::pair<std::string, std::shared_ptr<const std::string>>> tensor_cache_;
};

}  // namespace numprobe::ui

#endif  // NUMPROBE_UI_API_H_
