// GpuAcc kernels: a naive matrix product in float, the reference each cuBLASLt algorithm is checked
// against on scratch data when a matmul is planned (GpuAccMatMul.cpp): an algorithm whose result
// disagrees is not used, whatever its speed. One thread per output element of the rows checked.
#include "Common.cuh"

namespace trellis::gpuacc {

namespace kernels {
namespace {

__global__ void GemmReferenceKernel(const GemmReferenceLaunch l) {
    const int64_t count = l.m_Rows * l.m_N;
    const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
    for (int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < count; idx += stride) {
        const int64_t m = idx / l.m_N, n = idx % l.m_N;
        float acc = 0.0f;
        for (int64_t k = 0; k < l.m_K; ++k) {
            const float a = LoadF(l.m_A, l.m_TransA ? k * l.m_LdA + m : m * l.m_LdA + k, l.m_Type);
            const float b = LoadF(l.m_B, l.m_TransB ? n * l.m_LdB + k : k * l.m_LdB + n, l.m_Type);
            acc += a * b;
        }
        float v = l.m_Alpha * acc;
        if (l.m_C) v += l.m_Beta * LoadF(l.m_C, idx, l.m_Type);
        if (l.m_Bias) v += LoadF(l.m_Bias, n, l.m_Type);
        if (l.m_Activation == 1) v = v > 0.0f ? v : 0.0f;
        if (l.m_Activation == 2) v = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
        l.m_Out[idx] = v;
    }
}

}  // namespace
}  // namespace kernels

cudaError_t LaunchGemmReference(const GemmReferenceLaunch& l, cudaStream_t stream) {
    const int64_t count = l.m_Rows * l.m_N;
    if (count == 0) return cudaSuccess;
    kernels::GemmReferenceKernel<<<kernels::Blocks(count), kernels::kThreads, 0, stream>>>(l);
    return cudaGetLastError();
}

}  // namespace trellis::gpuacc
