// libFuzzer target: the OData $filter engine (protocol/filter).
//
// Parses arbitrary text as a $filter; when it parses, evaluates it against a
// few entities covering every Edm type, against a table name, and runs the
// key-range planner. Properties checked beyond "no crash": a plan never claims
// "match nothing" for a filter that matches one of the sample entities, since
// the planner may only ever over-approximate (filter.h contract).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "protocol/filter/filter.h"
#include "storage/model/edm.h"
#include "storage/model/entity.h"
#include "storage/model/scan_spec.h"

namespace {

using tablestone::model::EdmValue;
using tablestone::model::Entity;

std::vector<Entity> SampleEntities() {
  std::vector<Entity> out;
  Entity a;
  a.partition_key = "pk";
  a.row_key = "rk";
  a.timestamp = 638000000000000000;
  a.properties = {{"Name", EdmValue::String("alice")},
                  {"Age", EdmValue::Int32(42)},
                  {"Big", EdmValue::Int64(1ll << 40)},
                  {"Score", EdmValue::Double(3.5)},
                  {"Ok", EdmValue::Boolean(true)},
                  {"When", EdmValue::DateTime(637000000000000000)},
                  {"Id", EdmValue::Guid("c9da6455-213d-42c9-9a79-3e9149a57833")},
                  {"Blob", EdmValue::Binary(std::string("\x00\x01\xff", 3))}};
  out.push_back(a);
  Entity b;
  b.partition_key = "p\xc3\xa9";  // non-ASCII key
  b.row_key = "";
  b.properties = {{"Name", EdmValue::String("")}, {"Age", EdmValue::Int32(-1)}};
  out.push_back(b);
  out.push_back(Entity{});
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<Entity> kEntities = SampleEntities();
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = tablestone::protocol::filter::Filter::Parse(text);
  if (!parsed.ok()) {
    // Every rejection must be a client error or 501, never a 5xx crash-class code.
    int status = parsed.error().http_status;
    if (status != 400 && status != 501) abort();
    return 0;
  }
  const auto& filter = *parsed.value();
  bool any_match = false;
  for (const Entity& e : kEntities) any_match |= filter.Matches(e);
  (void)filter.MatchesTableName("mytable");
  (void)filter.MatchesTableName("");
  tablestone::model::ScanSpec spec;
  filter.PlanScan(&spec);
  if (any_match && spec.match_nothing) abort();  // the planner dropped a real match
  return 0;
}
