// CpuRef Recurrent (ONNX LSTM, GRU, RNN), Float32. Each step computes, per batch row, the gate
// pre-activations x_t * W^T + h * R^T (+ Wb + Rb) with the shared GEMM, then applies the ONNX
// formulas (LSTM gates i, o, f, c with optional peepholes, input_forget and clip; GRU z, r, h with
// linear_before_reset; RNN one gate). sequence_lens is read at run time: row b runs
// sequence_lens[b] steps (reverse direction: from step sequence_lens[b]-1 down), Y is zero past
// them and Y_h / Y_c hold the last state of each row. W^T, R^T and the states live in scratch.
// The kernel is the snippet kernels/Recurrent.hpp.
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/Recurrent.hpp"
#include "ops/RefMathCommon.hpp"

#include <trellis/Exceptions.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace trellis::ref {

namespace {

using namespace math;

std::vector<RecurrentActivation> DefaultActivations(RecurrentMode mode, std::size_t dirs) {
    std::vector<RecurrentActivation> one;
    if (mode == RecurrentMode::Lstm) one = {{RecurrentActivationFunction::Sigmoid}, {RecurrentActivationFunction::Tanh}, {RecurrentActivationFunction::Tanh}};
    else if (mode == RecurrentMode::Gru) one = {{RecurrentActivationFunction::Sigmoid}, {RecurrentActivationFunction::Tanh}};
    else one = {{RecurrentActivationFunction::Tanh}};
    std::vector<RecurrentActivation> all;
    for (std::size_t d = 0; d < dirs; ++d) all.insert(all.end(), one.begin(), one.end());
    return all;
}

class RecurrentWorkload final : public IWorkload {
public:
    RecurrentWorkload(kernels::RecurrentParams p, std::string layer) : m_P(std::move(p)), m_Layer(std::move(layer)) {}
    std::size_t GetScratchBytes() const override { return kernels::RecurrentWorkspaceBytes(m_P); }
    void Execute(const WorkloadIo& io) const override {
        const auto in = [&](std::size_t i) -> const float* {
            return i < io.m_Inputs.size() && io.m_Inputs[i]->GetTensorInfo().GetNumElements() != 0 ? InputF32(io, i) : nullptr;
        };
        const auto out = [&](std::size_t i) -> float* {
            return i < io.m_Outputs.size() && io.m_Outputs[i] ? OutputF32(io, i) : nullptr;
        };
        const bool hasLens = io.m_Inputs.size() > 4 && io.m_Inputs[4]->GetTensorInfo().GetNumElements() != 0;
        try {
            kernels::Recurrent(m_P, InputF32(io, 0), InputF32(io, 1), InputF32(io, 2), in(3), hasLens ? static_cast<const int32_t*>(io.m_Inputs[4]->Map()) : nullptr,
                               in(5), in(6), in(7), OutputF32(io, 0), out(1), out(2), io.m_Scratch);
        } catch (const std::out_of_range& e) {
            throw RuntimeException("Recurrent '" + m_Layer + "': " + e.what());
        }
    }
private:
    const kernels::RecurrentParams m_P;
    const std::string m_Layer;
};

}  // namespace

bool RecurrentRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    for (std::size_t i = 0; i < info.m_InputTensorInfos.size(); ++i) {
        if (i == 4 || !HasInput(info, i)) continue;
        const DataType t = info.m_InputTensorInfos[i].GetDataType();
        if (t != DataType::Float32) {
            return Refuse(reason, "Recurrent: input " + std::to_string(i) + " has data type " + GetDataTypeName(t) +
                                      ", not supported by CpuRef (Float32 only)");
        }
    }
    if (HasInput(info, 4) && info.m_InputTensorInfos[4].GetDataType() != DataType::Signed32) {
        return Refuse(reason, "Recurrent: sequence_lens must be Signed32");
    }
    for (const TensorInfo& t : info.m_OutputTensorInfos) {
        if (t.GetDataType() != DataType::Float32) {
            return Refuse(reason, std::string("Recurrent: output data type ") + GetDataTypeName(t.GetDataType()) +
                                      " not supported by CpuRef (Float32 only)");
        }
    }
    return true;
}

kernels::RecurrentParams RecurrentRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<RecurrentDescriptor>();
    const TensorShape& x = info.m_InputTensorInfos[0].GetShape();
    kernels::RecurrentParams p;
    p.mode = static_cast<kernels::RecurrentMode>(d.m_Mode);
    p.direction = static_cast<kernels::RecurrentDirection>(d.m_Direction);
    p.seq = x[d.m_Layout == 0 ? 0 : 1];
    p.batch = x[d.m_Layout == 0 ? 1 : 0];
    p.in = x[2];
    p.hidden = d.m_HiddenSize;
    p.dirs = d.m_Direction == RecurrentDirection::Bidirectional ? 2 : 1;
    p.gates = d.m_Mode == RecurrentMode::Lstm ? 4 : d.m_Mode == RecurrentMode::Gru ? 3 : 1;
    p.hasClip = d.m_Clip.has_value();
    p.clip = d.m_Clip.value_or(0.0f);
    p.inputForget = d.m_InputForget;
    p.linearBeforeReset = d.m_LinearBeforeReset;
    p.layout = d.m_Layout;
    const std::vector<RecurrentActivation> activations =
        d.m_Activations.empty() ? DefaultActivations(d.m_Mode, p.dirs) : d.m_Activations;
    for (const RecurrentActivation& a : activations) {
        p.activations.push_back({static_cast<kernels::RecurrentActivationFunction>(a.m_Function), a.m_Alpha, a.m_Beta});
    }
    return p;
}

IWorkloadPtr RecurrentRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    return std::make_unique<RecurrentWorkload>(RecurrentRefParams(layer, info), layer.m_LayerName);
}

}  // namespace trellis::ref
