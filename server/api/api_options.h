// Options for the API layer, filled by server/app from config/env/flags.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "protocol/flavor.h"

namespace tablestone::faults {
class FaultSet;
}

namespace tablestone::api {

struct AccountKeys {
  std::string name;               // e.g. "devstoreaccount1"
  std::vector<std::string> keys;  // base64 account keys; either one signs requests
};

// Facts about the running server that the detailed health answer reports
// (GET /_tablestone/health?detail=1).
struct ServerFacts {
  std::string version;     // e.g. "0.1.0"
  std::string data_dir;    // the data directory ("" when in memory)
  std::string durability;  // "default" or "fsync"
  bool in_memory = false;
};

struct ApiOptions {
  std::vector<AccountKeys> accounts;      // default: devstoreaccount1 with the well-known key
  bool oauth_basic = false;               // --oauth basic: unsigned-checked bearer tokens over HTTPS
  bool loose = false;                     // -L/--loose: Azurite's leniencies (Authenticator::SetLoose)
  bool skip_api_version_check = false;    // --skipApiVersionCheck
  bool disable_product_style_url = false; // --disableProductStyleUrl: path-style only
  bool allow_anonymous = false;           // accept unsigned requests (off by default; tests only)
  bool admin_api = false;                 // --adminApi: answer /_tablestone/snapshot and /reset (admin_routes.h)
  // The admin credential (docs/admin-api.md, "Who may do what"): a base64
  // key (--adminKey) and/or an account whose keys are admin (--adminAccount).
  // With neither and a single account, that account is the admin.
  std::string admin_key;
  std::string admin_account;
  // Where snapshots and run-time trace files go (absolute; empty = refused).
  // Never inside the data directory (server/app checks at start-up).
  std::string snapshot_dir;
  std::string trace_dir;
  // Host names (besides loopback names and IP literals) that the UI and the
  // admin routes answer to (--allowedHosts; DNS rebinding, admin_routes.h).
  std::vector<std::string> allowed_hosts;
  bool ui = true;                         // the data browser at /_tablestone/ui/ (ui_routes.h); --noUi turns it off
  // The page may use devstoreaccount1's published key without asking: set only
  // when that account has that key and the server listens on loopback only.
  bool ui_dev_key = false;
  std::chrono::milliseconds query_time_budget{5000};  // per query page (Learn: query-timeout-and-pagination)
  // How much of an I/O thread's CPU time (and ten times that of wall-clock
  // time) a query may take before the long lane takes it over
  // (dispatcher.h): long enough for a full 1,000-row page of small entities
  // to answer on the I/O thread, short enough that a long scan stalls that
  // thread once (SliceHints then sends its table's queries to the long lane
  // directly). Tests set 0
  // to hand every query over at its first clock check.
  std::chrono::microseconds inline_query_slice{3000};
  // A query on the long lane offers its core to other threads after this much
  // CPU time (ScanRun::cpu_burst), so point requests queued behind it on a
  // busy core wait about this long rather than a scheduler tick (4 ms at
  // HZ=250). 0 = never. The default is bench/async's choice.
  std::chrono::microseconds scan_cpu_burst{250};
  // While point requests are being answered and its core is contended, a
  // query on the long lane gives way to them after each burst as a thread at
  // this nice would to one at nice 0 (storage/thread_priority.h,
  // ScanGiveWay); it never lowers its own priority against other processes.
  int scan_nice = 4;
  ServerFacts facts;
  // The service this listener imitates (protocol/flavor.h): the main
  // listener's --flavor, or cosmos on the --cosmosPort listener.
  protocol::FlavorPolicy flavor = protocol::StoragePolicy();
  // A path whose first segment names no account of this listener addresses
  // this account with no account segment (the Cosmos DB emulator's
  // TableEndpoint=http://localhost:8902/); empty = every path names its account.
  std::string default_account;
  // Cosmos flavour: request units per second per table (faults::ThroughputBudget);
  // 0 = no budget. Ignored under the storage flavour.
  uint64_t ru_per_second = 0;
  // With a budget: Create Table at most this often per account and minute,
  // beyond it 429 as the budget answers (faults::ThroughputBudget::AdmitTableCreate);
  // 0 = no limit.
  uint64_t table_creates_per_minute = 5;
  // Fault rules and realistic mode (server/faults/fault_rules.h); null = none
  // can ever be added. Shared with the admin route that edits them.
  std::shared_ptr<faults::FaultSet> faults;
};

}  // namespace tablestone::api
