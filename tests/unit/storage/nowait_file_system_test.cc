// NoWaitFileSystem and Engine::ReadWait::kNoWait (storage/nowait_file_system.h):
// inside a NoWaitScope, a read of bytes that are not in the page cache fails at
// once instead of waiting for the disk; outside it, reads are plain preads.
// The page cache is emptied per file with posix_fadvise(DONTNEED) and checked
// with mincore; where the kernel cannot (tmpfs) or the file system does not
// support RWF_NOWAIT, the tests that need it are skipped and say why.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "storage/nowait_file_system.h"
#include "tests/unit/storage/engine_test_util.h"

namespace tablestone::storage {
namespace {

using test_util::EngineTest;
using test_util::MakeEntity;
using test_util::Op;
using test_util::TempDir;
using test_util::WriteOne;

// Drops the file's pages from the page cache; false if any stayed resident.
bool Evict(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  fdatasync(fd);
  posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  struct stat st {};
  bool evicted = fstat(fd, &st) == 0 && st.st_size > 0;
  if (evicted) {
    void* map = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
    std::vector<unsigned char> resident((static_cast<size_t>(st.st_size) + 4095) / 4096);
    evicted = map != MAP_FAILED && mincore(map, static_cast<size_t>(st.st_size), resident.data()) == 0;
    for (unsigned char page : resident) evicted = evicted && (page & 1) == 0;
    if (map != MAP_FAILED) munmap(map, static_cast<size_t>(st.st_size));
  }
  close(fd);
  return evicted;
}

// Evicts the file and tells whether a raw preadv2(RWF_NOWAIT) of its first
// byte then fails with EAGAIN (the probe makes the kernel read the page in,
// so the file is evicted again after it). Empty when the test can run, else
// why it cannot.
std::string CannotTestNoWait(const std::string& path) {
  if (!Evict(path)) return "the page cache kept the file's pages (tmpfs?)";
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  char byte;
  iovec one{&byte, 1};
  const ssize_t r = preadv2(fd, &one, 1, 0, RWF_NOWAIT);
  const int error = errno;
  close(fd);
  if (r >= 0 || error != EAGAIN) return "this file system serves RWF_NOWAIT reads without the page cache";
  // Wait for the probe's read-in to finish before evicting again. The probe
  // may start a read-ahead of the whole file, and a page still in flight when
  // the file is evicted lands in the page cache afterwards (then the test's
  // read inside its no-wait scope found it cached: a flake seen in CI).
  // Reading to the end waits for every page.
  {
    std::ifstream in(path, std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  if (!Evict(path)) return "the page cache kept the file's pages (tmpfs?)";
  return {};
}

std::string ReadAt(rocksdb::FSRandomAccessFile& file, uint64_t offset, size_t n, rocksdb::IOStatus* status) {
  std::vector<char> scratch(n);
  rocksdb::Slice result;
  *status = file.Read(offset, n, rocksdb::IOOptions(), &result, scratch.data(), nullptr);
  return result.ToString();
}

TEST(NoWaitFileSystemTest, ReadsInsideAScopeFailInsteadOfWaitingForTheDisk) {
  TempDir dir;
  const std::string path = dir.path() + "/table.sst";
  std::string bytes(64 << 10, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>('a' + i % 26);
  std::ofstream(path, std::ios::binary) << bytes;

  NoWaitFileSystem fs(rocksdb::FileSystem::Default());
  std::unique_ptr<rocksdb::FSRandomAccessFile> file;
  ASSERT_TRUE(fs.NewRandomAccessFile(path, rocksdb::FileOptions(), &file, nullptr).ok());
  rocksdb::IOStatus status;
  EXPECT_EQ(ReadAt(*file, 100, 5000, &status), bytes.substr(100, 5000));
  EXPECT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(ReadAt(*file, bytes.size() - 10, 100, &status), bytes.substr(bytes.size() - 10));  // short at the end
  EXPECT_TRUE(status.ok());
  std::unique_ptr<rocksdb::FSRandomAccessFile> missing;
  EXPECT_TRUE(fs.NewRandomAccessFile(dir.path() + "/none.sst", rocksdb::FileOptions(), &missing, nullptr)
                  .IsPathNotFound());

  // Something outside the test (the kernel's read-ahead, another reader of
  // the page cache) can bring a page back between a checked eviction and the
  // read: seen in CI under ASan. So the file is evicted again and the read
  // retried a few times; a scope that never fails the read fails the test.
  bool failed_fast = false;
  for (int attempt = 0; attempt < 5 && !failed_fast; ++attempt) {
    if (std::string why = CannotTestNoWait(path); !why.empty()) GTEST_SKIP() << why;
    NoWaitScope scope;
    EXPECT_FALSE(scope.would_have_waited());
    const std::string got = ReadAt(*file, 100, 5000, &status);
    if (status.ok()) {
      EXPECT_EQ(got, bytes.substr(100, 5000));  // served from the page cache
      EXPECT_FALSE(scope.would_have_waited());
      continue;
    }
    EXPECT_EQ(got, "");
    EXPECT_TRUE(status.IsBusy()) << status.ToString();
    EXPECT_TRUE(scope.would_have_waited());
    failed_fast = true;
  }
  EXPECT_TRUE(failed_fast) << "every read of an evicted page inside a scope was served";
  // Outside a scope the read waits, and then the bytes are in the page cache.
  EXPECT_EQ(ReadAt(*file, 100, 5000, &status), bytes.substr(100, 5000));
  EXPECT_TRUE(status.ok()) << status.ToString();
  NoWaitScope scope;
  EXPECT_EQ(ReadAt(*file, 100, 5000, &status), bytes.substr(100, 5000));
  EXPECT_TRUE(status.ok()) << status.ToString();
  EXPECT_FALSE(scope.would_have_waited());
}

class NoWaitReadTest : public EngineTest {};

TEST_P(NoWaitReadTest, AnEntityOnlyOnDiskIsWouldBlockWithoutWaitingAndReadWithWaiting) {
  TableInfo table = Create("cold");
  model::Entity entity = MakeEntity("p", "r", {{"n", model::EdmValue::Int32(7)}});
  ASSERT_TRUE(WriteOne(*engine_, table, Op(model::WriteKind::kInsert, entity)).status.ok());
  if (GetParam()) {  // in memory nothing waits
    auto missing = engine_->GetEntity(table, "p", "absent", Engine::ReadWait::kNoWait);
    auto got = engine_->GetEntity(table, "p", "r", Engine::ReadWait::kNoWait);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(got->properties, entity.properties);
    EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
    return;
  }
  // As in ReadsInsideAScopeFailInsteadOfWaitingForTheDisk, a page can come
  // back between a checked eviction and the read: retried from a reopen (the
  // block cache would otherwise keep what a served read brought in).
  bool would_block = false;
  for (int attempt = 0; attempt < 5 && !would_block; ++attempt) {
    Reopen();  // the close flushes it to a table file; the caches start empty
    std::vector<std::string> tables;
    for (const auto& f : std::filesystem::directory_iterator(Options().path)) {
      if (f.path().extension() == ".sst") tables.push_back(f.path().string());
    }
    ASSERT_FALSE(tables.empty());
    for (const std::string& path : tables) {
      if (std::string why = CannotTestNoWait(path); !why.empty()) GTEST_SKIP() << why;
    }
    auto cold = engine_->GetEntity(table, "p", "r", Engine::ReadWait::kNoWait);
    if (cold.ok()) continue;  // the page was cached again
    EXPECT_EQ(cold.status().code(), StatusCode::kWouldBlock) << cold.status().ToString();
    would_block = true;
  }
  EXPECT_TRUE(would_block) << "every no-wait read of the evicted table file was served";
  auto waited = engine_->GetEntity(table, "p", "r", Engine::ReadWait::kMayWait);
  ASSERT_TRUE(waited.ok()) << waited.status().ToString();
  EXPECT_EQ(waited->properties, entity.properties);
  auto warm = engine_->GetEntity(table, "p", "r", Engine::ReadWait::kNoWait);  // now in memory
  ASSERT_TRUE(warm.ok()) << warm.status().ToString();
  EXPECT_EQ(warm->properties, entity.properties);
}

// A write's read of the stored version is a no-wait read too: where it would
// wait, nothing is written.
TEST_P(NoWaitReadTest, AWriteWhoseStoredEntityIsOnlyOnDiskWritesNothingWithoutWaiting) {
  TableInfo table = Create("coldw");
  ASSERT_TRUE(WriteOne(*engine_, table,
                       Op(model::WriteKind::kInsert, MakeEntity("p", "r", {{"n", model::EdmValue::Int32(1)}})))
                  .status.ok());
  std::vector<model::WriteOp> replace{
      Op(model::WriteKind::kInsertOrReplace, MakeEntity("p", "r", {{"n", model::EdmValue::Int32(2)}}))};
  if (GetParam()) {  // in memory nothing waits
    ASSERT_TRUE(engine_->Write(table, replace, Engine::ReadWait::kNoWait).status.ok());
    EXPECT_EQ(engine_->GetEntity(table, "p", "r")->properties[0].value, model::EdmValue::Int32(2));
    return;
  }
  // As in AnEntityOnlyOnDiskIsWouldBlockWithoutWaitingAndReadWithWaiting, a
  // page can come back between a checked eviction and the read (a background
  // flush or compaction writing a new table file, read-ahead, another reader
  // of the page cache): that attempt's write is then served, and the test
  // retries from a reopen with the next value.
  int stored = 1;
  bool would_block = false;
  for (int attempt = 0; attempt < 5 && !would_block; ++attempt) {
    Reopen();  // the close flushes it to a table file; the caches start empty
    for (const auto& f : std::filesystem::directory_iterator(Options().path)) {
      if (f.path().extension() != ".sst") continue;
      if (std::string why = CannotTestNoWait(f.path().string()); !why.empty()) GTEST_SKIP() << why;
    }
    std::vector<model::WriteOp> next{
        Op(model::WriteKind::kInsertOrReplace, MakeEntity("p", "r", {{"n", model::EdmValue::Int32(stored + 1)}}))};
    WriteResult refused = engine_->Write(table, next, Engine::ReadWait::kNoWait);
    if (refused.status.ok()) {
      ++stored;
      continue;
    }
    EXPECT_EQ(refused.status.code(), StatusCode::kWouldBlock) << refused.status.ToString();
    would_block = true;
  }
  EXPECT_TRUE(would_block) << "every no-wait write over the evicted table file was served";
  auto before = engine_->GetEntity(table, "p", "r");
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(before->properties[0].value, model::EdmValue::Int32(stored));  // nothing was written
  std::vector<model::WriteOp> last{
      Op(model::WriteKind::kInsertOrReplace, MakeEntity("p", "r", {{"n", model::EdmValue::Int32(stored + 1)}}))};
  ASSERT_TRUE(engine_->Write(table, last, Engine::ReadWait::kMayWait).status.ok());
  auto after = engine_->GetEntity(table, "p", "r");
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->properties[0].value, model::EdmValue::Int32(stored + 1));
}

INSTANTIATE_TEST_SUITE_P(Modes, NoWaitReadTest, ::testing::Bool(), test_util::ModeName);

}  // namespace
}  // namespace tablestone::storage
