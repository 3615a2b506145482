// Keys and values of the `catalog` and `meta` column families
// (docs/storage-format.md):
//
//   catalog: account 00 lower(name)       -> 0x01 table_id:fixed64be name_as_created
//   meta:    'N'                          -> next_table_id:fixed64be
//            'A' account 00 key           -> opaque account metadata blob
//            'L' table_id:fixed64be       -> opaque table ACL blob
//            'C'                          -> entity counts at the last clean close:
//                                            seq:fixed64be (table_id:fixed64be count:fixed64be)*
//            'G'                          -> the scan cache's partitions at the last clean close:
//                                            (size:fixed64be cache_key)*
//
// Thread safety: all functions are pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tablestone::storage {

// account 00 lower(name). `lower_name` must already be lower-cased.
std::string CatalogKey(std::string_view account, std::string_view lower_name);
// The prefix shared by all catalog keys of an account: account 00.
std::string CatalogAccountPrefix(std::string_view account);

std::string EncodeCatalogValue(uint64_t table_id, std::string_view name);
bool DecodeCatalogValue(std::string_view value, uint64_t* table_id, std::string* name);

// Meta keys.
std::string NextTableIdKey();
std::string AccountMetaKey(std::string_view account, std::string_view key);
std::string TableAclKey(uint64_t table_id);
std::string EntityCountsKey();
std::string CachedPartitionsKey();

// The 'C' value: the database's latest sequence number before the blob was
// written, and every live table's entity count at that point.
struct EntityCounts {
  uint64_t sequence = 0;
  std::vector<std::pair<uint64_t, uint64_t>> tables;  // (table id, entities)
};
std::string EncodeEntityCounts(const EntityCounts& counts);
bool DecodeEntityCounts(std::string_view value, EntityCounts* counts);

// The 'G' value: PartitionCache::CacheKey strings, most recently used first.
std::string EncodeKeyList(const std::vector<std::string>& keys);
bool DecodeKeyList(std::string_view value, std::vector<std::string>* keys);

std::string EncodeFixed64Be(uint64_t v);
bool DecodeFixed64Be(std::string_view bytes, uint64_t* v);

}  // namespace tablestone::storage
