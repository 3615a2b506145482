#include "tools/export_format.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <string_view>

#include "protocol/base64.h"
#include "protocol/error_body.h"
#include "protocol/odata_json.h"
#include "protocol/odata_writer.h"
#include "storage/model/datetime.h"

namespace tablestone::tools {
namespace {

using model::EdmType;
using model::EdmValue;

constexpr std::string_view kTypeSuffix = "@odata.type";

void AppendString(std::string_view text, std::string* out) {
  size_t at = out->size();
  out->resize(at + protocol::JsonStringMaxSize(text.size()));
  char* end = protocol::WriteJsonString(out->data() + at, text);
  out->resize(static_cast<size_t>(end - out->data()));
}

void AppendValue(const EdmValue& v, std::string* out) {
  switch (v.type) {
    case EdmType::kString:
    case EdmType::kGuid:
      AppendString(v.text, out);
      return;
    case EdmType::kBinary:
      AppendString(protocol::Base64Encode(v.text), out);
      return;
    case EdmType::kInt32:
      out->append(std::to_string(v.int_value));
      return;
    case EdmType::kInt64:
      out->push_back('"');
      out->append(std::to_string(v.int_value));
      out->push_back('"');
      return;
    case EdmType::kBoolean:
      out->append(v.bool_value() ? "true" : "false");
      return;
    case EdmType::kDateTime:
      out->push_back('"');
      out->append(model::FormatDateTime7(v.int_value));
      out->push_back('"');
      return;
    case EdmType::kDouble:
      if (std::isnan(v.double_value)) {
        out->append("\"NaN\"");
      } else if (std::isinf(v.double_value)) {
        out->append(v.double_value > 0 ? "\"Infinity\"" : "\"-Infinity\"");
      } else {
        out->append(protocol::FormatDouble(v.double_value));
      }
      return;
  }
}

bool IsCanonicalGuid(std::string_view s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
    } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
      return false;
    }
  }
  return true;
}

// The type of a value without an annotation, as the service infers it for an
// Insert Entity body (Learn: payload-format-for-table-service-operations):
// true/false Boolean, an integer within 32 bits Int32, any other number
// Double, a string String. The writer annotates every non-string, so this only
// matters for files written by hand or by other tools.
EdmType UnannotatedType(const protocol::JsonScalar& j) {
  using Kind = protocol::JsonScalar::Kind;
  switch (j.kind) {
    case Kind::kBool: return EdmType::kBoolean;
    case Kind::kInt:
      return j.i >= std::numeric_limits<int32_t>::min() && j.i <= std::numeric_limits<int32_t>::max()
                 ? EdmType::kInt32
                 : EdmType::kDouble;
    case Kind::kUInt:
    case Kind::kFloat: return EdmType::kDouble;
    default: return EdmType::kString;
  }
}

// JSON value + declared type -> EdmValue.
bool ToValue(const protocol::JsonScalar& j, EdmType type, std::string_view name, EdmValue* out, std::string* error) {
  using Kind = protocol::JsonScalar::Kind;
  auto bad = [&](std::string_view why) {
    *error = "property '" + std::string(name) + "' (" + std::string(model::EdmTypeName(type)) + "): " +
             std::string(why);
    return false;
  };
  switch (type) {
    case EdmType::kString:
      if (j.kind != Kind::kString) return bad("not a JSON string");
      *out = EdmValue::String(j.s);
      return true;
    case EdmType::kGuid:
      if (j.kind != Kind::kString || !IsCanonicalGuid(j.s)) return bad("not a GUID");
      {
        std::string g = j.s;
        for (char& c : g) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        *out = EdmValue::Guid(std::move(g));
      }
      return true;
    case EdmType::kBinary: {
      if (j.kind != Kind::kString) return bad("not a base64 string");
      auto bytes = protocol::Base64Decode(j.s);
      if (!bytes) return bad("not valid base64");
      *out = EdmValue::Binary(std::move(*bytes));
      return true;
    }
    case EdmType::kInt32:
      if (j.kind != Kind::kInt || j.i < std::numeric_limits<int32_t>::min() ||
          j.i > std::numeric_limits<int32_t>::max()) {
        return bad("not a 32-bit integer");
      }
      *out = EdmValue::Int32(static_cast<int32_t>(j.i));
      return true;
    case EdmType::kInt64: {
      if (j.kind != Kind::kString) return bad("not a decimal string");
      int64_t v = 0;
      auto [p, ec] = std::from_chars(j.s.data(), j.s.data() + j.s.size(), v);
      if (ec != std::errc() || p != j.s.data() + j.s.size() || j.s.empty()) return bad("not a 64-bit integer");
      *out = EdmValue::Int64(v);
      return true;
    }
    case EdmType::kBoolean:
      if (j.kind != Kind::kBool) return bad("not true or false");
      *out = EdmValue::Boolean(j.b);
      return true;
    case EdmType::kDateTime: {
      if (j.kind != Kind::kString) return bad("not a date-time string");
      auto ticks = model::ParseIsoDateTime(j.s);
      if (!ticks || *ticks < model::kMinDateTimeTicks || *ticks > model::kMaxDateTimeTicks) {
        return bad("not a date-time in 1601..9999");
      }
      *out = EdmValue::DateTime(*ticks);
      return true;
    }
    case EdmType::kDouble:
      switch (j.kind) {
        case Kind::kInt: *out = EdmValue::Double(static_cast<double>(j.i)); return true;
        case Kind::kUInt: *out = EdmValue::Double(static_cast<double>(j.u)); return true;
        case Kind::kFloat: *out = EdmValue::Double(j.d); return true;
        case Kind::kString:
          if (j.s == "NaN") {
            *out = EdmValue::Double(std::numeric_limits<double>::quiet_NaN());
          } else if (j.s == "Infinity") {
            *out = EdmValue::Double(std::numeric_limits<double>::infinity());
          } else if (j.s == "-Infinity") {
            *out = EdmValue::Double(-std::numeric_limits<double>::infinity());
          } else {
            return bad("not a number, \"NaN\", \"Infinity\" or \"-Infinity\"");
          }
          return true;
        default: return bad("not a number");
      }
  }
  return bad("unknown type");
}

bool DecodeControl(const std::vector<protocol::JsonMember>& members, DecodedLine* out, std::string* error) {
  using Kind = protocol::JsonScalar::Kind;
  const std::string& first = members.front().name;
  if (first == "@format") {
    const protocol::JsonScalar* format = nullptr;
    const protocol::JsonScalar* version = nullptr;
    const protocol::JsonScalar* table = nullptr;
    const protocol::JsonScalar* source = nullptr;
    for (const auto& m : members) {
      if (m.name == "@format") format = &m.value;
      if (m.name == "@version") version = &m.value;
      if (m.name == "@table") table = &m.value;
      if (m.name == "@source") source = &m.value;
    }
    if (format->kind != Kind::kString || format->s != kExportFormatName) {
      *error = "not a tablestone export file (\"@format\" is not \"tablestone-export\")";
      return false;
    }
    if (version == nullptr || version->kind != Kind::kInt || version->i < 1) {
      *error = "header without a valid \"@version\"";
      return false;
    }
    if (version->i > kExportFormatVersion) {
      *error = "export format version " + std::to_string(version->i) + " is newer than this tablestone reads (" +
               std::to_string(kExportFormatVersion) + "); use a newer tablestone";
      return false;
    }
    if (table == nullptr || table->kind != Kind::kString || table->s.empty()) {
      *error = "header without a table name (\"@table\")";
      return false;
    }
    out->kind = DecodedLine::Kind::kHeader;
    out->header.table = table->s;
    out->header.source = source != nullptr && source->kind == Kind::kString ? source->s : std::string();
    out->header.version = static_cast<int>(version->i);
    return true;
  }
  if (first == "@end") {
    const protocol::JsonScalar* count = nullptr;
    for (const auto& m : members) {
      if (m.name == "@entities") count = &m.value;
    }
    if (members.front().value.kind != Kind::kString || count == nullptr || count->kind != Kind::kInt ||
        count->i < 0) {
      *error = "malformed end line (needs \"@end\":TABLE and \"@entities\":N)";
      return false;
    }
    out->kind = DecodedLine::Kind::kEnd;
    out->end.table = members.front().value.s;
    out->end.entities = static_cast<uint64_t>(count->i);
    return true;
  }
  *error = "unknown control line \"" + first + "\"";
  return false;
}

}  // namespace

void AppendHeaderLine(const SectionHeader& header, std::string* out) {
  out->append("{\"@format\":\"");
  out->append(kExportFormatName);
  out->append("\",\"@version\":");
  out->append(std::to_string(header.version));
  out->append(",\"@table\":");
  AppendString(header.table, out);
  out->append(",\"@source\":");
  AppendString(header.source, out);
  out->push_back('}');
}

void AppendEndLine(const SectionEnd& end, std::string* out) {
  out->append("{\"@end\":");
  AppendString(end.table, out);
  out->append(",\"@entities\":");
  out->append(std::to_string(end.entities));
  out->push_back('}');
}

void AppendEntityLine(const model::Entity& entity, std::string* out) {
  out->append("{\"PartitionKey\":");
  AppendString(entity.partition_key, out);
  out->append(",\"RowKey\":");
  AppendString(entity.row_key, out);
  for (const model::Property& p : entity.properties) {
    out->push_back(',');
    if (p.value.type != EdmType::kString) {
      // Property names are C# identifiers (no quotes or escapes), but write
      // them through the escaper anyway: a file is read by other tools too.
      AppendString(p.name + std::string(kTypeSuffix), out);
      out->append(":\"");
      out->append(model::EdmTypeName(p.value.type));
      out->append("\",");
    }
    AppendString(p.name, out);
    out->push_back(':');
    AppendValue(p.value, out);
  }
  out->push_back('}');
}

bool DecodeLine(std::string_view line, DecodedLine* out, std::string* error) {
  auto parsed = protocol::ParseFlatJsonObject(line);
  if (!parsed.ok()) {
    *error = "not a JSON object: " + parsed.error().message;
    return false;
  }
  const std::vector<protocol::JsonMember>& members = parsed.value();
  if (members.empty()) {
    *error = "empty JSON object";
    return false;
  }
  if (!members.front().name.empty() && members.front().name[0] == '@') return DecodeControl(members, out, error);

  out->kind = DecodedLine::Kind::kEntity;
  model::Entity& e = out->entity;
  e = model::Entity{};
  std::map<std::string_view, EdmType> types;
  for (const auto& m : members) {
    std::string_view name = m.name;
    if (name.size() > kTypeSuffix.size() && name.ends_with(kTypeSuffix)) {
      std::string_view prop = name.substr(0, name.size() - kTypeSuffix.size());
      if (prop == "Timestamp") continue;
      std::optional<EdmType> type;
      if (m.value.kind == protocol::JsonScalar::Kind::kString) type = model::EdmTypeFromName(m.value.s);
      if (!type) {
        *error = "property '" + std::string(prop) + "' has an unknown Edm type";
        return false;
      }
      types[prop] = *type;
    }
  }
  bool has_pk = false;
  bool has_rk = false;
  for (const auto& m : members) {
    std::string_view name = m.name;
    if (name.size() > kTypeSuffix.size() && name.ends_with(kTypeSuffix)) continue;
    if (name == "Timestamp") continue;  // assigned by the target, as the service ignores it on write
    if (name == "PartitionKey" || name == "RowKey") {
      if (m.value.kind != protocol::JsonScalar::Kind::kString) {
        *error = std::string(name) + " is not a string";
        return false;
      }
      (name == "PartitionKey" ? e.partition_key : e.row_key) = m.value.s;
      (name == "PartitionKey" ? has_pk : has_rk) = true;
      continue;
    }
    auto it = types.find(name);
    EdmType type = it == types.end() ? UnannotatedType(m.value) : it->second;
    model::Property p;
    p.name = m.name;
    if (!ToValue(m.value, type, name, &p.value, error)) return false;
    e.properties.push_back(std::move(p));
  }
  for (const auto& [name, type] : types) {
    if (name == "PartitionKey" || name == "RowKey" || e.Find(name) == nullptr) {
      *error = "type annotation for '" + std::string(name) + "' without its value";
      return false;
    }
  }
  if (!has_pk || !has_rk) {
    *error = "entity line without PartitionKey or RowKey";
    return false;
  }
  return true;
}

bool SectionChecker::Feed(std::string_view line, DecodedLine* out, std::string* error) {
  ++line_;
  std::string why;
  auto fail = [&](const std::string& message) {
    *error = "line " + std::to_string(line_) + ": " + message;
    return false;
  };
  if (!DecodeLine(line, out, &why)) return fail(why);
  switch (out->kind) {
    case DecodedLine::Kind::kHeader:
      if (in_section_) return fail("header of table '" + out->header.table + "' before the end of table '" + table_ + "'");
      in_section_ = true;
      table_ = out->header.table;
      count_ = 0;
      return true;
    case DecodedLine::Kind::kEntity:
      if (!in_section_) return fail("entity outside a table section (no header line before it)");
      ++count_;
      return true;
    case DecodedLine::Kind::kEnd:
      if (!in_section_) return fail("end line without a header line");
      if (out->end.table != table_) return fail("end line of table '" + out->end.table + "' in section '" + table_ + "'");
      if (out->end.entities != count_) {
        return fail("end line counts " + std::to_string(out->end.entities) + " entities of table '" + table_ +
                    "', the section holds " + std::to_string(count_));
      }
      in_section_ = false;
      ++sections_;
      return true;
  }
  return true;
}

bool SectionChecker::Finish(std::string* error) const {
  if (in_section_) {
    *error = "file ends inside the section of table '" + table_ + "' after " + std::to_string(count_) +
             " entities (truncated?)";
    return false;
  }
  if (sections_ == 0) {
    *error = "file holds no table section";
    return false;
  }
  return true;
}

}  // namespace tablestone::tools
