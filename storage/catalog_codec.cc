#include "storage/catalog_codec.h"

#include "storage/key_codec.h"

namespace tablestone::storage {
namespace {
constexpr char kCatalogVersion = '\x01';
}  // namespace

std::string CatalogAccountPrefix(std::string_view account) {
  std::string out(account);
  out.push_back('\0');
  return out;
}

std::string CatalogKey(std::string_view account, std::string_view lower_name) {
  std::string out = CatalogAccountPrefix(account);
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

}  // namespace tablestone::storage
