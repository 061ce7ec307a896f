// GpuAcc kernels: fused element-wise programs. One thread per output element runs the region's
// fused chain (GpuAccFusion.cpp) on registers: loads with broadcasting through per-input strides,
// up to kEwMaxInstrs operations, one store. A chain of k element-wise layers thus reads its inputs
// and writes its output once instead of k times.
#include "Common.cuh"

#include <math_constants.h>

namespace trellis::gpuacc {

namespace kernels {
namespace {

__device__ __forceinline__ float Unary(EwOp op, float x, float f0, float f1) {
    switch (op) {
        case EwOp::Neg: return -x;
        case EwOp::Abs: return fabsf(x);
        case EwOp::Exp: return expf(x);
        case EwOp::Log: return logf(x);
        case EwOp::Sqrt: return sqrtf(x);
        case EwOp::Rsqrt: return rsqrtf(x);
        case EwOp::Reciprocal: return 1.0f / x;
        case EwOp::Relu: return x > 0.0f ? x : 0.0f;
        case EwOp::LeakyRelu: return x >= 0.0f ? x : x * f0;
        case EwOp::Elu: return x > 0.0f ? x : f0 * expm1f(x);
        case EwOp::Sigmoid: return 1.0f / (1.0f + expf(-x));
        case EwOp::Tanh: return tanhf(x);
        case EwOp::HardSigmoid: return fminf(1.0f, fmaxf(0.0f, f0 * x + f1));
        case EwOp::HardSwish: return x * fminf(1.0f, fmaxf(0.0f, x / 6.0f + 0.5f));
        case EwOp::Erf: return erff(x);
        case EwOp::Gelu: return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
        case EwOp::GeluTanh: {
            const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
            return 0.5f * x * (1.0f + tanhf(u));
        }
        case EwOp::Clip: return fminf(fmaxf(x, f0), f1);
        case EwOp::Floor: return floorf(x);
        case EwOp::Ceil: return ceilf(x);
        case EwOp::Round: return rintf(x);  // half to even in the default rounding mode
        case EwOp::Sign: return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x);  // 0 and NaN stay
        case EwOp::Softplus: return x > 20.0f ? x : log1pf(expf(x));
        case EwOp::Softsign: return x / (1.0f + fabsf(x));
        case EwOp::Selu: return f1 * (x > 0.0f ? x : f0 * expm1f(x));
        case EwOp::Celu: return fmaxf(0.0f, x) + fminf(0.0f, f0 * expm1f(x / f0));
        case EwOp::Mish: {
            const float sp = x > 20.0f ? x : log1pf(expf(x));
            return x * tanhf(sp);
        }
        case EwOp::Swish: return x / (1.0f + expf(-x));
        case EwOp::ThresholdedRelu: return x > f0 ? x : 0.0f;
        case EwOp::Shrink: return x < -f0 ? x + f1 : (x > f0 ? x - f1 : 0.0f);
        case EwOp::Sin: return sinf(x);
        case EwOp::Cos: return cosf(x);
        case EwOp::Tan: return tanf(x);
        case EwOp::Asin: return asinf(x);
        case EwOp::Acos: return acosf(x);
        case EwOp::Atan: return atanf(x);
        case EwOp::Sinh: return sinhf(x);
        case EwOp::Cosh: return coshf(x);
        case EwOp::Asinh: return asinhf(x);
        case EwOp::Acosh: return acoshf(x);
        case EwOp::Atanh: return atanhf(x);
        case EwOp::Not: return x == 0.0f ? 1.0f : 0.0f;
        case EwOp::IsNaN: return isnan(x) ? 1.0f : 0.0f;
        case EwOp::IsInf: return (isinf(x) && ((f0 != 0.0f && x > 0.0f) || (f1 != 0.0f && x < 0.0f))) ? 1.0f : 0.0f;
        case EwOp::Affine: return x * f0 + f1;
        default: return 0.0f;
    }
}

__device__ __forceinline__ float Binary(EwOp op, float a, float b) {
    switch (op) {
        case EwOp::Add: return a + b;
        case EwOp::Sub: return a - b;
        case EwOp::Mul: return a * b;
        case EwOp::Div: return a / b;
        case EwOp::Pow: return powf(a, b);
        case EwOp::Max: return (isnan(a) || isnan(b)) ? CUDART_NAN_F : fmaxf(a, b);
        case EwOp::Min: return (isnan(a) || isnan(b)) ? CUDART_NAN_F : fminf(a, b);
        case EwOp::Equal: return a == b ? 1.0f : 0.0f;
        case EwOp::Less: return a < b ? 1.0f : 0.0f;
        case EwOp::Greater: return a > b ? 1.0f : 0.0f;
        case EwOp::LessEq: return a <= b ? 1.0f : 0.0f;
        case EwOp::GreaterEq: return a >= b ? 1.0f : 0.0f;
        case EwOp::And: return (a != 0.0f && b != 0.0f) ? 1.0f : 0.0f;
        case EwOp::Or: return (a != 0.0f || b != 0.0f) ? 1.0f : 0.0f;
        case EwOp::Xor: return ((a != 0.0f) != (b != 0.0f)) ? 1.0f : 0.0f;
        case EwOp::FMod: return fmodf(a, b);
        case EwOp::PRelu: return a >= 0.0f ? a : a * b;
        default: return 0.0f;
    }
}

/// I: the index type; 32-bit whenever every offset fits (64-bit division is emulated and costs
/// tens of instructions per dim).
template <typename I>
__global__ void EltwiseKernel(const EwLaunch l) {
    const I count = static_cast<I>(l.m_Count);
    const I stride = static_cast<I>(blockDim.x) * static_cast<I>(gridDim.x);
    I dims[kMaxDims];
    for (int d = 0; d < l.m_Rank; ++d) dims[d] = static_cast<I>(l.m_Dims[d]);
    for (I idx = static_cast<I>(blockIdx.x) * static_cast<I>(blockDim.x) + static_cast<I>(threadIdx.x); idx < count;
         idx += stride) {
        I offsets[kEwMaxInputs];
        if (l.m_Contiguous) {
            for (int k = 0; k < l.m_Program.m_NumInputs; ++k) offsets[k] = idx;
        } else {
            for (int k = 0; k < l.m_Program.m_NumInputs; ++k) offsets[k] = 0;
            I rest = idx;
            for (int d = l.m_Rank - 1; d >= 0; --d) {
                const I q = rest / dims[d];
                const I i = rest - q * dims[d];
                rest = q;
                for (int k = 0; k < l.m_Program.m_NumInputs; ++k) offsets[k] += i * static_cast<I>(l.m_InputStrides[k][d]);
            }
        }
        float r[kEwMaxRegs];
        for (int n = 0; n < l.m_Program.m_NumInstrs; ++n) {
            const EwInstr& in = l.m_Program.m_Instrs[n];
            float v;
            if (in.m_Op == EwOp::Load) {
                v = LoadF(l.m_Inputs[in.m_A], offsets[in.m_A], l.m_Program.m_InputTypes[in.m_A]);
            } else if (in.m_Op == EwOp::Imm) {
                v = in.m_F0;
            } else if (in.m_Op == EwOp::Where) {
                v = r[in.m_A] != 0.0f ? r[in.m_B] : r[in.m_C];
            } else if (in.m_Op >= EwOp::Add) {
                v = Binary(in.m_Op, r[in.m_A], r[in.m_B]);
            } else {
                v = Unary(in.m_Op, r[in.m_A], in.m_F0, in.m_F1);
            }
            r[in.m_Dst] = v;
        }
        StoreF(l.m_Output, idx, l.m_Program.m_OutputType, r[l.m_Program.m_ResultReg]);
    }
}

}  // namespace
}  // namespace kernels

cudaError_t LaunchEltwise(const EwLaunch& launch, cudaStream_t stream) {
    if (launch.m_Count == 0) return cudaSuccess;
    // The largest offset any input or the output reaches decides the index type.
    int64_t extent = launch.m_Count;
    for (int k = 0; k < launch.m_Program.m_NumInputs; ++k) {
        int64_t e = 0;
        for (int d = 0; d < launch.m_Rank; ++d) {
            const int64_t s = launch.m_InputStrides[k][d];
            e += (launch.m_Dims[d] - 1) * (s < 0 ? -s : s);
        }
        extent = e + 1 > extent ? e + 1 : extent;
    }
    if (extent < (int64_t(1) << 31)) {
        kernels::EltwiseKernel<int32_t><<<kernels::Blocks(launch.m_Count), kernels::kThreads, 0, stream>>>(launch);
    } else {
        kernels::EltwiseKernel<int64_t><<<kernels::Blocks(launch.m_Count), kernels::kThreads, 0, stream>>>(launch);
    }
    return cudaGetLastError();
}

}  // namespace trellis::gpuacc
