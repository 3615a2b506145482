// ConnectionRegistry: the set of live connections, so that a stop can reach
// each of them.
//
// Closing a socket from a thread other than the one running its handlers is an
// Asio thread-safety violation (Ceph RGW crashed on exactly this), so the
// registry never touches sockets: it asks each connection to close itself,
// and a connection implements that by posting onto its own executor, where it
// cancels pending operations and shuts the socket down.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace tablestone::http {

enum class CloseMode {
  // Finish the request in flight (answering it with "Connection: close"),
  // close a connection idle between requests at once.
  kGraceful,
  // Cancel everything and shut the socket down now.
  kForce,
};

// What the registry needs from a connection. Implementations must return
// quickly and must not call back into the registry synchronously.
class Closable {
 public:
  virtual ~Closable() = default;
  virtual void RequestClose(CloseMode mode) = 0;
};

class ConnectionRegistry {
 public:
  using Id = uint64_t;

  ConnectionRegistry() = default;
  ConnectionRegistry(const ConnectionRegistry&) = delete;
  ConnectionRegistry& operator=(const ConnectionRegistry&) = delete;

  // Registers a connection and returns its id, or 0 when the registry has
  // been closed (CloseAll was called) or holds `max_connections` already: the
  // caller must then drop the connection. Only a weak reference is kept.
  Id Add(std::weak_ptr<Closable> connection, size_t max_connections);
  // The same, and also 0 when `address` (the client's) holds
  // `max_per_address` connections already (0 = no per-address cap). The
  // counts are per registry and drop with Remove().
  Id Add(std::weak_ptr<Closable> connection, size_t max_connections, const std::string& address,
         size_t max_per_address);
  // Live connections from `address`.
  size_t CountFrom(const std::string& address) const;
  // Unregisters; called by the connection when it ends. Unknown ids are ignored.
  void Remove(Id id);

  // Asks every live connection to close. After a kGraceful or kForce call,
  // Add() refuses new connections for good.
  void CloseAll(CloseMode mode);

  // Blocks until no connection is registered or `timeout` passes; returns
  // true when the registry is empty.
  bool WaitUntilEmpty(std::chrono::milliseconds timeout);

  size_t Size() const;
  bool closed() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable empty_cv_;
  struct Entry {
    std::weak_ptr<Closable> connection;
    std::string address;  // empty: not counted per address
  };
  std::unordered_map<Id, Entry> live_;
  std::unordered_map<std::string, size_t> per_address_;
  Id next_id_ = 1;
  bool closed_ = false;
};

// RAII registration: unregisters on destruction.
class RegistryGuard {
 public:
  RegistryGuard() = default;
  RegistryGuard(ConnectionRegistry* registry, ConnectionRegistry::Id id) : registry_(registry), id_(id) {}
  // For owners that can only register after construction (a weak_ptr to
  // themselves needs shared_from_this). Call at most once.
  void Assign(ConnectionRegistry* registry, ConnectionRegistry::Id id) {
    registry_ = registry;
    id_ = id;
  }
  RegistryGuard(const RegistryGuard&) = delete;
  RegistryGuard& operator=(const RegistryGuard&) = delete;
  ~RegistryGuard() {
    if (registry_ != nullptr && id_ != 0) registry_->Remove(id_);
  }

 private:
  ConnectionRegistry* registry_ = nullptr;
  ConnectionRegistry::Id id_ = 0;
};

}  // namespace tablestone::http
