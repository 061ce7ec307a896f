// Code generator, cuda target (the seed's own case: C++ source for a GPU compute library): an
// artifact that runs the network on an NVIDIA GPU through cuDNN (convolutions), cuBLASLt (Gemm and
// MatMul, the bias as the epilogue) and CUDA kernels of its own (everything else), in float32 (no
// TF32), so that it computes what CpuRef computes within 1e-4 relative L2 error.
//
// Files: <Name>.h / <Name>.cpp (host C++, any C++17 compiler, including cuda_runtime.h, cudnn.h and
// cublasLt.h) and <Name>_kernels.cu (the kernels, resources/CudaKernels.cu, compiled by nvcc),
// both in a namespace named after the artifact (<Name>_kernels) so that artifacts link into one
// program.
//
// The constructor: 1. configures every layer (cuDNN descriptors and the convolution algorithm,
// cuBLASLt layouts and the matmul algorithm, each kernel's parameters) and sums up the workspace
// the libraries asked for; 2. allocates one device arena - the tensors at the offsets of the static
// memory plan, then the largest workspace, then the weights - and the host arena of the interface
// tensors; 3. copies the weights file to the device, runs the layers once and captures them as a
// CUDA graph. Inference() copies the inputs to the device, launches the graph, copies the outputs
// back and waits: no allocation, no configuration.
#pragma once

#include "../../ArtifactOpGenerator.hpp"

namespace trellis::codegen::cuda {

class CudaOpGenerator final : public ArtifactOpGenerator {
public:
    CudaOpGenerator(const ArtifactGraph& graph, const ArtifactOptions& options);

private:
    void Begin() override;
    void VisitLayer(const GraphLayer& layer, int index) override;
    void Finish() override;

    struct Storage {
        enum class Kind { None, Device, Weight, Alias };
        Kind m_Kind = Kind::None;
        int m_Index = -1;  ///< device buffer, or aliased tensor
    };
    int Root(int tensor) const;
    /// `reinterpret_cast<TYPE>(l.device + OFFSET)` (or `l.weights + OFFSET`) for a tensor's data.
    ArtifactExprPtr Pointer(int tensor, const std::string& pointerType, std::size_t byteOffset = 0);
    ArtifactExprPtr DeviceBuffer(int buffer, const std::string& pointerType, std::size_t byteOffset = 0);
    /// `trellis::artifact::cuda::Check(call, "<layer>")` appended to the layers' run.
    void Launch(const GraphLayer& layer, const std::string& function, std::vector<ArtifactExprPtr> args);
    /// A Layers member configured in the constructor to `value`; returns `l.<member>`.
    ArtifactExprPtr Configured(const std::string& typeName, const std::string& base, ArtifactExprPtr value);
    std::string Kernels() const { return m_Options.m_Name + "_kernels::"; }

    void EmitConvolution(const GraphLayer& layer, int index);
    void EmitGemm(const GraphLayer& layer, int index);
    void EmitMatMul(const GraphLayer& layer, int index);
    void EmitMatMulCall(const GraphLayer& layer, int index, std::uint64_t m, std::uint64_t n, std::uint64_t k, bool transA,
                        bool transB, float alpha, float beta, int bias, int c, int batch, std::int64_t strideA,
                        std::int64_t strideB, std::int64_t strideY);
    void EmitBinary(const GraphLayer& layer);
    void EmitUnary(const GraphLayer& layer);
    void EmitPooling(const GraphLayer& layer);
    void EmitCopies(const GraphLayer& layer);
    void EmitOther(const GraphLayer& layer);

    std::vector<Storage> m_Storage;
    std::vector<int> m_InputBuffers, m_OutputBuffers;
    /// Per layer: the layer it is fused into (a ReLU after a convolution, a bias Add after a
    /// matrix product), or -1.
    std::vector<int> m_FusedInto;
    /// Per layer: the layer fused into it, or -1.
    std::vector<int> m_Fuses;
    ArtifactMemoryPlan m_Device;
    std::vector<std::pair<std::shared_ptr<ArtifactLiteral>, std::pair<int, std::size_t>>> m_DeviceOffsets;
    ArtifactBlockPtr m_Run;
    ArtifactExprPtr m_WorkspaceBytes;
    int m_Count = 0;
};

}  // namespace trellis::codegen::cuda
