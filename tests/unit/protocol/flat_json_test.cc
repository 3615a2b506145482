#include "protocol/flat_json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

namespace tablestone::protocol {
namespace {

// ParseFlatJsonObject against nlohmann::json, the parser it replaced: the
// reference below is the SAX consumer the product used before, so any body on
// which the two disagree (verdict, error code, members) is a behaviour change.

using Json = nlohmann::json;

class ReferenceSax {
 public:
  using number_integer_t = Json::number_integer_t;
  using number_unsigned_t = Json::number_unsigned_t;
  using number_float_t = Json::number_float_t;
  using string_t = Json::string_t;
  using binary_t = Json::binary_t;

  std::vector<JsonMember> props;
  std::optional<ApiError> error;

  bool null() { return Value(JsonScalar{}); }
  bool boolean(bool v) {
    JsonScalar r;
    r.kind = JsonScalar::Kind::kBool;
    r.b = v;
    return Value(std::move(r));
  }
  bool number_integer(number_integer_t v) {
    JsonScalar r;
    r.kind = JsonScalar::Kind::kInt;
    r.i = v;
    return Value(std::move(r));
  }
  bool number_unsigned(number_unsigned_t v) {
    JsonScalar r;
    if (v <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      r.kind = JsonScalar::Kind::kInt;
      r.i = static_cast<int64_t>(v);
    } else {
      r.kind = JsonScalar::Kind::kUInt;
      r.u = v;
    }
    return Value(std::move(r));
  }
  bool number_float(number_float_t v, const string_t&) {
    JsonScalar r;
    r.kind = JsonScalar::Kind::kFloat;
    r.d = v;
    return Value(std::move(r));
  }
  bool string(string_t& v) {
    JsonScalar r;
    r.kind = JsonScalar::Kind::kString;
    r.s = std::move(v);
    return Value(std::move(r));
  }
  bool binary(binary_t&) { return Fail(ApiError::InvalidInput()); }
  bool start_object(std::size_t) {
    if (depth_++ != 0) return Fail(ApiError::InvalidInput());
    started_ = true;
    return true;
  }
  bool key(string_t& k) {
    if (!names_.insert(k).second) return Fail(ApiError::DuplicatePropertiesSpecified());
    pending_key_ = std::move(k);
    return true;
  }
  bool end_object() {
    --depth_;
    return true;
  }
  bool start_array(std::size_t) { return Fail(ApiError::InvalidInput()); }
  bool end_array() { return Fail(ApiError::InvalidInput()); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    if (!error) error = ApiError::InvalidInput();
    return false;
  }
  bool started() const { return started_; }

 private:
  bool Fail(ApiError e) {
    if (!error) error = std::move(e);
    return false;
  }
  bool Value(JsonScalar v) {
    if (depth_ != 1) return Fail(ApiError::InvalidInput());
    props.push_back({std::move(pending_key_), std::move(v)});
    return true;
  }

  int depth_ = 0;
  bool started_ = false;
  std::string pending_key_;
  std::unordered_set<std::string> names_;
};

ApiResult<std::vector<JsonMember>> ReferenceParse(std::string_view body) {
  ReferenceSax sax;
  bool ok = Json::sax_parse(body.begin(), body.end(), &sax, Json::input_format_t::json, true);
  if (sax.error) return *sax.error;
  if (!ok || !sax.started()) return ApiError::InvalidInput();
  return std::move(sax.props);
}

std::string Describe(const ApiResult<std::vector<JsonMember>>& r) {
  if (!r.ok()) return "error " + r.error().code;
  std::string out = "ok";
  for (const JsonMember& m : *r) {
    out += " [" + m.name + "]=";
    switch (m.value.kind) {
      case JsonScalar::Kind::kNull: out += "null"; break;
      case JsonScalar::Kind::kBool: out += m.value.b ? "true" : "false"; break;
      case JsonScalar::Kind::kInt: out += "i" + std::to_string(m.value.i); break;
      case JsonScalar::Kind::kUInt: out += "u" + std::to_string(m.value.u); break;
      case JsonScalar::Kind::kFloat: {
        uint64_t bits = 0;
        std::memcpy(&bits, &m.value.d, sizeof bits);  // bit-exact, -0.0 included
        out += "f" + std::to_string(bits);
        break;
      }
      case JsonScalar::Kind::kString: out += "s\"" + m.value.s + "\""; break;
    }
  }
  return out;
}

void ExpectSameAsReference(std::string_view body) {
  std::string expected = Describe(ReferenceParse(body));
  std::string actual = Describe(ParseFlatJsonObject(body));
  ASSERT_EQ(actual, expected) << "body: " << testing::PrintToString(std::string(body));
}

TEST(FlatJsonTest, HandPickedEdgeCasesMatchNlohmann) {
  const std::vector<std::string> bodies = {
      "{}", " { } ", "\xEF\xBB\xBF{}", "\xEF\xBB{}", "\xEF{}", " \xEF\xBB\xBF{}", "{}\xEF\xBB\xBF",
      std::string("{}\0garbage", 10), std::string("{\"a\":1\0}", 9), std::string("\0{}", 3),
      "{}x", "{},", "{} {}", "{\"a\":1,}", "{,}", "{\"a\"}", "{\"a\":}", "{\"a\" 1}", "{a:1}",
      "{'a':1}", "{\"a\":1 \"b\":2}", "{\"a\":1,\"a\":2}", "{\"a\":1,\"a\"", "{\"a\":1,\"a\":",
      "{\"a\":{\"b\":1}}", "{\"a\":[]}", "[]", "[1]", "1", "\"s\"", "true", "null", "", " ", "\t\r\n",
      "{\"a\":true,\"b\":false,\"c\":null}", "{\"a\":tru}", "{\"a\":truex}", "{\"a\":nul}", "{\"a\":True}",
      "{\"a\":0}", "{\"a\":-0}", "{\"a\":-0.0}", "{\"a\":01}", "{\"a\":-}", "{\"a\":-a}", "{\"a\":1.}",
      "{\"a\":.5}", "{\"a\":1e}", "{\"a\":1e+}", "{\"a\":1E5}", "{\"a\":1e-5}", "{\"a\":+1}",
      "{\"a\":9223372036854775807}", "{\"a\":9223372036854775808}", "{\"a\":18446744073709551615}",
      "{\"a\":18446744073709551616}", "{\"a\":-9223372036854775808}", "{\"a\":-9223372036854775809}",
      "{\"a\":1e308}", "{\"a\":1e309}", "{\"a\":-1e309}", "{\"a\":1e-400}", "{\"a\":4.9e-324}",
      "{\"a\":0.1}", "{\"a\":123456789012345678901234567890}", "{\"a\":1.7976931348623157e308}",
      "{\"a\":00}", "{\"a\":0e0}", "{\"a\":-01}", "{\"a\":1 }", "{\"a\":NaN}", "{\"a\":Infinity}",
      "{\"a\":\"\\u0000\"}", "{\"a\":\"\\u00e9\\u20AC\"}", "{\"a\":\"\\ud83d\\ude00\"}",
      "{\"a\":\"\\ud83d\"}", "{\"a\":\"\\ud83dx\"}", "{\"a\":\"\\ud83d\\u0041\"}", "{\"a\":\"\\ude00\"}",
      "{\"a\":\"\\u12\"}", "{\"a\":\"\\u12G4\"}", "{\"a\":\"\\x\"}", "{\"a\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"}",
      "{\"a\":\"\t\"}", "{\"a\":\"\x7F\"}", "{\"a\":\"\x1F\"}", "{\"a\":\"", "{\"a\":\"\\",
      "{\"a\":\"\xC3\xA9\"}", "{\"a\":\"\xC3\"}", "{\"a\":\"\xC0\x80\"}", "{\"a\":\"\xC1\xBF\"}",
      "{\"a\":\"\xE0\x80\x80\"}", "{\"a\":\"\xE0\xA0\x80\"}", "{\"a\":\"\xED\xA0\x80\"}",
      "{\"a\":\"\xED\x9F\xBF\"}", "{\"a\":\"\xEF\xBF\xBF\"}", "{\"a\":\"\xF0\x8F\xBF\xBF\"}",
      "{\"a\":\"\xF0\x90\x80\x80\"}", "{\"a\":\"\xF4\x8F\xBF\xBF\"}", "{\"a\":\"\xF4\x90\x80\x80\"}",
      "{\"a\":\"\xF5\x80\x80\x80\"}", "{\"a\":\"\x80\"}", "{\"a\":\"\xFF\"}", "{\"\xC3\xA9\":1}",
      "{\"a\":1}\n", "\n{\"a\":1}", "{\"a\"\n:\n1\n,\n\"b\"\n:\n2}", "{\"a\":1,\"b\":[1,2],\"a\":3}",
      "{\"a\":1,\"a\":[1]}", "{\"a\":[1],\"a\":1}", "{\"\\u0061\":1,\"a\":2}", "{\"a\":1}/*c*/",
      "{\"a\":\"x\"\"y\"}", "{\"a\":1\f}", "{\"a\":1\v}",
  };
  for (const std::string& body : bodies) ExpectSameAsReference(body);
}

// Strings are scanned 8 bytes at a time: a byte that needs a look (quote,
// backslash, control, non-ASCII) at every offset of long runs, in names and
// values, must get the same verdict and result as the reference.
TEST(FlatJsonTest, EveryOffsetOfALongStringMatchesNlohmann) {
  const std::vector<std::string> specials = {"\"", "\\\"", "\\n", "\\u00e9", std::string(1, '\0'), "\x01", "\x1F",
                                             "\x20", "\x7F", "\xC3\xA9", "\xC3", "\xE2\x82\xAC", "\xF0\x9F\x98\x80",
                                             "\x80", "\xFF", "\\", "!", "#", "[", "]"};
  for (const std::string& special : specials) {
    for (size_t at = 0; at <= 24; ++at) {
      std::string text = std::string(at, 'a') + special + std::string(24 - at, 'b');
      ExpectSameAsReference("{\"v\":\"" + text + "\"}");
      ExpectSameAsReference("{\"" + text + "\":1}");
      ExpectSameAsReference("{\"v\":\"" + text);  // unterminated
    }
  }
}

// Random flat-ish objects built from tokens near the grammar's edges, then
// mutated bytewise: both parsers must agree on every one.
TEST(FlatJsonTest, GeneratedAndMutatedBodiesMatchNlohmann) {
  std::mt19937 rng(20261121);
  auto pick = [&rng](const std::vector<std::string>& v) -> const std::string& {
    return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
  };
  const std::vector<std::string> names = {"\"a\"", "\"b\"", "\"PartitionKey\"", "\"RowKey\"", "\"a@odata.type\"",
                                          "\"\\u0061\"", "\"\"", "\"\xC3\xA9\"", "\"x\\\"y\"", "a", "\"c"};
  const std::vector<std::string> values = {
      "1", "-1", "0", "-0", "1.5", "-2.5e3", "1E-2", "9223372036854775807", "9223372036854775808",
      "-9223372036854775808", "-9223372036854775809", "18446744073709551615", "18446744073709551616",
      "1e999", "1e-999", "2.2250738585072011e-308", "4.9e-324", "2.5e-324", "0.30000000000000004",
      "123456789.987654321e-5", "-1.7976931348623159e308", "01", "1.", "-", "true", "false", "null", "tru", "\"s\"", "\"\"", "\"\\n\\t\"",
      "\"\\u00e9\"", "\"\\ud83d\\ude00\"", "\"\\ud83d\"", "\"\xE2\x82\xAC\"", "\"\xED\xA0\x80\"", "{}",
      "[]", "{\"n\":1}", "[1,2]", "\"Edm.Int64\"", "\"unterminated"};
  const std::vector<std::string> separators = {",", ",", ",", ", ", " ,\n", "", ",,", ";"};
  const std::vector<std::string> insertions = {"\"", "\\", "{", "}", "[", ",", ":", " ", std::string(1, '\0'),
                                               "\xC3", "\xEF\xBB\xBF", "e", "-", "0", "u", "\x01"};
  int accepted = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::string body = (rng() % 8 == 0) ? "\xEF\xBB\xBF" : "";
    body += (rng() % 4 == 0) ? " {" : "{";
    int members = static_cast<int>(rng() % 6);
    for (int m = 0; m < members; ++m) {
      if (m > 0) body += pick(separators);
      body += pick(names) + ((rng() % 10 == 0) ? " " : "") + ":" + pick(values);
    }
    body += (rng() % 10 == 0) ? "" : "}";
    if (rng() % 6 == 0) body += pick({" ", "\n", "x", std::string("\0zz", 3), "}", "{}"});
    ExpectSameAsReference(body);
    // Mutations: flip, insert, delete, truncate.
    for (int k = 0; k < 3 && !body.empty(); ++k) {
      std::string mutated = body;
      size_t at = rng() % mutated.size();
      switch (rng() % 4) {
        case 0: mutated[at] = static_cast<char>(rng() % 256); break;
        case 1: mutated.insert(at, pick(insertions)); break;
        case 2: mutated.erase(at, 1 + rng() % 3); break;
        case 3: mutated.resize(at); break;
      }
      ExpectSameAsReference(mutated);
    }
    if (ParseFlatJsonObject(body).ok()) ++accepted;
  }
  // The generator must exercise the accepting path too, not only errors.
  EXPECT_GT(accepted, 2000);
}

TEST(FlatJsonTest, ManyMembersStillFindDuplicates) {
  std::string body = "{";
  for (int i = 0; i < 500; ++i) body += "\"p" + std::to_string(i) + "\":1,";
  body += "\"p7\":2}";
  EXPECT_EQ(ParseFlatJsonObject(body).error().code, "DuplicatePropertiesSpecified");
  ExpectSameAsReference(body);
  body.replace(body.size() - 6, 2, "q7");  // "p7" -> "q7": now unique
  ASSERT_TRUE(ParseFlatJsonObject(body).ok());
  EXPECT_EQ(ParseFlatJsonObject(body)->size(), 501u);
}

TEST(FlatJsonTest, DecodesMembersInOrder) {
  auto r = ParseFlatJsonObject(R"({"s":"a\u00e9\n","i":-7,"u":18446744073709551615,"f":2.5,"b":true,"n":null})");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 6u);
  EXPECT_EQ((*r)[0].name, "s");
  EXPECT_EQ((*r)[0].value.s, "a\xC3\xA9\n");
  EXPECT_EQ((*r)[1].value.kind, JsonScalar::Kind::kInt);
  EXPECT_EQ((*r)[1].value.i, -7);
  EXPECT_EQ((*r)[2].value.kind, JsonScalar::Kind::kUInt);
  EXPECT_EQ((*r)[2].value.u, 18446744073709551615ull);
  EXPECT_EQ((*r)[3].value.kind, JsonScalar::Kind::kFloat);
  EXPECT_EQ((*r)[3].value.d, 2.5);
  EXPECT_TRUE((*r)[4].value.b);
  EXPECT_EQ((*r)[5].value.kind, JsonScalar::Kind::kNull);
}

}  // namespace
}  // namespace tablestone::protocol
