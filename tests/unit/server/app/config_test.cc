#include "server/app/config.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netdb.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "server/app/settings.h"

namespace tablestone::app {
namespace {

using Args = std::vector<std::string>;

class TempFile {
 public:
  explicit TempFile(const std::string& content) {
    char name[] = "/tmp/tablestone_config_XXXXXX";
    int fd = mkstemp(name);
    path_ = name;
    ::write(fd, content.data(), content.size());
    ::close(fd);
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string ReadSourceFile(const std::string& relative) {
  std::ifstream in(std::string(TABLESTONE_SOURCE_DIR) + "/" + relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

LoadResult Load(const Args& args, const Environment& env = {}) { return LoadConfig(args, env); }

void ExpectRefused(const LoadResult& r, const std::string& must_mention) {
  EXPECT_EQ(r.action, LoadResult::Action::kExit);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find(must_mention), std::string::npos) << r.output;
}

TEST(ConfigTest, DefaultsWithoutAnySource) {
  LoadResult r = Load({});
  ASSERT_EQ(r.action, LoadResult::Action::kRun) << r.output;
  const Config& c = r.config;
  EXPECT_EQ(c.host, "127.0.0.1");
  EXPECT_EQ(c.port, 10002);
  EXPECT_EQ(c.location, "./data");
  EXPECT_FALSE(c.in_memory);
  EXPECT_EQ(c.durability, "default");
  EXPECT_EQ(c.scan_cache_mb, 64u);
  EXPECT_EQ(c.ToEngineOptions().scan_cache_bytes, 64u << 20);
  ASSERT_EQ(c.accounts.size(), 1u);
  EXPECT_EQ(c.accounts[0].name, "devstoreaccount1");
  EXPECT_EQ(c.accounts[0].keys, std::vector<std::string>{kDevAccountKey});
  EXPECT_EQ(c.max_body_bytes, 4u * 1024 * 1024 + 64 * 1024);
  EXPECT_EQ(c.max_header_bytes, 16u * 1024);
  EXPECT_EQ(c.threads, 0u);
  EXPECT_EQ(c.logging.level, "info");
  EXPECT_TRUE(c.logging.access_log);
  EXPECT_FALSE(c.allow_anonymous);
  EXPECT_TRUE(c.config_file.empty());
  EXPECT_TRUE(r.warnings.empty());
}

TEST(ConfigTest, NoUiFlagAndDevKeyOnlyOnLoopback) {
  LoadResult on = Load({});
  ASSERT_EQ(on.action, LoadResult::Action::kRun) << on.output;
  EXPECT_TRUE(on.config.ToApiOptions().ui);
  EXPECT_TRUE(on.config.ToApiOptions().ui_dev_key);
  LoadResult off = Load({"--noUi"});
  ASSERT_EQ(off.action, LoadResult::Action::kRun) << off.output;
  EXPECT_FALSE(off.config.ui);
  EXPECT_FALSE(off.config.ToApiOptions().ui);
  EXPECT_EQ(Load({"--noUi=true"}).action, LoadResult::Action::kExit);  // a fixed flag takes no value
  LoadResult wide = Load({"--tableHost", "0.0.0.0"});
  ASSERT_EQ(wide.action, LoadResult::Action::kRun) << wide.output;
  EXPECT_FALSE(wide.config.ToApiOptions().ui_dev_key);
  LoadResult localhost = Load({"--tableHost", "localhost"});
  ASSERT_EQ(localhost.action, LoadResult::Action::kRun) << localhost.output;
  EXPECT_TRUE(localhost.config.ToApiOptions().ui_dev_key);
  Config other;
  other.accounts = {{kDevAccountName, {"b3RoZXIta2V5LW5vdC10aGUtcHVibGlzaGVkLW9uZQ=="}}};
  EXPECT_FALSE(other.ToApiOptions().ui_dev_key);  // the dev account with another key
}

// Azurite listens on a host name it is given; so does tablestone, on the
// name's first address (IPv4 first). The machine's own name resolves on any
// host with a usual /etc/hosts; the test skips, saying so, where it does not.
TEST(ConfigTest, HostNamesResolveToTheAddressBound) {
  char name[256] = {};
  ASSERT_EQ(gethostname(name, sizeof(name) - 1), 0);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(name, nullptr, &hints, &found) != 0) GTEST_SKIP() << "this machine's name " << name << " does not resolve";
  freeaddrinfo(found);
  LoadResult r = Load({"--tableHost", name});
  ASSERT_EQ(r.action, LoadResult::Action::kRun) << r.output;
  unsigned char buf[sizeof(in6_addr)];
  EXPECT_TRUE(inet_pton(AF_INET, r.config.host.c_str(), buf) == 1 || inet_pton(AF_INET6, r.config.host.c_str(), buf) == 1)
      << r.config.host;
  ExpectRefused(Load({"--tableHost", "no-such-host.invalid"}), "is neither an IP address nor a host name");
}

TEST(ConfigTest, PrecedenceIsFileThenEnvironmentThenFlags) {
  TempFile file(R"({"listen": {"port": 1111, "host": "0.0.0.0"}, "threads": 3,
                    "storage": {"location": "/from-file", "durability": "fsync"}})");
  Environment env = {{"TABLESTONE_PORT", "2222"}, {"TABLESTONE_LOCATION", "/from-env"}};
  LoadResult r = Load({"--config", file.path(), "--tablePort", "3333"}, env);
  ASSERT_EQ(r.action, LoadResult::Action::kRun) << r.output;
  EXPECT_EQ(r.config.port, 3333);               // flag beats env and file
  EXPECT_EQ(r.config.location, "/from-env");    // env beats file
  EXPECT_EQ(r.config.threads, 3u);              // file beats default
  EXPECT_EQ(r.config.host, "0.0.0.0");
  EXPECT_EQ(r.config.durability, "fsync");
  EXPECT_EQ(r.config.config_file, file.path());
}

TEST(ConfigTest, ConfigFileFromEnvironmentAndFlagOrderLastWins) {
  TempFile file(R"({"logging": {"level": "warn"}})");
  LoadResult r = Load({"--logLevel", "debug", "--logLevel=ERROR"}, {{"TABLESTONE_CONFIG", file.path()}});
  ASSERT_EQ(r.action, LoadResult::Action::kRun) << r.output;
  EXPECT_EQ(r.config.logging.level, "error");  // case-insensitive, normalised
  EXPECT_EQ(r.config.config_file, file.path());
}

TEST(ConfigTest, UnknownFileKeyIsRefusedWithItsName) {
  TempFile nested(R"({"listen": {"prot": 1}})");
  ExpectRefused(Load({"--config", nested.path()}), "unknown key 'listen.prot'");
  TempFile top(R"({"listenPort": 1})");
  ExpectRefused(Load({"--config", top.path()}), "unknown key 'listenPort'");
  TempFile account(R"({"accounts": [{"name": "abc", "keys": ["a2V5"], "kind": "x"}]})");
  ExpectRefused(Load({"--config", account.path()}), "unknown key 'kind'");
}

TEST(ConfigTest, BadFileValuesAreRefusedWithKeyAndExpectation) {
  TempFile range(R"({"listen": {"port": 70000}})");
  ExpectRefused(Load({"--config", range.path()}), "'listen.port' must be an integer between 0 and 65535");
  TempFile type(R"({"listen": {"port": "10002"}})");
  ExpectRefused(Load({"--config", type.path()}), "'listen.port'");
  TempFile negative(R"({"threads": -1})");
  ExpectRefused(Load({"--config", negative.path()}), "'threads'");
  TempFile choice(R"({"storage": {"durability": "sometimes"}})");
  ExpectRefused(Load({"--config", choice.path()}), "'storage.durability' must be one of 'default' or 'fsync'");
  TempFile group(R"({"limits": 5})");
  ExpectRefused(Load({"--config", group.path()}), "'limits' must be an object");
  TempFile boolean(R"({"api": {"loose": "yes"}})");
  ExpectRefused(Load({"--config", boolean.path()}), "'api.loose' must be true or false");
  TempFile host(R"({"listen": {"host": "no-such-host.invalid"}})");
  ExpectRefused(Load({"--config", host.path()}), "'listen.host' is neither an IP address nor a host name");
  TempFile broken(R"({"listen": )");
  ExpectRefused(Load({"--config", broken.path()}), "is not valid JSON");
  ExpectRefused(Load({"--config", "/nonexistent/tablestone.json"}), "cannot read config file");
}

TEST(ConfigTest, BadEnvironmentValuesNameTheVariable) {
  ExpectRefused(Load({}, {{"TABLESTONE_DURABILITY", "sometimes"}}), "TABLESTONE_DURABILITY='sometimes'");
  ExpectRefused(Load({}, {{"TABLESTONE_PORT", "-5"}}), "TABLESTONE_PORT");
  ExpectRefused(Load({}, {{"TABLESTONE_ACCESS_LOG", "maybe"}}), "must be true or false");
}

TEST(ConfigTest, EmptyEnvironmentValuesCountAsUnset) {
  LoadResult r = Load({}, {{"TABLESTONE_PORT", ""}, {"AZURITE_ACCOUNTS", ""}});
  ASSERT_EQ(r.action, LoadResult::Action::kRun) << r.output;
  EXPECT_EQ(r.config.port, 10002);
  EXPECT_EQ(r.config.accounts.size(), 1u);
}

TEST(ConfigTest, UnknownTablestoneVariableIsAWarningOnly) {
  LoadResult r = Load({}, {{"TABLESTONE_PROT", "1"}});
  ASSERT_EQ(r.action, LoadResult::Action::kRun);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("TABLESTONE_PROT"), std::string::npos);
}

TEST(ConfigTest, BadFlagsAreRefused) {
  ExpectRefused(Load({"--tablePrt", "1"}), "unknown flag '--tablePrt'");
  ExpectRefused(Load({"--threads", "abc"}), "flag --threads 'abc' must be an integer between 0 and 1024");
  ExpectRefused(Load({"--tablePort"}), "flag --tablePort needs a value");
  ExpectRefused(Load({"--durability", "never"}), "must be one of 'default' or 'fsync'");
  ExpectRefused(Load({"--scanCacheMB", "-1"}), "--scanCacheMB");
  ExpectRefused(Load({"--scanCacheMB", "2000000"}), "must be an integer between 0 and 1048576");
  ExpectRefused(Load({"--silent=no"}), "takes no value");
  ExpectRefused(Load({"stray"}), "unexpected argument 'stray'");
  ExpectRefused(Load({"--maxBodyBytes", "12"}), "--maxBodyBytes");
}

TEST(ConfigTest, AzuriteFlagsMapOrAreIgnoredWithWarning) {
  LoadResult r = Load({"--blobHost", "0.0.0.0", "--blobPort", "10000", "--disableTelemetry", "-l", "/tmp/x",
                       "-L", "--inMemoryPersistence", "-s", "-d", "/tmp/debug.log", "--skipApiVersionCheck",
                       "--disableProductStyleUrl", "--tableHost", "localhost", "--tableKeepAliveTimeout", "5",
                       "--extentMemoryLimit", "50"});
  ASSERT_EQ(r.action, LoadResult::Action::kRun) << r.output;
  // The Blob flags warn (not started as `azurite`); --disableTelemetry and
  // --extentMemoryLimit have their Azurite meaning, which here is nothing to do.
  EXPECT_EQ(r.warnings.size(), 2u);
  EXPECT_FALSE(r.config.sibling_ports);
  EXPECT_EQ(r.config.blob_host, "127.0.0.1");
  EXPECT_EQ(r.config.location, "/tmp/x");
  EXPECT_TRUE(r.config.loose);
  EXPECT_TRUE(r.config.in_memory);
  EXPECT_FALSE(r.config.logging.access_log);
  EXPECT_EQ(r.config.logging.debug_file, "/tmp/debug.log");
  EXPECT_TRUE(r.config.skip_api_version_check);
  EXPECT_TRUE(r.config.disable_product_style_url);
  EXPECT_EQ(r.config.host, "127.0.0.1");  // localhost normalised
  EXPECT_EQ(r.config.idle_timeout_ms, 5000u);
  EXPECT_EQ(r.config.port, 10002);  // --blobPort did not touch the table port
}

TEST(ConfigTest, StartedAsAzuriteTheBlobAndQueueFlagsPlaceTheSiblingPorts) {
  // Testcontainers' command line (entrypoint azurite).
  LoadResult r = LoadConfig({"--blobHost", "0.0.0.0", "--blobPort", "20000", "--queueHost", "localhost",
                             "--queuePort=20001", "--tableHost", "0.0.0.0", "--inMemoryPersistence",
                             "--extentMemoryLimit", "12.5"},
                            {}, Personality::kAzurite);
  ASSERT_EQ(r.action, LoadResult::Action::kRun) << r.output;
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_TRUE(r.config.sibling_ports);
  EXPECT_EQ(r.config.blob_host, "0.0.0.0");
  EXPECT_EQ(r.config.blob_port, 20000);
  EXPECT_EQ(r.config.queue_host, "127.0.0.1");  // localhost normalised, as --tableHost
  EXPECT_EQ(r.config.queue_port, 20001);
  EXPECT_EQ(r.config.port, 10002);
  // Defaults are Azurite's.
  LoadResult d = LoadConfig({}, {}, Personality::kAzurite);
  EXPECT_TRUE(d.config.sibling_ports);
  EXPECT_EQ(d.config.blob_port, 10000);
  EXPECT_EQ(d.config.queue_port, 10001);
  // azurite-table: the Table service only, the Blob flags warned about.
  LoadResult t = LoadConfig({"--blobPort", "1"}, {}, Personality::kAzuriteTable);
  EXPECT_FALSE(t.config.sibling_ports);
  EXPECT_EQ(t.warnings.size(), 1u);
  // Values are checked like the Table port's.
  ExpectRefused(LoadConfig({"--blobPort", "65536"}, {}, Personality::kAzurite), "--blobPort '65536'");
  ExpectRefused(LoadConfig({"--queueHost", "example.com"}, {}, Personality::kAzurite), "--queueHost");
  ExpectRefused(LoadConfig({"--blobHost"}, {}, Personality::kAzurite), "--blobHost needs a value");
  ExpectRefused(Load({"--extentMemoryLimit", "-1"}), "--extentMemoryLimit '-1'");
  ExpectRefused(Load({"--extentMemoryLimit", "1e9"}), "megabytes");
  ExpectRefused(Load({"--extentMemoryLimit"}), "needs a value");
  ExpectRefused(Load({"--disableTelemetry=yes"}), "takes no value");
}

TEST(ConfigTest, AzuriteSkipApiVersionCheckVariableIsReadAsAzuriteReadsIt) {
  EXPECT_TRUE(Load({}, {{"AZURITE_SKIP_API_VERSION_CHECK", "true"}}).config.skip_api_version_check);
  // Only the exact text "true" turns the check off in Azurite.
  for (const char* other : {"TRUE", "1", "yes", "", "false"}) {
    LoadResult r = Load({}, {{"AZURITE_SKIP_API_VERSION_CHECK", other}});
    ASSERT_EQ(r.action, LoadResult::Action::kRun) << r.output;
    EXPECT_FALSE(r.config.skip_api_version_check) << other;
  }
  // Flags still win over the environment.
  EXPECT_FALSE(Load({"--skipApiVersionCheck=false"}, {{"AZURITE_SKIP_API_VERSION_CHECK", "true"}})
                   .config.skip_api_version_check);
}

TEST(ConfigTest, PersonalityFollowsTheProgramNameOrAFirstArgument) {
  std::string refused;
  Args args = {"--tablePort", "1"};
  EXPECT_EQ(DetectPersonality("/usr/bin/azurite", &args, &refused), Personality::kAzurite);
  EXPECT_EQ(args.size(), 2u);
  EXPECT_EQ(DetectPersonality("azurite-table", &args, &refused), Personality::kAzuriteTable);
  EXPECT_EQ(DetectPersonality("/usr/bin/tablestone", &args, &refused), Personality::kTablestone);
  // An entrypoint of tablestone given Azurite's whole command line.
  Args command = {"azurite", "-l", "/data", "--blobHost", "0.0.0.0"};
  EXPECT_EQ(DetectPersonality("/usr/bin/tablestone", &command, &refused), Personality::kAzurite);
  EXPECT_EQ(command, (Args{"-l", "/data", "--blobHost", "0.0.0.0"}));
  Args table_only = {"azurite-table", "--loose"};
  EXPECT_EQ(DetectPersonality("tablestone", &table_only, &refused), Personality::kAzuriteTable);
  EXPECT_EQ(table_only, Args{"--loose"});
  // Only the first argument counts; a flag value named azurite stays.
  Args later = {"-l", "azurite"};
  EXPECT_EQ(DetectPersonality("tablestone", &later, &refused), Personality::kTablestone);
  EXPECT_EQ(later.size(), 2u);
  EXPECT_TRUE(refused.empty());
  // The Blob or Queue service alone cannot be started here: said plainly.
  for (const char* name : {"azurite-blob", "azurite-queue"}) {
    Args none;
    DetectPersonality(std::string("/usr/local/bin/") + name, &none, &refused);
    EXPECT_NE(refused.find("Table service only"), std::string::npos) << name;
    Args first = {name};
    DetectPersonality("tablestone", &first, &refused);
    EXPECT_NE(refused.find(name), std::string::npos);
  }
}

TEST(ConfigTest, BooleanFlagsTakeExplicitValuesOnlyWithEquals) {
  LoadResult r = Load({"--loose=false", "--allowAnonymous", "--accessLog=false"}, {{"TABLESTONE_LOOSE", "true"}});
  ASSERT_EQ(r.action, LoadResult::Action::kRun) << r.output;
  EXPECT_FALSE(r.config.loose);
  EXPECT_TRUE(r.config.allow_anonymous);
  EXPECT_FALSE(r.config.logging.access_log);
}

TEST(ConfigTest, AzuriteAccountsReplacesTheDefaultList) {
  LoadResult r = Load({}, {{"AZURITE_ACCOUNTS", "account1:a2V5MQ==:a2V5Mg==; account2:a2V5Mw==;"}});
  ASSERT_EQ(r.action, LoadResult::Action::kRun) << r.output;
  ASSERT_EQ(r.config.accounts.size(), 2u);
  EXPECT_EQ(r.config.accounts[0].name, "account1");
  EXPECT_EQ(r.config.accounts[0].keys, (std::vector<std::string>{"a2V5MQ==", "a2V5Mg=="}));
  EXPECT_EQ(r.config.accounts[1].name, "account2");
  EXPECT_EQ(r.config.accounts[1].keys, (std::vector<std::string>{"a2V5Mw=="}));
}

TEST(ConfigTest, AzuriteAccountsOverridesFileAccounts) {
  TempFile file(R"({"accounts": [{"name": "fileaccount", "keys": ["a2V5"]}]})");
  LoadResult from_file = Load({"--config", file.path()});
  ASSERT_EQ(from_file.action, LoadResult::Action::kRun) << from_file.output;
  ASSERT_EQ(from_file.config.accounts.size(), 1u);
  EXPECT_EQ(from_file.config.accounts[0].name, "fileaccount");
  LoadResult from_env = Load({"--config", file.path()}, {{"AZURITE_ACCOUNTS", "envaccount:a2V5"}});
  ASSERT_EQ(from_env.action, LoadResult::Action::kRun) << from_env.output;
  EXPECT_EQ(from_env.config.accounts[0].name, "envaccount");
}

TEST(ConfigTest, AzuriteAccountsErrors) {
  std::vector<api::AccountKeys> accounts;
  std::string error;
  EXPECT_FALSE(ParseAccountsEnv("nokey", &accounts, &error));
  EXPECT_NE(error.find("name:key1[:key2]"), std::string::npos) << error;
  EXPECT_FALSE(ParseAccountsEnv("Bad_Name:a2V5", &accounts, &error));
  EXPECT_NE(error.find("Bad_Name"), std::string::npos) << error;
  EXPECT_FALSE(ParseAccountsEnv("acc:not*base64", &accounts, &error));
  EXPECT_NE(error.find("base64"), std::string::npos) << error;
  EXPECT_FALSE(ParseAccountsEnv("acc:a2V5;acc:a2V5", &accounts, &error));
  EXPECT_NE(error.find("twice"), std::string::npos) << error;
  EXPECT_FALSE(ParseAccountsEnv("acc:a2V5:a2V5:a2V5", &accounts, &error));
  EXPECT_FALSE(ParseAccountsEnv(";;", &accounts, &error));  // no account at all
  ExpectRefused(Load({}, {{"AZURITE_ACCOUNTS", "x"}}), "AZURITE_ACCOUNTS");
}

TEST(ConfigTest, HelpListsEveryFlagDefaultAndVariable) {
  LoadResult r = Load({"--tablePort", "1", "--help"});
  EXPECT_EQ(r.action, LoadResult::Action::kExit);
  EXPECT_EQ(r.exit_code, 0);
  const std::string& help = r.output;
  for (const char* flag :
       {"--tableHost", "--tablePort", "-l, --location", "--inMemoryPersistence", "-s, --silent", "-d, --debug",
        "-L, --loose", "--skipApiVersionCheck", "--disableProductStyleUrl", "--config", "--durability", "--threads",
        "--logLevel", "--logFormat", "--help", "--version", "--allowAnonymous", "--maxBodyBytes",
        "--maxHeaderBytes", "--maxConnections", "--maxConnectionsPerAddress", "--firstByteTimeoutMs",
        "--handshakeTimeoutMs", "--idleTimeoutMs", "--readTimeoutMs", "--drainTimeoutMs",
        "--queryPageMs", "--accessLog", "--tableKeepAliveTimeout", "AZURITE_ACCOUNTS", "TABLESTONE_CONFIG",
        "--blockCacheMB", "--scanCacheMB", "--entityCacheMB", "--writeThreads", "--scanThreads", "--scanNice",
        "--scanBurstUs", "--queuedRequests",
        "--disableTelemetry", "--blobHost"}) {
    EXPECT_NE(help.find(flag), std::string::npos) << "missing " << flag;
  }
  for (const auto& setting : internal::Settings()) {
    EXPECT_NE(help.find(std::string(setting.env)), std::string::npos) << setting.env;
    EXPECT_NE(help.find("Config: " + std::string(setting.path)), std::string::npos) << setting.path;
  }
  EXPECT_NE(help.find("Default: 10002"), std::string::npos);
  EXPECT_NE(help.find("Default: 127.0.0.1"), std::string::npos);

  LoadResult v = Load({"--version"});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.output.rfind("tablestone ", 0), 0u);
  for (const char* alias : {"-v", "version"}) {
    LoadResult a = Load({alias});
    EXPECT_EQ(a.action, LoadResult::Action::kExit) << alias;
    EXPECT_EQ(a.exit_code, 0) << alias;
    EXPECT_EQ(a.output, v.output) << alias;
  }
  EXPECT_EQ(Load({"--location", "version"}).action, LoadResult::Action::kRun);  // a value, not the command
}

// The help fits a 100-column terminal and groups the flags under headings.
TEST(ConfigTest, HelpIsWrappedAndGrouped) {
  const std::string help = HelpText();
  std::istringstream lines(help);
  int n = 0;
  for (std::string line; std::getline(lines, line); ++n) EXPECT_LE(line.size(), 100u) << line;
  EXPECT_GT(n, 80);
  size_t listen = help.find("\nListening and HTTPS:\n"), storage = help.find("\nData and storage:\n"),
         logging = help.find("\nLogging:\n"), faults = help.find("\nFault injection");
  ASSERT_NE(listen, std::string::npos);
  ASSERT_NE(storage, std::string::npos);
  ASSERT_NE(logging, std::string::npos);
  ASSERT_NE(faults, std::string::npos);
  EXPECT_LT(listen, help.find("--tablePort"));
  EXPECT_LT(help.find("--tablePort"), storage);
  EXPECT_LT(storage, help.find("--blockCacheMB"));
  EXPECT_LT(logging, help.find("--logFormat"));
  EXPECT_LT(faults, help.find("--faultSeed"));
}

TEST(ConfigTest, ProjectionsCarryEveryValue) {
  LoadResult r = Load({"--tableHost", "0.0.0.0", "--tablePort", "0", "--threads", "4", "--maxBodyBytes", "2048",
                       "--maxHeaderBytes", "4096", "--maxConnections", "7", "--maxConnectionsPerAddress", "6",
                       "--firstByteTimeoutMs", "15", "--handshakeTimeoutMs", "16", "--idleTimeoutMs", "11",
                       "--readTimeoutMs", "12", "--drainTimeoutMs", "13", "--queryPageMs", "14", "-s",
                       "--durability", "fsync", "-l", "/d", "--inMemoryPersistence", "-L", "--allowAnonymous",
                       "--blockCacheMB", "5", "--scanCacheMB", "0", "--entityCacheMB", "3", "--writeThreads", "3",
                       "--scanThreads", "5", "--scanNice", "7", "--scanBurstUs", "250", "--queuedRequests", "99",
                       "--skipApiVersionCheck", "--disableProductStyleUrl"});
  ASSERT_EQ(r.action, LoadResult::Action::kRun) << r.output;
  http::HttpOptions h = r.config.ToHttpOptions();
  EXPECT_EQ(h.address, "0.0.0.0");
  EXPECT_EQ(h.port, 0);
  EXPECT_EQ(h.threads, 4);
  EXPECT_EQ(h.body_limit, 2048u);
  EXPECT_EQ(h.header_limit, 4096u);
  EXPECT_EQ(h.max_connections, 7u);
  EXPECT_EQ(h.max_connections_per_address, 6u);
  EXPECT_EQ(h.first_byte_timeout.count(), 15);
  EXPECT_EQ(h.handshake_timeout.count(), 16);
  EXPECT_EQ(h.idle_timeout.count(), 11);
  EXPECT_EQ(h.read_timeout.count(), 12);
  EXPECT_EQ(h.drain_timeout.count(), 13);
  EXPECT_FALSE(h.access_log);
  api::ApiOptions a = r.config.ToApiOptions();
  EXPECT_EQ(a.query_time_budget.count(), 14);
  EXPECT_EQ(a.scan_cpu_burst.count(), 250);
  EXPECT_EQ(a.scan_nice, 7);  // the scans' give-way, relative to point requests
  EXPECT_TRUE(a.loose);
  EXPECT_TRUE(a.allow_anonymous);
  EXPECT_TRUE(a.skip_api_version_check);
  EXPECT_TRUE(a.disable_product_style_url);
  EXPECT_EQ(a.accounts.size(), 1u);
  storage::EngineOptions e = r.config.ToEngineOptions();
  EXPECT_EQ(e.path, "/d");
  EXPECT_TRUE(e.in_memory);
  EXPECT_TRUE(e.sync_writes);
  EXPECT_EQ(e.block_cache_bytes, 5u << 20);
  EXPECT_EQ(e.scan_cache_bytes, 0u);
  EXPECT_EQ(e.entity_cache_bytes, 3u << 20);
  EXPECT_EQ(e.scan_build_nice, 0);  // the builder's queries' builds, at the long lane's priority
  exec::ExecutorOptions x = r.config.ToExecutorOptions();
  EXPECT_EQ(x.short_threads, 3);
  EXPECT_EQ(x.long_threads, 5);
  EXPECT_EQ(x.long_nice, 0);  // the query threads keep the default priority
  EXPECT_EQ(x.max_queued, 99u);
}

// The cache sizes (MiB in every source, bytes in EngineOptions): file, then
// environment, then flag; bad values refused with the setting's name.
struct CacheSetting {
  const char* key;   // under "storage" in the file
  const char* env;
  const char* flag;
  uint64_t default_mb;
  size_t storage::EngineOptions::*bytes;
};

TEST(ConfigTest, CacheSizesFromEveryLayer) {
  for (const CacheSetting& c :
       {CacheSetting{"blockCacheMB", "TABLESTONE_BLOCK_CACHE_MB", "--blockCacheMB", 64,
                     &storage::EngineOptions::block_cache_bytes},
        CacheSetting{"scanCacheMB", "TABLESTONE_SCAN_CACHE_MB", "--scanCacheMB", 64,
                     &storage::EngineOptions::scan_cache_bytes},
        CacheSetting{"entityCacheMB", "TABLESTONE_ENTITY_CACHE_MB", "--entityCacheMB", 16,
                     &storage::EngineOptions::entity_cache_bytes}}) {
    SCOPED_TRACE(c.key);
    EXPECT_EQ(Load({}).config.ToEngineOptions().*c.bytes, c.default_mb << 20);
    TempFile file(std::string(R"({"storage": {")") + c.key + R"(": 8}})");
    LoadResult r = Load({"--config", file.path()});
    ASSERT_EQ(r.action, LoadResult::Action::kRun) << r.output;
    EXPECT_EQ(r.config.ToEngineOptions().*c.bytes, 8u << 20);
    r = Load({"--config", file.path()}, {{c.env, "0"}});
    ASSERT_EQ(r.action, LoadResult::Action::kRun) << r.output;
    EXPECT_EQ(r.config.ToEngineOptions().*c.bytes, 0u);
    r = Load({"--config", file.path(), c.flag, "32"}, {{c.env, "0"}});
    ASSERT_EQ(r.action, LoadResult::Action::kRun) << r.output;
    EXPECT_EQ(r.config.ToEngineOptions().*c.bytes, 32u << 20);
    ExpectRefused(Load({c.flag, "2000000"}), "must be an integer between 0 and 1048576");
    TempFile bad(std::string(R"({"storage": {")") + c.key + R"(": "big"}})");
    ExpectRefused(Load({"--config", bad.path()}), std::string("'storage.") + c.key + "'");
  }
}

// The shipped default file must say exactly what the built-in defaults are.
// Half the descriptors go to table files, within [256, 16384]: 616 files of
// a 55M-entity table stay open under a limit of 20,000, and a 1,024 limit
// keeps the engine's former fixed 512.
TEST(ConfigTest, TableFilesKeptOpenIsHalfTheDescriptorLimitWithinBounds) {
  EXPECT_EQ(TableFilesKeptOpen(1024), 512);
  EXPECT_EQ(TableFilesKeptOpen(20000), 10000);
  EXPECT_EQ(TableFilesKeptOpen(256), 256);
  EXPECT_EQ(TableFilesKeptOpen(0), 256);
  EXPECT_EQ(TableFilesKeptOpen(1u << 20), 16384);
  EXPECT_EQ(TableFilesKeptOpen(UINT64_MAX), 16384);
  EXPECT_EQ(Config().ToEngineOptions().max_open_files, storage::EngineOptions().max_open_files);
}

TEST(ConfigFilesTest, DefaultConfigFileEqualsBuiltInDefaults) {
  LoadResult r = Load({"--config", std::string(TABLESTONE_SOURCE_DIR) + "/config/tablestone.json"});
  ASSERT_EQ(r.action, LoadResult::Action::kRun) << r.output;
  Config defaults;
  for (const auto& setting : internal::Settings()) {
    EXPECT_EQ(setting.show(r.config), setting.show(defaults)) << setting.path;
  }
  ASSERT_EQ(r.config.accounts.size(), 1u);
  EXPECT_EQ(r.config.accounts[0].name, defaults.accounts[0].name);
  EXPECT_EQ(r.config.accounts[0].keys, defaults.accounts[0].keys);
}

TEST(ConfigFilesTest, SchemaDescribesEveryKeyAndRefusesOthers) {
  auto schema = nlohmann::json::parse(ReadSourceFile("config/tablestone.schema.json"));
  EXPECT_EQ(schema.value("$schema", ""), "https://json-schema.org/draft/2020-12/schema");
  EXPECT_EQ(schema["additionalProperties"], false);
  for (const auto& setting : internal::Settings()) {
    std::string path(setting.path);
    const nlohmann::json* node = &schema;
    size_t start = 0;
    while (true) {
      size_t dot = path.find('.', start);
      std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      ASSERT_TRUE((*node)["properties"].contains(part)) << path;
      node = &(*node)["properties"][part];
      if (dot == std::string::npos) break;
      EXPECT_EQ((*node)["additionalProperties"], false) << path;
      start = dot + 1;
    }
    EXPECT_TRUE(node->contains("default")) << path;
    EXPECT_EQ(node->value("default", nlohmann::json()).dump(),
              nlohmann::json::parse(setting.kind == internal::Kind::kString ||
                                            setting.kind == internal::Kind::kChoice
                                        ? nlohmann::json(setting.show(Config{})).dump()
                                        : setting.show(Config{}))
                  .dump())
        << path;
  }
  EXPECT_TRUE(schema["properties"].contains("accounts"));
}

TEST(ConfigFilesTest, ReadmeDocumentsEveryKeyVariableAndFlag) {
  std::string readme = ReadSourceFile("config/README.md");
  ASSERT_FALSE(readme.empty());
  for (const auto& setting : internal::Settings()) {
    EXPECT_NE(readme.find("`" + std::string(setting.path) + "`"), std::string::npos) << setting.path;
    EXPECT_NE(readme.find(std::string(setting.env)), std::string::npos) << setting.env;
  }
  for (const char* must : {"AZURITE_ACCOUNTS", "TABLESTONE_CONFIG", "--config", "`accounts`"}) {
    EXPECT_NE(readme.find(must), std::string::npos) << must;
  }
}

}  // namespace
// Issue 30 item 2: no admin file may land inside the data directory.
TEST(ConfigTest, AdminDirectoriesStayOutsideTheDataDirectory) {
  ExpectRefused(Load({"-l", "/srv/ts-data", "--snapshotDir", "/srv/ts-data/snaps"}), "api.snapshotDir");
  ExpectRefused(Load({"-l", "/srv/ts-data", "--traceDir", "/srv/ts-data"}), "api.traceDir");
  ExpectRefused(Load({"-l", "/srv/ts-data", "--trace", "/srv/ts-data/CURRENT"}), "logging.trace");
  ExpectRefused(Load({"--snapshotDir", "/srv/x", "--traceDir", "/srv/x/"}), "different");
  ExpectRefused(Load({"--adminKey", "not base64!"}), "api.adminKey");
  ExpectRefused(Load({"--adminAccount", "nosuch"}), "api.adminAccount");
  const LoadResult r = Load({"-l", "/srv/ts-data", "--adminAccount", "devstoreaccount1"});
  ASSERT_EQ(r.action, LoadResult::Action::kRun) << r.output;
  const api::ApiOptions o = r.config.ToApiOptions();
  EXPECT_EQ(o.snapshot_dir, "/srv/ts-data.snapshots");
  EXPECT_EQ(o.trace_dir, "/srv/ts-data.traces");
  EXPECT_EQ(o.admin_account, "devstoreaccount1");
}

}  // namespace tablestone::app

namespace tablestone::app {
namespace {

// Cosmos DB for Table mode's settings (docs/cosmos-mode.md): flag, variable
// and file like every other, and the listeners' accounts kept apart.
TEST(ConfigTest, CosmosSettings) {
  const LoadResult d = LoadConfig({}, {});
  ASSERT_EQ(d.action, LoadResult::Action::kRun) << d.output;
  EXPECT_EQ(d.config.flavor, "storage");
  EXPECT_EQ(d.config.cosmos_port, 0);
  EXPECT_EQ(d.config.ToApiOptions().flavor.flavor, protocol::Flavor::kStorage);
  const api::ApiOptions emulator = d.config.ToCosmosApiOptions();
  ASSERT_EQ(emulator.accounts.size(), 1u);
  EXPECT_EQ(emulator.accounts[0].name, "localhost");
  EXPECT_EQ(emulator.default_account, "localhost");
  EXPECT_EQ(emulator.flavor.flavor, protocol::Flavor::kCosmos);
  EXPECT_FALSE(emulator.ui);
  EXPECT_FALSE(emulator.admin_api);
  EXPECT_EQ(emulator.table_creates_per_minute, 5u);  // the FAQ's "under 5 a minute"

  const LoadResult r = LoadConfig({"--flavor", "cosmos", "--cosmosPort", "8902", "--cosmosShuffle", "off",
                                   "--faultSeed", "9", "--cosmosRuPerSecond", "400",
                                   "--cosmosTableCreatesPerMinute", "12"},
                                  {});
  ASSERT_EQ(r.action, LoadResult::Action::kRun) << r.output;
  const api::ApiOptions main = r.config.ToApiOptions();
  EXPECT_EQ(main.flavor.flavor, protocol::Flavor::kCosmos);
  EXPECT_FALSE(main.flavor.shuffle);
  EXPECT_EQ(main.flavor.shuffle_seed, 9u);
  EXPECT_EQ(main.ru_per_second, 400u);
  EXPECT_EQ(main.table_creates_per_minute, 12u);
  EXPECT_EQ(r.config.ToCosmosApiOptions().table_creates_per_minute, 12u);
  EXPECT_EQ(r.config.cosmos_port, 8902);

  const LoadResult env = LoadConfig({}, {{"TABLESTONE_FLAVOR", "cosmos"}, {"TABLESTONE_COSMOS_PORT", "8902"},
                                         {"TABLESTONE_COSMOS_ACCOUNTS", std::string("other:") + kDevAccountKey}});
  ASSERT_EQ(env.action, LoadResult::Action::kRun) << env.output;
  EXPECT_EQ(env.config.ToCosmosApiOptions().accounts[0].name, "other");
}

TEST(ConfigTest, CosmosSettingsRefuseBadValues) {
  ExpectRefused(LoadConfig({"--flavor", "mongo"}, {}), "--flavor");
  ExpectRefused(LoadConfig({"--cosmosShuffle", "maybe"}, {}), "--cosmosShuffle");
  ExpectRefused(LoadConfig({"--cosmosPort", "65536"}, {}), "--cosmosPort");
  ExpectRefused(LoadConfig({"--cosmosAccounts", "localhost:not base64!"}, {}), "--cosmosAccounts");
  ExpectRefused(LoadConfig({"--cosmosAccounts", "UPPER:" + std::string(kDevAccountKey)}, {}), "--cosmosAccounts");
  ExpectRefused(LoadConfig({"--cosmosAccounts", ";"}, {}), "--cosmosAccounts");
  ExpectRefused(LoadConfig({"--cosmosRuPerSecond", "-1"}, {}), "--cosmosRuPerSecond");
  ExpectRefused(LoadConfig({"--cosmosTableCreatesPerMinute", "x"}, {}), "--cosmosTableCreatesPerMinute");
  ExpectRefused(LoadConfig({"--cosmosTableCreatesPerMinute", "1000001"}, {}), "--cosmosTableCreatesPerMinute");
  // An account on both listeners, or both listeners on one port.
  ExpectRefused(LoadConfig({"--cosmosPort", "8902", "--cosmosAccounts", std::string("devstoreaccount1:") + kDevAccountKey},
                           {}),
                "both");
  ExpectRefused(LoadConfig({"--cosmosPort", "10002"}, {}), "cosmos.port");
  // Without a Cosmos listener its accounts may be anything valid.
  EXPECT_EQ(LoadConfig({"--cosmosAccounts", std::string("devstoreaccount1:") + kDevAccountKey}, {}).action,
            LoadResult::Action::kRun);
}

}  // namespace
}  // namespace tablestone::app
