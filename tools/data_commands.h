// The data commands behind `tablestone export` and `tablestone import`
// (server/app/tool_commands.cc parses their command lines). Each streams:
// memory stays bounded by one page or one batch, whatever the table size.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tools/line_io.h"
#include "tools/table_store.h"

namespace tablestone::tools {

struct DataSummary {
  uint64_t tables = 0;
  uint64_t entities = 0;
  double seconds = 0;
  std::vector<std::string> skipped;  // RunSeed: files of the directory that are not export files
};

// Called after each page read (export) or batch written (import) with the
// totals so far: for a progress line on a terminal. Empty = none.
using ProgressFn = std::function<void(const DataSummary& so_far)>;

struct ExportOptions {
  std::vector<std::string> tables;  // empty = every table of the account
  std::string out;                  // file, or "-" for stdout
  Compression compression = Compression::kNone;
  ProgressFn progress;
  // Set by a signal handler: stop after the current page, remove the
  // partial file and return false with what happened and how to resume.
  const std::atomic<bool>* interrupted = nullptr;
};

// Writes the tables of `source` to options.out in the export format
// (docs/export-format.md). A file is written under "<out>.partial" and
// renamed when complete, so a failed export never leaves a file that looks
// whole. False with a one-line reason.
bool RunExport(TableStore& source, const ExportOptions& options, DataSummary* summary, std::string* error);

// What import does with a table that already exists on the target.
enum class IfExists {
  kFail,     // stop with an error before writing anything to it
  kAppend,   // write into it (see WriteMode for existing entities)
  kReplace,  // delete it and create it empty
};

struct ImportOptions {
  std::string in;  // file, or "-" for stdin; gzip/zstd detected
  WriteMode mode = WriteMode::kInsert;
  IfExists if_exists = IfExists::kFail;
  // Batches in flight, each on its own connection from `make_writer`
  // (RunImport's argument); 1 = every batch on `target`, in file order.
  int parallel = 1;
  ProgressFn progress;
  // Set by a signal handler: stop reading, wait for the batches in flight,
  // and return false saying which tables are complete, which one is not,
  // and the command line that resumes.
  const std::atomic<bool>* interrupted = nullptr;
  // Read and check the whole file (and, for --ifExists fail, which of its
  // tables exist on the target) without creating, deleting or writing
  // anything: a file that would fail half-way leaves no empty tables.
  bool dry_run = false;
};

// Reads an export file into `target`, in batches of up to 100 entities of
// one partition. Stops at the first bad line (the reason names it); what was
// written before stays, and the error says which table is incomplete.
bool RunImport(TableStore& target, const ImportOptions& options, DataSummary* summary, std::string* error,
               const std::function<std::unique_ptr<TableStore>()>& make_writer = {});

// `--seed PATH`: imports an export file, or every export file of a directory
// (*.jsonl, *.jsonl.gz, *.jsonl.zst, *.jsonl.zstd) in name order, into
// `target`; the directory's other files (a README) are listed in
// summary->skipped, and an empty directory seeds nothing. Each table in them is replaced
// (deleted and re-created) and written with Insert Or Replace, so seeding
// the same data directory at every start gives the same contents.
bool RunSeed(TableStore& target, const std::string& path, DataSummary* summary, std::string* error);

}  // namespace tablestone::tools
