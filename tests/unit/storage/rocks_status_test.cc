// FromRocks: the mapping of RocksDB statuses, and the "storage" log line that
// disk trouble leaves with RocksDB's own message.
#include "storage/rocks_status.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace tablestone::storage {
namespace {

// The sink is added to the logger StorageLog() answers, whatever it is: it
// keeps the first one it found (the default logger when no "storage" logger
// was registered yet, as when an earlier test in this binary logged first).
class RocksStatusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sink_ = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(16);
    StorageLog()->sinks().push_back(sink_);
  }
  void TearDown() override {
    auto& sinks = StorageLog()->sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
  }
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
};

TEST_F(RocksStatusTest, IoErrorsAndCorruptionAreLoggedWithRocksDbsMessage) {
  Status io = FromRocks(rocksdb::Status::IOError("sst 000042.sst", "Input/output error"), "reading entity");
  EXPECT_EQ(io.code(), StatusCode::kIoError);
  Status corrupt = FromRocks(rocksdb::Status::Corruption("block checksum mismatch"), "scan");
  EXPECT_EQ(corrupt.code(), StatusCode::kCorruption);
  std::vector<std::string> lines = sink_->last_formatted();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("reading entity"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("Input/output error"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("block checksum mismatch"), std::string::npos) << lines[1];
}

TEST_F(RocksStatusTest, ExpectedOutcomesAreNotLogged) {
  EXPECT_TRUE(FromRocks(rocksdb::Status::OK(), "x").ok());
  EXPECT_EQ(FromRocks(rocksdb::Status::NotFound(), "x").code(), StatusCode::kNotFound);
  EXPECT_EQ(FromRocks(rocksdb::Status::Busy(), "x").code(), StatusCode::kBusy);
  EXPECT_TRUE(sink_->last_formatted().empty());
}

}  // namespace
}  // namespace tablestone::storage
