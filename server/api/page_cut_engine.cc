#include "server/api/page_cut_engine.h"

#include <algorithm>
#include <optional>
#include <string>

#include "storage/model/ascii.h"

namespace tablestone::api {

bool CutsWholePage(const protocol::FlavorPolicy& flavor, protocol::Operation operation) {
  if (flavor.continuation != protocol::ContinuationStyle::kCosmosToken) return false;
  return operation == protocol::Operation::kQueryTables ||
         (operation == protocol::Operation::kQueryEntities && flavor.shuffle);
}

StatusOr<storage::TableListResult> PageCutEngine::ListTables(std::string_view account,
                                                             const storage::TableListSpec& spec) {
  storage::TableListSpec cut = spec;
  cut.max_results = std::max<size_t>(1, std::min(spec.max_results, cut_.max_rows));
  auto result = inner_.ListTables(account, cut);
  if (result.ok() && cut_.max_rows == 0 && !result->tables.empty()) {
    result->next = model::ToAsciiLower(result->tables.front().name);  // names resume lower-cased
    result->tables.clear();
  }
  return result;
}

StatusOr<model::ScanResult> PageCutEngine::Scan(const storage::TableInfo& table, const model::ScanSpec& spec,
                                                const model::ScanRun& run) {
  drop_next_row_key_ = false;
  model::ScanSpec cut = spec;
  cut.max_results = std::max<size_t>(1, std::min(spec.max_results, cut_.max_rows));
  auto result = inner_.Scan(table, cut, run);
  if (!result.ok()) return result;
  if (cut_.max_rows == 0 && !result->entities.empty()) {
    // An empty page whose token names the row it would have returned.
    result->next = model::EntityKey{result->entities.front().partition_key, result->entities.front().row_key};
    result->entities.clear();
    result->rendered.clear();
  }
  if (cut_.partition_key_only && result->next) {
    const std::string& next = result->next->partition_key;
    drop_next_row_key_ = result->entities.empty()
                             ? !(spec.resume_from && spec.resume_from->partition_key == next)
                             : result->entities.back().partition_key != next;
  }
  return result;
}

}  // namespace tablestone::api
