// Kernel snippet: Det - the determinant of each [M, M] matrix of the last two dims, by Gaussian
// elimination with partial pivoting in double. The working copy of one matrix is in the workspace.
#pragma once

#include <cmath>
#include <cstddef>
#include <utility>

namespace trellis::kernels {

struct DetParams {
    std::size_t m = 0, count = 0;
    template <typename F> void Fields(F&& f) const { f(m); f(count); }
};

inline std::size_t DetWorkspaceBytes(const DetParams& p) { return p.m * p.m * sizeof(double); }

template <typename T>
void Det(const DetParams& p, const T* x, T* y, void* workspace) {
    const std::size_t m = p.m;
    double* a = static_cast<double*>(workspace);
    for (std::size_t b = 0; b < p.count; ++b) {
        for (std::size_t k = 0; k < m * m; ++k) a[k] = static_cast<double>(x[b * m * m + k]);
        double det = 1.0;
        for (std::size_t col = 0; col < m; ++col) {
            std::size_t pivot = col;
            for (std::size_t row = col + 1; row < m; ++row) {
                if (std::fabs(a[row * m + col]) > std::fabs(a[pivot * m + col])) pivot = row;
            }
            if (a[pivot * m + col] == 0.0) {
                det = 0.0;
                break;
            }
            if (pivot != col) {
                for (std::size_t k = 0; k < m; ++k) std::swap(a[pivot * m + k], a[col * m + k]);
                det = -det;
            }
            const double piv = a[col * m + col];
            det *= piv;
            for (std::size_t row = col + 1; row < m; ++row) {
                const double f = a[row * m + col] / piv;
                for (std::size_t k = col; k < m; ++k) a[row * m + k] -= f * a[col * m + k];
            }
        }
        y[b] = static_cast<T>(det);
    }
}

}  // namespace trellis::kernels
