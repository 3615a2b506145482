// The framing rules of server/http/framing.h (RFC 9112 section 6) and the
// response-header guard of the session (DropUnsafeHeaderFields), as pure
// functions. The same rules over real sockets: tests/reliability/hostile_test.py.
#include "server/http/framing.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "server/http/response_head.h"

namespace tablestone::http {
namespace {

FramingError Check(std::vector<FieldView> fields, unsigned version = 11) {
  return CheckRequestFraming(version, fields);
}

TEST(FramingTest, PlainRequestsPass) {
  EXPECT_EQ(Check({{"Host", "127.0.0.1:10002"}}), FramingError::kNone);
  EXPECT_EQ(Check({{"Host", "x"}, {"Content-Length", "12"}}), FramingError::kNone);
  EXPECT_EQ(Check({{"host", "x"}, {"transfer-encoding", "Chunked"}}), FramingError::kNone);
  // Empty list elements are ignored (RFC 9110 section 5.6.1).
  EXPECT_EQ(Check({{"Host", "x"}, {"Transfer-Encoding", " , chunked"}}), FramingError::kNone);
  // HTTP/1.0 needs no Host.
  EXPECT_EQ(Check({}, 10), FramingError::kNone);
}

TEST(FramingTest, TransferEncodingMustBeExactlyChunked) {
  for (const char* te : {"chunked, identity", "identity", "gzip", "gzip, chunked", "chunked, chunked", "", " "}) {
    EXPECT_EQ(Check({{"Host", "x"}, {"Transfer-Encoding", te}}), FramingError::kBadTransferEncoding) << te;
  }
  // Split over two fields: the same list.
  EXPECT_EQ(Check({{"Host", "x"}, {"Transfer-Encoding", "chunked"}, {"Transfer-Encoding", "identity"}}),
            FramingError::kBadTransferEncoding);
  EXPECT_EQ(Check({{"Host", "x"}, {"Transfer-Encoding", "chunked"}, {"Transfer-Encoding", "chunked"}}),
            FramingError::kBadTransferEncoding);
}

// RFC 9112 section 6.1: Transfer-Encoding in an HTTP/1.0 message is faulty
// framing, with or without Content-Length (issue 30, item 9).
TEST(FramingTest, TransferEncodingInHttp10IsFaulty) {
  EXPECT_EQ(Check({{"Transfer-Encoding", "chunked"}}, 10), FramingError::kTransferEncodingInHttp10);
  EXPECT_EQ(Check({{"Host", "x"}, {"Transfer-Encoding", "chunked"}}, 10), FramingError::kTransferEncodingInHttp10);
  EXPECT_EQ(Check({{"Transfer-Encoding", "chunked"}, {"Content-Length", "5"}}, 10),
            FramingError::kTransferEncodingInHttp10);
  EXPECT_EQ(Check({{"Content-Length", "5"}}, 10), FramingError::kNone);
  EXPECT_EQ(Check({{"Host", "x"}, {"Transfer-Encoding", "chunked"}}, 11), FramingError::kNone);
  EXPECT_NE(FramingErrorText(FramingError::kTransferEncodingInHttp10), "unknown");
}

TEST(FramingTest, TransferEncodingWithContentLengthIsRefused) {
  EXPECT_EQ(Check({{"Host", "x"}, {"Transfer-Encoding", "chunked"}, {"Content-Length", "5"}}),
            FramingError::kTransferEncodingWithContentLength);
  EXPECT_EQ(Check({{"Host", "x"}, {"Content-Length", "5"}, {"Transfer-Encoding", "chunked"}}),
            FramingError::kTransferEncodingWithContentLength);
  // The finding of issue 22: an unknown final coding plus Content-Length.
  EXPECT_NE(Check({{"Host", "x"}, {"Transfer-Encoding", "chunked, identity"}, {"Content-Length", "5"}}),
            FramingError::kNone);
}

TEST(FramingTest, ContentLengthMustBeOneNumber) {
  EXPECT_EQ(Check({{"Host", "x"}, {"Content-Length", "5"}, {"Content-Length", "5"}}), FramingError::kBadContentLength);
  EXPECT_EQ(Check({{"Host", "x"}, {"Content-Length", "5"}, {"Content-Length", "6"}}), FramingError::kBadContentLength);
  EXPECT_EQ(Check({{"Host", "x"}, {"Content-Length", "5, 5"}}), FramingError::kBadContentLength);
  for (const char* cl : {"", "-1", "+5", "0x10", "5 5", "99999999999999999999"}) {
    EXPECT_EQ(Check({{"Host", "x"}, {"Content-Length", cl}}), FramingError::kBadContentLength) << cl;
  }
}

TEST(FramingTest, Http11NeedsExactlyOneHost) {
  EXPECT_EQ(Check({}), FramingError::kHostCount);
  EXPECT_EQ(Check({{"Host", "a"}, {"Host", "b"}}), FramingError::kHostCount);
  EXPECT_EQ(Check({{"Host", "a"}, {"Host", "a"}}), FramingError::kHostCount);
  EXPECT_EQ(Check({{"Host", "a"}, {"Host", "b"}}, 10), FramingError::kNone);
}

TEST(FramingTest, HostMustBeHostAndPort) {
  for (const char* ok : {"", "localhost", "127.0.0.1", "127.0.0.1:10002", "[::1]", "[::1]:10002",
                         "devstoreaccount1.table.localhost:8080", "a%41b", "host:"}) {
    EXPECT_TRUE(IsValidHostValue(ok)) << ok;
  }
  for (const char* bad : {"a/b", "a b", "a\"b", "evil.com/x?y#", ":80", "[::1", "[zz]", "h:123456", "h:8o",
                          "a%4", "a%zz", "a<b>", "user@host", "[::1]x"}) {
    EXPECT_FALSE(IsValidHostValue(bad)) << bad;
  }
  EXPECT_EQ(Check({{"Host", "evil\"}, {\"x"}}), FramingError::kBadHost);
  EXPECT_EQ(Check({{"Host", "x/y"}}, 10), FramingError::kBadHost);
}

TEST(FramingTest, BeastFieldsOverloadAgrees) {
  boost::beast::http::fields fields;
  fields.insert("Host", "x");
  fields.insert("Transfer-Encoding", "chunked, identity");
  fields.insert("Content-Length", "3");
  EXPECT_NE(CheckRequestFraming(11, fields), FramingError::kNone);
  boost::beast::http::fields good;
  good.insert("Host", "x");
  good.insert("Content-Length", "3");
  EXPECT_EQ(CheckRequestFraming(11, good), FramingError::kNone);
}

// The Beast overload looks only at the fields Beast names Content-Length,
// Transfer-Encoding and Host: the same answer as the name-by-name check, for
// names in any case and among other fields.
TEST(FramingTest, BeastFieldsOverloadAgreesWhateverTheCaseOfTheNames) {
  const std::vector<std::vector<FieldView>> cases = {
      {{"HOST", "x"}, {"content-length", "3"}, {"CONTENT-LENGTH", "3"}},
      {{"hOsT", "x"}, {"TRANSFER-encoding", "chunked"}, {"Content-length", "1"}},
      {{"x-ms-version", "2019-02-02"}, {"host", "a b"}},
      {{"Accept", "application/json"}, {"HOST", "x"}, {"Host", "y"}},
      {{"Accept", "application/json"}, {"x-host", "x"}, {"content-lengths", "z"}},
      {{"host", "x"}, {"transfer-encoding", "gzip"}, {"Authorization", "SharedKey a:b"}},
      {{"Host", "127.0.0.1:10002"}, {"Content-Length", "12"}, {"Content-Type", "application/json"}},
  };
  int refused = 0;
  for (const auto& fields_case : cases) {
    boost::beast::http::fields fields;
    for (const FieldView& f : fields_case) {
      fields.insert(boost::beast::string_view(f.name.data(), f.name.size()),
                    boost::beast::string_view(f.value.data(), f.value.size()));
    }
    for (unsigned version : {10u, 11u}) {
      const FramingError by_beast = CheckRequestFraming(version, fields);
      EXPECT_EQ(by_beast, Check(fields_case, version))
          << fields_case.front().name << ": " << fields_case.front().value << ", HTTP/1." << version % 10;
      refused += version == 11 && by_beast != FramingError::kNone;
    }
  }
  EXPECT_EQ(refused, 6);  // all but the last: not a comparison of two passes
}

TEST(DropUnsafeHeaderFieldsTest, RemovesOnlyFieldsWithLineBreaks) {
  Response response;
  response.set("x-ms-request-id", "abc");
  response.set("Access-Control-Expose-Headers", "x-a\r\nSet-Cookie: s=1");
  response.set("X-Lf", "a\nb");
  response.set("X-Nul", std::string("a\0b", 3));
  response.set("X-Fine", "tab\tis fine");
  EXPECT_EQ(DropUnsafeHeaderFields(&response), 3u);
  EXPECT_EQ(response["x-ms-request-id"], "abc");
  EXPECT_EQ(response["X-Fine"], "tab\tis fine");
  EXPECT_EQ(response.count("Access-Control-Expose-Headers"), 0u);
  EXPECT_EQ(response.count("X-Lf"), 0u);
  EXPECT_EQ(response.count("X-Nul"), 0u);
  std::string head;
  SerializeResponseHead(response, &head);
  EXPECT_EQ(head.find("Set-Cookie"), std::string::npos);
  EXPECT_EQ(DropUnsafeHeaderFields(&response), 0u);
}

TEST(DropUnsafeHeaderFieldsTest, FindsABreakAtEveryPositionOfALongValue) {
  // The check reads eight bytes at a time: a break in any lane of any word,
  // or in the tail, is found; tabs, high bytes and 0x0E..0x1F alone are kept.
  for (char bad : {'\r', '\n', '\0'}) {
    for (size_t at = 0; at < 21; ++at) {
      std::string value(21, 'v');
      value[at] = bad;
      Response response;
      response.set("X-Long", value);
      EXPECT_EQ(DropUnsafeHeaderFields(&response), 1u) << int(bad) << " at " << at;
    }
  }
  Response response;
  response.set("X-Kept", std::string("\t\x0e\x1f\x80\xff\t\t\x7f tab and high bytes \xc3\xa9\t", 31));
  EXPECT_EQ(DropUnsafeHeaderFields(&response), 0u);
}

TEST(HeadHasOnlyItsOwnLineBreaksTest, AnyBreakInsideAFieldOrTheReasonIsFound) {
  auto check = [](const Response& response) {
    std::string head;
    const size_t fields = SerializeResponseHead(response, &head);
    return HeadHasOnlyItsOwnLineBreaks(head, fields);
  };
  Response clean;
  clean.set("x-ms-request-id", "abc");
  clean.set("ETag", "W/\"datetime'2026'\"");
  clean.set("X-Tab", "a\tb");
  EXPECT_TRUE(check(clean));
  EXPECT_TRUE(check(Response()));  // no fields at all
  for (const std::string& bad : {std::string("a\r\nSet-Cookie: x"), std::string("a\rb"), std::string("a\nb"),
                                 std::string("a\0b", 3)}) {
    Response r = clean;
    r.set("Access-Control-Expose-Headers", bad);
    EXPECT_FALSE(check(r)) << bad.size();
  }
  Response bad_reason = clean;
  bad_reason.reason("OK\r\nX-Injected: 1");
  EXPECT_FALSE(check(bad_reason));
}

TEST(HeadHasOnlyItsOwnLineBreaksTest, EveryByteValueAtEveryOffsetOfAWord) {
  // The one-pass count works on sixteen bytes at a time: each byte value at
  // each offset of a block (and past the last full block) must give the exact
  // answer, including bytes whose low seven bits look like CR or LF (0x8D, 0x8A).
  for (int b = 0; b < 256; ++b) {
    for (size_t at = 0; at < 40; ++at) {
      std::string value(40, 'v');
      value[at] = static_cast<char>(b);
      Response r;
      r.set("X-Probe", value);
      std::string head;
      const size_t fields = SerializeResponseHead(r, &head);
      const bool breaks_or_nul = b == 0 || b == '\r' || b == '\n';
      EXPECT_EQ(HeadHasOnlyItsOwnLineBreaks(head, fields), !breaks_or_nul) << b << " at " << at;
    }
  }
}

TEST(HeadHasOnlyItsOwnLineBreaksTest, LongHeadsPastTheCounterWidth) {
  // Per-lane byte counters are summed every 255 blocks; a head of many
  // fields (more than 255 line breaks in one lane's bytes) must count exactly.
  Response r;
  for (int i = 0; i < 600; ++i) r.insert("X-F" + std::to_string(i), "v");
  std::string head;
  const size_t fields = SerializeResponseHead(r, &head);
  EXPECT_TRUE(HeadHasOnlyItsOwnLineBreaks(head, fields));
  EXPECT_FALSE(HeadHasOnlyItsOwnLineBreaks(head, fields + 1));
  head[head.find("X-F300: ") + 8] = '\n';  // the value "v" becomes a bare LF
  EXPECT_FALSE(HeadHasOnlyItsOwnLineBreaks(head, fields));
}

TEST(EqualsIgnoreCaseAsciiTest, ComparesAsciiCaseInsensitivelyWithinBothStrings) {
  EXPECT_TRUE(EqualsIgnoreCaseAscii("chunked", "CHUNKED"));
  EXPECT_TRUE(EqualsIgnoreCaseAscii("", ""));
  EXPECT_FALSE(EqualsIgnoreCaseAscii("chunked", "chunke"));
  EXPECT_FALSE(EqualsIgnoreCaseAscii("chunked", "chunkex"));
  EXPECT_FALSE(EqualsIgnoreCaseAscii("\xc3\xa9", "\xc3\x89"));  // only ASCII letters fold
  // Differing only in the case of the last byte, with nothing after either
  // string: reading past the end (as Boost 1.81's beast::iequals does) is an
  // ASan error here.
  auto a = std::make_unique<char[]>(7);
  auto b = std::make_unique<char[]>(7);
  std::memcpy(a.get(), "chunked", 7);
  std::memcpy(b.get(), "chunkeD", 7);
  EXPECT_TRUE(EqualsIgnoreCaseAscii(std::string_view(a.get(), 7), std::string_view(b.get(), 7)));
  std::vector<FieldView> fields = {{"Host", "x"}, {"Transfer-Encoding", std::string_view(b.get(), 7)}};
  EXPECT_EQ(CheckRequestFraming(11, fields), FramingError::kNone);
}

}  // namespace
}  // namespace tablestone::http
