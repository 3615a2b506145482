#include "protocol/acl_blob.h"

#include <gtest/gtest.h>

namespace tablestone::protocol {
namespace {

TEST(AclBlobTest, RoundTrip) {
  std::vector<AclEntry> entries = {{"full", true, 1, 2, "raud"}, {"empty", false, std::nullopt, std::nullopt, std::nullopt}};
  std::string blob = EncodeAclBlob(entries);
  auto back = DecodeAclBlob(blob);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, entries);
}

TEST(AclBlobTest, EmptyAndCorrupt) {
  EXPECT_EQ(EncodeAclBlob({}), "");
  EXPECT_TRUE(DecodeAclBlob("").value().empty());
  EXPECT_FALSE(DecodeAclBlob("{").has_value());
  EXPECT_FALSE(DecodeAclBlob("[{\"noid\":1}]").has_value());
  EXPECT_FALSE(DecodeAclBlob("[{\"id\":\"a\",\"start\":\"x\"}]").has_value());
}

}  // namespace
}  // namespace tablestone::protocol
