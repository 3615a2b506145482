// The admin routes (docs/admin-api.md), outside the Azure namespace and off
// unless ApiOptions::admin_api is set:
//   POST /_tablestone/snapshot?to=DIR     RocksDB checkpoint of the data directory into DIR
//   POST /_tablestone/reset[?account=A]   delete every table of A (default: every configured account)
//   GET  /_tablestone/trace               the request trace's state (trace.h)
//   POST /_tablestone/trace               switch it: JSON body {"enabled":B,"file":PATH,"bodies":B}
//   GET /_tablestone/faults               the fault rules with their counts, and realistic mode
//   POST /_tablestone/faults              add rules (body: a rule, an array, or {"rules":[...]})
//   DELETE /_tablestone/faults?id=ID      remove one rule; without ?id= remove every rule
//   POST /_tablestone/faults/realistic    realistic mode on/off, for all or one account/table
// (the fault routes exist only when ApiOptions::faults is set; formats in
// docs/testing-with-faults.md)
// Authenticated with Shared Key by an account key (Learn: authorize-with-shared-key): the
// canonicalized resource is "/<account>/_tablestone/<op>"; resetting account A
// needs A's key, a snapshot, a reset of every account or the trace any
// configured key.
// The `_tablestone` segment cannot clash with an account name (lower-case
// letters and digits only).
#pragma once

#include <string_view>

#include "server/api/api_options.h"
#include "server/api/trace.h"
#include "server/http/handler.h"
#include "storage/engine.h"

namespace tablestone::api {

// True for a target under /_tablestone/ that these routes answer (not /_tablestone/health).
bool IsAdminTarget(std::string_view target);

// Answers one admin request; blocks on the disk (a lane's work, never an I/O thread's).
// `trace` may be null (the trace route then answers 404).
// JSON bodies: {"snapshot":DIR,"ms":N} / {"accounts":[..],"tablesDeleted":N,"ms":N} /
// {"enabled":B,"file":PATH|null,"bodies":B,"written":N,"dropped":N};
// errors {"error":CODE,"message":TEXT} with 400 (bad query or body), 403 (authentication),
// 404 (unknown route or account), 405 (not POST, or not GET/POST for the trace),
// 409 (snapshot target exists), 500 (also: trace file cannot be opened).
http::Response HandleAdmin(const http::Request& request, storage::Engine& engine, const ApiOptions& options,
                           TraceWriter* trace = nullptr);

}  // namespace tablestone::api
