#include "server/app/logging.h"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

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

// With --logFormat json the access log is fields, not a message string; a
// target with quotes, spaces and control characters stays one JSON value.
TEST(LoggingTest, JsonAccessLogHasFields) {
  LoggingConfig config;
  config.format = "json";
  config.access_log = true;
  std::string error;
  testing::internal::CaptureStdout();
  ASSERT_TRUE(SetupLogging(config, &error)) << error;
  spdlog::get("access")->info("{} \"{} {}\" {} {} {}us", "127.0.0.1", "GET", "/devstoreaccount1/T(PartitionKey='a\" b')\x01", 200,
                              512, 73);
  spdlog::get("access")->info("not an access line");
  ShutdownLogging();
  const std::string out = testing::internal::GetCapturedStdout();
  std::istringstream lines(out);
  std::string first, second;
  std::getline(lines, first);
  std::getline(lines, second);
  EXPECT_NE(first.find(R"("logger":"access","remote":"127.0.0.1","method":"GET","target":"/devstoreaccount1/T(PartitionKey='a\" b')\u0001","status":200,"bytes":512,"latencyUs":73})"),
            std::string::npos)
      << out;
  EXPECT_NE(second.find(R"("logger":"access","msg":"not an access line"})"), std::string::npos) << out;
}

}  // namespace
}  // namespace tablestone::app
