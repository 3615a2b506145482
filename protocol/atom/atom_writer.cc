#include "protocol/atom/atom_writer.h"

#include <cmath>

#include "protocol/atom/atom_reader.h"
#include "protocol/base64.h"
#include "protocol/error_body.h"
#include "storage/model/datetime.h"
#include "storage/model/etag.h"

namespace tablestone::protocol::atom {
namespace {

using model::EdmType;
using model::EdmValue;

constexpr std::string_view kDeclaration = "<?xml version=\"1.0\" encoding=\"utf-8\" standalone=\"yes\"?>";

// The namespace declarations of a document's root element.
void AppendNamespaces(std::string& out, std::string_view base_url) {
  out += " xml:base=\"";
  AppendXmlEscaped(out, base_url);
  out += "\" xmlns:d=\"";
  out += kDataNamespace;
  out += "\" xmlns:m=\"";
  out += kMetadataNamespace;
  out += "\" xmlns=\"";
  out += kAtomNamespace;
  out += '"';
}

void AppendValueText(std::string& out, const EdmValue& v) {
  switch (v.type) {
    case EdmType::kString: AppendXmlEscaped(out, v.text); break;
    case EdmType::kInt32:
    case EdmType::kInt64: out += std::to_string(v.int_value); break;
    case EdmType::kBoolean: out += v.bool_value() ? "true" : "false"; break;
    case EdmType::kDouble:
      // The XML Schema spellings of the non-finite values.
      if (std::isnan(v.double_value)) {
        out += "NaN";
      } else if (std::isinf(v.double_value)) {
        out += v.double_value > 0 ? "INF" : "-INF";
      } else {
        out += FormatDouble(v.double_value);
      }
      break;
    case EdmType::kDateTime: out += model::FormatDateTime7(v.int_value); break;
    case EdmType::kGuid: out += v.text; break;
    case EdmType::kBinary: out += Base64Encode(v.text); break;
  }
}

void AppendProperty(std::string& out, std::string_view name, const EdmValue* value) {
  out += "<d:";
  out += name;
  if (value == nullptr) {
    out += " m:null=\"true\"/>";
    return;
  }
  if (value->type != EdmType::kString) {
    out += " m:type=\"";
    out += model::EdmTypeName(value->type);
    out += '"';
  } else if (!value->text.empty() && (value->text.front() == ' ' || value->text.back() == ' ' ||
                                      value->text.front() == '\t' || value->text.back() == '\t' ||
                                      value->text.front() == '\n' || value->text.back() == '\n')) {
    out += " xml:space=\"preserve\"";
  }
  out += '>';
  AppendValueText(out, *value);
  out += "</d:";
  out += name;
  out += '>';
}

bool Selected(const EntityWriteContext& ctx, std::string_view name) {
  if (ctx.select == nullptr || ctx.select->empty()) return true;
  for (const std::string& s : *ctx.select) {
    if (s == name) return true;
  }
  return false;
}

void AppendId(std::string& out, std::string_view base_url, std::string_view path) {
  out += "<id>";
  AppendXmlEscaped(out, base_url);
  AppendXmlEscaped(out, path);
  out += "</id>";
}

void AppendUpdated(std::string& out, int64_t ticks) {
  out += "<updated>";
  out += model::FormatDateTime7(ticks);
  out += "</updated>";
}

void AppendLink(std::string& out, std::string_view rel, std::string_view title, std::string_view href) {
  out += "<link rel=\"";
  out += rel;
  out += "\" title=\"";
  AppendXmlEscaped(out, title);
  out += "\" href=\"";
  AppendXmlEscaped(out, href);
  out += "\"/>";
}

// <id>, empty <title>, <updated>, <author> and the edit link, shared by entity and table entries.
void AppendEntryHead(std::string& out, std::string_view id_path, std::string_view base_url,
                     std::string_view link_title, int64_t updated_ticks) {
  AppendId(out, base_url, id_path);
  out += "<title type=\"text\"></title>";
  AppendUpdated(out, updated_ticks);
  out += "<author><name/></author>";
  AppendLink(out, "edit", link_title, id_path);
}

void AppendCategory(std::string& out, std::string_view account, std::string_view set) {
  out += "<category term=\"";
  AppendXmlEscaped(out, account);
  out += '.';
  AppendXmlEscaped(out, set);
  out += "\" scheme=\"http://schemas.microsoft.com/ado/2007/08/dataservices/scheme\"/>";
}

// One <entry> element; `root` adds the declaration's namespaces to it.
void AppendEntityEntry(std::string& out, const model::Entity& e, const EntityWriteContext& ctx, bool root) {
  out += "<entry";
  if (root) AppendNamespaces(out, ctx.base_url);
  out += " m:etag=\"";
  AppendXmlEscaped(out, model::FormatETag(e.timestamp));
  out += "\">";
  AppendEntryHead(out, EntityKeyPath(ctx.table, e.partition_key, e.row_key), ctx.base_url, ctx.table, e.timestamp);
  AppendCategory(out, ctx.account, ctx.table);
  out += "<content type=\"application/xml\"><m:properties>";
  const EdmValue pk = EdmValue::String(e.partition_key);
  const EdmValue rk = EdmValue::String(e.row_key);
  const EdmValue ts = EdmValue::DateTime(e.timestamp);
  if (Selected(ctx, "PartitionKey")) AppendProperty(out, "PartitionKey", &pk);
  if (Selected(ctx, "RowKey")) AppendProperty(out, "RowKey", &rk);
  if (Selected(ctx, "Timestamp")) AppendProperty(out, "Timestamp", &ts);
  if (ctx.select == nullptr || ctx.select->empty()) {
    for (const model::Property& p : e.properties) AppendProperty(out, p.name, &p.value);
  } else {
    for (const std::string& name : *ctx.select) {
      if (name == "PartitionKey" || name == "RowKey" || name == "Timestamp") continue;
      const model::Property* p = e.Find(name);
      AppendProperty(out, name, p != nullptr ? &p->value : nullptr);
    }
  }
  out += "</m:properties></content></entry>";
}

void AppendTableEntry(std::string& out, std::string_view table, std::string_view base_url,
                      std::string_view account, int64_t now_ticks, bool root) {
  out += "<entry";
  if (root) AppendNamespaces(out, base_url);
  out += '>';
  std::string path = "Tables('";
  path += table;
  path += "')";
  AppendEntryHead(out, path, base_url, "Tables", now_ticks);
  AppendCategory(out, account, "Tables");
  out += "<content type=\"application/xml\"><m:properties><d:TableName>";
  AppendXmlEscaped(out, table);
  out += "</d:TableName></m:properties></content></entry>";
}

void AppendFeedHead(std::string& out, std::string_view base_url, std::string_view set, int64_t now_ticks) {
  out += kDeclaration;
  out += "<feed";
  AppendNamespaces(out, base_url);
  out += "><title type=\"text\">";
  AppendXmlEscaped(out, set);
  out += "</title>";
  AppendId(out, base_url, set);
  AppendUpdated(out, now_ticks);
  AppendLink(out, "self", set, set);
}

}  // namespace

std::string WriteEntityEntry(const model::Entity& entity, const EntityWriteContext& ctx) {
  std::string out(kDeclaration);
  AppendEntityEntry(out, entity, ctx, /*root=*/true);
  return out;
}

std::string WriteEntityFeed(const std::vector<model::Entity>& entities, const EntityWriteContext& ctx,
                            int64_t now_ticks) {
  std::string out;
  AppendFeedHead(out, ctx.base_url, ctx.table, now_ticks);
  for (const model::Entity& e : entities) AppendEntityEntry(out, e, ctx, /*root=*/false);
  out += "</feed>";
  return out;
}

std::string WriteTableEntry(std::string_view table, std::string_view base_url, std::string_view account,
                            int64_t now_ticks) {
  std::string out(kDeclaration);
  AppendTableEntry(out, table, base_url, account, now_ticks, /*root=*/true);
  return out;
}

std::string WriteTableFeed(const std::vector<std::string>& tables, std::string_view base_url,
                           std::string_view account, int64_t now_ticks) {
  std::string out;
  AppendFeedHead(out, base_url, "Tables", now_ticks);
  for (const std::string& t : tables) AppendTableEntry(out, t, base_url, account, now_ticks, /*root=*/false);
  out += "</feed>";
  return out;
}

}  // namespace tablestone::protocol::atom
