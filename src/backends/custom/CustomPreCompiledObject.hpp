// Custom: the object a PreCompiled layer carries - the sample's "compiled" form of an addition.
//
// CustomBackend::OptimizeSubgraph() replaces each Add layer with a PreCompiled layer whose
// PreCompiledDescriptor::m_PreCompiledObject is one of these. Built once from the layer's tensor
// infos (Float32, numpy broadcasting): the broadcast plan is worked out here, so Run() only walks
// it. Immutable after construction; Run() may be called concurrently.
// Ownership: shared between the optimized network's descriptor and the workloads created from it.
// For the dynamic backend its code lives in Sample_Custom_backend.so: an optimized network holding
// one must be destroyed (or loaded and unloaded) before the runtime that loaded the file.
#pragma once

#include <trellis/Types.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace trellis::custom {

/// True when out = in0 + in1 is an addition Custom computes: Float32 everywhere and numpy
/// broadcasting from the inputs to the output; otherwise false with the reason.
bool IsAdditionSupported(const TensorInfo& in0, const TensorInfo& in1, const TensorInfo& out, std::string* reason);

class CustomPreCompiledObject {
public:
    /// Throws LayerValidationException (naming the layer) when IsAdditionSupported says no.
    CustomPreCompiledObject(const std::string& layerName, const TensorInfo& in0, const TensorInfo& in1,
                            const TensorInfo& out);
    ~CustomPreCompiledObject();
    CustomPreCompiledObject(const CustomPreCompiledObject&) = delete;
    CustomPreCompiledObject& operator=(const CustomPreCompiledObject&) = delete;

    /// out = in0 + in1 over the infos given at construction.
    void Run(const float* in0, const float* in1, float* out) const;

    const TensorInfo& GetInputInfo(unsigned int i) const { return m_Inputs[i == 0 ? 0 : 1]; }
    const TensorInfo& GetOutputInfo() const { return m_Output; }
    /// "Add 3x4 + 4 -> 3x4"
    std::string ToString() const;

    /// True when `object` (a PreCompiledDescriptor's m_PreCompiledObject) is a live
    /// CustomPreCompiledObject of this copy of the backend.
    static bool IsCustomObject(const void* object);

private:
    TensorInfo m_Inputs[2];
    TensorInfo m_Output;
    bool m_SameShape = false;
    // Broadcast plan: output dims and, per input, the element stride of each output dim (0 where
    // that input is broadcast).
    std::vector<std::size_t> m_Dims;
    std::vector<std::size_t> m_Strides[2];
};

}  // namespace trellis::custom
