// CpuRef Pooling: N-d max and average pooling (global too) with strides, dilations, asymmetric
// pads, ceil_mode (already folded into the output shape by the core) and count_include_pad.
// Float32; max pooling (global too) also UInt8. The kernel is the snippet kernels/Pooling.hpp.
//
// The window is a Cartesian product of per-dim taps, so the tables built at create time are per
// dim: for output index o, the range of taps inside the input, and how many taps lie inside the
// padded input [-pad_begin, in + pad_end) (ranges computed, not counted tap by tap: see the snippet). Average divides by the product of the
// latter (count_include_pad) or of the former, as ONNX Runtime and PyTorch do; a ceil_mode window
// that overhangs the end padding therefore counts only its taps inside the padded input.
//
// Max pooling's optional output 1 (ONNX Indices, Signed64) holds the flat offset of the first
// maximum of each window in the whole input: (n * C + c) * plane + the offset inside the plane,
// row major, or with the spatial dims' order reversed for storage_order 1 (ONNX's reference).
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/Pooling.hpp"
#include "ops/RefMathCommon.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace trellis::ref {

namespace {

template <typename T>
class PoolingWorkload final : public IWorkload {
public:
    explicit PoolingWorkload(kernels::PoolingParams p) : m_P(std::move(p)) {}
    std::size_t GetScratchBytes() const override { return kernels::PoolingWorkspaceBytes(m_P); }
    void Execute(const WorkloadIo& io) const override {
        int64_t* indices = io.m_Outputs.size() > 1 ? static_cast<int64_t*>(io.m_Outputs[1]->Map()) : nullptr;
        kernels::Pooling<T>(m_P, static_cast<const T*>(io.m_Inputs[0]->Map()), static_cast<T*>(io.m_Outputs[0]->Map()),
                            indices, io.m_Scratch);
    }
private:
    const kernels::PoolingParams m_P;
};

}  // namespace

kernels::PoolingParams PoolingRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<PoolingDescriptor>();
    const TensorShape& xs = info.m_InputTensorInfos[0].GetShape();
    const TensorShape& ys = info.m_OutputTensorInfos[0].GetShape();
    kernels::PoolingParams p;
    p.max = d.m_Algorithm == PoolingAlgorithm::Max;
    p.countIncludePad = d.m_CountIncludePad;
    p.columnMajor = d.m_StorageOrder == 1;
    const unsigned int rank = xs.GetNumDimensions();
    for (unsigned int i = 2; i < rank; ++i) p.in.push_back(xs[i]);
    p.planes = math::Volume(xs, 0, 2);
    p.inPlane = math::Volume(xs, 2, rank);
    p.outPlane = math::Volume(ys, 2, rank);
    std::size_t stride = p.inPlane;
    for (unsigned int i = 2; i < rank; ++i) {
        const std::size_t d0 = i - 2;
        const long long in = xs[i], k = d.m_KernelShape[d0], s = d.m_Strides[d0], dl = d.m_Dilations[d0];
        const long long pb = d.m_PadsBegin[d0], pe = d.m_PadsEnd[d0];
        stride /= xs[i];
        kernels::PoolDimTaps taps;
        taps.dilation = dl;
        taps.stride = stride;
        for (long long o = 0; o < ys[i]; ++o) {
            const long long base = o * s - pb;
            long long first = 0, last = 0, padFirst = 0, padLast = 0;
            kernels::PoolingTapsIn(base, dl, k, -pb, in + pe, padFirst, padLast);
            kernels::PoolingTapsIn(base, dl, k, 0, in, first, last);
            taps.start.push_back(base);
            taps.first.push_back(first);
            taps.last.push_back(last);
            taps.paddedCount.push_back(static_cast<std::size_t>(padLast - padFirst));
        }
        p.out.push_back(ys[i]);
        p.taps.push_back(std::move(taps));
    }
    return p;
}

bool PoolingRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    const auto& d = layer.Get<PoolingDescriptor>();
    const DataType t = info.m_InputTensorInfos[0].GetDataType();
    const bool max = d.m_Algorithm == PoolingAlgorithm::Max;
    if (t != DataType::Float32 && !(max && t == DataType::UInt8)) {
        return math::Refuse(reason, std::string("Pooling: data type ") + GetDataTypeName(t) + " not supported by CpuRef (" +
                                        (max ? "Float32, UInt8" : "Float32 only") + ")");
    }
    if (info.m_OutputTensorInfos[0].GetDataType() != t) {
        return math::Refuse(reason, "Pooling: output type differs from the input's");
    }
    const std::size_t nsp = info.m_InputTensorInfos[0].GetNumDimensions() - 2;
    if (d.m_AutoPad != PaddingMode::Explicit || d.m_KernelShape.size() != nsp || d.m_Strides.size() != nsp ||
        d.m_Dilations.size() != nsp || d.m_PadsBegin.size() != nsp || d.m_PadsEnd.size() != nsp) {
        return math::Refuse(reason,
                            "Pooling: descriptor is not resolved (auto_pad must be explicit and kernel, strides, "
                            "dilations and pads must have one entry per spatial dim)");
    }
    return true;
}

IWorkloadPtr PoolingRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    if (info.m_InputTensorInfos[0].GetDataType() == DataType::UInt8) {
        return std::make_unique<PoolingWorkload<uint8_t>>(PoolingRefParams(layer, info));
    }
    return std::make_unique<PoolingWorkload<float>>(PoolingRefParams(layer, info));
}

}  // namespace trellis::ref
