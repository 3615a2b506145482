// Typed values -> OData JSON response bodies (Learn: payload-format-for-table-service-operations, query-tables,
// create-table, query-entities). Hand-written
// appends (no JSON DOM) because query pages are the hot path. Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "protocol/request_options.h"
#include "storage/model/entity.h"

namespace tablestone::protocol {

// What an entity body needs besides the entity.
struct EntityWriteContext {
  std::string_view base_url;  // service root, with trailing '/': "http://127.0.0.1:10002/devstoreaccount1/"
  std::string_view account;   // for odata.type "<account>.<table>"
  std::string_view table;     // table name as addressed
  MetadataLevel level = MetadataLevel::kMinimalMetadata;
  // $select names; empty = every property. A selected name the entity lacks
  // is written as null (Learn: query-entities).
  const std::vector<std::string>* select = nullptr;
};

// A double as the service writes it: shortest round-trip text, with ".0"
// appended to whole numbers ("6.0") so untyped readers infer Double.
// Non-finite values are not numbers in JSON; callers write "NaN" etc. as strings.
std::string FormatDouble(double value);

// "<table>(PartitionKey='<pk>',RowKey='<rk>')" with quotes doubled and the
// keys percent-encoded (Location, DataServiceId, odata.id/editLink; Learn: insert-entity).
std::string EntityKeyPath(std::string_view table, std::string_view partition_key, std::string_view row_key);
// The same path appended to *out (a Location: the base URL, then the path, in one string).
void AppendEntityKeyPath(std::string* out, std::string_view table, std::string_view partition_key,
                         std::string_view row_key);

// Single entity: {"odata.metadata":"{base}$metadata#{table}/@Element",...}.
std::string WriteEntity(const model::Entity& entity, const EntityWriteContext& ctx);
// Feed: {"odata.metadata":"{base}$metadata#{table}","value":[...]}.
std::string WriteEntityFeed(const std::vector<model::Entity>& entities, const EntityWriteContext& ctx);
// One entity's object in a feed ("{...}", no comma), appended to *out.
void AppendFeedEntity(const model::Entity& entity, const EntityWriteContext& ctx, std::string* out);
// WriteEntityFeed, but where rendered[i] is not empty it is written for
// entities[i] as is: AppendFeedEntity's output for that entity under a
// context of the same level and $select (the scan cache keeps these,
// model::RowRenderer). `rendered` is empty or as long as `entities`.
std::string WriteEntityFeed(const std::vector<model::Entity>& entities, const std::vector<std::string_view>& rendered,
                            const EntityWriteContext& ctx);

// An upper bound, close for typical entities, of the bytes `entity` adds to a
// WriteEntityFeed body written with `ctx` (its object and the comma after
// it). Strings are measured as escaped, so a value full of control characters
// counts six bytes per byte: query pages are limited by this figure, not by
// the stored size (docs/compatibility.md).
size_t EntityJsonSizeBound(const model::Entity& entity, const EntityWriteContext& ctx);
// EntityJsonSizeBound without reading any string: every string byte counted
// as its longest escape (six bytes). Never below EntityJsonSizeBound; costs a
// few instructions per property, for a page that is far from its byte limit.
size_t EntityJsonSizeQuickBound(const model::Entity& entity, const EntityWriteContext& ctx);
// EntityJsonSizeQuickBound from sizes alone, without reading the properties:
// never below it when `property_budget` is at least the sum, over the
// properties, of 3 + the name's bytes + the value's bytes (a String's,
// Binary's or Guid's text bytes, but 15 for a Guid of 36 characters; 0 for
// other types) and no $select name is
// repeated. A stored entity's encoded size is such a budget
// (model::RowSizer). Coarser (28 bytes per budget byte), for pages of small
// rows far from the 4 MiB limit.
size_t EntityJsonSizeBudgetBound(std::string_view partition_key, std::string_view row_key, size_t property_budget,
                                 const EntityWriteContext& ctx);

// Create Table / Get Table: {"odata.metadata":"{base}$metadata#Tables/@Element","TableName":".."}.
std::string WriteTableEntry(std::string_view table, std::string_view base_url, std::string_view account,
                            MetadataLevel level);
// Query Tables: {"odata.metadata":"{base}$metadata#Tables","value":[...]}.
std::string WriteTableFeed(const std::vector<std::string>& tables, std::string_view base_url,
                           std::string_view account, MetadataLevel level);

}  // namespace tablestone::protocol
