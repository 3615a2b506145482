// The per-request cost of authenticating a Shared Key request
// (api::Authenticator::Authenticate: parse the header, build the string to
// sign, one HMAC-SHA256, compare), and of the HMAC alone. Meant for callgrind,
// whose instruction counts repeat on a busy machine (docs/benchmarks.md,
// "Request signing"):
//   valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*AuthenticateLoop*' \
//     build-test/bench/auth_bench 20000 auth     (then Ir / 20000)
// Without valgrind it prints the wall-clock time per call.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>

#include "protocol/auth/hmac.h"
#include "server/api/authenticator.h"
#include "storage/model/datetime.h"

namespace {

using tablestone::api::AuthRequest;
using tablestone::api::Authenticator;

constexpr char kDevKey[] = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

// A $batch as azure-data-tables signs it (tests/unit/server/api/authenticator_test.cc, PythonBatch).
const std::map<std::string, std::string, std::less<>> kHeaders = {
    {"content-type", "multipart/mixed; boundary=batch_70227991-ce88-4ef7-be5a-5b9917e3b2f8"},
    {"x-ms-date", "Sat, 21 Nov 2026 10:59:00 GMT"},
    {"date", "Sat, 21 Nov 2026 10:59:00 GMT"},
    {"authorization", "SharedKey devstoreaccount1:jiwSyz2WulJhku2nO0v270v6fbLZ7pyyvc6IKItDuHE="}};

[[gnu::noinline]] int AuthenticateLoop(const Authenticator& auth, const AuthRequest& request, int n) {
  int ok = 0;
  for (int i = 0; i < n; ++i) ok += auth.Authenticate(request).ok() ? 1 : 0;
  return ok;
}

[[gnu::noinline]] size_t HmacLoop(const tablestone::protocol::auth::HmacKey& key, std::string_view message, int n) {
  size_t bytes = 0;
  for (int i = 0; i < n; ++i) bytes += key.SignBase64(message).size();
  return bytes;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 100000;
  const std::string_view what = argc > 2 ? argv[2] : "auth";
  Authenticator auth({{"devstoreaccount1", {kDevKey}}}, /*allow_anonymous=*/false,
                     [](std::string_view, std::string_view, std::string_view) { return std::nullopt; });
  const int64_t now = *tablestone::model::ParseRfc1123("Sat, 21 Nov 2026 11:00:00 GMT");
  auth.SetClockForTesting([now] { return now; });
  AuthRequest request;
  request.method = "POST";
  request.raw_path = "/devstoreaccount1/$batch";
  static const tablestone::protocol::QueryParams kNoQuery;
  request.query = &kNoQuery;
  request.header = [](std::string_view name) -> std::string_view {
    auto it = kHeaders.find(name);
    return it == kHeaders.end() ? std::string_view() : std::string_view(it->second);
  };
  request.remote_ip = "127.0.0.1";
  request.account = "devstoreaccount1";
  request.operation = tablestone::protocol::Operation::kBatch;

  const auto start = std::chrono::steady_clock::now();
  long done = 0;
  if (what == "hmac") {
    const tablestone::protocol::auth::HmacKey key(std::string(64, 'k'));
    // The length of a typical Shared Key string to sign.
    done = static_cast<long>(HmacLoop(key, std::string(180, 'm'), n) / 44);
  } else {
    done = AuthenticateLoop(auth, request, n);
  }
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  if (done != n) {
    std::fprintf(stderr, "auth_bench: %ld of %d calls succeeded\n", done, n);
    return 1;
  }
  std::printf("%s: %d calls, %.0f ns per call\n", std::string(what).c_str(), n, ns / n);
  return 0;
}
