// Kernel snippet: small helpers several kernel snippets share.
#pragma once

#include <type_traits>

namespace trellis::kernels {

/// v < 0, written so that unsigned types do not warn (always false for them).
template <typename T> bool IsNegative(T v) {
    if constexpr (std::is_signed_v<T>) return v < 0;
    else return false;
}

}  // namespace trellis::kernels
