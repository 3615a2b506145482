// The entities column family's filter policy: Bloom filters in every SST file
// except those a compaction writes as the bottommost data of their key range
// (once a table is large: the LSM tree's last level).
//
// Why: the last level holds ~90% of a large table's keys, and its filters
// (~70 MB at 55M entities, 10 bits per key) outgrew the block cache, so a
// random point read usually read a filter partition before its data block
// (docs/benchmarks.md, "Scale"). A read of an existing key needs no filter
// there. RocksDB's optimize_filters_for_hits drops the same filters but also
// ignores, at read time, the filters of whatever level is the last non-empty
// one: while a table is small and all its files are still in level 0, the
// oldest of them was read without its filter, and every insert's existence
// check of a new key inside that file's key range read a data block
// (+4.6k instructions per insert, docs/benchmarks.md "The point writes
// against 2f279ee"). This policy decides when a file is written, so level 0
// and the middle levels keep and use their filters.
//
// Contract:
//   * A file written by a compaction into a level below 0 as the bottommost
//     data of its key range (FilterBuildingContext::is_bottommost: no lower
//     level overlaps it; at scale, the last level) gets no filter: the files
//     optimize_filters_for_hits builds without one. Every other file (flushes,
//     level 0, middle levels with data below them) gets the Bloom filter of
//     NewBloomFilterPolicy(bits_per_key), and reads use it wherever it is.
//   * Reads any filter a built-in RocksDB policy wrote (CompatibilityName is
//     the built-in family's), so existing data directories keep working both
//     ways.
#pragma once

#include <memory>

#include <rocksdb/filter_policy.h>

namespace tablestone::storage {

std::shared_ptr<const rocksdb::FilterPolicy> NewLastLevelUnfilteredPolicy(double bits_per_key);

}  // namespace tablestone::storage
