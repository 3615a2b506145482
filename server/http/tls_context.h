// Builds the TLS context of an HTTPS listener from Azurite's flags: --cert
// and --key (PEM files; the key may be encrypted, --pwd decrypts it), or
// --cert with a PKCS#12 file (.pfx / .p12) and --pwd. TLS 1.2 and 1.3 only.
#pragma once

#include <memory>
#include <string>

namespace boost::asio::ssl {
class context;
}

namespace tablestone::http {

struct TlsFiles {
  std::string cert;      // PEM certificate (chain) or PKCS#12 bundle
  std::string key;       // PEM private key; empty with a PKCS#12 bundle
  std::string password;  // of the PKCS#12 bundle or the encrypted PEM key
};

// A PKCS#12 bundle is recognised by its extension (.pfx / .p12, any case) or
// by an empty `key`. Null with *error set when a file cannot be read or the
// key does not match the certificate.
std::shared_ptr<boost::asio::ssl::context> MakeTlsContext(const TlsFiles& files, std::string* error);

}  // namespace tablestone::http
