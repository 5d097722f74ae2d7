#include "ui/assets.h"

#include "numprobe_web_assets.h"  // generated: kWebAssets[] {path, data, size}

namespace numprobe::ui {

namespace {

std::string_view MimeOf(std::string_view path) {
  const auto ends = [path](std::string_view ext) { return path.ends_with(ext); };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".js")) return "text/javascript; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".svg")) return "image/svg+xml";
  if (ends(".png")) return "image/png";
  if (ends(".json")) return "application/json";
  return "application/octet-stream";
}

}  // namespace

std::optional<Asset> FindAsset(std::string_view path) {
  if (path == "/") path = "/index.html";
  for (const auto& a : kWebAssets) {
    if (path == a.path) {
      return Asset{a.path, MimeOf(a.path),
                   std::string_view(reinterpret_cast<const char*>(a.data), a.size)};
    }
  }
  return std::nullopt;
}

}  // namespace numprobe::ui
