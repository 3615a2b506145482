// ServeCached: a cached partition's rows into a scan's Page (scan_page.h).
#include "storage/scan_page.h"

#include <algorithm>
#include <cstring>

#include "storage/block_evaluator.h"
#include "storage/entity_codec.h"

namespace tablestone::storage {


Status ServeCached(const std::shared_ptr<const CachedPartition>& entry_ptr, std::string_view lower,
                   std::string_view upper, const model::ScanSpec& spec, const model::ScanRun& run, Page* page,
                   model::ScanResult* result, bool* ended) {
  const CachedPartition& entry = *entry_ptr;
  const RowBlock& block = entry.block;
  // Kept rows come back rendered when the renderer may keep its renderings
  // here (RowRenderings); the rest of the predicate looks at keys only then
  // (ScanSpec::select's contract), so no row is decoded twice.
  const model::RowRenderer* renderer = run.renderer.get();
  if (renderer != nullptr && (!spec.select.empty() || !entry.renderings.Claim(renderer->id()))) renderer = nullptr;
  bool pinned = false;
  model::Entity full;  // a row decoded for its rendering; its buffers serve the next one
  const size_t begin = entry.LowerBound(lower);
  const size_t end = entry.LowerBound(upper);
  // The predicate's $filter runs over the columns; its rest (if any) on the
  // rows that filter keeps (model::RowPredicate's contract). A predicate
  // without an expression is tested row by row.
  const model::RowPredicate* predicate = spec.predicate.get();
  const model::FilterExpr* expr = predicate != nullptr ? predicate->columnar() : nullptr;
  uint8_t keep[kBlockChunkRows];
  for (size_t chunk = begin; chunk < end; chunk += kBlockChunkRows) {
    const size_t chunk_end = std::min(end, chunk + kBlockChunkRows);
    if (expr != nullptr) {
      EvaluateBlock(*expr, block, chunk, chunk_end, keep);
    } else if (predicate != nullptr) {
      for (size_t i = chunk; i < chunk_end; ++i) keep[i - chunk] = predicate->Matches(block.RowEntity(i)) ? 1 : 0;
    } else {
      std::fill(keep, keep + (chunk_end - chunk), uint8_t{1});
    }
    for (size_t i = chunk; i < chunk_end; ++i) {
      // The run of rows not kept up to the next kept one, admitted at once.
      const void* kept = std::memchr(keep + (i - chunk), 1, chunk_end - i);
      const size_t next_kept = kept == nullptr ? chunk_end : chunk + (static_cast<const uint8_t*>(kept) - keep);
      const size_t admitted = page->AdmitMany(next_kept - i);
      i += admitted;
      if (i < next_kept || (i < chunk_end && !page->Admit())) {
        result->next = model::EntityKey{std::string(block.partition_key), std::string(block.row_keys[i])};
        *ended = true;
        return Status::Ok();
      }
      if (i == chunk_end) break;
      model::Entity row;
      if (renderer != nullptr) {
        row.partition_key.assign(block.partition_key);
        row.row_key.assign(block.row_keys[i]);
        row.timestamp = block.timestamps[i];
        if (expr != nullptr && !predicate->MatchesRest(row)) continue;  // examined, not kept
        const RenderedRow* rendered = entry.renderings.Find(i);
        const bool render = rendered == nullptr && entry.renderings.has_room();
        if (rendered == nullptr) {
          TABLESTONE_RETURN_IF_ERROR(DecodeEntityValue(entry.values[i], &full));
          full.partition_key = row.partition_key;
          full.row_key = row.row_key;
        }
        if (render) {
          auto made = std::make_unique<RenderedRow>();
          made->page_bytes = renderer->Render(full, entry.values[i].size(), &made->bytes);
          rendered = entry.renderings.Keep(i, made);
        }
        if (rendered != nullptr) {
          if (!pinned) {
            result->pins.push_back(entry_ptr);
            pinned = true;
          }
          if (!page->KeepRendered(row, rendered->bytes, rendered->page_bytes)) {
            result->next = model::EntityKey{std::string(block.partition_key), std::string(block.row_keys[i])};
            *ended = true;
            return Status::Ok();
          }
          continue;
        }
        row = std::move(full);  // past the renderings' budget: kept as a row
      } else {
        // Every row filter was decided on the columns: only what the page needs.
        TABLESTONE_RETURN_IF_ERROR(DecodeEntityValue(entry.values[i], &row, &spec.select));
        row.partition_key.assign(block.partition_key);
        row.row_key.assign(block.row_keys[i]);
        if (expr != nullptr && !predicate->MatchesRest(row)) continue;  // examined, not kept
      }
      if (!page->Keep(row, entry.values[i].size())) {
        result->next = model::EntityKey{std::string(block.partition_key), std::string(block.row_keys[i])};
        *ended = true;
        return Status::Ok();
      }
    }
  }
  return Status::Ok();
}

}  // namespace tablestone::storage
