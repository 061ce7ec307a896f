// Kernel snippet: the discrete Fourier transform of the Dft and Stft kernels - a plain O(n^2) DFT
// in double with a precomputed twiddle table (clarity and accuracy over speed; the ONNX signal ops
// run on short frames). The signal of one transform (real and imaginary parts, in double) is in
// the workspace.
//  - Dft: along one axis of (..., n, 1 or 2) (real or complex), zero-padded or truncated to the
//    plan's length; output (..., m, 2). With halfSpectrum (an inverse of a onesided spectrum,
//    numpy.fft.irfft) the input's bins 0 .. m - 1 are the first half of a Hermitian spectrum of the
//    plan's length n (bins past n / 2 are the conjugates of their mirrors; missing bins are 0) and
//    the output is the real part of its inverse, (..., n, 1).
//  - Stft: frames of frame_length samples frame_step apart, each multiplied by the window (when
//    given), transformed; output (batch, frames, bins, 2).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace trellis::kernels {

struct DftPlan {
    std::size_t n = 1;
    bool inverse = false;
    std::vector<double> cosines, sines;  ///< sines with the sign applied: -sin forward, +sin inverse
    template <typename F> void Fields(F&& f) const { f(n); f(inverse); f(cosines); f(sines); }

    /// Frequency bin k of the signal (re[j], im[j]) for j < count (count <= n; the rest of the
    /// n points are zero).
    void Bin(const double* re, const double* im, std::size_t count, std::size_t k, double& outRe, double& outIm) const {
        double sr = 0.0, si = 0.0;
        std::size_t t = 0;  // (j * k) mod n, advanced incrementally
        const std::size_t step = k % n;
        for (std::size_t j = 0; j < count; ++j) {
            sr += re[j] * cosines[t] - im[j] * sines[t];
            si += re[j] * sines[t] + im[j] * cosines[t];
            t += step;
            if (t >= n) t -= n;
        }
        const double scale = inverse ? 1.0 / static_cast<double>(n) : 1.0;
        outRe = sr * scale;
        outIm = si * scale;
    }
};

/// A transform of length n (n >= 1); `inverse` flips the exponent's sign and divides by n.
inline DftPlan MakeDftPlan(std::size_t n, bool inverse) {
    constexpr double kPi = 3.14159265358979323846;
    DftPlan p;
    p.n = n;
    p.inverse = inverse;
    p.cosines.resize(n);
    p.sines.resize(n);
    for (std::size_t t = 0; t < n; ++t) {
        const double angle = 2.0 * kPi * static_cast<double>(t) / static_cast<double>(n);
        p.cosines[t] = std::cos(angle);
        p.sines[t] = (inverse ? 1.0 : -1.0) * std::sin(angle);
    }
    return p;
}

struct DftParams {
    DftPlan plan;
    std::size_t outer = 0, inner = 0, inLength = 0, outLength = 0;
    bool complex = false;
    bool halfSpectrum = false;  ///< inverse of a onesided (Hermitian) spectrum: real output
    template <typename F> void Fields(F&& f) const {
        f(plan); f(outer); f(inner); f(inLength); f(outLength); f(complex); f(halfSpectrum);
    }
};

inline std::size_t DftWorkspaceBytes(const DftParams& p) {
    return 2 * (p.halfSpectrum ? p.plan.n : std::min(p.inLength, p.plan.n)) * sizeof(double);
}

/// The halfSpectrum form: the full Hermitian spectrum of each line rebuilt, inverted, real part kept.
template <typename T>
void InverseHalfSpectrum(const DftParams& p, const T* x, T* y, void* workspace) {
    const std::size_t n = p.plan.n;
    double* re = static_cast<double*>(workspace);
    double* im = re + n;
    for (std::size_t o = 0; o < p.outer; ++o) {
        for (std::size_t i = 0; i < p.inner; ++i) {
            for (std::size_t k = 0; k < n; ++k) {
                const bool mirrored = k > n / 2;
                const std::size_t src = mirrored ? n - k : k;
                if (src >= p.inLength) {
                    re[k] = im[k] = 0.0;
                    continue;
                }
                const std::size_t at = ((o * p.inLength + src) * p.inner + i) * 2;
                re[k] = static_cast<double>(x[at]);
                im[k] = mirrored ? -static_cast<double>(x[at + 1]) : static_cast<double>(x[at + 1]);
            }
            for (std::size_t t = 0; t < p.outLength; ++t) {
                double vr = 0.0, vi = 0.0;
                p.plan.Bin(re, im, n, t, vr, vi);
                y[(o * p.outLength + t) * p.inner + i] = static_cast<T>(vr);
            }
        }
    }
}

template <typename T>
void Dft(const DftParams& p, const T* x, T* y, void* workspace) {
    if (p.halfSpectrum) return InverseHalfSpectrum(p, x, y, workspace);
    const std::size_t count = std::min(p.inLength, p.plan.n);
    const std::size_t comps = p.complex ? 2 : 1;
    double* re = static_cast<double*>(workspace);
    double* im = re + count;
    std::fill_n(im, count, 0.0);
    for (std::size_t o = 0; o < p.outer; ++o) {
        for (std::size_t i = 0; i < p.inner; ++i) {
            for (std::size_t j = 0; j < count; ++j) {
                const std::size_t at = ((o * p.inLength + j) * p.inner + i) * comps;
                re[j] = static_cast<double>(x[at]);
                if (p.complex) im[j] = static_cast<double>(x[at + 1]);
            }
            for (std::size_t k = 0; k < p.outLength; ++k) {
                double vr = 0.0, vi = 0.0;
                p.plan.Bin(re, im, count, k, vr, vi);
                const std::size_t at = ((o * p.outLength + k) * p.inner + i) * 2;
                y[at] = static_cast<T>(vr);
                y[at + 1] = static_cast<T>(vi);
            }
        }
    }
}

struct StftParams {
    DftPlan plan;
    std::size_t step = 1;
    std::size_t batch = 0, length = 0, frames = 0, bins = 0;
    bool complex = false;
    template <typename F> void Fields(F&& f) const { f(plan); f(step); f(batch); f(length); f(frames); f(bins); f(complex); }
};

inline std::size_t StftWorkspaceBytes(const StftParams& p) { return 2 * p.plan.n * sizeof(double); }

/// `window` may be null (no window).
template <typename T>
void Stft(const StftParams& p, const T* s, const T* window, T* y, void* workspace) {
    const std::size_t n = p.plan.n;
    const std::size_t comps = p.complex ? 2 : 1;
    double* re = static_cast<double*>(workspace);
    double* im = re + n;
    std::fill_n(im, n, 0.0);
    for (std::size_t b = 0; b < p.batch; ++b) {
        for (std::size_t f = 0; f < p.frames; ++f) {
            for (std::size_t j = 0; j < n; ++j) {
                const std::size_t at = (b * p.length + f * p.step + j) * comps;
                const double win = window ? static_cast<double>(window[j]) : 1.0;
                re[j] = static_cast<double>(s[at]) * win;
                if (p.complex) im[j] = static_cast<double>(s[at + 1]) * win;
            }
            for (std::size_t k = 0; k < p.bins; ++k) {
                double vr = 0.0, vi = 0.0;
                p.plan.Bin(re, im, n, k, vr, vi);
                const std::size_t at = ((b * p.frames + f) * p.bins + k) * 2;
                y[at] = static_cast<T>(vr);
                y[at + 1] = static_cast<T>(vi);
            }
        }
    }
}

}  // namespace trellis::kernels
