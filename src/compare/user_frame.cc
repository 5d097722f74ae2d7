#include "compare/user_frame.h"

#include <algorithm>

namespace numprobe::detail {
namespace {

// The file path of a frame: after "File " up to ", line ". The whole text when the frame has
// another form.
std::string_view FramePath(std::string_view frame) {
  constexpr std::string_view kFile = "File ";
  const size_t start = frame.find(kFile);
  if (start == std::string_view::npos) return frame;
  const size_t from = start + kFile.size();
  const size_t end = frame.find(", line ", from);
  return frame.substr(from, end == std::string_view::npos ? std::string_view::npos : end - from);
}

}  // namespace

bool IsLibraryFrame(std::string_view frame) {
  std::string path(FramePath(frame));
  std::replace(path.begin(), path.end(), '\\', '/');  // Windows paths
  // Installed packages and the interpreter's own library (contextlib, functools, ...); the
  // frameworks and numprobe's capture package wherever they are imported from (a source tree);
  // code Python made up ("<string>", "<frozen ...>").
  static constexpr std::string_view kLibrary[] = {
      "/site-packages/", "/dist-packages/", "/lib/python3", "/torch/",
      "/mindspore/",     "/torch_npu/",     "/msprobe/",    "/numprobe/pytorch/",
      "/numprobe/_",     "<frozen ",        "<string>"};
  return std::any_of(std::begin(kLibrary), std::end(kLibrary), [&](std::string_view marker) {
    return path.find(marker) != std::string::npos;
  });
}

std::string UserFrame(const std::vector<std::string>& stack) {
  if (stack.empty()) return "";
  const auto user = std::find_if(stack.begin(), stack.end(),
                                 [](const std::string& f) { return !IsLibraryFrame(f); });
  std::string one = user != stack.end() ? *user : stack.front();
  std::replace(one.begin(), one.end(), '\n', ' ');
  return one;
}

std::string ShortFrame(std::string_view frame) {
  const std::string_view path = FramePath(frame);
  if (path.size() == frame.size()) return std::string(frame);
  const size_t line_at = frame.find(", line ");
  std::string_view rest = frame.substr(line_at + 7);
  rest = rest.substr(0, rest.find(','));
  const size_t slash = path.find_last_of("/\\");
  const std::string_view file = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return std::string(file) + ":" + std::string(rest);
}

}  // namespace numprobe::detail
