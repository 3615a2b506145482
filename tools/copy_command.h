// `tablestone copy`: streams tables from one store to another with no file
// in between. The source is paged (continuation tokens) on the calling
// thread; batches of up to 100 entities of one partition go to `writers`
// threads, each with its own connection, so several requests are in flight.
//
// Resumable: with a checkpoint file, the position of each table is saved
// (atomically, at most every checkpoint_interval_ms and at each table's end)
// as the continuation token after the last page whose every batch the target
// acknowledged (for a data directory: after its log was synced). A copy
// killed at any point and started again with the same checkpoint re-reads at
// most the pages that were in flight and writes them again. Writes are
// Insert Or Replace (or Insert Or Merge), which are idempotent, so the target
// ends with exactly the source's entities: none lost, none twice. The file is
// deleted when the copy completes.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tools/data_commands.h"
#include "tools/table_store.h"

namespace tablestone::tools {

enum class ProgressStyle { kAuto, kBar, kLines, kNone };
// Whether to count the source's entities first, so the progress shows an ETA
// and a percentage: kAuto counts when the progress is a bar (a person is
// watching), not in scripts. The count reads keys only (about a tenth of the
// copy's time) and is taken before the copy starts, so entities written to
// the source during the copy make the ETA a little short, nothing else.
enum class CountMode { kAuto, kYes, kNo };

struct CopyOptions {
  std::vector<std::string> tables;  // empty = every table of the source account
  WriteMode mode = WriteMode::kReplace;  // kInsert is refused: not idempotent on resume
  IfExists if_exists = IfExists::kAppend;
  int writers = 4;                  // batches in flight
  std::string checkpoint;           // empty = no checkpoint
  int checkpoint_interval_ms = 1000;
  ProgressStyle progress = ProgressStyle::kAuto;
  int progress_interval_ms = 5000;  // plain lines when not a terminal
  CountMode count = CountMode::kAuto;
  // Set by a signal handler: stop reading, finish the batches in flight,
  // save the checkpoint and return false with "interrupted".
  const std::atomic<bool>* interrupted = nullptr;
};

// `make_target` opens one more connection to the target per writer thread;
// it may return the same shared store only if that store is thread-safe
// (the caller then passes writers = 1 for a data directory).
bool RunCopy(TableStore& source, const std::function<std::unique_ptr<TableStore>()>& make_target,
             const CopyOptions& options, DataSummary* summary, std::string* error);

}  // namespace tablestone::tools
