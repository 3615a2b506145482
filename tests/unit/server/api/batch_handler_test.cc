// $batch end to end through the in-process handler over a real in-memory
// Engine (batch_handler.cc), plus the pure validation step (batch_plan.cc).
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "api_test_util.h"
#include "server/api/batch_plan.h"

namespace tablestone::api::testing {
namespace {

constexpr const char* kBase = "http://127.0.0.1:10002/devstoreaccount1/";

struct Op {
  std::string method;
  std::string url;  // full request-line URL
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

// The layout the Python SDK writes (CRLF, Content-ID), or a variant.
std::string BuildBody(const std::vector<Op>& ops, std::string_view eol = "\r\n", bool content_ids = true) {
  std::string e(eol);
  std::string out = "--batch_b1" + e + "Content-Type: multipart/mixed; boundary=changeset_c1" + e + e;
  for (size_t i = 0; i < ops.size(); ++i) {
    out += "--changeset_c1" + e + "Content-Type: application/http" + e + "Content-Transfer-Encoding: binary" + e;
    if (content_ids) out += "Content-ID: " + std::to_string(i) + e;
    out += e + ops[i].method + " " + ops[i].url + " HTTP/1.1" + e;
    out += "Accept: application/json;odata=minimalmetadata" + e + "DataServiceVersion: 3.0" + e;
    if (!ops[i].body.empty()) out += "Content-Type: application/json" + e;
    for (const auto& [k, v] : ops[i].headers) out += k + ": " + v + e;
    out += e + ops[i].body + e;
  }
  out += "--changeset_c1--" + e + "--batch_b1--" + e;
  return out;
}

struct Part {
  int status = 0;
  std::map<std::string, std::string> headers;  // names as written
  std::string body;
};

// Splits a 202 batch response the way the JS SDK does: on the changeset
// response boundary, then status line / headers / body.
std::vector<Part> ParseParts(const std::string& body) {
  std::vector<Part> parts;
  std::smatch m;
  std::string boundary;
  if (std::regex_search(body, m, std::regex("boundary=(changesetresponse_[0-9a-f-]+)"))) {
    boundary = "--" + m[1].str();
  } else {
    boundary = body.substr(0, body.find("\r\n"));  // query: the batch boundary itself
  }
  size_t pos = body.find(boundary + "\r\n");
  while (pos != std::string::npos) {
    size_t start = pos + boundary.size() + 2;
    size_t end = body.find(boundary, start);
    if (end == std::string::npos) break;
    std::string chunk = body.substr(start, end - start);
    size_t http = chunk.find("HTTP/1.1 ");
    Part p;
    // MIME part headers (Content-ID) come before the status line.
    for (size_t l = 0; l < http;) {
      size_t eol = chunk.find("\r\n", l);
      std::string h = chunk.substr(l, eol - l);
      if (size_t colon = h.find(": "); colon != std::string::npos) p.headers[h.substr(0, colon)] = h.substr(colon + 2);
      l = eol + 2;
    }
    p.status = std::stoi(chunk.substr(http + 9, 3));
    size_t line = chunk.find("\r\n", http) + 2;
    while (true) {
      size_t eol = chunk.find("\r\n", line);
      if (eol == line) break;
      std::string h = chunk.substr(line, eol - line);
      size_t colon = h.find(": ");
      p.headers[h.substr(0, colon)] = h.substr(colon + 2);
      line = eol + 2;
    }
    p.body = chunk.substr(line + 2);
    while (!p.body.empty() && (p.body.back() == '\n' || p.body.back() == '\r')) p.body.pop_back();
    parts.push_back(std::move(p));
    pos = body.compare(end + boundary.size(), 2, "--") == 0 ? std::string::npos : end;
  }
  return parts;
}

std::string ErrorValue(const Part& p) {
  return nlohmann::json::parse(p.body)["odata.error"]["message"]["value"].get<std::string>();
}
std::string ErrorCodeOf(const Part& p) {
  return nlohmann::json::parse(p.body)["odata.error"]["code"].get<std::string>();
}

class BatchTest : public ApiTest {
 protected:
  void SetUp() override {
    ApiTest::SetUp();
    CreateTable("orders");
  }

  http::Response Batch(const std::string& body, std::string content_type = "multipart/mixed; boundary=batch_b1") {
    return Send("POST", "/$batch", body, {{"Content-Type", std::move(content_type)}});
  }
  // Runs a batch expected to come back as 202 and returns its parts.
  std::vector<Part> Run(const std::vector<Op>& ops) {
    last_ = Batch(BuildBody(ops));
    EXPECT_EQ(last_.result_int(), 202) << last_.body();
    EXPECT_EQ(H(last_, "Content-Type").rfind("multipart/mixed; boundary=batchresponse_", 0), 0u);
    return ParseParts(last_.body());
  }
  static Op InsertOp(const std::string& pk, const std::string& rk, bool no_content = true) {
    Op op{"POST", std::string(kBase) + "orders", R"({"PartitionKey":")" + pk + R"(","RowKey":")" + rk + "\"}", {}};
    if (no_content) op.headers.emplace_back("Prefer", "return-no-content");
    return op;
  }
  static std::string EntityUrl(const std::string& pk, const std::string& rk, const std::string& table = "orders") {
    return std::string(kBase) + table + "(PartitionKey='" + pk + "',RowKey='" + rk + "')";
  }
  std::vector<std::string> RowKeys(const std::string& pk = "p") {
    auto r = Send("GET", "/orders()?$filter=PartitionKey%20eq%20'" + pk + "'");
    std::vector<std::string> out;
    const nlohmann::json page = J(r);
    for (const auto& e : page["value"]) out.push_back(e["RowKey"]);
    return out;
  }
  nlohmann::json Get(const std::string& rk) {
    auto r = Send("GET", "/orders(PartitionKey='p',RowKey='" + rk + "')");
    return r.result_int() == 200 ? J(r) : nlohmann::json();
  }

  http::Response last_;
};

TEST_F(BatchTest, AllOperationKindsCommitTogetherWithOneETag) {
  ASSERT_EQ(Insert("orders", R"({"PartitionKey":"p","RowKey":"upd","a":1})").result_int(), 201);
  ASSERT_EQ(Insert("orders", R"({"PartitionKey":"p","RowKey":"mrg","a":1,"keep":"yes"})").result_int(), 201);
  ASSERT_EQ(Insert("orders", R"({"PartitionKey":"p","RowKey":"xm","a":1,"keep":"yes"})").result_int(), 201);
  ASSERT_EQ(Insert("orders", R"({"PartitionKey":"p","RowKey":"del"})").result_int(), 201);
  std::string etag = Get("upd")["odata.etag"];

  auto parts = Run({
      InsertOp("p", "ins-nc"),
      Op{"POST", std::string(kBase) + "orders", R"({"PartitionKey":"p","RowKey":"ins-body","v":5})", {}},
      Op{"PUT", EntityUrl("p", "upd"), R"({"a":2})", {{"If-Match", etag}}},
      Op{"MERGE", EntityUrl("p", "mrg"), R"({"a":2})", {{"If-Match", "*"}}},
      Op{"POST", EntityUrl("p", "xm"), R"({"a":3})", {{"If-Match", "*"}, {"X-HTTP-Method", "MERGE"}}},
      Op{"PATCH", EntityUrl("p", "um"), R"({"m":1})", {}},
      Op{"PUT", EntityUrl("p", "ur"), R"({"r":1})", {}},
      Op{"DELETE", EntityUrl("p", "del"), "", {{"If-Match", "*"}}},
  });
  ASSERT_EQ(parts.size(), 8u) << last_.body();
  const std::vector<int> want = {204, 201, 204, 204, 204, 204, 204, 204};
  for (size_t i = 0; i < parts.size(); ++i) {
    EXPECT_EQ(parts[i].status, want[i]) << i;
    EXPECT_EQ(parts[i].headers["Content-ID"], std::to_string(i));
    EXPECT_EQ(parts[i].headers["X-Content-Type-Options"], "nosniff");
  }
  // Every entity of a batch gets the same timestamp, hence ETag (Learn: performing-entity-group-transactions).
  const std::string shared = parts[0].headers["ETag"];
  EXPECT_EQ(shared.rfind("W/\"datetime'", 0), 0u);
  for (size_t i = 0; i < 7; ++i) EXPECT_EQ(parts[i].headers["ETag"], shared) << i;
  EXPECT_EQ(parts[7].headers.count("ETag"), 0u);  // no ETag for deletes
  // Insert with return-no-content: 204, Location/DataServiceId, no body (JS reads any {...} as an error).
  EXPECT_EQ(parts[0].headers["Preference-Applied"], "return-no-content");
  EXPECT_EQ(parts[0].headers["Location"], EntityUrl("p", "ins-nc"));
  EXPECT_EQ(parts[0].headers["DataServiceId"], EntityUrl("p", "ins-nc"));
  EXPECT_EQ(parts[0].body, "");
  // Insert without Prefer: 201 with the entity (what Python expects).
  EXPECT_EQ(parts[1].headers["Content-Type"], "application/json;odata=minimalmetadata;streaming=true;charset=utf-8");
  auto entity = nlohmann::json::parse(parts[1].body);
  EXPECT_EQ(entity["v"], 5);
  EXPECT_EQ(entity["odata.etag"], shared);
  EXPECT_EQ(parts[2].headers["DataServiceVersion"], "1.0;");
  // The exact capitalisation JS's /ETag: (.*)/ needs.
  EXPECT_NE(last_.body().find("\r\nETag: W/"), std::string::npos);

  EXPECT_EQ(RowKeys(), (std::vector<std::string>{"ins-body", "ins-nc", "mrg", "um", "upd", "ur", "xm"}));
  EXPECT_EQ(Get("upd")["a"], 2);
  EXPECT_EQ(Get("mrg")["keep"], "yes");
  EXPECT_EQ(Get("mrg")["a"], 2);
  EXPECT_EQ(Get("xm")["a"], 3);
  EXPECT_EQ(Get("xm")["keep"], "yes");
  EXPECT_EQ(Get("ur")["r"], 1);
  EXPECT_EQ(Get("um")["odata.etag"], shared);
}

TEST_F(BatchTest, FailureAtIndex37RollsBackEverything) {
  ASSERT_EQ(Insert("orders", R"({"PartitionKey":"p","RowKey":"r037"})").result_int(), 201);
  std::vector<Op> ops;
  for (int i = 0; i < 60; ++i) {
    char rk[8];
    std::snprintf(rk, sizeof(rk), "r%03d", i);
    ops.push_back(InsertOp("p", rk));
  }
  auto parts = Run(ops);
  ASSERT_EQ(parts.size(), 1u) << last_.body();
  EXPECT_EQ(parts[0].status, 409);
  EXPECT_EQ(ErrorCodeOf(parts[0]), "EntityAlreadyExists");
  EXPECT_EQ(ErrorValue(parts[0]).rfind("37:The specified entity already exists.\nRequestId:", 0), 0u);
  EXPECT_EQ(parts[0].headers["Content-Type"], "application/json;odata=minimalmetadata;streaming=true;charset=utf-8");
  EXPECT_EQ(RowKeys(), std::vector<std::string>{"r037"});
}

TEST_F(BatchTest, HundredOperationsAcceptedHundredAndOneRefused) {
  std::vector<Op> ops;
  for (int i = 0; i < 101; ++i) ops.push_back(InsertOp("p", "k" + std::to_string(1000 + i)));
  auto refused = Run(ops);
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0].status, 400);
  EXPECT_EQ(ErrorCodeOf(refused[0]), "InvalidInput");
  EXPECT_EQ(ErrorValue(refused[0]).rfind("99:The batch request operation exceeds the maximum 100 changes", 0), 0u);
  EXPECT_TRUE(RowKeys().empty());
  ops.pop_back();
  auto parts = Run(ops);
  EXPECT_EQ(parts.size(), 100u);
  EXPECT_EQ(RowKeys().size(), 100u);
}

TEST_F(BatchTest, BatchRulesReportTheBlamedIndex) {
  struct Case {
    std::vector<Op> ops;
    int status;
    std::string code;
    std::string prefix;
  };
  std::vector<Case> cases = {
      {{InsertOp("p", "a"), InsertOp("p", "b"), InsertOp("q", "c")}, 400, "CommandsInBatchActOnDifferentPartitions",
       "2:All commands in a batch must operate on same entity group."},
      {{InsertOp("p", "a"), InsertOp("p", "b"), Op{"PUT", EntityUrl("p", "a"), "{}", {}}}, 400,
       "InvalidDuplicateRow", "2:The batch request contains multiple changes with same row key."},
      {{InsertOp("p", "a"), Op{"PUT", EntityUrl("p", "b", "other"), "{}", {}}}, 400, "InvalidInput", "1:"},
      {{InsertOp("p", "a"), Op{"POST", std::string(kBase) + "orders", R"({"RowKey":"x"})", {}}}, 400,
       "PropertiesNeedValue", "1:"},
      {{InsertOp("p", "a"), Op{"DELETE", EntityUrl("p", "b"), "", {}}}, 400, "InvalidInput", "1:"},
      {{Op{"PUT", EntityUrl("p", "b"), "{}", {{"X-HTTP-Method", "MERGE"}}}}, 400, "XMethodNotUsingPost", "0:"},
      {{InsertOp("p", "a"), Op{"PUT", EntityUrl("p", "b"), "{}", {{"If-None-Match", "*"}}}}, 400, "InvalidInput",
       "1:If-None-Match"},
      {{InsertOp("p", "a"), Op{"POST", std::string(kBase) + "Tables", R"({"TableName":"x1"})", {}}}, 400,
       "InvalidInput", "1:"},
      {{InsertOp("p", "a"), Op{"PUT", EntityUrl("p", "b"), "not json", {}}}, 400, "InvalidInput", "1:"},
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    auto parts = Run(cases[c].ops);
    ASSERT_EQ(parts.size(), 1u) << c << " " << last_.body();
    EXPECT_EQ(parts[0].status, cases[c].status) << c;
    EXPECT_EQ(ErrorCodeOf(parts[0]), cases[c].code) << c << " " << parts[0].body;
    EXPECT_EQ(ErrorValue(parts[0]).rfind(cases[c].prefix, 0), 0u) << c << " " << ErrorValue(parts[0]);
  }
  EXPECT_TRUE(RowKeys().empty());
}

TEST_F(BatchTest, EngineConditionsFailInsideTheBatch) {
  auto ins = Insert("orders", R"({"PartitionKey":"p","RowKey":"s","v":1})");
  std::string old_etag = H(ins, "ETag");
  ASSERT_EQ(Send("PUT", "/orders(PartitionKey='p',RowKey='s')", R"({"v":2})",
                 {{"Content-Type", "application/json"}, {"If-Match", "*"}})
                .result_int(),
            204);
  auto stale = Run({InsertOp("p", "n"), Op{"MERGE", EntityUrl("p", "s"), R"({"v":3})", {{"If-Match", old_etag}}}});
  ASSERT_EQ(stale.size(), 1u);
  EXPECT_EQ(stale[0].status, 412);
  EXPECT_EQ(ErrorCodeOf(stale[0]), "UpdateConditionNotSatisfied");
  EXPECT_EQ(ErrorValue(stale[0]).rfind("1:The update condition specified in the request was not satisfied.", 0), 0u);
  EXPECT_EQ(Get("s")["v"], 2);

  auto missing = Run({Op{"DELETE", EntityUrl("p", "s"), "", {{"If-Match", "*"}}},
                      Op{"DELETE", EntityUrl("p", "nope"), "", {{"If-Match", "*"}}}});
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0].status, 404);
  EXPECT_EQ(ErrorCodeOf(missing[0]), "ResourceNotFound");
  EXPECT_EQ(ErrorValue(missing[0]).rfind("1:The specified resource does not exist.", 0), 0u);
  EXPECT_EQ(RowKeys(), std::vector<std::string>{"s"});
}

TEST_F(BatchTest, MissingTableIsOperationZero) {
  Op op{"POST", std::string(kBase) + "ghost", R"({"PartitionKey":"p","RowKey":"r"})", {}};
  auto parts = Run({op});
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].status, 404);
  EXPECT_EQ(ErrorCodeOf(parts[0]), "TableNotFound");
  EXPECT_EQ(ErrorValue(parts[0]).rfind("0:The table specified does not exist.", 0), 0u);
}

TEST_F(BatchTest, BatchLevelProblemsArePlainErrors) {
  std::string big(model::kMaxBatchBodyBytes + 1, 'x');
  auto too_big = Batch(big);
  EXPECT_EQ(too_big.result_int(), 413);
  EXPECT_EQ(ErrorCode(too_big), "RequestBodyTooLarge");
  EXPECT_EQ(J(too_big)["odata.error"]["code"], "RequestBodyTooLarge");

  auto not_multipart = Batch(BuildBody({InsertOp("p", "a")}), "application/json");
  EXPECT_EQ(not_multipart.result_int(), 400);
  EXPECT_EQ(ErrorCode(not_multipart), "InvalidInput");

  std::string body = BuildBody({InsertOp("p", "a")});
  std::string two = body.substr(0, body.find("--batch_b1--")) +
                    "--batch_b1\r\nContent-Type: multipart/mixed; boundary=changeset_c2\r\n\r\n--changeset_c2\r\n"
                    "Content-Type: application/http\r\n\r\nDELETE " +
                    EntityUrl("p", "a") + " HTTP/1.1\r\nIf-Match: *\r\n\r\n\r\n--changeset_c2--\r\n--batch_b1--\r\n";
  auto two_changesets = Batch(two);
  EXPECT_EQ(two_changesets.result_int(), 400) << two_changesets.body();
  EXPECT_TRUE(RowKeys().empty());
}

// Issue 36, --loose: a well-formed multipart body sent with another Content-Type is read with the
// boundary it opens with (as Azurite reads it); a body that is not a batch stays 400.
TEST_F(BatchTest, LooseReadsAMultipartBodyWhateverItsContentType) {
  ApiOptions options;
  options.accounts = {{kAccount, {kKey}}};
  options.allow_anonymous = true;
  options.loose = true;
  handler_ = MakeApiHandler(*engine_, *executor_, options);
  auto r = Batch(BuildBody({InsertOp("p", "a"), InsertOp("p", "b")}), "application/json");
  EXPECT_EQ(r.result_int(), 202) << r.body();
  EXPECT_EQ(RowKeys(), (std::vector<std::string>{"a", "b"}));
  auto not_a_batch = Batch("--batch_b1\r\nnot a part\r\n", "application/json");
  EXPECT_EQ(not_a_batch.result_int(), 400);
  EXPECT_EQ(ErrorCode(not_a_batch), "InvalidInput");
  auto json = Batch(R"({"PartitionKey":"p","RowKey":"c"})", "application/json");
  EXPECT_EQ(json.result_int(), 400);
  EXPECT_EQ(RowKeys(), (std::vector<std::string>{"a", "b"}));
}

TEST_F(BatchTest, FramingVariants) {
  // Bare LF line endings, relative URLs (with and without the account), no Content-ID.
  std::string lf = BuildBody({Op{"POST", "/devstoreaccount1/orders", R"({"PartitionKey":"p","RowKey":"lf1"})", {}},
                              Op{"PUT", "orders(PartitionKey='p',RowKey='lf2')", R"({"x":1})", {}},
                              Op{"PATCH", "/orders(PartitionKey='p',RowKey='lf3')", R"({"x":1})", {}}},
                             "\n", false);
  auto r = Batch(lf);
  ASSERT_EQ(r.result_int(), 202) << r.body();
  auto parts = ParseParts(r.body());
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].status, 201);
  EXPECT_EQ(parts[0].headers.count("Content-ID"), 0u);
  EXPECT_EQ(RowKeys(), (std::vector<std::string>{"lf1", "lf2", "lf3"}));

  // JS: lower-case headers, triple CRLFs, quoted boundary, old close without "--".
  std::string js =
      "--batch_js\r\ncontent-type: multipart/mixed; boundary=changeset_js\r\n\r\n\r\n\r\n"
      "--changeset_js\r\ncontent-type: application/http\r\ncontent-transfer-encoding: binary\r\n\r\n"
      "DELETE " + EntityUrl("p", "lf1") + " HTTP/1.1\r\nif-match: *\r\naccept: application/json\r\n\r\n\r\n\r\n"
      "--changeset_js\r\ncontent-type: application/http\r\ncontent-transfer-encoding: binary\r\n\r\n"
      "POST " + std::string(kBase) + "orders HTTP/1.1\r\ncontent-type: application/json\r\n"
      "prefer: return-no-content\r\n\r\n\r\n{\"PartitionKey\":\"p\",\"RowKey\":\"js1\"}\r\n"
      "--changeset_js--\r\n--batch_js\r\n";
  auto rj = Batch(js, "multipart/mixed; boundary=\"batch_js\"");
  ASSERT_EQ(rj.result_int(), 202) << rj.body();
  auto jparts = ParseParts(rj.body());
  ASSERT_EQ(jparts.size(), 2u);
  EXPECT_EQ(jparts[0].status, 204);
  EXPECT_EQ(jparts[1].status, 204);
  EXPECT_EQ(RowKeys(), (std::vector<std::string>{"js1", "lf2", "lf3"}));
}

TEST_F(BatchTest, SingleQueryInBatch) {
  ASSERT_EQ(Insert("orders", R"({"PartitionKey":"p","RowKey":"q1","v":7})").result_int(), 201);
  std::string body =
      "--batch_q\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n"
      "GET " + EntityUrl("p", "q1") + " HTTP/1.1\r\nAccept: application/json;odata=minimalmetadata\r\n\r\n"
      "--batch_q--\r\n";
  auto r = Batch(body, "multipart/mixed; boundary=batch_q");
  ASSERT_EQ(r.result_int(), 202) << r.body();
  EXPECT_EQ(r.body().find("changesetresponse_"), std::string::npos);
  auto parts = ParseParts(r.body());
  ASSERT_EQ(parts.size(), 1u) << r.body();
  EXPECT_EQ(parts[0].status, 200);
  EXPECT_EQ(nlohmann::json::parse(parts[0].body)["v"], 7);
  EXPECT_FALSE(parts[0].headers["ETag"].empty());
}

// The GET inside $batch runs through the same parse and handler step as a
// top-level read (AnswerGetEntity / AnswerQueryEntities), reading the
// sub-request's own Accept and query options.
std::string SingleGetBody(const std::string& url, const std::string& headers) {
  return "--batch_q\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n"
         "GET " + url + " HTTP/1.1\r\n" + headers + "\r\n--batch_q--\r\n";
}

TEST_F(BatchTest, SingleQueryInBatchReadsTheSubRequestsOptions) {
  for (const char* rk : {"a", "b", "c"}) {
    ASSERT_EQ(Insert("orders", std::string(R"({"PartitionKey":"p","RowKey":")") + rk + R"(","v":1})").result_int(),
              201);
  }
  // Query Entities with $top: the page and its continuation headers.
  auto r = Batch(SingleGetBody(std::string(kBase) + "orders()?$top=2&$filter=PartitionKey%20eq%20'p'",
                               "Accept: application/json;odata=nometadata\r\n"),
                 "multipart/mixed; boundary=batch_q");
  ASSERT_EQ(r.result_int(), 202) << r.body();
  auto parts = ParseParts(r.body());
  ASSERT_EQ(parts.size(), 1u) << r.body();
  EXPECT_EQ(parts[0].status, 200);
  EXPECT_EQ(parts[0].headers["Content-Type"], protocol::JsonContentType(protocol::MetadataLevel::kNoMetadata));
  EXPECT_EQ(parts[0].headers["DataServiceVersion"], "3.0;");
  EXPECT_FALSE(parts[0].headers["x-ms-continuation-NextPartitionKey"].empty()) << r.body();
  EXPECT_FALSE(parts[0].headers["x-ms-continuation-NextRowKey"].empty()) << r.body();
  const nlohmann::json page = nlohmann::json::parse(parts[0].body);
  ASSERT_EQ(page["value"].size(), 2u);
  EXPECT_FALSE(page.contains("odata.metadata"));

  // Get Entity with $select and $format (which wins over Accept).
  r = Batch(SingleGetBody(EntityUrl("p", "b") + "?$select=v&$format=application/json;odata=fullmetadata",
                          "Accept: application/json;odata=nometadata\r\n"),
            "multipart/mixed; boundary=batch_q");
  ASSERT_EQ(r.result_int(), 202) << r.body();
  parts = ParseParts(r.body());
  ASSERT_EQ(parts.size(), 1u) << r.body();
  EXPECT_EQ(parts[0].status, 200);
  EXPECT_EQ(parts[0].headers["Content-Type"], protocol::JsonContentType(protocol::MetadataLevel::kFullMetadata));
  EXPECT_FALSE(parts[0].headers["ETag"].empty());
  const nlohmann::json entity = nlohmann::json::parse(parts[0].body);
  EXPECT_EQ(entity["v"], 1);
  EXPECT_TRUE(entity.contains("odata.metadata"));
}

TEST_F(BatchTest, SingleQueryInBatchErrorsAreTheTopLevelOnes) {
  // A missing entity: 404 ResourceNotFound, as a top-level Get Entity.
  auto r = Batch(SingleGetBody(EntityUrl("p", "nope"), "Accept: application/json;odata=nometadata\r\n"),
                 "multipart/mixed; boundary=batch_q");
  ASSERT_EQ(r.result_int(), 202) << r.body();
  auto parts = ParseParts(r.body());
  ASSERT_EQ(parts.size(), 1u) << r.body();
  auto top = Send("GET", "/orders(PartitionKey='p',RowKey='nope')", {},
                  {{"Accept", "application/json;odata=nometadata"}});
  EXPECT_EQ(parts[0].status, static_cast<int>(top.result_int()));
  EXPECT_EQ(parts[0].status, 404);
  EXPECT_EQ(ErrorCodeOf(parts[0]), J(top)["odata.error"]["code"]);
  EXPECT_EQ(parts[0].headers["x-ms-error-code"], "ResourceNotFound");
  EXPECT_EQ(parts[0].headers["Content-Type"], H(top, "Content-Type"));

  // A parse error: the sub-request's Accept decides it.
  r = Batch(SingleGetBody(std::string(kBase) + "orders()", "Accept: application/atom+xml\r\n"),
            "multipart/mixed; boundary=batch_q");
  ASSERT_EQ(r.result_int(), 202) << r.body();
  parts = ParseParts(r.body());
  ASSERT_EQ(parts.size(), 1u) << r.body();
  EXPECT_EQ(parts[0].status, 415);
  EXPECT_EQ(ErrorCodeOf(parts[0]), "AtomFormatNotSupported");

  // A bad $top in the sub-request's URL.
  r = Batch(SingleGetBody(std::string(kBase) + "orders()?$top=5000", ""), "multipart/mixed; boundary=batch_q");
  ASSERT_EQ(r.result_int(), 202) << r.body();
  parts = ParseParts(r.body());
  ASSERT_EQ(parts.size(), 1u) << r.body();
  EXPECT_EQ(parts[0].status, 400);
  EXPECT_EQ(ErrorCodeOf(parts[0]), "InvalidInput");
}

// Readers never see half a batch: a writer rewrites all 50 rows of a
// partition per batch while a reader queries the partition.
TEST_F(BatchTest, ReadersSeeWholeBatchesOnly) {
  std::atomic<bool> done{false};
  std::atomic<int> torn{0};
  std::atomic<int> reads{0};
  std::thread reader([&] {
    while (!done.load()) {
      auto r = Send("GET", "/orders()?$filter=PartitionKey%20eq%20'g'");
      if (r.result_int() != 200) continue;
      const nlohmann::json page = J(r);
      std::set<int> gens;
      std::set<std::string> stamps;
      for (const auto& e : page["value"]) {
        gens.insert(e["gen"].get<int>());
        stamps.insert(e["Timestamp"].get<std::string>());
      }
      if (!page["value"].empty() && (page["value"].size() != 50 || gens.size() != 1 || stamps.size() != 1)) ++torn;
      ++reads;
    }
  });
  for (int gen = 0; gen < 40; ++gen) {
    std::vector<Op> ops;
    for (int i = 0; i < 50; ++i) {
      ops.push_back(Op{"PUT", EntityUrl("g", "k" + std::to_string(i)), "{\"gen\":" + std::to_string(gen) + "}", {}});
    }
    auto parts = Run(ops);
    ASSERT_EQ(parts.size(), 50u);
  }
  done = true;
  reader.join();
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(torn.load(), 0);
}

// The bodies the JS (13.x) and Python (12.4) SDKs really send
// (tests/unit/protocol/batch/fixtures, captured by the batch framing work):
// create, upsert-merge, upsert-replace, update-merge, update-replace with an
// ETag, delete.
std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::filesystem::path(TABLESTONE_BATCH_FIXTURES) / name, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST_F(BatchTest, CapturedSdkBodiesRunWholeOrNotAtAll) {
  const std::vector<std::pair<std::string, std::string>> fixtures = {
      {"js13_changeset.txt", "batch_d53a5bcc-06d4-4d01-ae2b-42e6181dba00"},
      {"python12_changeset.txt", "batch_70227991-ce88-4ef7-be5a-5b9917e3b2f8"},
  };
  for (const auto& [file, boundary] : fixtures) {
    std::string body = ReadFixture(file);
    ASSERT_FALSE(body.empty()) << "fixture " << file << " not found in " << TABLESTONE_BATCH_FIXTURES;
    Send("DELETE", "/Tables('batchtable')");
    CreateTable("batchtable");
    for (const char* rk : {"r4", "r5", "r6"}) {
      ASSERT_EQ(Insert("batchtable", std::string(R"({"PartitionKey":"pk","RowKey":")") + rk + "\"}").result_int(),
                201);
    }
    // The captured ETag (2021) is stale here: operation 4 fails, nothing is written.
    auto stale = Batch(body, "multipart/mixed; boundary=" + boundary);
    ASSERT_EQ(stale.result_int(), 202) << file << stale.body();
    auto failed = ParseParts(stale.body());
    ASSERT_EQ(failed.size(), 1u) << file;
    EXPECT_EQ(failed[0].status, 412) << file;
    EXPECT_EQ(ErrorValue(failed[0]).rfind("4:", 0), 0u) << file;
    EXPECT_EQ(J(Send("GET", "/batchtable()"))["value"].size(), 3u) << file;

    // With the current ETag the same body commits as a whole.
    std::string etag = J(Send("GET", "/batchtable(PartitionKey='pk',RowKey='r5')"))["odata.etag"];
    const std::string old_etag = "W/\"datetime'2021-04-08T00%3A49%3A13.6349993Z'\"";
    size_t at = body.find(old_etag);
    ASSERT_NE(at, std::string::npos) << file;
    body.replace(at, old_etag.size(), etag);
    auto ok = Batch(body, "multipart/mixed; boundary=" + boundary);
    ASSERT_EQ(ok.result_int(), 202) << file;
    auto parts = ParseParts(ok.body());
    ASSERT_EQ(parts.size(), 6u) << file << ok.body();
    for (const Part& p : parts) EXPECT_EQ(p.status, 204) << file << " " << p.body;
    std::vector<std::string> keys;
    const nlohmann::json page = J(Send("GET", "/batchtable()"));
    for (const auto& e : page["value"]) keys.push_back(e["RowKey"]);
    EXPECT_EQ(keys, (std::vector<std::string>{"r1", "r2", "r3", "r4", "r5"})) << file;
  }
}

// ---- The pure validation step ----

protocol::batch::SubRequest Sub(std::string method, std::string url, std::string body,
                                std::vector<std::pair<std::string, std::string>> headers = {}) {
  protocol::batch::SubRequest s;
  s.method = std::move(method);
  s.url = std::move(url);
  s.body = std::move(body);
  s.headers = std::move(headers);
  return s;
}

TEST(BatchPlanTest, ResolvesEveryUrlForm) {
  for (const char* url : {"http://127.0.0.1:10002/devstoreaccount1/t(PartitionKey='a',RowKey='b')",
                          "https://acct.table.core.windows.net/devstoreaccount1/t(PartitionKey='a',RowKey='b')",
                          "/devstoreaccount1/t(PartitionKey='a',RowKey='b')", "/t(PartitionKey='a',RowKey='b')",
                          "t(PartitionKey='a',RowKey='b')"}) {
    auto r = ResolveSubRequest(Sub("MERGE", url, "{}"), "/devstoreaccount1/");
    ASSERT_TRUE(r.ok()) << url << " " << r.error().message;
    EXPECT_EQ(r->resource.table, "t") << url;
    EXPECT_EQ(r->resource.key->row_key, "b") << url;
    EXPECT_EQ(r->operation, protocol::Operation::kInsertOrMergeEntity) << url;
  }
  const std::string host_url = "https://acct.table.core.windows.net/t(PartitionKey='a',RowKey='b')";
  auto host_style = ResolveSubRequest(Sub("DELETE", host_url, "", {{"if-match", "*"}}), "/");
  ASSERT_TRUE(host_style.ok());
  EXPECT_EQ(host_style->operation, protocol::Operation::kDeleteEntity);
  auto xm = ResolveSubRequest(Sub("POST", "/t(PartitionKey='a',RowKey='b')", "{}",
                                  {{"x-http-method", "MERGE"}, {"if-match", "*"}}),
                              "/devstoreaccount1/");
  ASSERT_TRUE(xm.ok());
  EXPECT_EQ(xm->operation, protocol::Operation::kMergeEntity);
  EXPECT_FALSE(ResolveSubRequest(Sub("POST", "/t(PartitionKey='a',RowKey='b')", "{}",
                                     {{"x-http-method", "MERGE"}, {"x-http-method", "PUT"}}),
                                 "/devstoreaccount1/")
                   .ok());
}

TEST(BatchPlanTest, AuthorizerIsAskedPerOperationAndBlamesTheIndex) {
  std::vector<protocol::batch::SubRequest> ops = {
      Sub("POST", "/devstoreaccount1/t", R"({"PartitionKey":"p","RowKey":"a"})"),
      Sub("DELETE", "/devstoreaccount1/t(PartitionKey='p',RowKey='b')", "", {{"if-match", "*"}}),
  };
  std::vector<std::string> seen;
  BatchAuthorizer only_adds = [&seen](protocol::Operation op, std::string_view table,
                                      const model::EntityKey& key) -> protocol::ApiResult<bool> {
    seen.push_back(std::string(table) + "/" + key.row_key);
    if (op != protocol::Operation::kInsertEntity) return protocol::ApiError::AuthorizationPermissionMismatch();
    return true;
  };
  PlanResult r = PlanChangeset(ops, "/devstoreaccount1/", only_adds);
  ASSERT_TRUE(r.failure.has_value());
  EXPECT_EQ(r.failure->index, 1u);
  EXPECT_EQ(r.failure->error.http_status, 403);
  EXPECT_EQ(r.failure->Indexed().failed_index, 1u);
  EXPECT_EQ(seen, (std::vector<std::string>{"t/a", "t/b"}));

  PlanResult ok = PlanChangeset(ops, "/devstoreaccount1/", nullptr);
  ASSERT_FALSE(ok.failure.has_value());
  EXPECT_EQ(ok.plan.table, "t");
  ASSERT_EQ(ok.plan.operations.size(), 2u);
  EXPECT_EQ(ok.plan.operations[0].op.kind, model::WriteKind::kInsert);
  EXPECT_EQ(ok.plan.operations[1].op.kind, model::WriteKind::kDelete);
  EXPECT_EQ(ok.plan.operations[1].op.entity.row_key, "b");
}

}  // namespace
}  // namespace tablestone::api::testing
