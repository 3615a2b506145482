// Buffers of the I/O thread for a TLS connection's records (BasicSession<ssl_stream>, session_tls.cc).
//
// Contract: ThreadTlsScratch() is the calling thread's; a caller uses it within one handler run
// and leaves nothing in it that a later handler needs (so a strand whose handlers move between
// threads may use it too). One per thread is warm in the cache for every connection, where one
// per connection was cold each time (64 connections touch more than this machine's 512 KiB L2
// between two requests of one), and an idle connection keeps none of them (docs/benchmarks.md,
// "HTTPS: where the time goes").
#pragma once

#include <cstddef>
#include <string>

namespace tablestone::http {

struct TlsScratch {
  // A response's records: the socket takes nearly every response whole at once, and only what it
  // leaves is copied to the connection's own buffer. Kept up to kKeepSealedBytes (a 1,000-entity
  // page's 242 KB is not allocated and released per response).
  std::string sealed;
  // The head joined with the body's first bytes into the first record (SealResponse).
  std::string head;
  // Records opened into plain text: opening needs room for a whole record beyond what arrived
  // (TlsRecords::OpenCapacity), which would otherwise hold every connection's read buffer at its
  // limit; only the request's bytes are copied to the connection's buffer.
  std::string plain;
};

// The most a thread's `sealed` keeps between responses (ReleaseSealed).
inline constexpr size_t kKeepSealedBytes = 1024 * 1024;

// The calling thread's buffers.
TlsScratch& ThreadTlsScratch();

// Clears `sealed` and gives back its buffer when one unusually large response grew it past
// kKeepSealedBytes.
void ReleaseSealed(std::string& sealed);

}  // namespace tablestone::http
