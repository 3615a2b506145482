#include <gtest/gtest.h>

#include <string>

#include "protocol/xml/xml.h"

namespace tablestone::protocol::xml {
namespace {

TEST(XmlReaderTest, ParsesElementsTextAndIgnoresAttributes) {
  auto doc = ParseXml(
      "\xEF\xBB\xBF<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<!-- c -->\n"
      "<Root a=\"1\" b='x>y'>\n  <A>one &amp; &lt;two&gt; &quot;&apos; &#65;&#x42;&#xE9;</A><B/><B x=\"\"></B>"
      "<C><![CDATA[<raw>&amp;]]></C><?pi ignored?></Root>\n<!-- tail -->\n");
  ASSERT_TRUE(doc.ok()) << doc.error().code;
  EXPECT_EQ(doc->name, "Root");
  ASSERT_NE(doc->Child("A"), nullptr);
  EXPECT_EQ(doc->Child("A")->text, "one & <two> \"' AB\xC3\xA9");
  EXPECT_EQ(doc->Children("B").size(), 2u);
  EXPECT_EQ(doc->Child("C")->text, "<raw>&amp;");
  EXPECT_EQ(doc->Child("Missing"), nullptr);
  EXPECT_EQ(TrimXmlSpace(doc->text), "");
}

TEST(XmlReaderTest, RejectsMalformedAndDangerousInput) {
  for (const char* bad : {
           "", "   ", "text", "<a>", "<a></b>", "<a></a><b></b>", "<a>&unknown;</a>", "<a>&#0;</a>",
           "<a>&#xD800;</a>", "<a>&#x110000;</a>", "<a>&amp</a>", "<a b></a>", "<a b=c></a>", "<a b=\"<\"></a>",
           "<!DOCTYPE a [<!ENTITY x \"y\">]><a>&x;</a>", "<a><!DOCTYPE x></a>", "<a><![CDATA[x</a>",
           "<a><!-- x</a>", "<?xml version=\"1.0\"", "<1a></1a>", "<a></a>trailing",
       }) {
    auto r = ParseXml(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, "InvalidXmlDocument") << bad;
    EXPECT_EQ(r.error().http_status, 400);
  }
}

TEST(XmlReaderTest, DepthAndSizeLimits) {
  std::string ok, deep;
  for (size_t i = 0; i < kMaxXmlDepth; ++i) ok += "<a>";
  for (size_t i = 0; i < kMaxXmlDepth; ++i) ok += "</a>";
  EXPECT_TRUE(ParseXml(ok).ok());
  for (size_t i = 0; i < kMaxXmlDepth + 1; ++i) deep += "<a>";
  for (size_t i = 0; i < kMaxXmlDepth + 1; ++i) deep += "</a>";
  EXPECT_FALSE(ParseXml(deep).ok());
  // Very deep nesting fails fast without recursion blow-up.
  EXPECT_FALSE(ParseXml(std::string(100000, '<')).ok());
  std::string many = "<r>";
  for (size_t i = 0; i < kMaxXmlElements; ++i) many += "<x/>";
  many += "</r>";
  EXPECT_FALSE(ParseXml(many).ok());
  EXPECT_FALSE(ParseXml("<a>" + std::string(kMaxXmlBytes, 'x') + "</a>").ok());
}

TEST(XmlReaderTest, EscapeRoundTrips) {
  const std::string text = "a<b>&\"c'd\xC3\xA9";
  EXPECT_EQ(XmlEscape(text), "a&lt;b&gt;&amp;&quot;c&apos;d\xC3\xA9");
  auto doc = ParseXml("<t>" + XmlEscape(text) + "</t>");
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(doc->text, text);
}

}  // namespace
}  // namespace tablestone::protocol::xml
