#include "protocol/odata_writer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <initializer_list>

#include "protocol/base64.h"
#include "protocol/error_body.h"
#include "protocol/url.h"
#include "storage/model/datetime.h"
#include "storage/model/etag.h"

namespace tablestone::protocol {
namespace {

using model::EdmType;
using model::EdmValue;

// Appends to a std::string through a raw cursor. Every write first makes
// room (one compare when there is room, amortized doubling when not); the
// string is cut to the written size when the JsonOut is destroyed, so it must
// not be used while one is alive. Entity bodies and query pages are written
// through it instead of std::string's append/push_back, which make an
// out-of-line call, a strlen for literals and a terminator per call.
class JsonOut {
 public:
  explicit JsonOut(std::string& s) : s_(s), p_(s.data() + s.size()), end_(p_) {}
  ~JsonOut() { s_.resize(static_cast<size_t>(p_ - s_.data())); }
  JsonOut(const JsonOut&) = delete;
  JsonOut& operator=(const JsonOut&) = delete;

  void Char(char c) {
    Reserve(1);
    *p_++ = c;
  }
  template <size_t N>
  void Lit(const char (&text)[N]) {  // a string literal, without its terminator
    Raw(std::string_view(text, N - 1));
  }
  void Raw(std::string_view text) {
    Reserve(text.size());
    std::memcpy(p_, text.data(), text.size());
    p_ += text.size();
  }
  void String(std::string_view text) {  // as a JSON string literal
    Reserve(JsonStringMaxSize(text.size()));
    p_ = WriteJsonString(p_, text);
  }
  // The last byte written (0 if none).
  char Back() const { return p_ == s_.data() ? '\0' : p_[-1]; }
  void ReplaceBack(char c) { p_[-1] = c; }
  void PopBack() { --p_; }

 private:
  void Reserve(size_t n) {
    if (static_cast<size_t>(end_ - p_) < n) Grow(n);
  }
  void Grow(size_t n) {
    const size_t used = static_cast<size_t>(p_ - s_.data());
    // At least the capacity reserved beforehand (a query page reserves its
    // estimate): growing from 256 bytes by doubling copied a page ~11 times.
    s_.resize(std::max({used + n, 2 * s_.size() + 256, s_.capacity()}));
    p_ = s_.data() + used;
    end_ = s_.data() + s_.size();
  }

  std::string& s_;
  char* p_;
  char* end_;
};

void AppendKey(JsonOut& out, std::string_view name) {
  out.String(name);
  out.Char(':');
}

void AppendTypeAnnotation(JsonOut& out, std::string_view name, std::string_view type) {
  // Property names are identifiers; escape anyway for safety. The closing
  // quote of the escaped name gives way to the annotation suffix.
  out.String(name);
  out.PopBack();
  out.Lit("@odata.type\":\"");
  out.Raw(type);
  out.Lit("\",");
}

template <typename Int>
void AppendInt(JsonOut& out, Int value) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  out.Raw(std::string_view(buf, static_cast<size_t>((ec == std::errc() ? end : buf) - buf)));
}

// FormatDouble's text into buf (64 bytes); returns its length.
size_t DoubleText(double value, char* buf) {
  auto [end, ec] = std::to_chars(buf, buf + 62, value);
  if (ec != std::errc()) end = buf;
  if (std::string_view(buf, static_cast<size_t>(end - buf)).find_first_of(".eEn") == std::string_view::npos) {
    *end++ = '.';
    *end++ = '0';
  }
  return static_cast<size_t>(end - buf);
}

void AppendDateTime(JsonOut& out, int64_t ticks) {
  char buf[model::kDateTimeBufferSize + 2];
  buf[0] = '"';
  const size_t n = model::FormatDateTimeTrimmedTo(ticks, buf + 1);
  buf[n + 1] = '"';
  out.Raw(std::string_view(buf, n + 2));
}

// Does a value of this type need an annotation in minimal/full metadata?
bool NeedsAnnotation(const EdmValue& v) {
  switch (v.type) {
    case EdmType::kInt64:
    case EdmType::kDateTime:
    case EdmType::kGuid:
    case EdmType::kBinary: return true;
    case EdmType::kDouble: return !std::isfinite(v.double_value);
    default: return false;
  }
}

void AppendValue(JsonOut& out, const EdmValue& v) {
  switch (v.type) {
    case EdmType::kString: out.String(v.text); break;
    case EdmType::kInt32: AppendInt(out, v.int_value); break;
    case EdmType::kInt64:
      out.Char('"');
      AppendInt(out, v.int_value);
      out.Char('"');
      break;
    case EdmType::kBoolean:
      if (v.int_value != 0) {
        out.Lit("true");
      } else {
        out.Lit("false");
      }
      break;
    case EdmType::kDouble:
      if (std::isnan(v.double_value)) {
        out.Lit("\"NaN\"");
      } else if (std::isinf(v.double_value)) {
        if (v.double_value > 0) {
          out.Lit("\"Infinity\"");
        } else {
          out.Lit("\"-Infinity\"");
        }
      } else {
        char buf[64];
        out.Raw(std::string_view(buf, DoubleText(v.double_value, buf)));
      }
      break;
    case EdmType::kDateTime: AppendDateTime(out, v.int_value); break;
    case EdmType::kGuid: out.String(v.text); break;
    case EdmType::kBinary:
      out.Char('"');
      out.Raw(Base64Encode(v.text));
      out.Char('"');
      break;
  }
}

void AppendProperty(JsonOut& out, const model::Property& p, MetadataLevel level) {
  if (level != MetadataLevel::kNoMetadata && NeedsAnnotation(p.value)) {
    AppendTypeAnnotation(out, p.name, model::EdmTypeName(p.value.type));
  }
  AppendKey(out, p.name);
  AppendValue(out, p.value);
  out.Char(',');
}

std::string SelectSuffix(const EntityWriteContext& ctx) {
  if (ctx.select == nullptr || ctx.select->empty()) return {};
  std::string s = "&$select=";
  for (size_t i = 0; i < ctx.select->size(); ++i) {
    if (i > 0) s += ',';
    s += (*ctx.select)[i];
  }
  return s;
}

bool Selected(const EntityWriteContext& ctx, std::string_view name) {
  if (ctx.select == nullptr || ctx.select->empty()) return true;
  for (const std::string& s : *ctx.select) {
    if (s == name) return true;
  }
  return false;
}

bool IsSystemName(std::string_view n) { return n == "PartitionKey" || n == "RowKey" || n == "Timestamp"; }

// Members of one entity object, without braces; ends with a ','.
void AppendEntityMembers(JsonOut& out, const model::Entity& e, const EntityWriteContext& ctx) {
  const bool full = ctx.level == MetadataLevel::kFullMetadata;
  std::string key_path;
  if (full) {
    key_path = EntityKeyPath(ctx.table, e.partition_key, e.row_key);
    out.Lit("\"odata.type\":");
    out.String(std::string(ctx.account) + "." + std::string(ctx.table));
    out.Lit(",\"odata.id\":");
    out.String(std::string(ctx.base_url) + key_path);
    out.Char(',');
  }
  if (ctx.level != MetadataLevel::kNoMetadata) {
    out.Lit("\"odata.etag\":");
    // Formatted on this frame's stack: an ETag per entity of a page without
    // an allocation each.
    char etag[model::kETagBufferSize];
    out.String(std::string_view(etag, model::FormatETagTo(e.timestamp, etag)));
    out.Char(',');
  }
  if (full) {
    out.Lit("\"odata.editLink\":");
    out.String(key_path);
    out.Char(',');
  }
  if (Selected(ctx, "PartitionKey")) {
    out.Lit("\"PartitionKey\":");
    out.String(e.partition_key);
    out.Char(',');
  }
  if (Selected(ctx, "RowKey")) {
    out.Lit("\"RowKey\":");
    out.String(e.row_key);
    out.Char(',');
  }
  if (Selected(ctx, "Timestamp")) {
    if (full) out.Lit("\"Timestamp@odata.type\":\"Edm.DateTime\",");
    out.Lit("\"Timestamp\":");
    AppendDateTime(out, e.timestamp);
    out.Char(',');
  }
  if (ctx.select == nullptr || ctx.select->empty()) {
    for (const model::Property& p : e.properties) AppendProperty(out, p, ctx.level);
    return;
  }
  for (const std::string& name : *ctx.select) {
    if (IsSystemName(name)) continue;
    if (const model::Property* p = e.Find(name)) {
      AppendProperty(out, *p, ctx.level);
    } else {
      AppendKey(out, name);
      out.Lit("null,");
    }
  }
}

// Opens a response object. With metadata its first member is
// "odata.metadata": base_url + "$metadata#" + the fragment's pieces.
void OpenObject(JsonOut& out, MetadataLevel level, std::string_view base_url,
                std::initializer_list<std::string_view> fragment) {
  out.Char('{');
  if (level == MetadataLevel::kNoMetadata) return;
  std::string url(base_url);
  url += "$metadata#";
  for (std::string_view piece : fragment) url += piece;
  out.Lit("\"odata.metadata\":");
  out.String(url);
  out.Char(',');
}

void CloseObject(JsonOut& out) {
  if (out.Back() == ',') {
    out.ReplaceBack('}');
  } else {
    out.Char('}');
  }
}

void AppendTableMembers(JsonOut& out, std::string_view table, std::string_view base_url, std::string_view account,
                        MetadataLevel level) {
  if (level == MetadataLevel::kFullMetadata) {
    std::string path = "Tables('" + std::string(table) + "')";
    out.Lit("\"odata.type\":");
    out.String(std::string(account) + ".Tables");
    out.Lit(",\"odata.id\":");
    out.String(std::string(base_url) + path);
    out.Lit(",\"odata.editLink\":");
    out.String(path);
    out.Char(',');
  }
  out.Lit("\"TableName\":");
  out.String(table);
  out.Char(',');
}

}  // namespace

std::string FormatDouble(double value) {
  char buf[64];
  return std::string(buf, DoubleText(value, buf));
}

namespace {

// A key of the path: percent-encoded (url.h), each quote doubled and kept.
void AppendKeyOfPath(std::string* out, std::string_view key) {
  for (size_t quote; (quote = key.find('\'')) != std::string_view::npos; key.remove_prefix(quote + 1)) {
    AppendPercentEncoded(out, key.substr(0, quote));
    out->append("''");
  }
  AppendPercentEncoded(out, key);
}

}  // namespace

void AppendEntityKeyPath(std::string* out, std::string_view table, std::string_view pk, std::string_view rk) {
  out->reserve(out->size() + table.size() + pk.size() + rk.size() + 32);
  AppendPercentEncoded(out, table);
  out->append("(PartitionKey='");
  AppendKeyOfPath(out, pk);
  out->append("',RowKey='");
  AppendKeyOfPath(out, rk);
  out->append("')");
}

std::string EntityKeyPath(std::string_view table, std::string_view pk, std::string_view rk) {
  std::string out;
  AppendEntityKeyPath(&out, table, pk, rk);
  return out;
}

namespace {

// The size of a JSON string literal: exact (JsonStringSize, one scan of the
// text) or its worst case without looking at the bytes (6 per byte).
size_t WorstJsonStringSize(std::string_view text) { return JsonStringMaxSize(text.size()); }

// Upper bound of AppendProperty's output (annotation, key, value, comma).
template <size_t (*kStringSize)(std::string_view)>
size_t PropertySizeBound(const model::Property& p) {
  // "name@odata.type":"Edm.DateTime", then "name": and the trailing comma.
  size_t size = 2 * kStringSize(p.name) + 40;
  const EdmValue& v = p.value;
  switch (v.type) {
    case EdmType::kString:
    case EdmType::kGuid: size += kStringSize(v.text); break;
    case EdmType::kBinary: size += 4 * ((v.text.size() + 2) / 3) + 2; break;
    default: size += 40; break;  // numbers, booleans, dates: short fixed texts
  }
  return size;
}

// The part of EntitySizeBound that does not depend on the properties:
// braces, comma, odata.etag, the PartitionKey, RowKey and Timestamp members
// and, with full metadata, odata.type, odata.id and odata.editLink.
template <size_t (*kStringSize)(std::string_view)>
size_t KeysSizeBound(std::string_view pk, std::string_view rk, const EntityWriteContext& ctx) {
  size_t size = 256 + kStringSize(pk) + kStringSize(rk);
  if (ctx.level == MetadataLevel::kFullMetadata) {
    // A key path percent-encodes each key byte into at most six bytes (a
    // doubled quote, %27%27).
    const size_t key_path = 6 * (ctx.table.size() + pk.size() + rk.size()) + 64;
    size += 64 + 6 * (ctx.account.size() + ctx.table.size()) + 6 * ctx.base_url.size() + 2 * key_path;
  }
  return size;
}

// EntityJsonSizeBound with strings sized by kStringSize: with the exact
// literal size it is EntityJsonSizeBound, with the worst case it is
// EntityJsonSizeQuickBound, which is therefore never below it.
template <size_t (*kStringSize)(std::string_view)>
size_t EntitySizeBound(const model::Entity& e, const EntityWriteContext& ctx) {
  size_t size = KeysSizeBound<kStringSize>(e.partition_key, e.row_key, ctx);
  if (ctx.select == nullptr || ctx.select->empty()) {
    for (const model::Property& p : e.properties) size += PropertySizeBound<kStringSize>(p);
    return size;
  }
  for (const std::string& name : *ctx.select) {
    if (IsSystemName(name)) continue;
    const model::Property* p = e.Find(name);
    size += p != nullptr ? PropertySizeBound<kStringSize>(*p) : kStringSize(name) + 8;
  }
  return size;
}

}  // namespace

size_t EntityJsonSizeBound(const model::Entity& e, const EntityWriteContext& ctx) {
  return EntitySizeBound<JsonStringSize>(e, ctx);
}

size_t EntityJsonSizeQuickBound(const model::Entity& e, const EntityWriteContext& ctx) {
  return EntitySizeBound<WorstJsonStringSize>(e, ctx);
}

size_t EntityJsonSizeBudgetBound(std::string_view partition_key, std::string_view row_key, size_t property_budget,
                                 const EntityWriteContext& ctx) {
  // Per property, PropertySizeBound<WorstJsonStringSize> is at most
  // 12 n + 6 t + 84 for a name of n bytes and a value of t bytes (a String:
  // 12 n + 46 + 6 t; a 36-character Guid, counted as 15: 12 n + 262; a
  // number, counted as 0: 12 n + 84), and 28 (n + t + 3) is never below any
  // of them.
  size_t size = KeysSizeBound<WorstJsonStringSize>(partition_key, row_key, ctx) + 28 * property_budget;
  if (ctx.select != nullptr) {
    // A selected name the entity lacks is written as null.
    for (const std::string& name : *ctx.select) {
      if (!IsSystemName(name)) size += WorstJsonStringSize(name) + 8;
    }
  }
  return size;
}

std::string WriteEntity(const model::Entity& entity, const EntityWriteContext& ctx) {
  std::string body;
  body.reserve(256);
  {
    JsonOut out(body);
    OpenObject(out, ctx.level, ctx.base_url, {ctx.table, "/@Element", SelectSuffix(ctx)});
    AppendEntityMembers(out, entity, ctx);
    CloseObject(out);
  }
  return body;
}

std::string WriteEntityFeed(const std::vector<model::Entity>& entities, const EntityWriteContext& ctx) {
  return WriteEntityFeed(entities, {}, ctx);
}

namespace {

// One entity's object in a feed: what WriteEntityFeed writes per entity and
// AppendFeedEntity renders for the scan cache, so both are the same bytes.
void AppendFeedEntityObject(JsonOut& out, const model::Entity& entity, const EntityWriteContext& ctx) {
  out.Char('{');
  AppendEntityMembers(out, entity, ctx);
  CloseObject(out);
}

}  // namespace

void AppendFeedEntity(const model::Entity& entity, const EntityWriteContext& ctx, std::string* body) {
  JsonOut out(*body);
  AppendFeedEntityObject(out, entity, ctx);
}

std::string WriteEntityFeed(const std::vector<model::Entity>& entities, const std::vector<std::string_view>& rendered,
                            const EntityWriteContext& ctx) {
  size_t rendered_bytes = 0;
  for (std::string_view r : rendered) rendered_bytes += r.size() + 1;
  std::string body;
  body.reserve(64 + rendered_bytes + (entities.size() - (rendered.empty() ? 0 : rendered.size())) * 320);
  {
    JsonOut out(body);
    OpenObject(out, ctx.level, ctx.base_url, {ctx.table, SelectSuffix(ctx)});
    out.Lit("\"value\":[");
    for (size_t i = 0; i < entities.size(); ++i) {
      if (i > 0) out.Char(',');
      if (i < rendered.size() && !rendered[i].empty()) {
        out.Raw(rendered[i]);
        continue;
      }
      AppendFeedEntityObject(out, entities[i], ctx);
    }
    out.Lit("]}");
  }
  return body;
}

std::string WriteTableEntry(std::string_view table, std::string_view base_url, std::string_view account,
                            MetadataLevel level) {
  std::string body;
  {
    JsonOut out(body);
    OpenObject(out, level, base_url, {"Tables/@Element"});
    AppendTableMembers(out, table, base_url, account, level);
    CloseObject(out);
  }
  return body;
}

std::string WriteTableFeed(const std::vector<std::string>& tables, std::string_view base_url,
                           std::string_view account, MetadataLevel level) {
  std::string body;
  {
    JsonOut out(body);
    OpenObject(out, level, base_url, {"Tables"});
    out.Lit("\"value\":[");
    for (size_t i = 0; i < tables.size(); ++i) {
      if (i > 0) out.Char(',');
      out.Char('{');
      AppendTableMembers(out, tables[i], base_url, account, level);
      CloseObject(out);
    }
    out.Lit("]}");
  }
  return body;
}

}  // namespace tablestone::protocol
