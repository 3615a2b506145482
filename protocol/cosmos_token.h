// Cosmos DB for Table's query order and continuation tokens (protocol/flavor.h).
//
// Order: Cosmos DB does not return query results in key order (Learn, "Frequently
// asked questions about Azure Cosmos DB for Table"). A listener of the cosmos
// flavour orders them by ShuffleKey(seed, ...) instead, ties broken by the keys:
// a pure function of the seed and the keys, so the same data gives the same
// order on every run, and an entity keeps its place while others come and go
// (paging stays complete under concurrent writes).
//
// Tokens: the service answers x-ms-continuation-NextPartitionKey as
// {"token":"<base64>","range":{"min":"","max":"FF"}} and NextRowKey as "NA"
// (recorded in azure-sdk-for-python's Cosmos test recordings). Ours carry, in
// the base64, where the next page starts:
//   byte 0: kind ('S' shuffled entities: hash, PK, RK; 'K' entities in key
//           order: PK, RK; 'T' tables: hash, name)
//   then for S and T the 8-byte big-endian hash, then the first string's
//   length (4 bytes big-endian) and bytes, then the second string's bytes.
// Decoding is strict: anything else, a token of another kind or one longer
// than kMaxCosmosTokenBytes is 400 InvalidInput, before any scan.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/api_error.h"

namespace tablestone::protocol {

// The Cosmos token's NextRowKey.
inline constexpr std::string_view kCosmosNextRowKey = "NA";
// Longest header value accepted (two 1 KiB keys, base64, JSON framing).
inline constexpr size_t kMaxCosmosTokenBytes = 8192;

enum class CosmosTokenKind : char { kShuffledEntities = 'S', kKeyOrderEntities = 'K', kTables = 'T' };

struct CosmosResume {
  uint64_t hash = 0;   // S and T
  std::string first;   // PartitionKey, or the table name
  std::string second;  // RowKey (S and K)
};

// 64-bit keyed hash of (a, 0x00, b): FNV-1a over the bytes, seeded, with a
// SplitMix64 finaliser so neighbouring keys land far apart.
uint64_t ShuffleKey(uint64_t seed, std::string_view a, std::string_view b = {});

// The header value for a resume point.
std::string EncodeCosmosToken(CosmosTokenKind kind, const CosmosResume& resume);
ApiResult<CosmosResume> DecodeCosmosToken(std::string_view header_value, CosmosTokenKind kind);

}  // namespace tablestone::protocol
