#include "server/api/shuffled_scan.h"

#include <algorithm>
#include <string_view>
#include <tuple>
#include <utility>

#include "storage/model/limits.h"

namespace tablestone::api {
namespace {

struct Placed {
  uint64_t hash = 0;
  model::Entity entity;
  size_t bytes = 0;
};

auto KeyOf(uint64_t hash, std::string_view pk, std::string_view rk) { return std::tuple(hash, pk, rk); }
auto KeyOf(const Placed& p) { return KeyOf(p.hash, p.entity.partition_key, p.entity.row_key); }
auto KeyOf(const protocol::CosmosResume& r) {
  return KeyOf(r.hash, std::string_view(r.first), std::string_view(r.second));
}

struct ByKey {
  bool operator()(const Placed& a, const Placed& b) const { return KeyOf(a) < KeyOf(b); }
};

}  // namespace

StatusOr<ShuffledPage> ScanShuffled(storage::Engine& engine, const storage::TableInfo& table, model::ScanSpec spec,
                                    size_t n, uint64_t seed, const std::optional<protocol::CosmosResume>& after) {
  ShuffledPage page;
  if (n == 0) return page;
  spec.resume_from.reset();
  spec.resume_scan = nullptr;
  spec.resumable = false;
  spec.renderer.reset();
  spec.max_results = model::kMaxPageEntities;
  spec.max_bytes = model::kMaxPageBytes;
  // The heap is always the smallest entities seen so far, in order: once one
  // was dropped (over n, or over the page's bytes), none at or above the
  // smallest dropped may join, and that one is where the next page starts.
  std::vector<Placed> heap;  // a max-heap by ByKey
  size_t heap_bytes = 0;
  std::optional<Placed> smallest_dropped;
  bool more = false;
  auto drop_top = [&]() {
    std::pop_heap(heap.begin(), heap.end(), ByKey());
    Placed top = std::move(heap.back());
    heap.pop_back();
    heap_bytes -= top.bytes;
    if (!smallest_dropped || ByKey()(top, *smallest_dropped)) smallest_dropped = std::move(top);
    more = true;
  };
  while (true) {
    auto result = engine.Scan(table, spec);
    if (!result.ok()) return result.status();
    page.rows_examined += result->rows_examined;
    if (result->deadline_passed) {
      page.deadline_passed = true;
      return page;
    }
    for (model::Entity& entity : result->entities) {
      Placed placed{protocol::ShuffleKey(seed, entity.partition_key, entity.row_key), std::move(entity), 0};
      if (after && !(KeyOf(*after) < KeyOf(placed))) continue;
      if (smallest_dropped && !ByKey()(placed, *smallest_dropped)) {
        more = true;
        continue;
      }
      placed.bytes = spec.row_sizer != nullptr ? spec.row_sizer->Bytes(placed.entity, 0) : 0;
      heap_bytes += placed.bytes;
      heap.push_back(std::move(placed));
      std::push_heap(heap.begin(), heap.end(), ByKey());
      while (heap.size() > n || (heap.size() > 1 && heap_bytes > model::kMaxPageBytes)) drop_top();
    }
    if (!result->next) break;
    spec.resume_from = std::move(result->next);
  }
  std::sort_heap(heap.begin(), heap.end(), ByKey());
  if (more && !heap.empty()) {
    const Placed& last = heap.back();
    page.next = protocol::CosmosResume{last.hash, last.entity.partition_key, last.entity.row_key};
  }
  page.entities.reserve(heap.size());
  for (Placed& placed : heap) page.entities.push_back(std::move(placed.entity));
  return page;
}

}  // namespace tablestone::api
