// TableStore over the Table REST API: a synchronous Boost.Beast HTTP/1.1
// client on one keep-alive connection, plain or TLS (https://: OpenSSL through
// Beast's ssl_stream, the peer verified against the system's trust store and
// RemoteOptions::ca_files), signing each request with Shared Key
// (protocol/auth/shared_key.h) or appending the SAS token.
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <thread>

#include "protocol/auth/hmac.h"
#include "protocol/auth/admin_signature.h"
#include "protocol/auth/shared_key.h"
#include "protocol/odata_json.h"
#include "protocol/odata_writer.h"
#include "protocol/url.h"
#include "storage/model/datetime.h"
#include "tools/export_format.h"
#include "tools/table_store.h"

namespace tablestone::tools {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// The service version the client speaks (Learn: versioning-for-the-azure-storage-services);
// old enough for Azurite and every tablestone build, new enough for JSON.
constexpr std::string_view kApiVersion = "2019-02-02";
// Minimal metadata annotates every type JSON cannot carry (Int64, DateTime,
// Guid, Binary, non-finite doubles) and writes whole doubles as "6.0": enough
// to read every value exactly, at about half the bytes of full metadata.
constexpr std::string_view kAcceptJson = "application/json;odata=minimalmetadata";

struct Response {
  int status = 0;
  std::string body;
  http::fields headers;
};

using X509Ptr = std::unique_ptr<X509, decltype(&X509_free)>;

// A certificate file is read whole by OpenSSL: a regular file of at most
// 1 MiB (not a FIFO or /dev/zero, which would never end).
constexpr uintmax_t kMaxCertificateFileBytes = 1u << 20;

bool CheckCertificateFile(const std::string& path, const char* option, std::string* error) {
  std::error_code ec;
  const bool regular = std::filesystem::is_regular_file(path, ec);
  const uintmax_t size = regular ? std::filesystem::file_size(path, ec) : 0;
  if (ec || !regular || size > kMaxCertificateFileBytes) {
    *error = std::string(option) + " '" + path + "' is not a regular file of at most 1 MiB";
    return false;
  }
  return true;
}

// The certificate in `path`: the first of a PEM file, or the one of a
// PKCS#12 bundle opened with `password` (a server's --cert/--pwd).
X509Ptr ReadServerCertificate(const std::string& path, const std::string& password, std::string* error) {
  X509Ptr cert(nullptr, X509_free);
  if (!CheckCertificateFile(path, "--serverCert", error)) return cert;
  std::unique_ptr<std::FILE, decltype(&std::fclose)> file(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!file) {
    *error = "cannot read --serverCert '" + path + "'";
    return cert;
  }
  cert.reset(PEM_read_X509(file.get(), nullptr, nullptr, nullptr));
  if (cert) return cert;
  std::rewind(file.get());
  std::unique_ptr<PKCS12, decltype(&PKCS12_free)> bundle(d2i_PKCS12_fp(file.get(), nullptr), PKCS12_free);
  EVP_PKEY* key = nullptr;
  X509* leaf = nullptr;
  if (bundle && PKCS12_parse(bundle.get(), password.c_str(), &key, &leaf, nullptr) == 1) {
    EVP_PKEY_free(key);
    cert.reset(leaf);
  }
  if (!cert) {
    *error = "--serverCert '" + path + "' holds no PEM certificate (nor a PKCS#12 bundle this password opens)";
  }
  return cert;
}

// "HTTP 404 TableNotFound: The table specified does not exist." from an
// error body (JSON or XML); the status line alone when the body says nothing.
std::string DescribeError(const Response& r) {
  std::string code;
  std::string message;
  try {
    auto j = nlohmann::json::parse(r.body);
    const auto& e = j.at("odata.error");
    code = e.value("code", "");
    message = e.at("message").value("value", "");
  } catch (const std::exception&) {
    auto find = [&](std::string_view tag) {
      std::string open = "<" + std::string(tag) + ">", close = "</" + std::string(tag) + ">";
      size_t a = r.body.find(open), b = r.body.find(close);
      return a != std::string::npos && b != std::string::npos && b > a
                 ? r.body.substr(a + open.size(), b - a - open.size())
                 : std::string();
    };
    code = find("Code");
    message = find("Message");
  }
  size_t nl = message.find('\n');
  if (nl != std::string::npos) message.resize(nl);
  if (!message.empty() && message.back() == '\r') message.pop_back();
  std::string out = "HTTP " + std::to_string(r.status);
  if (!code.empty()) out += " " + code;
  if (!message.empty()) out += ": " + message;
  // The service's message names the Authorization header whatever the cause;
  // from a tool the cause is nearly always the connection string.
  if (r.status == 403 && code == "AuthenticationFailed") {
    out += " (the server knows no account of this AccountName, or not with this AccountKey: check both in the "
           "connection string)";
  }
  return out;
}

// Path segments from a table name: "/<name>()" and "/Tables('<name>')", the
// name percent-encoded (and its quotes doubled inside the quoted literal), so
// a name from a file or a server cannot add segments or a query.
std::string EntitiesPath(std::string_view table) { return "/" + protocol::PercentEncode(table) + "()"; }

std::string TablePath(std::string_view table) {
  std::string doubled;
  for (char c : table) {
    doubled += c;
    if (c == '\'') doubled += '\'';
  }
  return "/Tables('" + protocol::PercentEncode(doubled, "'") + "')";
}

bool IsRetryable(const Response& r) {
  if (r.status == 503) return true;
  if (r.status == 500) return r.body.find("OperationTimedOut") != std::string::npos;
  return false;
}

// Splits the objects of the "value" array of a feed: {"...":..,"value":[{..},{..}]}.
std::vector<std::string_view> FeedObjects(std::string_view body) {
  std::vector<std::string_view> out;
  int depth = 0;
  bool in_string = false;
  size_t start = 0;
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    switch (c) {
      case '"': in_string = true; break;
      case '{':
      case '[':
        if (c == '{' && depth == 2) start = i;
        ++depth;
        break;
      case '}':
      case ']':
        --depth;
        if (c == '}' && depth == 2) out.push_back(body.substr(start, i - start + 1));
        break;
      default: break;
    }
  }
  return out;
}

class RemoteStore final : public TableStore {
 public:
  RemoteStore(Connection c, RemoteOptions o) : conn_(std::move(c)), options_(o), rng_(std::random_device{}()) {
    if (!conn_.key.empty()) key_.emplace(conn_.key);
  }

  std::string AccountName() const override { return conn_.account; }

  bool ListTables(std::vector<std::string>* names, std::string* error) override {
    names->clear();
    std::string next;
    do {
      std::string query = next.empty() ? "" : "NextTableName=" + protocol::PercentEncode(next);
      Response r;
      if (!Call(http::verb::get, "/Tables", query, {}, {}, &r, error)) return false;
      if (r.status != 200) return Fail("listing tables: " + DescribeError(r), error);
      try {
        auto j = nlohmann::json::parse(r.body);
        for (const auto& t : j.at("value")) names->push_back(t.at("TableName").get<std::string>());
      } catch (const std::exception& e) {
        return Fail(std::string("listing tables: unexpected response: ") + e.what(), error);
      }
      auto it = r.headers.find("x-ms-continuation-NextTableName");
      next = it == r.headers.end() ? "" : std::string(it->value());
    } while (!next.empty());
    return true;
  }

  bool CreateTable(std::string_view name, bool* existed, std::string* error) override {
    std::string body;
    try {
      body = nlohmann::json{{"TableName", std::string(name)}}.dump();  // escaped; throws on invalid UTF-8
    } catch (const nlohmann::json::exception&) {
      return Fail("table name is not valid UTF-8", error);
    }
    Response r;
    if (!Call(http::verb::post, "/Tables", "", body, "application/json", &r, error)) return false;
    *existed = r.status == 409 && r.body.find("TableAlreadyExists") != std::string::npos;
    if (r.status == 201 || r.status == 204 || *existed) return true;
    return Fail("creating table '" + std::string(name) + "': " + DescribeError(r), error);
  }

  bool DeleteTable(std::string_view name, std::string* error) override {
    Response r;
    if (!Call(http::verb::delete_, TablePath(name), "", {}, {}, &r, error)) return false;
    if (r.status == 204 || r.status == 404) return true;
    return Fail("deleting table '" + std::string(name) + "': " + DescribeError(r), error);
  }

  bool TableExists(std::string_view name, bool* exists, std::string* error) override {
    Response r;
    if (!Call(http::verb::get, TablePath(name), "", {}, {}, &r, error)) return false;
    if (r.status == 200 || r.status == 404) {
      *exists = r.status == 200;
      return true;
    }
    return Fail("looking up table '" + std::string(name) + "': " + DescribeError(r), error);
  }

  bool ReadPage(std::string_view table, PageToken* token, std::vector<model::Entity>* out,
                std::string* error) override {
    out->clear();
    std::string query = "$top=1000";
    if (token->resume) {
      query += "&NextPartitionKey=" + protocol::PercentEncode(token->next_partition_key);
      if (!token->next_row_key.empty()) query += "&NextRowKey=" + protocol::PercentEncode(token->next_row_key);
    }
    Response r;
    if (!Call(http::verb::get, EntitiesPath(table), query, {}, {}, &r, error)) return false;
    if (r.status != 200) return Fail("reading table '" + std::string(table) + "': " + DescribeError(r), error);
    for (std::string_view object : FeedObjects(r.body)) {
      auto parsed = protocol::ParseEntityJson(object);
      if (!parsed.ok()) {
        return Fail("reading table '" + std::string(table) + "': an entity of the response does not parse: " +
                        parsed.error().message,
                    error);
      }
      out->push_back(std::move(parsed.value().entity));
    }
    auto pk = r.headers.find("x-ms-continuation-NextPartitionKey");
    auto rk = r.headers.find("x-ms-continuation-NextRowKey");
    token->next_partition_key = pk == r.headers.end() ? "" : std::string(pk->value());
    token->next_row_key = rk == r.headers.end() ? "" : std::string(rk->value());
    token->resume = pk != r.headers.end();
    token->done = !token->resume;
    return true;
  }

  bool CountEntities(std::string_view table, uint64_t* count, std::string* error) override {
    // $select=PartitionKey: the smallest page a Table endpoint returns; the
    // objects are counted, not parsed.
    *count = 0;
    std::string resume;
    for (;;) {
      Response r;
      if (!Call(http::verb::get, EntitiesPath(table), "$top=1000&$select=PartitionKey" + resume, {}, {},
                &r, error)) {
        return false;
      }
      if (r.status != 200) return Fail("counting table '" + std::string(table) + "': " + DescribeError(r), error);
      *count += FeedObjects(r.body).size();
      auto pk = r.headers.find("x-ms-continuation-NextPartitionKey");
      if (pk == r.headers.end()) return true;
      auto rk = r.headers.find("x-ms-continuation-NextRowKey");
      resume = "&NextPartitionKey=" + protocol::PercentEncode(std::string(pk->value()));
      if (rk != r.headers.end()) resume += "&NextRowKey=" + protocol::PercentEncode(std::string(rk->value()));
    }
  }

  bool WriteBatch(std::string_view table, WriteMode mode, std::span<const model::Entity> entities,
                  std::string* error) override {
    if (entities.empty()) return true;
    std::string batch = "batch_" + RandomHex();
    std::string changeset = "changeset_" + RandomHex();
    std::string root = (conn_.scheme + "://" + conn_.host + ":" + conn_.port + conn_.base_path + "/");
    std::string body;
    body.reserve(entities.size() * 512);
    body += "--" + batch + "\r\nContent-Type: multipart/mixed; boundary=" + changeset + "\r\n\r\n";
    std::string line;
    for (const model::Entity& e : entities) {
      body += "--" + changeset + "\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n";
      switch (mode) {
        case WriteMode::kInsert: body += "POST " + root + protocol::PercentEncode(table); break;
        case WriteMode::kUpsert: body += "MERGE " + root + protocol::EntityKeyPath(table, e.partition_key, e.row_key); break;
        case WriteMode::kReplace: body += "PUT " + root + protocol::EntityKeyPath(table, e.partition_key, e.row_key); break;
      }
      body += " HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json;odata=minimalmetadata\r\n"
              "Prefer: return-no-content\r\nDataServiceVersion: 3.0;\r\n\r\n";
      line.clear();
      AppendEntityLine(e, &line);
      body += line;
      body += "\r\n";
    }
    body += "--" + changeset + "--\r\n--" + batch + "--\r\n";
    Response r;
    if (!Call(http::verb::post, "/$batch", "", body, "multipart/mixed; boundary=" + batch, &r, error)) return false;
    if (r.status != 202) return Fail("writing to table '" + std::string(table) + "': " + DescribeError(r), error);
    // A failed changeset answers one part: the failing operation's status and error.
    size_t at = 0;
    while ((at = r.body.find("HTTP/1.1 ", at)) != std::string::npos) {
      int status = std::atoi(r.body.c_str() + at + 9);
      if (status >= 300) {
        Response part;
        part.status = status;
        size_t json = r.body.find('{', at);
        if (json != std::string::npos) part.body = r.body.substr(json, r.body.find("\r\n--", json) - json);
        std::string why = DescribeError(part);
        std::string where = "writing to table '" + std::string(table) + "' (partition '" +
                            entities.front().partition_key + "')";
        if (mode == WriteMode::kInsert && status == 409 && !unanswered_attempt_.empty()) {
          // Likely not the data: this batch was sent before and that attempt
          // got no answer, so the server may have committed it then (a
          // restart or a dropped connection after the commit) and the retry
          // finds the entities it wrote itself.
          return Fail(where + ": the retry of this batch found an entity already there (" + why +
                          "); an earlier attempt of the same batch got no answer (" + unanswered_attempt_ +
                          ") and may have committed it. If the table held none of these entities before, "
                          "the batch is in: rerun with --mode upsert or replace, which write the same values "
                          "whether or not they are there",
                      error);
        }
        return Fail(where + ": " + why, error);
      }
      at += 9;
    }
    return true;
  }

  bool Flush(std::string*) override { return true; }

  bool Health(int* status, std::string* body, std::string* error) {
    Response r;
    if (!Call(http::verb::get, "/_tablestone/health", "", {}, {}, &r, error, true)) return false;
    *status = r.status;
    *body = std::move(r.body);
    return true;
  }

  bool Admin(http::verb verb, std::string_view op, const std::string& query, const std::string& json_body,
             std::string* body, std::string* error) {
    Response r;
    if (!Call(verb, "/_tablestone/" + std::string(op), query, json_body,
              json_body.empty() ? std::string_view() : std::string_view("application/json"), &r, error, true)) {
      return false;
    }
    // Our admin errors are {"error":..}; anything else came from the Table
    // API's routing (no such resource, or the path taken for an account).
    if (r.status >= 400 && r.body.find("\"error\"") == std::string::npos) {
      return Fail("the server does not answer /_tablestone/" + std::string(op) +
                      " (start it with --adminApi; admin routes are off by default)",
                  error);
    }
    if (r.status >= 300) {
      std::string message;
      try {
        auto j = nlohmann::json::parse(r.body);
        message = j.value("error", "") + ": " + j.value("message", "");
      } catch (const std::exception&) {
        message = DescribeError(r);
      }
      return Fail("/_tablestone/" + std::string(op) + ": HTTP " + std::to_string(r.status) + " " + message, error);
    }
    *body = r.body;
    return true;
  }

 private:
  static bool Fail(std::string why, std::string* error) {
    *error = std::move(why);
    return false;
  }

  std::string RandomHex() {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string s(16, '0');
    for (char& c : s) c = kHex[rng_() & 15];
    return s;
  }

  // One request with retries: connection failures, timeouts, 503 and 500
  // OperationTimedOut are retried with exponential back-off (and jitter, so
  // many clients do not retry in lockstep); any other answer is returned.
  bool Call(http::verb verb, const std::string& path, const std::string& query, std::string_view body,
            std::string_view content_type, Response* out, std::string* error, bool absolute = false) {
    int backoff = options_.first_backoff_ms;
    std::string last;
    unanswered_attempt_.clear();
    for (int attempt = 1;; ++attempt) {
      std::string why;
      fatal_ = false;
      bool sent = Once(verb, path, query, body, content_type, out, &why, absolute);
      if (sent && !IsRetryable(*out)) return true;
      last = sent ? DescribeError(*out) : why;
      // Trying again cannot change a certificate's verdict or a bad --caFile.
      if (!sent && fatal_) return Fail(conn_.host + ":" + conn_.port + ": " + last, error);
      if (!sent || out->status == 500) unanswered_attempt_ = last;  // the request may have run
      if (attempt >= options_.attempts) break;
      std::uniform_int_distribution<int> jitter(0, backoff / 2);
      std::this_thread::sleep_for(std::chrono::milliseconds(backoff + jitter(rng_)));
      backoff = std::min(backoff * 2, 10000);
    }
    return Fail(conn_.host + ":" + conn_.port + ": " + last + " (after " + std::to_string(options_.attempts) +
                    " attempts)",
                error);
  }

  bool Once(http::verb verb, const std::string& path, const std::string& query, std::string_view body,
            std::string_view content_type, Response* out, std::string* error, bool absolute) {
    std::string full_path = absolute ? path : conn_.base_path + path;
    std::string target = full_path;
    std::string q = query;
    if (!conn_.sas.empty()) q = q.empty() ? conn_.sas : q + "&" + conn_.sas;
    if (!q.empty()) target += "?" + q;

    http::request<http::string_body> req{verb, target, 11};
    const bool ipv6 = conn_.host.find(':') != std::string::npos;
    req.set(http::field::host, (ipv6 ? "[" + conn_.host + "]" : conn_.host) + ":" + conn_.port);
    req.set(http::field::user_agent, "tablestone-data-tools");
    req.set(http::field::accept, kAcceptJson);
    req.set("DataServiceVersion", "3.0");
    req.set("MaxDataServiceVersion", "3.0;NetFx");
    req.set("x-ms-version", kApiVersion);
    std::string date = model::FormatRfc1123(model::NowTicks());
    req.set("x-ms-date", date);
    if (!content_type.empty()) req.set(http::field::content_type, content_type);
    if (verb == http::verb::post && path == "/Tables") req.set("Prefer", "return-no-content");
    if (key_ && absolute) {
      // The admin routes' signature covers the query and the body's hash (docs/admin-api.md).
      const std::string hash = protocol::auth::ContentSha256Base64(body);
      req.set(protocol::auth::kContentSha256Header, hash);
      const auto params = protocol::ParseQueryString(q).value_or(protocol::QueryParams());
      std::string to_sign = protocol::auth::AdminStringToSign(
          http::to_string(verb), content_type, date, hash,
          protocol::auth::AdminCanonicalizedResource(conn_.account, full_path, params));
      req.set(http::field::authorization, "SharedKey " + conn_.account + ":" + key_->SignBase64(to_sign));
    } else if (key_) {
      std::string to_sign = protocol::auth::SharedKeyStringToSign(
          http::to_string(verb), "", content_type, date,
          protocol::auth::CanonicalizedResource(conn_.account, full_path, std::nullopt));
      req.set(http::field::authorization, "SharedKey " + conn_.account + ":" + key_->SignBase64(to_sign));
    }
    req.body() = std::string(body);
    req.prepare_payload();

    // A kept-alive connection the server closed meanwhile fails on first use:
    // one immediate retry on a fresh connection before counting an attempt.
    for (int fresh = 0; fresh < 2; ++fresh) {
      bool reused = Connected();
      beast::error_code ec;
      if (!Connected()) {
        if (!Connect(error)) return false;
      }
      // Asynchronous operations run to completion here: only they honour
      // tcp_stream's expiry (a synchronous read would wait forever).
      Tcp().expires_after(std::chrono::milliseconds(options_.timeout_ms));
      http::response_parser<http::string_body> parser;
      parser.body_limit(256u << 20);
      if (tls_stream_) {
        Exchange(*tls_stream_, req, parser, &ec);
      } else {
        Exchange(*stream_, req, parser, &ec);
      }
      if (ec) {
        Disconnect();
        buffer_.clear();
        if (reused && ec != beast::error::timeout) {
          unanswered_attempt_ = "connection failed: " + ec.message();
          continue;
        }
        *error = ec == beast::error::timeout ? "request timed out" : "connection failed: " + ec.message();
        return false;
      }
      auto res = parser.release();
      out->status = static_cast<int>(res.result_int());
      out->body = std::move(res.body());
      out->headers = std::move(static_cast<http::fields&>(res.base()));
      if (!res.keep_alive()) Disconnect();
      return true;
    }
    *error = "connection dropped";
    return false;
  }

  void Run() {
    io_.restart();
    io_.run();
  }

  bool Connected() const { return stream_.has_value() || tls_stream_.has_value(); }
  beast::tcp_stream& Tcp() { return tls_stream_ ? beast::get_lowest_layer(*tls_stream_) : *stream_; }
  void Disconnect() {
    tls_stream_.reset();
    stream_.reset();
  }

  template <typename Stream>
  void Exchange(Stream& stream, http::request<http::string_body>& req, http::response_parser<http::string_body>& parser,
                beast::error_code* ec) {
    http::async_write(stream, req, [ec](beast::error_code e, size_t) { *ec = e; });
    Run();
    if (!*ec) {
      http::async_read(stream, buffer_, parser, [ec](beast::error_code e, size_t) { *ec = e; });
      Run();
    }
  }

  // The TLS context, made once: peer verification on, the system's trust
  // store plus options_.ca_files, TLS 1.2 or newer. There is no switch that
  // turns verification off.
  // With options_.server_cert the trust store and the names are not
  // consulted: Handshake compares the peer's certificate with that one.
  bool MakeTlsContext(std::string* error) {
    if (tls_) return true;
    asio::ssl::context ctx(asio::ssl::context::tls_client);
    SSL_CTX_set_min_proto_version(ctx.native_handle(), TLS1_2_VERSION);
    if (!options_.server_cert.empty()) {
      pinned_ = ReadServerCertificate(options_.server_cert, options_.server_cert_password, error);
      if (!pinned_) {
        fatal_ = true;
        return false;
      }
      ctx.set_verify_mode(asio::ssl::verify_none);  // checked by Handshake before any byte is sent
      tls_.emplace(std::move(ctx));
      return true;
    }
    ctx.set_verify_mode(asio::ssl::verify_peer);
    beast::error_code ec;
    ctx.set_default_verify_paths(ec);
    if (ec) {
      fatal_ = true;
      *error = "cannot load the system's trusted certificates: " + ec.message();
      return false;
    }
    for (const std::string& file : options_.ca_files) {
      if (!CheckCertificateFile(file, "--caFile", error)) {
        fatal_ = true;
        return false;
      }
      ctx.load_verify_file(file, ec);
      if (ec) {
        fatal_ = true;
        *error = "cannot load --caFile '" + file + "' (PEM certificates expected): " + ec.message();
        return false;
      }
    }
    tls_.emplace(std::move(ctx));
    return true;
  }

  // TLS over the connected stream_: SNI and the name (or IP address) the
  // certificate must carry are the endpoint's host.
  bool Handshake(std::string* error) {
    tls_stream_.emplace(std::move(*stream_), *tls_);
    stream_.reset();
    SSL* ssl = tls_stream_->native_handle();
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
    beast::error_code ec;
    (void)asio::ip::make_address(conn_.host, ec);
    if (pinned_) {
      if (ec) SSL_set_tlsext_host_name(ssl, conn_.host.c_str());
    } else if (!ec) {
      X509_VERIFY_PARAM_set1_ip_asc(param, conn_.host.c_str());
    } else {
      SSL_set_tlsext_host_name(ssl, conn_.host.c_str());
      X509_VERIFY_PARAM_set1_host(param, conn_.host.c_str(), conn_.host.size());
    }
    ec = {};
    Tcp().expires_after(std::chrono::milliseconds(options_.timeout_ms));
    tls_stream_->async_handshake(asio::ssl::stream_base::client, [&ec](beast::error_code e) { ec = e; });
    Run();
    if (!ec && pinned_) {
      // The handshake proved that the peer holds the key of the certificate
      // it presented; that certificate must be the pinned one.
      X509Ptr peer(SSL_get1_peer_certificate(ssl), X509_free);
      if (peer && X509_cmp(peer.get(), pinned_.get()) == 0) return true;
      Disconnect();
      fatal_ = true;
      *error = "TLS: the server's certificate is not the one in --serverCert '" + options_.server_cert + "'";
      return false;
    }
    if (!ec) return true;
    long verify = SSL_get_verify_result(ssl);
    Disconnect();
    if (verify != X509_V_OK) {
      fatal_ = true;
      *error = "TLS: the server's certificate is not trusted: " + std::string(X509_verify_cert_error_string(verify)) +
               " (for a private CA or a self-signed certificate pass --caFile with its PEM certificate)";
    } else {
      *error = "TLS handshake failed: " + ec.message();
    }
    return false;
  }

  bool Connect(std::string* error) {
    if (conn_.scheme == "https" && !MakeTlsContext(error)) return false;
    beast::error_code ec;
    tcp::resolver resolver(io_);
    auto results = resolver.resolve(conn_.host, conn_.port, ec);
    if (ec) {
      // An unknown host does not appear within a retry's back-off: fail now
      // (a temporary DNS failure, EAI_AGAIN, is still retried).
      fatal_ = ec != asio::error::host_not_found_try_again;
      *error = "cannot resolve " + conn_.host + ": " + ec.message();
      return false;
    }
    stream_.emplace(io_);
    stream_->expires_after(std::chrono::milliseconds(options_.timeout_ms));
    stream_->async_connect(results, [&ec](beast::error_code e, const tcp::endpoint&) { ec = e; });
    Run();
    if (ec) {
      stream_.reset();
      *error = "cannot connect to " + conn_.host + ":" + conn_.port + ": " + ec.message();
      // Refused before this store ever connected: nothing listens there (a
      // wrong port, a server not started), and retries would only add
      // seconds of silence. Refused later is a server restarting: retried.
      if (ec == asio::error::connection_refused && !ever_connected_) {
        fatal_ = true;
        *error += " (is the server running, and is the endpoint right?)";
      }
      return false;
    }
    ever_connected_ = true;
    stream_->socket().set_option(tcp::no_delay(true), ec);
    if (conn_.scheme == "https") return Handshake(error);
    return true;
  }

  Connection conn_;
  RemoteOptions options_;
  // Why an earlier attempt of the current Call got no usable answer after its
  // request may have reached the server (empty: none), for WriteBatch's 409.
  std::string unanswered_attempt_;
  std::optional<protocol::auth::HmacKey> key_;
  asio::io_context io_;
  std::optional<asio::ssl::context> tls_;  // https only
  X509Ptr pinned_{nullptr, X509_free};     // options_.server_cert, once read
  std::optional<beast::tcp_stream> stream_;  // plain, or TCP before the handshake
  std::optional<TlsStream> tls_stream_;      // https, once connected
  bool fatal_ = false;                       // the last failure is not worth a retry
  bool ever_connected_ = false;
  beast::flat_buffer buffer_;
  std::mt19937 rng_;
};

}  // namespace

std::unique_ptr<TableStore> OpenRemoteStore(const Connection& connection, const RemoteOptions& options) {
  return std::make_unique<RemoteStore>(connection, options);
}

bool GetHealth(const Connection& connection, const RemoteOptions& options, int* status, std::string* body,
               std::string* error) {
  Connection anonymous = connection;  // the health route takes no credential: none is sent
  anonymous.key.clear();
  anonymous.sas.clear();
  RemoteStore store(anonymous, options);
  return store.Health(status, body, error);
}

bool CallAdminRoute(const Connection& connection, const RemoteOptions& options, std::string_view op,
                    const std::string& query, std::string* body, std::string* error) {
  return CallAdminRoute(connection, options, "POST", op, query, {}, body, error);
}

bool CallAdminRoute(const Connection& connection, const RemoteOptions& options, std::string_view method,
                    std::string_view op, const std::string& query, const std::string& json_body, std::string* body,
                    std::string* error) {
  if (connection.key.empty()) {
    *error = "admin routes need a connection string with an AccountKey (not a SAS)";
    return false;
  }
  const http::verb verb = http::string_to_verb(method);
  if (verb != http::verb::get && verb != http::verb::post && verb != http::verb::delete_) {
    *error = "admin routes take GET, POST or DELETE";
    return false;
  }
  RemoteStore store(connection, options);
  return store.Admin(verb, op, query, json_body, body, error);
}

}  // namespace tablestone::tools
