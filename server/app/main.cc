// tablestone: arguments -> Config -> Server; SIGINT/SIGTERM -> graceful stop.
// A first argument naming a data subcommand (tool_commands.h) runs that instead.
//
// Exit codes: 0 after a clean stop (or --help/--version), 1 when startup
// fails (data directory locked, port in use), 2 for a bad flag, variable or
// config file. A second SIGINT/SIGTERM during the drain exits at once (130).
#include <spdlog/spdlog.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "server/app/config.h"
#include "server/app/logging.h"
#include "server/app/server.h"
#include "server/app/tool_commands.h"

int main(int argc, char** argv) {
  using namespace tablestone::app;
  std::signal(SIGPIPE, SIG_IGN);  // a peer that vanished is an error code, not a signal

  std::vector<std::string> args(argv + 1, argv + argc);
  // `azurite ...` / `azurite-table ...` (a link's name or a first argument):
  // Azurite's command lines, config.h.
  std::string refused;
  const Personality personality = DetectPersonality(argc > 0 ? argv[0] : "tablestone", &args, &refused);
  if (!refused.empty()) {
    std::fprintf(stderr, "%s\n", refused.c_str());
    return kExitBadConfig;
  }
  // `tablestone export ...` and the other data subcommands; everything else
  // is the server's command line, parsed as before.
  if (personality == Personality::kTablestone && IsToolCommand(args)) return RunToolCommand(args, stdout, stderr);
  // `tablestone help [COMMAND]` and `--help-all` (the server's flags, then
  // every data command's options); --help, --version, -v and `version` are
  // LoadConfig's.
  if (personality == Personality::kTablestone && !args.empty() && (args[0] == "help" || args[0] == "--help-all")) {
    // `tablestone help faults add` too: the names, then --help.
    if (args[0] == "help" && args.size() >= 2 && IsToolCommand({args[1]})) {
      std::vector<std::string> names(args.begin() + 1, args.end());
      names.push_back("--help");
      return RunToolCommand(names, stdout, stderr);
    }
    if (args.size() > 2 || (args.size() == 2 && args[0] == "--help-all")) {
      std::fprintf(stderr, "tablestone: %s takes at most one command name\n", args[0].c_str());
      return kExitBadConfig;
    }
    if (args.size() == 2) {
      std::fprintf(stderr, "tablestone: no command '%s'; the commands are %s\n", args[1].c_str(),
                   ToolCommandList().c_str());
      return kExitBadConfig;
    }
    std::fputs(HelpText().c_str(), stdout);
    if (args[0] == "help") return kExitOk;
    std::fputs("\n", stdout);
    return RunToolCommand({"--help-all"}, stdout, stderr);
  }
  LoadResult loaded = LoadConfig(args, ProcessEnvironment(), personality);
  if (loaded.action == LoadResult::Action::kExit) {
    FILE* stream = loaded.exit_code == 0 ? stdout : stderr;
    std::fputs(loaded.output.c_str(), stream);
    if (!loaded.output.empty() && loaded.output.back() != '\n') std::fputc('\n', stream);
    return loaded.exit_code;
  }

  std::string error;
  if (!SetupLogging(loaded.config.logging, &error)) {
    std::fprintf(stderr, "tablestone: %s\n", error.c_str());
    return kExitBadConfig;
  }
  for (const auto& warning : loaded.warnings) spdlog::warn("{}", warning);

  // Signals are caught from here on, before any server thread starts, so an
  // early SIGTERM still takes the graceful path.
  boost::asio::io_context signal_context(1);
  boost::asio::signal_set signals(signal_context, SIGINT, SIGTERM);

  Server server(loaded.config);
  if (!server.Start(&error)) {
    LogStartupFailure(error);
    ShutdownLogging();
    return kExitStartupFailed;
  }

  int received = 0;
  signals.async_wait([&received](const boost::system::error_code& ec, int signal) {
    if (!ec) received = signal;
  });
  signal_context.run();  // returns after the first signal
  spdlog::info("received {}, shutting down", received == SIGINT ? "SIGINT" : "SIGTERM");

  // A second signal while draining: the operator wants out now.
  signal_context.restart();
  signals.async_wait([](const boost::system::error_code& ec, int) {
    if (ec) return;
    std::fputs("tablestone: second signal, exiting without draining\n", stderr);
    std::_Exit(130);
  });
  std::thread second_signal([&signal_context] { signal_context.run(); });

  server.Stop();

  signals.cancel();
  signal_context.stop();
  second_signal.join();
  ShutdownLogging();
  return kExitOk;
}
