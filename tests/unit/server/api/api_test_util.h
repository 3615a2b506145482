// Drives the API handler in-process: builds Beast requests, runs them through
// MakeApiHandler over an in-memory Engine, and returns the response.
#pragma once

#include <gtest/gtest.h>

#include <deque>
#include <memory>
#include <set>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "server/api/api_handler.h"
#include "server/exec/work_executor.h"
#include "storage/engine.h"

namespace tablestone::api::testing {

constexpr const char* kAccount = "devstoreaccount1";
constexpr const char* kKey = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

// A request to devstoreaccount1 asking for nometadata JSON, with a
// Content-Type only when there is a body: what the dispatch tests send.
inline http::Request NoMetadataRequest(std::string_view method, std::string_view target, std::string body = {},
                                       std::string_view content_type = "application/json") {
  http::Request req;
  req.method_string(boost::beast::string_view(method.data(), method.size()));
  req.target(std::string("/") + kAccount + std::string(target));
  req.version(11);
  req.set("Host", "127.0.0.1:10002");
  req.set("x-ms-version", "2019-02-02");
  req.set("Accept", "application/json;odata=nometadata");
  if (!body.empty()) req.set("Content-Type", boost::beast::string_view(content_type.data(), content_type.size()));
  req.body() = std::move(body);
  req.prepare_payload();
  return req;
}

// The lanes of a test's handler: one thread each. Keep it after the handler
// it serves among the members, so that it is shut down (destroyed) before
// the handler is dropped (api_handler.h).
inline std::unique_ptr<exec::WorkExecutor> TestLanes(size_t max_queued = 4096) {
  exec::ExecutorOptions o;
  o.short_threads = 1;
  o.long_threads = 1;
  o.max_queued = max_queued;
  return std::make_unique<exec::WorkExecutor>(o);
}

class ApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    storage::EngineOptions eo;
    eo.in_memory = true;
    eo.path = "/tmp/tablestone-unit-api";
    auto engine = storage::Engine::Open(eo);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).value();
    ApiOptions options;
    options.accounts = {{kAccount, {kKey}}};
    options.allow_anonymous = true;
    handler_ = MakeApiHandler(*engine_, *executor_, options);
  }

  http::Response Send(std::string_view method, std::string_view target, std::string body = {},
                      std::vector<std::pair<std::string, std::string>> headers = {}) {
    http::Request req;
    req.method_string(boost::beast::string_view(method.data(), method.size()));
    std::string full = std::string("/") + kAccount + std::string(target);
    req.target(full);
    req.version(11);
    req.set("Host", "127.0.0.1:10002");
    req.set("x-ms-version", "2019-02-02");
    req.set("Accept", "application/json;odata=minimalmetadata");
    for (auto& [k, v] : headers) req.set(k, v);
    req.body() = std::move(body);
    req.prepare_payload();
    http::RequestContext ctx;
    ctx.remote_ip = "127.0.0.1";
    return http::HandleAndWait(*handler_, req, ctx);
  }

  static std::string H(const http::Response& r, std::string_view name) {
    auto it = r.find(boost::beast::string_view(name.data(), name.size()));
    return it == r.end() ? std::string() : std::string(it->value());
  }
  static nlohmann::json J(const http::Response& r) { return nlohmann::json::parse(r.body()); }
  static std::string ErrorCode(const http::Response& r) { return H(r, "x-ms-error-code"); }

  void CreateTable(const std::string& name) {
    auto r = Send("POST", "/Tables", "{\"TableName\":\"" + name + "\"}", {{"Content-Type", "application/json"}});
    ASSERT_EQ(r.result_int(), 201) << r.body();
  }
  http::Response Insert(const std::string& table, const std::string& body,
                        std::vector<std::pair<std::string, std::string>> headers = {}) {
    headers.emplace_back("Content-Type", "application/json");
    return Send("POST", "/" + table, body, std::move(headers));
  }

  // A connection for one asynchronous request (Handle with a Completion):
  // RequestInfo's contract (api_context.h) is that it outlives the
  // Completion, and the dispatcher writes the access log's note into it when
  // it answers. Declared before handler_, so they outlive it.
  const http::RequestContext& Connection() { return connections_.emplace_back(); }
  std::deque<http::RequestContext> connections_;
  std::unique_ptr<storage::Engine> engine_;
  std::unique_ptr<http::RequestHandler> handler_;
  std::unique_ptr<exec::WorkExecutor> executor_ = TestLanes();
};

}  // namespace tablestone::api::testing
