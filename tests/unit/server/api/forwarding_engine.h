// The tests' name for server/api's ForwardingEngine: fakes derive from it and
// override what they fake.
#pragma once

#include "server/api/forwarding_engine.h"

namespace tablestone::api::testing {

using ForwardingEngine = api::ForwardingEngine;

}  // namespace tablestone::api::testing
