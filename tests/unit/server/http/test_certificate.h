// A throwaway self-signed certificate for the HTTPS tests of server/http.
#pragma once

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "server/http/tls_context.h"

namespace tablestone::http::testing {

// A throwaway self-signed P-256 certificate and key as PEM files in a temporary directory.
class TestCertificate {
 public:
  TestCertificate() {
    char pattern[] = "/tmp/tablestone-tls-test.XXXXXX";
    dir_ = mkdtemp(pattern);
    EVP_PKEY* key = EVP_EC_gen("P-256");
    X509* cert = X509_new();
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), -60);
    X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
    X509_set_pubkey(cert, key);
    X509_NAME* name = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("127.0.0.1"), -1,
                               -1, 0);
    X509_set_issuer_name(cert, name);
    X509_sign(cert, key, EVP_sha256());
    files_.cert = dir_ + "/cert.pem";
    files_.key = dir_ + "/key.pem";
    FILE* f = std::fopen(files_.cert.c_str(), "w");
    PEM_write_X509(f, cert);
    std::fclose(f);
    f = std::fopen(files_.key.c_str(), "w");
    PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr);
    std::fclose(f);
    X509_free(cert);
    EVP_PKEY_free(key);
  }
  ~TestCertificate() { std::filesystem::remove_all(dir_); }
  const TlsFiles& files() const { return files_; }

 private:
  std::string dir_;
  TlsFiles files_;
};

}  // namespace tablestone::http::testing
