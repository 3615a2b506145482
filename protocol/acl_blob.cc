#include "protocol/acl_blob.h"

#include <nlohmann/json.hpp>

namespace tablestone::protocol {

std::string EncodeAclBlob(const std::vector<AclEntry>& entries) {
  if (entries.empty()) return {};
  nlohmann::json arr = nlohmann::json::array();
  for (const AclEntry& e : entries) {
    nlohmann::json o;
    o["id"] = e.id;
    o["policy"] = e.has_policy;
    if (e.start) o["start"] = *e.start;
    if (e.expiry) o["expiry"] = *e.expiry;
    if (e.permission) o["permission"] = *e.permission;
    arr.push_back(std::move(o));
  }
  return arr.dump();
}

std::optional<std::vector<AclEntry>> DecodeAclBlob(std::string_view blob) {
  std::vector<AclEntry> out;
  if (blob.empty()) return out;
  nlohmann::json arr = nlohmann::json::parse(blob, nullptr, /*allow_exceptions=*/false);
  if (!arr.is_array()) return std::nullopt;
  for (const auto& o : arr) {
    if (!o.is_object() || !o.contains("id") || !o["id"].is_string()) return std::nullopt;
    AclEntry e;
    e.id = o["id"].get<std::string>();
    e.has_policy = o.value("policy", false);
    if (o.contains("start")) {
      if (!o["start"].is_number_integer()) return std::nullopt;
      e.start = o["start"].get<int64_t>();
    }
    if (o.contains("expiry")) {
      if (!o["expiry"].is_number_integer()) return std::nullopt;
      e.expiry = o["expiry"].get<int64_t>();
    }
    if (o.contains("permission")) {
      if (!o["permission"].is_string()) return std::nullopt;
      e.permission = o["permission"].get<std::string>();
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace tablestone::protocol
