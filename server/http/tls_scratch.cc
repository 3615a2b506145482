#include "server/http/tls_scratch.h"

namespace tablestone::http {

TlsScratch& ThreadTlsScratch() {
  thread_local TlsScratch scratch;
  return scratch;
}

void ReleaseSealed(std::string& sealed) {
  sealed.clear();
  if (sealed.capacity() > kKeepSealedBytes) std::string().swap(sealed);
}

}  // namespace tablestone::http
