// Entity keys in the `entities` column family.
//
//   key := table_id (8 bytes, big-endian) Enc(PartitionKey) 00 01 Enc(RowKey) 00 01
//
// Enc() turns UTF-8 into CESU-8 (each character above U+FFFF written as its
// two UTF-16 surrogates, 3 bytes each) and escapes bytes so that RocksDB's
// bytewise order of keys is exactly the service's result order: ordinal
// comparison of UTF-16 code units, PartitionKey first, then RowKey (spec
// Learn: query-entities). The terminator 00 01 sorts below every continuation byte (an
// escaped 00 is 00 FF), so all rows of partition "a" sort before any row of
// partition "a0". Full grammar: docs/storage-format.md.
//
// Enc() is injective for arbitrary bytes, so DecodeEntityKey(EncodeEntityKey(k))
// returns k even for invalid UTF-8; only the ordering guarantee is limited to
// valid UTF-8.
//
// Thread safety: all functions are pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tablestone::storage {

inline constexpr size_t kTableIdBytes = 8;

// Appends the 8-byte big-endian table id.
void AppendTableId(uint64_t table_id, std::string* out);
// Reads the table id of a key; returns false if the key is shorter than 8 bytes.
bool ReadTableId(std::string_view key, uint64_t* table_id);

// Appends Enc(text) followed by the 00 01 terminator.
void AppendKeyComponent(std::string_view text, std::string* out);

// table_id + Enc(pk) 00 01 + Enc(rk) 00 01.
std::string EncodeEntityKey(uint64_t table_id, std::string_view partition_key, std::string_view row_key);
void EncodeEntityKey(uint64_t table_id, std::string_view partition_key, std::string_view row_key,
                     std::string* out);

// Splits an encoded entity key. Reuses the capacity of *partition_key and
// *row_key. Returns false (never crashes) for malformed input.
bool DecodeEntityKey(std::string_view key, uint64_t* table_id, std::string* partition_key,
                     std::string* row_key);
// The RowKey of an encoded entity key whose first `row_key_offset` bytes are
// a table id and an encoded PartitionKey with its terminator (that is,
// PartitionStart(table_id, partition_key).size()): a scan that knows the
// key's partition from its prefix decodes only the RowKey. Reuses *row_key's
// capacity. Returns false (never crashes) for malformed input.
bool DecodeEntityRowKey(std::string_view key, size_t row_key_offset, std::string* row_key);

// Range helpers (all results are complete keys or key prefixes usable as
// RocksDB seek targets / exclusive upper bounds):
// First possible key of a table.
std::string TableStart(uint64_t table_id);
// Exclusive end of a table (= TableStart(table_id + 1)).
std::string TableEnd(uint64_t table_id);
// First possible key of partition `pk` (inclusive lower bound of its rows).
std::string PartitionStart(uint64_t table_id, std::string_view partition_key);
// Exclusive upper bound just after the last row of partition `pk`.
std::string PartitionEnd(uint64_t table_id, std::string_view partition_key);
// The same into *out (replaced, its capacity reused): a scan enters a new
// partition per row on a table of one-row partitions.
void PartitionStart(uint64_t table_id, std::string_view partition_key, std::string* out);
void PartitionEnd(uint64_t table_id, std::string_view partition_key, std::string* out);
// Smallest key strictly greater than `key` (key + 0x00).
std::string KeySuccessor(std::string_view key);

}  // namespace tablestone::storage
