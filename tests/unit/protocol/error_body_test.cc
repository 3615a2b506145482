#include "protocol/error_body.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

namespace tablestone::protocol {
namespace {

// The obvious byte-at-a-time JSON string escaper, as the reference for the
// word-at-a-time scan in AppendJsonString.
std::string ReferenceJsonString(std::string_view text) {
  std::string out = "\"";
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20 || c == 0x7F) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

// Every byte value at every offset of strings long enough to cross several
// 8-byte words, including the bytes right next to the special ones
// (0x1F/0x20, '!'/'#' around '"', '['/']' around '\\', 0x7E/0x80 around DEL).
TEST(AppendJsonStringTest, MatchesBytewiseReferenceForEveryByteAtEveryOffset) {
  for (size_t len : {1u, 7u, 8u, 9u, 16u, 23u}) {
    for (size_t pos = 0; pos < len; ++pos) {
      for (int b = 0; b < 256; ++b) {
        std::string text(len, 'a');
        text[pos] = static_cast<char>(b);
        std::string out = "prefix";
        AppendJsonString(out, text);
        ASSERT_EQ(out, "prefix" + ReferenceJsonString(text)) << "len " << len << " pos " << pos << " byte " << b;
      }
    }
  }
}

TEST(AppendJsonStringTest, EscapesRunsAndKeepsUtf8) {
  const std::string text = "caf\xC3\xA9 \"quoted\"\\path\x01\x7F end of a longer plain tail";
  std::string out;
  AppendJsonString(out, text);
  EXPECT_EQ(out, ReferenceJsonString(text));
  EXPECT_EQ(out.substr(0, 8), "\"caf\xC3\xA9 \\");
  std::string empty;
  AppendJsonString(empty, "");
  EXPECT_EQ(empty, "\"\"");
}

TEST(AppendJsonStringTest, ReplaceModeEscapesValidTextAsCopyModeDoes) {
  const std::string text = "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \"q\"\\\n\t\x01\x7F a longer plain tail";
  std::string copied, replaced;
  AppendJsonString(copied, text);
  AppendJsonString(replaced, text, InvalidUtf8::kReplace);
  EXPECT_EQ(replaced, copied);
}

TEST(AppendJsonStringTest, ReplaceModeTurnsEachInvalidByteIntoUfffd) {
  const struct {
    std::string in;
    std::string want;
  } cases[] = {
      {"\xFF", "\"\\ufffd\""},
      {"a\xC3", "\"a\\ufffd\""},                          // truncated at the end
      {"\xE2\x82x", "\"\\ufffd\\ufffdx\""},                // truncated in the middle
      {"\xC0\xAF", "\"\\ufffd\\ufffd\""},                  // overlong '/'
      {"\xED\xA0\x80", "\"\\ufffd\\ufffd\\ufffd\""},        // a surrogate
      {"\xF4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""},  // above U+10FFFF
      {"\"\x80\n", "\"\\\"\\ufffd\\n\""},
  };
  for (const auto& c : cases) {
    std::string out;
    AppendJsonString(out, c.in, InvalidUtf8::kReplace);
    EXPECT_EQ(out, c.want);
    EXPECT_TRUE(nlohmann::json::accept(out)) << out;
  }
}

// Cosmos DB's message ending, as recorded from the service (error_body.h):
// "RequestID:" on its own line and a final newline, no Time line; a change
// set's part keeps its index prefix and has a blank line before the id.
TEST(ErrorMessageTextTest, CosmosStyle) {
  ApiError error = ApiError::ResourceNotFound();
  EXPECT_EQ(ErrorMessageText(error, "id-1", 0, ErrorMessageStyle::kCosmos),
            error.message + "\nRequestID:id-1\n");
  const std::string storage = ErrorMessageText(error, "id-1", 0);
  EXPECT_NE(storage.find("\nRequestId:id-1\nTime:"), std::string::npos) << storage;
  error.failed_index = 3;
  EXPECT_EQ(ErrorMessageText(error, "id-2", 0, ErrorMessageStyle::kCosmos),
            "3:" + error.message + "\n\nRequestID:id-2\n");
  const nlohmann::json body =
      nlohmann::json::parse(RenderJsonError(error, "id-2", 0, ErrorMessageStyle::kCosmos));
  EXPECT_EQ(body["odata.error"]["code"], error.code);
  EXPECT_EQ(body["odata.error"]["message"]["lang"], "en-us");
  EXPECT_EQ(body["odata.error"]["message"]["value"], "3:" + error.message + "\n\nRequestID:id-2\n");
  EXPECT_EQ(nlohmann::json::parse(RenderJsonError(error, "id-2", 0))["odata.error"]["message"]["lang"], "en-US");
}

}  // namespace
}  // namespace tablestone::protocol
