// The web UI's built files (web/dist), embedded in the binary by cmake/embed_assets.cmake: looked
// up by URL path ("/index.html", "/assets/app.js"), with their MIME types.
#ifndef NUMPROBE_UI_ASSETS_H_
#define NUMPROBE_UI_ASSETS_H_

#include <optional>
#include <string_view>

namespace numprobe::ui {

struct Asset {
  std::string_view path;
  std::string_view mime;
  std::string_view bytes;
};

// The asset at `path`; "/" means "/index.html". nullopt for anything else.
std::optional<Asset> FindAsset(std::string_view path);

}  // namespace numprobe::ui

#endif  // NUMPROBE_UI_ASSETS_H_
