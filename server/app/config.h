// Config: every setting of the tablestone process, loaded once at startup and
// then passed down only as per-layer option structs (HttpOptions, ApiOptions,
// EngineOptions), never as a global.
//
// Sources, lowest precedence first:
//   1. built-in defaults (the values below; config/tablestone.json lists them);
//   2. a JSON config file, read only when named by --config FILE or
//      TABLESTONE_CONFIG (no implicit file: a stray file in the working
//      directory must not change behaviour; the Docker image passes one);
//   3. environment variables (TABLESTONE_*, and AZURITE_ACCOUNTS as in Azurite);
//   4. command-line flags (Azurite's table flags where they overlap).
// Unknown keys in the file, unknown flags and bad values are refused with the
// offending key/flag named; the process then exits with code 2.
//
// config/README.md documents every key; --help prints every flag.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "server/api/api_options.h"
#include "server/exec/work_executor.h"
#include "server/http/http_options.h"
#include "storage/engine.h"

namespace tablestone::app {

// The account of the Azure storage emulator (UseDevelopmentStorage=true).
inline constexpr char kDevAccountName[] = "devstoreaccount1";
inline constexpr char kDevAccountKey[] =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
// The account of the Azure Cosmos DB emulator's Table endpoint, with its
// published key (Learn: "Develop locally using the Azure Cosmos DB emulator").
inline constexpr char kCosmosEmulatorAccounts[] =
    "localhost:C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";

struct LoggingConfig {
  std::string level = "info";   // trace|debug|info|warn|error|critical|off
  std::string format = "text";  // text|json
  bool access_log = true;       // one line per request on the "access" logger
  std::string debug_file;       // empty = none; else every logger at debug level into this file
  std::string trace;            // empty = none; else one JSON line per request into this file (api/trace.h)
  bool trace_bodies = false;    // the trace also carries headers and bodies (secrets redacted)
};

struct Config {
  // listen
  std::string host = "127.0.0.1";
  uint16_t port = 10002;
  // HTTPS (Azurite's --cert/--key/--pwd): PEM certificate + key, or a PKCS#12
  // bundle + password. Empty cert = plain HTTP.
  std::string cert;
  std::string key;
  std::string pwd;
  // storage
  std::string location = "./data";
  bool in_memory = false;
  std::string durability = "default";  // default|fsync
  uint64_t block_cache_mb = 64;        // RocksDB blocks: index, filter and data
  uint64_t scan_cache_mb = 64;         // partition cache of filtered scans; 0 = off
  uint64_t entity_cache_mb = 16;       // recently read entities (point reads); 0 = off
  // The lanes' executor (server/exec/work_executor.h): threads of the write and
  // scan lanes (0 = number of cores), queued requests per lane before 503
  // ServerBusy, and the nice value added to scan threads.
  uint64_t write_threads = 0;
  uint64_t scan_threads = 0;
  uint64_t queue_limit = 4096;
  uint64_t scan_nice = 4;
  uint64_t scan_burst_us = 250;  // ApiOptions::scan_cpu_burst
  std::string group_commit = "engine";  // engine|rocksdb (storage/engine.h)
  // accounts (AZURITE_ACCOUNTS replaces the whole list)
  std::vector<api::AccountKeys> accounts = {{kDevAccountName, {kDevAccountKey}}};
  // limits
  uint64_t max_body_bytes = 4 * 1024 * 1024 + 64 * 1024;
  uint64_t max_header_bytes = 16 * 1024;
  uint64_t max_connections = 10'000;
  uint64_t max_connections_per_address = 1'024;  // 0 = no cap
  // timeouts, milliseconds
  uint64_t idle_timeout_ms = 120'000;
  uint64_t first_byte_timeout_ms = 10'000;
  uint64_t handshake_timeout_ms = 10'000;
  uint64_t read_timeout_ms = 30'000;
  uint64_t drain_timeout_ms = 5'000;
  uint64_t query_page_ms = 5'000;
  // I/O threads; 0 = number of cores
  uint64_t threads = 0;
  LoggingConfig logging;
  // api behaviour
  bool loose = false;
  std::string oauth = "off";  // --oauth: "off" or "basic"
  bool skip_api_version_check = false;
  bool disable_product_style_url = false;
  bool allow_anonymous = false;
  bool admin_api = false;        // the /_tablestone/snapshot and /reset routes
  std::string admin_key;         // --adminKey: base64 admin credential (docs/admin-api.md)
  std::string admin_account;     // --adminAccount: the account whose keys are admin
  std::string snapshot_dir;      // --snapshotDir; empty = "<location>.snapshots" (ToApiOptions)
  std::string trace_dir;         // --traceDir; empty = "<location>.traces" (ToApiOptions)
  std::string allowed_hosts;     // --allowedHosts: comma-separated host names for the UI and admin routes
  bool ui = true;                // the data browser at /_tablestone/ui/ (--noUi: off)
  std::string seed;              // export file or directory loaded at startup; empty = none
  // fault injection (server/faults, docs/testing-with-faults.md)
  std::string faults_file;       // --faults FILE: rules loaded at startup; empty = none
  uint64_t fault_seed = 0;       // --faultSeed
  bool realistic = false;        // --realistic
  uint64_t table_being_deleted_ms = 40'000;
  uint64_t realistic_latency_ms = 0;
  // Cosmos DB for Table mode (docs/cosmos-mode.md): the main listener's
  // flavour, and an optional second listener that always imitates Cosmos DB,
  // with accounts of its own (AZURITE_ACCOUNTS' format), the first of which a
  // path without an account segment addresses.
  std::string flavor = "storage";    // storage|cosmos
  uint16_t cosmos_port = 0;          // 0 = no Cosmos listener
  std::string cosmos_host;           // empty = listen.host
  std::string cosmos_accounts;       // empty = kCosmosEmulatorAccounts
  bool cosmos_shuffle = true;        // query results in a seeded non-key order (seed: fault_seed)
  uint64_t cosmos_ru_per_second = 0; // request units per second per table; 0 = no budget
  uint64_t cosmos_table_creates_per_minute = 5;  // with a budget: Create Table per account and minute; 0 = no limit

  // Azurite's Blob and Queue ports, served only when the program runs as
  // `azurite` (Personality::kAzurite): there api/sibling_ports.h answers the
  // readiness listings and refuses the rest. Set by --blobHost/--blobPort/
  // --queueHost/--queuePort (no file key or variable: Azurite has none either).
  bool sibling_ports = false;
  std::string blob_host = "127.0.0.1";
  uint16_t blob_port = 10000;
  std::string queue_host = "127.0.0.1";
  uint16_t queue_port = 10001;

  // Which file was read, if any (for the startup log).
  std::string config_file;

  // Projections into the per-layer option structs.
  http::HttpOptions ToHttpOptions() const;
  api::ApiOptions ToApiOptions() const;
  // The Cosmos listener's options: ToApiOptions() with its accounts, the
  // cosmos flavour, and neither the data browser nor the admin routes.
  api::ApiOptions ToCosmosApiOptions() const;
  // The cosmos_accounts list, parsed (checked when the setting was read).
  std::vector<api::AccountKeys> CosmosAccounts() const;
  storage::EngineOptions ToEngineOptions() const;
  exec::ExecutorOptions ToExecutorOptions() const;
};

using Environment = std::map<std::string, std::string>;

// The variables of this process that the configuration may read.
Environment ProcessEnvironment();

// The name the program was started under (docs/migrating-from-azurite.md).
//   kTablestone   `tablestone`: the Table service; Azurite's Blob/Queue flags
//                 are accepted and ignored with a warning.
//   kAzuriteTable `azurite-table`: the same, under Azurite's name.
//   kAzurite      `azurite`: the Table service plus the Blob and Queue ports
//                 (Config::sibling_ports), readiness lines as Azurite prints them.
enum class Personality { kTablestone, kAzurite, kAzuriteTable };

// The personality of a process started as `argv0` with `args`: the base name
// of argv0 (a link named azurite or azurite-table), or a first argument
// `azurite`, `azurite-table` or `tablestone`, which is then removed from
// `args` (an image whose entrypoint is tablestone given the command line
// `azurite --blobHost ...`, as compose files and Testcontainers-Java write
// it). `azurite-blob` or `azurite-queue` (either way) sets `refused` to the
// message to print: this server has no Blob or Queue service to start alone.
Personality DetectPersonality(std::string_view argv0, std::vector<std::string>* args, std::string* refused);

// What LoadConfig decided.
struct LoadResult {
  enum class Action {
    kRun,   // start the server with `config`
    kExit,  // print `output` (to stdout if exit_code == 0, else stderr) and exit
  };
  Action action = Action::kRun;
  int exit_code = 0;
  std::string output;                 // --help / --version text, or the error message
  std::vector<std::string> warnings;  // ignored Azurite flags, unknown TABLESTONE_* variables
  Config config;
};

// Builds the Config from all sources. `args` excludes the program name.
// Errors: exit code 2 and a message naming the key, variable or flag.
// `personality` decides whether --blobHost/--blobPort/--queueHost/--queuePort
// configure the sibling ports (kAzurite) or are ignored with a warning.
LoadResult LoadConfig(const std::vector<std::string>& args, const Environment& env,
                      Personality personality = Personality::kTablestone);

// Parses "name:key1[:key2];name2:key1" (AZURITE_ACCOUNTS). Empty entries
// (e.g. a trailing ';') are skipped. On error returns false and sets `error`.
// After every source is applied: checks the admin settings (the key is
// base64, the admin account is configured; the snapshot and trace
// directories, with their defaults "<location>.snapshots" and
// "<location>.traces", and the --trace file lie outside the data directory,
// and the two directories differ; docs/admin-api.md, "Files").
bool ResolveAdminSettings(Config* config, std::string* error);

// With a Cosmos listener (cosmos.port): its port differs from the main one and
// no account is on both listeners (an account is one flavour's data: its
// table names are compared with or without case, docs/cosmos-mode.md).
bool CheckCosmosSettings(const Config& config, std::string* error);

bool ParseAccountsEnv(const std::string& text, std::vector<api::AccountKeys>* accounts, std::string* error);

// EngineOptions::max_open_files for a process allowed `fd_limit` open
// descriptors (RLIMIT_NOFILE): half of them, the other half left for
// connections, logs and the WAL; at least 256 and at most 16,384 (each open
// table reader also holds a little memory outside the block cache).
int TableFilesKeptOpen(uint64_t fd_limit);

// The --help text (every flag with its default and environment variable).
std::string HelpText();
// The --version text.
std::string VersionText();

}  // namespace tablestone::app
