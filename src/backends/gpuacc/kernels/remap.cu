// GpuAcc kernels: output elements gathered from input positions - Resize (nearest, linear), Pad
// (constant, reflect, edge), Trilu, a direct 2-D ConvTranspose - and ArgMin/ArgMax. One thread per output element over
// strided tensors of any layout, arithmetic in float (what CpuRef computes in).
#include "Common.cuh"

namespace trellis::gpuacc {

namespace kernels {
namespace {

__device__ __forceinline__ int64_t Clamp(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

__global__ void RemapKernel(const RemapLaunch l, int64_t count) {
    const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
    for (int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < count; idx += stride) {
        int64_t o[kMaxDims];
        int64_t rest = idx, outAt = 0;
        for (int d = l.m_Rank - 1; d >= 0; --d) {
            o[d] = rest % l.m_OutDims[d];
            rest /= l.m_OutDims[d];
            outAt += o[d] * l.m_OutStrides[d];
        }
        float v = 0.0f;
        switch (l.m_Kind) {
            case RemapLaunch::Kind::Pad: {
                int64_t inAt = 0;
                bool outside = false;
                for (int d = 0; d < l.m_Rank; ++d) {
                    int64_t i = o[d] - l.m_PadBegin[d];
                    const int64_t n = l.m_InDims[d];
                    if (i < 0 || i >= n) {
                        if (l.m_PadMode == 0) {
                            outside = true;
                            break;
                        }
                        if (l.m_PadMode == 1) {  // reflect (the pads are below the dim, so once suffices)
                            i = i < 0 ? -i : 2 * (n - 1) - i;
                            i = Clamp(i, 0, n - 1);
                        } else {
                            i = Clamp(i, 0, n - 1);
                        }
                    }
                    inAt += i * l.m_InStrides[d];
                }
                v = outside ? l.m_Value : LoadF(l.m_X, inAt, l.m_Type);
                break;
            }
            case RemapLaunch::Kind::Trilu: {
                int64_t inAt = 0;
                for (int d = 0; d < l.m_Rank; ++d) inAt += o[d] * l.m_InStrides[d];
                const int64_t diff = o[l.m_Rank - 1] - o[l.m_Rank - 2];
                const bool keep = l.m_Upper ? diff >= l.m_K : diff <= l.m_K;
                v = keep ? LoadF(l.m_X, inAt, l.m_Type) : 0.0f;
                break;
            }
            case RemapLaunch::Kind::Resize: {
                // Every combination of the taps of the resampled dims, weighted by their product.
                int64_t base = 0;
                const RemapLaunch::Tap* taps[kMaxDims];
                int64_t strides[kMaxDims];
                int k = 0;
                for (int d = 0; d < l.m_Rank; ++d) {
                    if (!l.m_Resampled[d]) {
                        base += o[d] * l.m_InStrides[d];
                        continue;
                    }
                    taps[k] = l.m_Table + l.m_TableAt[d] + o[d] * l.m_Taps;
                    strides[k] = l.m_InStrides[d];
                    ++k;
                }
                int combos = 1;
                for (int j = 0; j < k; ++j) combos *= l.m_Taps;
                for (int c = 0; c < combos; ++c) {
                    float weight = 1.0f;
                    int64_t at = base;
                    int rest = c;
                    for (int j = 0; j < k; ++j) {
                        const RemapLaunch::Tap t = taps[j][rest % l.m_Taps];
                        rest /= l.m_Taps;
                        weight *= t.m_Weight;
                        at += static_cast<int64_t>(t.m_Index) * strides[j];
                    }
                    if (weight != 0.0f) v += weight * LoadF(l.m_X, at, l.m_Type);
                }
                break;
            }
        }
        StoreF(l.m_Y, outAt, l.m_Type, v);
    }
}

__global__ void ArgKernel(const ArgLaunch l, int64_t count) {
    const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
    for (int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < count; idx += stride) {
        int64_t rest = idx, at = 0;
        for (int d = l.m_Rank - 1; d >= 0; --d) {
            if (d == l.m_Axis) continue;
            at += (rest % l.m_Dims[d]) * l.m_Strides[d];
            rest /= l.m_Dims[d];
        }
        const int64_t n = l.m_Dims[l.m_Axis], s = l.m_Strides[l.m_Axis];
        int64_t best = 0;
        float bestV = LoadF(l.m_X, at, l.m_Type);
        bool bestNan = isnan(bestV);
        for (int64_t i = 1; i < n; ++i) {
            const float v = LoadF(l.m_X, at + i * s, l.m_Type);
            const bool nan = isnan(v);
            bool take;
            if (bestNan) {
                take = nan && l.m_SelectLast;  // the first NaN wins (the last one with select_last_index)
            } else if (nan) {
                take = true;
            } else {
                take = l.m_Max ? (v > bestV || (l.m_SelectLast && v == bestV)) : (v < bestV || (l.m_SelectLast && v == bestV));
            }
            if (take) {
                best = i;
                bestV = v;
                bestNan = nan;
            }
        }
        l.m_Y[idx] = best;
    }
}

__global__ void ConvTransposeKernel(const ConvTransposeLaunch l, int64_t count) {
    const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
    const int64_t cg = l.m_C / l.m_Groups, mg = l.m_M / l.m_Groups;
    for (int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < count; idx += stride) {
        const int64_t ow = idx % l.m_OW, oh = (idx / l.m_OW) % l.m_OH, m = (idx / (l.m_OW * l.m_OH)) % l.m_M;
        const int64_t n = idx / (l.m_OW * l.m_OH * l.m_M);
        const int64_t g = m / mg, mm = m % mg;
        float acc = l.m_Bias ? l.m_Bias[m] : 0.0f;
        for (int32_t kh = 0; kh < l.m_R; ++kh) {
            const int64_t th = oh + l.m_PH - static_cast<int64_t>(kh) * l.m_DH;
            if (th < 0 || th % l.m_SH != 0) continue;
            const int64_t ih = th / l.m_SH;
            if (ih >= l.m_H) continue;
            for (int32_t kw = 0; kw < l.m_S; ++kw) {
                const int64_t tw = ow + l.m_PW - static_cast<int64_t>(kw) * l.m_DW;
                if (tw < 0 || tw % l.m_SW != 0) continue;
                const int64_t iw = tw / l.m_SW;
                if (iw >= l.m_W_) continue;
                for (int64_t c = g * cg; c < (g + 1) * cg; ++c) {
                    const float xv = LoadF(l.m_X, n * l.m_XStrides[0] + c * l.m_XStrides[1] + ih * l.m_XStrides[2] +
                                                      iw * l.m_XStrides[3], l.m_Type);
                    acc += xv * l.m_W[((c * mg + mm) * l.m_R + kh) * l.m_S + kw];
                }
            }
        }
        StoreF(l.m_Y, idx, l.m_Type, acc);
    }
}

}  // namespace
}  // namespace kernels

cudaError_t LaunchConvTranspose(const ConvTransposeLaunch& l, cudaStream_t stream) {
    const int64_t count = l.m_N * l.m_M * l.m_OH * l.m_OW;
    if (count == 0) return cudaSuccess;
    kernels::ConvTransposeKernel<<<kernels::Blocks(count), kernels::kThreads, 0, stream>>>(l, count);
    return cudaGetLastError();
}

cudaError_t LaunchRemap(const RemapLaunch& l, cudaStream_t stream) {
    int64_t count = 1;
    for (int d = 0; d < l.m_Rank; ++d) count *= l.m_OutDims[d];
    if (count == 0) return cudaSuccess;
    kernels::RemapKernel<<<kernels::Blocks(count), kernels::kThreads, 0, stream>>>(l, count);
    return cudaGetLastError();
}

cudaError_t LaunchArg(const ArgLaunch& l, cudaStream_t stream) {
    int64_t count = 1;
    for (int d = 0; d < l.m_Rank; ++d) {
        if (d != l.m_Axis) count *= l.m_Dims[d];
    }
    if (count == 0 || l.m_Dims[l.m_Axis] == 0) return cudaSuccess;
    kernels::ArgKernel<<<kernels::Blocks(count), kernels::kThreads, 0, stream>>>(l, count);
    return cudaGetLastError();
}

}  // namespace trellis::gpuacc
