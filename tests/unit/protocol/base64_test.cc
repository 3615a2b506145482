#include "protocol/base64.h"

#include <gtest/gtest.h>

#include "protocol/api_error.h"
#include "protocol/error_body.h"

namespace tablestone::protocol {
namespace {

TEST(Base64Test, RoundTripsAllLengths) {
  std::string bytes;
  for (int i = 0; i < 300; ++i) {
    auto decoded = Base64Decode(Base64Encode(bytes));
    ASSERT_TRUE(decoded.has_value());
    EXPECT_EQ(*decoded, bytes);
    bytes.push_back(static_cast<char>(i * 37));
  }
}

TEST(Base64Test, KnownVectors) {
  EXPECT_EQ(Base64Encode("Bar"), "QmFy");
  EXPECT_EQ(Base64Encode("a"), "YQ==");
  EXPECT_EQ(Base64Encode("ab"), "YWI=");
  EXPECT_EQ(*Base64Decode("YWI="), "ab");
}

TEST(Base64Test, RejectsMalformed) {
  EXPECT_FALSE(Base64Decode("YWI").has_value());
  EXPECT_FALSE(Base64Decode("Y=I=").has_value());
  EXPECT_FALSE(Base64Decode("YW I").has_value());
  EXPECT_FALSE(Base64Decode("=AAA").has_value());
}

TEST(ApiErrorTest, MapsEngineStatusToServiceErrors) {
  EXPECT_EQ(FromStatus(Status::TableNotFound()).code, "TableNotFound");
  EXPECT_EQ(FromStatus(Status::NotFound()).code, "ResourceNotFound");
  EXPECT_EQ(FromStatus(Status::NotFound()).http_status, 404);
  EXPECT_EQ(FromStatus(Status::ConditionNotMet()).http_status, 412);
  EXPECT_EQ(FromStatus(Status::AlreadyExists()).code, "EntityAlreadyExists");
  EXPECT_EQ(FromStatus(Status::IoError("disk")).http_status, 500);
}

TEST(ApiErrorTest, BatchIndexIsAFieldTheRendererPrefixes) {
  ApiError indexed = ApiError::EntityAlreadyExists().WithBatchIndex(37);
  EXPECT_EQ(indexed.failed_index, 37u);
  EXPECT_EQ(indexed.message, "The specified entity already exists.");
  EXPECT_FALSE(ApiError::EntityAlreadyExists().failed_index.has_value());
  EXPECT_EQ(ErrorMessageText(indexed, "rid", 0).rfind("37:The specified entity already exists.\nRequestId:rid", 0), 0u);
  EXPECT_EQ(ErrorMessageText(ApiError::EntityAlreadyExists(), "rid", 0).rfind("The specified", 0), 0u);
}

}  // namespace
}  // namespace tablestone::protocol
