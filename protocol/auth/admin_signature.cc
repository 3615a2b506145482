#include "protocol/auth/admin_signature.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "protocol/auth/sha256.h"
#include "protocol/base64.h"

namespace tablestone::protocol::auth {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace

std::string ContentSha256Base64(std::string_view body) { return Base64Encode(Sha256Digest(body)); }

std::string AdminCanonicalizedResource(std::string_view signer, std::string_view path, const QueryParams& query) {
  std::string out = "/";
  out.append(signer);
  out.append(path);
  std::vector<std::pair<std::string, std::string>> params;
  params.reserve(query.size());
  for (const auto& [name, value] : query) params.emplace_back(Lower(name), value);
  std::sort(params.begin(), params.end());
  for (size_t i = 0; i < params.size(); ++i) {
    if (i == 0 || params[i].first != params[i - 1].first) {
      out.push_back('\n');
      out.append(params[i].first);
      out.push_back(':');
    } else {
      out.push_back(',');
    }
    out.append(params[i].second);
  }
  return out;
}

std::string AdminStringToSign(std::string_view verb, std::string_view content_type, std::string_view date,
                              std::string_view content_sha256, std::string_view canonicalized_resource) {
  std::string out;
  out.reserve(verb.size() + content_type.size() + date.size() + content_sha256.size() +
              canonicalized_resource.size() + 4);
  for (std::string_view part : {verb, content_type, date, content_sha256}) {
    out.append(part);
    out.push_back('\n');
  }
  out.append(canonicalized_resource);
  return out;
}

}  // namespace tablestone::protocol::auth
