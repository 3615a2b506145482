// One entity write, as a single request or one operation of an entity group
// transaction. The engine applies a list of these atomically (storage/engine.h).
#pragma once

#include <cstdint>

#include "storage/model/entity.h"
#include "storage/model/etag.h"

namespace tablestone::model {

// REST operation names (Learn: insert-entity, update-entity2, merge-entity, delete-entity1).
enum class WriteKind : uint8_t {
  kInsert,           // POST: fails with AlreadyExists if present
  kUpdate,           // PUT with If-Match: replace; NotFound if missing
  kMerge,            // MERGE/PATCH with If-Match: merge; NotFound if missing
  kInsertOrReplace,  // PUT without If-Match
  kInsertOrMerge,    // MERGE/PATCH without If-Match
  kDelete,           // DELETE with If-Match; only the keys of `entity` are used
};

struct WriteOp {
  WriteKind kind = WriteKind::kInsert;
  Entity entity;    // timestamp is ignored; the engine assigns it
  IfMatch if_match;  // used by kUpdate, kMerge, kDelete
};

}  // namespace tablestone::model
