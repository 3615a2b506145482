#include "protocol/atom/atom_reader.h"

#include <expat.h>

#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>

#include "storage/model/limits.h"

namespace tablestone::protocol::atom {
namespace {

// Expat reports a namespaced name as "<namespace URI> <local name>".
constexpr char kNsSeparator = ' ';

bool InNamespace(std::string_view expat_name, std::string_view ns, std::string_view* local) {
  if (expat_name.size() <= ns.size() || expat_name.substr(0, ns.size()) != ns ||
      expat_name[ns.size()] != kNsSeparator) {
    return false;
  }
  *local = expat_name.substr(ns.size() + 1);
  return true;
}

std::string_view TrimXmlSpace(std::string_view s) {
  const size_t first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

// The state of one parse, shared by the expat callbacks.
class PropertiesReader {
 public:
  PropertiesReader(XML_Parser parser, size_t max_properties) : parser_(parser), max_properties_(max_properties) {}

  static void OnStart(void* self, const XML_Char* name, const XML_Char** attrs) {
    static_cast<PropertiesReader*>(self)->Start(name, attrs);
  }
  static void OnEnd(void* self, const XML_Char*) { static_cast<PropertiesReader*>(self)->End(); }
  static void OnText(void* self, const XML_Char* text, int len) {
    auto* r = static_cast<PropertiesReader*>(self);
    if (r->property_) r->property_->text.append(text, static_cast<size_t>(len));
  }
  static void OnDoctype(void* self, const XML_Char*, const XML_Char*, const XML_Char*, int) {
    static_cast<PropertiesReader*>(self)->Fail(ApiError::InvalidInput());
  }

  ApiResult<std::vector<JsonMember>> Finish(bool parsed) {
    if (error_) return *error_;
    if (!parsed || !saw_properties_) return ApiError::InvalidInput();
    return std::move(members_);
  }

 private:
  struct OpenProperty {
    std::string name;
    std::optional<std::string> type;
    bool is_null = false;
    std::string text;
  };

  void Fail(ApiError error) {
    if (!error_) error_ = std::move(error);
    XML_StopParser(parser_, XML_FALSE);
  }

  void Start(std::string_view name, const XML_Char** attrs) {
    if (++depth_ > kMaxAtomDepth) return Fail(ApiError::InvalidInput());
    std::string_view local;
    if (property_) return Fail(ApiError::InvalidInput());  // property values are flat
    if (properties_depth_ != 0 && depth_ == properties_depth_ + 1) {
      if (!InNamespace(name, kDataNamespace, &local)) return;  // foreign elements are ignored
      OpenProperty p;
      p.name = std::string(local);
      for (const XML_Char** a = attrs; a[0] != nullptr; a += 2) {
        std::string_view attr;
        if (!InNamespace(a[0], kMetadataNamespace, &attr)) continue;
        if (attr == "type") p.type = std::string(a[1]);
        if (attr == "null") p.is_null = TrimXmlSpace(a[1]) == "true";
      }
      property_ = std::move(p);
      return;
    }
    // The first m:properties, wherever it is (inside <content>, or beside it
    // in a media-link entry).
    if (!saw_properties_ && InNamespace(name, kMetadataNamespace, &local) && local == "properties") {
      saw_properties_ = true;
      properties_depth_ = depth_;
    }
  }

  void End() {
    if (property_ && depth_ == properties_depth_ + 1) {
      AddMember(std::move(*property_));
      property_.reset();
    } else if (depth_ == properties_depth_) {
      properties_depth_ = 0;
    }
    --depth_;
  }

  // Constant time per property (a set of the names seen), so that a body of
  // any size costs time linear in it (fuzz_entity_scaling).
  void AddMember(OpenProperty p) {
    if (!names_.insert(p.name).second) return Fail(ApiError::DuplicatePropertiesSpecified());
    // More properties than an entity can hold: no need to read the rest.
    if (names_.size() > max_properties_) return Fail(ApiError::TooManyProperties());
    JsonScalar value;
    if (p.is_null) {
      value.kind = JsonScalar::Kind::kNull;
    } else if (!p.type || *p.type == "Edm.String") {
      value.kind = JsonScalar::Kind::kString;
      value.s = std::move(p.text);
    } else {
      std::string_view text = TrimXmlSpace(p.text);
      if (*p.type == "Edm.Boolean" && (text == "1" || text == "0")) {
        value.kind = JsonScalar::Kind::kBool;
        value.b = text == "1";
      } else {
        value.kind = JsonScalar::Kind::kString;
        value.s = std::string(text);
      }
    }
    if (p.type) {
      JsonMember annotation;
      annotation.name = p.name + "@odata.type";
      annotation.value.kind = JsonScalar::Kind::kString;
      annotation.value.s = std::move(*p.type);
      members_.push_back(std::move(annotation));
    }
    members_.push_back(JsonMember{std::move(p.name), std::move(value)});
  }

  XML_Parser parser_;
  std::optional<ApiError> error_;
  size_t depth_ = 0;
  size_t properties_depth_ = 0;  // 0 = not inside m:properties
  bool saw_properties_ = false;
  std::optional<OpenProperty> property_;
  std::vector<JsonMember> members_;
  std::unordered_set<std::string> names_;  // of the properties in members_
  const size_t max_properties_;
};

}  // namespace

ApiResult<std::vector<JsonMember>> ReadEntryProperties(std::string_view body, size_t max_properties) {
  if (body.size() > static_cast<size_t>(std::numeric_limits<int>::max())) return ApiError::InvalidInput();
  std::unique_ptr<XML_ParserStruct, decltype(&XML_ParserFree)> parser(XML_ParserCreateNS(nullptr, kNsSeparator),
                                                                      &XML_ParserFree);
  if (!parser) return ApiError::InternalError();
  PropertiesReader reader(parser.get(), max_properties);
  XML_SetUserData(parser.get(), &reader);
  XML_SetElementHandler(parser.get(), &PropertiesReader::OnStart, &PropertiesReader::OnEnd);
  XML_SetCharacterDataHandler(parser.get(), &PropertiesReader::OnText);
  XML_SetStartDoctypeDeclHandler(parser.get(), &PropertiesReader::OnDoctype);
  const bool parsed =
      XML_Parse(parser.get(), body.data(), static_cast<int>(body.size()), XML_TRUE) == XML_STATUS_OK;
  return reader.Finish(parsed);
}

ApiResult<ParsedEntity> ParseEntityAtom(std::string_view body) {
  auto members = ReadEntryProperties(body, model::kMaxProperties);
  if (!members.ok()) return members.error();
  return EntityFromMembers(std::move(members).value());
}

ApiResult<std::string> ParseTableNameAtom(std::string_view body) {
  auto members = ReadEntryProperties(body);
  if (!members.ok()) return members.error();
  for (JsonMember& m : *members) {
    if (m.name != "TableName") continue;
    if (m.value.kind != JsonScalar::Kind::kString) break;
    return std::move(m.value.s);
  }
  return ApiError::PropertiesNeedValue();
}

}  // namespace tablestone::protocol::atom
