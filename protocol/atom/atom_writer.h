// Typed values -> AtomPub response bodies, for requests of x-ms-version before
// 2015-12-11 that negotiated MetadataLevel::kAtom (Learn:
// payload-format-for-table-service-operations; query-tables, query-entities,
// create-table, insert-entity of those versions). Feeds and entries share the
// JSON writer's context (protocol/odata_writer.h) and the entity model.
//
// Values are written in their XML text forms: Edm.DateTime as
// yyyy-MM-ddTHH:mm:ss.fffffffZ, Edm.Double shortest round-trip with NaN/INF/
// -INF, Edm.Boolean true/false, Edm.Binary base64, every type but Edm.String
// with m:type. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/odata_writer.h"
#include "storage/model/entity.h"

namespace tablestone::protocol::atom {

inline constexpr std::string_view kFeedContentType = "application/atom+xml;type=feed;charset=utf-8";
inline constexpr std::string_view kEntryContentType = "application/atom+xml;type=entry;charset=utf-8";

// One entity as a standalone <entry> document (Get Entity, Insert's echo):
// m:etag, id, edit link, category <account>.<table>, and its properties
// (PartitionKey, RowKey, Timestamp, then the rest; only the $select ones,
// a selected name the entity lacks as m:null="true").
std::string WriteEntityEntry(const model::Entity& entity, const EntityWriteContext& ctx);
// Query Entities: a <feed> of entries. `now_ticks` is the feed's <updated>.
std::string WriteEntityFeed(const std::vector<model::Entity>& entities, const EntityWriteContext& ctx,
                            int64_t now_ticks);

// Create Table's echo: an entry with <d:TableName>.
std::string WriteTableEntry(std::string_view table, std::string_view base_url, std::string_view account,
                            int64_t now_ticks);
// Query Tables: a feed of those entries.
std::string WriteTableFeed(const std::vector<std::string>& tables, std::string_view base_url,
                           std::string_view account, int64_t now_ticks);

}  // namespace tablestone::protocol::atom
