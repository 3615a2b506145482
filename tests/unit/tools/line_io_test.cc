#include "tools/line_io.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace tablestone::tools {
namespace {

class LineIoTest : public ::testing::TestWithParam<Compression> {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tablestone-lineio-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const char* name) { return (dir_ / name).string(); }

  std::filesystem::path dir_;
  static inline int counter_ = 0;
};

std::vector<std::string> Lines() {
  std::vector<std::string> lines;
  // Enough bytes to cross the 256 KiB chunk boundaries several times, and
  // lines of very different lengths.
  for (int i = 0; i < 5000; ++i) lines.push_back(std::string(i % 700, static_cast<char>('a' + i % 26)) + std::to_string(i));
  lines.push_back("");
  lines.push_back("\xF0\x9F\x98\x80 last");
  return lines;
}

TEST_P(LineIoTest, WritesAndReadsBack) {
  std::string error;
  LineWriter w;
  ASSERT_TRUE(w.Open(Path("f"), GetParam(), &error)) << error;
  for (const auto& l : Lines()) w.WriteLine(l);
  ASSERT_TRUE(w.Close(&error)) << error;

  LineReader r;
  ASSERT_TRUE(r.Open(Path("f"), &error)) << error;
  std::vector<std::string> got;
  std::string line;
  while (r.Next(&line)) got.push_back(line);
  EXPECT_EQ(r.error(), "");
  EXPECT_EQ(got, Lines());
}

// A plain file has no end marker (the format's end lines find its truncation).
class CompressedTruncationTest : public LineIoTest {};

TEST_P(CompressedTruncationTest, TruncatedInputIsAnError) {
  std::string error;
  LineWriter w;
  ASSERT_TRUE(w.Open(Path("f"), GetParam(), &error)) << error;
  for (const auto& l : Lines()) w.WriteLine(l);
  ASSERT_TRUE(w.Close(&error)) << error;
  auto size = std::filesystem::file_size(Path("f"));
  std::filesystem::resize_file(Path("f"), size / 2);

  LineReader r;
  ASSERT_TRUE(r.Open(Path("f"), &error)) << error;
  std::string line;
  size_t n = 0;
  while (r.Next(&line)) ++n;
  EXPECT_LT(n, Lines().size());
  EXPECT_NE(r.error(), "");
}

// Issue 30 item 10: one 256 MiB line compressed into a few hundred KB took
// 38 s and 785 MB (the '\n' search restarted at every chunk). The reader now
// stops at the cap, having searched each byte once.
TEST_P(LineIoTest, AHugeLineStopsAtTheCapInLinearTime) {
  std::string error;
  LineWriter w;
  ASSERT_TRUE(w.Open(Path("f"), GetParam(), &error)) << error;
  w.WriteLine("short");
  w.WriteLine(std::string(64u << 20, 'x'));
  w.WriteLine("never read");
  ASSERT_TRUE(w.Close(&error)) << error;

  LineReader r;
  ASSERT_TRUE(r.Open(Path("f"), &error)) << error;
  r.set_max_line_bytes(32u << 20);
  std::string line;
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(r.Next(&line));
  EXPECT_EQ(line, "short");
  EXPECT_FALSE(r.Next(&line));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(r.error().find("longer than 33554432 bytes"), std::string::npos) << r.error();
  EXPECT_FALSE(r.Next(&line));  // stays failed
  // Quadratic search took minutes for 32 MiB; linear takes well under a second.
  EXPECT_LT(seconds, 5.0);
}

TEST_P(LineIoTest, ALineAtTheCapIsRead) {
  std::string error;
  LineWriter w;
  ASSERT_TRUE(w.Open(Path("f"), GetParam(), &error)) << error;
  w.WriteLine(std::string(1000, 'y'));
  w.WriteLine(std::string(1001, 'z'));
  ASSERT_TRUE(w.Close(&error)) << error;
  LineReader r;
  ASSERT_TRUE(r.Open(Path("f"), &error)) << error;
  r.set_max_line_bytes(1000);
  std::string line;
  ASSERT_TRUE(r.Next(&line));
  EXPECT_EQ(line.size(), 1000u);
  EXPECT_FALSE(r.Next(&line));
  EXPECT_NE(r.error().find("longer than 1000 bytes"), std::string::npos) << r.error();
}

INSTANTIATE_TEST_SUITE_P(All, LineIoTest,
                         ::testing::Values(Compression::kNone, Compression::kGzip, Compression::kZstd));
INSTANTIATE_TEST_SUITE_P(Compressed, CompressedTruncationTest,
                         ::testing::Values(Compression::kGzip, Compression::kZstd));

TEST(LineIoNamesTest, CompressionByNameAndPath) {
  Compression c;
  EXPECT_TRUE(ParseCompression("zstd", &c));
  EXPECT_EQ(c, Compression::kZstd);
  EXPECT_FALSE(ParseCompression("lz4", &c));
  EXPECT_EQ(CompressionForPath("a.jsonl.gz"), Compression::kGzip);
  EXPECT_EQ(CompressionForPath("a.zst"), Compression::kZstd);
  EXPECT_EQ(CompressionForPath("a.jsonl"), Compression::kNone);
}

TEST(LineIoNamesTest, ADirectoryIsAnErrorNamingIt) {
  LineReader r;
  std::string error;
  std::string dir = std::filesystem::temp_directory_path().string();
  EXPECT_FALSE(r.Open(dir, &error));
  EXPECT_NE(error.find("'" + dir + "'"), std::string::npos) << error;
}

TEST(LineIoNamesTest, MissingFileIsAnError) {
  LineReader r;
  std::string error;
  EXPECT_FALSE(r.Open("/nonexistent/dir/file", &error));
  EXPECT_NE(error.find("cannot open"), std::string::npos);
}

}  // namespace
}  // namespace tablestone::tools
