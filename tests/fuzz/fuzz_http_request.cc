// libFuzzer target: whole raw HTTP requests through the API request handler.
//
// The bytes are parsed with the same Beast parser and limits the server's
// session uses (server/http/session.cc); each complete request (up to four
// pipelined ones) goes to the handler built by MakeApiHandler on an in-memory
// engine, and parse failures go to RenderTransportError, exactly as a session
// would route them. Anonymous access is allowed so the fuzzer reaches the
// operations instead of stopping at authentication (the auth parsers have their
// own target). Beyond "no crash": no response is a 500 (an internal error is a
// bug for any input when the disk is fine) and every status is a valid code.
//
// The engine keeps state across inputs (tables and entities created by one
// input are visible to the next); it is recreated every kRunsPerEngine inputs
// so memory stays bounded.
#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string_view>

#include "server/api/api_handler.h"
#include "server/api/api_options.h"
#include "server/exec/work_executor.h"
#include "server/http/handler.h"
#include "storage/engine.h"

namespace {

namespace bhttp = boost::beast::http;
using tablestone::http::Request;
using tablestone::http::RequestContext;
using tablestone::http::Response;
using tablestone::http::TransportError;

constexpr int kRunsPerEngine = 2000;
constexpr size_t kHeaderLimit = 64 * 1024;
constexpr size_t kBodyLimit = 5 * 1024 * 1024;

struct World {
  std::unique_ptr<tablestone::storage::Engine> engine;
  std::unique_ptr<tablestone::exec::WorkExecutor> executor;
  std::unique_ptr<tablestone::http::RequestHandler> handler;
  int runs = 0;
};

void Reset(World* w) {
  if (w->executor) w->executor->Shutdown();  // before the handler (api_handler.h)
  w->handler.reset();
  w->executor.reset();
  w->engine.reset();
  tablestone::storage::EngineOptions eo;
  eo.path = "/fuzz-http-request";
  eo.in_memory = true;
  eo.block_cache_bytes = 1 << 20;
  eo.write_buffer_bytes = 1 << 20;
  auto opened = tablestone::storage::Engine::Open(eo);
  if (!opened.ok()) {
    fprintf(stderr, "cannot open in-memory engine\n");
    abort();
  }
  w->engine = std::move(opened).value();
  (void)w->engine->CreateTable("devstoreaccount1", "fuzztable");
  tablestone::api::ApiOptions ao;
  ao.accounts = {{"devstoreaccount1",
                  {"Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="}}};
  ao.allow_anonymous = true;
  tablestone::exec::ExecutorOptions lanes;
  lanes.short_threads = 1;
  lanes.long_threads = 1;
  w->executor = std::make_unique<tablestone::exec::WorkExecutor>(lanes);
  w->handler = tablestone::api::MakeApiHandler(*w->engine, *w->executor, ao);
  w->runs = 0;
}

void CheckResponse(const Response& res) {
  unsigned status = res.result_int();
  if (status < 100 || status > 599) abort();
  if (status == 500) {
    fprintf(stderr, "500 response:\n%s\n", res.body().c_str());
    abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Never destroyed: closing RocksDB from a static destructor at exit would race
  // RocksDB's own static teardown. Still reachable, so LeakSanitizer does not report it.
  static World* world = new World;
  if (!world->handler || ++world->runs > kRunsPerEngine) Reset(world);

  std::string_view rest(reinterpret_cast<const char*>(data), size);
  RequestContext ctx;
  ctx.remote_ip = "127.0.0.1";
  ctx.start = std::chrono::steady_clock::now();
  for (int i = 0; i < 4 && !rest.empty(); ++i) {
    bhttp::request_parser<bhttp::string_body> parser;
    parser.eager(true);
    parser.header_limit(kHeaderLimit);
    parser.body_limit(kBodyLimit);
    boost::beast::error_code ec;
    size_t used = 0;
    while (!ec && !parser.is_done() && used < rest.size()) {
      size_t n = parser.put(boost::asio::buffer(rest.data() + used, rest.size() - used), ec);
      if (n == 0 && !ec) break;  // needs more bytes than there are
      used += n;
    }
    if (ec == bhttp::error::need_more) ec = {};
    if (!ec && !parser.is_done()) {
      // The client stopped sending. A session would time out; here end-of-stream
      // turns a partial message into a parse error, which exercises the
      // transport-error path with a half-filled request.
      parser.put_eof(ec);
      if (!ec && !parser.is_done()) return 0;
    }
    Response res;
    if (ec) {
      TransportError te = TransportError::kBadRequest;
      if (ec == bhttp::error::body_limit) te = TransportError::kBodyTooLarge;
      if (ec == bhttp::error::header_limit) te = TransportError::kHeaderTooLarge;
      Request partial = parser.release();
      world->handler->RenderTransportError(te, partial, res);
      unsigned status = res.result_int();
      if (status < 400 || status > 499) abort();  // transport errors are client errors
      return 0;
    }
    Request req = parser.release();
    res = tablestone::http::HandleAndWait(*world->handler, req, ctx);
    CheckResponse(res);
    rest.remove_prefix(std::min(used, rest.size()));
  }
  return 0;
}
