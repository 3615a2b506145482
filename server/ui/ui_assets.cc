#include "server/ui/ui_assets.h"

namespace tablestone::ui {

const EmbeddedFile* FindEmbeddedFile(std::string_view name) {
  for (size_t i = 0; i < kEmbeddedFileCount; ++i) {
    if (kEmbeddedFiles[i].name == name) return &kEmbeddedFiles[i];
  }
  return nullptr;
}

std::string_view ContentTypeOf(std::string_view name) {
  const size_t dot = name.rfind('.');
  const std::string_view ext = dot == std::string_view::npos ? std::string_view() : name.substr(dot + 1);
  if (ext == "html") return "text/html; charset=utf-8";
  if (ext == "css") return "text/css; charset=utf-8";
  // Module scripts are refused by browsers under any other type.
  if (ext == "js") return "text/javascript; charset=utf-8";
  if (ext == "json") return "application/json";
  if (ext == "svg") return "image/svg+xml";
  if (ext == "png") return "image/png";
  if (ext == "txt") return "text/plain; charset=utf-8";
  return "application/octet-stream";
}

}  // namespace tablestone::ui
