// CpuRef: float tensors of any float type (Float32, Float64, Float16, BFloat16) read into doubles
// and written back with one rounding, for the reference kernels that compute through double
// (Attention, RmsNormalization, RotaryEmbedding), and the 16-bit float types widened for a kernel
// written for float or double (MatMul, Softmax, Reduce, ElementwiseUnary, ...), whose results are
// then rounded once. Header-only, stateless, thread-safe.
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

inline bool IsHalfType(DataType t) { return t == DataType::Float16 || t == DataType::BFloat16; }

/// The `n` elements of float type `t` at `data` as W (float or double). Float16 and BFloat16
/// widen exactly to either; the callers widen Float64 only to double.
template <typename W>
std::vector<W> ReadAs(DataType t, const void* data, std::size_t n) {
    const std::vector<double> d = Read(t, data, n);
    return std::vector<W>(d.begin(), d.end());
}

/// `values` written to the float tensor of type `t` at `data`, each rounded once to `t`.
template <typename W>
void WriteAll(DataType t, const std::vector<W>& values, void* data) {
    for (std::size_t i = 0; i < values.size(); ++i) Write(t, data, i, static_cast<double>(values[i]));
}

}  // namespace trellis::ref::floatio
