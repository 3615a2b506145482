// The operation table (protocol/operation.h): every operation has exactly one
// row, and the columns other code indexes by are consistent.
#include "protocol/operation.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace tablestone::protocol {
namespace {

TEST(OperationTable, EveryOperationHasItsRowAtItsIndex) {
  for (size_t i = 0; i < kOperationCount; ++i) {
    const auto op = static_cast<Operation>(i);
    EXPECT_EQ(RowOf(op).operation, op) << i;
    EXPECT_FALSE(RowOf(op).name.empty()) << i;
  }
  EXPECT_EQ(kOperationCount, static_cast<size_t>(Operation::kPreflight) + 1);
}

TEST(OperationTable, NamesAreUnique) {
  std::set<std::string_view> names;
  for (const OperationRow& row : kOperationTable) EXPECT_TRUE(names.insert(row.name).second) << row.name;
  ASSERT_EQ(OperationNames().size(), kOperationCount);
  for (size_t i = 0; i < kOperationCount; ++i) EXPECT_EQ(OperationNames()[i], kOperationTable[i].name);
}

TEST(OperationTable, MetricsIndexesAreDenseAndUnique) {
  std::set<size_t> seen;
  for (const OperationRow& row : kOperationTable) {
    EXPECT_LT(row.metrics_index, kOperationCount) << row.name;
    EXPECT_TRUE(seen.insert(row.metrics_index).second) << row.name;
    // Metrics::OperationLabel reads the name back by slot.
    EXPECT_EQ(kOperationTable[row.metrics_index].name, row.name);
  }
  EXPECT_EQ(seen.size(), kOperationCount);
}

// The columns agree with each other: only entity operations carry service
// SAS letters, only XML operations are ACL or service-property ones, and the
// one unauthenticated operation is the preflight.
TEST(OperationTable, ColumnsAgree) {
  for (const OperationRow& row : kOperationTable) {
    if (!row.service_sas.empty()) EXPECT_EQ(row.scope, OperationScope::kEntity) << row.name;
    if (row.scope == OperationScope::kEntity && row.operation != Operation::kBatch) {
      EXPECT_FALSE(row.service_sas.empty()) << row.name;
    }
    EXPECT_EQ(row.authenticated, row.operation != Operation::kPreflight) << row.name;
    if (row.errors == ErrorFormat::kXml) EXPECT_NE(row.scope, OperationScope::kEntity) << row.name;
  }
}

TEST(OperationTable, Predicates) {
  EXPECT_EQ(OperationName(Operation::kBatch), "EntityGroupTransaction");
  EXPECT_EQ(OperationName(Operation::kGetServiceProperties), "GetTableServiceProperties");
  std::set<Operation> writes, entity_writes, entity_reads, xml;
  for (const OperationRow& row : kOperationTable) {
    if (IsWriteOperation(row.operation)) writes.insert(row.operation);
    if (IsEntityWriteOperation(row.operation)) entity_writes.insert(row.operation);
    if (IsEntityReadOperation(row.operation)) entity_reads.insert(row.operation);
    if (IsXmlOperation(row.operation)) xml.insert(row.operation);
  }
  EXPECT_EQ(writes, (std::set<Operation>{Operation::kCreateTable, Operation::kDeleteTable, Operation::kInsertEntity,
                                         Operation::kUpdateEntity, Operation::kMergeEntity,
                                         Operation::kInsertOrReplaceEntity, Operation::kInsertOrMergeEntity,
                                         Operation::kDeleteEntity, Operation::kBatch, Operation::kSetTableAcl,
                                         Operation::kSetServiceProperties}));
  EXPECT_EQ(entity_writes, (std::set<Operation>{Operation::kInsertEntity, Operation::kUpdateEntity,
                                                Operation::kMergeEntity, Operation::kInsertOrReplaceEntity,
                                                Operation::kInsertOrMergeEntity, Operation::kDeleteEntity}));
  EXPECT_EQ(entity_reads, (std::set<Operation>{Operation::kQueryEntities, Operation::kGetEntity}));
  EXPECT_EQ(xml, (std::set<Operation>{Operation::kGetTableAcl, Operation::kSetTableAcl,
                                      Operation::kGetServiceProperties, Operation::kSetServiceProperties,
                                      Operation::kGetServiceStats}));
}

}  // namespace
}  // namespace tablestone::protocol
