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
  // Admission has nothing to refuse: the dispatcher skips it.
  EXPECT_FALSE(p.admission_checks);
  EXPECT_TRUE(p.atom);
  EXPECT_TRUE(p.sas_table_management);
  EXPECT_TRUE(p.stored_access_policies);
  EXPECT_EQ(p.error_messages, ErrorMessageStyle::kStorage);
}

// The storage table-name rule is the one Create Table always had; a name in a
// URL is not checked (an unknown table is a 404 later).
TEST(FlavorTest, StorageTableNames) {
  const FlavorPolicy& p = StoragePolicy();
  EXPECT_FALSE(CheckTableName(p, "abc", TableNameUse::kCreate));
  auto short_name = CheckTableName(p, "ab", TableNameUse::kCreate);
  ASSERT_TRUE(short_name);
  EXPECT_EQ(short_name->code, "OutOfRangeInput");
  auto dash = CheckTableName(p, "my-table", TableNameUse::kCreate);
  ASSERT_TRUE(dash);
  EXPECT_EQ(dash->code, "InvalidResourceName");
  for (const char* name : {"ab", "my-table", "a#b", ""}) EXPECT_FALSE(CheckTableName(p, name, TableNameUse::kAddress));
  EXPECT_TRUE(SameTableName(p, "Orders", "oRDERS"));
  EXPECT_EQ(TableNameKey(p, "Orders"), "orders");
}

// Cosmos DB: 1-254 characters, none of / \ # ?, no trailing space (the rule
// azure-data-tables checks its Cosmos errors against), compared exactly.
TEST(FlavorTest, CosmosTableNames) {
  const FlavorPolicy p = CosmosPolicy(true, 0);
  std::string accented;
  for (int i = 0; i < 254; ++i) accented += "\xc3\xa9";  // 254 characters, 508 bytes
  for (const std::string& name : {std::string("a"), std::string("ab"), std::string("my-table"), std::string("x.y"),
                                  std::string("9lives"), std::string("with space"), std::string(254, 't'), accented}) {
    EXPECT_FALSE(CheckTableName(p, name, TableNameUse::kCreate)) << name;
    EXPECT_FALSE(CheckTableName(p, name, TableNameUse::kAddress)) << name;
  }
  for (const std::string& name : {std::string(), std::string(255, 't'), accented + "\xc3\xa9"}) {
    auto refused = CheckTableName(p, name, TableNameUse::kCreate);
    ASSERT_TRUE(refused) << name.size();
    EXPECT_EQ(refused->http_status, 400);
    EXPECT_EQ(refused->code, "BadRequest");
    EXPECT_EQ(refused->message, "The input name is invalid.");
  }
  // An overlong addressed name is not refused: no such table exists (404).
  EXPECT_FALSE(CheckTableName(p, std::string(300, 't'), TableNameUse::kAddress));
  for (const std::string& name : {std::string("a/b"), std::string("a\\b"), std::string("a#b"), std::string("a?b"),
                                  std::string("a(b"), std::string("a\x01"), std::string("Tables"),
                                  std::string("tables"), std::string("$batch"), std::string(".."),
                                  std::string("bad\xff")}) {
    for (TableNameUse use : {TableNameUse::kCreate, TableNameUse::kAddress}) {
      auto refused = CheckTableName(p, name, use);
      ASSERT_TRUE(refused) << name;
      EXPECT_EQ(refused->http_status, 400);
      EXPECT_EQ(refused->code, "InvalidInput");
      EXPECT_EQ(refused->message, "The table name contains an invalid character.");
    }
  }
  auto trailing = CheckTableName(p, "orders ", TableNameUse::kCreate);
  ASSERT_TRUE(trailing);
  EXPECT_EQ(trailing->code, "InvalidInput");
  EXPECT_EQ(trailing->message, "Table name cannot end with a space.");
  EXPECT_FALSE(SameTableName(p, "Orders", "orders"));
  EXPECT_TRUE(SameTableName(p, "Orders", "Orders"));
  EXPECT_EQ(TableNameKey(p, "Orders"), "Orders");
}

TEST(FlavorTest, CosmosAdmission) {
  const FlavorPolicy p = CosmosPolicy(true, 0);
  EXPECT_TRUE(p.admission_checks);
  AdmissionFacts facts;
  facts.api_version = "2019-02-02";
  facts.accept = "application/json;odata=nometadata";
  for (Operation op : {Operation::kCreateTable, Operation::kDeleteTable, Operation::kInsertEntity,
                       Operation::kQueryTables}) {
    facts.operation = op;
    EXPECT_FALSE(RefuseRequest(p, facts)) << OperationName(op);
  }
  // A SAS may not create or delete tables; it may write entities.
  facts.signed_with_sas = true;
  for (Operation op : {Operation::kCreateTable, Operation::kDeleteTable}) {
    facts.operation = op;
    auto refused = RefuseRequest(p, facts);
    ASSERT_TRUE(refused) << OperationName(op);
    EXPECT_EQ(refused->http_status, 403);
    EXPECT_EQ(refused->code, "AuthorizationPermissionMismatch");
  }
  facts.operation = Operation::kInsertEntity;
  EXPECT_FALSE(RefuseRequest(p, facts));
  EXPECT_FALSE(RefuseRequest(StoragePolicy(), [&] {
    AdmissionFacts create = facts;
    create.operation = Operation::kCreateTable;
    return create;
  }()));
  // The URL's table name.
  facts.signed_with_sas = false;
  facts.operation = Operation::kQueryEntities;
  facts.table = "a#b";
  auto bad_name = RefuseRequest(p, facts);
  ASSERT_TRUE(bad_name);
  EXPECT_EQ(bad_name->code, "InvalidInput");
  facts.table = "my-table";
  EXPECT_FALSE(RefuseRequest(p, facts));
  // Atom: asked for (or the Atom-era default) or sent, at an Atom-era version.
  facts.api_version = "2013-08-15";
  facts.accept = "application/atom+xml";
  auto atom = RefuseRequest(p, facts);
  ASSERT_TRUE(atom);
  EXPECT_EQ(atom->http_status, 415);
  EXPECT_EQ(atom->code, "AtomFormatNotSupported");
  facts.accept = "";
  EXPECT_TRUE(RefuseRequest(p, facts));  // Atom is that version's default
  facts.accept = "application/json;odata=minimalmetadata";
  EXPECT_FALSE(RefuseRequest(p, facts));
  facts.content_type = "application/atom+xml; charset=utf-8";
  EXPECT_TRUE(RefuseRequest(p, facts));
  facts.content_type = "application/json";
  EXPECT_FALSE(RefuseRequest(p, facts));
  const std::string json = "json";
  facts.accept = "application/atom+xml";
  facts.format = &json;  // $format wins over Accept
  EXPECT_FALSE(RefuseRequest(p, facts));
  // A JSON-only version answers Atom's 415 where it parses these, under either flavour.
  facts.format = nullptr;
  facts.api_version = "2019-02-02";
  EXPECT_FALSE(RefuseRequest(p, facts));
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
  EXPECT_TRUE(p.cosmos_table_names);
  EXPECT_FALSE(p.atom);
  EXPECT_FALSE(p.sas_table_management);
  EXPECT_FALSE(p.stored_access_policies);
  EXPECT_EQ(p.error_messages, ErrorMessageStyle::kCosmos);
  const ApiError busy = RequestRateTooLarge();
  EXPECT_EQ(busy.http_status, 429);
  EXPECT_EQ(busy.code, "TooManyRequests");
}

}  // namespace
}  // namespace tablestone::protocol
