// trellis CLI: the commands. Each takes the words after its name, prints its report to stdout and
// returns the exit status (0); failures throw (UsageError -> exit 2, anything else -> exit 1, both
// printed by main() as one `error: ...` line). Each help text is what `trellis <cmd> --help`
// prints before the registered-backends line; docs/cli.md quotes them verbatim.
#pragma once

#include <string>
#include <vector>

namespace trellis::cli {

std::string MainHelp();

std::string RunHelp();
int RunCommand(const std::vector<std::string>& args);

std::string BenchHelp();
int BenchCommand(const std::vector<std::string>& args);

std::string InspectHelp();
int InspectCommand(const std::vector<std::string>& args);

std::string BackendsHelp();
int BackendsCommand(const std::vector<std::string>& args);

/// Exit status 0 when every observed tensor is within tolerance, 1 when one differs.
std::string CompareHelp();
int CompareCommand(const std::vector<std::string>& args);

/// Writes the artifact's files; exit status 0.
std::string CodegenHelp();
int CodegenCommand(const std::vector<std::string>& args);

/// Exit status 0 when no case failed, 1 when one did (no `error:` line for failed cases: each is
/// reported on its own line of stdout).
std::string OnnxTestHelp();
int OnnxTestCommand(const std::vector<std::string>& args);

}  // namespace trellis::cli
