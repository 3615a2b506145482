#include "server/api/entity_ops.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace tablestone::api {
namespace {

using protocol::Operation;

TEST(EntityOpsTest, InsertNeedsBothKeys) {
  EntityOpRequest req;
  req.operation = Operation::kInsertEntity;
  req.body = R"({"PartitionKey":"p"})";
  auto r = BuildWriteOp(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "PropertiesNeedValue");
  req.body = R"({"PartitionKey":"p","RowKey":"r","x":1})";
  auto ok = BuildWriteOp(req);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->kind, model::WriteKind::kInsert);
  EXPECT_EQ(ok->entity.row_key, "r");
  ASSERT_EQ(ok->entity.properties.size(), 1u);
}

TEST(EntityOpsTest, UrlKeysWinAndMustAgreeWithBody) {
  EntityOpRequest req;
  req.operation = Operation::kInsertOrMergeEntity;
  req.url_key = model::EntityKey{"p", "r"};
  req.body = R"({"x":1})";
  auto ok = BuildWriteOp(req);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->kind, model::WriteKind::kInsertOrMerge);
  EXPECT_EQ(ok->entity.partition_key, "p");
  EXPECT_EQ(ok->if_match.kind, model::IfMatch::Kind::kNone);
  req.body = R"({"PartitionKey":"p","RowKey":"other"})";
  auto bad = BuildWriteOp(req);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, "InvalidInput");
}

TEST(EntityOpsTest, IfMatchHandling) {
  EntityOpRequest req;
  req.operation = Operation::kUpdateEntity;
  req.url_key = model::EntityKey{"p", "r"};
  req.body = "{}";
  req.if_match = "*";
  EXPECT_EQ(BuildWriteOp(req)->if_match.kind, model::IfMatch::Kind::kAny);
  req.if_match = "W/\"datetime'2021-06-09T01%3A17%3A08.3795894Z'\"";
  EXPECT_EQ(BuildWriteOp(req)->if_match.kind, model::IfMatch::Kind::kTimestamp);
  req.if_match = "garbage";
  EXPECT_EQ(BuildWriteOp(req).error().code, "InvalidInput");
  req.if_match = "*";
  req.if_none_match = "*";
  EXPECT_EQ(BuildWriteOp(req).error().code, "InvalidInput");
  req.if_none_match.reset();
  req.operation = Operation::kDeleteEntity;
  req.body = "not json at all";  // ignored for deletes
  auto del = BuildWriteOp(req);
  ASSERT_TRUE(del.ok());
  EXPECT_EQ(del->kind, model::WriteKind::kDelete);
  EXPECT_EQ(del->entity.row_key, "r");
}

TEST(EntityOpsTest, UrlKeyTooLongAndContentType) {
  EntityOpRequest req;
  req.operation = Operation::kInsertOrReplaceEntity;
  req.url_key = model::EntityKey{std::string(1025, 'k'), "r"};
  req.body = "{}";
  EXPECT_EQ(BuildWriteOp(req).error().code, "PropertyValueTooLarge");
  req.url_key = model::EntityKey{"p", "r"};
  req.content_type = "application/xml";
  EXPECT_EQ(BuildWriteOp(req).error().http_status, 415);
}

// Atom-era versions: an Atom entry is read by the Atom reader, with the same
// key rules; the insert echo is an Atom entry for MetadataLevel::kAtom.
TEST(EntityOpsTest, AtomBodiesForAtomEraVersions) {
  const std::string entry =
      "<entry xmlns=\"http://www.w3.org/2005/Atom\" "
      "xmlns:d=\"http://schemas.microsoft.com/ado/2007/08/dataservices\" "
      "xmlns:m=\"http://schemas.microsoft.com/ado/2007/08/dataservices/metadata\"><content><m:properties>"
      "<d:PartitionKey>p</d:PartitionKey><d:RowKey>r</d:RowKey><d:Flag m:type=\"Edm.Boolean\">1</d:Flag>"
      "</m:properties></content></entry>";
  EntityOpRequest req;
  req.operation = Operation::kInsertEntity;
  req.body = entry;
  req.content_type = "application/atom+xml;type=entry";
  req.version = "2011-08-18";
  auto op = BuildWriteOp(req);
  ASSERT_TRUE(op.ok()) << op.error().code;
  ASSERT_EQ(op->entity.properties.size(), 1u);
  EXPECT_EQ(op->entity.properties[0].value, model::EdmValue::Boolean(true));
  req.version = "2015-12-11";
  EXPECT_EQ(BuildWriteOp(req).error().code, "AtomFormatNotSupported");

  WriteResponseContext ctx{"http://h/acct/", "acct", "t", protocol::MetadataLevel::kAtom,
                           protocol::PreferReturn::kNone};
  EntityOpResponse created = RenderWriteSuccess(*op, 637590574283795894, ctx);
  EXPECT_EQ(created.status, 201u);
  EXPECT_NE(created.body.find("<d:Flag m:type=\"Edm.Boolean\">true</d:Flag>"), std::string::npos) << created.body;
  EXPECT_NE(created.body.find("m:etag="), std::string::npos);
}

TEST(EntityOpsTest, RenderInsertAndUpdate) {
  model::WriteOp op;
  op.kind = model::WriteKind::kInsert;
  op.entity.partition_key = "a'b";
  op.entity.row_key = "c:d";
  op.entity.properties = {{"x", model::EdmValue::Int32(1)}};
  WriteResponseContext ctx{"http://h/acct/", "acct", "t", protocol::MetadataLevel::kMinimalMetadata,
                           protocol::PreferReturn::kNone};
  EntityOpResponse created = RenderWriteSuccess(op, 637590574283795894, ctx);
  EXPECT_EQ(created.status, 201u);
  auto find = [](const EntityOpResponse& r, const std::string& name) {
    for (auto& [k, v] : r.headers) {
      if (k == name) return v;
    }
    return std::string("<absent>");
  };
  EXPECT_EQ(find(created, "Location"), "http://h/acct/t(PartitionKey='a''b',RowKey='c%3Ad')");
  EXPECT_EQ(find(created, "DataServiceId"), find(created, "Location"));
  EXPECT_EQ(find(created, "Preference-Applied"), "<absent>");
  EXPECT_EQ(find(created, "ETag").rfind("W/\"datetime'", 0), 0u);
  auto body = nlohmann::json::parse(created.body);
  EXPECT_EQ(body["x"], 1);
  EXPECT_EQ(body["odata.etag"], find(created, "ETag"));

  ctx.prefer = protocol::PreferReturn::kReturnNoContent;
  EntityOpResponse nocontent = RenderWriteSuccess(op, 637590574283795894, ctx);
  EXPECT_EQ(nocontent.status, 204u);
  EXPECT_TRUE(nocontent.body.empty());
  EXPECT_EQ(find(nocontent, "Preference-Applied"), "return-no-content");

  op.kind = model::WriteKind::kMerge;
  EntityOpResponse merged = RenderWriteSuccess(op, 637590574283795894, ctx);
  EXPECT_EQ(merged.status, 204u);
  EXPECT_EQ(find(merged, "Location"), "<absent>");
  EXPECT_NE(find(merged, "ETag"), "<absent>");
  op.kind = model::WriteKind::kDelete;
  EXPECT_EQ(find(RenderWriteSuccess(op, 1, ctx), "ETag"), "<absent>");
}

}  // namespace
}  // namespace tablestone::api
