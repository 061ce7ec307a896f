// Internal: what an op's validation + shape inference function sees, and the op table lookups.
//
// Each op has one function `<Name>Infer(InferContext&)` (src/core/ops/<family>.cpp) that
//  - validates the descriptor and the input infos (ctx.Fail("...") on error),
//  - resolves the descriptor: fills defaults, turns auto-pad into explicit pads, and reads
//    parameter inputs (ctx.GetParamInts(i)) into descriptor fields, calling ctx.AbsorbInput(i) so
//    the optimizer drops that input slot afterwards,
//  - returns one TensorInfo per output.
// It runs inside Optimize(), after every producer's outputs are inferred.
#pragma once

#include <trellis/Descriptors.hpp>
#include <trellis/Exceptions.hpp>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace trellis::core {

/// Thrown by inference when a parameter input (or an input whose values decide an output shape)
/// is not a constant. The optimizer catches it to find the graph inputs that value comes from:
/// a network whose such values come from graph inputs only is specialized on those values when
/// it runs (Optimizer.cpp, Runtime.cpp); otherwise the message is the error.
class ParameterNotConstant : public LayerValidationException {
public:
    ParameterNotConstant(const std::string& message, unsigned int input)
        : LayerValidationException(message), m_Input(input) {}
    unsigned int GetInput() const { return m_Input; }
private:
    unsigned int m_Input;
};

/// The end of the message when a value an op needs at optimization time is not a constant.
inline constexpr const char* kNotConstantThen =
    "but it is not a constant then (it is computed by layers the optimizer could not evaluate)";

class InferContext {
public:
    InferContext(LayerType type, std::string name, LayerDescriptor& descriptor,
                 std::vector<TensorInfo> inputs, std::vector<const ConstTensor*> constants,
                 unsigned int numOutputs)
        : m_Type(type), m_Name(std::move(name)), m_Descriptor(descriptor), m_Inputs(std::move(inputs)),
          m_Constants(std::move(constants)), m_NumOutputs(numOutputs) {}

    LayerType GetType() const { return m_Type; }
    const std::string& GetName() const { return m_Name; }
    template <typename T> T& Desc() { return std::get<T>(m_Descriptor); }
    LayerDescriptor& GetDescriptor() { return m_Descriptor; }

    unsigned int GetNumInputs() const { return static_cast<unsigned int>(m_Inputs.size()); }
    unsigned int GetNumOutputs() const { return m_NumOutputs; }
    const TensorInfo& Input(unsigned int i) const { return m_Inputs.at(i); }
    /// The value of input i when it is produced by a Constant layer, else nullptr.
    const ConstTensor* Constant(unsigned int i) const { return i < m_Constants.size() ? m_Constants[i] : nullptr; }
    /// True when input i exists and is not an empty placeholder (a 0-element constant stands for
    /// an ONNX optional input that was left out).
    bool HasInput(unsigned int i) const;

    /// Throws LayerValidationException "<op> '<name>': <message>".
    [[noreturn]] void Fail(const std::string& message) const;
    /// "<op> '<name>'", for messages.
    std::string Where() const;

    /// The value of input i; throws ParameterNotConstant (naming `what` and `why`) when it is
    /// not a constant.
    const ConstTensor& RequireConstant(unsigned int i, const char* what, const std::string& why) const;
    /// Values of a parameter input as integers (any integer type but UInt64, or Boolean, accepted).
    /// Fails with a clear message if the input is not constant. `what` names it ("shape").
    std::vector<int64_t> GetParamInts(unsigned int i, const char* what) const;
    /// Values as floats (Float32/Float64/integer data accepted).
    std::vector<double> GetParamDoubles(unsigned int i, const char* what) const;
    /// Marks parameter input i as folded into the descriptor.
    void AbsorbInput(unsigned int i) { m_Absorbed.insert(i); }
    const std::set<unsigned int>& GetAbsorbedInputs() const { return m_Absorbed; }

    // Helpers shared by many ops.
    /// Normalizes a possibly negative axis against `rank`; fails if out of range.
    unsigned int NormalizeAxis(int64_t axis, unsigned int rank, const char* what = "axis") const;
    /// numpy broadcast of two shapes; fails naming both shapes if incompatible.
    TensorShape BroadcastShapes(const TensorShape& a, const TensorShape& b) const;
    /// Fails unless input i has type `t`.
    void ExpectType(unsigned int i, DataType t) const;
    /// Fails unless input i has one of `types`.
    void ExpectTypeIn(unsigned int i, std::initializer_list<DataType> types) const;
    void ExpectRank(unsigned int i, unsigned int rank) const;
private:
    LayerType m_Type;
    std::string m_Name;
    LayerDescriptor& m_Descriptor;
    std::vector<TensorInfo> m_Inputs;
    std::vector<const ConstTensor*> m_Constants;
    unsigned int m_NumOutputs;
    std::set<unsigned int> m_Absorbed;
};

using InferFunction = std::vector<TensorInfo> (*)(InferContext&);

/// Declarations of every op's inference function, generated from the op table.
#define TRELLIS_OP(Name, Desc, MinIn, MaxIn, NumOut) std::vector<TensorInfo> Name##Infer(InferContext& ctx);
#include <trellis/Ops.def>
#undef TRELLIS_OP

struct OpInfo {
    LayerType m_Type;
    const char* m_Name;
    unsigned int m_MinInputs;
    unsigned int m_MaxInputs;
    int m_NumOutputs;
    InferFunction m_Infer;
};
const OpInfo& GetOpInfo(LayerType type);

/// numpy broadcast of two shapes, or std::nullopt if incompatible.
std::optional<TensorShape> Broadcast(const TensorShape& a, const TensorShape& b);

}  // namespace trellis::core
