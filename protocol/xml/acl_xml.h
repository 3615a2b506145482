// Get/Set Table ACL bodies (Learn: set-table-acl): <SignedIdentifiers> with up to five
// stored access policies. Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/api_error.h"

namespace tablestone::protocol::xml {

inline constexpr size_t kMaxSignedIdentifiers = 5;
inline constexpr size_t kMaxSignedIdentifierIdLength = 64;

struct SignedIdentifier {
  std::string id;
  std::optional<int64_t> start;            // ticks
  std::optional<int64_t> expiry;           // ticks
  std::optional<std::string> permission;   // letters from "raud", as sent
  friend bool operator==(const SignedIdentifier&, const SignedIdentifier&) = default;
};

// Parses a Set Table ACL body. An empty (or whitespace-only) body and an empty
// <SignedIdentifiers/> both mean "no policies". Errors, all 400:
//   InvalidXmlDocument: malformed XML, another root, more than 5 identifiers,
//     a missing/empty/over-64-character or repeated Id, permission letters
//     outside "raud" (decision: Azurite's behaviour, docs/compatibility-notes/batch-auth.md);
//   InvalidXmlNodeValue: a Start/Expiry that is not an ISO 8601 time.
// An empty <AccessPolicy/> (JS) or a missing one (Python) gives an identifier
// without policy fields; empty Start/Expiry/Permission elements count as absent.
ApiResult<std::vector<SignedIdentifier>> ParseSignedIdentifiers(std::string_view body);

// The Get Table ACL body: "<?xml version=\"1.0\" encoding=\"utf-8\"?>" then
// <SignedIdentifiers> with each identifier; AccessPolicy is omitted when it
// has no field, unset fields are omitted, and times carry 7 fraction digits.
// No identifiers: <SignedIdentifiers />.
std::string WriteSignedIdentifiers(const std::vector<SignedIdentifier>& identifiers);

}  // namespace tablestone::protocol::xml
