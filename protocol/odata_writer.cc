#include "protocol/odata_writer.h"

#include <charconv>
#include <cmath>

#include "protocol/base64.h"
#include "protocol/error_body.h"
#include "protocol/url.h"
#include "storage/model/datetime.h"
#include "storage/model/etag.h"

namespace tablestone::protocol {
namespace {

using model::EdmType;
using model::EdmValue;

void AppendKey(std::string& out, std::string_view name) {
  AppendJsonString(out, name);
  out += ':';
}

void AppendTypeAnnotation(std::string& out, std::string_view name, std::string_view type) {
  // Property names are identifiers; escape anyway for safety. The closing
  // quote of the escaped name gives way to the annotation suffix.
  AppendJsonString(out, name);
  out.pop_back();
  out += "@odata.type\":\"";
  out += type;
  out += "\",";
}

template <typename Int>
void AppendInt(std::string& out, Int value) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, ec == std::errc() ? end : buf);
}

// FormatDouble's text, appended without a temporary string.
void AppendDouble(std::string& out, double value) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf) - 2, value);
  if (ec != std::errc()) end = buf;
  if (std::string_view(buf, static_cast<size_t>(end - buf)).find_first_of(".eEn") == std::string_view::npos) {
    *end++ = '.';
    *end++ = '0';
  }
  out.append(buf, end);
}

void AppendDateTime(std::string& out, int64_t ticks) {
  char buf[model::kDateTimeBufferSize];
  out += '"';
  out.append(buf, model::FormatDateTimeTrimmedTo(ticks, buf));
  out += '"';
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

void AppendValue(std::string& out, const EdmValue& v) {
  switch (v.type) {
    case EdmType::kString: AppendJsonString(out, v.text); break;
    case EdmType::kInt32: AppendInt(out, v.int_value); break;
    case EdmType::kInt64:
      out += '"';
      AppendInt(out, v.int_value);
      out += '"';
      break;
    case EdmType::kBoolean: out += v.int_value != 0 ? "true" : "false"; break;
    case EdmType::kDouble:
      if (std::isnan(v.double_value)) {
        out += "\"NaN\"";
      } else if (std::isinf(v.double_value)) {
        out += v.double_value > 0 ? "\"Infinity\"" : "\"-Infinity\"";
      } else {
        AppendDouble(out, v.double_value);
      }
      break;
    case EdmType::kDateTime: AppendDateTime(out, v.int_value); break;
    case EdmType::kGuid: AppendJsonString(out, v.text); break;
    case EdmType::kBinary:
      out += '"';
      out += Base64Encode(v.text);
      out += '"';
      break;
  }
}

void AppendProperty(std::string& out, const model::Property& p, MetadataLevel level) {
  if (level != MetadataLevel::kNoMetadata && NeedsAnnotation(p.value)) {
    AppendTypeAnnotation(out, p.name, model::EdmTypeName(p.value.type));
  }
  AppendKey(out, p.name);
  AppendValue(out, p.value);
  out += ',';
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
void AppendEntityMembers(std::string& out, const model::Entity& e, const EntityWriteContext& ctx) {
  const bool full = ctx.level == MetadataLevel::kFullMetadata;
  std::string key_path;
  if (full) {
    key_path = EntityKeyPath(ctx.table, e.partition_key, e.row_key);
    out += "\"odata.type\":";
    AppendJsonString(out, std::string(ctx.account) + "." + std::string(ctx.table));
    out += ",\"odata.id\":";
    AppendJsonString(out, std::string(ctx.base_url) + key_path);
    out += ',';
  }
  if (ctx.level != MetadataLevel::kNoMetadata) {
    out += "\"odata.etag\":";
    // One scratch string per thread: an ETag per entity of a page, no allocation.
    static thread_local std::string etag;
    etag.clear();
    model::AppendETag(etag, e.timestamp);
    AppendJsonString(out, etag);
    out += ',';
  }
  if (full) {
    out += "\"odata.editLink\":";
    AppendJsonString(out, key_path);
    out += ',';
  }
  if (Selected(ctx, "PartitionKey")) {
    out += "\"PartitionKey\":";
    AppendJsonString(out, e.partition_key);
    out += ',';
  }
  if (Selected(ctx, "RowKey")) {
    out += "\"RowKey\":";
    AppendJsonString(out, e.row_key);
    out += ',';
  }
  if (Selected(ctx, "Timestamp")) {
    if (full) out += "\"Timestamp@odata.type\":\"Edm.DateTime\",";
    out += "\"Timestamp\":";
    AppendDateTime(out, e.timestamp);
    out += ',';
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
      out += "null,";
    }
  }
}

void CloseObject(std::string& out) {
  if (!out.empty() && out.back() == ',') {
    out.back() = '}';
  } else {
    out += '}';
  }
}

void AppendTableMembers(std::string& out, std::string_view table, std::string_view base_url,
                        std::string_view account, MetadataLevel level) {
  if (level == MetadataLevel::kFullMetadata) {
    std::string path = "Tables('" + std::string(table) + "')";
    out += "\"odata.type\":";
    AppendJsonString(out, std::string(account) + ".Tables");
    out += ",\"odata.id\":";
    AppendJsonString(out, std::string(base_url) + path);
    out += ",\"odata.editLink\":";
    AppendJsonString(out, path);
    out += ',';
  }
  out += "\"TableName\":";
  AppendJsonString(out, table);
  out += ',';
}

}  // namespace

std::string FormatDouble(double value) {
  std::string s;
  AppendDouble(s, value);
  return s;
}

std::string EntityKeyPath(std::string_view table, std::string_view pk, std::string_view rk) {
  auto encode_key = [](std::string_view key) {
    std::string doubled;
    for (char c : key) {
      doubled += c;
      if (c == '\'') doubled += '\'';
    }
    return PercentEncode(doubled, "'");
  };
  std::string out = PercentEncode(table);
  out += "(PartitionKey='";
  out += encode_key(pk);
  out += "',RowKey='";
  out += encode_key(rk);
  out += "')";
  return out;
}

std::string WriteEntity(const model::Entity& entity, const EntityWriteContext& ctx) {
  std::string out;
  out.reserve(256);
  out += '{';
  if (ctx.level != MetadataLevel::kNoMetadata) {
    out += "\"odata.metadata\":";
    AppendJsonString(out, std::string(ctx.base_url) + "$metadata#" + std::string(ctx.table) + "/@Element" +
                              SelectSuffix(ctx));
    out += ',';
  }
  AppendEntityMembers(out, entity, ctx);
  CloseObject(out);
  return out;
}

std::string WriteEntityFeed(const std::vector<model::Entity>& entities, const EntityWriteContext& ctx) {
  std::string out;
  out.reserve(64 + entities.size() * 256);
  out += '{';
  if (ctx.level != MetadataLevel::kNoMetadata) {
    out += "\"odata.metadata\":";
    AppendJsonString(out, std::string(ctx.base_url) + "$metadata#" + std::string(ctx.table) + SelectSuffix(ctx));
    out += ',';
  }
  out += "\"value\":[";
  for (size_t i = 0; i < entities.size(); ++i) {
    if (i > 0) out += ',';
    out += '{';
    AppendEntityMembers(out, entities[i], ctx);
    CloseObject(out);
  }
  out += "]}";
  return out;
}

std::string WriteTableEntry(std::string_view table, std::string_view base_url, std::string_view account,
                            MetadataLevel level) {
  std::string out = "{";
  if (level != MetadataLevel::kNoMetadata) {
    out += "\"odata.metadata\":";
    AppendJsonString(out, std::string(base_url) + "$metadata#Tables/@Element");
    out += ',';
  }
  AppendTableMembers(out, table, base_url, account, level);
  CloseObject(out);
  return out;
}

std::string WriteTableFeed(const std::vector<std::string>& tables, std::string_view base_url,
                           std::string_view account, MetadataLevel level) {
  std::string out = "{";
  if (level != MetadataLevel::kNoMetadata) {
    out += "\"odata.metadata\":";
    AppendJsonString(out, std::string(base_url) + "$metadata#Tables");
    out += ',';
  }
  out += "\"value\":[";
  for (size_t i = 0; i < tables.size(); ++i) {
    if (i > 0) out += ',';
    out += '{';
    AppendTableMembers(out, tables[i], base_url, account, level);
    CloseObject(out);
  }
  out += "]}";
  return out;
}

}  // namespace tablestone::protocol
