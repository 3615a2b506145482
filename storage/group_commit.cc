#include "storage/group_commit.h"

#include <utility>

#include "storage/thread_priority.h"

namespace tablestone::storage {

GroupCommit::GroupCommit(Sync sync, SyncPoints* sync_points)
    : sync_(std::move(sync)), sync_points_(sync_points), writer_([this] { Run(); }) {}

GroupCommit::~GroupCommit() { Stop(); }

void GroupCommit::Await(Callback done) {
  {
    std::lock_guard lock(mu_);
    if (state_ != State::kStopped) {
      queued_.push_back(std::move(done));
      if (state_ == State::kIdle) {
        state_ = State::kQueued;
        wake_.notify_one();
      }
      return;
    }
  }
  // Stopped (the engine is closing or closed): nobody else will write the log.
  done(sync_());
}

std::optional<Status> GroupCommit::SyncHere(const std::function<std::optional<Status>()>& try_sync) {
  {
    std::lock_guard lock(mu_);
    if (state_ != State::kIdle) return std::nullopt;
    state_ = State::kWriting;  // Await queues without waking the writer meanwhile
  }
  const std::optional<Status> s = try_sync();
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    if (s) ++groups_;
    // Stop() waits for this to end (the writer leaves only from kIdle), so
    // the state is still kWriting here.
    state_ = queued_.empty() ? State::kIdle : State::kQueued;
    // Only when there is something for the writer: a notify with the writer
    // waiting is a futex call and a wake-up, the cost this method saves.
    wake = state_ == State::kQueued || stopping_;
  }
  if (wake) wake_.notify_one();  // the callbacks queued meanwhile, or a Stop() waiting for this write
  return s;
}

void GroupCommit::Run() {
  // SCHED_BATCH, as the executor's lanes: woken by a request's AwaitDurable,
  // this thread does not preempt the I/O thread that woke it, which finishes
  // its event-loop turn (whose other responses then join the same group)
  // instead of being switched out per group on a machine with few free cores.
  UseBatchScheduling();
  std::vector<Callback> group;
  std::unique_lock lock(mu_);
  while (true) {
    // kQueued: Await queued callbacks (while a SyncHere writes, it leaves
    // them for this thread and wakes it when its write ends).
    wake_.wait(lock, [this] { return state_ == State::kQueued || (stopping_ && state_ == State::kIdle); });
    if (state_ == State::kIdle) break;  // stopping, nothing queued, no SyncHere writing
    lock.unlock();
    SyncPoint(sync_points_, "GroupCommit::Woken");
    lock.lock();
    group.swap(queued_);
    state_ = State::kWriting;
    lock.unlock();
    // Every callback's write was visible before it was queued, so one log
    // write made now covers the whole group.
    const Status s = sync_();
    for (Callback& done : group) done(s);
    group.clear();
    lock.lock();
    ++groups_;
    state_ = queued_.empty() ? State::kIdle : State::kQueued;
    lock.unlock();
    SyncPoint(sync_points_, "GroupCommit::GroupDone");
    lock.lock();
  }
}

void GroupCommit::Stop() {
  std::lock_guard stop_lock(stop_mu_);
  {
    std::lock_guard lock(mu_);
    if (state_ == State::kStopped) return;
    stopping_ = true;
  }
  wake_.notify_one();
  if (writer_.joinable()) writer_.join();
  std::vector<Callback> late;
  {
    std::lock_guard lock(mu_);
    state_ = State::kStopped;
    late.swap(queued_);  // queued after the writer's last look
  }
  if (!late.empty()) {
    const Status s = sync_();
    for (Callback& done : late) done(s);
  }
}

GroupCommit::State GroupCommit::state() const {
  std::lock_guard lock(mu_);
  return state_;
}

uint64_t GroupCommit::groups() const {
  std::lock_guard lock(mu_);
  return groups_;
}

}  // namespace tablestone::storage
