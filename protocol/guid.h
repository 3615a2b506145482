// Random GUIDs: request ids (x-ms-request-id, error texts) and $batch
// response boundaries. The one generator of the repository.
#pragma once

#include <string>

namespace tablestone::protocol {

// A fresh RFC 4122 version-4 GUID in lower case,
// "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx". Not for secrets: SplitMix64 over
// one process-wide counter seeded from std::random_device (distinct values on
// every thread, no per-thread state). Thread-safe.
std::string NewGuid();

}  // namespace tablestone::protocol
