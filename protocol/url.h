// URL pieces of a request: percent-decoding, query strings, UTF-8 checks and
// the percent-encoding the service uses when it writes URLs (Location,
// odata.id).
//
// Pure functions; thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <memory>
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
//
// Copies share the vector until one of them is changed (copy on write): the
// query string a SAS repeats on every request is parsed once (QueryMemo,
// route.h), and a request's copy of it was four allocations and ~600
// instructions of a point GET. Only the non-const members may copy it (a
// shared vector is never changed); like a std::vector, one object is not to be
// used from two threads at once, while copies of it may be.
class QueryParams {
 public:
  using value_type = std::pair<std::string, std::string>;
  using iterator = std::vector<value_type>::iterator;
  using const_iterator = std::vector<value_type>::const_iterator;

  QueryParams() = default;
  QueryParams(std::initializer_list<value_type> items)
      : items_(std::make_shared<std::vector<value_type>>(items)) {}
  template <typename It>
  QueryParams(It first, It last) {
    for (; first != last; ++first) emplace(first->first, first->second);
  }

  void reserve(size_t n) { Mutable().reserve(n); }
  iterator emplace(std::string name, std::string value) {
    std::vector<value_type>& items = Mutable();
    items.emplace_back(std::move(name), std::move(value));
    return items.end() - 1;
  }
  // The first value of `name` in wire order, or end().
  const_iterator find(std::string_view name) const {
    const std::vector<value_type>& items = Items();
    return std::find_if(items.begin(), items.end(), [name](const value_type& item) { return item.first == name; });
  }
  iterator find(std::string_view name) {
    std::vector<value_type>& items = Mutable();
    return std::find_if(items.begin(), items.end(), [name](const value_type& item) { return item.first == name; });
  }
  size_t count(std::string_view name) const {
    const std::vector<value_type>& items = Items();
    return static_cast<size_t>(
        std::count_if(items.begin(), items.end(), [name](const value_type& item) { return item.first == name; }));
  }
  const_iterator begin() const { return Items().begin(); }
  const_iterator end() const { return Items().end(); }
  iterator begin() { return Mutable().begin(); }
  iterator end() { return Mutable().end(); }
  size_t size() const { return Items().size(); }
  bool empty() const { return Items().empty(); }
  bool operator==(const QueryParams& other) const { return Items() == other.Items(); }

 private:
  const std::vector<value_type>& Items() const {
    static const std::vector<value_type> kNone;
    return items_ != nullptr ? *items_ : kNone;
  }
  // The vector to change: this object's own (a copy when it was shared).
  std::vector<value_type>& Mutable() {
    if (items_ == nullptr) {
      items_ = std::make_shared<std::vector<value_type>>();
    } else if (items_.use_count() > 1) {
      items_ = std::make_shared<std::vector<value_type>>(*items_);
    }
    return *items_;
  }

  std::shared_ptr<std::vector<value_type>> items_;  // wire order; null when empty and never changed
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
// The same appended to *out, runs of kept bytes at once.
void AppendPercentEncoded(std::string* out, std::string_view text, std::string_view keep = {});

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
