#include "server/app/logging.h"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "server/http/handler.h"

namespace tablestone::app {
namespace {

TEST(LoggingTest, NamedLoggersExistAndDebugFileReceivesDebugLines) {
  char name[] = "/tmp/tablestone_debug_XXXXXX";
  int fd = mkstemp(name);
  ::close(fd);
  LoggingConfig config;
  config.level = "error";  // console quiet, file still at debug
  config.debug_file = name;
  std::string error;
  ASSERT_TRUE(SetupLogging(config, &error)) << error;
  for (const char* logger : {"app", "http", "api", "storage", "access"}) {
    EXPECT_NE(spdlog::get(logger), nullptr) << logger;
  }
  spdlog::get("storage")->debug("storage debug line {}", 42);
  ShutdownLogging();
  std::ifstream in(name);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("[storage] debug: storage debug line 42"), std::string::npos) << text.str();
  std::remove(name);
}

TEST(LoggingTest, SilentMeansNoAccessLogger) {
  LoggingConfig config;
  config.access_log = false;
  config.format = "json";
  std::string error;
  ASSERT_TRUE(SetupLogging(config, &error)) << error;
  EXPECT_EQ(spdlog::get("access"), nullptr);
  EXPECT_NE(spdlog::get("http"), nullptr);
  ShutdownLogging();
}

TEST(LoggingTest, UnwritableDebugFileIsReported) {
  // A regular file used as a directory: cannot be created (spdlog would
  // create a missing directory).
  char name[] = "/tmp/tablestone_notadir_XXXXXX";
  ::close(mkstemp(name));
  LoggingConfig config;
  config.debug_file = std::string(name) + "/debug.log";
  std::string error;
  EXPECT_FALSE(SetupLogging(config, &error));
  EXPECT_NE(error.find(config.debug_file), std::string::npos) << error;
  ShutdownLogging();
  std::remove(name);
}

// With --logFormat json the access log is fields, not a message string: every
// member, in its order, null for what is not known; a target with quotes,
// spaces and control characters stays one JSON value.
TEST(LoggingTest, JsonAccessLineHasEveryField) {
  http::AccessRecord r{.peer = "127.0.0.1",
                       .method = "GET",
                       .target = "/devstoreaccount1/T(PartitionKey='a\" b')\x01?sig=REDACTED",
                       .status = 404,
                       .error_code = "ResourceNotFound",
                       .request_id = "25e243b6-31a6-4043-82a4-84b155ceb4e1",
                       .account = "devstoreaccount1",
                       .operation = "GetEntity",
                       .bytes = 512,
                       .micros = 1073};
  EXPECT_EQ(JsonAccessLine(r),
            R"("peer":"127.0.0.1","method":"GET","path":"/devstoreaccount1/T(PartitionKey='a\" b')\u0001?sig=REDACTED",)"
            R"("status":404,"errorCode":"ResourceNotFound","durationMs":1.073,"bytes":512,"account":"devstoreaccount1",)"
            R"("operation":"GetEntity","requestId":"25e243b6-31a6-4043-82a4-84b155ceb4e1")");
  http::AccessRecord unknown;  // what a transport-level refusal knows
  unknown.peer = "::1";
  unknown.method = "BREW";
  unknown.target = "/";
  unknown.status = 400;
  unknown.micros = 7;
  EXPECT_EQ(JsonAccessLine(unknown),
            R"("peer":"::1","method":"BREW","path":"/","status":400,"errorCode":null,"durationMs":0.007,"bytes":0,)"
            R"("account":null,"operation":null,"requestId":null)");
}

// The console writes those members inside the line's object; a line of
// another shape on the access logger is a "msg".
TEST(LoggingTest, JsonAccessLogHasFields) {
  LoggingConfig config;
  config.format = "json";
  config.access_log = true;
  std::string error;
  testing::internal::CaptureStdout();
  ASSERT_TRUE(SetupLogging(config, &error)) << error;
  http::AccessRecord record;
  record.peer = "127.0.0.1";
  record.method = "GET";
  record.target = "/a";
  record.status = 200;
  record.bytes = 5;
  record.micros = 73;
  spdlog::get("access")->info("{}", JsonAccessLine(record));
  spdlog::get("access")->info("not an access line");
  spdlog::get("app")->warn("say \"hi\"\x01 \xff");  // a quote, a control character, a byte that is not UTF-8
  ShutdownLogging();
  // The access log is asynchronous: its lines may come after the app's.
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find(R"("logger":"access","peer":"127.0.0.1","method":"GET","path":"/a","status":200,"errorCode":null,"durationMs":0.073,"bytes":5,"account":null,"operation":null,"requestId":null})"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(R"("logger":"access","msg":"not an access line"})"), std::string::npos) << out;
  EXPECT_NE(out.find(R"("logger":"app","msg":"say \"hi\"\u0001 \ufffd"})"), std::string::npos) << out;
}

// The configuration hands the sessions that format only with --logFormat json.
TEST(LoggingTest, JsonFormatSetsTheAccessLineOfTheListeners) {
  Config config;
  EXPECT_EQ(config.ToHttpOptions().access_line, nullptr);  // text: the session's own line, unchanged
  config.logging.format = "json";
  EXPECT_EQ(config.ToHttpOptions().access_line, &JsonAccessLine);
}

}  // namespace
}  // namespace tablestone::app
