#include "tools/copy_command.h"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

namespace tablestone::tools {
namespace {

using Clock = std::chrono::steady_clock;

// A rough size of an entity's JSON (BatchOperationBytes adds its URL and framing).
size_t ApproxBytes(const model::Entity& e) {
  size_t n = e.partition_key.size() + e.row_key.size() + 40;
  for (const auto& p : e.properties) n += p.name.size() + p.value.text.size() * 4 / 3 + 48;
  return n;
}

// ---- checkpoint file ----
struct Checkpoint {
  std::string source;
  std::string target;
  std::vector<std::string> tables;
  std::set<std::string> done;
  std::string current;  // table in progress ("" = none)
  // `current` is claimed but may not be ready on the target yet: a run may
  // have stopped between the claim and the table's delete/create. A resume
  // prepares it again, and the table it then finds is its own.
  bool preparing = false;
  PageToken token;      // where `current` resumes
  uint64_t entities = 0;
};

constexpr std::string_view kCheckpointFormat = "tablestone-copy-checkpoint";

bool LoadCheckpoint(const std::string& path, Checkpoint* cp, bool* found, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  *found = static_cast<bool>(in);
  if (!*found) return true;
  try {
    nlohmann::json j = nlohmann::json::parse(in);
    if (j.at("format") != kCheckpointFormat || j.at("version") != 1) {
      *error = "'" + path + "' is not a copy checkpoint of this version";
      return false;
    }
    cp->source = j.at("source");
    cp->target = j.at("target");
    cp->tables = j.at("tables").get<std::vector<std::string>>();
    for (const auto& t : j.at("done")) cp->done.insert(t.get<std::string>());
    cp->entities = j.at("entities");
    const auto& cur = j.at("current");
    if (!cur.is_null()) {
      cp->current = cur.at("table");
      cp->token.resume = cur.at("resume");
      cp->token.next_partition_key = cur.at("nextPartitionKey");
      cp->token.next_row_key = cur.at("nextRowKey");
      cp->preparing = cur.value("preparing", false);  // absent in checkpoints of older builds
    }
  } catch (const std::exception& e) {
    *error = "checkpoint '" + path + "' is unreadable: " + e.what();
    return false;
  }
  return true;
}

bool SaveCheckpoint(const std::string& path, const Checkpoint& cp, std::string* error) {
  nlohmann::json j;
  j["format"] = kCheckpointFormat;
  j["version"] = 1;
  j["source"] = cp.source;
  j["target"] = cp.target;
  j["tables"] = cp.tables;
  j["done"] = std::vector<std::string>(cp.done.begin(), cp.done.end());
  j["entities"] = cp.entities;
  if (cp.current.empty()) {
    j["current"] = nullptr;
  } else {
    j["current"] = {{"table", cp.current},
                    {"resume", cp.token.resume},
                    {"nextPartitionKey", cp.token.next_partition_key},
                    {"nextRowKey", cp.token.next_row_key}};
    if (cp.preparing) j["current"]["preparing"] = true;
  }
  // Write a new file and rename it over the old one: a kill at any moment
  // leaves either the previous checkpoint or this one, never half of one.
  const std::string tmp = path + ".tmp";
  std::string text = j.dump();
  FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr || std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fflush(f) != 0 ||
      ::fsync(::fileno(f)) != 0) {
    if (f != nullptr) std::fclose(f);
    *error = "cannot write checkpoint '" + tmp + "'";
    return false;
  }
  std::fclose(f);
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    *error = "cannot rename checkpoint to '" + path + "': " + ec.message();
    return false;
  }
  return true;
}

// ---- the pipeline between the reader (caller's thread) and the writers ----
struct Work {
  std::string table;
  uint64_t page = 0;
  std::vector<model::Entity> entities;
};

class Pipeline {
 public:
  Pipeline(std::vector<std::unique_ptr<TableStore>> stores, WriteMode mode)
      : stores_(std::move(stores)), mode_(mode) {
    for (size_t i = 0; i < stores_.size(); ++i) threads_.emplace_back([this, i] { Writer(*stores_[i]); });
  }
  ~Pipeline() {
    {
      std::lock_guard lock(mu_);
      closing_ = true;
    }
    work_cv_.notify_all();
    for (auto& t : threads_) t.join();
  }

  TableStore& first_store() { return *stores_.front(); }

  // Starts a table: pages are counted from 0; `start` is where it resumes.
  void BeginTable(const PageToken& start) {
    std::lock_guard lock(mu_);
    pages_.clear();
    next_page_ = 0;
    committed_ = start;
    committed_entities_ = 0;
  }

  // Registers page `page` (read from the source) with its batches, and the
  // token that follows it. Blocks while the queue is full. False on failure.
  bool AddPage(const std::string& table, uint64_t page, std::vector<std::vector<model::Entity>> batches,
               const PageToken& after, size_t entities, const std::function<void()>& tick) {
    std::unique_lock lock(mu_);
    pages_[page] = PageState{batches.size(), after, entities};
    Advance();
    for (auto& b : batches) {
      while (queue_.size() >= max_queue_ && error_.empty()) {
        space_cv_.wait_for(lock, std::chrono::milliseconds(200));
        lock.unlock();
        tick();
        lock.lock();
      }
      if (!error_.empty()) return false;
      queue_.push_back(Work{table, page, std::move(b)});
      work_cv_.notify_one();
    }
    return error_.empty();
  }

  // Waits until every registered page is written (true) or a write failed.
  bool Drain(const std::function<void()>& tick) {
    std::unique_lock lock(mu_);
    while (!pages_.empty() && error_.empty()) {
      done_cv_.wait_for(lock, std::chrono::milliseconds(200));
      lock.unlock();
      tick();
      lock.lock();
    }
    return error_.empty();
  }

  // The token after the last page whose every batch was acknowledged, and
  // the entities of those pages.
  void Committed(PageToken* token, uint64_t* entities) {
    std::lock_guard lock(mu_);
    *token = committed_;
    *entities = committed_entities_;
  }
  uint64_t written() const { return written_.load(); }
  std::string error() {
    std::lock_guard lock(mu_);
    return error_;
  }

 private:
  struct PageState {
    size_t pending;
    PageToken after;
    size_t entities;
  };

  // Moves the committed position over every leading page that is complete.
  void Advance() {
    while (!pages_.empty() && pages_.begin()->first == next_page_ && pages_.begin()->second.pending == 0) {
      committed_ = pages_.begin()->second.after;
      committed_entities_ += pages_.begin()->second.entities;
      pages_.erase(pages_.begin());
      ++next_page_;
    }
    if (pages_.empty()) done_cv_.notify_all();
  }

  void Writer(TableStore& store) {
    for (;;) {
      Work w;
      {
        std::unique_lock lock(mu_);
        work_cv_.wait(lock, [&] { return closing_ || !queue_.empty(); });
        if (queue_.empty()) return;
        w = std::move(queue_.front());
        queue_.pop_front();
        space_cv_.notify_one();
      }
      std::string why;
      bool ok = store.WriteBatch(w.table, mode_, w.entities, &why);
      std::lock_guard lock(mu_);
      if (!ok) {
        if (error_.empty()) error_ = why;
        queue_.clear();
        space_cv_.notify_all();
        done_cv_.notify_all();
        continue;
      }
      written_ += w.entities.size();
      auto it = pages_.find(w.page);
      if (it != pages_.end()) --it->second.pending;
      Advance();
    }
  }

  std::vector<std::unique_ptr<TableStore>> stores_;
  WriteMode mode_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable work_cv_, space_cv_, done_cv_;
  std::deque<Work> queue_;
  size_t max_queue_ = 64;
  bool closing_ = false;
  std::string error_;
  std::map<uint64_t, PageState> pages_;
  uint64_t next_page_ = 0;
  PageToken committed_;
  uint64_t committed_entities_ = 0;
  std::atomic<uint64_t> written_{0};
};

std::vector<std::vector<model::Entity>> SplitBatches(std::vector<model::Entity>&& page) {
  std::vector<std::vector<model::Entity>> out;
  size_t bytes = 0;
  for (auto& e : page) {
    size_t n = BatchOperationBytes(ApproxBytes(e), e);
    if (out.empty() || out.back().front().partition_key != e.partition_key ||
        out.back().size() >= kMaxBatchEntities || bytes + n > kMaxBatchBodyBytes) {
      out.emplace_back();
      bytes = 0;
    }
    bytes += n;
    out.back().push_back(std::move(e));
  }
  return out;
}

std::string FormatDuration(double seconds) {
  long s = static_cast<long>(seconds + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  return buf;
}

}  // namespace

bool RunCopy(TableStore& source, const std::function<std::unique_ptr<TableStore>()>& make_target,
             const CopyOptions& options, DataSummary* summary, std::string* error) {
  const auto start = Clock::now();
  *summary = DataSummary{};
  if (options.mode == WriteMode::kInsert) {
    *error = "copy writes with --mode replace or upsert (insert would fail on a resumed page)";
    return false;
  }
  const int writers = std::max(1, options.writers);
  std::vector<std::unique_ptr<TableStore>> stores;
  for (int i = 0; i < writers; ++i) {
    auto s = make_target();
    if (s == nullptr) {
      *error = "cannot open the target";
      return false;
    }
    stores.push_back(std::move(s));
  }
  TableStore& target = *stores.front();

  // Where to start: a checkpoint of an earlier run, or the beginning.
  Checkpoint cp;
  bool resumed = false;
  if (!options.checkpoint.empty() && !LoadCheckpoint(options.checkpoint, &cp, &resumed, error)) return false;
  if (resumed) {
    if (cp.source != source.AccountName() || cp.target != target.AccountName() ||
        (!options.tables.empty() && options.tables != cp.tables)) {
      *error = "checkpoint '" + options.checkpoint + "' belongs to another copy (accounts or tables differ); "
               "delete it to start over";
      return false;
    }
  } else {
    cp.source = source.AccountName();
    cp.target = target.AccountName();
    cp.tables = options.tables;
    if (cp.tables.empty()) {
      if (!source.ListTables(&cp.tables, error)) return false;
      if (cp.tables.empty()) {
        *error = "account '" + source.AccountName() + "' has no tables to copy";
        return false;
      }
    } else {
      for (const std::string& t : cp.tables) {
        bool exists = false;
        if (!source.TableExists(t, &exists, error)) return false;
        if (!exists) {
          *error = "table '" + t + "' does not exist in the source account '" + source.AccountName() + "'";
          return false;
        }
      }
    }
  }

  const bool tty = ::isatty(STDERR_FILENO) != 0;
  const ProgressStyle style = options.progress == ProgressStyle::kAuto
                                  ? (tty ? ProgressStyle::kBar : ProgressStyle::kLines)
                                  : options.progress;
  const uint64_t base_entities = cp.entities;  // copied by earlier runs
  // Entities of the tables still to copy (this run's share of the work), when counted.
  std::optional<uint64_t> to_copy;
  if (options.count == CountMode::kYes || (options.count == CountMode::kAuto && style == ProgressStyle::kBar)) {
    if (style != ProgressStyle::kNone) std::fprintf(stderr, "copy: counting the source's entities...\n");
    uint64_t total = 0;
    for (const std::string& t : cp.tables) {
      if (cp.done.count(t) != 0) continue;
      uint64_t n = 0;
      if (!source.CountEntities(t, &n, error)) return false;
      total += n;
    }
    // A resumed table is counted whole although part of it was copied before:
    // the ETA of a resumed copy starts a little long.
    to_copy = total;
  }
  Pipeline pipeline(std::move(stores), options.mode);
  auto last_progress = Clock::now();
  auto last_save = Clock::now();
  bool bar_drawn = false;
  std::string save_error;

  auto save = [&](bool force) {
    if (options.checkpoint.empty()) return true;
    if (!force && Clock::now() - last_save < std::chrono::milliseconds(options.checkpoint_interval_ms)) return true;
    last_save = Clock::now();
    Checkpoint snapshot = cp;
    uint64_t committed = 0;
    if (!snapshot.current.empty()) pipeline.Committed(&snapshot.token, &committed);
    snapshot.entities = cp.entities + committed;
    // The writes the checkpoint counts must be durable before it says so.
    std::string why;
    if (!pipeline.first_store().Flush(&why) || !SaveCheckpoint(options.checkpoint, snapshot, &why)) {
      save_error = why;
      return false;
    }
    return true;
  };
  auto progress = [&](bool final_line) {
    if (style == ProgressStyle::kNone) return;
    auto now = Clock::now();
    auto every = style == ProgressStyle::kBar ? std::chrono::milliseconds(250)
                                              : std::chrono::milliseconds(options.progress_interval_ms);
    if (!final_line && now - last_progress < every) return;
    last_progress = now;
    double secs = std::chrono::duration<double>(now - start).count();
    uint64_t n = pipeline.written();
    double rate = secs > 0 ? n / secs : 0;
    char line[256];
    std::string eta;
    if (to_copy) {
      const uint64_t left = *to_copy > n ? *to_copy - n : 0;
      eta = ", " + std::to_string(*to_copy == 0 ? 100 : std::min<uint64_t>(100, n * 100 / *to_copy)) + "%, ETA " +
            (final_line ? FormatDuration(0) : rate > 0 ? FormatDuration(left / rate) : std::string("unknown"));
    }
    std::snprintf(line, sizeof line, "copy: %zu/%zu tables done, %llu entities, %.0f entities/s, %s elapsed%s",
                  cp.done.size(), cp.tables.size(), static_cast<unsigned long long>(base_entities + n), rate,
                  FormatDuration(secs).c_str(), eta.c_str());
    if (style == ProgressStyle::kBar) {
      std::fprintf(stderr, "\r\033[K%s", line);
      bar_drawn = true;
    } else {
      std::fprintf(stderr, "%s\n", line);
    }
    std::fflush(stderr);
  };
  auto tick = [&] {
    progress(false);
    save(false);
  };
  auto end_bar = [&] {
    if (bar_drawn) std::fputc('\n', stderr);
    bar_drawn = false;
  };
  auto fail = [&](std::string why) {
    // Keep the checkpoint at the last consistent position for a resume.
    save(true);
    end_bar();
    *error = std::move(why);
    if (!options.checkpoint.empty()) *error += "; resume with the same command (checkpoint '" + options.checkpoint + "')";
    return false;
  };

  std::vector<model::Entity> page;
  for (const std::string& table : cp.tables) {
    if (cp.done.count(table) != 0) continue;
    PageToken token;
    const bool continuing = resumed && cp.current == table;
    if (continuing && !cp.preparing) {
      token = cp.token;
    } else {
      // A table found on the target is refused (--ifExists fail) unless a
      // checkpoint claimed it: then this copy created it and was stopped
      // before saving that (otherwise every resume would refuse it, and the
      // failure would save a checkpoint without it: a loop with no end).
      // The claim is saved before the target is touched; nothing was copied
      // into a claimed table yet (its token is at the start).
      const bool claimed = continuing;
      bool exists = false;
      if (!target.TableExists(table, &exists, error)) return fail(*error);
      if (exists && options.if_exists == IfExists::kFail && !claimed) {
        return fail("table '" + table + "' exists on the target (use --ifExists append or replace)");
      }
      cp.current = table;
      cp.preparing = true;
      cp.token = token;
      pipeline.BeginTable(token);
      if (!save(true)) return fail(save_error);
      if (exists && options.if_exists == IfExists::kReplace && !target.DeleteTable(table, error)) return fail(*error);
      bool existed = false;
      if ((!exists || options.if_exists == IfExists::kReplace) && !target.CreateTable(table, &existed, error)) {
        return fail(*error);
      }
      cp.preparing = false;
    }
    cp.current = table;
    cp.token = token;
    pipeline.BeginTable(token);
    if (!save(true)) return fail(save_error);

    uint64_t page_no = 0;
    while (!token.done) {
      if (options.interrupted != nullptr && options.interrupted->load()) {
        pipeline.Drain(tick);
        return fail("interrupted");
      }
      std::string why;
      if (!source.ReadPage(table, &token, &page, &why)) {
        pipeline.Drain(tick);
        return fail(why);
      }
      size_t n = page.size();
      if (!pipeline.AddPage(table, page_no++, SplitBatches(std::move(page)), token, n, tick)) {
        return fail(pipeline.error());
      }
      page.clear();
      tick();
    }
    if (!pipeline.Drain(tick)) return fail(pipeline.error());
    PageToken unused;
    uint64_t committed = 0;
    pipeline.Committed(&unused, &committed);
    cp.entities += committed;
    cp.done.insert(table);
    cp.current.clear();
    if (!save(true)) return fail(save_error);
    ++summary->tables;
  }
  std::string why;
  if (!target.Flush(&why)) return fail(why);
  progress(true);
  end_bar();
  if (!options.checkpoint.empty()) std::filesystem::remove(options.checkpoint);
  summary->entities = pipeline.written();
  summary->resumed_entities = base_entities;
  summary->seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return true;
}

}  // namespace tablestone::tools
