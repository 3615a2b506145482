// URL pieces of a request: percent-decoding, query strings, UTF-8 checks and
// the percent-encoding the service uses when it writes URLs (Location,
// odata.id).
//
// Pure functions; thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tablestone::protocol {

// Query parameters in the order sent; names and values percent-decoded. The
// subset of std::multimap's interface the code uses (except that iteration
// follows the wire order, not name order), over one vector searched linearly:
// a request has ~10 parameters (a SAS alone has 8), and a tree node per
// parameter cost ~1,000 instructions of a point request; a sorted vector cost
// more than the tree (element moves on insertion). Lookups take string_views.
class QueryParams {
 public:
  using value_type = std::pair<std::string, std::string>;
  using iterator = std::vector<value_type>::iterator;
  using const_iterator = std::vector<value_type>::const_iterator;

  QueryParams() = default;
  QueryParams(std::initializer_list<value_type> items) : items_(items) {}
  template <typename It>
  QueryParams(It first, It last) {
    for (; first != last; ++first) emplace(first->first, first->second);
  }

  void reserve(size_t n) { items_.reserve(n); }
  iterator emplace(std::string name, std::string value) {
    items_.emplace_back(std::move(name), std::move(value));
    return items_.end() - 1;
  }
  // The first value of `name` in wire order, or end().
  const_iterator find(std::string_view name) const {
    return std::find_if(items_.begin(), items_.end(), [name](const value_type& item) { return item.first == name; });
  }
  iterator find(std::string_view name) {
    return std::find_if(items_.begin(), items_.end(), [name](const value_type& item) { return item.first == name; });
  }
  size_t count(std::string_view name) const {
    return static_cast<size_t>(
        std::count_if(items_.begin(), items_.end(), [name](const value_type& item) { return item.first == name; }));
  }
  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }
  iterator begin() { return items_.begin(); }
  iterator end() { return items_.end(); }
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  bool operator==(const QueryParams& other) const = default;

 private:
  std::vector<value_type> items_;  // wire order
};

// Decodes %XX escapes. In a path '+' is a literal plus (Learn: addressing-table-service-resources); in a query
// string it is a space (form encoding; Python's urlencode sends it, Learn: querying-tables-and-entities).
// Returns nullopt for a malformed escape ("%G1", a trailing "%").
std::optional<std::string> PercentDecodePath(std::string_view text);
std::optional<std::string> PercentDecodeQuery(std::string_view text);

// Splits "a=1&b=x%20y" into decoded pairs. A name without '=' gets an empty
// value; empty segments are skipped. nullopt when any escape is malformed.
std::optional<QueryParams> ParseQueryString(std::string_view query);

// First value of `name` (exact, case-sensitive, as the service's $-options), or nullptr.
const std::string* FindQueryParam(const QueryParams& params, std::string_view name);

// True when `text` is well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF).
bool IsValidUtf8(std::string_view text);
// Appends the UTF-8 encoding of a Unicode code point (< 0x110000) to *out
// (JSON \u escapes and XML character references both decode through it).
void AppendUtf8(uint32_t code_point, std::string* out);

// Percent-encodes everything except RFC 3986 unreserved characters and the
// bytes in `keep` (e.g. "'" when writing key predicates whose quotes are doubled).
std::string PercentEncode(std::string_view text, std::string_view keep = {});

// Splits "path?query" into its two parts (no decoding).
void SplitTarget(std::string_view target, std::string_view* path, std::string_view* query);

// An absolute-form request target (RFC 9112, section 3.2.2), e.g.
// "http://127.0.0.1:10002/devstoreaccount1/Tables?x=1": the scheme (http or
// https, any case), the authority as sent, and the origin-form remainder
// ("/devstoreaccount1/Tables?x=1"; "/" when the path is empty).
struct AbsoluteTarget {
  std::string_view scheme;
  std::string_view authority;
  std::string origin_form;
};
// nullopt unless `target` is an http(s) absolute-form target with a
// non-empty authority and no userinfo.
std::optional<AbsoluteTarget> ParseAbsoluteTarget(std::string_view target);

// True when two authorities ("host[:port]") name the same endpoint for
// `scheme`: hosts compared case-insensitively, the scheme's default port
// (80 / 443) equal to no port.
bool SameAuthority(std::string_view scheme, std::string_view a, std::string_view b);

}  // namespace tablestone::protocol
