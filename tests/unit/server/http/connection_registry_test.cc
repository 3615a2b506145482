#include "server/http/connection_registry.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace tablestone::http {
namespace {

using namespace std::chrono_literals;

class FakeConnection : public Closable {
 public:
  void RequestClose(CloseMode mode) override { modes.push_back(mode); }
  std::vector<CloseMode> modes;
};

TEST(ConnectionRegistryTest, AddRemoveAndSize) {
  ConnectionRegistry registry;
  auto a = std::make_shared<FakeConnection>();
  auto b = std::make_shared<FakeConnection>();
  auto id_a = registry.Add(a, 10);
  auto id_b = registry.Add(b, 10);
  EXPECT_NE(id_a, 0u);
  EXPECT_NE(id_b, 0u);
  EXPECT_NE(id_a, id_b);
  EXPECT_EQ(registry.Size(), 2u);
  registry.Remove(id_a);
  EXPECT_EQ(registry.Size(), 1u);
  registry.Remove(id_a);  // unknown now: ignored
  EXPECT_EQ(registry.Size(), 1u);
}

TEST(ConnectionRegistryTest, RefusesBeyondMaxConnections) {
  ConnectionRegistry registry;
  auto a = std::make_shared<FakeConnection>();
  auto b = std::make_shared<FakeConnection>();
  EXPECT_NE(registry.Add(a, 1), 0u);
  EXPECT_EQ(registry.Add(b, 1), 0u);
  EXPECT_EQ(registry.Size(), 1u);
}

TEST(ConnectionRegistryTest, CloseAllReachesLiveConnectionsAndClosesRegistry) {
  ConnectionRegistry registry;
  auto a = std::make_shared<FakeConnection>();
  auto gone = std::make_shared<FakeConnection>();
  registry.Add(a, 10);
  registry.Add(gone, 10);
  gone.reset();  // expired weak reference: skipped, not crashed on
  registry.CloseAll(CloseMode::kGraceful);
  registry.CloseAll(CloseMode::kForce);
  ASSERT_EQ(a->modes.size(), 2u);
  EXPECT_EQ(a->modes[0], CloseMode::kGraceful);
  EXPECT_EQ(a->modes[1], CloseMode::kForce);
  EXPECT_TRUE(registry.closed());
  auto late = std::make_shared<FakeConnection>();
  EXPECT_EQ(registry.Add(late, 10), 0u);
}

TEST(ConnectionRegistryTest, WaitUntilEmptyWakesOnLastRemove) {
  ConnectionRegistry registry;
  auto a = std::make_shared<FakeConnection>();
  auto id = registry.Add(a, 10);
  EXPECT_FALSE(registry.WaitUntilEmpty(20ms));
  std::thread remover([&] {
    std::this_thread::sleep_for(50ms);
    registry.Remove(id);
  });
  auto begin = std::chrono::steady_clock::now();
  EXPECT_TRUE(registry.WaitUntilEmpty(5s));
  EXPECT_LT(std::chrono::steady_clock::now() - begin, 2s);
  remover.join();
}

TEST(ConnectionRegistryTest, GuardUnregistersOnDestruction) {
  ConnectionRegistry registry;
  auto a = std::make_shared<FakeConnection>();
  {
    RegistryGuard guard;
    guard.Assign(&registry, registry.Add(a, 10));
    EXPECT_EQ(registry.Size(), 1u);
  }
  EXPECT_EQ(registry.Size(), 0u);
}

TEST(ConnectionRegistryTest, PerAddressCapCountsEachAddressAndFreesSlotsOnRemove) {
  ConnectionRegistry registry;
  auto a = std::make_shared<FakeConnection>();
  auto id1 = registry.Add(a, 10, "127.0.0.2", 2);
  auto id2 = registry.Add(a, 10, "127.0.0.2", 2);
  EXPECT_NE(id1, 0u);
  EXPECT_NE(id2, 0u);
  EXPECT_EQ(registry.Add(a, 10, "127.0.0.2", 2), 0u);  // third from the same address
  EXPECT_NE(registry.Add(a, 10, "127.0.0.1", 2), 0u);  // another address still gets in
  EXPECT_EQ(registry.CountFrom("127.0.0.2"), 2u);
  registry.Remove(id1);
  EXPECT_EQ(registry.CountFrom("127.0.0.2"), 1u);
  EXPECT_NE(registry.Add(a, 10, "127.0.0.2", 2), 0u);
  // 0 = no per-address cap; the global cap still holds.
  EXPECT_NE(registry.Add(a, 10, "127.0.0.3", 0), 0u);
  EXPECT_EQ(registry.Add(a, 4, "127.0.0.4", 0), 0u);
}

}  // namespace
}  // namespace tablestone::http
