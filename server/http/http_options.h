// Options of the HTTP front end, filled by server/app from the configuration.
// Every limit and timeout the transport enforces lives here, so the values a
// deployment runs with are visible in one struct.
#pragma once

#include <chrono>
#include <memory>
#include <cstddef>
#include <cstdint>
#include <string>

#include "server/http/transport_counters.h"

namespace boost::asio::ssl {
class context;
}

namespace tablestone::http {

struct AccessRecord;  // handler.h

struct HttpOptions {
  // Address to bind (IPv4 or IPv6 literal). 127.0.0.1 keeps the emulator
  // private by default, like Azurite; Docker passes 0.0.0.0.
  std::string address = "127.0.0.1";
  // 0 asks the kernel for a free port (tests); Listener::port() tells which.
  uint16_t port = 10002;

  // I/O threads running the io_context. 0 = DefaultThreadCount() (listener.h):
  // one fewer than the CPUs the process may run on, at least 1.
  // RequestHandler::Handle is called on these threads and must not block them
  // (it completes asynchronously, handler.h).
  int threads = 0;

  // Bytes of request line + headers. 16 KiB: Beast's default of 8 KiB is tight
  // for SAS-signed URLs plus SDK telemetry headers; larger than that is abuse.
  size_t header_limit = 16 * 1024;
  // Bytes of request body. The service caps bodies (single entity and $batch)
  // at 4 MiB; the 64 KiB slack lets a 4 MiB batch payload pass together with
  // its multipart framing so the api layer, not the transport, decides on the
  // exact 4 MiB rule. Beyond it: RenderTransportError(kBodyTooLarge) -> 413
  // and the connection is closed (the rest of the body is never read).
  uint64_t body_limit = 4 * 1024 * 1024 + 64 * 1024;

  // How long a keep-alive connection may wait for the first byte of its next
  // request. Azure's front ends keep idle connections for minutes; SDK pools
  // reuse them, so closing early only costs reconnects.
  std::chrono::milliseconds idle_timeout{120'000};
  // Deadline for a whole request (headers and body) once its first byte has
  // arrived, and separately for writing the response. This is the slowloris
  // protection: a client trickling bytes cannot hold a connection longer.
  std::chrono::milliseconds read_timeout{30'000};
  // How long a NEW connection may take to send the first byte of its first
  // request (after the TLS handshake, on HTTPS): shorter than idle_timeout,
  // so that connections opened and left silent (connection exhaustion, issue
  // 30) go soon, while a client's pooled connections keep the long idle
  // timeout. nginx (client_header_timeout) and Envoy
  // (request_headers_timeout) bound the same wait.
  std::chrono::milliseconds first_byte_timeout{10'000};
  // HTTPS: how long the TLS handshake may take from the accept (the client's
  // first bytes included). nginx's ssl_handshake_timeout.
  std::chrono::milliseconds handshake_timeout{10'000};
  // After an early final response that closes the connection (413, 431, 400,
  // or a refusal on the headers) the session keeps reading and dropping what
  // the client still sends, so that the client, which is usually still
  // writing its body, reads the answer instead of meeting a reset (nginx's
  // "lingering close"). It stops at the first of: the client closes, no byte
  // for linger_gap, linger_time in all (and never past read_timeout), or
  // linger_max_bytes dropped (1 MiB after a 400 for malformed HTTP). Nothing
  // of it is buffered. 8 MiB covers a body of twice the service's 4 MiB.
  std::chrono::milliseconds linger_time{10'000};
  std::chrono::milliseconds linger_gap{2'000};
  uint64_t linger_max_bytes = 8 * 1024 * 1024;
  // Graceful stop: how long in-flight requests may take to finish before the
  // remaining connections are force-closed.
  std::chrono::milliseconds drain_timeout{5'000};

  // Live connections above which new ones are accepted and closed at once
  // (a closed connection fails fast; a full backlog would hang clients).
  size_t max_connections = 10'000;
  // Live connections from one client address (IPv4 address, or IPv6 address)
  // above which a new one from it is accepted and closed at once, so that one
  // client cannot take every slot of max_connections. 0 = no cap. Behind a
  // NAT or Docker's port forwarding every client shares one address.
  size_t max_connections_per_address = 1'024;

  // One line per request on the spdlog logger named "access" (if registered;
  // otherwise nothing is logged). false = no formatting work at all.
  bool access_log = true;
  // Formats an access line from its facts (handler.h, AccessRecord); null =
  // the text line `PEER "METHOD TARGET" STATUS BYTES MICROSus`. server/app
  // sets it for --logFormat json (logging.h, JsonAccessLine).
  std::string (*access_line)(const AccessRecord& record) = nullptr;

  // Where sessions count bytes and connections (the metrics route); null =
  // not counted. Not owned: must outlive the Listener.
  TransportCounters* counters = nullptr;
  // Set: every connection is HTTPS (TLS with this context; tls_context.h
  // builds it from --cert/--key/--pwd). Null: plain HTTP.
  std::shared_ptr<boost::asio::ssl::context> tls;
};

}  // namespace tablestone::http
