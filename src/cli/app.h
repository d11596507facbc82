#ifndef REGATTA_SRC_CLI_APP_H_
#define REGATTA_SRC_CLI_APP_H_

// The `regatta` command line: verbs, flags, help, output and exit codes.

#include <iosfwd>
#include <string>
#include <vector>

namespace regatta::cli {

// Exit codes.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;  // a call or the verb failed; one line on stderr
inline constexpr int kExitUsage = 2;   // bad command line; one line on stderr

// Runs the command line `args` (without the program name). `stdin_is_terminal` makes
// `users hash-password` prompt without echo.
int RunCli(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
           std::ostream& err, bool stdin_is_terminal = false);

// The whole of main(): RunCli on the process's arguments and standard streams, with every
// exception caught and reported as one line.
int Main(int argc, char** argv);

}  // namespace regatta::cli

#endif  // REGATTA_SRC_CLI_APP_H_
