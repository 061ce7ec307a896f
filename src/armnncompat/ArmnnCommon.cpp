// The Arm NN compatibility layer's small pieces: logging, enum names, BackendOptions values,
// permutations and the Concat descriptor.
#include <armnn/BackendOptions.hpp>
#include <armnn/Descriptors.hpp>
#include <armnn/Types.hpp>
#include <armnn/Utils.hpp>

#include <atomic>
#include <iostream>
#include <sstream>

namespace armnn {

// ---- logging ----

namespace {
// Before ConfigureLogging: errors to standard error, so a failure is never silent.
std::atomic<bool> g_LogToStdout{false};
std::atomic<bool> g_Configured{false};
std::atomic<int> g_MinSeverity{static_cast<int>(LogSeverity::Error)};

const char* SeverityName(LogSeverity s) {
    switch (s) {
        case LogSeverity::Trace: return "Trace";
        case LogSeverity::Debug: return "Debug";
        case LogSeverity::Info: return "Info";
        case LogSeverity::Warning: return "Warning";
        case LogSeverity::Error: return "Error";
        case LogSeverity::Fatal: return "Fatal";
    }
    return "Unknown";
}
}  // namespace

void ConfigureLogging(bool printToStandardOutput, bool /*printToDebugOutput*/, LogSeverity severity) {
    g_LogToStdout = printToStandardOutput;
    g_MinSeverity = static_cast<int>(severity);
    g_Configured = true;
}

void LogMessage(LogSeverity severity, const std::string& message) {
    if (static_cast<int>(severity) < g_MinSeverity) return;
    const std::string line = std::string(SeverityName(severity)) + ": " + message + "\n";
    if (!g_Configured)
        std::cerr << line << std::flush;
    else if (g_LogToStdout)
        std::cout << line << std::flush;
}

// ---- names ----

const char* GetComputeDeviceAsCString(Compute compute) {
    switch (compute) {
        case Compute::CpuRef: return "CpuRef";
        case Compute::CpuAcc: return "CpuAcc";
        case Compute::GpuAcc: return "GpuAcc";
        case Compute::Undefined: break;
    }
    return "Unknown";
}

const char* GetDataLayoutName(DataLayout layout) {
    switch (layout) {
        case DataLayout::NCHW: return "NCHW";
        case DataLayout::NHWC: return "NHWC";
        case DataLayout::NDHWC: return "NDHWC";
        case DataLayout::NCDHW: return "NCDHW";
    }
    return "Unknown";
}

const char* GetActivationFunctionAsCString(ActivationFunction function) {
    switch (function) {
        case ActivationFunction::Sigmoid: return "Sigmoid";
        case ActivationFunction::TanH: return "TanH";
        case ActivationFunction::Linear: return "Linear";
        case ActivationFunction::ReLu: return "ReLu";
        case ActivationFunction::BoundedReLu: return "BoundedReLu";
        case ActivationFunction::SoftReLu: return "SoftReLu";
        case ActivationFunction::LeakyReLu: return "LeakyReLu";
        case ActivationFunction::Abs: return "Abs";
        case ActivationFunction::Sqrt: return "Sqrt";
        case ActivationFunction::Square: return "Square";
        case ActivationFunction::Elu: return "Elu";
        case ActivationFunction::HardSwish: return "HardSwish";
        case ActivationFunction::Gelu: return "Gelu";
    }
    return "Unknown";
}

const char* GetBinaryOperationAsCString(BinaryOperation operation) {
    switch (operation) {
        case BinaryOperation::Add: return "Add";
        case BinaryOperation::Div: return "Div";
        case BinaryOperation::Maximum: return "Maximum";
        case BinaryOperation::Minimum: return "Minimum";
        case BinaryOperation::Mul: return "Mul";
        case BinaryOperation::Sub: return "Sub";
        case BinaryOperation::SqDiff: return "SqDiff";
        case BinaryOperation::Power: return "Power";
    }
    return "Unknown";
}

const char* GetUnaryOperationAsCString(UnaryOperation operation) {
    switch (operation) {
        case UnaryOperation::Abs: return "Abs";
        case UnaryOperation::Exp: return "Exp";
        case UnaryOperation::Sqrt: return "Sqrt";
        case UnaryOperation::Rsqrt: return "Rsqrt";
        case UnaryOperation::Neg: return "Neg";
        case UnaryOperation::LogicalNot: return "LogicalNot";
        case UnaryOperation::Log: return "Log";
        case UnaryOperation::Sin: return "Sin";
        case UnaryOperation::Ceil: return "Ceil";
    }
    return "Unknown";
}

const char* GetLayerTypeAsCString(LayerType type) {
    switch (type) {
        case LayerType::Activation: return "Activation";
        case LayerType::Addition: return "Addition";
        case LayerType::BatchNormalization: return "BatchNormalization";
        case LayerType::Concat: return "Concat";
        case LayerType::Constant: return "Constant";
        case LayerType::Convolution2d: return "Convolution2d";
        case LayerType::DepthwiseConvolution2d: return "DepthwiseConvolution2d";
        case LayerType::Division: return "Division";
        case LayerType::ElementwiseBinary: return "ElementwiseBinary";
        case LayerType::ElementwiseUnary: return "ElementwiseUnary";
        case LayerType::Floor: return "Floor";
        case LayerType::FullyConnected: return "FullyConnected";
        case LayerType::Input: return "Input";
        case LayerType::Maximum: return "Maximum";
        case LayerType::Minimum: return "Minimum";
        case LayerType::Multiplication: return "Multiplication";
        case LayerType::Output: return "Output";
        case LayerType::Permute: return "Permute";
        case LayerType::Pooling2d: return "Pooling2d";
        case LayerType::Reshape: return "Reshape";
        case LayerType::Softmax: return "Softmax";
        case LayerType::Subtraction: return "Subtraction";
        case LayerType::Transpose: return "Transpose";
    }
    return "Unknown";
}

// ---- PermutationVector ----

bool PermutationVector::IsInverse(const PermutationVector& o) const {
    if (m_Dims.size() != o.m_Dims.size()) return false;
    for (unsigned int i = 0; i < m_Dims.size(); ++i)
        if (m_Dims[i] >= o.m_Dims.size() || o.m_Dims[m_Dims[i]] != i) return false;
    return true;
}

// ---- BackendOptions ----

std::string BackendOptions::Var::ToString() const {
    if (IsBool()) return std::get<bool>(m_Value) ? "true" : "false";
    if (IsInt()) return std::to_string(std::get<int>(m_Value));
    if (IsUnsignedInt()) return std::to_string(std::get<unsigned int>(m_Value));
    if (IsFloat()) {
        std::ostringstream s;
        s << std::get<float>(m_Value);
        return s.str();
    }
    return std::get<std::string>(m_Value);
}

void BackendOptions::Var::ThrowWrongType(const char* wanted) const {
    const char* held = IsBool() ? "bool" : IsInt() ? "int" : IsUnsignedInt() ? "unsigned int" : IsFloat() ? "float" : "string";
    throw InvalidArgumentException(std::string("BackendOptions::Var: asked for a ") + wanted + ", it holds a " + held +
                                   " (" + ToString() + ")");
}

// ---- OriginsDescriptor ----

OriginsDescriptor::OriginsDescriptor(uint32_t numViews, uint32_t numDimensions)
    : m_NumDimensions(numDimensions), m_Origins(numViews, std::vector<uint32_t>(numDimensions, 0)) {}

Status OriginsDescriptor::SetViewOriginCoord(uint32_t view, uint32_t coord, uint32_t value) {
    if (view >= m_Origins.size() || coord >= m_NumDimensions) return Status::Failure;
    m_Origins[view][coord] = value;
    return Status::Success;
}

const uint32_t* OriginsDescriptor::GetViewOrigin(uint32_t idx) const {
    if (idx >= m_Origins.size())
        throw InvalidArgumentException("OriginsDescriptor::GetViewOrigin: view " + std::to_string(idx) +
                                       " does not exist (there are " + std::to_string(m_Origins.size()) + ")");
    return m_Origins[idx].data();
}

OriginsDescriptor MakeConcatDescriptor(const std::vector<TensorShape>& shapes, unsigned int axis) {
    if (shapes.empty()) throw InvalidArgumentException("CreateDescriptorForConcatenation: no shapes");
    const unsigned int rank = shapes[0].GetNumDimensions();
    if (axis >= rank)
        throw InvalidArgumentException("CreateDescriptorForConcatenation: axis " + std::to_string(axis) +
                                       " is out of range for rank " + std::to_string(rank));
    OriginsDescriptor d(static_cast<uint32_t>(shapes.size()), rank);
    d.SetConcatAxis(axis);
    uint32_t offset = 0;
    for (size_t v = 0; v < shapes.size(); ++v) {
        if (shapes[v].GetNumDimensions() != rank)
            throw InvalidArgumentException("CreateDescriptorForConcatenation: shape " + std::to_string(v) + " (" +
                                           shapes[v].ToString() + ") has not the rank of shape 0 (" +
                                           shapes[0].ToString() + ")");
        for (unsigned int c = 0; c < rank; ++c)
            if (c != axis && shapes[v][c] != shapes[0][c])
                throw InvalidArgumentException("CreateDescriptorForConcatenation: shape " + std::to_string(v) + " (" +
                                               shapes[v].ToString() + ") differs from shape 0 (" + shapes[0].ToString() +
                                               ") in dim " + std::to_string(c) + ", which is not the concat axis");
        d.SetViewOriginCoord(static_cast<uint32_t>(v), axis, offset);
        offset += shapes[v][axis];
    }
    return d;
}

}  // namespace armnn
