#include "server/api/response_writer.h"

#include <utility>

#include "protocol/atom/atom_writer.h"
#include "server/api/response.h"
#include "storage/model/datetime.h"

namespace tablestone::api {
namespace {

class JsonWriter final : public ResponseWriter {
 public:
  explicit JsonWriter(protocol::MetadataLevel level) : level_(level) {}

  void Entity(http::Response& response, unsigned status, const model::Entity& entity,
              const protocol::EntityWriteContext& ctx) const override {
    WriteJson(response, status, level_, protocol::WriteEntity(entity, ctx));
  }
  void EntityFeed(http::Response& response, const std::vector<model::Entity>& entities,
                  const std::vector<std::string_view>& rendered,
                  const protocol::EntityWriteContext& ctx) const override {
    WriteJson(response, 200, level_, protocol::WriteEntityFeed(entities, rendered, ctx));
  }
  void TableEntry(http::Response& response, unsigned status, std::string_view table, std::string_view base_url,
                  std::string_view account) const override {
    WriteJson(response, status, level_, protocol::WriteTableEntry(table, base_url, account, level_));
  }
  void TableFeed(http::Response& response, const std::vector<std::string>& tables, std::string_view base_url,
                 std::string_view account) const override {
    WriteJson(response, 200, level_, protocol::WriteTableFeed(tables, base_url, account, level_));
  }
  void RenderedEntity(http::Response& response, unsigned status, std::string body) const override {
    WriteJson(response, status, level_, std::move(body));
  }
  std::string EntityContentType() const override { return std::string(protocol::JsonContentType(level_)); }

 private:
  const protocol::MetadataLevel level_;
};

// Atom entries and feeds carry an <updated> time: the time of the answer.
class AtomWriter final : public ResponseWriter {
 public:
  void Entity(http::Response& response, unsigned status, const model::Entity& entity,
              const protocol::EntityWriteContext& ctx) const override {
    WriteAtom(response, status, protocol::atom::kEntryContentType, protocol::atom::WriteEntityEntry(entity, ctx));
  }
  void EntityFeed(http::Response& response, const std::vector<model::Entity>& entities,
                  const std::vector<std::string_view>&, const protocol::EntityWriteContext& ctx) const override {
    WriteAtom(response, 200, protocol::atom::kFeedContentType,
              protocol::atom::WriteEntityFeed(entities, ctx, model::NowTicks()));
  }
  void TableEntry(http::Response& response, unsigned status, std::string_view table, std::string_view base_url,
                  std::string_view account) const override {
    WriteAtom(response, status, protocol::atom::kEntryContentType,
              protocol::atom::WriteTableEntry(table, base_url, account, model::NowTicks()));
  }
  void TableFeed(http::Response& response, const std::vector<std::string>& tables, std::string_view base_url,
                 std::string_view account) const override {
    WriteAtom(response, 200, protocol::atom::kFeedContentType,
              protocol::atom::WriteTableFeed(tables, base_url, account, model::NowTicks()));
  }
  void RenderedEntity(http::Response& response, unsigned status, std::string body) const override {
    WriteAtom(response, status, protocol::atom::kEntryContentType, std::move(body));
  }
  std::string EntityContentType() const override { return std::string(protocol::atom::kEntryContentType); }
};

}  // namespace

const ResponseWriter& WriterFor(protocol::MetadataLevel level) {
  static const JsonWriter kNone(protocol::MetadataLevel::kNoMetadata);
  static const JsonWriter kMinimal(protocol::MetadataLevel::kMinimalMetadata);
  static const JsonWriter kFull(protocol::MetadataLevel::kFullMetadata);
  static const AtomWriter kAtom;
  switch (level) {
    case protocol::MetadataLevel::kNoMetadata: return kNone;
    case protocol::MetadataLevel::kFullMetadata: return kFull;
    case protocol::MetadataLevel::kAtom: return kAtom;
    case protocol::MetadataLevel::kMinimalMetadata: break;
  }
  return kMinimal;
}

}  // namespace tablestone::api
