// The TLS context's choices (tls_context.cc: cipher order, tickets), the TLS
// record path (tls_records.h) on its own, between two SSL objects joined
// by memory BIOs, and the HTTPS session over loopback sockets: responses of
// every size and their records, slow and departing readers, and hostile
// clients (silence after the handshake, renegotiation, an oversized
// ClientHello).
#include "server/http/tls_records.h"

#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "server/http/listener.h"
#include "server/http/response_head.h"
#include "server/http/tls_context.h"
#include "tests/unit/server/http/raw_client.h"
#include "tests/unit/server/http/test_certificate.h"

namespace tablestone::http {
namespace {

using namespace std::chrono_literals;
using testing::RawClient;
using testing::TestCertificate;
namespace bhttp = boost::beast::http;
namespace ssl = boost::asio::ssl;
using tcp = boost::asio::ip::tcp;

// Byte i of every test body: a pattern that shows a lost, doubled or moved byte.
char BodyByte(size_t i) { return static_cast<char>('a' + (i * 7 + i / 251) % 26); }

std::string Body(size_t size) {
  std::string body(size, '\0');
  for (size_t i = 0; i < size; ++i) body[i] = BodyByte(i);
  return body;
}

// ---- TlsRecords between two SSL objects -------------------------------------------------------

// A server SSL object with the listener's own context (MakeTlsContext) and a client, joined by
// memory BIOs: the test carries what one writes to the other.
class MemoryTlsPair {
 public:
  // `client_suites`: the client's TLS 1.3 cipher suites in its order of preference (null: OpenSSL's
  // default, AES-256-GCM first, as OpenSSL-based SDKs offer them).
  MemoryTlsPair(const TlsFiles& files, int client_max_version, const char* client_suites = nullptr) {
    std::string error;
    server_context_ = MakeTlsContext(files, &error);
    EXPECT_TRUE(server_context_) << error;
    client_context_ = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_max_proto_version(client_context_, client_max_version);
    if (client_suites != nullptr) EXPECT_EQ(SSL_CTX_set_ciphersuites(client_context_, client_suites), 1);
    server_ = SSL_new(server_context_->native_handle());
    client_ = SSL_new(client_context_);
    server_in_ = BIO_new(BIO_s_mem());
    server_out_ = BIO_new(BIO_s_mem());
    client_in_ = BIO_new(BIO_s_mem());
    client_out_ = BIO_new(BIO_s_mem());
    SSL_set_bio(server_, server_in_, server_out_);
    SSL_set_bio(client_, client_in_, client_out_);
    SSL_set_accept_state(server_);
    SSL_set_connect_state(client_);
  }
  ~MemoryTlsPair() {
    SSL_free(server_);
    SSL_free(client_);
    SSL_CTX_free(client_context_);
  }

  bool Handshake() {
    for (int round = 0; round < 8; ++round) {
      SSL_do_handshake(client_);
      Carry(client_out_, server_in_);
      SSL_do_handshake(server_);
      Carry(server_out_, client_in_);
      if (SSL_is_init_finished(client_) && SSL_is_init_finished(server_)) return true;
    }
    return false;
  }

  // Hands `records` to the client and returns all the plain text it reads from them.
  std::string ClientReads(const std::string& records) {
    BIO_write(client_in_, records.data(), static_cast<int>(records.size()));
    std::string plain;
    char chunk[32768];
    size_t n = 0;
    while (SSL_read_ex(client_, chunk, sizeof(chunk), &n) == 1) plain.append(chunk, n);
    return plain;
  }

  // The records of `plain` written by the client.
  std::string ClientWrites(const std::string& plain) {
    if (!plain.empty()) EXPECT_EQ(SSL_write(client_, plain.data(), static_cast<int>(plain.size())), static_cast<int>(plain.size()));
    return TakeClientOutput();
  }
  std::string TakeClientOutput() {
    std::string wire(static_cast<size_t>(BIO_ctrl_pending(client_out_)), '\0');
    if (!wire.empty()) BIO_read(client_out_, wire.data(), static_cast<int>(wire.size()));
    return wire;
  }
  SSL* client() { return client_; }
  SSL_CTX* client_context() { return client_context_; }

  static void Carry(BIO* from, BIO* to) {
    char chunk[16384];
    int n;
    while ((n = BIO_read(from, chunk, sizeof(chunk))) > 0) BIO_write(to, chunk, n);
  }

  SSL* server() { return server_; }
  BIO* server_out() { return server_out_; }
  BIO* client_in() { return client_in_; }

 private:
  std::shared_ptr<ssl::context> server_context_;
  SSL_CTX* client_context_ = nullptr;
  SSL* server_ = nullptr;
  SSL* client_ = nullptr;
  BIO* server_in_ = nullptr;  // owned by server_ (SSL_set_bio)
  BIO* server_out_ = nullptr;
  BIO* client_in_ = nullptr;  // owned by client_
  BIO* client_out_ = nullptr;
};

// The payload lengths of the TLS records in `wire` (all must be application data).
std::vector<size_t> RecordLengths(const std::string& wire) {
  std::vector<size_t> lengths;
  size_t at = 0;
  while (at + 5 <= wire.size()) {
    EXPECT_EQ(static_cast<unsigned char>(wire[at]), 23) << "record " << lengths.size() << " is not application data";
    const size_t length = (static_cast<unsigned char>(wire[at + 3]) << 8) | static_cast<unsigned char>(wire[at + 4]);
    lengths.push_back(length);
    at += 5 + length;
  }
  EXPECT_EQ(at, wire.size()) << "the last record is cut";
  return lengths;
}

// ---- The context (tls_context.cc) -----------------------------------------------------------

// The cipher of a TLS 1.3 connection whose client offers `client_suites` (null: OpenSSL's default order).
std::string NegotiatedCipher(const TlsFiles& files, const char* client_suites) {
  MemoryTlsPair pair(files, TLS1_3_VERSION, client_suites);
  if (!pair.Handshake()) return "<no handshake>";
  const char* server_side = SSL_CIPHER_get_name(SSL_get_current_cipher(pair.server()));
  const char* client_side = SSL_CIPHER_get_name(SSL_get_current_cipher(pair.client()));
  if (std::string(server_side) != client_side) return "<sides disagree>";
  return server_side;
}

// The server's order decides: AES-128-GCM (the cheaper per record and per byte) even when the
// client lists AES-256-GCM first, as OpenSSL's, .NET's and Node's clients do by default.
TEST(TlsContextTest, ServerPrefersAes128GcmToTheAes256GcmClientsListFirst) {
  TestCertificate cert;
  EXPECT_EQ(NegotiatedCipher(cert.files(), nullptr), "TLS_AES_128_GCM_SHA256");
  EXPECT_EQ(NegotiatedCipher(cert.files(), "TLS_AES_256_GCM_SHA384:TLS_AES_128_GCM_SHA256"),
            "TLS_AES_128_GCM_SHA256");
}

// A client without AES instructions lists ChaCha20-Poly1305 first and keeps it; a client that offers
// one suite only gets that one.
TEST(TlsContextTest, ClientsThatPreferChaChaOrOfferOneSuiteGetTheirs) {
  TestCertificate cert;
  EXPECT_EQ(NegotiatedCipher(cert.files(), "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256"),
            "TLS_CHACHA20_POLY1305_SHA256");
  EXPECT_EQ(NegotiatedCipher(cert.files(), "TLS_AES_256_GCM_SHA384"), "TLS_AES_256_GCM_SHA384");
}

// A full TLS 1.3 handshake gives the client one session ticket (OpenSSL's default is two), and a
// session made from it resumes.
TEST(TlsContextTest, AFullHandshakeSendsOneResumableTicket) {
  TestCertificate cert;
  MemoryTlsPair pair(cert.files(), TLS1_3_VERSION);
  static int tickets = 0;
  tickets = 0;
  SSL_CTX_set_session_cache_mode(pair.client_context(), SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  SSL_CTX_sess_set_new_cb(pair.client_context(), [](SSL*, SSL_SESSION*) {
    ++tickets;
    return 0;  // not kept: the client's SSL object holds its own session
  });
  ASSERT_TRUE(pair.Handshake());
  // The tickets follow the server's Finished; the client takes them in with its next read.
  EXPECT_EQ(pair.ClientReads(""), "");
  EXPECT_EQ(tickets, 1);
  SSL_SESSION* session = SSL_get1_session(pair.client());
  ASSERT_NE(session, nullptr);
  EXPECT_EQ(SSL_SESSION_is_resumable(session), 1);
  SSL_SESSION_free(session);
}

class TlsRecordsTest : public ::testing::TestWithParam<int> {
 protected:
  TestCertificate cert_;
};

INSTANTIATE_TEST_SUITE_P(Versions, TlsRecordsTest, ::testing::Values(TLS1_2_VERSION, TLS1_3_VERSION),
                         [](const auto& info) { return info.param == TLS1_2_VERSION ? "Tls12" : "Tls13"; });

// Head and body of sizes around one record: the client reads back exactly head + body, every
// record but the last is full (the body's first bytes join the head's record), and nothing goes
// to the stream's own BIO.
TEST_P(TlsRecordsTest, ResponsesOfAnySizeArriveWholeInFullRecords) {
  MemoryTlsPair pair(cert_.files(), GetParam());
  ASSERT_TRUE(pair.Handshake());
  pair.ClientReads("");  // TLS 1.3: the session tickets sent after the handshake
  TlsRecords sealer;
  const std::string head = "HTTP/1.1 200 OK\r\nContent-Length: n\r\n\r\n";
  for (size_t body_size : {size_t{0}, size_t{1}, size_t{300}, kTlsMaxRecordPayload - head.size() - 1,
                           kTlsMaxRecordPayload - head.size(), kTlsMaxRecordPayload - head.size() + 1,
                           size_t{100000}, size_t{3} * kTlsMaxRecordPayload, size_t{1} << 20}) {
    SCOPED_TRACE(body_size);
    const std::string body = Body(body_size);
    std::string joined_head = head;
    std::string wire = "left from before";
    ASSERT_TRUE(SealResponse(sealer, pair.server(), &joined_head, body, &wire));
    EXPECT_EQ(BIO_ctrl_pending(pair.server_out()), 0u);
    EXPECT_EQ(SSL_get_wbio(pair.server()), pair.server_out());
    const std::vector<size_t> lengths = RecordLengths(wire);
    const size_t total = head.size() + body_size;
    ASSERT_EQ(lengths.size(), (total + kTlsMaxRecordPayload - 1) / kTlsMaxRecordPayload);
    for (size_t i = 0; i + 1 < lengths.size(); ++i) EXPECT_EQ(lengths[i], lengths[0]) << "record " << i;
    EXPECT_LE(lengths.back(), lengths[0]);
    EXPECT_TRUE(pair.ClientReads(wire) == head + body);
  }
  // The stream's BIO still carries what OpenSSL writes outside Seal.
  ASSERT_EQ(SSL_write(pair.server(), "after", 5), 5);
  std::string after(static_cast<size_t>(BIO_ctrl_pending(pair.server_out())), '\0');
  BIO_read(pair.server_out(), after.data(), static_cast<int>(after.size()));
  EXPECT_EQ(pair.ClientReads(after), "after");
}

TEST_P(TlsRecordsTest, RefusesAConnectionWhoseHandshakeIsNotDone) {
  MemoryTlsPair pair(cert_.files(), GetParam());
  TlsRecords sealer;
  std::string wire;
  EXPECT_FALSE(sealer.Seal(pair.server(), {"data"}, &wire));
  EXPECT_TRUE(wire.empty());
  EXPECT_EQ(SSL_get_wbio(pair.server()), pair.server_out());
  EXPECT_TRUE(pair.Handshake());  // the connection is unharmed
}

// Records from the client opened in pieces of every size, a record split across two reads among
// them: the plain text comes out whole and in order, nothing is read through the stream's BIO.
TEST_P(TlsRecordsTest, RecordsOpenWholeAcrossReadsOfAnySize) {
  const std::string plain = Body(70000);
  TlsRecords records;
  for (size_t piece : {size_t{1}, size_t{5}, size_t{1000}, size_t{7000}, size_t{40000}}) {
    SCOPED_TRACE(piece);
    MemoryTlsPair pair(cert_.files(), GetParam());
    ASSERT_TRUE(pair.Handshake());
    std::string sent = pair.ClientWrites(plain.substr(0, 100));  // one statement each: records in order
    sent += pair.ClientWrites(plain.substr(100, 40000));
    sent += pair.ClientWrites(plain.substr(40100));
    std::string opened;
    std::string reply;
    for (size_t at = 0; at < sent.size(); at += piece) {
      const std::string_view bytes = std::string_view(sent).substr(at, piece);
      std::string room(TlsRecords::OpenCapacity(bytes.size()), '\0');
      size_t n = 0;
      ASSERT_EQ(records.Open(pair.server(), bytes, room.data(), &n, &reply), TlsRecords::Opened::kOk) << "at " << at;
      opened.append(room, 0, n);
    }
    EXPECT_TRUE(opened == plain);
    EXPECT_TRUE(reply.empty());
    EXPECT_FALSE(TlsRecords::HasInput(pair.server()));
  }
}

// Several whole records in one read (a client that writes its headers and its body apart, or
// pipelines): one Open hands out all of them, none waits inside OpenSSL, which reads ahead.
TEST_P(TlsRecordsTest, SeveralRecordsInOneReadAllOpenAtOnce) {
  MemoryTlsPair pair(cert_.files(), GetParam());
  ASSERT_TRUE(pair.Handshake());
  std::string sent = pair.ClientWrites("GET / HTTP/1.1\r\nContent-Length: 4\r\n\r\n");
  sent += pair.ClientWrites("body");
  sent += pair.ClientWrites("GET /next HTTP/1.1\r\n\r\n");
  TlsRecords records;
  std::string room(TlsRecords::OpenCapacity(sent.size()), '\0');
  size_t n = 0;
  std::string reply;
  ASSERT_EQ(records.Open(pair.server(), sent, room.data(), &n, &reply), TlsRecords::Opened::kOk);
  EXPECT_EQ(room.substr(0, n), "GET / HTTP/1.1\r\nContent-Length: 4\r\n\r\nbodyGET /next HTTP/1.1\r\n\r\n");
  EXPECT_FALSE(TlsRecords::HasInput(pair.server()));
}

TEST_P(TlsRecordsTest, CloseNotifyAndForgedRecordsAreToldApart) {
  MemoryTlsPair pair(cert_.files(), GetParam());
  ASSERT_TRUE(pair.Handshake());
  TlsRecords records;
  std::string reply;
  std::string room(TlsRecords::OpenCapacity(4096), '\0');
  size_t n = 0;
  std::string wire = pair.ClientWrites("hello");
  wire.back() ^= 1;  // the tag no longer matches
  EXPECT_EQ(records.Open(pair.server(), wire, room.data(), &n, &reply), TlsRecords::Opened::kFailed);
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(ERR_peek_error(), 0u);  // nothing left for the next connection on this thread

  MemoryTlsPair closing(cert_.files(), GetParam());
  ASSERT_TRUE(closing.Handshake());
  SSL_shutdown(closing.client());
  EXPECT_EQ(records.Open(closing.server(), closing.TakeClientOutput(), room.data(), &n, &reply),
            TlsRecords::Opened::kClosed);
}

// A TLS 1.3 client that updates its keys and asks the server to do the same: the server's
// KeyUpdate goes out (as a reply of Open, or ahead of the next sealed records, as OpenSSL decides)
// before the records under its new keys, and both directions go on.
TEST(TlsKeyUpdateTest, AKeyUpdateIsAnsweredBeforeTheNextRecords) {
  TestCertificate cert;
  MemoryTlsPair pair(cert.files(), TLS1_3_VERSION);
  ASSERT_TRUE(pair.Handshake());
  pair.ClientReads("");
  TlsRecords records;
  ASSERT_EQ(SSL_key_update(pair.client(), SSL_KEY_UPDATE_REQUESTED), 1);
  const std::string wire = pair.ClientWrites("after the update");
  std::string reply;
  std::string room(TlsRecords::OpenCapacity(wire.size()), '\0');
  size_t n = 0;
  ASSERT_EQ(records.Open(pair.server(), wire, room.data(), &n, &reply), TlsRecords::Opened::kOk);
  EXPECT_EQ(room.substr(0, n), "after the update");
  std::string out;
  ASSERT_TRUE(records.Seal(pair.server(), {"answer"}, &out));
  EXPECT_EQ(pair.ClientReads(reply + out), "answer");
}

// ---- the HTTPS session over loopback ---------------------------------------------------------

// Answers GET /size/N with N body bytes (Body(N)) at once, on the I/O thread.
class SizeHandler : public RequestHandler {
 public:
  void Handle(const Request& request, const RequestContext&, Completion done) override {
    Response response;
    response.version(request.version());
    response.result(bhttp::status::ok);
    const std::string_view target = request.target();
    if (target.rfind("/size/", 0) == 0) response.body() = Body(std::stoull(std::string(target.substr(6))));
    done(std::move(response));
  }
  void RenderTransportError(TransportError, const Request&, Response& response) override {
    response.result(bhttp::status::bad_request);
  }
};

// A blocking TLS client (asio's ssl::stream over a plain socket).
class TlsClient {
 public:
  explicit TlsClient(int max_version = 0) {
    context_.set_verify_mode(ssl::verify_none);
    if (max_version != 0) SSL_CTX_set_max_proto_version(context_.native_handle(), max_version);
  }

  // Connects and handshakes, offering `resume` if given; false if the handshake fails.
  bool Connect(uint16_t port, SSL_SESSION* resume = nullptr) {
    stream_.emplace(io_, context_);
    stream_->next_layer().connect({boost::asio::ip::make_address("127.0.0.1"), port});
    // A response that stops short fails the read after 10 s instead of hanging the test.
    timeval limit{10, 0};
    setsockopt(socket(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
    if (resume != nullptr) SSL_set_session(ssl(), resume);
    boost::system::error_code ec;
    stream_->handshake(ssl::stream_base::client, ec);
    return !ec;
  }

  void Send(const std::string& bytes) { boost::asio::write(*stream_, boost::asio::buffer(bytes)); }

  static std::string Get(size_t size) {
    return "GET /size/" + std::to_string(size) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  }

  // Reads one response; its body, or "<error: ...>".
  std::string ReadBody() {
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(64 << 20);
    boost::system::error_code ec;
    bhttp::read(*stream_, buffer_, parser, ec);
    if (ec) return "<error: " + ec.message() + ">";
    return parser.release().body();
  }

  SSL* ssl() { return stream_->native_handle(); }
  int socket() { return stream_->next_layer().native_handle(); }
  ssl::stream<tcp::socket>& stream() { return *stream_; }

 private:
  boost::asio::io_context io_;
  ssl::context context_{ssl::context::tls_client};
  std::optional<ssl::stream<tcp::socket>> stream_;
  boost::beast::flat_buffer buffer_;
};

class TlsSessionTest : public ::testing::Test {
 protected:
  void Start(HttpOptions options = {}) {
    std::string error;
    options.tls = MakeTlsContext(cert_.files(), &error);
    ASSERT_TRUE(options.tls) << error;
    options.address = "127.0.0.1";
    options.port = 0;
    options.threads = 1;
    listener_ = std::make_unique<Listener>(options, handler_);
    ASSERT_TRUE(listener_->Start(&error)) << error;
  }
  void TearDown() override {
    if (listener_) listener_->Stop();
  }
  // True once the listener has no connection left, within `timeout`.
  bool AllClosedWithin(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (listener_->connections() != 0) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(10ms);
    }
    return true;
  }
  // How long until the server ends `client`'s connection (a failed read); fails the test if it
  // sends data instead.
  static std::chrono::steady_clock::duration UntilTheServerCloses(TlsClient& client) {
    const auto begin = std::chrono::steady_clock::now();
    char byte;
    boost::system::error_code ec;
    client.stream().read_some(boost::asio::buffer(&byte, 1), ec);
    EXPECT_TRUE(ec) << "the server sent data instead of closing";
    return std::chrono::steady_clock::now() - begin;
  }
  bool AnotherClientIsServed() {
    TlsClient other;
    if (!other.Connect(listener_->port())) return false;
    other.Send(TlsClient::Get(10));
    return other.ReadBody() == Body(10);
  }

  TestCertificate cert_;
  SizeHandler handler_;
  std::unique_ptr<Listener> listener_;
};

// One kept-alive connection: responses of sizes around one record and far beyond it, each whole,
// and a small one after the largest.
TEST_F(TlsSessionTest, ResponsesOfEverySizeArriveWholeOnOneConnection) {
  Start();
  TlsClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  for (size_t size : {size_t{0}, size_t{1}, size_t{16000}, size_t{16384}, size_t{16385}, size_t{300000},
                      size_t{8} << 20, size_t{5}}) {
    SCOPED_TRACE(size);
    client.Send(TlsClient::Get(size));
    const std::string body = client.ReadBody();
    ASSERT_EQ(body.size(), size) << body.substr(0, 100);
    EXPECT_TRUE(body == Body(size));
  }
}

// Two requests in one record, the first answered with more than the socket takes at once: the
// second waits in the session's buffer and is answered after the first, in order.
TEST_F(TlsSessionTest, PipelinedRequestBehindALargeResponseIsAnsweredInOrder) {
  Start();
  TlsClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  client.Send(TlsClient::Get(4 << 20) + TlsClient::Get(7));
  std::this_thread::sleep_for(100ms);  // the server fills the socket and waits for the reader
  EXPECT_TRUE(client.ReadBody() == Body(4 << 20));
  EXPECT_EQ(client.ReadBody(), Body(7));
}

// A client that waits before reading and then reads a few KiB at a time with pauses: the records
// the socket could not take at once wait for it (asynchronously, under the write deadline) and
// arrive whole.
TEST_F(TlsSessionTest, ASlowReaderGetsTheWholeResponse) {
  Start();
  TlsClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  const size_t size = 8 << 20;
  client.Send(TlsClient::Get(size));
  std::this_thread::sleep_for(200ms);
  std::string received;
  size_t body_at = std::string::npos;
  char chunk[4096];
  for (int i = 0; body_at == std::string::npos || received.size() - body_at < size; ++i) {
    boost::system::error_code ec;
    const size_t n = client.stream().read_some(boost::asio::buffer(chunk), ec);
    ASSERT_FALSE(ec) << ec.message() << " after " << received.size() << " bytes";
    received.append(chunk, n);
    if (body_at == std::string::npos && received.find("\r\n\r\n") != std::string::npos) {
      body_at = received.find("\r\n\r\n") + 4;
    }
    if (i % 64 == 0) std::this_thread::sleep_for(2ms);
  }
  ASSERT_EQ(received.size() - body_at, size);
  EXPECT_TRUE(received.compare(body_at, size, Body(size)) == 0);
  client.Send(TlsClient::Get(3));
  EXPECT_EQ(client.ReadBody(), Body(3));
}

// Responses are sealed in a buffer of the I/O thread (session.cc, ThreadSealScratch): two large
// responses on one thread that neither socket takes whole, and a small one sealed while both wait,
// each keep their own records (records of another connection would not open under this one's keys).
TEST_F(TlsSessionTest, LargeResponsesWaitingOnOneThreadKeepTheirOwnRecords) {
  Start();  // one I/O thread
  TlsClient first;
  TlsClient second;
  ASSERT_TRUE(first.Connect(listener_->port()));
  ASSERT_TRUE(second.Connect(listener_->port()));
  const size_t first_size = (4 << 20) + 1;
  const size_t second_size = (6 << 20) + 7;
  first.Send(TlsClient::Get(first_size));
  second.Send(TlsClient::Get(second_size));
  std::this_thread::sleep_for(100ms);  // both sockets full, the rest of both responses waiting
  EXPECT_TRUE(AnotherClientIsServed());
  EXPECT_TRUE(second.ReadBody() == Body(second_size));
  EXPECT_TRUE(first.ReadBody() == Body(first_size));
  first.Send(TlsClient::Get(11));
  second.Send(TlsClient::Get(12));
  EXPECT_EQ(first.ReadBody(), Body(11));
  EXPECT_EQ(second.ReadBody(), Body(12));
}

// A kept-alive connection waiting for its next request (DoReadIdle) is closed at the idle deadline,
// not before, and a graceful stop ends the wait at once.
TEST_F(TlsSessionTest, AnIdleKeptAliveConnectionEndsAtTheIdleDeadlineOrAStop) {
  HttpOptions options;
  options.idle_timeout = 300ms;
  Start(options);
  TlsClient idle;
  ASSERT_TRUE(idle.Connect(listener_->port()));
  idle.Send(TlsClient::Get(5));
  ASSERT_EQ(idle.ReadBody(), Body(5));
  const auto waited = UntilTheServerCloses(idle);
  EXPECT_GE(waited, 250ms);
  EXPECT_LT(waited, 3s);
  EXPECT_TRUE(AllClosedWithin(2s));

  // A connection waiting (idle deadline far off) while the listener stops.
  listener_->Stop();
  options.idle_timeout = 60s;
  Start(options);
  TlsClient waiting;
  ASSERT_TRUE(waiting.Connect(listener_->port()));
  waiting.Send(TlsClient::Get(6));
  ASSERT_EQ(waiting.ReadBody(), Body(6));
  const auto stop_begin = std::chrono::steady_clock::now();
  listener_->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - stop_begin, 2s);
  EXPECT_EQ(listener_->connections(), 0u);
  listener_.reset();
}

// A client that reads the start of a large response and resets its connection: the session ends
// (the pending write fails) and the server goes on serving others.
TEST_F(TlsSessionTest, AClientLeavingMidResponseEndsItsSessionOnly) {
  Start();
  {
    TlsClient client;
    ASSERT_TRUE(client.Connect(listener_->port()));
    client.Send(TlsClient::Get(16 << 20));
    char chunk[4096];
    client.stream().read_some(boost::asio::buffer(chunk));
    linger reset{1, 0};  // close with RST, as a killed client does
    setsockopt(client.socket(), SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
  }
  EXPECT_TRUE(AllClosedWithin(5s));
  EXPECT_TRUE(AnotherClientIsServed());
}

// A client that completes the handshake and then sends nothing is closed at the first-byte
// deadline, as a silent plain connection is.
TEST_F(TlsSessionTest, SilenceAfterTheHandshakeIsClosedAtTheFirstByteDeadline) {
  HttpOptions options;
  options.first_byte_timeout = 200ms;
  Start(options);
  TlsClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  EXPECT_LT(UntilTheServerCloses(client), 3s);
  EXPECT_TRUE(AllClosedWithin(2s));
}

// TLS 1.2 lets a client ask for a new handshake on an open connection; the server refuses (no
// renegotiation: a client could make it do handshakes without new connections), and goes on.
TEST_F(TlsSessionTest, ClientRenegotiationIsRefused) {
  Start();
  TlsClient client(TLS1_2_VERSION);
  ASSERT_TRUE(client.Connect(listener_->port()));
  client.Send(TlsClient::Get(10));
  EXPECT_EQ(client.ReadBody(), Body(10));
  ASSERT_EQ(SSL_renegotiate(client.ssl()), 1);
  boost::system::error_code ec;
  client.stream().handshake(ssl::stream_base::client, ec);
  EXPECT_TRUE(ec) << "the server renegotiated";
  EXPECT_EQ(SSL_get_secure_renegotiation_support(client.ssl()), 1);  // refused, not unsupported
  EXPECT_TRUE(AnotherClientIsServed());
}

// A ClientHello record that announces a 16 MiB message: the server refuses it from its header
// (OpenSSL's ClientHello limit) instead of reading on, and closes.
TEST_F(TlsSessionTest, AnOversizedClientHelloIsRefusedFromItsHeader) {
  Start();
  RawClient client;
  ASSERT_TRUE(client.Connect(listener_->port()));
  std::string record = std::string("\x16\x03\x01\x40\x00", 5) + std::string("\x01\xff\xff\xff\x03\x03", 6);
  record.resize(5 + 16384, '\0');
  size_t sent = 0;
  while (sent < (16u << 20) && client.Send(record)) {
    sent += record.size();
    if (sent == record.size()) std::this_thread::sleep_for(100ms);  // let the server read the first record
    record = std::string("\x16\x03\x01\x40\x00", 5) + std::string(16384, '\0');
  }
  EXPECT_TRUE(client.WaitClosed(3s));
  EXPECT_LT(sent, 8u << 20) << "the server read far into the announced message";
  EXPECT_TRUE(AllClosedWithin(2s));
  EXPECT_TRUE(AnotherClientIsServed());
}

// A new connection that offers the session of an earlier one resumes it (a ticket; no certificate
// signature), for TLS 1.2 and 1.3.
TEST_F(TlsSessionTest, ANewConnectionResumesAnEarlierSession) {
  Start();
  for (int version : {TLS1_2_VERSION, TLS1_3_VERSION}) {
    SCOPED_TRACE(version);
    TlsClient first(version);
    ASSERT_TRUE(first.Connect(listener_->port()));
    first.Send(TlsClient::Get(10));
    ASSERT_EQ(first.ReadBody(), Body(10));  // TLS 1.3: the tickets come after the handshake
    SSL_SESSION* session = SSL_get1_session(first.ssl());
    ASSERT_NE(session, nullptr);
    EXPECT_EQ(SSL_SESSION_is_resumable(session), 1);
    TlsClient second(version);
    ASSERT_TRUE(second.Connect(listener_->port(), session));
    EXPECT_EQ(SSL_session_reused(second.ssl()), 1);
    second.Send(TlsClient::Get(20));
    EXPECT_EQ(second.ReadBody(), Body(20));
    SSL_SESSION_free(session);
  }
}

// A response that closes the connection ("Connection: close", as every HTTP/1.0 request without
// keep-alive gets) ends with TLS's close_notify: the client sees a clean end, not a truncated
// stream, and so keeps its session and resumes it on its next connection (OpenSSL's clients,
// openssl s_time among them, drop a session whose connection was cut).
TEST_F(TlsSessionTest, AConnectionClosedAfterItsResponseEndsCleanlyAndStaysResumable) {
  Start();
  for (int version : {TLS1_2_VERSION, TLS1_3_VERSION}) {
    SCOPED_TRACE(version);
    TlsClient first(version);
    ASSERT_TRUE(first.Connect(listener_->port()));
    first.Send("GET /size/10 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    ASSERT_EQ(first.ReadBody(), Body(10));
    char byte;
    boost::system::error_code ec;
    first.stream().read_some(boost::asio::buffer(&byte, 1), ec);
    EXPECT_EQ(ec, boost::asio::error::eof) << ec.message();  // not ssl::error::stream_truncated
    SSL_SESSION* session = SSL_get1_session(first.ssl());
    ASSERT_NE(session, nullptr);
    EXPECT_EQ(SSL_SESSION_is_resumable(session), 1);
    TlsClient second(version);
    ASSERT_TRUE(second.Connect(listener_->port(), session));
    EXPECT_EQ(SSL_session_reused(second.ssl()), 1);
    SSL_SESSION_free(session);
  }
}

}  // namespace
}  // namespace tablestone::http
