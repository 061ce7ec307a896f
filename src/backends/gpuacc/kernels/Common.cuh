// GpuAcc kernels: what every kernel file shares - typed loads and stores through float, index
// decomposition, launch sizes.
#pragma once

#include "GpuAccKernels.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace trellis::gpuacc::kernels {

__device__ __forceinline__ float LoadF(const void* p, int64_t i, DType t) {
    switch (t) {
        case DType::F32: return static_cast<const float*>(p)[i];
        case DType::F16: return __half2float(static_cast<const __half*>(p)[i]);
        case DType::BF16: return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
        case DType::I32: return static_cast<float>(static_cast<const int32_t*>(p)[i]);
        case DType::I64: return static_cast<float>(static_cast<const int64_t*>(p)[i]);
        case DType::U8:
        case DType::Bool: return static_cast<float>(static_cast<const uint8_t*>(p)[i]);
        case DType::I8: return static_cast<float>(static_cast<const int8_t*>(p)[i]);
    }
    return 0.0f;
}

/// A NaN in a 16-bit float keeps the top bits of its payload (never becoming infinity), as numpy
/// and CpuRef convert; CUDA's conversions would give one canonical NaN.
__device__ __forceinline__ uint16_t NanBits16(float v, int mantBits) {
    const uint32_t b = __float_as_uint(v);
    const uint32_t payload = (b & 0x7fffffu) >> (23 - mantBits);
    const uint32_t exp = ((1u << (15 - mantBits)) - 1u) << mantBits;
    return static_cast<uint16_t>(((b >> 16) & 0x8000u) | exp | (payload ? payload : 1u));
}

__device__ __forceinline__ void StoreF(void* p, int64_t i, DType t, float v) {
    switch (t) {
        case DType::F32: static_cast<float*>(p)[i] = v; break;
        case DType::F16:
            if (isnan(v)) static_cast<uint16_t*>(p)[i] = NanBits16(v, 10);
            else static_cast<__half*>(p)[i] = __float2half_rn(v);
            break;
        case DType::BF16:
            if (isnan(v)) static_cast<uint16_t*>(p)[i] = NanBits16(v, 7);
            else static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(v);
            break;
        // Float to integer truncates toward zero (C's rule, as CpuRef's Cast).
        case DType::I32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); break;
        case DType::I64: static_cast<int64_t*>(p)[i] = static_cast<int64_t>(v); break;
        case DType::U8: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v); break;
        case DType::I8: static_cast<int8_t*>(p)[i] = static_cast<int8_t>(v); break;
        case DType::Bool: static_cast<uint8_t*>(p)[i] = v != 0.0f ? 1 : 0; break;
    }
}

/// Typed loads and stores for kernels specialised on their element type.
__device__ __forceinline__ float ToFloat(float v) { return v; }
__device__ __forceinline__ float ToFloat(__half v) { return __half2float(v); }
__device__ __forceinline__ float ToFloat(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ __forceinline__ T FromFloat(float v);
template <> __device__ __forceinline__ float FromFloat<float>(float v) { return v; }
template <> __device__ __forceinline__ __half FromFloat<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 FromFloat<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

__device__ __forceinline__ float WarpMax(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
__device__ __forceinline__ float WarpSum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/// A convolution epilogue's activation (ConvAct), in float.
__device__ __forceinline__ float ApplyConvAct(ConvAct act, float v, float lo, float hi) {
    switch (act) {
        case ConvAct::Relu: return v > 0.0f ? v : 0.0f;
        case ConvAct::Clip: return fminf(fmaxf(v, lo), hi);
        case ConvAct::Sigmoid: return 1.0f / (1.0f + expf(-v));
        case ConvAct::Tanh: return tanhf(v);
        case ConvAct::Swish: return v / (1.0f + expf(-v));
        case ConvAct::None: break;
    }
    return v;
}

constexpr int kThreads = 256;

inline unsigned int Blocks(int64_t count, int threads = kThreads) {
    const int64_t b = (count + threads - 1) / threads;
    // A grid-stride loop covers the rest.
    return static_cast<unsigned int>(b < 1 ? 1 : (b > 65535 * 32 ? 65535 * 32 : b));
}

}  // namespace trellis::gpuacc::kernels
