// Custom: the pre-compiled addition.
#include "CustomPreCompiledObject.hpp"

#include "CustomDevice.hpp"

#include <trellis/Exceptions.hpp>

namespace trellis::custom {

bool IsAdditionSupported(const TensorInfo& in0, const TensorInfo& in1, const TensorInfo& out, std::string* reason) {
    auto refuse = [&](const std::string& why) {
        if (reason) *reason = "Add: " + why;
        return false;
    };
    const TensorInfo* infos[3] = {&in0, &in1, &out};
    const char* names[3] = {"input 0", "input 1", "output"};
    for (int i = 0; i < 3; ++i) {
        if (infos[i]->GetDataType() != DataType::Float32) {
            return refuse(std::string(names[i]) + " is " + GetDataTypeName(infos[i]->GetDataType()) +
                          ", Custom computes Float32 only");
        }
    }
    const TensorShape& o = out.GetShape();
    for (int i = 0; i < 2; ++i) {
        const TensorShape& s = infos[i]->GetShape();
        if (s.GetNumDimensions() > o.GetNumDimensions()) {
            return refuse(std::string(names[i]) + " " + s.ToString() + " has more dims than the output " + o.ToString());
        }
        const unsigned int shift = o.GetNumDimensions() - s.GetNumDimensions();
        for (unsigned int d = 0; d < s.GetNumDimensions(); ++d) {
            if (s[d] != 1 && s[d] != o[d + shift]) {
                return refuse(std::string(names[i]) + " " + s.ToString() + " does not broadcast to the output " +
                              o.ToString() + " (dim " + std::to_string(d) + " must be 1 or " +
                              std::to_string(o[d + shift]) + ")");
            }
        }
    }
    // The output is exactly the broadcast shape: each dim is the inputs' non-1 dim, or 1.
    for (unsigned int d = 0; d < o.GetNumDimensions(); ++d) {
        unsigned int expected = 1;
        for (int i = 0; i < 2; ++i) {
            const TensorShape& s = infos[i]->GetShape();
            const int j = static_cast<int>(d) - static_cast<int>(o.GetNumDimensions() - s.GetNumDimensions());
            if (j >= 0 && s[static_cast<unsigned int>(j)] != 1) expected = s[static_cast<unsigned int>(j)];
        }
        if (o[d] != expected) {
            return refuse("output " + o.ToString() + " is not the broadcast of " + in0.GetShape().ToString() + " and " +
                          in1.GetShape().ToString() + " (dim " + std::to_string(d) + " must be " +
                          std::to_string(expected) + ")");
        }
    }
    return true;
}

CustomPreCompiledObject::CustomPreCompiledObject(const std::string& layerName, const TensorInfo& in0,
                                                 const TensorInfo& in1, const TensorInfo& out)
    : m_Inputs{in0, in1}, m_Output(out) {
    std::string reason;
    if (!IsAdditionSupported(in0, in1, out, &reason)) {
        throw LayerValidationException("Custom: cannot pre-compile layer '" + layerName + "': " + reason);
    }
    m_SameShape = in0.GetShape() == out.GetShape() && in1.GetShape() == out.GetShape();
    const TensorShape& o = out.GetShape();
    const unsigned int rank = o.GetNumDimensions();
    for (unsigned int d = 0; d < rank; ++d) m_Dims.push_back(o[d]);
    for (int k = 0; k < 2; ++k) {
        const TensorShape& s = m_Inputs[k].GetShape();
        m_Strides[k].assign(rank, 0);
        std::size_t stride = 1;
        for (unsigned int j = s.GetNumDimensions(); j-- > 0;) {
            const unsigned int d = rank - (s.GetNumDimensions() - j);
            if (s[j] != 1) m_Strides[k][d] = stride;
            stride *= s[j];
        }
    }
    CustomDevice::Instance().RegisterObject(this);
}

CustomPreCompiledObject::~CustomPreCompiledObject() { CustomDevice::Instance().UnregisterObject(this); }

bool CustomPreCompiledObject::IsCustomObject(const void* object) { return CustomDevice::Instance().IsLiveObject(object); }

void CustomPreCompiledObject::Run(const float* in0, const float* in1, float* out) const {
    const std::size_t n = m_Output.GetNumElements();
    if (n == 0) return;
    if (m_SameShape) {
        for (std::size_t i = 0; i < n; ++i) out[i] = in0[i] + in1[i];
        return;
    }
    // Walk the output in order with an odometer over its dims, moving each input by its strides.
    const std::size_t rank = m_Dims.size();
    std::vector<std::size_t> index(rank, 0);
    std::size_t a = 0, b = 0;
    for (std::size_t i = 0; i < n; ++i) {
        out[i] = in0[a] + in1[b];
        for (std::size_t d = rank; d-- > 0;) {
            a += m_Strides[0][d];
            b += m_Strides[1][d];
            if (++index[d] < m_Dims[d]) break;
            a -= m_Strides[0][d] * m_Dims[d];
            b -= m_Strides[1][d] * m_Dims[d];
            index[d] = 0;
        }
    }
}

std::string CustomPreCompiledObject::ToString() const {
    return "Add " + m_Inputs[0].GetShape().ToString() + " + " + m_Inputs[1].GetShape().ToString() + " -> " +
           m_Output.GetShape().ToString();
}

}  // namespace trellis::custom
