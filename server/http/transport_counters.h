// What the HTTP transport counts for the metrics route (server/api/metrics.h
// renders them): plain relaxed atomics, so a session adds to them without a
// lock or an allocation. The transport only adds; readers take each value on
// its own, so a scrape may see a connection opened but its bytes not yet.
#pragma once

#include <atomic>
#include <cstdint>

namespace tablestone::http {

struct TransportCounters {
  // Request bytes the HTTP parser consumed (start line, headers and body, as
  // sent, chunk framing included), requests refused for their size included.
  std::atomic<uint64_t> bytes_in{0};
  // Response bytes written to sockets (head and body).
  std::atomic<uint64_t> bytes_out{0};
  // Connections a session was started for, and those whose session has ended:
  // live connections are the difference.
  std::atomic<uint64_t> connections_opened{0};
  std::atomic<uint64_t> connections_closed{0};

  void Add(std::atomic<uint64_t>& counter, uint64_t n) { counter.fetch_add(n, std::memory_order_relaxed); }
};

}  // namespace tablestone::http
