// Resource limits: resolving the defaults and the tensor-size check of shape inference.
#include "ResourceLimits.hpp"

#include <trellis/Exceptions.hpp>

#include <unistd.h>

#include <cstdio>
#include <limits>

namespace trellis::core {

std::size_t PhysicalMemoryBytes() {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long pageSize = sysconf(_SC_PAGESIZE);
    std::size_t bytes = 0;
    if (pages <= 0 || pageSize <= 0 ||
        __builtin_mul_overflow(static_cast<std::size_t>(pages), static_cast<std::size_t>(pageSize), &bytes)) {
        return std::numeric_limits<std::size_t>::max();
    }
    return bytes;
}

std::size_t ResolveMemoryLimit(std::size_t given) {
    // Physical memory cannot change while the process runs: ask once.
    static const std::size_t physical = PhysicalMemoryBytes();
    return given == 0 ? physical : given;
}

std::string FormatBytes(std::size_t bytes) {
    static const char* const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) return std::to_string(bytes) + " bytes";
    double value = static_cast<double>(bytes) / 1024.0;
    unsigned int unit = 0;
    while (value >= 1024.0 && unit + 1 < sizeof(units) / sizeof(units[0])) {
        value /= 1024.0;
        ++unit;
    }
    char text[64];
    std::snprintf(text, sizeof(text), "%.2f %s", value, units[unit]);
    return std::string(text) + " (" + std::to_string(bytes) + " bytes)";
}

void CheckTensorLimit(const std::string& where, unsigned int output, const TensorInfo& info, std::size_t limitBytes) {
    const std::optional<std::size_t> bytes = info.GetNumBytesChecked();
    if (!bytes) {
        throw ResourceLimitException(where + ": output " + std::to_string(output) + " would be " + info.ToString() +
                                     ", whose size in bytes does not fit 64 bits (no tensor can be that large)");
    }
    if (*bytes > limitBytes) {
        throw ResourceLimitException(where + ": output " + std::to_string(output) + " would be " + info.ToString() +
                                     ", " + FormatBytes(*bytes) + ", more than the maximum tensor size of " +
                                     FormatBytes(limitBytes) +
                                     " (OptimizerOptions::m_MaxTensorBytes, trellis --max-tensor-bytes; default: the "
                                     "machine's physical memory)");
    }
}

}  // namespace trellis::core
