// A minimal, safe XML reader for the few XML bodies the Table service accepts
// (Set Table ACL, Set Table Service Properties), and text escaping for the
// writers. Supported: elements, text, CDATA, the five predefined entities and
// numeric character references, an XML declaration, comments and processing
// instructions (skipped). Attributes are parsed and ignored. Not supported, by
// design: DTDs (<!DOCTYPE ...> is rejected, so no entity expansion attacks),
// namespaces (prefixed names are kept verbatim).
// Work is linear in the input; depth and element count are bounded.
// Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/api_error.h"

namespace tablestone::protocol::xml {

inline constexpr size_t kMaxXmlDepth = 32;
inline constexpr size_t kMaxXmlElements = 10'000;
inline constexpr size_t kMaxXmlBytes = 1 << 20;

struct XmlElement {
  std::string name;
  std::string text;  // concatenated character data directly inside this element
  std::vector<XmlElement> children;

  // First child named `child_name`, or nullptr.
  const XmlElement* Child(std::string_view child_name) const;
  // All children named `child_name`, in document order.
  std::vector<const XmlElement*> Children(std::string_view child_name) const;
};

// Parses a document with exactly one root element. 400 InvalidXmlDocument for
// anything malformed, over the limits, or containing a DTD.
ApiResult<XmlElement> ParseXml(std::string_view document);

// Escapes &, <, >, " and ' for element text and attribute values.
std::string XmlEscape(std::string_view text);

// Text with surrounding XML whitespace removed.
std::string_view TrimXmlSpace(std::string_view text);

}  // namespace tablestone::protocol::xml
