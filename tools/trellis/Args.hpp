// trellis CLI: command-line parsing shared by every command.
//
// Contract: the parser knows each command's options up front (OptionSpec). Anything it does not
// know, a missing value, a repeated single-use option, a malformed number/shape/backend list, or a
// wrong number of positional arguments throws UsageError, which main() turns into one
// `error: ...` line and exit status 2. Options take their value as `--name VALUE` or
// `--name=VALUE`; `--help`/`-h` is always accepted and sets ParsedArgs::m_Help.
#pragma once

#include <trellis/Types.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace trellis::cli {

/// A command-line mistake (exit status 2). The message names the option and the rule.
class UsageError : public std::runtime_error {
public:
    explicit UsageError(const std::string& message) : std::runtime_error(message) {}
};

struct OptionSpec {
    std::string m_Name;          ///< without the leading "--"
    bool m_TakesValue = true;    ///< false: a flag (--json)
    bool m_Repeatable = false;   ///< true: may be given several times (--input, --shape)
};

struct ParsedArgs {
    bool m_Help = false;
    std::vector<std::string> m_Positionals;
    /// Option name -> every value given, in command-line order (flags get one empty value).
    std::map<std::string, std::vector<std::string>> m_Values;

    bool Has(const std::string& name) const { return m_Values.count(name) != 0; }
    /// The value of a single-use option, or nullopt when it was not given.
    std::optional<std::string> Get(const std::string& name) const;
    /// Every value of a repeatable option (empty when not given).
    std::vector<std::string> GetAll(const std::string& name) const;
};

/// Parses `args` (the words after the command name) for `command` ("run", "bench", ...).
ParsedArgs ParseArgs(const std::vector<std::string>& args, const std::vector<OptionSpec>& specs,
                     const std::string& command);

/// Exactly one positional argument (the model path) or UsageError.
std::string RequireModelPath(const ParsedArgs& args, const std::string& command);

/// A decimal unsigned integer in [minValue, maxValue], or UsageError naming `--option`.
uint64_t ParseUnsigned(const std::string& text, const std::string& option, uint64_t minValue,
                       uint64_t maxValue);

/// A byte count: decimal digits, optionally followed by K, M, G or T (powers of 1024: "512M" is
/// 536870912), fitting 64 bits; UsageError naming `--option` otherwise.
uint64_t ParseByteCount(const std::string& text, const std::string& option);

/// "NAME=AxBxC" -> (NAME, shape). Dims are decimal, 0 allowed (empty tensor); UsageError otherwise.
std::pair<std::string, TensorShape> ParseShapeOption(const std::string& text);
/// Every --shape value; a name given twice is a UsageError.
std::map<std::string, TensorShape> ParseShapeOptions(const std::vector<std::string>& texts);

/// "NAME=VALUE" split at the first '=' (both parts non-empty), or UsageError naming `--option`.
std::pair<std::string, std::string> ParseNameValue(const std::string& text, const std::string& option);

/// "CpuAcc,CpuRef" -> ids in order. Empty entries and duplicates are UsageErrors. Whether the ids
/// are registered is checked later (dynamic backends register when the runtime is created).
BackendIdVector ParseBackendList(const std::string& text);

}  // namespace trellis::cli
