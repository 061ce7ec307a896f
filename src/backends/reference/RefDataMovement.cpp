// CpuRef: the shared element copier and support-check helpers (see RefDataMovement.hpp).
#include "RefDataMovement.hpp"

#include <cstring>

namespace trellis::ref {

namespace {

std::string EncodingString(const TensorInfo& t) {
    std::string s = GetDataTypeName(t.GetDataType());
    if (t.IsQuantized()) {
        // Appended piecewise: GCC 12 warns falsely (-Wrestrict) on `"literal" + std::string` here.
        s.append(" (scale");
        for (float scale : t.GetQuantizationScales()) s.append(" ").append(std::to_string(scale));
        s.append(", offset ").append(std::to_string(t.GetQuantizationOffset()));
        if (t.GetQuantizationDim()) s.append(", axis ").append(std::to_string(*t.GetQuantizationDim()));
        s.append(")");
    }
    return s;
}

// One innermost row of n elements of ES bytes. Loads go through memcpy: tensors need not be
// aligned to their element size (user buffers), and fixed-size memcpy compiles to plain moves.
template <std::size_t ES>
void CopyRow(const std::byte* src, std::byte* dst, int64_t n, int64_t srcStride, int64_t dstStride) {
    if (srcStride == ES && dstStride == ES) {
        std::memcpy(dst, src, static_cast<std::size_t>(n) * ES);
        return;
    }
    for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * dstStride, src + i * srcStride, ES);
}

void CopyRowAny(const std::byte* src, std::byte* dst, int64_t n, int64_t srcStride, int64_t dstStride,
                std::size_t es) {
    switch (es) {
        case 1: CopyRow<1>(src, dst, n, srcStride, dstStride); return;
        case 2: CopyRow<2>(src, dst, n, srcStride, dstStride); return;
        case 4: CopyRow<4>(src, dst, n, srcStride, dstStride); return;
        case 8: CopyRow<8>(src, dst, n, srcStride, dstStride); return;
        default:
            for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * dstStride, src + i * srcStride, es);
    }
}

}  // namespace

std::vector<int64_t> RowMajorStrides(const TensorShape& shape) {
    std::vector<int64_t> strides(shape.GetNumDimensions());
    int64_t s = 1;
    for (unsigned int k = shape.GetNumDimensions(); k-- > 0;) {
        strides[k] = s;
        s *= shape[k];
    }
    return strides;
}

StridedCopy::StridedCopy(const std::vector<int64_t>& dims, const std::vector<int64_t>& srcStrides,
                         const std::vector<int64_t>& dstStrides, std::size_t elementSize)
    : m_ElementSize(elementSize) {
    for (int64_t d : dims) {
        if (d == 0) return;  // nothing to copy: leave m_Dims empty
    }
    // Size-1 dims never move the pointer, so they drop out; then neighbours that are contiguous
    // on both sides merge (a 0 stride merges with a 0 stride: broadcasting stays broadcasting).
    const int64_t es = static_cast<int64_t>(elementSize);
    for (std::size_t k = 0; k < dims.size(); ++k) {
        if (dims[k] == 1) continue;
        const int64_t s = srcStrides[k] * es, t = dstStrides[k] * es;
        if (!m_Dims.empty() && m_SrcStrides.back() == s * dims[k] && m_DstStrides.back() == t * dims[k]) {
            m_Dims.back() *= dims[k];
            m_SrcStrides.back() = s;
            m_DstStrides.back() = t;
        } else {
            m_Dims.push_back(dims[k]);
            m_SrcStrides.push_back(s);
            m_DstStrides.push_back(t);
        }
    }
    if (m_Dims.empty()) {  // a single element (scalar or all dims 1)
        m_Dims.push_back(1);
        m_SrcStrides.push_back(es);
        m_DstStrides.push_back(es);
    }
}

void StridedCopy::Run(const void* src, void* dst) const {
    if (m_Dims.empty()) return;
    Level(0, static_cast<const std::byte*>(src), static_cast<std::byte*>(dst));
}

void StridedCopy::Level(std::size_t level, const std::byte* src, std::byte* dst) const {
    const int64_t n = m_Dims[level];
    if (level + 1 == m_Dims.size()) {
        CopyRowAny(src, dst, n, m_SrcStrides[level], m_DstStrides[level], m_ElementSize);
        return;
    }
    for (int64_t i = 0; i < n; ++i) Level(level + 1, src + i * m_SrcStrides[level], dst + i * m_DstStrides[level]);
}

void FillElements(void* dst, const void* value, std::size_t elementSize, std::size_t count) {
    auto* out = static_cast<std::byte*>(dst);
    for (std::size_t i = 0; i < count; ++i) std::memcpy(out + i * elementSize, value, elementSize);
}

void CopyBytes(const void* src, void* dst, std::size_t bytes) {
    if (src != dst && bytes > 0) std::memcpy(dst, src, bytes);
}

bool Refuse(std::string* reason, const std::string& message) {
    if (reason) *reason = message;
    return false;
}

bool CheckArity(const char* op, const WorkloadInfo& info, std::size_t numInputs, std::size_t numOutputs,
                std::string* reason) {
    if (info.m_InputTensorInfos.size() != numInputs || info.m_OutputTensorInfos.size() != numOutputs) {
        return Refuse(reason, std::string(op) + ": has " + std::to_string(info.m_InputTensorInfos.size()) + " inputs and " +
                                  std::to_string(info.m_OutputTensorInfos.size()) + " outputs; CpuRef runs it with " +
                                  std::to_string(numInputs) + " and " + std::to_string(numOutputs) +
                                  " (parameter inputs folded into the descriptor)");
    }
    return true;
}

bool CheckSameEncoding(const char* op, const char* what, const TensorInfo& t, const char* refWhat,
                       const TensorInfo& ref, std::string* reason) {
    // Quantization parameters only mean something for quantized types (a Float32 info may carry a
    // default scale of 0 or none at all).
    const bool same = t.GetDataType() == ref.GetDataType() &&
                      (!t.IsQuantized() || (t.GetQuantizationScales() == ref.GetQuantizationScales() &&
                                            t.GetQuantizationOffset() == ref.GetQuantizationOffset() &&
                                            t.GetQuantizationDim() == ref.GetQuantizationDim()));
    if (same) return true;
    return Refuse(reason, std::string(op) + ": " + what + " is " + EncodingString(t) + " but " + refWhat + " is " +
                              EncodingString(ref) + "; CpuRef copies raw elements, which needs the same type and quantization");
}

bool CheckType(const char* op, const char* what, const TensorInfo& t, DataType type, std::string* reason) {
    if (t.GetDataType() == type) return true;
    return Refuse(reason, std::string(op) + ": " + what + " is " + GetDataTypeName(t.GetDataType()) + "; it must be " +
                              GetDataTypeName(type));
}

}  // namespace trellis::ref
