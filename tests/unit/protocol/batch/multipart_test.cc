#include "protocol/batch/multipart.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace tablestone::protocol::batch {
namespace {

std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::string(TABLESTONE_BATCH_FIXTURES) + "/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

constexpr const char* kEtag = "W/\"datetime'2021-04-08T00%3A49%3A13.6349993Z'\"";

TEST(MultipartTest, ParsesJsSdk13Capture) {
  auto r = ParseBatchRequest("multipart/mixed; boundary=batch_d53a5bcc-06d4-4d01-ae2b-42e6181dba00",
                             ReadFixture("js13_changeset.txt"));
  ASSERT_TRUE(r.ok()) << r.error().code;
  EXPECT_FALSE(r->is_query);
  ASSERT_EQ(r->operations.size(), 6u);
  const auto& ops = r->operations;
  EXPECT_EQ(ops[0].method, "POST");
  EXPECT_EQ(ops[0].url, "http://127.0.0.1:18766/devstoreaccount1/batchtable");
  EXPECT_EQ(ops[0].body, R"({"PartitionKey":"pk","RowKey":"r1","value":1})");
  EXPECT_EQ(ops[0].Header("content-type"), "application/json;odata=nometadata");
  EXPECT_EQ(ops[0].Header("prefer"), "return-no-content");
  EXPECT_FALSE(ops[0].content_id.has_value());
  EXPECT_EQ(ops[1].method, "PATCH");
  EXPECT_EQ(ops[1].url, "http://127.0.0.1:18766/devstoreaccount1/batchtable(PartitionKey='pk',RowKey='r2')");
  EXPECT_EQ(ops[1].HeaderCount("if-match"), 0u);
  EXPECT_EQ(ops[2].method, "PUT");
  EXPECT_EQ(ops[3].Header("if-match"), "*");
  EXPECT_EQ(ops[4].Header("if-match"), kEtag);
  EXPECT_EQ(ops[4].body, R"({"PartitionKey":"pk","RowKey":"r5","name":"five"})");
  EXPECT_EQ(ops[5].method, "DELETE");
  EXPECT_EQ(ops[5].body, "");
  EXPECT_EQ(ops[5].Header("if-match"), "*");
}

TEST(MultipartTest, ParsesPythonSdk124Capture) {
  auto r = ParseBatchRequest("multipart/mixed; boundary=batch_70227991-ce88-4ef7-be5a-5b9917e3b2f8",
                             ReadFixture("python12_changeset.txt"));
  ASSERT_TRUE(r.ok()) << r.error().code;
  ASSERT_EQ(r->operations.size(), 6u);
  const auto& ops = r->operations;
  for (size_t i = 0; i < ops.size(); ++i) {
    ASSERT_TRUE(ops[i].content_id.has_value());
    EXPECT_EQ(*ops[i].content_id, std::to_string(i));
    EXPECT_EQ(ops[i].Header("x-ms-version"), "2019-02-02");
  }
  EXPECT_EQ(ops[0].method, "POST");
  EXPECT_EQ(ops[0].Header("content-length"), "126");
  EXPECT_EQ(ops[0].body.size(), 126u);
  EXPECT_EQ(ops[0].body.front(), '{');
  EXPECT_EQ(ops[1].method, "PATCH");
  EXPECT_EQ(ops[3].Header("if-match"), "*");
  EXPECT_EQ(ops[4].Header("if-match"), kEtag);
  EXPECT_EQ(ops[5].method, "DELETE");
  EXPECT_EQ(ops[5].url, "http://127.0.0.1:18765/devstoreaccount1/batchtable(PartitionKey='pk',RowKey='r6')");
  EXPECT_TRUE(ops[5].body.empty());
}

TEST(MultipartTest, ParsesGoStyleLfSortedRelative) {
  auto r = ParseBatchRequest("multipart/mixed; boundary=batch_5f1e2a8b-6c3d-4e9f-8a7b-1c2d3e4f5a6b",
                             ReadFixture("go_style_lf_sorted.txt"));
  ASSERT_TRUE(r.ok()) << r.error().code;
  ASSERT_EQ(r->operations.size(), 2u);
  EXPECT_EQ(r->operations[0].url, "/devstoreaccount1/gotable");
  EXPECT_EQ(r->operations[0].Header("dataserviceversion"), "3.0");
  EXPECT_EQ(r->operations[0].body, R"({"PartitionKey":"p","RowKey":"1","Age":10})");
  EXPECT_EQ(r->operations[1].method, "DELETE");
  EXPECT_TRUE(r->operations[1].body.empty());
}

TEST(MultipartTest, ParsesDotNetStyleMergeQuotedBoundaryUnclosedOuter) {
  auto r = ParseBatchRequest("multipart/mixed; boundary=\"batch_net\"", ReadFixture("dotnet_style_merge_quoted.txt"));
  ASSERT_TRUE(r.ok()) << r.error().code;
  ASSERT_EQ(r->operations.size(), 2u);
  EXPECT_EQ(r->operations[0].method, "MERGE");
  EXPECT_EQ(r->operations[0].url, "https://acct.table.core.windows.net/nettable(PartitionKey='pk',RowKey='a%20b')");
  EXPECT_EQ(r->operations[0].content_id, "1");
  EXPECT_EQ(r->operations[0].body, "{\r\n  \"PartitionKey\": \"pk\",\r\n  \"RowKey\": \"a b\"\r\n}");
  EXPECT_EQ(r->operations[1].content_id, "2");
  EXPECT_EQ(r->operations[1].Header("content-type"), "application/json; odata=nometadata");
}

std::string Changeset(const std::string& ops, const std::string& close = "--batch_b--\r\n") {
  return "--batch_b\r\nContent-Type: multipart/mixed; boundary=changeset_c\r\n\r\n" + ops + "--changeset_c--\r\n" +
         close;
}

std::string Op(const std::string& request_line, const std::string& body = "") {
  return "--changeset_c\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
         request_line + "\r\nContent-Type: application/json\r\n\r\n" + body + "\r\n";
}

constexpr const char* kCt = "multipart/mixed; boundary=batch_b";

TEST(MultipartTest, MissingOuterCloseIsEndOfBody) {
  auto r = ParseBatchRequest(kCt, Changeset(Op("POST /a/t HTTP/1.1", "{}"), ""));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->operations.size(), 1u);
}

// --loose (issue 36): the Content-Type a body opening with "--<boundary>" would have had.
TEST(MultipartTest, ContentTypeFromBatchBody) {
  EXPECT_EQ(ContentTypeFromBatchBody("--batch_b\r\nContent-Type: x\r\n"), "multipart/mixed; boundary=batch_b");
  EXPECT_EQ(ContentTypeFromBatchBody("\r\n\r\n--batch_b  \r\n"), "multipart/mixed; boundary=batch_b");
  EXPECT_EQ(ContentTypeFromBatchBody("--b\n"), "multipart/mixed; boundary=b");
  for (std::string body : {std::string(""), std::string("--batch_b"), std::string("{\"a\":1}\r\n"),
                           std::string("--\r\n"), std::string("--a b\r\n"), std::string("--a\"b\r\n"),
                           std::string("-- \r\n"), "--" + std::string(201, 'b') + "\r\n",
                           std::string("--caf\xC3\xA9\r\n")}) {
    EXPECT_EQ(ContentTypeFromBatchBody(body), std::nullopt) << body;
  }
  EXPECT_TRUE(ContentTypeFromBatchBody("--" + std::string(200, 'b') + "\r\n").has_value());
  EXPECT_TRUE(HasBatchBoundary(kCt));
  EXPECT_FALSE(HasBatchBoundary("application/json"));
  EXPECT_FALSE(HasBatchBoundary("multipart/mixed"));
  // What it guesses is only a Content-Type: the parser still judges the body.
  const std::string body = Changeset(Op("POST /a/t HTTP/1.1", "{}"));
  auto guessed = ContentTypeFromBatchBody(body);
  ASSERT_TRUE(guessed.has_value());
  EXPECT_TRUE(ParseBatchRequest(*guessed, body).ok());
  EXPECT_FALSE(ParseBatchRequest(*ContentTypeFromBatchBody("--batch_b\r\nnot a part\r\n"),
                                 "--batch_b\r\nnot a part\r\n")
                   .ok());
}

TEST(MultipartTest, MissingChangesetCloseIsEndOfBody) {
  std::string body = "--batch_b\r\nContent-Type: multipart/mixed; boundary=changeset_c\r\n\r\n" +
                     Op("DELETE /a/t(PartitionKey='p',RowKey='r') HTTP/1.1");
  auto r = ParseBatchRequest(kCt, body);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->operations[0].method, "DELETE");
}

TEST(MultipartTest, RequestLineWithoutVersionAndPartWithoutMimeHeaders) {
  std::string ops = "--changeset_c\r\nPOST t HTTP/1.1\r\nContent-Type: application/json\r\n\r\n{\"a\":1}\r\n";
  ops += "--changeset_c\r\nContent-Type: application/http\r\n\r\nPUT t(PartitionKey='p',RowKey='r')\r\n\r\n{}\r\n";
  auto r = ParseBatchRequest(kCt, Changeset(ops));
  ASSERT_TRUE(r.ok()) << r.error().code;
  ASSERT_EQ(r->operations.size(), 2u);
  EXPECT_EQ(r->operations[0].url, "t");
  EXPECT_EQ(r->operations[0].body, "{\"a\":1}");
  EXPECT_EQ(r->operations[1].url, "t(PartitionKey='p',RowKey='r')");
}

TEST(MultipartTest, SingleQueryDirectlyUnderBatch) {
  std::string body =
      "--batch_b\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n"
      "GET http://127.0.0.1:10002/devstoreaccount1/t(PartitionKey='p',RowKey='r') HTTP/1.1\r\n"
      "Accept: application/json;odata=minimalmetadata\r\n\r\n--batch_b--\r\n";
  auto r = ParseBatchRequest(kCt, body);
  ASSERT_TRUE(r.ok()) << r.error().code;
  EXPECT_TRUE(r->is_query);
  ASSERT_EQ(r->operations.size(), 1u);
  EXPECT_EQ(r->operations[0].method, "GET");
  EXPECT_EQ(r->operations[0].Header("accept"), "application/json;odata=minimalmetadata");
}

// The dispatcher's placement reads IsQueryBatch before the handler parses the
// body: it must agree with the parser's is_query.
TEST(MultipartTest, IsQueryBatchAgreesWithTheParser) {
  const std::string query =
      "--batch_b\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n"
      "GET http://127.0.0.1:10002/devstoreaccount1/t()?$filter=n%20eq%205 HTTP/1.1\r\n\r\n--batch_b--\r\n";
  const std::string no_mime_headers = "--batch_b\r\n\r\nGET /a/t() HTTP/1.1\r\n\r\n--batch_b--\r\n";
  const std::string changeset = Changeset(Op("POST /a/t HTTP/1.1", "{}"));
  const std::string js = ReadFixture("js13_changeset.txt");
  const std::string js_type = "multipart/mixed; boundary=batch_d53a5bcc-06d4-4d01-ae2b-42e6181dba00";
  for (const auto& [type, body] : std::vector<std::pair<std::string, std::string>>{
           {kCt, query}, {kCt, no_mime_headers}, {kCt, changeset}, {js_type, js}}) {
    auto parsed = ParseBatchRequest(type, body);
    ASSERT_TRUE(parsed.ok()) << body;
    EXPECT_EQ(IsQueryBatch(type, body), parsed->is_query) << body;
  }
  EXPECT_TRUE(IsQueryBatch(kCt, query));
  EXPECT_FALSE(IsQueryBatch(kCt, changeset));
  EXPECT_FALSE(IsQueryBatch("application/json", query));  // no boundary: refused by the parser
  EXPECT_FALSE(IsQueryBatch(kCt, "--batch_b--\r\n"));   // no part
  EXPECT_FALSE(IsQueryBatch(kCt, ""));
}

void ExpectInvalidInput(std::string_view content_type, const std::string& body) {
  auto r = ParseBatchRequest(content_type, body);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().http_status, 400);
  EXPECT_EQ(r.error().code, "InvalidInput");
}

TEST(MultipartTest, RejectsMalformedBodies) {
  const std::string good = Changeset(Op("POST /a/t HTTP/1.1", "{}"));
  ExpectInvalidInput("multipart/mixed", good);                       // no boundary
  ExpectInvalidInput("application/json", good);                      // not multipart
  ExpectInvalidInput("multipart/mixed; boundary=\"batch_b", good);   // unterminated quote
  ExpectInvalidInput(kCt, "");                                       // empty body
  ExpectInvalidInput(kCt, "no delimiters at all");
  ExpectInvalidInput(kCt, "--batch_b\r\n\r\n--batch_b--\r\n");       // only a blank part
  ExpectInvalidInput(kCt, Changeset(""));                            // empty changeset
  ExpectInvalidInput(kCt, Changeset(Op("FETCH /a/t HTTP/1.1")));      // unknown verb
  ExpectInvalidInput(kCt, Changeset(Op("POST")));                     // no URL
  ExpectInvalidInput(kCt, Changeset(Op("POST /a/t SPDY/1")));         // bad version
  ExpectInvalidInput(kCt, Changeset(Op("GET /a/t HTTP/1.1")));        // query inside a changeset
  // Bad part header line.
  ExpectInvalidInput(kCt, Changeset("--changeset_c\r\nContent-Type application/http\r\n\r\nPOST /a/t HTTP/1.1\r\n\r\n"));
  // Bad sub-request header line.
  ExpectInvalidInput(kCt, Changeset("--changeset_c\r\n\r\nPOST /a/t HTTP/1.1\r\nno colon here\r\n\r\n{}\r\n"));
  // Changeset part without a boundary.
  ExpectInvalidInput(kCt, "--batch_b\r\nContent-Type: multipart/mixed\r\n\r\n--changeset_c\r\n--batch_b--");
  // Part of another type.
  ExpectInvalidInput(kCt, Changeset("--changeset_c\r\nContent-Type: text/plain\r\n\r\nPOST /a/t HTTP/1.1\r\n\r\n"));
}

TEST(MultipartTest, RejectsTwoChangesetsAndMixedQuery) {
  std::string cs = "--batch_b\r\nContent-Type: multipart/mixed; boundary=changeset_c\r\n\r\n" +
                   Op("POST /a/t HTTP/1.1", "{}") + "--changeset_c--\r\n";
  std::string query = "--batch_b\r\nContent-Type: application/http\r\n\r\nGET /a/t HTTP/1.1\r\n\r\n";
  ExpectInvalidInput(kCt, cs + cs + "--batch_b--\r\n");
  ExpectInvalidInput(kCt, cs + query + "--batch_b--\r\n");
  ExpectInvalidInput(kCt, query + cs + "--batch_b--\r\n");
  ExpectInvalidInput(kCt, query + query + "--batch_b--\r\n");
  // A write directly under the batch boundary is not a query.
  ExpectInvalidInput(kCt, "--batch_b\r\nContent-Type: application/http\r\n\r\nPOST /a/t HTTP/1.1\r\n\r\n{}\r\n--batch_b--");
}

TEST(MultipartTest, HundredOperationsAllowedHundredAndOneRefused) {
  std::string ops;
  for (int i = 0; i < 100; ++i) ops += Op("POST /a/t HTTP/1.1", "{\"RowKey\":\"" + std::to_string(i) + "\"}");
  auto ok = ParseBatchRequest(kCt, Changeset(ops));
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->operations.size(), 100u);
  EXPECT_EQ(ok->operations[99].body, "{\"RowKey\":\"99\"}");

  ops += Op("POST /a/t HTTP/1.1", "{}");
  auto too_many = ParseBatchRequest(kCt, Changeset(ops));
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(too_many.error().http_status, 400);
  EXPECT_EQ(too_many.error().code, "InvalidInput");
  EXPECT_EQ(too_many.error().message, "The batch request operation exceeds the maximum 100 changes per change set.");
  EXPECT_EQ(too_many.error().failed_index, 99u);
}

TEST(MultipartTest, ToleratesCaseBlankLinesAndLongerBoundaryLookalikes) {
  std::string body =
      "preamble\n--batch_b\nCONTENT-TYPE: Multipart/Mixed; Boundary=changeset_c\n\n\n\n"
      "--changeset_cX\n"  // not our boundary: part of the preamble
      "--changeset_c\ncontent-type: application/http\n\n\n\nMERGE /a/t(PartitionKey='p',RowKey='r') HTTP/1.1\n"
      "IF-MATCH: *\n\n\n\n{\"x\":1}\n\n\n--changeset_c--   \n--batch_b--\nepilogue";
  auto r = ParseBatchRequest("Multipart/Mixed;boundary=batch_b", body);
  ASSERT_TRUE(r.ok()) << r.error().code;
  ASSERT_EQ(r->operations.size(), 1u);
  EXPECT_EQ(r->operations[0].Header("if-match"), "*");
  EXPECT_EQ(r->operations[0].body, "{\"x\":1}");
}

// Spaces and tabs around delimiter lines, header values and the request
// line's parts are trimmed; inside values and bodies they stay.
TEST(MultipartTest, TrimsSpacesAndTabsWhereTheGrammarAllows) {
  std::string body =
      "--batch_b \t\r\nContent-Type:\t multipart/mixed; boundary=changeset_c \r\n\r\n"
      "\t--changeset_c\r\nContent-Type: application/http\t\r\n\r\n"
      " \tPOST \t /a/t \tHTTP/1.1\t \r\nPrefer: \t return-no-content\t\r\nX-Pad:  a \t b  \r\n"
      "X-Empty: \t \r\n\r\n{\"v\": \" x\t\"}\r\n"
      "--changeset_c-- \t\r\n--batch_b--\r\n";
  auto r = ParseBatchRequest(kCt, body);
  ASSERT_TRUE(r.ok()) << r.error().code;
  ASSERT_EQ(r->operations.size(), 1u);
  const SubRequest& op = r->operations[0];
  EXPECT_EQ(op.method, "POST");
  EXPECT_EQ(op.url, "/a/t");
  EXPECT_EQ(op.Header("prefer"), "return-no-content");
  EXPECT_EQ(op.Header("x-pad"), "a \t b");
  EXPECT_EQ(op.HeaderCount("x-empty"), 1u);
  EXPECT_EQ(op.Header("x-empty"), "");
  EXPECT_EQ(op.body, "{\"v\": \" x\t\"}");
}

TEST(MultipartTest, NeverCrashesOnTruncationsOfRealBodies) {
  // Every prefix of a real capture must parse or fail cleanly.
  const std::string body = ReadFixture("js13_changeset.txt");
  const std::string ct = "multipart/mixed; boundary=batch_d53a5bcc-06d4-4d01-ae2b-42e6181dba00";
  size_t accepted = 0;
  for (size_t n = 0; n <= body.size(); n += 7) {
    auto r = ParseBatchRequest(ct, std::string_view(body).substr(0, n));
    if (r.ok()) {
      ++accepted;
      EXPECT_LE(r->operations.size(), 6u);
    }
  }
  EXPECT_GT(accepted, 0u);
  // Byte flips.
  for (size_t i = 0; i < body.size(); i += 13) {
    std::string mutated = body;
    mutated[i] = static_cast<char>(mutated[i] ^ 0x5a);
    (void)ParseBatchRequest(ct, mutated).ok();
  }
}

TEST(SplitRequestTargetTest, AbsoluteAndRelativeUrls) {
  auto t = SplitRequestTarget("http://127.0.0.1:10002/devstoreaccount1/t(PartitionKey='a',RowKey='b')");
  EXPECT_EQ(t.path, "/devstoreaccount1/t(PartitionKey='a',RowKey='b')");
  EXPECT_EQ(t.query, "");
  t = SplitRequestTarget("https://acct.table.core.windows.net/t?$filter=x&sig=a%2Fb");
  EXPECT_EQ(t.path, "/t");
  EXPECT_EQ(t.query, "$filter=x&sig=a%2Fb");
  t = SplitRequestTarget("https://acct.table.core.windows.net");
  EXPECT_EQ(t.path, "/");
  t = SplitRequestTarget("/devstoreaccount1/t");
  EXPECT_EQ(t.path, "/devstoreaccount1/t");
  t = SplitRequestTarget("t(PartitionKey='a',RowKey='b')");
  EXPECT_EQ(t.path, "t(PartitionKey='a',RowKey='b')");
  // "://" inside the key of a relative URL is not a scheme.
  t = SplitRequestTarget("/a/t(PartitionKey='http://x',RowKey='b')");
  EXPECT_EQ(t.path, "/a/t(PartitionKey='http://x',RowKey='b')");
}

}  // namespace
}  // namespace tablestone::protocol::batch
