// FromRocks: the mapping of RocksDB statuses, and the "storage" log line that
// disk trouble leaves with RocksDB's own message.
#include "storage/rocks_status.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <string>
#include <vector>

namespace tablestone::storage {
namespace {

class RocksStatusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    previous_ = spdlog::get("storage");
    spdlog::drop("storage");
    sink_ = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(16);
    spdlog::register_logger(std::make_shared<spdlog::logger>("storage", sink_));
  }
  void TearDown() override {
    spdlog::drop("storage");
    if (previous_) spdlog::register_logger(previous_);
  }
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
  std::shared_ptr<spdlog::logger> previous_;
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
