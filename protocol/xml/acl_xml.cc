#include "protocol/xml/acl_xml.h"

#include "protocol/xml/xml.h"
#include "storage/model/datetime.h"

namespace tablestone::protocol::xml {
namespace {

// Text of an optional child; nullopt when missing or blank.
std::optional<std::string> ChildText(const XmlElement& parent, std::string_view name) {
  const XmlElement* c = parent.Child(name);
  if (c == nullptr) return std::nullopt;
  std::string_view text = TrimXmlSpace(c->text);
  if (text.empty()) return std::nullopt;
  return std::string(text);
}

}  // namespace

ApiResult<std::vector<SignedIdentifier>> ParseSignedIdentifiers(std::string_view body) {
  std::vector<SignedIdentifier> out;
  if (TrimXmlSpace(body).empty()) return out;
  auto doc = ParseXml(body);
  if (!doc.ok()) return doc.error();
  if (doc->name != "SignedIdentifiers") return ApiError::InvalidXmlDocument();
  std::vector<const XmlElement*> ids = doc->Children("SignedIdentifier");
  if (ids.size() > kMaxSignedIdentifiers) return ApiError::InvalidXmlDocument();
  for (const XmlElement* el : ids) {
    SignedIdentifier si;
    std::optional<std::string> id = ChildText(*el, "Id");
    if (!id || id->size() > kMaxSignedIdentifierIdLength) return ApiError::InvalidXmlDocument();
    for (const SignedIdentifier& seen : out) {
      if (seen.id == *id) return ApiError::InvalidXmlDocument();
    }
    si.id = std::move(*id);
    if (const XmlElement* policy = el->Child("AccessPolicy")) {
      if (auto start = ChildText(*policy, "Start")) {
        si.start = model::ParseIsoDateTime(*start);
        if (!si.start) return ApiError::InvalidXmlNodeValue();
      }
      if (auto expiry = ChildText(*policy, "Expiry")) {
        si.expiry = model::ParseIsoDateTime(*expiry);
        if (!si.expiry) return ApiError::InvalidXmlNodeValue();
      }
      if (auto permission = ChildText(*policy, "Permission")) {
        for (char c : *permission) {
          if (std::string_view("raud").find(c) == std::string_view::npos) return ApiError::InvalidXmlDocument();
        }
        si.permission = std::move(*permission);
      }
    }
    out.push_back(std::move(si));
  }
  return out;
}

std::string WriteSignedIdentifiers(const std::vector<SignedIdentifier>& identifiers) {
  std::string out = "<?xml version=\"1.0\" encoding=\"utf-8\"?>";
  if (identifiers.empty()) return out + "<SignedIdentifiers />";
  out += "<SignedIdentifiers>";
  for (const SignedIdentifier& si : identifiers) {
    out += "<SignedIdentifier><Id>" + XmlEscape(si.id) + "</Id>";
    if (si.start || si.expiry || si.permission) {
      out += "<AccessPolicy>";
      if (si.start) out += "<Start>" + model::FormatDateTime7(*si.start) + "</Start>";
      if (si.expiry) out += "<Expiry>" + model::FormatDateTime7(*si.expiry) + "</Expiry>";
      if (si.permission) out += "<Permission>" + XmlEscape(*si.permission) + "</Permission>";
      out += "</AccessPolicy>";
    }
    out += "</SignedIdentifier>";
  }
  out += "</SignedIdentifiers>";
  return out;
}

}  // namespace tablestone::protocol::xml
