// CpuRef: float tensors of any float type (Float32, Float64, Float16, BFloat16) read into doubles
// and written back with one rounding, for the reference kernels that compute through double
// (Attention, RmsNormalization, RotaryEmbedding). Header-only, stateless, thread-safe.
#pragma once

#include "RefConvert.hpp"

#include <trellis/backends/IWorkload.hpp>

#include <cstddef>
#include <vector>

namespace trellis::ref::floatio {

inline bool IsFloatType(DataType t) {
    return t == DataType::Float32 || t == DataType::Float64 || t == DataType::Float16 || t == DataType::BFloat16;
}

/// The `n` elements of type `t` at `data` as doubles (exact).
inline std::vector<double> Read(DataType t, const void* data, std::size_t n) {
    std::vector<double> out(n);
    switch (t) {
        case DataType::Float32: {
            const auto* p = static_cast<const float*>(data);
            for (std::size_t i = 0; i < n; ++i) out[i] = p[i];
            break;
        }
        case DataType::Float64: {
            const auto* p = static_cast<const double*>(data);
            for (std::size_t i = 0; i < n; ++i) out[i] = p[i];
            break;
        }
        case DataType::Float16: {
            const auto* p = static_cast<const uint16_t*>(data);
            for (std::size_t i = 0; i < n; ++i) out[i] = ElementTraits<DataType::Float16>::Read(p[i]);
            break;
        }
        case DataType::BFloat16: {
            const auto* p = static_cast<const uint16_t*>(data);
            for (std::size_t i = 0; i < n; ++i) out[i] = ElementTraits<DataType::BFloat16>::Read(p[i]);
            break;
        }
        default: break;  // support checks admit float types only
    }
    return out;
}

/// Element `i` of the float tensor at `data` set to the nearest value of type `t` to `v`.
inline void Write(DataType t, void* data, std::size_t i, double v) {
    switch (t) {
        case DataType::Float32: static_cast<float*>(data)[i] = static_cast<float>(v); break;
        case DataType::Float64: static_cast<double*>(data)[i] = v; break;
        case DataType::Float16: static_cast<uint16_t*>(data)[i] = ElementTraits<DataType::Float16>::FromDouble(v); break;
        case DataType::BFloat16:
            static_cast<uint16_t*>(data)[i] = ElementTraits<DataType::BFloat16>::FromDouble(v);
            break;
        default: break;
    }
}

/// `v` rounded to type `t` (the value a tensor of type `t` would hold), as a double.
inline double Round(DataType t, double v) {
    switch (t) {
        case DataType::Float32: return static_cast<float>(v);
        case DataType::Float16: return ElementTraits<DataType::Float16>::Read(ElementTraits<DataType::Float16>::FromDouble(v));
        case DataType::BFloat16:
            return ElementTraits<DataType::BFloat16>::Read(ElementTraits<DataType::BFloat16>::FromDouble(v));
        default: return v;
    }
}

}  // namespace trellis::ref::floatio
