// `tablestone faults`' client side (server/app/fault_commands.h): rules from
// flags, the local check with the server's parser, the readable listing.
#include "server/app/fault_commands.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace tablestone::app {
namespace {

using json = nlohmann::json;

TEST(FaultRuleFromFlags, StatusAndErrorCodeChooseTheAction) {
  FaultFlags flags;
  flags.operations = {"InsertEntity"};
  flags.table = "orders";
  flags.account = "devstoreaccount1";
  flags.status = 503;
  flags.count = 2;
  json rule;
  std::string error;
  ASSERT_TRUE(FaultRuleFromFlags(flags, &rule, &error)) << error;
  EXPECT_EQ(rule, json::parse(R"({"action":"serverBusy","maxCount":2,
      "match":{"account":"devstoreaccount1","table":"orders","operation":"InsertEntity"}})"));
  EXPECT_TRUE(CheckFaultRules(rule, &error)) << error;

  flags = FaultFlags{};
  flags.error_code = "OperationTimedOut";
  ASSERT_TRUE(FaultRuleFromFlags(flags, &rule, &error)) << error;
  EXPECT_EQ(rule["action"], "timeoutBefore");
  flags.status = 500;
  flags.error_code = "InternalError";
  flags.operations = {"GetEntity", "QueryEntities"};
  ASSERT_TRUE(FaultRuleFromFlags(flags, &rule, &error)) << error;
  EXPECT_EQ(rule["action"], "internalErrorBefore");
  EXPECT_EQ(rule["match"]["operation"], json::parse(R"(["GetEntity","QueryEntities"])"));
  EXPECT_FALSE(rule.contains("maxCount"));

  flags = FaultFlags{};  // nothing: a serverBusy rule on every request
  ASSERT_TRUE(FaultRuleFromFlags(flags, &rule, &error)) << error;
  EXPECT_EQ(rule, json::parse(R"({"action":"serverBusy"})"));
}

TEST(FaultRuleFromFlags, RefusesWhatNoActionAnswers) {
  FaultFlags flags;
  json rule;
  std::string error;
  flags.status = 500;  // two error codes answer 500
  EXPECT_FALSE(FaultRuleFromFlags(flags, &rule, &error));
  EXPECT_NE(error.find("OperationTimedOut"), std::string::npos) << error;
  EXPECT_NE(error.find("InternalError"), std::string::npos) << error;
  flags.status = 404;
  EXPECT_FALSE(FaultRuleFromFlags(flags, &rule, &error));
  EXPECT_NE(error.find("503 ServerBusy"), std::string::npos) << error;
  flags.status = 503;
  flags.error_code = "InternalError";
  EXPECT_FALSE(FaultRuleFromFlags(flags, &rule, &error));
  flags = FaultFlags{};
  flags.status = 503;
  flags.action = "timeoutAfter";  // contradicts the status
  EXPECT_FALSE(FaultRuleFromFlags(flags, &rule, &error));
  EXPECT_NE(error.find("serverBusy"), std::string::npos) << error;
}

TEST(CheckFaultRules, RefusesWhatTheServerRefusesWithItsMessage) {
  std::string error;
  EXPECT_FALSE(CheckFaultRules(json::parse(R"({"action":"serverBusy","match":{"operation":"CreateTabel"}})"), &error));
  EXPECT_NE(error.find("CreateTabel"), std::string::npos) << error;
  EXPECT_NE(error.find("InsertEntity"), std::string::npos) << error;  // the list of names
  EXPECT_FALSE(CheckFaultRules(json::parse(R"({"action":"serverBusy","maxCuont":1})"), &error));
  EXPECT_FALSE(CheckFaultRules(json::parse(R"({"action":"explode"})"), &error));
  EXPECT_FALSE(CheckFaultRules(json::parse(R"({"action":"latencyBefore","latencyMs":1e300})"), &error));
  EXPECT_FALSE(CheckFaultRules(json::parse("42"), &error));
  json many = json::array();
  for (int i = 0; i < 1001; ++i) many.push_back({{"action", "serverBusy"}});
  EXPECT_FALSE(CheckFaultRules(many, &error));  // more than a server holds
  EXPECT_TRUE(CheckFaultRules(json::parse(R"({"seed":3,"rules":[{"action":"closeAfter","maxCount":1}]})"), &error))
      << error;
  // The same id twice in one add is refused by the server too.
  EXPECT_FALSE(CheckFaultRules(json::parse(R"([{"id":"a","action":"serverBusy"},{"id":"a","action":"serverBusy"}])"),
                               &error));
}

TEST(DescribeFaultListing, OneLinePerRuleWithCounts) {
  const json listing = json::parse(R"({"seed":7,"rules":[
      {"id":"r1","action":"serverBusy","match":{"table":"T","operation":["InsertEntity","MergeEntity"]},
       "probability":1.0,"maxCount":2,"matched":5,"injected":2},
      {"id":"slow","action":"latencyBefore","match":{"header":{"name":"x-test","value":"slow"}},
       "probability":0.5,"latencyMs":[200,800],"matched":0,"injected":0}],
      "realistic":{"enabled":false,"tableBeingDeletedMs":40000,"latencyMedianMs":0,
                   "scopes":{"devstoreaccount1/T":true}}})");
  EXPECT_EQ(DescribeFaultListing(listing),
            "r1  serverBusy  operation=InsertEntity,MergeEntity table=T  maxCount=2  matched 5, injected 2\n"
            "slow  latencyBefore  header=x-test:slow  latencyMs=[200,800]  probability=0.5  matched 0, injected 0\n"
            "realistic mode off, devstoreaccount1/T on (tableBeingDeletedMs 40000, latencyMedianMs 0); seed 7\n");
  EXPECT_EQ(DescribeFaultListing(json::parse(R"({"rules":[]})")), "no fault rules\n");
  // An unexpected shape prints, it does not throw.
  EXPECT_NO_THROW(DescribeFaultListing(json::parse(R"({"rules":[1,{"id":3}],"realistic":[]})")));
  EXPECT_NO_THROW(DescribeFaultListing(json::parse("[1,2]")));
}

}  // namespace
}  // namespace tablestone::app
