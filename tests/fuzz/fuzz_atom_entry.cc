// libFuzzer target: AtomPub request entries (protocol/atom/atom_reader.h).
//
// Feeds arbitrary bytes to the entry reader and the Create Table entry
// reader. Beyond "no crash" and "no 5xx": an accepted entity keeps the JSON
// path's limits (at most 255 unique custom properties, no system names), and
// writing it as an Atom entry and reading that back gives the same entity, so
// the writer's escaping and value forms agree with the reader.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "protocol/atom/atom_reader.h"
#include "protocol/atom/atom_writer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tablestone::protocol;
  std::string_view text(reinterpret_cast<const char*>(data), size);

  auto entity = atom::ParseEntityAtom(text);
  if (entity.ok()) {
    const auto& e = entity.value().entity;
    if (e.properties.size() > 255) abort();
    std::set<std::string> names;
    for (const auto& p : e.properties) {
      if (!names.insert(p.name).second) abort();
      if (p.name == "PartitionKey" || p.name == "RowKey" || p.name == "Timestamp") abort();
    }
    EntityWriteContext ctx{"http://127.0.0.1:10002/devstoreaccount1/", "devstoreaccount1", "t",
                           MetadataLevel::kAtom, nullptr};
    auto again = atom::ParseEntityAtom(atom::WriteEntityEntry(e, ctx));
    if (!again.ok() || again.value().entity.properties != e.properties ||
        again.value().entity.partition_key != e.partition_key || again.value().entity.row_key != e.row_key) {
      abort();
    }
  } else if (entity.error().http_status >= 500) {
    abort();
  }

  auto table = atom::ParseTableNameAtom(text);
  if (!table.ok() && table.error().http_status >= 500) abort();
  return 0;
}
