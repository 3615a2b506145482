#include "server/app/config.h"

#include <arpa/inet.h>
#include <netdb.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "protocol/base64.h"
#include "server/api/ui_routes.h"
#include "server/app/settings.h"
#include "storage/model/ascii.h"

extern char** environ;

namespace tablestone::app {
namespace internal {
namespace {

// The listener binds exactly one address. An IP literal is that address;
// "localhost" is 127.0.0.1; any other host name is resolved here, once, as
// Azurite does (Node's listen(host)), and its first IPv4 address (else IPv6)
// is the one bound. ConfigTest.HostNamesResolveToTheAddressBound pins it.
bool CheckHost(std::string* value, std::string* why) {
  if (*value == "localhost") *value = "127.0.0.1";
  unsigned char buf[sizeof(in6_addr)];
  if (inet_pton(AF_INET, value->c_str(), buf) == 1 || inet_pton(AF_INET6, value->c_str(), buf) == 1) return true;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = value->empty() ? EAI_NONAME : getaddrinfo(value->c_str(), nullptr, &hints, &found);
  if (rc != 0) {
    *why = "is neither an IP address nor a host name this machine resolves (" + std::string(gai_strerror(rc)) + ")";
    return false;
  }
  const addrinfo* pick = found;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    if (a->ai_family == AF_INET) {
      pick = a;
      break;
    }
  }
  char text[INET6_ADDRSTRLEN] = {};
  const void* addr = pick->ai_family == AF_INET
                         ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(pick->ai_addr)->sin_addr)
                         : static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(pick->ai_addr)->sin6_addr);
  const bool ok = inet_ntop(pick->ai_family, addr, text, sizeof(text)) != nullptr;
  freeaddrinfo(found);
  if (!ok) {
    *why = "resolves to an address that cannot be written out";
    return false;
  }
  *value = text;
  return true;
}

bool CheckNonEmpty(std::string* value, std::string* why) {
  if (!value->empty()) return true;
  *why = "must not be empty";
  return false;
}

const std::string& Str(const Value& v) { return std::get<std::string>(v); }
uint64_t Uint(const Value& v) { return std::get<uint64_t>(v); }
bool Bool(const Value& v) { return std::get<bool>(v); }
std::string ShowBool(bool b) { return b ? "true" : "false"; }

constexpr uint64_t kDay = 24ull * 3600 * 1000;

std::vector<Setting> BuildSettings() {
  std::vector<Setting> s;
  auto add = [&s](Setting setting) { s.push_back(setting); };
  add({.path = "listen.host", .env = "TABLESTONE_HOST", .kind = Kind::kString,
       .help = "Address to listen on: an IP address, or a host name (bound to its first address); 0.0.0.0 for all interfaces.",
       .check = CheckHost,
       .set = [](Config& c, const Value& v) { c.host = Str(v); },
       .show = [](const Config& c) { return c.host; }});
  add({.path = "listen.cert", .env = "TABLESTONE_CERT", .kind = Kind::kString,
       .help = "HTTPS on the listening port: PEM certificate (with --key) or PKCS#12 .pfx (with --pwd).",
       .set = [](Config& c, const Value& v) { c.cert = Str(v); },
       .show = [](const Config& c) { return c.cert; }});
  add({.path = "listen.key", .env = "TABLESTONE_KEY", .kind = Kind::kString,
       .help = "PEM private key of --cert.",
       .set = [](Config& c, const Value& v) { c.key = Str(v); },
       .show = [](const Config& c) { return c.key; }});
  add({.path = "listen.pwd", .env = "TABLESTONE_PWD", .kind = Kind::kString,
       .help = "Password of the PKCS#12 --cert (or of an encrypted PEM --key).",
       .set = [](Config& c, const Value& v) { c.pwd = Str(v); },
       .show = [](const Config& c) { return c.pwd.empty() ? std::string() : std::string("(set)"); }});
  add({.path = "listen.port", .env = "TABLESTONE_PORT", .kind = Kind::kUint,
       .help = "TCP port; 0 picks a free port (logged at startup).", .min = 0, .max = 65535,
       .set = [](Config& c, const Value& v) { c.port = static_cast<uint16_t>(Uint(v)); },
       .show = [](const Config& c) { return std::to_string(c.port); }});
  add({.path = "storage.location", .env = "TABLESTONE_LOCATION", .kind = Kind::kString,
       .help = "Data directory (created if missing; locked while the server runs).",
       .check = CheckNonEmpty,
       .set = [](Config& c, const Value& v) { c.location = Str(v); },
       .show = [](const Config& c) { return c.location; }});
  add({.path = "storage.inMemory", .env = "TABLESTONE_IN_MEMORY", .kind = Kind::kBool,
       .help = "Keep all data in memory; nothing touches the disk and everything is lost on exit.",
       .set = [](Config& c, const Value& v) { c.in_memory = Bool(v); },
       .show = [](const Config& c) { return ShowBool(c.in_memory); }});
  add({.path = "storage.durability", .env = "TABLESTONE_DURABILITY", .kind = Kind::kChoice,
       .help = "default: a write is acknowledged once in the write-ahead log (survives a process crash); "
               "fsync: also fsynced (survives power loss, slower).",
       .choices = "default|fsync",
       .set = [](Config& c, const Value& v) { c.durability = Str(v); },
       .show = [](const Config& c) { return c.durability; }});
  add({.path = "storage.blockCacheMB", .env = "TABLESTONE_BLOCK_CACHE_MB", .kind = Kind::kUint,
       .help = "Memory (MiB) for the database's blocks as read from disk: the index and filter blocks "
               "that every point read consults first, and recently read data blocks.",
       .min = 0, .max = 1ull << 20,
       .set = [](Config& c, const Value& v) { c.block_cache_mb = Uint(v); },
       .show = [](const Config& c) { return std::to_string(c.block_cache_mb); }});
  add({.path = "storage.scanCacheMB", .env = "TABLESTONE_SCAN_CACHE_MB", .kind = Kind::kUint,
       .help = "Memory (MiB) for columnar copies of recently scanned partitions, which makes repeated "
               "filtered queries much faster; 0 turns the cache off.",
       .min = 0, .max = 1ull << 20,
       .set = [](Config& c, const Value& v) { c.scan_cache_mb = Uint(v); },
       .show = [](const Config& c) { return std::to_string(c.scan_cache_mb); }});
  add({.path = "storage.entityCacheMB", .env = "TABLESTONE_ENTITY_CACHE_MB", .kind = Kind::kUint,
       .help = "Memory (MiB) for recently read entities, which makes repeated point reads and updates of "
               "the same entities faster; 0 turns the cache off.",
       .min = 0, .max = 1ull << 20,
       .set = [](Config& c, const Value& v) { c.entity_cache_mb = Uint(v); },
       .show = [](const Config& c) { return std::to_string(c.entity_cache_mb); }});
  add({.path = "storage.writeThreads", .env = "TABLESTONE_WRITE_THREADS", .kind = Kind::kUint,
       .help = "Threads that run writes, batches and log syncs; 0 = one per core.",
       .min = 0, .max = 256,
       .set = [](Config& c, const Value& v) { c.write_threads = Uint(v); },
       .show = [](const Config& c) { return std::to_string(c.write_threads); }});
  add({.path = "storage.scanThreads", .env = "TABLESTONE_SCAN_THREADS", .kind = Kind::kUint,
       .help = "Threads that run queries and table deletes (at a lower CPU priority); 0 = one per core.",
       .min = 0, .max = 256,
       .set = [](Config& c, const Value& v) { c.scan_threads = Uint(v); },
       .show = [](const Config& c) { return std::to_string(c.scan_threads); }});
  add({.path = "storage.groupCommit", .env = "TABLESTONE_GROUP_COMMIT", .kind = Kind::kChoice,
       .help = "engine: the engine writes the log once per group of requests (faster); rocksdb: every write "
               "writes the log itself and RocksDB groups concurrent writers. For measurements.",
       .choices = "engine|rocksdb",
       .set = [](Config& c, const Value& v) { c.group_commit = Str(v); },
       .show = [](const Config& c) { return c.group_commit; }});
  add({.path = "storage.scanNice", .env = "TABLESTONE_SCAN_NICE", .kind = Kind::kUint,
       .help = "How far query threads give way to point requests while both want the same core, as a "
               "thread at this nice value would to one at 0; they keep the default priority against other "
               "processes. 0 = not at all.",
       .min = 0, .max = 19,
       .set = [](Config& c, const Value& v) { c.scan_nice = Uint(v); },
       .show = [](const Config& c) { return std::to_string(c.scan_nice); }});
  add({.path = "storage.scanBurstUs", .env = "TABLESTONE_SCAN_BURST_US", .kind = Kind::kUint,
       .help = "CPU time (microseconds) a query thread runs before it offers its core to other threads, so "
               "point requests on a busy machine wait about that long behind a scan; 0 = never.",
       .min = 0, .max = 1'000'000,
       .set = [](Config& c, const Value& v) { c.scan_burst_us = Uint(v); },
       .show = [](const Config& c) { return std::to_string(c.scan_burst_us); }});
  add({.path = "limits.queuedRequests", .env = "TABLESTONE_QUEUED_REQUESTS", .kind = Kind::kUint,
       .help = "Requests waiting for the write or the query threads (each) beyond which new ones are "
               "answered 503 ServerBusy.",
       .min = 1, .max = 1ull << 24,
       .set = [](Config& c, const Value& v) { c.queue_limit = Uint(v); },
       .show = [](const Config& c) { return std::to_string(c.queue_limit); }});
  add({.path = "limits.maxBodyBytes", .env = "TABLESTONE_MAX_BODY_BYTES", .kind = Kind::kUint,
       .help = "Largest request body; beyond it 413 RequestBodyTooLarge and the connection closes.",
       .min = 1024, .max = 1ull << 30,
       .set = [](Config& c, const Value& v) { c.max_body_bytes = Uint(v); },
       .show = [](const Config& c) { return std::to_string(c.max_body_bytes); }});
  add({.path = "limits.maxHeaderBytes", .env = "TABLESTONE_MAX_HEADER_BYTES", .kind = Kind::kUint,
       .help = "Largest request line + headers; beyond it 431 and the connection closes.",
       .min = 1024, .max = 1ull << 20,
       .set = [](Config& c, const Value& v) { c.max_header_bytes = Uint(v); },
       .show = [](const Config& c) { return std::to_string(c.max_header_bytes); }});
  add({.path = "limits.maxConnections", .env = "TABLESTONE_MAX_CONNECTIONS", .kind = Kind::kUint,
       .help = "Live connections above which new ones are closed at once.", .min = 1, .max = 1'000'000,
       .set = [](Config& c, const Value& v) { c.max_connections = Uint(v); },
       .show = [](const Config& c) { return std::to_string(c.max_connections); }});
  add({.path = "limits.maxConnectionsPerAddress", .env = "TABLESTONE_MAX_CONNECTIONS_PER_ADDRESS", .kind = Kind::kUint,
       .help = "Live connections from one client address above which its new ones are closed at once (0 = no cap).",
       .min = 0, .max = 1'000'000,
       .set = [](Config& c, const Value& v) { c.max_connections_per_address = Uint(v); },
       .show = [](const Config& c) { return std::to_string(c.max_connections_per_address); }});
  add({.path = "timeouts.firstByteMs", .env = "TABLESTONE_FIRST_BYTE_TIMEOUT_MS", .kind = Kind::kUint,
       .help = "How long a new connection may wait before the first byte of its first request.",
       .min = 1, .max = kDay,
       .set = [](Config& c, const Value& v) { c.first_byte_timeout_ms = Uint(v); },
       .show = [](const Config& c) { return std::to_string(c.first_byte_timeout_ms); }});
  add({.path = "timeouts.handshakeMs", .env = "TABLESTONE_HANDSHAKE_TIMEOUT_MS", .kind = Kind::kUint,
       .help = "HTTPS: how long a new connection may take to complete its TLS handshake.",
       .min = 1, .max = kDay,
       .set = [](Config& c, const Value& v) { c.handshake_timeout_ms = Uint(v); },
       .show = [](const Config& c) { return std::to_string(c.handshake_timeout_ms); }});
  add({.path = "timeouts.idleMs", .env = "TABLESTONE_IDLE_TIMEOUT_MS", .kind = Kind::kUint,
       .help = "How long a keep-alive connection may wait for its next request.", .min = 1, .max = kDay,
       .set = [](Config& c, const Value& v) { c.idle_timeout_ms = Uint(v); },
       .show = [](const Config& c) { return std::to_string(c.idle_timeout_ms); }});
  add({.path = "timeouts.readMs", .env = "TABLESTONE_READ_TIMEOUT_MS", .kind = Kind::kUint,
       .help = "Deadline for receiving a whole request once it started (and for writing a response).",
       .min = 1, .max = kDay,
       .set = [](Config& c, const Value& v) { c.read_timeout_ms = Uint(v); },
       .show = [](const Config& c) { return std::to_string(c.read_timeout_ms); }});
  add({.path = "timeouts.drainMs", .env = "TABLESTONE_DRAIN_TIMEOUT_MS", .kind = Kind::kUint,
       .help = "On stop, how long requests in flight may take before connections are force-closed.",
       .min = 0, .max = kDay,
       .set = [](Config& c, const Value& v) { c.drain_timeout_ms = Uint(v); },
       .show = [](const Config& c) { return std::to_string(c.drain_timeout_ms); }});
  add({.path = "timeouts.queryPageMs", .env = "TABLESTONE_QUERY_PAGE_MS", .kind = Kind::kUint,
       .help = "Time budget of one query page; a longer scan returns a continuation token early.",
       .min = 1, .max = kDay,
       .set = [](Config& c, const Value& v) { c.query_page_ms = Uint(v); },
       .show = [](const Config& c) { return std::to_string(c.query_page_ms); }});
  add({.path = "threads", .env = "TABLESTONE_THREADS", .kind = Kind::kUint,
       .help = "I/O threads serving requests; 0 = one fewer than the cores (at least 1), leaving one to the clients.", .min = 0, .max = 1024,
       .set = [](Config& c, const Value& v) { c.threads = Uint(v); },
       .show = [](const Config& c) { return std::to_string(c.threads); }});
  add({.path = "logging.level", .env = "TABLESTONE_LOG_LEVEL", .kind = Kind::kChoice,
       .help = "Level of the console log (not the access log).",
       .choices = "trace|debug|info|warn|error|critical|off",
       .set = [](Config& c, const Value& v) { c.logging.level = Str(v); },
       .show = [](const Config& c) { return c.logging.level; }});
  add({.path = "logging.format", .env = "TABLESTONE_LOG_FORMAT", .kind = Kind::kChoice,
       .help = "Console log format: text lines or one JSON object per line.", .choices = "text|json",
       .set = [](Config& c, const Value& v) { c.logging.format = Str(v); },
       .show = [](const Config& c) { return c.logging.format; }});
  add({.path = "logging.accessLog", .env = "TABLESTONE_ACCESS_LOG", .kind = Kind::kBool,
       .help = "One line per request (address, method, target, status, bytes, latency).",
       .set = [](Config& c, const Value& v) { c.logging.access_log = Bool(v); },
       .show = [](const Config& c) { return ShowBool(c.logging.access_log); }});
  add({.path = "logging.debugFile", .env = "TABLESTONE_DEBUG_FILE", .kind = Kind::kString,
       .help = "Also write every logger at debug level to this file; empty = off.",
       .set = [](Config& c, const Value& v) { c.logging.debug_file = Str(v); },
       .show = [](const Config& c) { return c.logging.debug_file; }});
  add({.path = "logging.trace", .env = "TABLESTONE_TRACE", .kind = Kind::kString,
       .help = "Request trace: one JSON line per request appended to this file; empty = off "
               "(docs/observability.md).",
       .set = [](Config& c, const Value& v) { c.logging.trace = Str(v); },
       .show = [](const Config& c) { return c.logging.trace; }});
  add({.path = "logging.traceBodies", .env = "TABLESTONE_TRACE_BODIES", .kind = Kind::kBool,
       .help = "The request trace also carries headers and bodies (capped at 64 KiB; keys and SAS signatures "
               "redacted).",
       .set = [](Config& c, const Value& v) { c.logging.trace_bodies = Bool(v); },
       .show = [](const Config& c) { return ShowBool(c.logging.trace_bodies); }});
  add({.path = "api.oauth", .env = "TABLESTONE_OAUTH", .kind = Kind::kChoice,
       .help = "basic: accept OAuth bearer tokens over HTTPS after claim checks only (no signature check), as "
               "Azurite --oauth basic; off: refuse them.",
       .choices = "off|basic",
       .set = [](Config& c, const Value& v) { c.oauth = Str(v); },
       .show = [](const Config& c) { return c.oauth; }});
  add({.path = "api.loose", .env = "TABLESTONE_LOOSE", .kind = Kind::kBool,
       .help = "Accept unsupported headers and query parameters leniently (as Azurite --loose).",
       .set = [](Config& c, const Value& v) { c.loose = Bool(v); },
       .show = [](const Config& c) { return ShowBool(c.loose); }});
  add({.path = "api.skipApiVersionCheck", .env = "TABLESTONE_SKIP_API_VERSION_CHECK", .kind = Kind::kBool,
       .help = "Accept any x-ms-version.",
       .set = [](Config& c, const Value& v) { c.skip_api_version_check = Bool(v); },
       .show = [](const Config& c) { return ShowBool(c.skip_api_version_check); }});
  add({.path = "api.disableProductStyleUrl", .env = "TABLESTONE_DISABLE_PRODUCT_STYLE_URL", .kind = Kind::kBool,
       .help = "Never take the account from the Host name; path-style URLs only.",
       .set = [](Config& c, const Value& v) { c.disable_product_style_url = Bool(v); },
       .show = [](const Config& c) { return ShowBool(c.disable_product_style_url); }});
  add({.path = "api.allowAnonymous", .env = "TABLESTONE_ALLOW_ANONYMOUS", .kind = Kind::kBool,
       .help = "Accept unsigned requests (development only).",
       .set = [](Config& c, const Value& v) { c.allow_anonymous = Bool(v); },
       .show = [](const Config& c) { return ShowBool(c.allow_anonymous); }});
  add({.path = "api.adminApi", .env = "TABLESTONE_ADMIN_API", .kind = Kind::kBool,
       .help = "Answer the admin routes /_tablestone/snapshot, /reset and /trace (docs/admin-api.md).",
       .set = [](Config& c, const Value& v) { c.admin_api = Bool(v); },
       .show = [](const Config& c) { return ShowBool(c.admin_api); }});
  add({.path = "api.adminKey", .env = "TABLESTONE_ADMIN_KEY", .kind = Kind::kString,
       .help = "Base64 key of the admin credential: signs admin routes as 'tablestone-admin' "
               "(docs/admin-api.md); prefer the environment variable to the flag.",
       .set = [](Config& c, const Value& v) { c.admin_key = Str(v); },
       .show = [](const Config& c) { return c.admin_key.empty() ? std::string() : std::string("(set)"); }});
  add({.path = "api.adminAccount", .env = "TABLESTONE_ADMIN_ACCOUNT", .kind = Kind::kString,
       .help = "Configured account whose keys may run server-wide admin operations (docs/admin-api.md); "
               "with neither this nor --adminKey, only a single configured account is admin.",
       .set = [](Config& c, const Value& v) { c.admin_account = Str(v); },
       .show = [](const Config& c) { return c.admin_account; }});
  add({.path = "api.snapshotDir", .env = "TABLESTONE_SNAPSHOT_DIR", .kind = Kind::kString,
       .help = "Directory of the snapshots POST /_tablestone/snapshot?to=NAME creates; default "
               "<location>.snapshots. Never inside the data directory.",
       .set = [](Config& c, const Value& v) { c.snapshot_dir = Str(v); },
       .show = [](const Config& c) { return c.snapshot_dir; }});
  add({.path = "api.traceDir", .env = "TABLESTONE_TRACE_DIR", .kind = Kind::kString,
       .help = "Directory of the trace files POST /_tablestone/trace may open by name; default "
               "<location>.traces. Never inside the data directory.",
       .set = [](Config& c, const Value& v) { c.trace_dir = Str(v); },
       .show = [](const Config& c) { return c.trace_dir; }});
  add({.path = "api.allowedHosts", .env = "TABLESTONE_ALLOWED_HOSTS", .kind = Kind::kString,
       .help = "Comma-separated host names the UI and admin routes answer to, besides localhost and IP "
               "literals (DNS-rebinding guard, docs/admin-api.md).",
       .set = [](Config& c, const Value& v) { c.allowed_hosts = Str(v); },
       .show = [](const Config& c) { return c.allowed_hosts; }});
  add({.path = "api.ui", .env = "TABLESTONE_UI", .kind = Kind::kBool,
       .help = "Serve the data browser at /_tablestone/ui/ (docs/ui.md).",
       .set = [](Config& c, const Value& v) { c.ui = Bool(v); },
       .show = [](const Config& c) { return ShowBool(c.ui); }});
  add({.path = "faults.file", .env = "TABLESTONE_FAULTS", .kind = Kind::kString,
       .help = "JSON file of fault rules loaded at startup (docs/testing-with-faults.md); empty = none.",
       .set = [](Config& c, const Value& v) { c.faults_file = Str(v); },
       .show = [](const Config& c) { return c.faults_file; }});
  add({.path = "faults.seed", .env = "TABLESTONE_FAULT_SEED", .kind = Kind::kUint,
       .help = "Seed of the fault rules' and realistic mode's random draws (same seed, same faults).",
       .set = [](Config& c, const Value& v) { c.fault_seed = Uint(v); },
       .show = [](const Config& c) { return std::to_string(c.fault_seed); }});
  add({.path = "faults.realistic", .env = "TABLESTONE_REALISTIC", .kind = Kind::kBool,
       .help = "Realistic mode: short and empty query pages, TableBeingDeleted after Delete Table.",
       .set = [](Config& c, const Value& v) { c.realistic = Bool(v); },
       .show = [](const Config& c) { return ShowBool(c.realistic); }});
  add({.path = "faults.tableBeingDeletedMs", .env = "TABLESTONE_TABLE_BEING_DELETED_MS", .kind = Kind::kUint,
       .help = "Realistic mode: how long a deleted table's name answers 409 TableBeingDeleted.",
       .set = [](Config& c, const Value& v) { c.table_being_deleted_ms = Uint(v); },
       .show = [](const Config& c) { return std::to_string(c.table_being_deleted_ms); }});
  add({.path = "faults.latencyMedianMs", .env = "TABLESTONE_REALISTIC_LATENCY_MS", .kind = Kind::kUint,
       .help = "Realistic mode: median of the added per-request latency (log-normal); 0 = none.",
       .set = [](Config& c, const Value& v) { c.realistic_latency_ms = Uint(v); },
       .show = [](const Config& c) { return std::to_string(c.realistic_latency_ms); }});
  add({.path = "api.flavor", .env = "TABLESTONE_FLAVOR", .kind = Kind::kChoice,
       .help = "The service the main listener imitates: storage (Azure Table storage) or cosmos (Azure Cosmos DB "
               "for Table: unsorted query results, 255-byte RowKeys, 2 MB batches, no CORS; docs/cosmos-mode.md).",
       .choices = "storage|cosmos",
       .set = [](Config& c, const Value& v) { c.flavor = Str(v); },
       .show = [](const Config& c) { return c.flavor; }});
  add({.path = "cosmos.port", .env = "TABLESTONE_COSMOS_PORT", .kind = Kind::kUint,
       .help = "Also listen on this port as Azure Cosmos DB for Table, as the Cosmos DB emulator's Table endpoint "
               "does (it uses 8902); 0 = no such listener (docs/cosmos-mode.md).",
       .min = 0, .max = 65535,
       .set = [](Config& c, const Value& v) { c.cosmos_port = static_cast<uint16_t>(Uint(v)); },
       .show = [](const Config& c) { return std::to_string(c.cosmos_port); }});
  add({.path = "cosmos.host", .env = "TABLESTONE_COSMOS_HOST", .kind = Kind::kString,
       .help = "Address of the Cosmos listener; empty = the main listener's.",
       .check = [](std::string* value, std::string* why) { return value->empty() || CheckHost(value, why); },
       .set = [](Config& c, const Value& v) { c.cosmos_host = Str(v); },
       .show = [](const Config& c) { return c.cosmos_host; }});
  add({.path = "cosmos.accounts", .env = "TABLESTONE_COSMOS_ACCOUNTS", .kind = Kind::kString,
       .help = "Accounts of the Cosmos listener, name:key1[:key2];... (default: the emulator's account localhost "
               "with its published key); a path naming none of them addresses the first.",
       .check = [](std::string* value, std::string* why) {
         std::vector<api::AccountKeys> accounts;
         if (value->empty()) return true;  // the emulator's account
         if (!ParseAccountsEnv(*value, &accounts, why)) return false;
         if (accounts.empty()) *why = "at least one account is required";
         return !accounts.empty();
       },
       .set = [](Config& c, const Value& v) { c.cosmos_accounts = Str(v); },
       .show = [](const Config& c) { return c.cosmos_accounts.empty() ? std::string() : std::string("(set)"); }});
  add({.path = "cosmos.shuffle", .env = "TABLESTONE_COSMOS_SHUFFLE", .kind = Kind::kChoice,
       .help = "Cosmos flavour: query results in a deterministic non-key order seeded by --faultSeed (on), or in "
               "key order (off).",
       .choices = "on|off",
       .set = [](Config& c, const Value& v) { c.cosmos_shuffle = Str(v) == "on"; },
       .show = [](const Config& c) { return std::string(c.cosmos_shuffle ? "on" : "off"); }});
  add({.path = "cosmos.ruPerSecond", .env = "TABLESTONE_COSMOS_RU_PER_SECOND", .kind = Kind::kUint,
       .help = "Cosmos flavour: request units per second per table; a request to a table over its budget is "
               "answered 429 with x-ms-retry-after-ms, which the SDKs wait for and retry. 0 = no budget.",
       .min = 0, .max = 1'000'000'000,
       .set = [](Config& c, const Value& v) { c.cosmos_ru_per_second = Uint(v); },
       .show = [](const Config& c) { return std::to_string(c.cosmos_ru_per_second); }});
  add({.path = "storage.seed", .env = "TABLESTONE_SEED", .kind = Kind::kString,
       .help = "Export file, or directory of them, loaded at startup before the port opens; empty = none.",
       .set = [](Config& c, const Value& v) { c.seed = Str(v); },
       .show = [](const Config& c) { return c.seed; }});
  return s;
}

bool CheckString(const Setting& setting, std::string text, Value* value, std::string* why) {
  if (setting.kind == Kind::kChoice) {
    std::string lowered = model::ToAsciiLower(text);
    std::string_view rest = setting.choices;
    while (!rest.empty()) {
      size_t bar = rest.find('|');
      std::string_view choice = rest.substr(0, bar);
      if (lowered == choice) {
        *value = std::string(choice);
        return true;
      }
      rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 1);
    }
    *why = "must be one of " + DescribeChoices(setting.choices);
    return false;
  }
  if (setting.check != nullptr && !setting.check(&text, why)) return false;
  *value = std::move(text);
  return true;
}

std::string RangeMessage(const Setting& setting) {
  if (setting.max == UINT64_MAX) return "must be an integer >= " + std::to_string(setting.min);
  return "must be an integer between " + std::to_string(setting.min) + " and " + std::to_string(setting.max);
}

}  // namespace

const std::vector<Setting>& Settings() {
  static const std::vector<Setting> kSettings = BuildSettings();
  return kSettings;
}

const Setting* FindSettingByPath(std::string_view path) {
  for (const auto& s : Settings()) {
    if (s.path == path) return &s;
  }
  return nullptr;
}

const Setting* FindSettingByEnv(std::string_view env) {
  for (const auto& s : Settings()) {
    if (s.env == env) return &s;
  }
  return nullptr;
}

std::string DescribeChoices(std::string_view choices) {
  std::vector<std::string> parts;
  std::string_view rest = choices;
  while (!rest.empty()) {
    size_t bar = rest.find('|');
    parts.emplace_back(rest.substr(0, bar));
    rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 1);
  }
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += i + 1 == parts.size() ? " or " : ", ";
    out += "'" + parts[i] + "'";
  }
  return out;
}

bool ParseText(const Setting& setting, std::string_view text, Value* value, std::string* why) {
  switch (setting.kind) {
    case Kind::kString:
    case Kind::kChoice:
      return CheckString(setting, std::string(text), value, why);
    case Kind::kBool: {
      std::string lowered = model::ToAsciiLower(text);
      if (lowered == "true" || lowered == "1" || lowered == "yes" || lowered == "on") {
        *value = true;
        return true;
      }
      if (lowered == "false" || lowered == "0" || lowered == "no" || lowered == "off") {
        *value = false;
        return true;
      }
      *why = "must be true or false";
      return false;
    }
    case Kind::kUint: {
      uint64_t n = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
      if (text.empty() || ec != std::errc() || end != text.data() + text.size() || n < setting.min ||
          n > setting.max) {
        *why = RangeMessage(setting);
        return false;
      }
      *value = n;
      return true;
    }
  }
  return false;
}

bool ParseJson(const Setting& setting, const nlohmann::json& json, Value* value, std::string* why) {
  switch (setting.kind) {
    case Kind::kString:
    case Kind::kChoice:
      if (!json.is_string()) {
        *why = setting.kind == Kind::kChoice ? "must be one of " + DescribeChoices(setting.choices)
                                             : std::string("must be a string");
        return false;
      }
      return CheckString(setting, json.get<std::string>(), value, why);
    case Kind::kBool:
      if (!json.is_boolean()) {
        *why = "must be true or false";
        return false;
      }
      *value = json.get<bool>();
      return true;
    case Kind::kUint: {
      if (!json.is_number_integer() || (json.is_number_integer() && !json.is_number_unsigned() &&
                                        json.get<int64_t>() < 0)) {
        *why = RangeMessage(setting);
        return false;
      }
      uint64_t n = json.get<uint64_t>();
      if (n < setting.min || n > setting.max) {
        *why = RangeMessage(setting);
        return false;
      }
      *value = n;
      return true;
    }
  }
  return false;
}

bool ValidateAccounts(const std::vector<api::AccountKeys>& accounts, std::string* why) {
  if (accounts.empty()) {
    *why = "at least one account is required";
    return false;
  }
  std::set<std::string> seen;
  for (const auto& account : accounts) {
    // Azure account names: 3-24 lower-case letters and digits.
    const auto& name = account.name;
    bool name_ok = name.size() >= 3 && name.size() <= 24 &&
                   std::all_of(name.begin(), name.end(), [](char c) {
                     return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
                   });
    if (!name_ok) {
      *why = "account name '" + name + "' must be 3-24 lower-case letters and digits";
      return false;
    }
    if (!seen.insert(name).second) {
      *why = "account '" + name + "' is listed twice";
      return false;
    }
    if (account.keys.empty() || account.keys.size() > 2) {
      *why = "account '" + name + "' needs one or two keys";
      return false;
    }
    for (const auto& key : account.keys) {
      auto decoded = protocol::Base64Decode(key);
      if (key.empty() || !decoded || decoded->empty()) {
        *why = "a key of account '" + name + "' is not valid base64";
        return false;
      }
    }
  }
  return true;
}

namespace {

bool ApplyAccountsJson(const nlohmann::json& json, Config* config, std::string* why) {
  if (!json.is_array()) {
    *why = "must be a list of {\"name\": ..., \"keys\": [...]}";
    return false;
  }
  std::vector<api::AccountKeys> accounts;
  for (size_t i = 0; i < json.size(); ++i) {
    const auto& item = json[i];
    std::string where = "[" + std::to_string(i) + "]";
    if (!item.is_object()) {
      *why = where + " must be an object with \"name\" and \"keys\"";
      return false;
    }
    api::AccountKeys account;
    for (const auto& [key, value] : item.items()) {
      if (key == "name") {
        if (!value.is_string()) {
          *why = where + ".name must be a string";
          return false;
        }
        account.name = value.get<std::string>();
      } else if (key == "keys") {
        if (!value.is_array() || !std::all_of(value.begin(), value.end(), [](auto& k) { return k.is_string(); })) {
          *why = where + ".keys must be a list of base64 strings";
          return false;
        }
        for (const auto& k : value) account.keys.push_back(k.get<std::string>());
      } else {
        *why = where + ": unknown key '" + key + "'";
        return false;
      }
    }
    accounts.push_back(std::move(account));
  }
  if (!ValidateAccounts(accounts, why)) return false;
  config->accounts = std::move(accounts);
  return true;
}

// Walks one JSON object; `prefix` is "" at the top or "listen." etc.
bool ApplyObject(const nlohmann::json& object, const std::string& prefix, Config* config, std::string* error) {
  for (const auto& [key, value] : object.items()) {
    std::string path = prefix + key;
    if (prefix.empty() && key == "$schema") continue;  // editors' schema pointer
    if (prefix.empty() && key == "accounts") {
      std::string why;
      if (!ApplyAccountsJson(value, config, &why)) {
        *error = "'accounts' " + why;
        return false;
      }
      continue;
    }
    if (const Setting* setting = FindSettingByPath(path)) {
      Value parsed;
      std::string why;
      if (!ParseJson(*setting, value, &parsed, &why)) {
        *error = "'" + path + "' " + why;
        return false;
      }
      setting->set(*config, parsed);
      continue;
    }
    // A group ("listen", "limits", ...) is known when a setting lives in it.
    bool is_group = std::any_of(Settings().begin(), Settings().end(), [&](const Setting& s) {
      return s.path.size() > path.size() + 1 && s.path.compare(0, path.size() + 1, path + ".") == 0;
    });
    if (is_group) {
      if (!value.is_object()) {
        *error = "'" + path + "' must be an object";
        return false;
      }
      if (!ApplyObject(value, path + ".", config, error)) return false;
      continue;
    }
    *error = "unknown key '" + path + "'";
    return false;
  }
  return true;
}

}  // namespace

bool ApplyConfigFile(const std::string& path, Config* config, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "cannot read config file '" + path + "'";
    return false;
  }
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json json;
  try {
    // The one place exceptions are caught: nlohmann's parse error carries the
    // byte position, which the non-throwing parse does not report.
    json = nlohmann::json::parse(text.str(), nullptr, true, /*ignore_comments=*/true);
  } catch (const nlohmann::json::parse_error& e) {
    *error = "config file '" + path + "' is not valid JSON: " + e.what();
    return false;
  }
  if (!json.is_object()) {
    *error = "config file '" + path + "' must contain a JSON object";
    return false;
  }
  std::string why;
  if (!ApplyObject(json, "", config, &why)) {
    *error = "config file '" + path + "': " + why;
    return false;
  }
  config->config_file = path;
  return true;
}

}  // namespace internal

bool ParseAccountsEnv(const std::string& text, std::vector<api::AccountKeys>* accounts, std::string* error) {
  std::vector<api::AccountKeys> parsed;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(';', start);
    if (end == std::string::npos) end = text.size();
    std::string entry = text.substr(start, end - start);
    start = end + 1;
    // Trim spaces around an entry (multi-line docker-compose values).
    entry.erase(0, entry.find_first_not_of(" \t\r\n"));
    entry.erase(entry.find_last_not_of(" \t\r\n") + 1);
    if (entry.empty()) continue;
    api::AccountKeys account;
    size_t pos = 0;
    size_t colon = entry.find(':');
    if (colon == std::string::npos) {
      *error = "entry '" + entry + "' must be name:key1[:key2]";
      return false;
    }
    account.name = entry.substr(0, colon);
    pos = colon + 1;
    while (pos <= entry.size()) {
      size_t next = entry.find(':', pos);
      if (next == std::string::npos) next = entry.size();
      account.keys.push_back(entry.substr(pos, next - pos));
      pos = next + 1;
    }
    parsed.push_back(std::move(account));
  }
  if (!internal::ValidateAccounts(parsed, error)) return false;
  *accounts = std::move(parsed);
  return true;
}

Environment ProcessEnvironment() {
  Environment env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    size_t eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view name = entry.substr(0, eq);
    if (name.rfind("TABLESTONE_", 0) == 0 || name == "AZURITE_ACCOUNTS" || name == "AZURITE_SKIP_API_VERSION_CHECK") {
      env.emplace(std::string(name), std::string(entry.substr(eq + 1)));
    }
  }
  return env;
}

http::HttpOptions Config::ToHttpOptions() const {
  http::HttpOptions o;
  o.address = host;
  o.port = port;
  o.threads = static_cast<int>(threads);
  o.header_limit = static_cast<size_t>(max_header_bytes);
  o.body_limit = max_body_bytes;
  o.idle_timeout = std::chrono::milliseconds(idle_timeout_ms);
  o.read_timeout = std::chrono::milliseconds(read_timeout_ms);
  o.drain_timeout = std::chrono::milliseconds(drain_timeout_ms);
  o.max_connections = static_cast<size_t>(max_connections);
  o.max_connections_per_address = static_cast<size_t>(max_connections_per_address);
  o.first_byte_timeout = std::chrono::milliseconds(first_byte_timeout_ms);
  o.handshake_timeout = std::chrono::milliseconds(handshake_timeout_ms);
  o.access_log = logging.access_log;
  return o;
}

namespace {

std::string Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

// True when `inner`, made absolute and normalised (symbolic links of its
// existing part resolved), is `outer` or below it.
bool IsSameOrInside(const std::string& inner, const std::string& outer) {
  namespace fs = std::filesystem;
  std::error_code ec;
  auto normal = [&ec](const std::string& p) {
    std::string s = fs::weakly_canonical(fs::absolute(p, ec), ec).lexically_normal().string();
    while (s.size() > 1 && s.back() == '/') s.pop_back();
    return s;
  };
  const std::string in = normal(inner);
  const std::string out = normal(outer);
  return in == out || (in.size() > out.size() && in.starts_with(out) && (out == "/" || in[out.size()] == '/'));
}

// The absolute directory a snapshot or trace directory setting names:
// `value`, or "<location><suffix>" when empty (none in memory).
std::string EffectiveDir(const std::string& value, const Config& config, const char* suffix) {
  namespace fs = std::filesystem;
  std::string dir = value;
  if (dir.empty()) {
    if (config.in_memory) return {};
    dir = config.location;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    dir += suffix;
  }
  std::error_code ec;
  dir = fs::absolute(dir, ec).lexically_normal().string();
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

}  // namespace

bool ResolveAdminSettings(Config* config, std::string* error) {
  namespace fs = std::filesystem;
  if (!config->admin_key.empty()) {
    auto raw = protocol::Base64Decode(config->admin_key);
    if (!raw || raw->size() < 16) {
      *error = "api.adminKey must be base64 of at least 16 bytes";
      return false;
    }
  }
  if (!config->admin_account.empty() &&
      std::none_of(config->accounts.begin(), config->accounts.end(),
                   [&](const api::AccountKeys& a) { return a.name == config->admin_account; })) {
    *error = "api.adminAccount '" + config->admin_account + "' is not a configured account";
    return false;
  }
  std::error_code ec;
  const std::string location = fs::absolute(config->location, ec).lexically_normal().string();
  const std::string snapshots = EffectiveDir(config->snapshot_dir, *config, ".snapshots");
  const std::string traces = EffectiveDir(config->trace_dir, *config, ".traces");
  for (const auto& [dir, setting] : {std::pair{snapshots, "api.snapshotDir"}, std::pair{traces, "api.traceDir"}}) {
    if (!dir.empty() && !config->in_memory && IsSameOrInside(dir, location)) {
      *error = std::string(setting) + " '" + dir + "' must be outside the data directory '" + location + "'";
      return false;
    }
  }
  if (!snapshots.empty() && snapshots == traces) {
    *error = "api.snapshotDir and api.traceDir must be different directories";
    return false;
  }
  if (!config->logging.trace.empty() && !config->in_memory && IsSameOrInside(config->logging.trace, location)) {
    *error = "logging.trace must be outside the data directory '" + location + "'";
    return false;
  }
  return true;
}

bool CheckCosmosSettings(const Config& config, std::string* error) {
  if (config.cosmos_port == 0) return true;
  if (config.cosmos_port == config.port) {
    *error = "cosmos.port " + std::to_string(config.cosmos_port) + " is the main listener's port too";
    return false;
  }
  for (const api::AccountKeys& cosmos : config.CosmosAccounts()) {
    for (const api::AccountKeys& main : config.accounts) {
      if (main.name == cosmos.name) {
        *error = "account '" + cosmos.name + "' is both a cosmos.accounts account and a main listener account; "
                 "an account belongs to one listener";
        return false;
      }
    }
  }
  return true;
}

api::ApiOptions Config::ToApiOptions() const {
  api::ApiOptions o;
  o.accounts = accounts;
  o.loose = loose;
  o.oauth_basic = oauth == "basic";
  o.skip_api_version_check = skip_api_version_check;
  o.disable_product_style_url = disable_product_style_url;
  o.allow_anonymous = allow_anonymous;
  o.admin_api = admin_api;
  o.admin_key = admin_key;
  o.admin_account = admin_account;
  o.snapshot_dir = in_memory ? std::string() : EffectiveDir(snapshot_dir, *this, ".snapshots");
  o.trace_dir = EffectiveDir(trace_dir, *this, ".traces");
  for (size_t start = 0; start <= allowed_hosts.size();) {
    size_t comma = allowed_hosts.find(',', start);
    if (comma == std::string::npos) comma = allowed_hosts.size();
    std::string name = model::ToAsciiLower(Trim(std::string_view(allowed_hosts).substr(start, comma - start)));
    if (!name.empty()) o.allowed_hosts.push_back(std::move(name));
    start = comma + 1;
  }
  o.ui = ui;
  // The published key may open the page without asking only where no one but
  // this machine can reach it: a loopback listener serving that key.
  const bool loopback = host == "localhost" || api::IsLoopbackAddress(host);
  for (const api::AccountKeys& account : accounts) {
    if (account.name != kDevAccountName) continue;
    for (const std::string& key : account.keys) o.ui_dev_key = o.ui_dev_key || (loopback && key == kDevAccountKey);
  }
  o.query_time_budget = std::chrono::milliseconds(query_page_ms);
  o.scan_cpu_burst = std::chrono::microseconds(scan_burst_us);
  o.scan_nice = static_cast<int>(scan_nice);
  o.facts.version = TABLESTONE_VERSION;
  o.facts.data_dir = location;
  o.facts.in_memory = in_memory;
  o.facts.durability = durability;
  if (flavor == "cosmos") o.flavor = protocol::CosmosPolicy(cosmos_shuffle, fault_seed);
  o.ru_per_second = cosmos_ru_per_second;
  return o;
}

std::vector<api::AccountKeys> Config::CosmosAccounts() const {
  std::vector<api::AccountKeys> accounts;
  std::string ignored;
  (void)ParseAccountsEnv(cosmos_accounts.empty() ? std::string(kCosmosEmulatorAccounts) : cosmos_accounts, &accounts,
                         &ignored);
  return accounts;
}

api::ApiOptions Config::ToCosmosApiOptions() const {
  api::ApiOptions o = ToApiOptions();
  o.accounts = CosmosAccounts();
  o.flavor = protocol::CosmosPolicy(cosmos_shuffle, fault_seed);
  if (!o.accounts.empty()) o.default_account = o.accounts.front().name;
  o.admin_api = false;
  o.admin_key.clear();
  o.admin_account.clear();
  o.ui = false;
  o.ui_dev_key = false;
  return o;
}

int TableFilesKeptOpen(uint64_t fd_limit) {
  return static_cast<int>(std::clamp<uint64_t>(fd_limit / 2, 256, 16384));
}

storage::EngineOptions Config::ToEngineOptions() const {
  storage::EngineOptions o;
  o.path = location;
  o.in_memory = in_memory;
  o.sync_writes = durability == "fsync";
  o.block_cache_bytes = static_cast<size_t>(block_cache_mb) << 20;
  o.scan_cache_bytes = static_cast<size_t>(scan_cache_mb) << 20;
  // Partitions a load fills are cached once their writes pause this long, so
  // the first query after the load is a cached one: longer than the gap
  // between a loader's batches, shorter than a client's turn to query.
  o.warm_after_write = std::chrono::milliseconds(20);
  o.entity_cache_bytes = static_cast<size_t>(entity_cache_mb) << 20;
  // The admission's builds run at the long lane's priority (ToExecutorOptions):
  // the default one.
  o.scan_build_nice = 0;
  o.group_commit = group_commit == "rocksdb" ? storage::EngineOptions::GroupCommit::kRocksDb
                                             : storage::EngineOptions::GroupCommit::kEngine;
  return o;
}

exec::ExecutorOptions Config::ToExecutorOptions() const {
  exec::ExecutorOptions o;
  o.short_threads = static_cast<int>(write_threads);
  o.long_threads = static_cast<int>(scan_threads);
  o.max_queued = static_cast<size_t>(queue_limit);
  // The query threads keep the I/O threads' priority: they give way to point
  // requests by ApiOptions::scan_nice instead (docs/architecture.md, "Threads
  // and priorities").
  o.long_nice = 0;
  return o;
}

}  // namespace tablestone::app
