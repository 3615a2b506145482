// Issue 30 item 10: account keys off the command line (env:/file:), and no
// terminal escape sequence from a table name or a server's message.
#include "tools/cli_text.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace tablestone::tools {
namespace {

TEST(TerminalSafeTest, ControlCharactersAreEscaped) {
  EXPECT_EQ(TerminalSafe("Orders"), "Orders");
  EXPECT_EQ(TerminalSafe("a\x1b[2J\x1b]0;title\x07z"), "a\\x1B[2J\\x1B]0;title\\x07z");
  EXPECT_EQ(TerminalSafe("line\nforged: ok\r\t"), "line\\nforged: ok\\r\\t");
  EXPECT_EQ(TerminalSafe(std::string("nul\0del\x7f", 8)), "nul\\x00del\\x7F");
  // C1 controls (U+009B is a one-character CSI on some terminals).
  EXPECT_EQ(TerminalSafe("\xC2\x9B" "31m"), "\\u009B31m");
  // Valid UTF-8 stays; invalid bytes, overlong forms and surrogates do not.
  EXPECT_EQ(TerminalSafe("é 中 \xF0\x9F\x98\x80"), "é 中 \xF0\x9F\x98\x80");
  EXPECT_EQ(TerminalSafe("\xff\xc0\x80\xed\xa0\x80"), "\\xFF\\xC0\\x80\\xED\\xA0\\x80");
  EXPECT_EQ(TerminalSafe("cut \xE4\xB8"), "cut \\xE4\\xB8");
}

class ConnectionArgumentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("tablestone-cli-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

constexpr const char* kSecret = "AccountName=a;AccountKey=c2VjcmV0LWtleS1ieXRlcw==;TableEndpoint=http://h:1/a";

TEST_F(ConnectionArgumentTest, FromEnvironmentFileOrItself) {
  std::string c, error;
  ASSERT_TRUE(ResolveConnectionArgument(kSecret, &c, &error));
  EXPECT_EQ(c, kSecret);

  ::setenv("TABLESTONE_TEST_CONN", (std::string("  ") + kSecret + "\n").c_str(), 1);
  ASSERT_TRUE(ResolveConnectionArgument("env:TABLESTONE_TEST_CONN", &c, &error)) << error;
  EXPECT_EQ(c, kSecret);
  ::unsetenv("TABLESTONE_TEST_CONN");
  EXPECT_FALSE(ResolveConnectionArgument("env:TABLESTONE_TEST_CONN", &c, &error));
  EXPECT_NE(error.find("TABLESTONE_TEST_CONN"), std::string::npos) << error;
  EXPECT_FALSE(ResolveConnectionArgument("env:", &c, &error));

  std::ofstream(dir_ / "conn") << kSecret << "\n";
  ASSERT_TRUE(ResolveConnectionArgument("file:" + (dir_ / "conn").string(), &c, &error)) << error;
  EXPECT_EQ(c, kSecret);
}

TEST_F(ConnectionArgumentTest, HostileFilesAreRefusedWithoutQuotingThem) {
  std::string c, error;
  EXPECT_FALSE(ResolveConnectionArgument("file:" + (dir_ / "missing").string(), &c, &error));
  EXPECT_NE(error.find("No such file"), std::string::npos) << error;
  EXPECT_FALSE(ResolveConnectionArgument("file:" + dir_.string(), &c, &error));  // a directory
  EXPECT_NE(error.find("regular file"), std::string::npos) << error;
  EXPECT_FALSE(ResolveConnectionArgument("file:/dev/zero", &c, &error));  // endless
  EXPECT_NE(error.find("regular file"), std::string::npos) << error;
  {
    std::ofstream big(dir_ / "big");
    big << std::string(70000, 'k');
  }
  EXPECT_FALSE(ResolveConnectionArgument("file:" + (dir_ / "big").string(), &c, &error));
  EXPECT_EQ(error.find("kkkk"), std::string::npos) << error;
  std::ofstream(dir_ / "empty") << "\n\n";
  EXPECT_FALSE(ResolveConnectionArgument("file:" + (dir_ / "empty").string(), &c, &error));
  // A path with an escape sequence is printed escaped.
  EXPECT_FALSE(ResolveConnectionArgument("file:/nonexistent/\x1b[2J", &c, &error));
  EXPECT_EQ(error.find('\x1b'), std::string::npos) << error;
}

}  // namespace
}  // namespace tablestone::tools
