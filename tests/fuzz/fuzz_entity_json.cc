// libFuzzer target: OData JSON request bodies (protocol/odata_json.h).
//
// Feeds arbitrary bytes to the entity parser, the Create Table body parser and
// the body-key validator. Beyond "no crash": an accepted entity has at most
// 255 custom properties with unique names and valid UTF-8 keys, since those
// are limits the parser promises to enforce (Learn: understanding-the-table-service-data-model).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "protocol/odata_json.h"
#include "protocol/url.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tablestone::protocol;
  std::string_view text(reinterpret_cast<const char*>(data), size);

  auto entity = ParseEntityJson(text);
  if (entity.ok()) {
    const auto& e = entity.value().entity;
    if (e.properties.size() > 255) abort();
    std::set<std::string> names;
    for (const auto& p : e.properties) {
      if (!names.insert(p.name).second) abort();  // duplicate accepted
      if (p.name == "PartitionKey" || p.name == "RowKey" || p.name == "Timestamp") abort();
    }
    if (!IsValidUtf8(e.partition_key) || !IsValidUtf8(e.row_key)) abort();
  } else if (entity.error().http_status >= 500) {
    abort();
  }

  auto table = ParseTableNameJson(text);
  if (!table.ok() && table.error().http_status >= 500) abort();

  auto key = ValidateBodyKey("PartitionKey", text);
  if (!key.ok() && key.error().http_status >= 500) abort();
  return 0;
}
