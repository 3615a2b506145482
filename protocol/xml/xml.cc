#include "protocol/xml/xml.h"

#include <cstdint>

#include "protocol/url.h"

namespace tablestone::protocol::xml {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool IsNameStart(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' || c >= 0x80;
}
bool IsNameChar(unsigned char c) {
  return IsNameStart(c) || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

class Parser {
 public:
  explicit Parser(std::string_view doc) : s_(doc) {}

  ApiResult<XmlElement> Run() {
    if (s_.size() > kMaxXmlBytes) return Fail();
    if (s_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;  // UTF-8 BOM
    if (!SkipMisc()) return Fail();
    if (pos_ >= s_.size() || s_[pos_] != '<') return Fail();
    XmlElement root;
    if (!ParseElement(&root, 1)) return Fail();
    if (!SkipMisc() || pos_ != s_.size()) return Fail();
    return root;
  }

 private:
  static ApiError Fail() { return ApiError::InvalidXmlDocument(); }

  bool StartsWith(std::string_view p) const { return s_.substr(pos_, p.size()) == p; }

  void SkipSpace() {
    while (pos_ < s_.size() && IsSpace(s_[pos_])) ++pos_;
  }

  // Skips to just after `terminator`; false if it never comes.
  bool SkipPast(std::string_view terminator) {
    size_t end = s_.find(terminator, pos_);
    if (end == std::string_view::npos) return false;
    pos_ = end + terminator.size();
    return true;
  }

  // Whitespace, comments, the XML declaration and processing instructions
  // around the root element. DOCTYPE is refused.
  bool SkipMisc() {
    while (true) {
      SkipSpace();
      if (StartsWith("<?")) {
        if (!SkipPast("?>")) return false;
      } else if (StartsWith("<!--")) {
        if (!SkipPast("-->")) return false;
      } else if (StartsWith("<!")) {
        return false;  // DOCTYPE or other markup declarations
      } else {
        return true;
      }
    }
  }

  bool ParseName(std::string* out) {
    size_t start = pos_;
    if (pos_ >= s_.size() || !IsNameStart(static_cast<unsigned char>(s_[pos_]))) return false;
    while (pos_ < s_.size() && IsNameChar(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    *out = std::string(s_.substr(start, pos_ - start));
    return true;
  }

  // After '&': one entity or character reference appended to *out.
  bool ParseReference(std::string* out) {
    size_t semi = s_.find(';', pos_);
    if (semi == std::string_view::npos || semi - pos_ > 10) return false;
    std::string_view ref = s_.substr(pos_, semi - pos_);
    pos_ = semi + 1;
    if (ref == "lt") {
      out->push_back('<');
    } else if (ref == "gt") {
      out->push_back('>');
    } else if (ref == "amp") {
      out->push_back('&');
    } else if (ref == "quot") {
      out->push_back('"');
    } else if (ref == "apos") {
      out->push_back('\'');
    } else if (ref.size() >= 2 && ref[0] == '#') {
      uint32_t cp = 0;
      bool hex = ref[1] == 'x';
      std::string_view digits = ref.substr(hex ? 2 : 1);
      if (digits.empty()) return false;
      for (char c : digits) {
        uint32_t d;
        if (c >= '0' && c <= '9') {
          d = static_cast<uint32_t>(c - '0');
        } else if (hex && c >= 'a' && c <= 'f') {
          d = static_cast<uint32_t>(c - 'a' + 10);
        } else if (hex && c >= 'A' && c <= 'F') {
          d = static_cast<uint32_t>(c - 'A' + 10);
        } else {
          return false;
        }
        cp = cp * (hex ? 16 : 10) + d;
        if (cp > 0x10FFFF) return false;
      }
      if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
      AppendUtf8(cp, out);
    } else {
      return false;  // no DTD, so no other entities exist
    }
    return true;
  }

  bool SkipAttributes(bool* self_closing) {
    while (true) {
      SkipSpace();
      if (pos_ >= s_.size()) return false;
      if (s_[pos_] == '>') {
        ++pos_;
        *self_closing = false;
        return true;
      }
      if (StartsWith("/>")) {
        pos_ += 2;
        *self_closing = true;
        return true;
      }
      std::string name;
      if (!ParseName(&name)) return false;
      SkipSpace();
      if (pos_ >= s_.size() || s_[pos_] != '=') return false;
      ++pos_;
      SkipSpace();
      if (pos_ >= s_.size() || (s_[pos_] != '"' && s_[pos_] != '\'')) return false;
      char quote = s_[pos_++];
      size_t close = s_.find(quote, pos_);
      if (close == std::string_view::npos) return false;
      if (s_.substr(pos_, close - pos_).find('<') != std::string_view::npos) return false;
      pos_ = close + 1;
    }
  }

  // At '<' of a start tag.
  bool ParseElement(XmlElement* el, size_t depth) {
    if (depth > kMaxXmlDepth || ++elements_ > kMaxXmlElements) return false;
    ++pos_;  // '<'
    if (!ParseName(&el->name)) return false;
    bool self_closing = false;
    if (!SkipAttributes(&self_closing)) return false;
    if (self_closing) return true;
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '<') {
        if (StartsWith("</")) {
          pos_ += 2;
          std::string close;
          if (!ParseName(&close) || close != el->name) return false;
          SkipSpace();
          if (pos_ >= s_.size() || s_[pos_] != '>') return false;
          ++pos_;
          return true;
        }
        if (StartsWith("<!--")) {
          if (!SkipPast("-->")) return false;
        } else if (StartsWith("<![CDATA[")) {
          pos_ += 9;
          size_t end = s_.find("]]>", pos_);
          if (end == std::string_view::npos) return false;
          el->text.append(s_.substr(pos_, end - pos_));
          pos_ = end + 3;
        } else if (StartsWith("<?")) {
          if (!SkipPast("?>")) return false;
        } else if (StartsWith("<!")) {
          return false;
        } else {
          el->children.emplace_back();
          if (!ParseElement(&el->children.back(), depth + 1)) return false;
        }
      } else if (c == '&') {
        ++pos_;
        if (!ParseReference(&el->text)) return false;
      } else {
        el->text.push_back(c);
        ++pos_;
      }
    }
    return false;  // unterminated element
  }

  std::string_view s_;
  size_t pos_ = 0;
  size_t elements_ = 0;
};

}  // namespace

const XmlElement* XmlElement::Child(std::string_view child_name) const {
  for (const XmlElement& c : children) {
    if (c.name == child_name) return &c;
  }
  return nullptr;
}

std::vector<const XmlElement*> XmlElement::Children(std::string_view child_name) const {
  std::vector<const XmlElement*> out;
  for (const XmlElement& c : children) {
    if (c.name == child_name) out.push_back(&c);
  }
  return out;
}

ApiResult<XmlElement> ParseXml(std::string_view document) { return Parser(document).Run(); }

std::string XmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out.append("&amp;"); break;
      case '<': out.append("&lt;"); break;
      case '>': out.append("&gt;"); break;
      case '"': out.append("&quot;"); break;
      case '\'': out.append("&apos;"); break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::string_view TrimXmlSpace(std::string_view text) {
  while (!text.empty() && IsSpace(text.front())) text.remove_prefix(1);
  while (!text.empty() && IsSpace(text.back())) text.remove_suffix(1);
  return text;
}

}  // namespace tablestone::protocol::xml
