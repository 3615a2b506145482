// RequestParts for the typed-request tests (query_ops_test.cc,
// table_ops_test.cc, service_ops_test.cc), built from plain values: no
// Beast, no engine.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "protocol/route.h"
#include "protocol/url.h"
#include "server/api/request_parts.h"
#include "storage/model/ascii.h"

namespace tablestone::api::testing {

class FakeHeaders final : public RequestHeaders {
 public:
  FakeHeaders() = default;
  FakeHeaders(std::initializer_list<std::pair<std::string, std::string>> headers) : headers_(headers) {}
  std::optional<std::string_view> Find(std::string_view name) const override {
    for (const auto& [n, v] : headers_) {
      if (model::EqualsIgnoreCase(n, name)) return std::string_view(v);
    }
    return std::nullopt;
  }
  void Add(std::string name, std::string value) { headers_.emplace_back(std::move(name), std::move(value)); }

 private:
  std::vector<std::pair<std::string, std::string>> headers_;
};

// Owns everything a RequestParts views.
struct PartsHolder {
  std::string account = "devstoreaccount1";
  bool secondary = false;
  protocol::Resource resource;
  protocol::QueryParams query;
  FakeHeaders headers;
  std::string body;
  std::string api_version;  // x-ms-version; empty = absent

  RequestParts Parts() const {
    return RequestParts{account, secondary, resource, query, headers, body, api_version};
  }
};

inline PartsHolder EntityParts(std::string table, std::string pk, std::string rk) {
  PartsHolder h;
  h.resource.kind = protocol::ResourceKind::kEntity;
  h.resource.table = std::move(table);
  h.resource.key = model::EntityKey{std::move(pk), std::move(rk)};
  return h;
}

inline PartsHolder TableParts(protocol::ResourceKind kind, std::string table) {
  PartsHolder h;
  h.resource.kind = kind;
  h.resource.table = std::move(table);
  return h;
}

}  // namespace tablestone::api::testing
