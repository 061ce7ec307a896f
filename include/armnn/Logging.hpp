// Arm NN compatibility layer: ARMNN_LOG(severity) << ...; as in Arm NN, with Arm NN's lowercase
// severities (trace, debug, info, warning, error, fatal). A message goes where ConfigureLogging
// says (<armnn/Utils.hpp>), as one line "Severity: text" when the statement ends.
// Thread-safety: each statement builds its own message; lines from several threads do not mix.
#pragma once

#include <armnn/Types.hpp>
#include <armnn/Utils.hpp>

#include <sstream>
#include <string>

namespace armnn {
namespace detail {

/// Collects one ARMNN_LOG statement's text and logs it when the statement ends.
class LogStatement {
public:
    explicit LogStatement(LogSeverity severity) : m_Severity(severity) {}
    ~LogStatement() { LogMessage(m_Severity, m_Text.str()); }
    LogStatement(const LogStatement&) = delete;
    LogStatement& operator=(const LogStatement&) = delete;
    template <typename T>
    LogStatement& operator<<(const T& value) {
        m_Text << value;
        return *this;
    }
private:
    LogSeverity m_Severity;
    std::ostringstream m_Text;
};

/// Arm NN's lowercase severity names, for ARMNN_LOG.
namespace log_severity {
inline constexpr LogSeverity trace = LogSeverity::Trace;
inline constexpr LogSeverity debug = LogSeverity::Debug;
inline constexpr LogSeverity info = LogSeverity::Info;
inline constexpr LogSeverity warning = LogSeverity::Warning;
inline constexpr LogSeverity error = LogSeverity::Error;
inline constexpr LogSeverity fatal = LogSeverity::Fatal;
}  // namespace log_severity

}  // namespace detail
}  // namespace armnn

#define ARMNN_LOG(severity) ::armnn::detail::LogStatement(::armnn::detail::log_severity::severity)
