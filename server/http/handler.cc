#include "server/http/handler.h"

#include <condition_variable>
#include <mutex>

namespace tablestone::http {
namespace {

class WaitingSink final : public ResponseSink {
 public:
  void Complete(Response&& response) override {
    std::lock_guard lock(mu_);
    response_ = std::move(response);
    done_ = true;
    cv_.notify_all();
  }
  Response Wait() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return done_; });
    return std::move(response_);
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  Response response_;
};

}  // namespace

Response HandleAndWait(RequestHandler& handler, const Request& request, const RequestContext& context) {
  auto sink = std::make_shared<WaitingSink>();
  handler.Handle(request, context, Completion(sink));
  return sink->Wait();
}

}  // namespace tablestone::http
