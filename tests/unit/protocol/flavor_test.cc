#include "protocol/flavor.h"

#include <gtest/gtest.h>

#include <string>

#include "storage/model/limits.h"

namespace tablestone::protocol {
namespace {

model::Entity EntityWith(std::string row_key, std::string property = "Name") {
  model::Entity e;
  e.partition_key = "p";
  e.row_key = std::move(row_key);
  e.properties.push_back({std::move(property), model::EdmValue::String("v")});
  return e;
}

// The storage policy is the storage rules, constant for constant: the storage
// flavour is unchanged by construction.
TEST(FlavorTest, StoragePolicyIsTheStorageLimits) {
  const FlavorPolicy& p = StoragePolicy();
  EXPECT_EQ(p.flavor, Flavor::kStorage);
  EXPECT_EQ(p.max_row_key_utf8_bytes, 0u);
  EXPECT_EQ(p.max_batch_body_bytes, model::kMaxBatchBodyBytes);
  EXPECT_EQ(p.max_batch_operations, model::kMaxBatchOperations);
  EXPECT_EQ(p.max_top, static_cast<int>(model::kMaxPageEntities));
  EXPECT_FALSE(p.table_names_case_sensitive);
  EXPECT_FALSE(p.reserved_property_names);
  EXPECT_TRUE(p.cors);
  EXPECT_TRUE(p.error_code_header);
  EXPECT_EQ(p.continuation, ContinuationStyle::kKeys);
  EXPECT_FALSE(p.shuffle);
  for (const OperationRow& row : kOperationTable) EXPECT_FALSE(RefuseOperation(p, row.operation)) << row.name;
  EXPECT_FALSE(CheckEntity(p, EntityWith(std::string(1024, 'r'), "id")));
}

TEST(FlavorTest, CosmosRefusesTheOperationsItDoesNotHave) {
  const FlavorPolicy p = CosmosPolicy(true, 7);
  for (Operation op : {Operation::kGetServiceProperties, Operation::kSetServiceProperties,
                       Operation::kGetServiceStats, Operation::kGetTableAcl, Operation::kSetTableAcl,
                       Operation::kPreflight}) {
    auto refused = RefuseOperation(p, op);
    ASSERT_TRUE(refused) << OperationName(op);
    EXPECT_EQ(refused->http_status, 501);
    EXPECT_EQ(refused->code, "NotImplemented");
    EXPECT_EQ(refused->message, "The requested operation is not supported.");
  }
  for (Operation op : {Operation::kQueryTables, Operation::kCreateTable, Operation::kDeleteTable,
                       Operation::kQueryEntities, Operation::kGetEntity, Operation::kInsertEntity,
                       Operation::kMergeEntity, Operation::kBatch}) {
    EXPECT_FALSE(RefuseOperation(p, op)) << OperationName(op);
  }
}

// RowKey at most 255 bytes, counted in UTF-8 bytes, not characters.
TEST(FlavorTest, CosmosRowKeyIsCountedInUtf8Bytes) {
  const FlavorPolicy p = CosmosPolicy(true, 0);
  EXPECT_FALSE(CheckEntity(p, EntityWith(std::string(255, 'r'))));
  auto refused = CheckEntity(p, EntityWith(std::string(256, 'r')));
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->http_status, 400);
  EXPECT_EQ(refused->code, "KeyValueTooLarge");
  // 128 two-byte characters: 256 bytes.
  std::string wide;
  for (int i = 0; i < 128; ++i) wide += "\xc3\xa9";
  EXPECT_TRUE(CheckEntity(p, EntityWith(wide)));
  EXPECT_FALSE(CheckEntity(p, EntityWith(wide.substr(2))));
}

TEST(FlavorTest, CosmosReservesFourPropertyNamesInAnyCase) {
  const FlavorPolicy p = CosmosPolicy(true, 0);
  for (const char* name : {"id", "ID", "Id", "rid", "RID", "etag", "ETag", "ResourceId", "resourceid"}) {
    auto refused = CheckEntity(p, EntityWith("r", name));
    ASSERT_TRUE(refused) << name;
    EXPECT_EQ(refused->code, "PropertyNameInvalid") << name;
  }
  for (const char* name : {"ids", "rowid", "ETag2", "Resource", "i_d"}) {
    EXPECT_FALSE(CheckEntity(p, EntityWith("r", name))) << name;
  }
}

TEST(FlavorTest, CosmosLimitsAndRendering) {
  const FlavorPolicy p = CosmosPolicy(false, 3);
  EXPECT_EQ(p.max_batch_body_bytes, 2u << 20);
  EXPECT_EQ(p.max_batch_operations, 0u);
  EXPECT_EQ(p.max_top, INT32_MAX);
  EXPECT_TRUE(p.table_names_case_sensitive);
  EXPECT_FALSE(p.cors);
  EXPECT_FALSE(p.error_code_header);
  EXPECT_EQ(p.continuation, ContinuationStyle::kCosmosToken);
  EXPECT_FALSE(p.shuffle);
  EXPECT_EQ(p.shuffle_seed, 3u);
  const ApiError busy = RequestRateTooLarge();
  EXPECT_EQ(busy.http_status, 429);
  EXPECT_EQ(busy.code, "TooManyRequests");
}

}  // namespace
}  // namespace tablestone::protocol
