#include "server/app/server.h"

#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "server/api/api_handler.h"
#include "server/api/metrics.h"
#include "server/api/trace.h"
#include "server/faults/fault_rules.h"
#include "server/http/listener.h"
#include "server/http/tls_context.h"
#include "storage/engine.h"
#include "tools/data_commands.h"
#include "tools/table_store.h"

namespace tablestone::app {
namespace {

std::shared_ptr<spdlog::logger> AppLog() {
  auto logger = spdlog::get("app");
  return logger ? logger : spdlog::default_logger();
}

// Raises this process's soft limit of open descriptors to its hard limit (a
// shell's default soft limit is often 1,024 under a hard limit of 500k or
// more) and returns the soft limit in force. Table files and connections
// both use descriptors (TableFilesKeptOpen).
uint64_t RaiseOpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return limit.rlim_cur == RLIM_INFINITY ? UINT64_MAX : static_cast<uint64_t>(limit.rlim_cur);
}

}  // namespace

Server::Server(Config config) : config_(std::move(config)) {}

Server::~Server() { Stop(); }

bool Server::Start(std::string* error) {
  auto begin = std::chrono::steady_clock::now();
  storage::EngineOptions engine_options = config_.ToEngineOptions();
  const uint64_t fd_limit = RaiseOpenFileLimit();
  engine_options.max_open_files = TableFilesKeptOpen(fd_limit);
  auto engine = storage::Engine::Open(engine_options);
  if (!engine.ok()) {
    if (engine.status().code() == StatusCode::kDataDirLocked) {
      // The storage layer phrased it for operators (names the directory).
      *error = engine.status().message() + " (is another tablestone running?)";
    } else {
      *error = "cannot open data directory '" + (config_.in_memory ? std::string("(in memory)") : config_.location) +
               "': " + engine.status().ToString();
    }
    return false;
  }
  engine_ = std::move(engine).value();
  if (!config_.seed.empty()) {
    // Before the port opens, so no client ever sees a half-seeded server.
    auto store = tools::WrapEngine(*engine_, config_.accounts.empty() ? std::string("devstoreaccount1")
                                                                      : config_.accounts.front().name);
    tools::DataSummary seeded;
    std::string why;
    if (!tools::RunSeed(*store, config_.seed, &seeded, &why)) {
      *error = "--seed " + config_.seed + ": " + why;
      store.reset();
      (void)engine_->Close();
      engine_.reset();
      return false;
    }
    for (const std::string& skipped : seeded.skipped) {
      AppLog()->info("--seed: skipped {} (not an export file: *.jsonl, *.jsonl.gz, *.jsonl.zst)", skipped);
    }
    AppLog()->info("seeded {} entities of {} tables from {} in {:.0f} ms", seeded.entities, seeded.tables,
                   config_.seed, seeded.seconds * 1000);
  }
  api::ApiOptions api_options = config_.ToApiOptions();
  // Always there, so the admin route can add rules later; with none (and
  // realistic mode off) a request pays one relaxed load (dispatcher.h).
  faults::RealisticOptions realistic;
  realistic.enabled = config_.realistic;
  realistic.table_being_deleted = std::chrono::milliseconds(config_.table_being_deleted_ms);
  realistic.latency_median = std::chrono::milliseconds(config_.realistic_latency_ms);
  api_options.faults = std::make_shared<faults::FaultSet>(config_.fault_seed, realistic);
  if (!config_.faults_file.empty()) {
    std::string why;
    std::ifstream in(config_.faults_file);
    std::stringstream text;
    text << in.rdbuf();
    auto json = nlohmann::json::parse(text.str(), nullptr, false);
    if (!in) {
      why = "cannot read the file";
    } else if (json.is_discarded()) {
      why = "not JSON";
    } else if (auto ids = api_options.faults->AddJson(json, &why)) {
      AppLog()->info("loaded {} fault rules from {}", ids->size(), config_.faults_file);
    }
    if (!why.empty()) {
      *error = "--faults " + config_.faults_file + ": " + why;
      (void)engine_->Close();
      engine_.reset();
      return false;
    }
  }
  if (config_.realistic) AppLog()->info("realistic mode on (fault seed {})", config_.fault_seed);
  std::vector<std::string> account_names;
  for (const api::AccountKeys& account : api_options.accounts) account_names.push_back(account.name);
  metrics_ = std::make_unique<api::Metrics>(std::move(account_names));
  trace_ = std::make_unique<api::TraceWriter>();
  if (!config_.logging.trace.empty() && !trace_->Start(config_.logging.trace, config_.logging.trace_bodies, error)) {
    trace_.reset();
    (void)engine_->Close();
    engine_.reset();
    return false;
  }
  handler_ = api::MakeApiHandler(*engine_, std::move(api_options), metrics_.get(), trace_.get());

  http::HttpOptions http_options = config_.ToHttpOptions();
  http_options.counters = &metrics_->transport();
  if (!config_.cert.empty()) {
    http_options.tls = http::MakeTlsContext({config_.cert, config_.key, config_.pwd}, error);
  }
  bool tls_failed = !config_.cert.empty() && !http_options.tls;
  if (config_.oauth == "basic" && config_.cert.empty()) {
    // Every SDK refuses to send a token over plain HTTP, as Azurite refuses this configuration.
    *error = "--oauth basic needs HTTPS (--cert): SDKs send bearer tokens over https only";
    tls_failed = true;
  }
  listener_ = std::make_unique<http::Listener>(std::move(http_options), *handler_);
  if (tls_failed || !listener_->Start(error)) {
    listener_.reset();
    handler_.reset();
    (void)engine_->Close();
    engine_.reset();
    return false;
  }
  running_ = true;
  if (config_.oauth == "basic") {
    AppLog()->warn("--oauth basic: bearer tokens are accepted after audience, issuer and lifetime checks only; "
                   "their signatures are NOT verified, so anyone can mint an accepted token");
  }
  auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - begin).count();
  AppLog()->info("tablestone listening on {}, data {}{} ({} I/O threads, durability {}, started in {} ms)", url(),
                 config_.in_memory ? std::string("in memory") : config_.location,
                 config_.config_file.empty() ? std::string() : ", config " + config_.config_file,
                 listener_->threads(), config_.durability, millis);
  if (config_.ui) AppLog()->info("data browser at {}/_tablestone/ui/ (docs/ui.md; --noUi turns it off)", url());
  return true;
}

void Server::Stop() {
  if (!running_) return;
  running_ = false;
  auto log = AppLog();
  log->info("stopping: draining connections");
  auto begin = std::chrono::steady_clock::now();
  // No new requests; those in flight finish (or are force-closed after the
  // drain timeout); the I/O threads are joined, their io_contexts kept.
  listener_->Stop();
  // The engine's executor next: work still running finishes, queued work is
  // answered 503; their answers are posted to the (stopped) io_contexts,
  // which therefore must outlive it, as must the handler the tasks call.
  Status status = engine_->Close();
  if (!status.ok()) log->error("closing the data directory failed: {}", status.ToString());
  listener_.reset();
  handler_.reset();
  engine_.reset();
  trace_.reset();  // writes the lines still queued
  auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - begin).count();
  log->info("stopped in {} ms", millis);
}

uint16_t Server::port() const { return listener_ ? listener_->port() : 0; }

std::string Server::url() const {
  std::string host = config_.host.find(':') != std::string::npos ? "[" + config_.host + "]" : config_.host;
  return std::string(config_.cert.empty() ? "http://" : "https://") + host + ":" + std::to_string(port());
}

}  // namespace tablestone::app
