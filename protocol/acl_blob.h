// The stored form of a table's ACL (stored access policies, Learn: set-table-acl), as
// kept in the engine's per-table ACL blob (storage treats it as opaque bytes).
//
// Set Table ACL parses the request XML into AclEntry values and stores
// EncodeAclBlob(entries); Get Table ACL and the service-SAS authenticator
// (signedidentifier lookup) read it back with DecodeAclBlob. An empty blob
// means "no stored access policies".
//
// Encoding: a JSON array, one object per SignedIdentifier, in request order:
//   [{"id":"<Id>","policy":true,"start":<ticks>,"expiry":<ticks>,"permission":"raud"}, ...]
// "policy" is false for a SignedIdentifier without an AccessPolicy element;
// "start"/"expiry"/"permission" are omitted when not set.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tablestone::protocol {

struct AclEntry {
  std::string id;
  bool has_policy = false;
  std::optional<int64_t> start;   // ticks
  std::optional<int64_t> expiry;  // ticks
  std::optional<std::string> permission;
  friend bool operator==(const AclEntry&, const AclEntry&) = default;
};

std::string EncodeAclBlob(const std::vector<AclEntry>& entries);
// nullopt when the blob is not a valid encoding (a corrupt blob).
std::optional<std::vector<AclEntry>> DecodeAclBlob(std::string_view blob);

}  // namespace tablestone::protocol
