// CpuRef: the discrete Fourier transform shared by the Dft and Stft kernels. Header-only and
// stateless after construction (workloads share a DftPlan across threads).
//
// A plain O(n^2) DFT in double with a precomputed twiddle table: the reference backend values
// clarity and accuracy over speed, and the ONNX signal ops run on short frames.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numbers>
#include <vector>

namespace trellis::ref {

class DftPlan {
public:
    /// A transform of length n (n >= 1); `inverse` flips the exponent's sign and divides by n.
    DftPlan(std::size_t n, bool inverse) : m_N(n), m_Inverse(inverse), m_Cos(n), m_Sin(n) {
        for (std::size_t t = 0; t < n; ++t) {
            const double angle = 2.0 * std::numbers::pi * static_cast<double>(t) / static_cast<double>(n);
            m_Cos[t] = std::cos(angle);
            m_Sin[t] = (inverse ? 1.0 : -1.0) * std::sin(angle);
        }
    }

    std::size_t Length() const { return m_N; }

    /// Frequency bin k of the signal (re[j], im[j]) for j < count (count <= n; the rest of the
    /// n points are zero). Returns (re, im) through the out parameters.
    void Bin(const double* re, const double* im, std::size_t count, std::size_t k, double& outRe, double& outIm) const {
        double sr = 0.0, si = 0.0;
        std::size_t t = 0;  // (j * k) mod n, advanced incrementally
        const std::size_t step = k % m_N;
        for (std::size_t j = 0; j < count; ++j) {
            sr += re[j] * m_Cos[t] - im[j] * m_Sin[t];
            si += re[j] * m_Sin[t] + im[j] * m_Cos[t];
            t += step;
            if (t >= m_N) t -= m_N;
        }
        const double scale = m_Inverse ? 1.0 / static_cast<double>(m_N) : 1.0;
        outRe = sr * scale;
        outIm = si * scale;
    }

private:
    std::size_t m_N;
    bool m_Inverse;
    std::vector<double> m_Cos;
    std::vector<double> m_Sin;  ///< sign already applied: -sin forward, +sin inverse
};

}  // namespace trellis::ref
