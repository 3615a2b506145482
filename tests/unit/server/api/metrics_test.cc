// Metrics (server/api/metrics.h): counters, histograms, and the exposition
// text checked line by line by a strict parser of the Prometheus text format
// (the same rules as tests/e2e/python/test_metrics.py); and the dispatcher's
// admin routes counting a known sequence of requests.
#include "server/api/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "server/api/api_handler.h"
#include "storage/engine.h"
#include "protocol/auth/admin_signature.h"
#include "protocol/auth/hmac.h"
#include "protocol/base64.h"
#include "storage/model/datetime.h"
#include "tests/unit/server/api/api_test_util.h"

namespace tablestone::api {
namespace {

using protocol::Operation;

// One sample: name, label text as written (inside braces) and value.
struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

// Parses `text` strictly: every line is a HELP, a TYPE or a sample; names
// and label names are well formed; label values use only the \\ \" \n
// escapes; a family's TYPE comes before its samples, once; a family's
// samples are contiguous; no sample repeats; counters are >= 0; histogram
// buckets are cumulative, end at le="+Inf", and +Inf equals _count. Fails
// the test (and returns what it parsed) otherwise.
std::vector<Sample> ParseExposition(const std::string& text) {
  static const std::regex kHelp(R"(^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$)");
  static const std::regex kType(R"(^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$)");
  static const std::regex kSample(R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? ([^ ]+)$)");
  static const std::regex kLabel(R"re(^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\\\|\\"|\\n)*)"(,|$))re");
  std::vector<Sample> samples;
  EXPECT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  std::map<std::string, std::string> types;
  std::set<std::string> helps, done_families, seen;
  std::string current_family;
  std::istringstream in(text);
  std::string line;
  auto family_of = [&types](const std::string& name) {
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      const std::string s(suffix);
      if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
        const std::string base = name.substr(0, name.size() - s.size());
        auto it = types.find(base);
        if (it != types.end() && it->second == "histogram") return base;
      }
    }
    return name;
  };
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_match(line, m, kHelp)) {
      EXPECT_TRUE(helps.insert(m[1]).second) << "second HELP: " << line;
      continue;
    }
    if (std::regex_match(line, m, kType)) {
      EXPECT_TRUE(types.emplace(m[1], m[2]).second) << "second TYPE: " << line;
      EXPECT_FALSE(done_families.count(m[1])) << "TYPE after samples: " << line;
      continue;
    }
    if (!std::regex_match(line, m, kSample)) {
      ADD_FAILURE() << "not a HELP, TYPE or sample line: '" << line << "'";
      continue;
    }
    Sample s;
    s.name = m[1];
    std::string labels = m[3];
    while (!labels.empty()) {
      std::smatch lm;
      if (!std::regex_search(labels, lm, kLabel)) {
        ADD_FAILURE() << "bad label text in: " << line;
        break;
      }
      EXPECT_TRUE(s.labels.emplace(lm[1], lm[2]).second) << "repeated label: " << line;
      labels = lm.suffix();
    }
    const std::string value = m[4];
    char* end = nullptr;
    s.value = std::strtod(value.c_str(), &end);
    EXPECT_TRUE(*end == '\0' && !value.empty()) << "bad value: " << line;
    const std::string family = family_of(s.name);
    EXPECT_TRUE(types.count(family)) << "sample without TYPE: " << line;
    if (family != current_family) {
      EXPECT_FALSE(done_families.count(family)) << "family not contiguous: " << line;
      if (!current_family.empty()) done_families.insert(current_family);
      current_family = family;
    }
    std::string key = s.name;
    for (const auto& [k, v] : s.labels) key += "|" + k + "=" + v;
    EXPECT_TRUE(seen.insert(key).second) << "repeated sample: " << line;
    if (types[family] == "counter") {
      EXPECT_GE(s.value, 0) << line;
      EXPECT_TRUE(s.name.size() > 6 && s.name.compare(s.name.size() - 6, 6, "_total") == 0) << line;
    }
    samples.push_back(std::move(s));
  }
  // Histograms: per label set (without le), cumulative buckets ending at +Inf == _count.
  std::map<std::string, std::vector<std::pair<std::string, double>>> buckets;
  std::map<std::string, double> counts;
  std::set<std::string> sums;
  for (const Sample& s : samples) {
    const std::string family = family_of(s.name);
    if (types[family] != "histogram") continue;
    std::string key = family;
    for (const auto& [k, v] : s.labels) {
      if (k != "le") key += "|" + k + "=" + v;
    }
    if (s.name == family + "_bucket") {
      EXPECT_TRUE(s.labels.count("le")) << s.name;
      buckets[key].emplace_back(s.labels.count("le") ? s.labels.at("le") : "", s.value);
    } else if (s.name == family + "_count") {
      counts[key] = s.value;
    } else if (s.name == family + "_sum") {
      sums.insert(key);
    }
  }
  for (const auto& [key, list] : buckets) {
    if (list.empty()) continue;
    EXPECT_EQ(list.back().first, "+Inf") << key;
    double last_le = -INFINITY, last = 0;
    for (const auto& [le, v] : list) {
      const double bound = le == "+Inf" ? INFINITY : std::strtod(le.c_str(), nullptr);
      EXPECT_GT(bound, last_le) << key;
      EXPECT_GE(v, last) << key;
      last_le = bound;
      last = v;
    }
    EXPECT_TRUE(counts.count(key)) << key;
    EXPECT_EQ(counts[key], list.back().second) << key;
    EXPECT_TRUE(sums.count(key)) << key;
  }
  return samples;
}

double Find(const std::vector<Sample>& samples, const std::string& name,
            const std::map<std::string, std::string>& labels = {}) {
  for (const Sample& s : samples) {
    if (s.name == name && s.labels == labels) return s.value;
  }
  return -1;
}

TEST(MetricsTest, CountsRequestsByAccountOperationAndStatusClass) {
  Metrics m({"acct1", "acct2"});
  EXPECT_EQ(m.AccountIndex("acct2"), 1u);
  EXPECT_EQ(m.AccountIndex("nobody"), 2u);
  const size_t insert = Metrics::OperationIndex(Operation::kInsertEntity);
  m.RecordRequest(0, insert, 201, std::chrono::microseconds(30));
  m.RecordRequest(0, insert, 204, std::chrono::microseconds(300));
  m.RecordRequest(0, insert, 409, std::chrono::milliseconds(3));
  m.RecordRequest(2, Metrics::kUnknownOperation, 400, std::chrono::nanoseconds(-1));
  EXPECT_EQ(m.RequestCount(0, insert, 1), 2u);
  EXPECT_EQ(m.RequestCount(0, insert, 3), 1u);
  EXPECT_EQ(m.RequestCount(2, Metrics::kUnknownOperation, 3), 1u);

  const auto samples = ParseExposition(m.Render({}));
  EXPECT_EQ(Find(samples, "tablestone_requests_total",
                 {{"account", "acct1"}, {"operation", "InsertEntity"}, {"status_class", "2xx"}}),
            2);
  EXPECT_EQ(Find(samples, "tablestone_requests_total",
                 {{"account", "acct1"}, {"operation", "InsertEntity"}, {"status_class", "4xx"}}),
            1);
  EXPECT_EQ(Find(samples, "tablestone_requests_total",
                 {{"account", ""}, {"operation", "Unknown"}, {"status_class", "4xx"}}),
            1);
  // Nothing for label sets never seen.
  EXPECT_EQ(Find(samples, "tablestone_requests_total",
                 {{"account", "acct2"}, {"operation", "InsertEntity"}, {"status_class", "2xx"}}),
            -1);
  // The histogram: 30 µs <= 50 µs bucket; 300 µs <= 0.0005; 3 ms <= 0.005;
  // the request without a latency is not in it.
  const std::map<std::string, std::string> op = {{"operation", "InsertEntity"}};
  auto bucket = [&](const std::string& le) {
    return Find(samples, "tablestone_request_duration_seconds_bucket", {{"operation", "InsertEntity"}, {"le", le}});
  };
  EXPECT_EQ(bucket("5e-05"), 1);
  EXPECT_EQ(bucket("0.00025"), 1);
  EXPECT_EQ(bucket("0.0005"), 2);
  EXPECT_EQ(bucket("0.0025"), 2);
  EXPECT_EQ(bucket("0.005"), 3);
  EXPECT_EQ(bucket("+Inf"), 3);
  EXPECT_EQ(Find(samples, "tablestone_request_duration_seconds_count", op), 3);
  EXPECT_NEAR(Find(samples, "tablestone_request_duration_seconds_sum", op), 0.00333, 1e-12);
  EXPECT_EQ(Find(samples, "tablestone_request_duration_seconds_count", {{"operation", "Unknown"}}), -1);
}

TEST(MetricsTest, BatchQueryAndTransportFigures) {
  Metrics m({"a"});
  m.RecordBatch(1);
  m.RecordBatch(7);
  m.RecordBatch(100);
  m.RecordQueryPage(0, 1000, 3);
  m.RecordQueryPage(0, 5, 5);
  m.RecordQuerySlice(/*overran=*/true);
  m.RecordQuerySlice(/*overran=*/false);
  m.RecordQuerySlice(/*overran=*/false);
  m.transport().Add(m.transport().bytes_in, 123);
  m.transport().Add(m.transport().bytes_out, 456);
  m.transport().Add(m.transport().connections_opened, 3);
  m.transport().Add(m.transport().connections_closed, 1);
  ScrapeInputs inputs;
  inputs.gauges.push_back({"tablestone_test_gauge", "A gauge.", "gauge", 2.5});
  const auto samples = ParseExposition(m.Render(inputs));
  EXPECT_EQ(Find(samples, "tablestone_batch_operations_bucket", {{"le", "1"}}), 1);
  EXPECT_EQ(Find(samples, "tablestone_batch_operations_bucket", {{"le", "5"}}), 1);
  EXPECT_EQ(Find(samples, "tablestone_batch_operations_bucket", {{"le", "10"}}), 2);
  EXPECT_EQ(Find(samples, "tablestone_batch_operations_bucket", {{"le", "100"}}), 3);
  EXPECT_EQ(Find(samples, "tablestone_batch_operations_sum"), 108);
  EXPECT_EQ(Find(samples, "tablestone_batch_operations_count"), 3);
  EXPECT_EQ(Find(samples, "tablestone_query_pages_total", {{"account", "a"}}), 2);
  EXPECT_EQ(Find(samples, "tablestone_query_rows_scanned_total", {{"account", "a"}}), 1005);
  EXPECT_EQ(Find(samples, "tablestone_query_rows_returned_total", {{"account", "a"}}), 8);
  EXPECT_EQ(Find(samples, "tablestone_query_slice_overruns_total"), 1);
  EXPECT_EQ(Find(samples, "tablestone_query_slice_skips_total"), 2);
  EXPECT_EQ(Find(samples, "tablestone_http_request_bytes_total"), 123);
  EXPECT_EQ(Find(samples, "tablestone_http_response_bytes_total"), 456);
  EXPECT_EQ(Find(samples, "tablestone_http_connections_total"), 3);
  EXPECT_EQ(Find(samples, "tablestone_http_connections_active"), 2);
  EXPECT_EQ(Find(samples, "tablestone_test_gauge"), 2.5);
  EXPECT_GE(Find(samples, "tablestone_uptime_seconds"), 0);
}

TEST(MetricsTest, LabelValuesAreEscaped) {
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  Metrics m({"we\"ird\\acc\nount"});
  m.RecordRequest(0, 0, 200, std::chrono::microseconds(1));
  const auto samples = ParseExposition(m.Render({}));
  EXPECT_EQ(Find(samples, "tablestone_requests_total",
                 {{"account", "we\\\"ird\\\\acc\\nount"}, {"operation", "QueryTables"}, {"status_class", "2xx"}}),
            1);
}

TEST(MetricsTest, BuildInfoNamesVersionCommitAndFlavor) {
  Metrics m({"a"}, BuildLabels{.version = "1.2.3", .commit = "0123456789ab-modified", .flavor = "storage+cosmos"});
  const auto samples = ParseExposition(m.Render({}));
  EXPECT_EQ(Find(samples, "tablestone_build_info",
                 {{"version", "1.2.3"}, {"commit", "0123456789ab-modified"}, {"flavor", "storage+cosmos"}}),
            1);
  // Unset, every label is still there (a query by label never misses the series).
  const auto defaults = ParseExposition(Metrics({"a"}).Render({}));
  EXPECT_EQ(Find(defaults, "tablestone_build_info", {{"version", "unknown"}, {"commit", "unknown"}, {"flavor", "storage"}}),
            1);
}

TEST(MetricsTest, ProcessFiguresAreRead) {
  const ProcessFigures f = ReadProcessFigures();
  EXPECT_GT(f.resident_bytes, 0u);
  EXPECT_GT(f.open_fds, 0u);
}

// The dispatcher counts what it answers and serves the admin routes.
class DispatcherMetricsTest : public testing::ApiTest {
 protected:
  void SetUp() override {
    ApiTest::SetUp();
    ApiOptions options;
    options.accounts = {{testing::kAccount, {testing::kKey}}};
    options.allow_anonymous = true;
    options.facts.version = "9.9.9";
    options.facts.data_dir = "/data \"dir\"";
    options.facts.durability = "fsync";
    metrics_ = std::make_unique<Metrics>(std::vector<std::string>{testing::kAccount});
    handler_ = MakeApiHandler(*engine_, *executor_, options, metrics_.get());
  }
  http::Response Admin(std::string_view target, std::string remote_ip = "127.0.0.1",
                       std::string host = "127.0.0.1:10002") {
    http::Request req;
    req.method(boost::beast::http::verb::get);
    req.target(boost::beast::string_view(target.data(), target.size()));
    req.version(11);
    if (!host.empty()) req.set(boost::beast::http::field::host, host);
    http::RequestContext context;
    context.remote_ip = std::move(remote_ip);
    return http::HandleAndWait(*handler_, req, context);
  }
  std::unique_ptr<Metrics> metrics_;
};

TEST_F(DispatcherMetricsTest, CountsAKnownSequenceExactly) {
  CreateTable("mtab");
  ASSERT_EQ(Insert("mtab", R"({"PartitionKey":"p","RowKey":"1","V":1})").result_int(), 201);
  ASSERT_EQ(Insert("mtab", R"({"PartitionKey":"p","RowKey":"2","V":2})").result_int(), 201);
  ASSERT_EQ(Insert("mtab", R"({"PartitionKey":"p","RowKey":"2","V":2})").result_int(), 409);
  ASSERT_EQ(Send("GET", "/mtab(PartitionKey='p',RowKey='1')").result_int(), 200);
  ASSERT_EQ(Send("GET", "/mtab()?$filter=V%20eq%202").result_int(), 200);
  ASSERT_EQ(Admin("/_tablestone/health").result_int(), 200);

  const auto metrics = Admin("/_tablestone/metrics");
  ASSERT_EQ(metrics.result_int(), 200);
  EXPECT_EQ(std::string(metrics[boost::beast::http::field::content_type]), "text/plain; version=0.0.4; charset=utf-8");
  const auto samples = ParseExposition(metrics.body());
  auto requests = [&](const char* op, const char* cls) {
    return Find(samples, "tablestone_requests_total",
                {{"account", testing::kAccount}, {"operation", op}, {"status_class", cls}});
  };
  EXPECT_EQ(requests("CreateTable", "2xx"), 1);
  EXPECT_EQ(requests("InsertEntity", "2xx"), 2);
  EXPECT_EQ(requests("InsertEntity", "4xx"), 1);
  EXPECT_EQ(requests("GetEntity", "2xx"), 1);
  EXPECT_EQ(requests("QueryEntities", "2xx"), 1);
  EXPECT_EQ(Find(samples, "tablestone_request_duration_seconds_count", {{"operation", "InsertEntity"}}), 3);
  EXPECT_EQ(Find(samples, "tablestone_query_pages_total", {{"account", testing::kAccount}}), 1);
  EXPECT_EQ(Find(samples, "tablestone_query_rows_scanned_total", {{"account", testing::kAccount}}), 2);
  EXPECT_EQ(Find(samples, "tablestone_query_rows_returned_total", {{"account", testing::kAccount}}), 1);
  // The admin routes are not counted: only the five operations above.
  double total = 0;
  for (const Sample& s : samples) {
    if (s.name == "tablestone_requests_total") total += s.value;
  }
  EXPECT_EQ(total, 6);
}

TEST_F(DispatcherMetricsTest, UnroutedRequestsCountUnderUnknown) {
  ASSERT_EQ(Send("GET", "/mtab(PartitionKey='p'").result_int() / 100, 4);
  const auto samples = ParseExposition(Admin("/_tablestone/metrics").body());
  double unknown = 0;
  for (const Sample& s : samples) {
    if (s.name == "tablestone_requests_total" && s.labels.at("operation") == "Unknown") unknown += s.value;
  }
  EXPECT_EQ(unknown, 1);
}

TEST_F(DispatcherMetricsTest, HealthDetailReportsFactsAndTableCounts) {
  CreateTable("haaa");
  CreateTable("hbbb");
  const auto plain = Admin("/_tablestone/health");
  EXPECT_EQ(plain.body(), "{\"status\":\"ok\"}");
  const auto detail = Admin("/_tablestone/health?detail=1");
  ASSERT_EQ(detail.result_int(), 200);
  const auto j = nlohmann::json::parse(detail.body());
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["version"], "9.9.9");
  EXPECT_EQ(j["dataDirectory"], "/data \"dir\"");
  EXPECT_EQ(j["durability"], "fsync");
  EXPECT_EQ(j["inMemory"], false);
  EXPECT_GE(j["uptimeSeconds"].get<double>(), 0);
  ASSERT_EQ(j["accounts"].size(), 1u);
  EXPECT_EQ(j["accounts"][0]["name"], testing::kAccount);
  EXPECT_EQ(j["accounts"][0]["tables"], 2);
}

// Issue 30 item 8: the data path, account names and per-account counts only
// to loopback peers or admin-signed requests, and never to a rebound Host.
TEST_F(DispatcherMetricsTest, ServerDetailsOnlyToLoopbackOrTheAdmin) {
  CreateTable("haaa");
  // Any peer: the plain probe.
  EXPECT_EQ(Admin("/_tablestone/health", "10.0.0.9", "10.0.0.1:10002").body(), "{\"status\":\"ok\"}");
  for (const char* target : {"/_tablestone/health?detail=1", "/_tablestone/metrics"}) {
    const auto remote = Admin(target, "10.0.0.9", "10.0.0.1:10002");
    EXPECT_EQ(remote.result_int(), 403) << target;
    EXPECT_EQ(remote.body().find("/data"), std::string::npos) << target;
    EXPECT_EQ(remote.body().find(testing::kAccount), std::string::npos) << target;
    // A DNS-rebinding page reaches the loopback address under its own name.
    EXPECT_EQ(Admin(target, "127.0.0.1", "rebind.example:10002").result_int(), 403) << target;
    EXPECT_EQ(Admin(target, "::1", "localhost:10002").result_int(), 200) << target;
  }
  // Signed by the admin (the only account here), a remote peer gets them.
  http::Request req{boost::beast::http::verb::get, "/_tablestone/health?detail=1", 11};
  req.set(boost::beast::http::field::host, "10.0.0.1:10002");
  const std::string date = model::FormatRfc1123(model::NowTicks());
  req.set("x-ms-date", date);
  const std::string hash = protocol::auth::ContentSha256Base64("");
  req.set(protocol::auth::kContentSha256Header, hash);
  const std::string to_sign = protocol::auth::AdminStringToSign(
      "GET", "", date, hash,
      protocol::auth::AdminCanonicalizedResource(testing::kAccount, "/_tablestone/health",
                                                 protocol::QueryParams{{"detail", "1"}}));
  req.set(boost::beast::http::field::authorization,
          std::string("SharedKey ") + testing::kAccount + ":" +
              protocol::auth::SignBase64(*protocol::Base64Decode(testing::kKey), to_sign));
  http::RequestContext context;
  context.remote_ip = "10.0.0.9";
  const auto signed_detail = http::HandleAndWait(*handler_, req, context);
  ASSERT_EQ(signed_detail.result_int(), 200) << signed_detail.body();
  EXPECT_EQ(nlohmann::json::parse(signed_detail.body())["dataDirectory"], "/data \"dir\"");
}

}  // namespace
}  // namespace tablestone::api
