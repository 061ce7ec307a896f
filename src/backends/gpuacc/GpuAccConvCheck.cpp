// GpuAcc: convolution checks against the direct kernel (see GpuAccConvCheck.hpp).
#include "GpuAccConvCheck.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace trellis::gpuacc {

namespace {

/// Above this many multiply-adds the direct kernel checks a few images, not all.
constexpr int64_t kCheckAllMacs = int64_t(1) << 33;

/// The guard bytes on each side of a test buffer (a multiple of 256: the buffer stays aligned).
constexpr std::size_t kGuardBytes = std::size_t(1) << 20;

}  // namespace

double ConvTolerance(Precision p) {
    switch (p) {
        case Precision::Fp32: return 1e-4;
        case Precision::Bf16: return 4e-2;
        default: return 1e-2;  // tf32 and fp16: 10 and 11 mantissa bits
    }
}

ConvAct ToConvAct(Activation a) {
    switch (a) {
        case Activation::Relu: return ConvAct::Relu;
        case Activation::Clip: return ConvAct::Clip;
        case Activation::Sigmoid: return ConvAct::Sigmoid;
        case Activation::Tanh: return ConvAct::Tanh;
        case Activation::Swish: return ConvAct::Swish;
        default: return ConvAct::None;
    }
}

std::string ConvCheckResult::ToString(int64_t images) const {
    char buf[160];
    std::snprintf(buf, sizeof(buf), "%.3g (image %lld of %lld; %lld checked)", m_Error, static_cast<long long>(m_Image),
                  static_cast<long long>(images), static_cast<long long>(m_Checked));
    return buf + (m_Outside.empty() ? std::string() : ", and it wrote " + m_Outside);
}

DirectConvLaunch DirectConvFor(const ConvShape& s, DType type) {
    DirectConvLaunch l;
    l.m_Type = type;
    l.m_N = s.m_N; l.m_C = s.m_C; l.m_H = s.m_H; l.m_W_ = s.m_W; l.m_K = s.m_K; l.m_OH = s.m_OH; l.m_OW = s.m_OW;
    l.m_R = static_cast<int32_t>(s.m_R); l.m_S = static_cast<int32_t>(s.m_S);
    l.m_SH = static_cast<int32_t>(s.m_StrideH); l.m_SW = static_cast<int32_t>(s.m_StrideW);
    l.m_PH = static_cast<int32_t>(s.m_PadTop); l.m_PW = static_cast<int32_t>(s.m_PadLeft);
    l.m_DH = static_cast<int32_t>(s.m_DilationH); l.m_DW = static_cast<int32_t>(s.m_DilationW);
    l.m_Groups = static_cast<int32_t>(s.m_Groups);
    const int64_t xs[4] = {s.m_C * s.m_H * s.m_W, s.m_ChannelsLast ? 1 : s.m_H * s.m_W, s.m_ChannelsLast ? s.m_W * s.m_C : s.m_W,
                           s.m_ChannelsLast ? s.m_C : 1};
    const int64_t ys[4] = {s.m_K * s.m_OH * s.m_OW, s.m_ChannelsLast ? 1 : s.m_OH * s.m_OW,
                           s.m_ChannelsLast ? s.m_OW * s.m_K : s.m_OW, s.m_ChannelsLast ? s.m_K : 1};
    for (int i = 0; i < 4; ++i) {
        l.m_XStrides[i] = xs[i];
        l.m_YStrides[i] = ys[i];
    }
    return l;
}

ConvCheckResult CheckConvOutput(const ConvShape& s, DType type, const ConvEpilogue& fused, const void* x,
                                const void* w, const float* bias, const void* z, const void* y, float* ref,
                                double* sums, cudaStream_t stream) {
    const std::size_t es = DTypeSize(type);
    const int64_t xImg = s.m_C * s.m_H * s.m_W, yImg = s.m_K * s.m_OH * s.m_OW;
    const int64_t macs = s.m_N * yImg * (s.m_C / s.m_Groups) * s.m_R * s.m_S;
    // Runs of consecutive images: the whole batch at once, or a few single images.
    std::vector<std::pair<int64_t, int64_t>> runs;
    if (macs <= kCheckAllMacs || s.m_N <= 4) {
        runs.emplace_back(0, s.m_N);
    } else {
        for (int64_t n : {int64_t(0), int64_t(1), s.m_N / 2, s.m_N - 1}) {
            if (runs.empty() || runs.back().first != n) runs.emplace_back(n, 1);
        }
    }
    DirectConvLaunch l = DirectConvFor(s, type);
    l.m_W = w;
    l.m_Bias = fused.m_Bias ? bias : nullptr;
    l.m_FloatOut = true;
    ConvCheckLaunch c;
    c.m_Type = type;
    c.m_Act = ToConvAct(fused.m_Activation);
    c.m_ClipLow = fused.m_ClipLow;
    c.m_ClipHigh = fused.m_ClipHigh;
    c.m_PerImage = yImg;
    for (const auto& [first, count] : runs) {
        l.m_N = count;
        l.m_X = static_cast<const char*>(x) + first * xImg * static_cast<int64_t>(es);
        l.m_Y = ref + first * yImg;
        CheckCuda(LaunchDirectConv(l, stream), "convolution check: direct kernel");
        c.m_Got = static_cast<const char*>(y) + first * yImg * static_cast<int64_t>(es);
        c.m_Ref = ref + first * yImg;
        c.m_Residual = fused.m_Residual ? static_cast<const char*>(z) + first * yImg * static_cast<int64_t>(es) : nullptr;
        c.m_Images = count;
        c.m_Sums = sums + 2 * first;
        CheckCuda(LaunchConvCheck(c, stream), "convolution check");
    }
    std::vector<double> host(static_cast<std::size_t>(2 * s.m_N));
    CheckCuda(cudaMemcpyAsync(host.data(), sums, host.size() * sizeof(double), cudaMemcpyDeviceToHost, stream),
              "convolution check: copying the sums");
    CheckCuda(cudaStreamSynchronize(stream), "convolution check");
    ConvCheckResult r;
    for (const auto& [first, count] : runs) {
        for (int64_t n = first; n < first + count; ++n) {
            const double diff = host[static_cast<std::size_t>(2 * n)], norm = host[static_cast<std::size_t>(2 * n + 1)];
            double e = norm > 0.0 ? std::sqrt(diff / norm) : std::sqrt(diff);
            if (std::isnan(e)) e = HUGE_VAL;
            if (r.m_Checked == 0 || e > r.m_Error) {
                r.m_Error = e;
                r.m_Image = n;
            }
            ++r.m_Checked;
        }
    }
    return r;
}

DeviceBuffer ConvTestData::Upload(const std::vector<float>& values, DType type) {
    const std::size_t es = DTypeSize(type);
    std::vector<unsigned char> bytes(std::max<std::size_t>(values.size(), 1) * es);
    for (std::size_t i = 0; i < values.size(); ++i) {
        switch (type) {
            case DType::F16: reinterpret_cast<__half*>(bytes.data())[i] = __float2half_rn(values[i]); break;
            case DType::BF16: reinterpret_cast<__nv_bfloat16*>(bytes.data())[i] = __float2bfloat16_rn(values[i]); break;
            default: reinterpret_cast<float*>(bytes.data())[i] = values[i]; break;
        }
    }
    DeviceBuffer b(bytes.size());
    CheckCuda(cudaMemcpy(b.Get(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice), "convolution check: upload");
    return b;
}

void ConvTestData::Guarded::Allocate(std::size_t bytes, cudaStream_t stream) {
    m_Bytes = std::max<std::size_t>(bytes, 1);
    m_All = DeviceBuffer(m_Bytes + 2 * kGuardBytes);
    CheckCuda(cudaMemsetAsync(m_All.Get(), 0xFF, m_Bytes + 2 * kGuardBytes, stream), "convolution check: guards");
}

void* ConvTestData::Guarded::Get() const { return static_cast<char*>(m_All.Get()) + kGuardBytes; }

void ConvTestData::Guarded::ResetGuards(cudaStream_t stream) const {
    CheckCuda(cudaMemsetAsync(m_All.Get(), 0xFF, kGuardBytes, stream), "convolution check: guards");
    CheckCuda(cudaMemsetAsync(static_cast<char*>(m_All.Get()) + kGuardBytes + m_Bytes, 0xFF, kGuardBytes, stream),
              "convolution check: guards");
}

std::string ConvTestData::Guarded::Written() const {
    std::vector<unsigned char> host(kGuardBytes);
    std::string where;
    for (const auto& [offset, name] : {std::pair<std::size_t, const char*>{0, "before"}, {kGuardBytes + m_Bytes, "after"}}) {
        CheckCuda(cudaMemcpy(host.data(), static_cast<char*>(m_All.Get()) + offset, kGuardBytes, cudaMemcpyDeviceToHost),
                  "convolution check: reading the guards");
        if (std::any_of(host.begin(), host.end(), [](unsigned char b) { return b != 0xFF; })) {
            where += (where.empty() ? "" : " and ") + std::string(name);
        }
    }
    return where;
}

ConvTestData::ConvTestData(const ConvShape& s, DType type, const std::vector<float>& wKcrs,
                           const std::vector<float>& bias, cudaStream_t stream)
    : m_Shape(s), m_Type(type), m_Stream(stream) {
    const std::size_t es = DTypeSize(type);
    const int64_t xCount = s.m_N * s.m_C * s.m_H * s.m_W, yCount = s.m_N * s.m_K * s.m_OH * s.m_OW;
    m_X.Allocate(static_cast<std::size_t>(xCount) * es, stream);
    m_Z.Allocate(static_cast<std::size_t>(yCount) * es, stream);
    m_Y.Allocate(static_cast<std::size_t>(yCount) * es, stream);
    m_Ref = DeviceBuffer(static_cast<std::size_t>(std::max<int64_t>(yCount, 1)) * sizeof(float));
    m_Sums = DeviceBuffer(static_cast<std::size_t>(2 * std::max<int64_t>(s.m_N, 1)) * sizeof(double));
    m_W = Upload(wKcrs, type);
    m_Bias = Upload(bias, DType::F32);
    CheckCuda(LaunchFillRandom(m_X.Get(), type, xCount, 1234u, 1.0f, stream, 1.0f), "convolution check data");
    CheckCuda(LaunchFillRandom(m_Z.Get(), type, yCount, 5678u, 1.0f, stream), "convolution check data");
}

ConvCheckResult ConvTestData::Check(const Run& run, const ConvEpilogue& fused, std::size_t workspaceBytes) {
    // Stale contents in the output and the workspace, as in a region's scratch memory; guards
    // set again where an earlier run wrote into them.
    CheckCuda(cudaMemsetAsync(m_Y.m_All.Get(), 0xFF, m_Y.m_Bytes + 2 * kGuardBytes, m_Stream), "convolution check: output");
    m_X.ResetGuards(m_Stream);
    m_Z.ResetGuards(m_Stream);
    m_Ws.Allocate(workspaceBytes, m_Stream);
    run(m_X.Get(), m_Z.Get(), m_Y.Get(), m_Ws.Get());
    ConvCheckResult r = CheckConvOutput(m_Shape, m_Type, fused, m_X.Get(), m_W.Get(), FloatBias(), m_Z.Get(), m_Y.Get(),
                                        static_cast<float*>(m_Ref.Get()), static_cast<double*>(m_Sums.Get()), m_Stream);
    for (const auto& [buffer, name] : {std::pair<const Guarded*, const char*>{&m_Y, "output"}, {&m_Ws, "workspace"},
                                       {&m_X, "input"}, {&m_Z, "residual"}}) {
        const std::string where = buffer->Written();
        if (!where.empty()) r.m_Outside += (r.m_Outside.empty() ? "" : ", ") + where + " its " + name;
    }
    return r;
}

float ConvTestData::TimeMs(const Run& run, std::size_t workspaceBytes) {
    constexpr int kWarm = 2, kTimed = 10;
    m_Ws.Allocate(workspaceBytes, m_Stream);
    for (int i = 0; i < kWarm; ++i) run(m_X.Get(), m_Z.Get(), m_Y.Get(), m_Ws.Get());
    cudaEvent_t start = nullptr, stop = nullptr;
    CheckCuda(cudaEventCreate(&start), "convolution timing");
    CheckCuda(cudaEventCreate(&stop), "convolution timing");
    CheckCuda(cudaEventRecord(start, m_Stream), "convolution timing");
    for (int i = 0; i < kTimed; ++i) run(m_X.Get(), m_Z.Get(), m_Y.Get(), m_Ws.Get());
    CheckCuda(cudaEventRecord(stop, m_Stream), "convolution timing");
    CheckCuda(cudaEventSynchronize(stop), "convolution timing");
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, start, stop);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return ms / kTimed;
}

}  // namespace trellis::gpuacc
