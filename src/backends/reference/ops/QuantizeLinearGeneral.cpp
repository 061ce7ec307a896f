// CpuRef QuantizeLinear / DequantizeLinear beyond the 8-bit per-tensor/per-axis kernels of
// QuantizeLinear.cpp: Float16/BFloat16 x and scales, 16-bit, 4-bit and 2-bit integer and float8 /
// float4 quantized types (backends/SmallTypes.hpp), and blocked scales (opset 21), computed
// through float:
//  - QuantizeLinear: v = x / scale, in Float32 (rounded to x's type when x is 16-bit, as ONNX's
//    reference divides in x's type); integer types: saturate(round_half_even(v) + zero point);
//    float8/float4: the nearest value to v (+ zero point, which ONNX requires to be 0), saturated
//    when m_Saturate.
//  - DequantizeLinear: (x - zero point) * scale in double, rounded once to the output type.
// Element i uses the parameter of its index along m_Axis (per axis), of that index divided by
// m_BlockSize with its other coordinates (blocked), or the only one (per tensor).
#include "RefDataMovement.hpp"
#include "RefKernelTable.hpp"
#include "ops/QuantizeLinearGeneral.hpp"
#include "ops/RefFloatIo.hpp"

#include <trellis/Exceptions.hpp>
#include <trellis/backends/SmallTypes.hpp>

#include <cmath>
#include <limits>

namespace trellis::ref {

namespace {

// The parameter index of each element of x.
struct ParamIndexer {
    std::size_t m_Outer = 1, m_Dim = 1, m_Inner = 1;  // x viewed as [outer, dim, inner] around the axis
    std::size_t m_Count = 1;                           // parameters
    std::size_t m_Block = 0;                           // > 0: blocked
    ParamIndexer(const TensorInfo& x, const TensorInfo& scale, const QuantizeLinearDescriptor& d) {
        m_Count = scale.GetNumElements();
        if (m_Count == 1 && d.m_BlockSize == 0) return;
        const unsigned int axis = static_cast<unsigned int>(d.m_Axis);
        for (unsigned int k = 0; k < axis; ++k) m_Outer *= x.GetShape()[k];
        m_Dim = x.GetShape()[axis];
        for (unsigned int k = axis + 1; k < x.GetNumDimensions(); ++k) m_Inner *= x.GetShape()[k];
        m_Block = static_cast<std::size_t>(d.m_BlockSize);
    }
    std::size_t operator()(std::size_t i) const {
        if (m_Count == 1 && m_Block == 0) return 0;
        const std::size_t inner = i % m_Inner;
        const std::size_t a = (i / m_Inner) % m_Dim;
        if (m_Block == 0) return a;  // per axis
        const std::size_t outer = i / (m_Inner * m_Dim);
        const std::size_t blocks = (m_Dim + m_Block - 1) / m_Block;
        return (outer * blocks + a / m_Block) * m_Inner + inner;
    }
};

// A zero point is input 2 when the layer has it and it holds values (a default TensorInfo is a
// scalar, so the count alone cannot tell).
bool HasZeroPoint(const WorkloadInfo& info) {
    return info.m_InputTensorInfos.size() > 2 && info.m_InputTensorInfos[2].GetNumElements() != 0;
}

bool IsIntegerQuantized(DataType t) {
    switch (t) {
        case DataType::UInt8: case DataType::Signed8: case DataType::UInt16: case DataType::Signed16:
        case DataType::Int4: case DataType::UInt4: case DataType::Int2: case DataType::UInt2: case DataType::Signed32:
            return true;
        default:
            return false;
    }
}

// The range of an integer quantized type.
void IntegerRange(DataType t, double& lo, double& hi) {
    switch (t) {
        case DataType::UInt8: lo = 0, hi = 255; break;
        case DataType::Signed8: lo = -128, hi = 127; break;
        case DataType::UInt16: lo = 0, hi = 65535; break;
        case DataType::Signed16: lo = -32768, hi = 32767; break;
        case DataType::Int4: lo = -8, hi = 7; break;
        case DataType::UInt4: lo = 0, hi = 15; break;
        case DataType::Int2: lo = -2, hi = 1; break;
        case DataType::UInt2: lo = 0, hi = 3; break;
        default: lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max(); break;
    }
}

void StoreQuantized(DataType t, void* out, std::size_t i, double v) {
    switch (t) {
        case DataType::UInt8: static_cast<uint8_t*>(out)[i] = static_cast<uint8_t>(v); break;
        case DataType::Signed8: static_cast<int8_t*>(out)[i] = static_cast<int8_t>(v); break;
        case DataType::UInt16: static_cast<uint16_t*>(out)[i] = static_cast<uint16_t>(v); break;
        case DataType::Signed16: static_cast<int16_t*>(out)[i] = static_cast<int16_t>(v); break;
        default: static_cast<uint8_t*>(out)[i] = EncodeSmallInt(t, static_cast<int64_t>(v)); break;
    }
}

class QuantizeGeneralWorkload final : public IWorkload {
public:
    QuantizeGeneralWorkload(const QuantizeLinearDescriptor& d, const WorkloadInfo& info)
        : m_X(info.m_InputTensorInfos[0]), m_Scale(info.m_InputTensorInfos[1]),
          m_ZeroPoint(info.m_InputTensorInfos.size() > 2 ? info.m_InputTensorInfos[2] : TensorInfo()),
          m_HasZeroPoint(HasZeroPoint(info)), m_Out(info.m_OutputTensorInfos[0].GetDataType()), m_Index(m_X, m_Scale, d),
          m_Saturate(d.m_Saturate) {}
    void Execute(const WorkloadIo& io) const override {
        const ConstTensor x(m_X, io.m_Inputs[0]->Map());
        const ConstTensor scale(m_Scale, io.m_Inputs[1]->Map());
        const bool hasZp = m_HasZeroPoint;
        const ConstTensor zp(m_ZeroPoint, hasZp ? io.m_Inputs[2]->Map() : nullptr);
        void* out = io.m_Outputs[0]->Map();
        const bool integer = IsIntegerQuantized(m_Out);
        double lo = 0, hi = 0;
        if (integer) IntegerRange(m_Out, lo, hi);
        const DataType divType = m_X.GetDataType() == DataType::Signed32 ? DataType::Float32 : m_X.GetDataType();
        for (std::size_t i = 0; i < m_X.GetNumElements(); ++i) {
            const std::size_t k = m_Index(i);
            const float v = static_cast<float>(GetElementAsDouble(x, i)) / static_cast<float>(GetElementAsDouble(scale, k));
            const double q = floatio::Round(divType, v);
            const double z = hasZp ? GetElementAsDouble(zp, k) : 0.0;
            if (integer) {
                const double r = std::isnan(q) ? z : std::nearbyint(q) + z;
                StoreQuantized(m_Out, out, i, std::min(std::max(r, lo), hi));
            } else {
                static_cast<uint8_t*>(out)[i] = EncodeSmallType(m_Out, q + z, m_Saturate);
            }
        }
    }
private:
    const TensorInfo m_X, m_Scale, m_ZeroPoint;
    const bool m_HasZeroPoint;
    const DataType m_Out;
    const ParamIndexer m_Index;
    const bool m_Saturate;
};

class DequantizeGeneralWorkload final : public IWorkload {
public:
    DequantizeGeneralWorkload(const QueueDescriptor& layer, const WorkloadInfo& info)
        : m_Layer(layer.m_LayerName), m_X(info.m_InputTensorInfos[0]), m_Scale(info.m_InputTensorInfos[1]),
          m_ZeroPoint(info.m_InputTensorInfos.size() > 2 ? info.m_InputTensorInfos[2] : TensorInfo()),
          m_HasZeroPoint(HasZeroPoint(info)), m_Out(info.m_OutputTensorInfos[0].GetDataType()),
          m_Index(m_X, m_Scale, layer.Get<QuantizeLinearDescriptor>()) {}
    void Execute(const WorkloadIo& io) const override {
        const ConstTensor x(m_X, io.m_Inputs[0]->Map());
        const ConstTensor scale(m_Scale, io.m_Inputs[1]->Map());
        const bool hasZp = m_HasZeroPoint;
        const ConstTensor zp(m_ZeroPoint, hasZp ? io.m_Inputs[2]->Map() : nullptr);
        if (hasZp && m_X.GetDataType() == DataType::Signed32) {
            for (std::size_t k = 0; k < m_ZeroPoint.GetNumElements(); ++k) {
                if (GetElementAsDouble(zp, k) != 0.0) {
                    throw RuntimeException("DequantizeLinear '" + m_Layer + "': a Signed32 input needs zero point 0");
                }
            }
        }
        void* out = io.m_Outputs[0]->Map();
        for (std::size_t i = 0; i < m_X.GetNumElements(); ++i) {
            const std::size_t k = m_Index(i);
            const double z = hasZp ? GetElementAsDouble(zp, k) : 0.0;
            floatio::Write(m_Out, out, i, (GetElementAsDouble(x, i) - z) * GetElementAsDouble(scale, k));
        }
    }
private:
    const std::string m_Layer;
    const TensorInfo m_X, m_Scale, m_ZeroPoint;
    const bool m_HasZeroPoint;
    const DataType m_Out;
    const ParamIndexer m_Index;
};

}  // namespace

bool QuantizeLinearNeedsGeneralKernel(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<QuantizeLinearDescriptor>();
    const DataType x = info.m_InputTensorInfos[0].GetDataType();
    const DataType scale = info.m_InputTensorInfos.size() > 1 ? info.m_InputTensorInfos[1].GetDataType() : DataType::Float32;
    const DataType out = info.m_OutputTensorInfos[0].GetDataType();
    const bool quantize = layer.m_Type == LayerType::QuantizeLinear;
    const DataType data = quantize ? out : x;
    const bool eightBit = data == DataType::UInt8 || data == DataType::Signed8 || (!quantize && data == DataType::Signed32);
    const bool floatX = !quantize || x == DataType::Float32 || x == DataType::Signed32;
    const bool floatOut = quantize || out == DataType::Float32;
    return d.m_BlockSize > 0 || scale != DataType::Float32 || !eightBit || !floatX || !floatOut;
}

bool QuantizeLinearGeneralSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    const bool quantize = layer.m_Type == LayerType::QuantizeLinear;
    const char* op = quantize ? "QuantizeLinear" : "DequantizeLinear";
    if (info.m_InputTensorInfos.size() != 2 && info.m_InputTensorInfos.size() != 3) {
        return Refuse(reason, std::string(op) + ": expects 2 or 3 inputs (x, scale, optional zero point)");
    }
    const DataType scale = info.m_InputTensorInfos[1].GetDataType();
    if (!floatio::IsFloatType(scale) || scale == DataType::Float64) {
        return Refuse(reason, std::string(op) + ": scale type " + GetDataTypeName(scale) +
                                  " is not supported (CpuRef: Float32, Float16, BFloat16)");
    }
    const DataType data = quantize ? info.m_OutputTensorInfos[0].GetDataType() : info.m_InputTensorInfos[0].GetDataType();
    if (!IsIntegerQuantized(data) && !IsSmallType(data)) {
        return Refuse(reason, std::string(op) + ": quantized type " + GetDataTypeName(data) + " is not supported");
    }
    if (data == DataType::Float8E8M0) {
        return Refuse(reason, std::string(op) + ": Float8E8M0 holds scales, not quantized values");
    }
    const DataType real = quantize ? info.m_InputTensorInfos[0].GetDataType() : info.m_OutputTensorInfos[0].GetDataType();
    if (real != DataType::Signed32 && (!floatio::IsFloatType(real) || real == DataType::Float64)) {
        return Refuse(reason, std::string(op) + ": " + (quantize ? "input" : "output") + " type " + GetDataTypeName(real) +
                                  " is not supported (CpuRef: Float32, Float16, BFloat16)");
    }
    return true;
}

IWorkloadPtr QuantizeLinearGeneralCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    if (layer.m_Type == LayerType::QuantizeLinear) {
        return std::make_unique<QuantizeGeneralWorkload>(layer.Get<QuantizeLinearDescriptor>(), info);
    }
    return std::make_unique<DequantizeGeneralWorkload>(layer, info);
}

}  // namespace trellis::ref
