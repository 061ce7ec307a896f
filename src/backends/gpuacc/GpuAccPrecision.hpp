// GpuAcc: the Precision backend option - the types a region computes in.
//
//   fp32 (default): Float32 everywhere, no TF32 (cuBLASLt CUBLAS_COMPUTE_32F, cuDNN engines
//                   without the tensor-core note): close to CpuRef (the 1e-4 tests).
//   tf32:           Float32 tensors, matrix products and convolutions on TF32 tensor cores.
//   fp16 / bf16:    activations and weights (converted at load) in half / bfloat16, products
//                   accumulated in float; softmax, normalization and reductions compute in float.
//                   Network inputs and outputs stay Float32 (converted at the region's edges).
#pragma once

#include "kernels/GpuAccKernels.hpp"

namespace trellis::gpuacc {

enum class Precision { Fp32, Tf32, Fp16, Bf16 };

inline const char* PrecisionName(Precision p) {
    switch (p) {
        case Precision::Fp32: return "fp32";
        case Precision::Tf32: return "tf32";
        case Precision::Fp16: return "fp16";
        case Precision::Bf16: return "bf16";
    }
    return "?";
}

/// The device type of a Float32 network tensor in this precision.
inline DType ComputeType(Precision p) {
    switch (p) {
        case Precision::Fp16: return DType::F16;
        case Precision::Bf16: return DType::BF16;
        default: return DType::F32;
    }
}

}  // namespace trellis::gpuacc
