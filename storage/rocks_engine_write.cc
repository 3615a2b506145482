// RocksEngine: point reads and the atomic write path (Learn: insert-entity, update-entity2, merge-entity,
// delete-entity1, performing-entity-group-transactions).
#include <algorithm>

#include <rocksdb/write_batch.h>

#include "storage/column_families.h"
#include "storage/entity_codec.h"
#include "storage/key_codec.h"
#include "storage/model/limits.h"
#include "storage/nowait_file_system.h"
#include "storage/rocks_engine.h"
#include "storage/rocks_status.h"

namespace tablestone::storage {
namespace {

using model::IfMatch;
using model::WriteKind;
using model::WriteOp;

// State of one key as seen by the ops of a Write() call so far.
struct Pending {
  std::string key;
  bool exists = false;
  bool existed = false;  // before this Write(): exists - existed is its change to the entity count
  model::Entity entity;  // keys, the stored timestamp; the properties once an op merged into them
  // The op whose entity replaced the properties (an insert, an update, an
  // upsert of a new key), read in place rather than copied: every op outlives
  // the Write() call. Null when `entity` holds the properties.
  const model::Entity* replaced_by = nullptr;
  std::string encoded;  // the value written (exists) for the entity cache

  // The entity as the ops so far left it (timestamp aside).
  const model::Entity& current() const { return replaced_by != nullptr ? *replaced_by : entity; }
};

// If-Match for Update, Merge and Delete (Learn: update-entity2). A missing entity is 404
// before any ETag comparison, also for an ETag that can never match.
Status CheckCondition(const IfMatch& if_match, const Pending& p) {
  if (!p.exists) return Status::NotFound("the specified resource does not exist");
  switch (if_match.kind) {
    case IfMatch::Kind::kNone:  // treated as '*': the op itself says the entity must exist
    case IfMatch::Kind::kAny:
      return Status::Ok();
    case IfMatch::Kind::kTimestamp:
      if (if_match.ticks == p.entity.timestamp) return Status::Ok();
      return Status::ConditionNotMet("the update condition specified in the request was not satisfied");
    case IfMatch::Kind::kNever:
      return Status::ConditionNotMet("the update condition specified in the request was not satisfied");
  }
  return Status::Internal("unknown If-Match kind");
}

// `from` has the pending entity's keys (same partition, same RowKey).
void Replace(const model::Entity& from, Pending* p) {
  p->exists = true;
  p->replaced_by = &from;
  p->entity.properties.clear();
}

// Merge (Learn: merge-entity): the op's properties overwrite or extend the stored ones,
// possibly changing their type; all others stay, in their original order.
void Merge(const model::Entity& from, Pending* p) {
  if (p->replaced_by != nullptr) {  // a second op on the key: now the properties are needed as a copy
    p->entity.properties = p->replaced_by->properties;
    p->replaced_by = nullptr;
  }
  for (const model::Property& prop : from.properties) {
    if (model::Property* existing = p->entity.Find(prop.name)) {
      existing->value = prop.value;
    } else {
      p->entity.properties.push_back(prop);
    }
  }
}

// Limits of Learn: understanding-the-table-service-data-model on the resulting entity; they matter for merges, where
// neither the request nor the stored entity alone exceeds them.
Status CheckLimits(const model::Entity& entity) {
  if (entity.properties.size() > model::kMaxCustomProperties) {
    return Status::TooManyProperties("the entity has more properties than allowed");
  }
  if (model::EntitySizeForLimit(entity) > model::kMaxEntityBytes) {
    return Status::EntityTooLarge("the entity is larger than the maximum allowed size (1MB)");
  }
  return Status::Ok();
}

Status Apply(const WriteOp& op, Pending* p) {
  switch (op.kind) {
    case WriteKind::kInsert:
      if (p->exists) return Status::AlreadyExists("the specified entity already exists");
      Replace(op.entity, p);
      break;
    case WriteKind::kUpdate:
      TABLESTONE_RETURN_IF_ERROR(CheckCondition(op.if_match, *p));
      Replace(op.entity, p);
      break;
    case WriteKind::kMerge:
      TABLESTONE_RETURN_IF_ERROR(CheckCondition(op.if_match, *p));
      Merge(op.entity, p);
      break;
    case WriteKind::kInsertOrReplace:
      Replace(op.entity, p);
      break;
    case WriteKind::kInsertOrMerge:
      if (p->exists) {
        Merge(op.entity, p);
      } else {
        Replace(op.entity, p);
      }
      break;
    case WriteKind::kDelete:
      TABLESTONE_RETURN_IF_ERROR(CheckCondition(op.if_match, *p));
      p->exists = false;
      p->replaced_by = nullptr;
      p->entity.properties.clear();
      return Status::Ok();
  }
  return CheckLimits(p->current());
}

}  // namespace

Status RocksEngine::ReadEntityValue(const std::string& key, ReadWait wait, std::string* cached,
                                    rocksdb::PinnableSlice* value, std::string_view* bytes) {
  uint64_t generation = 0;
  if (entity_cache_ && entity_cache_->Lookup(key, cached, &generation)) {
    *bytes = *cached;
    return Status::Ok();
  }
  value->Reset();
  rocksdb::Status rs;
  if (wait == ReadWait::kNoWait) {
    NoWaitScope no_wait;
    rs = db_->Get(rocksdb::ReadOptions(), cf(kEntitiesCf), key, value);
    if (!rs.ok() && no_wait.would_have_waited()) return Status::WouldBlock("the entity is not in memory");
  } else {
    rs = db_->Get(rocksdb::ReadOptions(), cf(kEntitiesCf), key, value);
  }
  if (rs.IsNotFound()) return Status::NotFound();
  TABLESTONE_RETURN_IF_ERROR(FromRocks(rs, "reading entity"));
  *bytes = std::string_view(value->data(), value->size());
  if (entity_cache_) entity_cache_->Fill(key, *bytes, generation);
  return Status::Ok();
}

StatusOr<model::Entity> RocksEngine::GetEntity(const TableInfo& table, std::string_view partition_key,
                                               std::string_view row_key, ReadWait wait) {
  GatePass pass(gate_);
  if (!pass.ok()) return Status::ShuttingDown("storage engine is closed");
  if (!FindLiveTable(table.id)) return Status::TableNotFound("the table specified does not exist");
  // Per thread, and justified: reused buffers of the encoded key and the
  // cached value, so a point read allocates nothing in the common case. Each
  // is used only within this call (the returned entity copies out of them).
  thread_local std::string key;
  thread_local std::string cached;
  EncodeEntityKey(table.id, partition_key, row_key, &key);
  rocksdb::PinnableSlice value;
  std::string_view bytes;
  Status read = ReadEntityValue(key, wait, &cached, &value, &bytes);
  if (read.code() == StatusCode::kNotFound) return Status::NotFound("the specified resource does not exist");
  TABLESTONE_RETURN_IF_ERROR(read);
  model::Entity entity;
  TABLESTONE_RETURN_IF_ERROR(DecodeEntityValue(bytes, &entity));
  entity.partition_key.assign(partition_key);
  entity.row_key.assign(row_key);
  return entity;
}

WriteResult RocksEngine::Write(const TableInfo& table, std::span<const WriteOp> ops, ReadWait wait) {
  auto fail = [](Status s, size_t index) {
    WriteResult r;
    r.status = std::move(s);
    r.failed_index = index;
    return r;
  };
  if (ops.empty()) return fail(Status::InvalidArgument("no operations"), 0);
  const std::string& pk = ops[0].entity.partition_key;
  for (size_t i = 1; i < ops.size(); ++i) {
    if (ops[i].entity.partition_key != pk) {
      return fail(Status::InvalidArgument("all operations must use the same PartitionKey"), i);
    }
  }

  GatePass pass(gate_);
  if (!pass.ok()) return fail(Status::ShuttingDown("storage engine is closed"), 0);
  std::shared_ptr<TableState> state = FindLiveTable(table.id);
  if (!state) return fail(Status::TableNotFound("the table specified does not exist"), 0);
  GatePass table_pass(state->gate);
  if (!table_pass.ok()) return fail(Status::TableNotFound("the table specified does not exist"), 0);
  const size_t stripe = StripeIndex(table.id, pk);
  std::lock_guard partition_lock(stripes_[stripe]);

  std::vector<Pending> pending;
  pending.reserve(ops.size());
  int64_t floor = 0;
  std::string key;
  std::string cached;
  rocksdb::PinnableSlice value;
  for (size_t i = 0; i < ops.size(); ++i) {
    const WriteOp& op = ops[i];
    EncodeEntityKey(table.id, op.entity.partition_key, op.entity.row_key, &key);
    size_t at = pending.size();
    // Batches are small (<= 100 ops); a linear search beats hashing here.
    // All ops share the partition, so equal RowKeys mean equal keys; the
    // RowKey's last byte rejects most candidates before a full compare.
    const std::string& row_key = op.entity.row_key;
    for (size_t j = 0; j < pending.size(); ++j) {
      const std::string& other = pending[j].entity.row_key;
      if (other.size() == row_key.size() && (row_key.empty() || other.back() == row_key.back()) &&
          other == row_key) {
        at = j;
        break;
      }
    }
    if (at == pending.size()) {
      Pending& p = pending.emplace_back();
      p.key = key;
      std::string_view bytes;
      Status read = ReadEntityValue(key, wait, &cached, &value, &bytes);
      if (read.ok()) {
        p.exists = true;
        p.existed = true;
        // Only a merge needs the stored properties; everything else just the ETag.
        Status ds = op.kind == WriteKind::kMerge || op.kind == WriteKind::kInsertOrMerge
                        ? DecodeEntityValue(bytes, &p.entity)
                        : DecodeEntityTimestamp(bytes, &p.entity.timestamp);
        if (!ds.ok()) return fail(std::move(ds), i);
        floor = std::max(floor, p.entity.timestamp + 1);
      } else if (read.code() != StatusCode::kNotFound) {
        return fail(std::move(read), i);  // an I/O error, or kWouldBlock: nothing written
      }
      p.entity.partition_key = op.entity.partition_key;
      p.entity.row_key = op.entity.row_key;
    }
    Status s = Apply(op, &pending[at]);
    if (!s.ok()) return fail(std::move(s), i);
  }

  // Strictly newer than the stored versions even if the clock went backwards
  // across a restart, so every write changes the ETag (Learn: understanding-the-table-service-data-model).
  const int64_t ts = NextTimestamp(floor);
  // Until the entity cache shows the new values (TableReadIsDurable).
  MarkedWrite marked(*this, TableMark(table.account, table.name));
  rocksdb::WriteBatch batch;
  for (Pending& p : pending) {
    rocksdb::Status bs;
    if (p.exists) {
      p.entity.timestamp = ts;
      EncodeEntityValue(ts, p.current().properties, &p.encoded);
      bs = batch.Put(cf(kEntitiesCf), p.key, p.encoded);
    } else {
      bs = batch.Delete(cf(kEntitiesCf), p.key);
    }
    if (!bs.ok()) return fail(FromRocks(bs, "building write batch"), 0);
  }
  Status ws = FromRocks(CommitBatch(&batch), "writing entities");
  // Invalidates cached copies of the partition before the caller can be
  // acknowledged, still under the stripe lock (partition_cache.h). Also after
  // a failed commit: cheap, and no reasoning about partial failures needed.
  if (scan_cache_) state->last_write_stamp.store(scan_cache_->NoteWrite(stripe));
  // Likewise the entity cache (entity_cache.h): the new values, or nothing
  // cached for these keys when the commit failed.
  if (entity_cache_) {
    for (const Pending& p : pending) {
      if (ws.ok() && p.exists) {
        entity_cache_->Update(p.key, p.encoded);
      } else {
        entity_cache_->Erase(p.key);
      }
    }
  }
  if (!ws.ok()) return fail(std::move(ws), 0);
  if (builder_ != nullptr && builder_->warming()) builder_->NoteWrite(table.id, pk, stripe, pending.size());
  int64_t added = 0;
  for (const Pending& p : pending) added += static_cast<int64_t>(p.exists) - static_cast<int64_t>(p.existed);
  if (added != 0) {  // under table_pass: see TableState::entities
    state->entities.fetch_add(added, std::memory_order_relaxed);
    state->counts->entities.fetch_add(added, std::memory_order_relaxed);
  }
  WriteResult result;
  result.timestamp = ts;
  return result;
}

}  // namespace tablestone::storage
