// Options for the API layer, filled by server/app from config/env/flags.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

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
  std::chrono::milliseconds query_time_budget{5000};  // per query page (Learn: query-timeout-and-pagination)
  ServerFacts facts;
};

}  // namespace tablestone::api
