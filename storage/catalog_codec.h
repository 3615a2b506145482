// Keys and values of the `catalog` and `meta` column families
// (docs/storage-format.md):
//
//   catalog: account 00 lower(name)       -> 0x01 table_id:fixed64be name_as_created
//   meta:    'N'                          -> next_table_id:fixed64be
//            'A' account 00 key           -> opaque account metadata blob
//            'L' table_id:fixed64be       -> opaque table ACL blob
//
// Thread safety: all functions are pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

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

std::string EncodeFixed64Be(uint64_t v);
bool DecodeFixed64Be(std::string_view bytes, uint64_t* v);

}  // namespace tablestone::storage
