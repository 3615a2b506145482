// Micro benchmark for Filter::Matches (not a CTest test): prints evaluations
// per second for a few typical filters over in-memory entities.
//
//   ninja -C <build> filter_eval_bench && <build>/tests/unit/protocol/filter_eval_bench [seconds]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "protocol/filter/filter.h"

namespace {

using tablestone::model::EdmValue;
using tablestone::model::Entity;
using tablestone::protocol::filter::Filter;

std::vector<Entity> MakeEntities(int count) {
  std::vector<Entity> rows;
  rows.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    Entity e;
    e.partition_key = "partition" + std::to_string(i % 16);
    e.row_key = "row" + std::to_string(i);
    e.timestamp = 637000000000000000LL + i;
    e.properties.push_back({"Name", EdmValue::String("name" + std::to_string(i % 100))});
    e.properties.push_back({"Category", EdmValue::String(i % 2 ? "books" : "games")});
    e.properties.push_back({"Count", EdmValue::Int32(i % 1000)});
    e.properties.push_back({"Total", EdmValue::Int64(i * 1000LL)});
    e.properties.push_back({"Price", EdmValue::Double(i * 0.25)});
    e.properties.push_back({"Active", EdmValue::Boolean(i % 3 == 0)});
    e.properties.push_back({"Created", EdmValue::DateTime(630000000000000000LL + i * 10000000LL)});
    e.properties.push_back({"Description", EdmValue::String(std::string(64, 'd'))});
    rows.push_back(std::move(e));
  }
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = argc > 1 ? std::atof(argv[1]) : 0.5;
  const std::vector<Entity> rows = MakeEntities(10000);
  const char* filters[] = {
      "Count eq 5",
      "Price gt 100.5",
      "Description eq 'x'",
      "PartitionKey eq 'partition3' and RowKey ge 'row5'",
      "Category eq 'books' and Count gt 500 and Active",
      "Name eq 'name1' or Name eq 'name2' or Name eq 'name3' or Total ge 9000000L",
      "not (Created lt datetime'2000-01-01T00:00:00Z') and Missing ne 1",
  };
  for (const char* text : filters) {
    auto parsed = Filter::Parse(text);
    if (!parsed.ok()) {
      std::fprintf(stderr, "parse failed: %s: %s\n", text, parsed.error().message.c_str());
      return 1;
    }
    const Filter& f = **parsed;
    size_t evaluations = 0, matches = 0;
    auto start = std::chrono::steady_clock::now();
    std::chrono::duration<double> elapsed{};
    do {
      for (const Entity& e : rows) matches += f.Matches(e) ? 1 : 0;
      evaluations += rows.size();
      elapsed = std::chrono::steady_clock::now() - start;
    } while (elapsed.count() < seconds);
    std::printf("%-80s %8.2f M evals/s  (%zu of %zu matched)\n", text, evaluations / elapsed.count() / 1e6,
                matches, evaluations);
  }
  return 0;
}
