#include "Args.hpp"

#include <charconv>
#include <set>

namespace trellis::cli {

std::optional<std::string> ParsedArgs::Get(const std::string& name) const {
    auto it = m_Values.find(name);
    if (it == m_Values.end() || it->second.empty()) {
        return std::nullopt;
    }
    return it->second.back();
}

std::vector<std::string> ParsedArgs::GetAll(const std::string& name) const {
    auto it = m_Values.find(name);
    return it == m_Values.end() ? std::vector<std::string>{} : it->second;
}

ParsedArgs ParseArgs(const std::vector<std::string>& args, const std::vector<OptionSpec>& specs,
                     const std::string& command) {
    const std::string seeHelp = " (see 'trellis " + command + " --help')";
    ParsedArgs parsed;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& word = args[i];
        if (word == "--help" || word == "-h") {
            parsed.m_Help = true;
            continue;
        }
        // A lone "-" is a positional (conventionally stdin); we only treat dash-words as options.
        if (word.size() < 2 || word[0] != '-') {
            parsed.m_Positionals.push_back(word);
            continue;
        }
        if (word.rfind("--", 0) != 0) {
            throw UsageError(command + ": unknown option '" + word + "'" + seeHelp);
        }
        std::string name = word.substr(2);
        std::optional<std::string> inlineValue;
        if (auto eq = name.find('='); eq != std::string::npos) {
            inlineValue = name.substr(eq + 1);
            name = name.substr(0, eq);
        }
        const OptionSpec* spec = nullptr;
        for (const OptionSpec& s : specs) {
            if (s.m_Name == name) {
                spec = &s;
            }
        }
        if (spec == nullptr) {
            throw UsageError(command + ": unknown option '--" + name + "'" + seeHelp);
        }
        std::string value;
        if (spec->m_TakesValue) {
            if (inlineValue) {
                value = *inlineValue;
            } else if (i + 1 < args.size()) {
                value = args[++i];
            } else {
                throw UsageError(command + ": option '--" + name + "' needs a value" + seeHelp);
            }
        } else if (inlineValue) {
            throw UsageError(command + ": option '--" + name + "' takes no value");
        }
        std::vector<std::string>& slot = parsed.m_Values[name];
        if (!slot.empty() && !spec->m_Repeatable) {
            throw UsageError(command + ": option '--" + name + "' given more than once");
        }
        slot.push_back(value);
    }
    return parsed;
}

std::string RequireModelPath(const ParsedArgs& args, const std::string& command) {
    if (args.m_Positionals.empty()) {
        throw UsageError(command + ": missing MODEL argument (see 'trellis " + command + " --help')");
    }
    if (args.m_Positionals.size() > 1) {
        throw UsageError(command + ": expected one MODEL argument, got '" + args.m_Positionals[0] +
                         "' and '" + args.m_Positionals[1] + "'");
    }
    return args.m_Positionals[0];
}

uint64_t ParseUnsigned(const std::string& text, const std::string& option, uint64_t minValue,
                       uint64_t maxValue) {
    uint64_t value = 0;
    const char* begin = text.data();
    const char* end = begin + text.size();
    auto [ptr, ec] = std::from_chars(begin, end, value);
    // from_chars accepts no sign or spaces, so "-1", "+3" and " 3" fail here as they should.
    if (text.empty() || ec != std::errc() || ptr != end || value < minValue || value > maxValue) {
        throw UsageError("option '--" + option + "' expects an integer in [" + std::to_string(minValue) +
                         ", " + std::to_string(maxValue) + "], got '" + text + "'");
    }
    return value;
}

uint64_t ParseByteCount(const std::string& text, const std::string& option) {
    const std::string expect = "option '--" + option + "' expects a byte count (digits, optionally followed by K, M, "
                               "G or T for KiB, MiB, GiB or TiB; e.g. 512M), got '" + text + "'";
    std::string digits = text;
    unsigned int shift = 0;
    if (!digits.empty()) {
        switch (digits.back()) {
            case 'K': shift = 10; break;
            case 'M': shift = 20; break;
            case 'G': shift = 30; break;
            case 'T': shift = 40; break;
            default: break;
        }
        if (shift != 0) digits.pop_back();
    }
    uint64_t value = 0;
    const char* end = digits.data() + digits.size();
    auto [ptr, ec] = std::from_chars(digits.data(), end, value);
    if (digits.empty() || ec != std::errc() || ptr != end || (shift != 0 && value > (UINT64_MAX >> shift))) {
        throw UsageError(expect);
    }
    return value << shift;
}

std::pair<std::string, TensorShape> ParseShapeOption(const std::string& text) {
    // Split at the last '=': ONNX tensor names may contain '=', a shape never does.
    const auto eq = text.rfind('=');
    const std::string expect = "option '--shape' expects NAME=AxBxC (e.g. input=1x3x224x224), got '" + text + "'";
    if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
        throw UsageError(expect);
    }
    const std::string name = text.substr(0, eq);
    const std::string dimsText = text.substr(eq + 1);
    std::vector<unsigned int> dims;
    std::size_t start = 0;
    while (true) {
        const auto x = dimsText.find('x', start);
        const std::string dim = dimsText.substr(start, x == std::string::npos ? std::string::npos : x - start);
        unsigned int value = 0;
        auto [ptr, ec] = std::from_chars(dim.data(), dim.data() + dim.size(), value);
        if (dim.empty() || ec != std::errc() || ptr != dim.data() + dim.size()) {
            throw UsageError(expect + ": '" + dim + "' is not a dimension");
        }
        dims.push_back(value);
        if (x == std::string::npos) {
            break;
        }
        start = x + 1;
    }
    return {name, TensorShape(std::move(dims))};
}

std::map<std::string, TensorShape> ParseShapeOptions(const std::vector<std::string>& texts) {
    std::map<std::string, TensorShape> shapes;
    for (const std::string& text : texts) {
        auto [name, shape] = ParseShapeOption(text);
        if (!shapes.emplace(name, shape).second) {
            throw UsageError("option '--shape' gives input '" + name + "' more than once");
        }
    }
    return shapes;
}

std::pair<std::string, std::string> ParseNameValue(const std::string& text, const std::string& option) {
    const auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
        throw UsageError("option '--" + option + "' expects NAME=FILE, got '" + text + "'");
    }
    return {text.substr(0, eq), text.substr(eq + 1)};
}

BackendIdVector ParseBackendList(const std::string& text) {
    BackendIdVector ids;
    std::set<std::string> seen;
    std::size_t start = 0;
    while (true) {
        const auto comma = text.find(',', start);
        std::string id = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        // Tolerate "CpuAcc, CpuRef" as typed in a shell with quotes.
        const auto first = id.find_first_not_of(" \t");
        const auto last = id.find_last_not_of(" \t");
        id = first == std::string::npos ? "" : id.substr(first, last - first + 1);
        if (id.empty()) {
            throw UsageError("option '--backends' expects a comma-separated list of backend ids, got '" + text + "'");
        }
        if (!seen.insert(id).second) {
            throw UsageError("option '--backends' names backend '" + id + "' more than once");
        }
        ids.emplace_back(id);
        if (comma == std::string::npos) {
            break;
        }
        start = comma + 1;
    }
    return ids;
}

}  // namespace trellis::cli
