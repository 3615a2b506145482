#include "server/app/server.h"

#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "server/app/build_commit.h"
#include "server/app/logging.h"
#include "server/api/api_handler.h"
#include "server/api/metrics.h"
#include "server/api/sibling_ports.h"
#include "server/api/trace.h"
#include "server/api/ui_routes.h"
#include "server/exec/work_executor.h"
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

std::string UrlOf(const std::string& host, uint16_t port, bool tls) {
  std::string shown = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return std::string(tls ? "https://" : "http://") + shown + ":" + std::to_string(port);
}

}  // namespace

Server::Server(Config config) : config_(std::move(config)) {}

Server::~Server() { Stop(); }

bool Server::Start(std::string* error) {
  auto begin = std::chrono::steady_clock::now();
  storage::EngineOptions engine_options = config_.ToEngineOptions();
  // Cosmos DB for Table compares table names exactly (docs/cosmos-mode.md).
  if (config_.flavor == "cosmos") {
    for (const api::AccountKeys& account : config_.accounts) engine_options.case_sensitive_accounts.push_back(account.name);
  }
  if (config_.cosmos_port != 0) {
    for (const api::AccountKeys& account : config_.CosmosAccounts()) {
      engine_options.case_sensitive_accounts.push_back(account.name);
    }
  }
  const uint64_t fd_limit = RaiseOpenFileLimit();
  engine_options.max_open_files = TableFilesKeptOpen(fd_limit);
  auto engine = storage::Engine::Open(engine_options);
  if (!engine.ok()) {
    if (engine.status().code() == StatusCode::kDataDirLocked) {
      // One clear line; RocksDB's own text ("IO error: While lock file: ...")
      // adds nothing an operator can act on.
      *error = "data directory " + config_.location +
               " is in use by another tablestone process (it holds the directory's LOCK file): stop that server, "
               "or start this one with another --location";
    } else {
      *error = "cannot open data directory '" + (config_.in_memory ? std::string("(in memory)") : config_.location) +
               "': " + engine.status().ToString();
      if (engine.status().message().find("Permission denied") != std::string::npos) {
        *error += " (the user running tablestone, uid " + std::to_string(geteuid()) +
                  ", may not write there: give it the directory or choose another with --location)";
      }
    }
    return false;
  }
  engine_ = std::move(engine).value();
  WarnIfAzuriteWorkspace();
  if (!CheckTableNameCase(engine_options.case_sensitive_accounts, error)) return AbandonStart();
  if (!config_.seed.empty()) {
    // Before the port opens, so no client ever sees a half-seeded server.
    auto store = tools::WrapEngine(*engine_, config_.accounts.empty() ? std::string("devstoreaccount1")
                                                                      : config_.accounts.front().name);
    tools::DataSummary seeded;
    std::string why;
    if (!tools::RunSeed(*store, config_.seed, &seeded, &why)) {
      *error = "--seed " + config_.seed + ": " + why;
      store.reset();  // it wraps the engine
      return AbandonStart();
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
      return AbandonStart();
    }
  }
  if (config_.realistic) AppLog()->info("realistic mode on (fault seed {})", config_.fault_seed);
  std::vector<std::string> account_names;
  for (const api::AccountKeys& account : api_options.accounts) account_names.push_back(account.name);
  if (config_.cosmos_port != 0) {
    for (const api::AccountKeys& account : config_.CosmosAccounts()) account_names.push_back(account.name);
  }
  // Both listeners' fault rules are one set (the admin route edits it).
  const std::shared_ptr<faults::FaultSet> fault_set = api_options.faults;
  api::BuildLabels build{.version = api_options.facts.version,
                         .commit = BuildCommit().empty() ? std::string("unknown") : std::string(BuildCommit()),
                         .flavor = config_.flavor};
  if (config_.cosmos_port != 0 && config_.flavor != "cosmos") build.flavor += "+cosmos";
  metrics_ = std::make_unique<api::Metrics>(std::move(account_names), std::move(build));
  trace_ = std::make_unique<api::TraceWriter>();
  if (!config_.logging.trace.empty() && !trace_->Start(config_.logging.trace, config_.logging.trace_bodies, error)) {
    return AbandonStart();
  }
  executor_ = std::make_unique<exec::WorkExecutor>(config_.ToExecutorOptions());
  handler_ = api::MakeApiHandler(*engine_, *executor_, std::move(api_options), metrics_.get(), trace_.get());

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
  const http::HttpOptions table_options = http_options;
  listener_ = std::make_unique<http::Listener>(std::move(http_options), *handler_);
  if (tls_failed || !listener_->Start(error) || (config_.sibling_ports && !StartSiblingPorts(table_options, error)) ||
      (config_.cosmos_port != 0 && !StartCosmosListener(table_options, fault_set, error))) {
    return AbandonStart();
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
  if (cosmos_listener_) {
    const std::string host = config_.cosmos_host.empty() ? config_.host : config_.cosmos_host;
    AppLog()->info("Cosmos DB for Table listener on {} (accounts {}; docs/cosmos-mode.md)",
                   UrlOf(host, cosmos_port(), !config_.cert.empty()), config_.cosmos_accounts.empty()
                                                                        ? std::string("localhost, the emulator's")
                                                                        : std::string("from cosmos.accounts"));
    if (config_.cosmos_accounts.empty() && !api::IsLoopbackAddress(host)) {
      AppLog()->warn("the Cosmos listener on {} serves the account localhost with the emulator's published key: "
                     "anyone who can reach it can read and write its data (set cosmos.accounts)",
                     host);
    }
  }
  if (config_.flavor == "cosmos") AppLog()->info("main listener imitates Cosmos DB for Table (--flavor cosmos)");
  if (config_.ui) AppLog()->info("data browser at {}/_tablestone/ui/ (docs/ui.md; --noUi turns it off)", url());
  if (config_.sibling_ports) AnnounceLikeAzurite();
  return true;
}

bool Server::CheckTableNameCase(const std::vector<std::string>& exact_accounts, std::string* error) {
  auto is_exact = [&](const std::string& name) {
    return std::find(exact_accounts.begin(), exact_accounts.end(), name) != exact_accounts.end();
  };
  std::vector<std::string> accounts;
  for (const api::AccountKeys& account : config_.accounts) accounts.push_back(account.name);
  if (config_.cosmos_port != 0) {
    for (const api::AccountKeys& account : config_.CosmosAccounts()) accounts.push_back(account.name);
  }
  for (const std::string& account : accounts) {
    auto recorded = engine_->GetAccountMeta(account, storage::kTableNameCaseKey);
    if (!recorded.ok()) {
      *error = "cannot read account " + account + "'s metadata: " + recorded.status().ToString();
      return false;
    }
    const bool was_exact = recorded->has_value() && **recorded == storage::kTableNamesExact;
    if (was_exact && !is_exact(account)) {
      *error = "account " + account + " holds Cosmos DB flavour data (table names compared exactly) and is served "
               "here with the storage flavour; use another --location, or serve it with the cosmos flavour";
      return false;
    }
    if (!is_exact(account) || was_exact) continue;
    storage::TableListSpec any;
    any.max_results = 1;
    auto tables = engine_->ListTables(account, any);
    if (!tables.ok() || !tables->tables.empty()) {
      *error = "account " + account + " holds storage flavour data (table names compared without case) and is "
               "served here with the cosmos flavour; use another --location or another account";
      return false;
    }
    Status put = engine_->PutAccountMeta(account, storage::kTableNameCaseKey, storage::kTableNamesExact);
    if (!put.ok()) {
      *error = "cannot record account " + account + "'s table name rule: " + put.ToString();
      return false;
    }
  }
  return true;
}

// -l pointed at an Azurite workspace (the drop-in image on Azurite's old
// volume, or a habit from Azurite) would otherwise start with no table next to
// the data the user expects to see. Said on stderr, which a service manager or
// `docker logs` shows even when stdout is sent elsewhere; not said once the
// directory holds tables of ours (the data was copied over).
// test_start_and_health.py::test_an_azurite_workspace_is_named_on_stderr.
void Server::WarnIfAzuriteWorkspace() {
  if (config_.in_memory) return;
  std::error_code ec;
  const std::filesystem::path azurite = std::filesystem::path(config_.location) / "__azurite_db_table__.json";
  if (!std::filesystem::exists(azurite, ec)) return;
  storage::TableListSpec one;
  one.max_results = 1;
  std::vector<std::string> accounts;
  for (const api::AccountKeys& account : config_.accounts) accounts.push_back(account.name);
  if (accounts.empty()) accounts.push_back("devstoreaccount1");  // the default account, as --seed
  for (const std::string& account : accounts) {
    auto listed = engine_->ListTables(account, one);
    if (!listed.ok() || !listed->tables.empty()) return;
  }
  LogStartupWarning("data directory " + config_.location +
                    " is an Azurite workspace (__azurite_db_table__.json): tablestone does not read Azurite's data "
                    "and starts with no tables. To bring the tables over, run Azurite on this directory on another "
                    "port and copy them: tablestone copy --from <Azurite's connection string> --to <this server's> "
                    "(docs/migrating-from-azurite.md, \"Moving existing data\")");
}

bool Server::AbandonStart() {
  // A listener that started is stopped by its destructor, before the rest.
  cosmos_listener_.reset();
  blob_listener_.reset();
  queue_listener_.reset();
  listener_.reset();
  TearDown();
  return false;
}

void Server::TearDown() {
  if (executor_ != nullptr) executor_->Shutdown();
  blob_handler_.reset();
  queue_handler_.reset();
  cosmos_handler_.reset();
  handler_.reset();
  blob_listener_.reset();
  queue_listener_.reset();
  cosmos_listener_.reset();
  listener_.reset();
  if (engine_ != nullptr) {
    Status status = engine_->Close();
    if (!status.ok()) AppLog()->error("closing the data directory failed: {}", status.ToString());
  }
  engine_.reset();
  executor_.reset();
  trace_.reset();  // writes the lines still queued
  metrics_.reset();
}

bool Server::StartSiblingPorts(const http::HttpOptions& table_options, std::string* error) {
  std::vector<std::string> accounts;
  for (const api::AccountKeys& account : config_.accounts) accounts.push_back(account.name);
  auto start = [&](api::SiblingService service, const std::string& host, uint16_t port,
                   std::unique_ptr<http::RequestHandler>* handler, std::unique_ptr<http::Listener>* listener) {
    *handler = std::make_unique<api::SiblingPortHandler>(api::SiblingPortOptions{service, accounts, url()});
    http::HttpOptions options = table_options;  // same TLS, timeouts and header limit as the Table port
    options.address = host;
    options.port = port;
    options.threads = 1;           // empty listings and refusals: one thread is plenty
    options.body_limit = 64 * 1024;  // only bodiless list calls are admitted (AdmitHeaders)
    options.max_connections = std::min<size_t>(options.max_connections, 1024);
    options.counters = nullptr;    // the metrics route counts the Table service's traffic
    *listener = std::make_unique<http::Listener>(std::move(options), **handler);
    return (*listener)->Start(error);
  };
  return start(api::SiblingService::kBlob, config_.blob_host, config_.blob_port, &blob_handler_, &blob_listener_) &&
         start(api::SiblingService::kQueue, config_.queue_host, config_.queue_port, &queue_handler_,
               &queue_listener_);
}

bool Server::StartCosmosListener(const http::HttpOptions& table_options, std::shared_ptr<faults::FaultSet> faults,
                                 std::string* error) {
  api::ApiOptions options = config_.ToCosmosApiOptions();
  options.faults = std::move(faults);
  cosmos_handler_ = api::MakeApiHandler(*engine_, *executor_, std::move(options), metrics_.get(), trace_.get());
  http::HttpOptions http_options = table_options;  // same TLS, limits and timeouts as the main listener
  http_options.address = config_.cosmos_host.empty() ? config_.host : config_.cosmos_host;
  http_options.port = config_.cosmos_port;
  cosmos_listener_ = std::make_unique<http::Listener>(std::move(http_options), *cosmos_handler_);
  if (cosmos_listener_->Start(error)) return true;
  *error = "Cosmos listener (cosmos.port " + std::to_string(config_.cosmos_port) + "): " + *error;
  return false;
}

void Server::AnnounceLikeAzurite() const {
  // Harnesses wait for these lines (Testcontainers matches ".*Blob service is
  // successfully listening.*" and so on; Testcontainers-Rust the whole Table
  // line), so they are Azurite's text exactly, on stdout, unformatted.
  const bool tls = !config_.cert.empty();
  const std::string blob = UrlOf(config_.blob_host, blob_port(), tls);
  const std::string queue = UrlOf(config_.queue_host, queue_port(), tls);
  const std::string table = url();
  std::string text;
  for (const auto& [name, at] : {std::pair<const char*, const std::string&>{"Blob", blob},
                                 std::pair<const char*, const std::string&>{"Queue", queue},
                                 std::pair<const char*, const std::string&>{"Table", table}}) {
    text += std::string("Azurite ") + name + " service is starting at " + at + "\n";
    text += std::string("Azurite ") + name + " service is successfully listening at " + at + "\n";
  }
  std::string version = VersionText();  // "tablestone X.Y.Z\n"
  while (!version.empty() && version.back() == '\n') version.pop_back();
  text += "This is " + version + ", which serves the Azure Table service only (" + table +
          "); the Blob (" + blob + ") and Queue (" + queue +
          ") ports answer empty container and queue listings for readiness checks and refuse every other request "
          "(docs/migrating-from-azurite.md).\n";
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
}

uint16_t Server::cosmos_port() const { return cosmos_listener_ ? cosmos_listener_->port() : 0; }
uint16_t Server::blob_port() const { return blob_listener_ ? blob_listener_->port() : 0; }
uint16_t Server::queue_port() const { return queue_listener_ ? queue_listener_->port() : 0; }

void Server::Stop() {
  if (!running_) return;
  running_ = false;
  auto log = AppLog();
  log->info("stopping: draining connections");
  auto begin = std::chrono::steady_clock::now();
  // No new requests; those in flight finish (or are force-closed after the
  // drain timeout); the I/O threads are joined, their io_contexts kept.
  if (blob_listener_) blob_listener_->Stop();
  if (queue_listener_) queue_listener_->Stop();
  if (cosmos_listener_) cosmos_listener_->Stop();
  listener_->Stop();
  TearDown();  // steps 2-5 (server.h)
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
