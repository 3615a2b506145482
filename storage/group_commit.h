// GroupCommit: the engine's group commit of the write-ahead log (engine.h,
// "Durability"), on a thread of its own.
//
// Await(done) queues `done` for the next log write. The writer thread takes
// every callback queued so far as one group, calls `sync` once (one write(2),
// and with fsync one fsync), and runs the group's callbacks with its result;
// callbacks queued while a log write runs form the next group. The thread
// does nothing else, so a log write never waits behind request work (a scan
// or a `$batch` on a lane of the server's executor): `AsyncDispatchTest.
// AWriteIsAcknowledgedWhileEveryLaneIsBusy` pins it.
//
// SyncHere(try_sync) runs one log write on the calling thread instead, when
// the writer has nothing queued and is not writing: a caller that has just
// produced writes and may spend the log write's time itself (an I/O thread at
// the end of its turn, when the write is a write(2) into the page cache)
// saves the writer's wake-up and the hand-back of the answers. Anything
// queued meanwhile waits for the writer, woken when that write ends.
//
// States (state()):
//   kIdle      no callback queued, no log write running
//   kQueued    callbacks queued, the writer is about to take them
//   kWriting   a log write runs (the writer's, or a caller's SyncHere);
//              callbacks queued meanwhile wait for the next
//   kStopped   Stop() returned: Await runs `sync` on the caller's thread
//
// Contract of `sync`: returns OK only once every write visible to readers
// when it was called is durable; on an error nothing may be acknowledged
// (the callbacks get the error). It may block on the disk.
//
// Sync points (sync_point.h): "GroupCommit::Woken" when the writer wakes for
// a group, before it takes the queued callbacks (a test holding it gathers a
// group deterministically); "GroupCommit::GroupDone" after a group's
// callbacks ran and the state moved on.
//
// Thread safety: every method may be called from any thread, Await also from
// inside a callback (it then joins the next group).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "storage/model/status.h"
#include "storage/sync_point.h"

namespace tablestone::storage {

class GroupCommit {
 public:
  using Sync = std::function<Status()>;
  using Callback = std::function<void(Status)>;
  enum class State { kIdle, kQueued, kWriting, kStopped };

  // Starts the writer thread.
  GroupCommit(Sync sync, SyncPoints* sync_points);
  ~GroupCommit();  // Stop()
  GroupCommit(const GroupCommit&) = delete;
  GroupCommit& operator=(const GroupCommit&) = delete;

  // Calls `done` after the next log write (never on the calling thread, but
  // after Stop()). Never blocks on I/O.
  void Await(Callback done);
  // One log write on the calling thread, `try_sync` (which may decline:
  // nullopt), when the state is kIdle; its result, or nullopt when the writer
  // is busy, stopped, or `try_sync` declined (then Await). Never waits for
  // the writer.
  std::optional<Status> SyncHere(const std::function<std::optional<Status>()>& try_sync);
  // Writes the log once more for the callbacks still queued, runs them, and
  // joins the writer thread. Idempotent.
  void Stop();

  State state() const;
  // Log writes made (groups), for tests.
  uint64_t groups() const;

 private:
  void Run();

  const Sync sync_;
  SyncPoints* const sync_points_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::vector<Callback> queued_;  // guarded by mu_
  State state_ = State::kIdle;    // guarded by mu_
  bool stopping_ = false;         // guarded by mu_
  uint64_t groups_ = 0;           // guarded by mu_ (the writer's and SyncHere's)
  std::mutex stop_mu_;            // serializes Stop()
  std::thread writer_;
};

}  // namespace tablestone::storage
