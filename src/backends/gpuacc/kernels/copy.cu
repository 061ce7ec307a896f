// GpuAcc kernels: strided copies (transposes, slices, parts of a concatenation, broadcasts, layout
// changes between NCHW and NHWC, type conversions - one kernel for all of them, iterating in the
// destination's order so writes are coalesced), gathers and fills.
#include "Common.cuh"

namespace trellis::gpuacc {

std::size_t DTypeSize(DType t) {
    switch (t) {
        case DType::F32: case DType::I32: return 4;
        case DType::F16: case DType::BF16: return 2;
        case DType::I64: return 8;
        case DType::U8: case DType::I8: case DType::Bool: return 1;
    }
    return 0;
}

const char* DTypeName(DType t) {
    switch (t) {
        case DType::F32: return "f32";
        case DType::F16: return "f16";
        case DType::BF16: return "bf16";
        case DType::I32: return "i32";
        case DType::I64: return "i64";
        case DType::U8: return "u8";
        case DType::I8: return "i8";
        case DType::Bool: return "bool";
    }
    return "?";
}

namespace kernels {
namespace {

__device__ __forceinline__ bool IsInt(DType t) {
    return t == DType::I32 || t == DType::I64 || t == DType::U8 || t == DType::I8 || t == DType::Bool;
}

__device__ __forceinline__ int64_t LoadI(const void* p, int64_t i, DType t) {
    switch (t) {
        case DType::I32: return static_cast<const int32_t*>(p)[i];
        case DType::I64: return static_cast<const int64_t*>(p)[i];
        case DType::U8:
        case DType::Bool: return static_cast<const uint8_t*>(p)[i];
        case DType::I8: return static_cast<const int8_t*>(p)[i];
        default: return 0;
    }
}
__device__ __forceinline__ void StoreI(void* p, int64_t i, DType t, int64_t v) {
    switch (t) {
        case DType::I32: static_cast<int32_t*>(p)[i] = static_cast<int32_t>(v); break;
        case DType::I64: static_cast<int64_t*>(p)[i] = v; break;
        case DType::U8: static_cast<uint8_t*>(p)[i] = static_cast<uint8_t>(v); break;
        case DType::I8: static_cast<int8_t*>(p)[i] = static_cast<int8_t>(v); break;
        case DType::Bool: static_cast<uint8_t*>(p)[i] = v != 0 ? 1 : 0; break;
        default: break;
    }
}

/// I: the index type, 32-bit whenever every offset fits (see eltwise.cu).
template <typename I>
__device__ __forceinline__ void Offsets(const CopyLaunch& l, const I* dims, I idx, I& io, I& oo) {
    I rest = idx;
    io = static_cast<I>(l.m_InOffset);
    oo = static_cast<I>(l.m_OutOffset);
    for (int d = l.m_Rank - 1; d >= 0; --d) {
        const I q = rest / dims[d];
        const I i = rest - q * dims[d];
        rest = q;
        io += i * static_cast<I>(l.m_InStrides[d]);
        oo += i * static_cast<I>(l.m_OutStrides[d]);
    }
}

template <typename T, typename I>
__global__ void CopySameType(const CopyLaunch l, int64_t count64) {
    const T* in = static_cast<const T*>(l.m_In);
    T* out = static_cast<T*>(l.m_Out);
    const I count = static_cast<I>(count64);
    I dims[kMaxDims];
    for (int d = 0; d < l.m_Rank; ++d) dims[d] = static_cast<I>(l.m_Dims[d]);
    const I stride = static_cast<I>(blockDim.x) * static_cast<I>(gridDim.x);
    for (I idx = static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.x) + static_cast<I>(threadIdx.x); idx < count;
         idx += stride) {
        I io, oo;
        Offsets(l, dims, idx, io, oo);
        out[oo] = in[io];
    }
}

template <typename I>
__global__ void CopyConvert(const CopyLaunch l, int64_t count64) {
    const I count = static_cast<I>(count64);
    I dims[kMaxDims];
    for (int d = 0; d < l.m_Rank; ++d) dims[d] = static_cast<I>(l.m_Dims[d]);
    const I stride = static_cast<I>(blockDim.x) * static_cast<I>(gridDim.x);
    const bool ints = IsInt(l.m_InType) && IsInt(l.m_OutType);
    const bool toBool = l.m_OutType == DType::Bool;
    for (I idx = static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.x) + static_cast<I>(threadIdx.x); idx < count;
         idx += stride) {
        I io, oo;
        Offsets(l, dims, idx, io, oo);
        if (ints) {
            StoreI(l.m_Out, oo, l.m_OutType, LoadI(l.m_In, io, l.m_InType));
        } else if (toBool) {
            // Any non-zero value (NaN included) is true.
            StoreI(l.m_Out, oo, DType::Bool, LoadF(l.m_In, io, l.m_InType) != 0.0f ? 1 : 0);
        } else if (l.m_InType == DType::I64) {
            StoreF(l.m_Out, oo, l.m_OutType, static_cast<float>(LoadI(l.m_In, io, l.m_InType)));
        } else {
            StoreF(l.m_Out, oo, l.m_OutType, LoadF(l.m_In, io, l.m_InType));
        }
    }
}

template <typename T>
__global__ void GatherKernel(const T* data, const void* indices, T* out, DType indexType, int64_t outer,
                             int64_t axisDim, int64_t inner, int64_t numIndices, int* errorFlag) {
    const int64_t count = outer * numIndices * inner;
    const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
    for (int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < count; idx += stride) {
        const int64_t i = idx % inner;
        const int64_t j = (idx / inner) % numIndices;
        const int64_t o = idx / (inner * numIndices);
        int64_t k = indexType == DType::I64 ? static_cast<const int64_t*>(indices)[j]
                                            : static_cast<const int32_t*>(indices)[j];
        if (k < 0) k += axisDim;
        if (k < 0 || k >= axisDim) {
            out[idx] = T();
            if (errorFlag) *errorFlag = 1;
            continue;
        }
        out[idx] = data[(o * axisDim + k) * inner + i];
    }
}

__global__ void StepBarrierKernel() {}

__global__ void FillKernel(void* p, DType type, int64_t count, float value) {
    const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
    for (int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < count; idx += stride) {
        StoreF(p, idx, type, value);
    }
}

__global__ void FillRandomKernel(void* p, DType type, int64_t count, uint32_t seed, float scale, float offset) {
    const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
    for (int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < count; idx += stride) {
        uint32_t h = static_cast<uint32_t>(idx) * 0x9E3779B1u ^ seed;
        h ^= h >> 16;
        h *= 0x85EBCA6Bu;
        h ^= h >> 13;
        h *= 0xC2B2AE35u;
        h ^= h >> 16;
        StoreF(p, idx, type, offset + scale * (static_cast<float>(h >> 8) * (2.0f / 16777216.0f) - 1.0f));
    }
}

}  // namespace
}  // namespace kernels

namespace {
template <typename I>
void LaunchCopyWith(const CopyLaunch& l, std::size_t es, int64_t count, cudaStream_t stream) {
    const unsigned int blocks = kernels::Blocks(count);
    if (l.m_InType == l.m_OutType) {
        switch (es) {
            case 1: kernels::CopySameType<uint8_t, I><<<blocks, kernels::kThreads, 0, stream>>>(l, count); break;
            case 2: kernels::CopySameType<uint16_t, I><<<blocks, kernels::kThreads, 0, stream>>>(l, count); break;
            case 4: kernels::CopySameType<uint32_t, I><<<blocks, kernels::kThreads, 0, stream>>>(l, count); break;
            case 8: kernels::CopySameType<uint2, I><<<blocks, kernels::kThreads, 0, stream>>>(l, count); break;
            default: kernels::CopySameType<uint4, I><<<blocks, kernels::kThreads, 0, stream>>>(l, count); break;
        }
    } else {
        kernels::CopyConvert<I><<<blocks, kernels::kThreads, 0, stream>>>(l, count);
    }
}
}  // namespace

/// A same-type copy whose last dim is contiguous on both sides, recast as one of `vec` bytes per
/// element (16-byte loads and stores for half-precision rows of 8 and more) where sizes, strides,
/// offsets and addresses allow; returns false (and leaves `l` alone) where they do not.
bool Widen(CopyLaunch& l, std::size_t es, std::size_t vec) {
    const int last = l.m_Rank - 1;
    if (last < 0 || es >= vec || vec % es != 0) return false;
    const int64_t f = static_cast<int64_t>(vec / es);
    if (l.m_InStrides[last] != 1 || l.m_OutStrides[last] != 1 || l.m_Dims[last] % f != 0) return false;
    if (l.m_InOffset % f != 0 || l.m_OutOffset % f != 0) return false;
    if (reinterpret_cast<uintptr_t>(l.m_In) % vec != 0 || reinterpret_cast<uintptr_t>(l.m_Out) % vec != 0) return false;
    for (int d = 0; d < last; ++d) {
        if (l.m_InStrides[d] % f != 0 || l.m_OutStrides[d] % f != 0) return false;
    }
    for (int d = 0; d < last; ++d) {
        l.m_InStrides[d] /= f;
        l.m_OutStrides[d] /= f;
    }
    l.m_Dims[last] /= f;
    l.m_InOffset /= f;
    l.m_OutOffset /= f;
    return true;
}

cudaError_t LaunchCopy(const CopyLaunch& original, cudaStream_t stream) {
    CopyLaunch l = original;
    std::size_t es = DTypeSize(l.m_InType);
    if (l.m_InType == l.m_OutType) {
        for (std::size_t vec : {16u, 8u, 4u}) {
            if (Widen(l, es, vec)) {
                es = vec;
                break;
            }
        }
    }
    int64_t count = 1, inExtent = l.m_InOffset, outExtent = l.m_OutOffset;
    for (int d = 0; d < l.m_Rank; ++d) {
        count *= l.m_Dims[d];
        inExtent += (l.m_Dims[d] - 1) * (l.m_InStrides[d] < 0 ? -l.m_InStrides[d] : l.m_InStrides[d]);
        outExtent += (l.m_Dims[d] - 1) * (l.m_OutStrides[d] < 0 ? -l.m_OutStrides[d] : l.m_OutStrides[d]);
    }
    if (count == 0) return cudaSuccess;
    constexpr int64_t kLimit = int64_t(1) << 31;
    if (count < kLimit && inExtent < kLimit && outExtent < kLimit) LaunchCopyWith<int32_t>(l, es, count, stream);
    else LaunchCopyWith<int64_t>(l, es, count, stream);
    return cudaGetLastError();
}

cudaError_t LaunchGather(const void* data, const void* indices, void* out, DType type, DType indexType,
                         int64_t outer, int64_t axisDim, int64_t inner, int64_t numIndices, int* errorFlag,
                         cudaStream_t stream) {
    const int64_t count = outer * numIndices * inner;
    if (count == 0) return cudaSuccess;
    const unsigned int blocks = kernels::Blocks(count);
    switch (DTypeSize(type)) {
        case 1:
            kernels::GatherKernel<uint8_t><<<blocks, kernels::kThreads, 0, stream>>>(
                static_cast<const uint8_t*>(data), indices, static_cast<uint8_t*>(out), indexType, outer, axisDim,
                inner, numIndices, errorFlag);
            break;
        case 2:
            kernels::GatherKernel<uint16_t><<<blocks, kernels::kThreads, 0, stream>>>(
                static_cast<const uint16_t*>(data), indices, static_cast<uint16_t*>(out), indexType, outer, axisDim,
                inner, numIndices, errorFlag);
            break;
        case 4:
            kernels::GatherKernel<uint32_t><<<blocks, kernels::kThreads, 0, stream>>>(
                static_cast<const uint32_t*>(data), indices, static_cast<uint32_t*>(out), indexType, outer, axisDim,
                inner, numIndices, errorFlag);
            break;
        default:
            kernels::GatherKernel<uint64_t><<<blocks, kernels::kThreads, 0, stream>>>(
                static_cast<const uint64_t*>(data), indices, static_cast<uint64_t*>(out), indexType, outer, axisDim,
                inner, numIndices, errorFlag);
            break;
    }
    return cudaGetLastError();
}

cudaError_t LaunchFillRandom(void* p, DType type, int64_t count, uint32_t seed, float scale, cudaStream_t stream,
                             float offset) {
    if (count == 0) return cudaSuccess;
    kernels::FillRandomKernel<<<kernels::Blocks(count), kernels::kThreads, 0, stream>>>(p, type, count, seed, scale, offset);
    return cudaGetLastError();
}

cudaError_t LaunchStepBarrier(cudaStream_t stream) {
    kernels::StepBarrierKernel<<<1, 1, 0, stream>>>();
    return cudaGetLastError();
}

cudaError_t LaunchFill(void* p, DType type, int64_t count, float value, cudaStream_t stream) {
    if (count == 0) return cudaSuccess;
    kernels::FillKernel<<<kernels::Blocks(count), kernels::kThreads, 0, stream>>>(p, type, count, value);
    return cudaGetLastError();
}

}  // namespace trellis::gpuacc
