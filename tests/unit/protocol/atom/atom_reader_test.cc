#include "protocol/atom/atom_reader.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "storage/model/datetime.h"
#include "tests/unit/protocol/cpu_time.h"

namespace tablestone::protocol::atom {
namespace {

using model::EdmType;

// An entry shaped like the Insert Entity request of the 2009-2015 REST
// reference: Atom head, then <content><m:properties> with typed d: elements.
std::string Entry(std::string_view properties) {
  return std::string(
             "<?xml version=\"1.0\" encoding=\"utf-8\" standalone=\"yes\"?>\n"
             "<entry xmlns:d=\"http://schemas.microsoft.com/ado/2007/08/dataservices\"\n"
             "       xmlns:m=\"http://schemas.microsoft.com/ado/2007/08/dataservices/metadata\"\n"
             "       xmlns=\"http://www.w3.org/2005/Atom\">\n"
             "  <title /><updated>2013-05-02T10:11:12Z</updated><author><name /></author><id />\n"
             "  <content type=\"application/xml\">\n    <m:properties>\n") +
         std::string(properties) + "\n    </m:properties>\n  </content>\n</entry>\n";
}

const model::EdmValue& ValueOf(const ParsedEntity& e, std::string_view name) {
  const model::Property* p = e.entity.Find(name);
  EXPECT_NE(p, nullptr) << name;
  static const model::EdmValue kMissing;
  return p != nullptr ? p->value : kMissing;
}

TEST(AtomReader, ReadsTheInsertEntityExampleShape) {
  auto parsed = ParseEntityAtom(Entry(R"(
      <d:City>Lisbon</d:City>
      <d:Visits m:type="Edm.Int32">23</d:Visits>
      <d:Balance m:type="Edm.Double">200.25</d:Balance>
      <d:Photo m:type="Edm.Binary" m:null="true" />
      <d:Code m:type="Edm.Guid">C9DA6455-213D-42C9-9A79-3E9149A57833</d:Code>
      <d:Since m:type="Edm.DateTime">2011-07-10T00:00:00</d:Since>
      <d:Active m:type="Edm.Boolean">true</d:Active>
      <d:Orders m:type="Edm.Int64">255</d:Orders>
      <d:PartitionKey>p1</d:PartitionKey>
      <d:RowKey>r1</d:RowKey>
      <d:Timestamp m:type="Edm.DateTime">0001-01-01T00:00:00</d:Timestamp>)"));
  ASSERT_TRUE(parsed.ok()) << parsed.error().code;
  EXPECT_EQ(parsed->entity.partition_key, "p1");
  EXPECT_EQ(parsed->entity.row_key, "r1");
  EXPECT_TRUE(parsed->has_partition_key && parsed->has_row_key);
  EXPECT_EQ(parsed->entity.properties.size(), 7u);  // Photo is null (absent), Timestamp is the server's
  EXPECT_EQ(ValueOf(*parsed, "City"), model::EdmValue::String("Lisbon"));
  EXPECT_EQ(ValueOf(*parsed, "Visits"), model::EdmValue::Int32(23));
  EXPECT_EQ(ValueOf(*parsed, "Balance"), model::EdmValue::Double(200.25));
  EXPECT_EQ(ValueOf(*parsed, "Code"), model::EdmValue::Guid("c9da6455-213d-42c9-9a79-3e9149a57833"));
  // No zone designator: UTC, as the service read the examples.
  EXPECT_EQ(ValueOf(*parsed, "Since"), model::EdmValue::DateTime(*model::ParseIsoDateTime("2011-07-10T00:00:00Z")));
  EXPECT_EQ(ValueOf(*parsed, "Active"), model::EdmValue::Boolean(true));
  EXPECT_EQ(ValueOf(*parsed, "Orders"), model::EdmValue::Int64(255));
  EXPECT_EQ(parsed->entity.Find("Photo"), nullptr);
}

TEST(AtomReader, BooleanAsOneAndZeroAndUntypedAsString) {
  auto parsed = ParseEntityAtom(Entry(R"(<d:A m:type="Edm.Boolean">1</d:A><d:B m:type="Edm.Boolean"> 0 </d:B>
      <d:C m:type="Edm.Boolean">FALSE</d:C><d:N>42</d:N><d:S xml:space="preserve">  padded &amp; &lt;x&gt; </d:S>
      <d:E></d:E><d:T m:type="Edm.String">7</d:T>)"));
  ASSERT_TRUE(parsed.ok()) << parsed.error().code;
  EXPECT_EQ(ValueOf(*parsed, "A"), model::EdmValue::Boolean(true));
  EXPECT_EQ(ValueOf(*parsed, "B"), model::EdmValue::Boolean(false));
  EXPECT_EQ(ValueOf(*parsed, "C"), model::EdmValue::Boolean(false));
  EXPECT_EQ(ValueOf(*parsed, "N"), model::EdmValue::String("42"));  // untyped = Edm.String
  EXPECT_EQ(ValueOf(*parsed, "S"), model::EdmValue::String("  padded & <x> "));
  EXPECT_EQ(ValueOf(*parsed, "E"), model::EdmValue::String(""));
  EXPECT_EQ(ValueOf(*parsed, "T"), model::EdmValue::String("7"));
}

TEST(AtomReader, DoubleTextForms) {
  auto parsed = ParseEntityAtom(Entry(R"(<d:A m:type="Edm.Double">INF</d:A><d:B m:type="Edm.Double">-INF</d:B>
      <d:C m:type="Edm.Double">NaN</d:C><d:D m:type="Edm.Double">1E+20</d:D><d:E m:type="Edm.Double">10</d:E>
      <d:F m:type="Edm.Double">-0.5e-3</d:F>)"));
  ASSERT_TRUE(parsed.ok()) << parsed.error().code;
  EXPECT_TRUE(std::isinf(ValueOf(*parsed, "A").double_value) && ValueOf(*parsed, "A").double_value > 0);
  EXPECT_TRUE(std::isinf(ValueOf(*parsed, "B").double_value) && ValueOf(*parsed, "B").double_value < 0);
  EXPECT_TRUE(std::isnan(ValueOf(*parsed, "C").double_value));
  EXPECT_EQ(ValueOf(*parsed, "D"), model::EdmValue::Double(1e20));
  EXPECT_EQ(ValueOf(*parsed, "E"), model::EdmValue::Double(10));
  EXPECT_EQ(ValueOf(*parsed, "F"), model::EdmValue::Double(-0.0005));
}

TEST(AtomReader, AnyPrefixesAndAMediaLinkEntry) {
  // The namespaces decide, not the prefixes; m:properties may sit beside <content>.
  auto parsed = ParseEntityAtom(
      "<a:entry xmlns:a=\"http://www.w3.org/2005/Atom\" "
      "xmlns:ds=\"http://schemas.microsoft.com/ado/2007/08/dataservices\" "
      "xmlns:md=\"http://schemas.microsoft.com/ado/2007/08/dataservices/metadata\">"
      "<a:content type=\"application/xml\"/><md:properties><ds:PartitionKey>p</ds:PartitionKey>"
      "<ds:RowKey>r</ds:RowKey><ds:Age md:type=\"Edm.Int32\">3</ds:Age></md:properties></a:entry>");
  ASSERT_TRUE(parsed.ok()) << parsed.error().code;
  EXPECT_EQ(ValueOf(*parsed, "Age"), model::EdmValue::Int32(3));
}

TEST(AtomReader, MalformedAndHostileDocumentsAreInvalidInput) {
  for (const std::string& body : {
           std::string("<entry><content>"),                                   // truncated
           std::string("not xml at all"),                                     // no document
           std::string(""),                                                   // empty
           Entry("<d:A>x</d:B>"),                                             // mismatched tags
           Entry("<d:A>&bogus;</d:A>"),                                       // undefined entity
           std::string("<?xml version=\"1.0\"?><!DOCTYPE e [<!ENTITY x \"y\">]><entry/>"),  // DTD
           std::string("<entry xmlns=\"http://www.w3.org/2005/Atom\"><content/></entry>"),  // no m:properties
           Entry("<d:A><d:B>1</d:B></d:A>"),                                  // nested value
       }) {
    auto parsed = ParseEntityAtom(body);
    ASSERT_FALSE(parsed.ok()) << body;
    EXPECT_EQ(parsed.error().http_status, 400) << body;
    EXPECT_EQ(parsed.error().code, "InvalidInput") << body;
  }
  std::string deep = "<entry xmlns:m=\"http://schemas.microsoft.com/ado/2007/08/dataservices/metadata\">";
  for (int i = 0; i < 40; ++i) deep += "<x>";
  auto parsed = ReadEntryProperties(deep);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().code, "InvalidInput");
}

TEST(AtomReader, ValueErrorsAreTheJsonPathsErrors) {
  auto code_of = [](std::string_view props) {
    auto parsed = ParseEntityAtom(Entry(props));
    return parsed.ok() ? std::string("ok") : parsed.error().code;
  };
  EXPECT_EQ(code_of("<d:A m:type=\"Edm.Int32\">12x</d:A>"), "InvalidInput");
  EXPECT_EQ(code_of("<d:A m:type=\"Edm.Int32\">2147483648</d:A>"), "InvalidInput");
  EXPECT_EQ(code_of("<d:A m:type=\"Edm.Boolean\">yes</d:A>"), "InvalidInput");
  EXPECT_EQ(code_of("<d:A m:type=\"Edm.Guid\">nope</d:A>"), "InvalidInput");
  EXPECT_EQ(code_of("<d:A m:type=\"Edm.Binary\">***</d:A>"), "InvalidInput");
  EXPECT_EQ(code_of("<d:A m:type=\"Edm.Unknown\">1</d:A>"), "InvalidInput");
  EXPECT_EQ(code_of("<d:A>1</d:A><d:A>2</d:A>"), "DuplicatePropertiesSpecified");
  EXPECT_EQ(code_of("<d:PartitionKey m:type=\"Edm.Int32\">1</d:PartitionKey>"), "InvalidInput");  // issue 36
  EXPECT_EQ(code_of("<d:PartitionKey>a/b</d:PartitionKey>"), "OutOfRangeInput");
  EXPECT_EQ(code_of("<d:A m:type=\"Edm.DateTime\">1600-01-01T00:00:00Z</d:A>"), "OutOfRangeInput");
}

TEST(AtomReader, TableNameOfACreateTableEntry) {
  auto name = ParseTableNameAtom(Entry("<d:TableName>mytable</d:TableName>"));
  ASSERT_TRUE(name.ok());
  EXPECT_EQ(*name, "mytable");
  EXPECT_EQ(ParseTableNameAtom(Entry("<d:Other>x</d:Other>")).error().code, "PropertiesNeedValue");
  EXPECT_EQ(ParseTableNameAtom(Entry("<d:TableName m:null=\"true\"/>")).error().code, "PropertiesNeedValue");
  EXPECT_EQ(ParseTableNameAtom("<entry").error().code, "InvalidInput");
}

// Issue 30, item 5: every property was compared with every earlier one
// (80k properties: 16.7 s of CPU on the I/O thread).
TEST(AtomReader, HundredThousandPropertiesAreRefusedInLinearTime) {
  std::string props;
  for (int i = 0; i < 100'000; ++i) props += "<d:p" + std::to_string(i) + ">v</d:p" + std::to_string(i) + ">";
  const std::string body = Entry(props);
  auto [parsed, took] = test_timing::WithThreadCpuSeconds([&] { return ParseEntityAtom(body); });
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().code, "TooManyProperties");
  EXPECT_LT(took, test_timing::Budget(0.25)) << body.size() << " bytes";
}

TEST(AtomReader, NullPropertiesCountAndManyNamesStayLinear) {
  // Null properties are named by the body: they count towards the 255.
  std::string props;
  for (int i = 0; i < 100'000; ++i) props += "<d:n" + std::to_string(i) + " m:null=\"true\"/>";
  auto [parsed, took] = test_timing::WithThreadCpuSeconds([&] { return ParseEntityAtom(Entry(props)); });
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().code, "TooManyProperties");
  EXPECT_LT(took, test_timing::Budget(0.25));
  // Without the limit (Create Table's entry) the whole body is read, in
  // linear time, and a repeated name among many is still found.
  const std::string repeated = Entry(props + "<d:n99999 m:null=\"true\"/>");
  auto [members, took_all] = test_timing::WithThreadCpuSeconds([&] { return ReadEntryProperties(repeated); });
  ASSERT_FALSE(members.ok());
  EXPECT_EQ(members.error().code, "DuplicatePropertiesSpecified");
  EXPECT_LT(took_all, test_timing::Budget(0.5)) << repeated.size() << " bytes";
}

TEST(AtomReader, TwoHundredFiftyFivePropertiesWithTheSystemOnesAreTheLimit) {
  std::string props = "<d:PartitionKey>p</d:PartitionKey><d:RowKey>r</d:RowKey>";
  for (int i = 0; i < 252; ++i) props += "<d:p" + std::to_string(i) + ">v</d:p" + std::to_string(i) + ">";
  EXPECT_TRUE(ParseEntityAtom(Entry(props)).ok());
  // With Timestamp (ignored, but a property of the entry) still 255.
  EXPECT_TRUE(ParseEntityAtom(Entry(props + "<d:Timestamp m:type=\"Edm.DateTime\">2013-05-02T10:11:12Z</d:Timestamp>")).ok());
  auto over = ParseEntityAtom(Entry(props + "<d:p252>v</d:p252>"));
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().code, "TooManyProperties");
  EXPECT_EQ(over.error().http_status, 400);
}

}  // namespace
}  // namespace tablestone::protocol::atom
