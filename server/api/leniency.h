// --loose (off by default): what Azurite accepts and the service refuses
// (docs/migrating-from-azurite.md). Each kind is logged once per process, at
// its first use, so a rig that depends on one learns it from the log.
#pragma once

namespace tablestone::api {

enum class Leniency {
  kNoDate,                      // a SharedKey request with neither Date nor x-ms-date
  kSasRepeatsPolicy,            // a service SAS repeating a field of its stored access policy
  kUpsertWithoutAdd,            // an upsert through a SAS granting 'u' without 'a'
  kSasOverFailedAuthorization,  // a valid SAS beside an Authorization header that fails
  kBatchContentType,            // a multipart $batch body sent with another Content-Type
  kSovereignAudience,           // a bearer token for a sovereign cloud's table endpoint
  kCount
};

// Logs "--loose: accepted <what> ..." at warn level the first time `kind` is
// used; later uses are silent. Thread-safe.
void WarnLeniency(Leniency kind);

}  // namespace tablestone::api
