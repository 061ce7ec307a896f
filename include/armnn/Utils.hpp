// Arm NN compatibility layer: ConfigureLogging, the switch for what the compatibility layer logs
// (Optimize()'s warnings and errors, load failures): to standard output when
// `printToStandardOutput`, at `severity` and above. `printToDebugOutput` (Arm NN's Android/debugger
// sink) has no Trellis equivalent and is ignored. Until it is called, Error and Fatal messages go
// to standard error, so a failure is never silent.
// Thread-safety: ConfigureLogging is not synchronized with logging from other threads; call it
// at start-up.
#pragma once

#include <armnn/Types.hpp>

#include <string>

namespace armnn {

void ConfigureLogging(bool printToStandardOutput, bool printToDebugOutput, LogSeverity severity);

/// Logs `message` at `severity` when ConfigureLogging enabled that severity ("Warning: ...").
void LogMessage(LogSeverity severity, const std::string& message);

}  // namespace armnn
