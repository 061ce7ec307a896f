// CpuRef: the shared element copier and support-check helpers (see RefDataMovement.hpp).
#include "RefDataMovement.hpp"

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
