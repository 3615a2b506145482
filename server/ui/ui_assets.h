// The data browser's static files (server/ui/assets/), embedded in the binary
// at build time by cmake/embed_files.cmake: no file is read at run time.
// Standard library only, so any layer that serves them may link it.
#pragma once

#include <cstddef>
#include <string_view>

namespace tablestone::ui {

// One embedded file: its base name (no directory) and its bytes.
struct EmbeddedFile {
  std::string_view name;
  std::string_view bytes;
};

// Filled by the generated source (ui_assets_data.cc in the build tree).
extern const EmbeddedFile kEmbeddedFiles[];
extern const size_t kEmbeddedFileCount;

// The file whose base name is exactly `name`, or null. Names hold no '/', so
// a request for anything else (a sub-path, "..", an encoded slash) is no file.
const EmbeddedFile* FindEmbeddedFile(std::string_view name);

// Content-Type for a file name by its extension (html, css, js, json, svg, png,
// txt); "application/octet-stream" for anything else.
std::string_view ContentTypeOf(std::string_view name);

}  // namespace tablestone::ui
