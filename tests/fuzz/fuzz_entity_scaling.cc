// libFuzzer target: entity bodies whose parse time grows faster than their
// size (issue 30, item 5: an Atom entry of 80k properties cost 16.7 s, a JSON
// body of 40k orphan annotations and 40k nulls 7-9 s).
//
// The input is a generator, not a body: its first byte picks the format (even:
// JSON, odd: Atom) and the rest is a fragment repeated to build one, each copy
// with every '$' replaced by its index (so that names can be unique). JSON:
// "{" + copies joined by "," + "}"; Atom: an entry whose m:properties hold
// the copies. The body of N copies and the body of 2N are parsed (the
// thread's CPU time, the best of three), and a ratio far above 2 is checked
// again at 4N: a parse that grows faster there too (4N against N above 9,
// 4N against 2N above 3, where linear gives 4 and 2) aborts. Bodies too fast to time (under 2 ms at 2N) pass: noise
// would dominate, and a superlinear cost shows at the sizes that matter.
#include <time.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "protocol/atom/atom_reader.h"
#include "protocol/odata_json.h"

namespace {

constexpr size_t kCopies = 3000;             // N
constexpr size_t kMaxBody = 1 << 20;         // bytes of the 2N body; fewer copies above it
constexpr double kMeasurableSeconds = 0.002;  // at 2N

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

constexpr std::string_view kAtomHead =
    "<?xml version=\"1.0\" encoding=\"utf-8\"?><entry xmlns=\"http://www.w3.org/2005/Atom\" "
    "xmlns:d=\"http://schemas.microsoft.com/ado/2007/08/dataservices\" "
    "xmlns:m=\"http://schemas.microsoft.com/ado/2007/08/dataservices/metadata\">"
    "<content type=\"application/xml\"><m:properties>";
constexpr std::string_view kAtomTail = "</m:properties></content></entry>";

std::string Build(bool atom, std::string_view fragment, size_t copies) {
  std::string body(atom ? kAtomHead : "{");
  for (size_t i = 0; i < copies; ++i) {
    if (!atom && i > 0) body += ',';
    const std::string index = std::to_string(i);
    for (char c : fragment) {
      if (c == '$') {
        body += index;
      } else {
        body += c;
      }
    }
  }
  body += atom ? kAtomTail : "}";
  return body;
}

double ParseSeconds(bool atom, const std::string& body) {
  double best = 1e9;
  for (int i = 0; i < 3; ++i) {
    const double start = ThreadCpuSeconds();
    if (atom) {
      (void)tablestone::protocol::atom::ParseEntityAtom(body);
    } else {
      (void)tablestone::protocol::ParseEntityJson(body);
    }
    best = std::min(best, ThreadCpuSeconds() - start);
  }
  return best;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const bool atom = (data[0] & 1) != 0;
  const std::string_view fragment(reinterpret_cast<const char*>(data + 1), size - 1);
  // A copy's size grows with the index's digits; bound the 2N body.
  const size_t per_copy = fragment.size() + 8;
  const size_t copies = std::min(kCopies, kMaxBody / (2 * per_copy));
  if (copies < 200) return 0;  // too few to tell a slope
  const double t1 = ParseSeconds(atom, Build(atom, fragment, copies));
  const double t2 = ParseSeconds(atom, Build(atom, fragment, 2 * copies));
  if (t2 < kMeasurableSeconds || t2 < 3.0 * std::max(t1, 1e-6)) return 0;
  // Far above 2: confirm at 4N before calling it superlinear.
  const double t4 = ParseSeconds(atom, Build(atom, fragment, 4 * copies));
  if (t4 > 9.0 * std::max(t1, 1e-6) && t4 > 3.0 * t2) {
    std::fprintf(stderr, "superlinear parse (%s): %zu copies %.4f s, %zu: %.4f s, %zu: %.4f s\n",
                 atom ? "atom" : "json", copies, t1, 2 * copies, t2, 4 * copies, t4);
    std::abort();
  }
  return 0;
}
