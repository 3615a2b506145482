#include "tools/data_commands.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <cstdio>
#include <filesystem>

#include "tools/export_format.h"

namespace tablestone::tools {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Writes batches on several connections at once; the first failure stops
// it (batches still queued are dropped) and is reported by Finish().
class WriterPool {
 public:
  WriterPool(std::vector<std::unique_ptr<TableStore>> stores, WriteMode mode)
      : stores_(std::move(stores)), mode_(mode) {
    for (auto& s : stores_) threads_.emplace_back([this, store = s.get()] { Run(*store); });
  }
  ~WriterPool() { (void)Finish(nullptr); }

  // Queues a batch; blocks while the queue is full. False once a write failed.
  bool Submit(const std::string& table, std::vector<model::Entity> batch) {
    std::unique_lock lock(mu_);
    space_.wait(lock, [&] { return queue_.size() < 2 * stores_.size() || !error_.empty(); });
    if (!error_.empty()) return false;
    queue_.emplace_back(table, std::move(batch));
    work_.notify_one();
    return true;
  }
  // Waits for every queued batch; false (with the first error) if one failed.
  bool Finish(std::string* error) {
    {
      std::unique_lock lock(mu_);
      idle_.wait(lock, [&] { return (queue_.empty() && busy_ == 0) || !error_.empty(); });
      if (threads_.empty() || error == nullptr) {
        closing_ = true;
      }
    }
    if (error == nullptr) {
      work_.notify_all();
      for (auto& t : threads_) t.join();
      threads_.clear();
      return true;
    }
    std::lock_guard lock(mu_);
    if (!error_.empty()) *error = error_;
    return error_.empty();
  }
  uint64_t written() const { return written_.load(); }

 private:
  void Run(TableStore& store) {
    for (;;) {
      std::pair<std::string, std::vector<model::Entity>> item;
      {
        std::unique_lock lock(mu_);
        work_.wait(lock, [&] { return closing_ || !queue_.empty(); });
        if (queue_.empty()) return;
        item = std::move(queue_.front());
        queue_.pop_front();
        ++busy_;
        space_.notify_one();
      }
      std::string why;
      bool ok = store.WriteBatch(item.first, mode_, item.second, &why);
      std::lock_guard lock(mu_);
      --busy_;
      if (ok) {
        written_ += item.second.size();
      } else if (error_.empty()) {
        error_ = why;
        queue_.clear();
        space_.notify_all();
      }
      idle_.notify_all();
    }
  }

  std::vector<std::unique_ptr<TableStore>> stores_;
  WriteMode mode_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable work_, space_, idle_;
  std::deque<std::pair<std::string, std::vector<model::Entity>>> queue_;
  size_t busy_ = 0;
  bool closing_ = false;
  std::string error_;
  std::atomic<uint64_t> written_{0};
};

}  // namespace

bool RunExport(TableStore& source, const ExportOptions& options, DataSummary* summary, std::string* error) {
  auto start = std::chrono::steady_clock::now();
  *summary = DataSummary{};
  std::vector<std::string> tables = options.tables;
  if (tables.empty()) {
    if (!source.ListTables(&tables, error)) return false;
    if (tables.empty()) {
      *error = "account '" + source.AccountName() + "' has no tables to export";
      return false;
    }
  } else {
    for (const std::string& t : tables) {
      bool exists = false;
      if (!source.TableExists(t, &exists, error)) return false;
      if (!exists) {
        *error = "table '" + t + "' does not exist in account '" + source.AccountName() + "'";
        return false;
      }
    }
  }

  const bool to_stdout = options.out == "-";
  const std::string path = to_stdout ? options.out : options.out + ".partial";
  LineWriter writer;
  if (!writer.Open(path, options.compression, error)) return false;
  auto abandon = [&](std::string why) {
    std::string ignored;
    (void)writer.Close(&ignored);
    if (!to_stdout) std::filesystem::remove(path);
    *error = std::move(why);
    return false;
  };

  std::string line;
  std::vector<model::Entity> page;
  for (const std::string& table : tables) {
    line.clear();
    AppendHeaderLine(SectionHeader{table, source.AccountName(), kExportFormatVersion}, &line);
    writer.WriteLine(line);
    uint64_t count = 0;
    PageToken token;
    while (!token.done) {
      std::string why;
      if (options.interrupted != nullptr && options.interrupted->load()) {
        return abandon(to_stdout ? "interrupted: the output on stdout is incomplete; run the export again"
                                 : "interrupted: nothing was written (the partial file was removed); run the same "
                                   "command again to export from the start");
      }
      if (!source.ReadPage(table, &token, &page, &why)) return abandon(why);
      for (const model::Entity& e : page) {
        line.clear();
        AppendEntityLine(e, &line);
        writer.WriteLine(line);
      }
      count += page.size();
      if (options.progress) {
        DataSummary so_far = *summary;
        so_far.entities += count;
        so_far.seconds = SecondsSince(start);
        options.progress(so_far);
      }
    }
    line.clear();
    AppendEndLine(SectionEnd{table, count}, &line);
    writer.WriteLine(line);
    summary->entities += count;
    ++summary->tables;
  }
  std::string why;
  if (!writer.Close(&why)) return abandon("writing '" + options.out + "': " + why);
  if (!to_stdout) {
    std::error_code ec;
    std::filesystem::rename(path, options.out, ec);
    if (ec) {
      std::filesystem::remove(path);
      *error = "cannot rename '" + path + "' to '" + options.out + "': " + ec.message();
      return false;
    }
  }
  summary->seconds = SecondsSince(start);
  return true;
}

bool RunImport(TableStore& target, const ImportOptions& options, DataSummary* summary, std::string* error,
               const std::function<std::unique_ptr<TableStore>()>& make_writer) {
  auto start = std::chrono::steady_clock::now();
  *summary = DataSummary{};
  LineReader reader;
  if (!reader.Open(options.in, error)) return false;
  std::unique_ptr<WriterPool> pool;
  if (options.parallel > 1 && make_writer) {
    std::vector<std::unique_ptr<TableStore>> stores;
    for (int i = 0; i < options.parallel; ++i) {
      auto s = make_writer();
      if (s == nullptr) {
        *error = "cannot open a connection to the target";
        return false;
      }
      stores.push_back(std::move(s));
    }
    pool = std::make_unique<WriterPool>(std::move(stores), options.mode);
  }

  SectionChecker checker;
  DecodedLine decoded;
  std::string line;
  std::string table;
  std::vector<model::Entity> batch;
  size_t batch_bytes = 0;
  uint64_t written = 0;

  auto incomplete = [&](const std::string& why) {
    *error = why;
    if (!table.empty() && pool) *error += " (table '" + table + "' is incomplete on the target)";
    if (!table.empty() && !pool) {
      *error += " (table '" + table + "' is incomplete on the target: " + std::to_string(written) + " entities written)";
    }
    return false;
  };
  auto flush = [&]() {
    if (batch.empty()) return true;
    std::string why;
    if (options.dry_run) {
      written += batch.size();
      summary->entities += batch.size();
    } else if (pool) {
      written += batch.size();
      summary->entities += batch.size();
      if (!pool->Submit(table, std::move(batch))) {
        (void)pool->Finish(&why);
        return incomplete(why);
      }
    } else {
      if (!target.WriteBatch(table, options.mode, batch, &why)) return incomplete(why);
      written += batch.size();
      summary->entities += batch.size();
    }
    batch.clear();
    batch_bytes = 0;
    if (options.progress) {
      DataSummary so_far = *summary;
      so_far.seconds = SecondsSince(start);
      options.progress(so_far);
    }
    return true;
  };

  while (reader.Next(&line)) {
    std::string why;
    if (options.interrupted != nullptr && options.interrupted->load()) {
      // The batches already sent are waited for, so the counts below are
      // what the target holds.
      if (pool && !pool->Finish(&why)) return incomplete(why);
      *error = "interrupted after " + std::to_string(summary->entities) + " entities; " +
               std::to_string(summary->tables) + (summary->tables == 1 ? " table is" : " tables are") +
               " complete on the target";
      if (!table.empty()) {
        *error += ", table '" + table + "' is incomplete (" + std::to_string(written) + " entities written)";
      }
      *error += ". To finish, run the same import again with --ifExists replace (the file's tables are written "
                "afresh) or with --ifExists append --mode upsert (what is there is written over)";
      return false;
    }
    if (!checker.Feed(line, &decoded, &why)) return incomplete("'" + options.in + "' " + why);
    switch (decoded.kind) {
      case DecodedLine::Kind::kHeader: {
        table.clear();
        const std::string& name = decoded.header.table;
        bool exists = false;
        if (!target.TableExists(name, &exists, error)) return false;
        if (exists && options.if_exists == IfExists::kFail) {
          *error = "table '" + name + "' exists on the target (use --ifExists append or replace)";
          return false;
        }
        if (options.dry_run) {
          table = name;
          written = 0;
          break;
        }
        if (exists && options.if_exists == IfExists::kReplace && !target.DeleteTable(name, error)) return false;
        bool existed = false;
        if ((!exists || options.if_exists == IfExists::kReplace) && !target.CreateTable(name, &existed, error)) {
          return false;
        }
        table = name;
        written = 0;
        break;
      }
      case DecodedLine::Kind::kEntity: {
        const size_t n = BatchOperationBytes(line.size(), decoded.entity);
        if (!batch.empty() && (batch.front().partition_key != decoded.entity.partition_key ||
                               batch.size() >= kMaxBatchEntities || batch_bytes + n > kMaxBatchBodyBytes)) {
          if (!flush()) return false;
        }
        batch_bytes += n;
        batch.push_back(std::move(decoded.entity));
        break;
      }
      case DecodedLine::Kind::kEnd:
        if (!flush()) return false;
        ++summary->tables;
        table.clear();
        break;
    }
  }
  if (!reader.error().empty()) return incomplete("'" + options.in + "': " + reader.error());
  std::string why;
  if (!checker.Finish(&why)) return incomplete("'" + options.in + "': " + why);
  if (pool && !pool->Finish(&why)) {
    *error = why + " (the import is incomplete)";
    return false;
  }
  if (!options.dry_run && !target.Flush(error)) return false;
  summary->seconds = SecondsSince(start);
  return true;
}

bool RunSeed(TableStore& target, const std::string& path, DataSummary* summary, std::string* error) {
  auto start = std::chrono::steady_clock::now();
  *summary = DataSummary{};
  std::vector<std::string> files;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
      if (!entry.is_regular_file()) continue;
      std::string name = entry.path().filename().string();
      bool export_file = false;
      for (const char* suffix : {".jsonl", ".jsonl.gz", ".jsonl.zst", ".jsonl.zstd"}) {
        export_file = export_file || name.ends_with(suffix);
      }
      (export_file ? files : summary->skipped).push_back(entry.path().string());
    }
    if (ec) {
      *error = "cannot list seed directory '" + path + "': " + ec.message();
      return false;
    }
    std::sort(files.begin(), files.end());
    std::sort(summary->skipped.begin(), summary->skipped.end());
  } else {
    files.push_back(path);
  }
  for (const std::string& file : files) {
    ImportOptions options;
    options.in = file;
    options.mode = WriteMode::kReplace;
    options.if_exists = IfExists::kReplace;
    DataSummary one;
    if (!RunImport(target, options, &one, error)) return false;
    summary->tables += one.tables;
    summary->entities += one.entities;
  }
  summary->seconds = SecondsSince(start);
  return true;
}

}  // namespace tablestone::tools
