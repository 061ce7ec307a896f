// CpuRef QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear (ONNX semantics).
//  - QuantizeLinear: Float32 or Signed32 x to UInt8 or Signed8, y = saturate(round(x / scale) +
//    zero_point); the division is done in Float32 and rounds half to even, as ONNX's reference
//    and ONNX Runtime do, so results match them bit for bit.
//  - DequantizeLinear: UInt8, Signed8 or Signed32 x to Float32, y = (x - zero_point) * scale,
//    computed in double and rounded once to Float32 (exact up to that rounding for 8-bit x). A
//    Signed32 x needs zero point 0 (RuntimeException otherwise, as ONNX requires).
//  - DynamicQuantizeLinear: Float32 to UInt8 with scale = (max(0, max x) - min(0, min x)) / 255,
//    zero point = saturate(round(-min(0, min x) / scale)), then QuantizeLinear. An all-zero x has
//    scale 0: zero point 0 and y 0 (ONNX leaves that case undefined: it would divide 0 by 0).
// Per-axis parameters: element i uses the scale and zero point of its index along m_Axis.
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"
#include "ops/QuantizeLinearGeneral.hpp"

#include <trellis/Exceptions.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace trellis::ref {

namespace {

// How element i of x finds its parameter index: (i / m_Inner) % m_Count (m_Count 1: per tensor).
struct ParameterIndex {
    std::size_t m_Inner = 1;
    std::size_t m_Count = 1;
    ParameterIndex(const TensorInfo& x, const TensorInfo& scale, int64_t axis) {
        m_Count = scale.GetNumElements();
        if (m_Count == 1) return;
        for (unsigned int k = static_cast<unsigned int>(axis) + 1; k < x.GetNumDimensions(); ++k) m_Inner *= x.GetShape()[k];
    }
    std::size_t operator()(std::size_t i) const { return m_Count == 1 ? 0 : (i / m_Inner) % m_Count; }
};

int32_t ReadZeroPoint(const void* zp, DataType type, std::size_t k) {
    if (!zp) return 0;
    switch (type) {
        case DataType::UInt8: return static_cast<const uint8_t*>(zp)[k];
        case DataType::Signed8: return static_cast<const int8_t*>(zp)[k];
        case DataType::Signed32: return static_cast<const int32_t*>(zp)[k];
        default: return 0;  // refused by the support check
    }
}

// round_half_even(v) + zp, saturated to Q.
template <typename Q>
Q Saturate(float rounded, int32_t zp) {
    const float v = rounded + static_cast<float>(zp);
    const float lo = static_cast<float>(std::numeric_limits<Q>::min());
    const float hi = static_cast<float>(std::numeric_limits<Q>::max());
    if (std::isnan(v)) return static_cast<Q>(zp);
    return static_cast<Q>(std::clamp(v, lo, hi));
}

template <typename Q>
void QuantizeLoop(const float* x, std::size_t n, const float* scale, const void* zp, DataType zpType,
                  const ParameterIndex& index, Q* y) {
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t k = index(i);
        y[i] = Saturate<Q>(std::nearbyint(x[i] / scale[k]), ReadZeroPoint(zp, zpType, k));
    }
}

class QuantizeLinearWorkload final : public IWorkload {
public:
    QuantizeLinearWorkload(const QueueDescriptor& layer, const WorkloadInfo& info)
        : m_Index(info.m_InputTensorInfos[0], info.m_InputTensorInfos[1], layer.Get<QuantizeLinearDescriptor>().m_Axis),
          m_InputType(info.m_InputTensorInfos[0].GetDataType()), m_OutputType(info.m_OutputTensorInfos[0].GetDataType()),
          m_HasZeroPoint(info.m_InputTensorInfos.size() > 2 && info.m_InputTensorInfos[2].GetNumElements() != 0),
          m_Count(info.m_InputTensorInfos[0].GetNumElements()) {}
    void Execute(const WorkloadIo& io) const override {
        const float* scale = static_cast<const float*>(io.m_Inputs[1]->Map());
        const void* zp = m_HasZeroPoint ? io.m_Inputs[2]->Map() : nullptr;
        const void* in = io.m_Inputs[0]->Map();
        // A Signed32 x is converted to Float32 first (ONNX defines the division in float).
        std::vector<float> converted;
        const float* x = static_cast<const float*>(in);
        if (m_InputType == DataType::Signed32) {
            const auto* xi = static_cast<const int32_t*>(in);
            converted.assign(xi, xi + m_Count);
            x = converted.data();
        }
        void* out = io.m_Outputs[0]->Map();
        if (m_OutputType == DataType::Signed8) {
            QuantizeLoop(x, m_Count, scale, zp, m_OutputType, m_Index, static_cast<int8_t*>(out));
        } else {
            QuantizeLoop(x, m_Count, scale, zp, m_OutputType, m_Index, static_cast<uint8_t*>(out));
        }
    }
private:
    ParameterIndex m_Index;
    DataType m_InputType, m_OutputType;
    bool m_HasZeroPoint;
    std::size_t m_Count;
};

template <typename Q>
void DequantizeLoop(const Q* x, std::size_t n, const float* scale, const void* zp, DataType type,
                    const ParameterIndex& index, float* y) {
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t k = index(i);
        const int64_t diff = static_cast<int64_t>(x[i]) - ReadZeroPoint(zp, type, k);
        y[i] = static_cast<float>(static_cast<double>(diff) * static_cast<double>(scale[k]));
    }
}

class DequantizeLinearWorkload final : public IWorkload {
public:
    DequantizeLinearWorkload(const QueueDescriptor& layer, const WorkloadInfo& info)
        : m_Layer(layer.m_LayerName),
          m_Index(info.m_InputTensorInfos[0], info.m_InputTensorInfos[1], layer.Get<QuantizeLinearDescriptor>().m_Axis),
          m_Type(info.m_InputTensorInfos[0].GetDataType()),
          m_HasZeroPoint(info.m_InputTensorInfos.size() > 2 && info.m_InputTensorInfos[2].GetNumElements() != 0),
          m_Count(info.m_InputTensorInfos[0].GetNumElements()),
          m_ParamCount(info.m_InputTensorInfos[1].GetNumElements()) {}
    void Execute(const WorkloadIo& io) const override {
        const float* scale = static_cast<const float*>(io.m_Inputs[1]->Map());
        const void* zp = m_HasZeroPoint ? io.m_Inputs[2]->Map() : nullptr;
        const void* x = io.m_Inputs[0]->Map();
        float* y = static_cast<float*>(io.m_Outputs[0]->Map());
        switch (m_Type) {
            case DataType::UInt8: return DequantizeLoop(static_cast<const uint8_t*>(x), m_Count, scale, zp, m_Type, m_Index, y);
            case DataType::Signed8: return DequantizeLoop(static_cast<const int8_t*>(x), m_Count, scale, zp, m_Type, m_Index, y);
            default:
                for (std::size_t k = 0; zp && k < m_ParamCount; ++k) {
                    if (ReadZeroPoint(zp, m_Type, k) != 0) {
                        throw RuntimeException("DequantizeLinear '" + m_Layer + "': a Signed32 input needs zero point 0, got " +
                                               std::to_string(ReadZeroPoint(zp, m_Type, k)) + " at index " + std::to_string(k));
                    }
                }
                return DequantizeLoop(static_cast<const int32_t*>(x), m_Count, scale, zp, m_Type, m_Index, y);
        }
    }
private:
    std::string m_Layer;
    ParameterIndex m_Index;
    DataType m_Type;
    bool m_HasZeroPoint;
    std::size_t m_Count, m_ParamCount;
};

class DynamicQuantizeLinearWorkload final : public IWorkload {
public:
    explicit DynamicQuantizeLinearWorkload(std::size_t count) : m_Count(count) {}
    void Execute(const WorkloadIo& io) const override {
        const float* x = static_cast<const float*>(io.m_Inputs[0]->Map());
        float lo = 0.0f, hi = 0.0f;  // the range always includes 0
        for (std::size_t i = 0; i < m_Count; ++i) {
            lo = std::min(lo, x[i]);
            hi = std::max(hi, x[i]);
        }
        const float scale = (hi - lo) / 255.0f;
        const uint8_t zp = scale == 0.0f ? 0 : Saturate<uint8_t>(std::nearbyint(0.0f - lo / scale), 0);
        uint8_t* y = static_cast<uint8_t*>(io.m_Outputs[0]->Map());
        for (std::size_t i = 0; i < m_Count; ++i) {
            y[i] = scale == 0.0f ? 0 : Saturate<uint8_t>(std::nearbyint(x[i] / scale), zp);
        }
        *static_cast<float*>(io.m_Outputs[1]->Map()) = scale;
        *static_cast<uint8_t*>(io.m_Outputs[2]->Map()) = zp;
    }
private:
    std::size_t m_Count;
};

bool CheckParameters(const char* op, const WorkloadInfo& info, std::string* reason) {
    if (info.m_InputTensorInfos.size() != 2 && info.m_InputTensorInfos.size() != 3) {
        return Refuse(reason, std::string(op) + ": expects 2 or 3 inputs (x, scale, optional zero point), got " +
                                  std::to_string(info.m_InputTensorInfos.size()));
    }
    if (info.m_OutputTensorInfos.size() != 1) return Refuse(reason, std::string(op) + ": expects 1 output");
    return CheckType(op, "scale", info.m_InputTensorInfos[1], DataType::Float32, reason);
}

bool HasZeroPoint(const WorkloadInfo& info) {
    return info.m_InputTensorInfos.size() > 2 && info.m_InputTensorInfos[2].GetNumElements() != 0;
}

}  // namespace

bool QuantizeLinearRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    if (QuantizeLinearNeedsGeneralKernel(layer, info)) return QuantizeLinearGeneralSupport(layer, info, reason);
    if (!CheckParameters("QuantizeLinear", info, reason)) return false;
    const DataType in = info.m_InputTensorInfos[0].GetDataType();
    const DataType out = info.m_OutputTensorInfos[0].GetDataType();
    if (in != DataType::Float32 && in != DataType::Signed32) {
        return Refuse(reason, std::string("QuantizeLinear: input type ") + GetDataTypeName(in) +
                                  " is not supported (CpuRef: Float32, Signed32)");
    }
    if (out != DataType::UInt8 && out != DataType::Signed8) {
        return Refuse(reason, std::string("QuantizeLinear: output type ") + GetDataTypeName(out) +
                                  " is not supported (CpuRef: UInt8, Signed8)");
    }
    return !HasZeroPoint(info) || CheckType("QuantizeLinear", "zero point", info.m_InputTensorInfos[2], out, reason);
}

IWorkloadPtr QuantizeLinearRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    if (QuantizeLinearNeedsGeneralKernel(layer, info)) return QuantizeLinearGeneralCreate(layer, info);
    return std::make_unique<QuantizeLinearWorkload>(layer, info);
}

bool DequantizeLinearRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    if (QuantizeLinearNeedsGeneralKernel(layer, info)) return QuantizeLinearGeneralSupport(layer, info, reason);
    if (!CheckParameters("DequantizeLinear", info, reason)) return false;
    const TensorInfo& x = info.m_InputTensorInfos[0];
    const DataType in = x.GetDataType();
    if (in != DataType::UInt8 && in != DataType::Signed8 && in != DataType::Signed32) {
        return Refuse(reason, std::string("DequantizeLinear: input type ") + GetDataTypeName(in) +
                                  " is not supported (CpuRef: UInt8, Signed8, Signed32)");
    }
    if (HasZeroPoint(info) && !CheckType("DequantizeLinear", "zero point", info.m_InputTensorInfos[2], in, reason)) {
        return false;
    }
    return CheckType("DequantizeLinear", "output", info.m_OutputTensorInfos[0], DataType::Float32, reason);
}

IWorkloadPtr DequantizeLinearRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    if (QuantizeLinearNeedsGeneralKernel(layer, info)) return QuantizeLinearGeneralCreate(layer, info);
    return std::make_unique<DequantizeLinearWorkload>(layer, info);
}

bool DynamicQuantizeLinearRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    if (!CheckArity("DynamicQuantizeLinear", info, 1, 3, reason)) return false;
    return CheckType("DynamicQuantizeLinear", "input", info.m_InputTensorInfos[0], DataType::Float32, reason) &&
           CheckType("DynamicQuantizeLinear", "output 0", info.m_OutputTensorInfos[0], DataType::UInt8, reason) &&
           CheckType("DynamicQuantizeLinear", "output 1", info.m_OutputTensorInfos[1], DataType::Float32, reason) &&
           CheckType("DynamicQuantizeLinear", "output 2", info.m_OutputTensorInfos[2], DataType::UInt8, reason);
}

IWorkloadPtr DynamicQuantizeLinearRefCreate(const QueueDescriptor&, const WorkloadInfo& info) {
    return std::make_unique<DynamicQuantizeLinearWorkload>(info.m_InputTensorInfos[0].GetNumElements());
}

}  // namespace trellis::ref
