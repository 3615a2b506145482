// api/sibling_ports.h: the Blob and Queue ports of `azurite` mode answer the
// readiness listings with empty, well-formed lists and refuse everything else
// with the Blob/Queue services' XML error naming what to use instead.
#include "server/api/sibling_ports.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace tablestone::api {
namespace {

class SiblingPortTest : public ::testing::Test {
 protected:
  SiblingPortHandler Make(SiblingService service) {
    return SiblingPortHandler(SiblingPortOptions{service, {"devstoreaccount1", "second"}, "http://0.0.0.0:10002"});
  }

  static http::Request Req(std::string_view method, std::string_view target, std::string body = {}) {
    http::Request req;
    req.method_string(boost::beast::string_view(method.data(), method.size()));
    req.target(boost::beast::string_view(target.data(), target.size()));
    req.version(11);
    req.set("Host", "127.0.0.1:10000");
    req.set("x-ms-version", "2025-01-05");
    req.set("x-ms-client-request-id", "client-1");
    req.body() = std::move(body);
    req.prepare_payload();
    return req;
  }

  static http::Response Send(SiblingPortHandler& handler, const http::Request& req) {
    http::RequestContext ctx;
    ctx.remote_ip = "127.0.0.1";
    return http::HandleAndWait(handler, req, ctx);
  }

  static std::string H(const http::Response& r, std::string_view name) {
    auto it = r.find(boost::beast::string_view(name.data(), name.size()));
    return it == r.end() ? std::string() : std::string(it->value());
  }
};

TEST_F(SiblingPortTest, ListContainersIsAnEmptyEnumerationWithThePageSizeEchoed) {
  SiblingPortHandler blob = Make(SiblingService::kBlob);
  // Aspire's health check: one page of at most one container.
  http::Response r = Send(blob, Req("GET", "/devstoreaccount1?comp=list&maxresults=1"));
  EXPECT_EQ(r.result_int(), 200);
  EXPECT_EQ(H(r, "Content-Type"), "application/xml");
  EXPECT_EQ(H(r, "x-ms-version"), "2025-01-05");
  EXPECT_EQ(H(r, "x-ms-client-request-id"), "client-1");
  EXPECT_FALSE(H(r, "x-ms-request-id").empty());
  EXPECT_EQ(r.body(),
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><EnumerationResults "
            "ServiceEndpoint=\"http://127.0.0.1:10000/devstoreaccount1/\"><MaxResults>1</MaxResults>"
            "<Containers /><NextMarker /></EnumerationResults>");
}

TEST_F(SiblingPortTest, ListQueuesIsAnEmptyEnumerationAndEchoesPrefixAndMarkerEscaped) {
  SiblingPortHandler queue = Make(SiblingService::kQueue);
  http::Response r = Send(queue, Req("GET", "/second/?comp=list&prefix=%3Cq%26&marker=m1"));
  EXPECT_EQ(r.result_int(), 200);
  EXPECT_EQ(r.body(),
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><EnumerationResults "
            "ServiceEndpoint=\"http://127.0.0.1:10000/second/\"><Prefix>&lt;q&amp;</Prefix><Marker>m1</Marker>"
            "<Queues /><NextMarker /></EnumerationResults>");
  // Host-style URL (account in the host name): no account in the path.
  EXPECT_EQ(Send(queue, Req("GET", "/?comp=list")).result_int(), 200);
}

TEST_F(SiblingPortTest, EveryOtherRequestIsRefusedWithTheServicesXmlErrorNamingWhatToUse) {
  SiblingPortHandler blob = Make(SiblingService::kBlob);
  for (auto [method, target] : std::vector<std::pair<std::string, std::string>>{
           {"PUT", "/devstoreaccount1/c1?restype=container"},
           {"GET", "/devstoreaccount1/c1?restype=container&comp=list"},  // List Blobs
           {"GET", "/devstoreaccount1?restype=container&comp=list"},     // the root container's blobs
           {"GET", "/devstoreaccount1/c1/b1"},
           {"GET", "/devstoreaccount1?restype=service&comp=properties"},
           {"HEAD", "/devstoreaccount1?comp=list"},
           {"DELETE", "/devstoreaccount1?comp=list"},
           {"GET", "/devstoreaccount1?comp=lis%"},  // malformed escape
           {"OPTIONS", "/devstoreaccount1/c1"}}) {
    http::Response r = Send(blob, Req(method, target));
    EXPECT_EQ(r.result_int(), 501) << method << " " << target;
    EXPECT_EQ(H(r, "x-ms-error-code"), "NotImplemented");
    EXPECT_EQ(H(r, "Content-Type"), "application/xml");
    const std::string& body = r.body();
    EXPECT_EQ(body.rfind("<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>NotImplemented</Code><Message>", 0),
              0u)
        << body;
    EXPECT_NE(body.find("Azure Table service only (at http://0.0.0.0:10002)"), std::string::npos) << body;
    EXPECT_NE(body.find("mcr.microsoft.com/azure-storage/azurite"), std::string::npos) << body;
    EXPECT_NE(body.find("RequestId:"), std::string::npos) << body;
  }
  EXPECT_NE(Make(SiblingService::kQueue).RefusalMessage().find("This Queue port answers List Queues"),
            std::string::npos);
}

TEST_F(SiblingPortTest, AnUploadIsRefusedBeforeItsBodyIsRead) {
  SiblingPortHandler blob = Make(SiblingService::kBlob);
  http::Request header = Req("PUT", "/devstoreaccount1/c1/big");
  header.set("Content-Length", "1073741824");
  http::Response refusal;
  http::RequestContext ctx;
  EXPECT_FALSE(blob.AdmitHeaders(header, ctx, refusal));
  EXPECT_EQ(refusal.result_int(), 501);
  EXPECT_EQ(H(refusal, "x-ms-error-code"), "NotImplemented");
  http::Response unused;
  EXPECT_TRUE(blob.AdmitHeaders(Req("GET", "/devstoreaccount1?comp=list"), ctx, unused));
}

TEST_F(SiblingPortTest, UnknownAccountsAndBadPageSizesAreErrorsNotLists) {
  SiblingPortHandler blob = Make(SiblingService::kBlob);
  http::Response r = Send(blob, Req("GET", "/nosuchaccount?comp=list"));
  EXPECT_EQ(r.result_int(), 404);
  EXPECT_EQ(H(r, "x-ms-error-code"), "ResourceNotFound");
  for (const char* bad : {"0", "-1", "x", "1x", "99999999999999999999999"}) {
    http::Response page = Send(blob, Req("GET", std::string("/devstoreaccount1?comp=list&maxresults=") + bad));
    EXPECT_EQ(page.result_int(), 400) << bad;
    EXPECT_EQ(H(page, "x-ms-error-code"), "OutOfRangeQueryParameterValue") << bad;
  }
  // A hostile Host header is escaped into the attribute, not injected.
  http::Request req = Req("GET", "/devstoreaccount1?comp=list");
  req.set("Host", "a\"><x/>");
  http::Response escaped = Send(blob, req);
  EXPECT_NE(escaped.body().find("ServiceEndpoint=\"http://a&quot;&gt;&lt;x/&gt;/devstoreaccount1/\""),
            std::string::npos)
      << escaped.body();
}

TEST_F(SiblingPortTest, TransportErrorsUseTheSameXmlShape) {
  SiblingPortHandler queue = Make(SiblingService::kQueue);
  http::Response r;
  queue.RenderTransportError(http::TransportError::kBodyTooLarge, Req("GET", "/"), r);
  EXPECT_EQ(r.result_int(), 413);
  EXPECT_EQ(H(r, "x-ms-error-code"), "RequestBodyTooLarge");
  EXPECT_NE(r.body().find("<Error><Code>RequestBodyTooLarge</Code>"), std::string::npos);
}

}  // namespace
}  // namespace tablestone::api
