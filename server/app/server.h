// Server: owns the pieces of a running tablestone and starts/stops them in
// order.
//
//   Start(): open the Engine (data dir, durability) -> start the lanes'
//            executor -> open the trace file (--trace) -> build the API
//            handler -> start the HTTP listener -> log one startup line.
//   Stop():  each step ends what the next one needs to have ended:
//            1. stop accepting and drain the listeners (HttpOptions::
//               drain_timeout): no new request reaches the handler;
//            2. shut the executor down: running lane work finishes, queued
//               work is answered 503; those answers are posted to the
//               listeners' stopped io_contexts, so the listeners stay;
//            3. drop the handler: it answers the requests a fault rule
//               delays and waits for its responses held for the log write
//               (the engine's log writer answers them);
//            4. drop the listeners (and the answers posted to them);
//            5. close the Engine (flush, release the lock): nothing calls it
//               any more. Closing it earlier is not needed by anything above.
//
// Startup does no blocking work besides opening RocksDB, so the first request
// can be served a few milliseconds after spawn.
//
// Thread safety: Start/Stop from one controlling thread (not an I/O thread).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "server/app/config.h"

namespace tablestone::storage {
class Engine;
}
namespace tablestone::exec {
class WorkExecutor;
}
namespace tablestone::faults {
class FaultSet;
}
namespace tablestone::api {
class Metrics;
class TraceWriter;
}
namespace tablestone::http {
struct HttpOptions;
class Listener;
class RequestHandler;
}  // namespace tablestone::http

namespace tablestone::app {

// Process exit codes.
inline constexpr int kExitOk = 0;
inline constexpr int kExitStartupFailed = 1;  // data dir locked/unusable, port in use
inline constexpr int kExitBadConfig = 2;      // bad flag, variable or config file

class Server {
 public:
  explicit Server(Config config);
  ~Server();  // Stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // On failure returns false, sets `error` to a message for the operator and
  // leaves nothing running (the Engine is closed again).
  bool Start(std::string* error);
  // Idempotent.
  void Stop();

  // The bound port (differs from config.port when that was 0).
  uint16_t port() const;
  // "http://127.0.0.1:10002"
  std::string url() const;
  // The Blob and Queue ports (Config::sibling_ports; 0 when not serving them).
  uint16_t blob_port() const;
  uint16_t queue_port() const;
  // The Cosmos listener's port (Config::cosmos_port; 0 when not serving it).
  uint16_t cosmos_port() const;
  const Config& config() const { return config_; }

 private:
  Config config_;
  std::unique_ptr<api::Metrics> metrics_;  // outlives the handler and listener
  std::unique_ptr<api::TraceWriter> trace_;  // likewise; on with --trace or the admin switch
  std::unique_ptr<storage::Engine> engine_;
  std::unique_ptr<exec::WorkExecutor> executor_;  // the lanes (config storage.writeThreads, scanThreads)
  std::unique_ptr<http::RequestHandler> handler_;
  std::unique_ptr<http::Listener> listener_;
  // Config::sibling_ports: Azurite's Blob and Queue ports (api/sibling_ports.h).
  std::unique_ptr<http::RequestHandler> blob_handler_, queue_handler_;
  std::unique_ptr<http::Listener> blob_listener_, queue_listener_;
  // Config::cosmos_port: the same engine behind a dispatcher of the cosmos
  // flavour with its own accounts (docs/cosmos-mode.md).
  std::unique_ptr<http::RequestHandler> cosmos_handler_;
  std::unique_ptr<http::Listener> cosmos_listener_;
  bool running_ = false;

  // Table names are compared exactly for `exact_accounts` (the cosmos
  // flavour's) and without case for the others; the rule is recorded in each
  // exact account's metadata and a data directory whose accounts were written
  // under the other rule is refused (false, `error` says which account).
  bool CheckTableNameCase(const std::vector<std::string>& exact_accounts, std::string* error);
  bool StartSiblingPorts(const http::HttpOptions& table_options, std::string* error);
  bool StartCosmosListener(const http::HttpOptions& table_options, std::shared_ptr<faults::FaultSet> faults,
                           std::string* error);
  // Stop's steps 2-5 and the trace and metrics, for Stop and for a Start that
  // failed part way (each step skips what was not made).
  void TearDown();
  // The one cleanup of a Start that failed part way. Returns false, Start's
  // answer.
  bool AbandonStart();
  // Warns on stderr when the data directory is an Azurite workspace with no table of ours.
  void WarnIfAzuriteWorkspace();
  void AnnounceLikeAzurite() const;
};

}  // namespace tablestone::app
