// The table of settings (server/app/settings.h): every key of the config
// file with its environment variable, flag, kind, bounds, help text and the
// Config field it sets. config.cc reads the sources against it.
#include <arpa/inet.h>
#include <netdb.h>

#include <string>
#include <vector>

#include "server/app/config.h"
#include "server/app/settings.h"

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
  add({.path = "cosmos.tableCreatesPerMinute", .env = "TABLESTONE_COSMOS_TABLE_CREATES_PER_MINUTE",
       .kind = Kind::kUint,
       .help = "Cosmos flavour with a request-unit budget: Create Table at most this many times a minute per "
               "account, beyond it 429 with x-ms-retry-after-ms (the service throttles rapid table creation); "
               "0 = no limit.",
       .min = 0, .max = 1'000'000,
       .set = [](Config& c, const Value& v) { c.cosmos_table_creates_per_minute = Uint(v); },
       .show = [](const Config& c) { return std::to_string(c.cosmos_table_creates_per_minute); }});
  add({.path = "storage.seed", .env = "TABLESTONE_SEED", .kind = Kind::kString,
       .help = "Export file, or directory of them, loaded at startup before the port opens; empty = none.",
       .set = [](Config& c, const Value& v) { c.seed = Str(v); },
       .show = [](const Config& c) { return c.seed; }});
  return s;
}

}  // namespace

const std::vector<Setting>& Settings() {
  static const std::vector<Setting> kSettings = BuildSettings();
  return kSettings;
}

}  // namespace internal
}  // namespace tablestone::app
