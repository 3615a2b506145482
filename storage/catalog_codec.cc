#include "storage/catalog_codec.h"

#include "storage/key_codec.h"

namespace tablestone::storage {
namespace {
constexpr char kCatalogVersion = '\x01';

// The one place that lays out an account's catalog prefix: its name, then a
// NUL (no account name contains one), so one account's prefix never starts
// another's keys (catalog_codec_test.cc).
void AppendCatalogAccountPrefix(std::string_view account, std::string* out) {
  out->append(account);
  out->push_back('\0');
}
}  // namespace

std::string CatalogAccountPrefix(std::string_view account) {
  std::string out;
  AppendCatalogAccountPrefix(account, &out);
  return out;
}

std::string CatalogKey(std::string_view account, std::string_view lower_name) {
  // Sized once: every request's table lookup builds one (an account name
  // fills the inline buffer, so growing it was a second allocation).
  std::string out;
  out.reserve(account.size() + 1 + lower_name.size());
  AppendCatalogAccountPrefix(account, &out);
  out.append(lower_name);
  return out;
}

std::string EncodeFixed64Be(uint64_t v) {
  std::string out;
  AppendTableId(v, &out);
  return out;
}

bool DecodeFixed64Be(std::string_view bytes, uint64_t* v) {
  return bytes.size() == kTableIdBytes && ReadTableId(bytes, v);
}

std::string EncodeCatalogValue(uint64_t table_id, std::string_view name) {
  std::string out(1, kCatalogVersion);
  AppendTableId(table_id, &out);
  out.append(name);
  return out;
}

bool DecodeCatalogValue(std::string_view value, uint64_t* table_id, std::string* name) {
  if (value.size() < 1 + kTableIdBytes || value[0] != kCatalogVersion) return false;
  if (!ReadTableId(value.substr(1), table_id)) return false;
  name->assign(value.substr(1 + kTableIdBytes));
  return true;
}

std::string NextTableIdKey() { return "N"; }

std::string AccountMetaKey(std::string_view account, std::string_view key) {
  std::string out = "A";
  out.append(account);
  out.push_back('\0');
  out.append(key);
  return out;
}

std::string TableAclKey(uint64_t table_id) {
  std::string out = "L";
  AppendTableId(table_id, &out);
  return out;
}

std::string EntityCountsKey() { return "C"; }
std::string CachedPartitionsKey() { return "G"; }

std::string EncodeKeyList(const std::vector<std::string>& keys) {
  std::string out;
  for (const std::string& key : keys) {
    out += EncodeFixed64Be(key.size());
    out += key;
  }
  return out;
}

bool DecodeKeyList(std::string_view value, std::vector<std::string>* keys) {
  keys->clear();
  while (!value.empty()) {
    uint64_t size = 0;
    if (value.size() < 8 || !DecodeFixed64Be(value.substr(0, 8), &size) || size > value.size() - 8) return false;
    keys->emplace_back(value.substr(8, size));
    value.remove_prefix(8 + size);
  }
  return true;
}

std::string EncodeEntityCounts(const EntityCounts& counts) {
  std::string out = EncodeFixed64Be(counts.sequence);
  out.reserve(out.size() + counts.tables.size() * 2 * kTableIdBytes);
  for (const auto& [id, entities] : counts.tables) {
    AppendTableId(id, &out);
    AppendTableId(entities, &out);
  }
  return out;
}

bool DecodeEntityCounts(std::string_view value, EntityCounts* counts) {
  if (value.size() < kTableIdBytes || (value.size() - kTableIdBytes) % (2 * kTableIdBytes) != 0) return false;
  counts->tables.clear();
  if (!ReadTableId(value, &counts->sequence)) return false;
  for (value.remove_prefix(kTableIdBytes); !value.empty(); value.remove_prefix(2 * kTableIdBytes)) {
    uint64_t id = 0, entities = 0;
    if (!ReadTableId(value, &id) || !ReadTableId(value.substr(kTableIdBytes), &entities)) return false;
    counts->tables.emplace_back(id, entities);
  }
  return true;
}

}  // namespace tablestone::storage
