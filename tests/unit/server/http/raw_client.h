// A blocking loopback HTTP client on raw POSIX sockets, so the tests see the
// exact bytes the server sends (interim responses, Connection headers, EOF).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <strings.h>

namespace tablestone::http::testing {

struct RawResponse {
  int status = 0;
  std::string status_line;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
  bool ok = false;  // a whole response was read

  std::string Header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
  }
};

class RawClient {
 public:
  RawClient() = default;
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;
  ~RawClient() { Close(); }

  // `from`: the local IPv4 address to connect from (any of 127.0.0.0/8 on
  // Linux), so that tests can play clients at different addresses.
  bool Connect(uint16_t port, const char* from = nullptr) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) return false;
    if (from != nullptr) {
      sockaddr_in local{};
      local.sin_family = AF_INET;
      if (::inet_pton(AF_INET, from, &local.sin_addr) != 1) return false;
      if (::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof(local)) != 0) return false;
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }

  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  // Sends everything; false if the peer is gone.
  bool Send(const std::string& data) {
    size_t sent = 0;
    while (sent < data.size()) {
      ssize_t n = ::send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  }

  // Reads one response (status line, headers, Content-Length body).
  RawResponse ReadResponse(std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
    RawResponse r;
    size_t header_end;
    while ((header_end = pending_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill(timeout)) return r;
    }
    std::string head = pending_.substr(0, header_end);
    pending_.erase(0, header_end + 4);
    size_t line_end = head.find("\r\n");
    r.status_line = head.substr(0, line_end);
    if (r.status_line.size() >= 12) r.status = std::atoi(r.status_line.c_str() + 9);
    size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
    while (pos < head.size()) {
      size_t end = head.find("\r\n", pos);
      if (end == std::string::npos) end = head.size();
      std::string line = head.substr(pos, end - pos);
      size_t colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(0, colon);
        for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        size_t v = colon + 1;
        while (v < line.size() && line[v] == ' ') ++v;
        r.headers[name] = line.substr(v);
      }
      pos = end + 2;
    }
    size_t length = 0;
    if (r.headers.count("content-length")) length = std::strtoull(r.headers["content-length"].c_str(), nullptr, 10);
    if (r.status >= 100 && r.status < 200) length = 0;
    while (pending_.size() < length) {
      if (!Fill(timeout)) return r;
    }
    r.body = pending_.substr(0, length);
    pending_.erase(0, length);
    r.ok = true;
    return r;
  }

  // True when the server closes (EOF or reset) within `timeout`, discarding
  // any bytes that arrive first.
  bool WaitClosed(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      int rc = ::poll(&p, 1, static_cast<int>(left.count()));
      if (rc <= 0) return false;
      char buf[4096];
      ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
      if (n == 0) return true;
      if (n < 0) return errno == ECONNRESET;
    }
  }

  // Bytes received but not yet consumed by ReadResponse.
  const std::string& pending() const { return pending_; }

 private:
  bool Fill(std::chrono::milliseconds timeout) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return false;
    char buf[16384];
    ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    if (n <= 0) return false;
    pending_.append(buf, static_cast<size_t>(n));
    return true;
  }

  int fd_ = -1;
  std::string pending_;
};

}  // namespace tablestone::http::testing
