#include "Tensors.hpp"

#include <trellis/backends/SmallTypes.hpp>

#include "Args.hpp"

#include <trellis/Exceptions.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>

namespace trellis::cli {

namespace {

// IEEE binary16 from binary32, round to nearest even (subnormals included), as the engine's own
// Float16 tensors store it.
uint16_t FloatToHalfBits(float value) {
    uint32_t x = 0;
    std::memcpy(&x, &value, sizeof(x));
    const uint32_t sign = (x >> 16) & 0x8000u;
    const int32_t exponent = static_cast<int32_t>((x >> 23) & 0xffu);
    uint32_t mantissa = x & 0x7fffffu;
    if (exponent == 0xff) {
        return static_cast<uint16_t>(sign | 0x7c00u | (mantissa != 0 ? 0x200u : 0u));
    }
    const int32_t halfExponent = exponent - 127 + 15;
    if (halfExponent >= 0x1f) {
        return static_cast<uint16_t>(sign | 0x7c00u);
    }
    if (halfExponent <= 0) {
        if (halfExponent < -10) {
            return static_cast<uint16_t>(sign);
        }
        mantissa |= 0x800000u;
        const uint32_t shift = static_cast<uint32_t>(14 - halfExponent);
        uint32_t half = mantissa >> shift;
        const uint32_t rest = mantissa & ((1u << shift) - 1u);
        const uint32_t middle = 1u << (shift - 1u);
        if (rest > middle || (rest == middle && (half & 1u))) {
            ++half;
        }
        return static_cast<uint16_t>(sign | half);
    }
    uint32_t half = (static_cast<uint32_t>(halfExponent) << 10) | (mantissa >> 13);
    const uint32_t rest = mantissa & 0x1fffu;
    // A carry out of the mantissa correctly bumps the exponent (up to infinity).
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) {
        ++half;
    }
    return static_cast<uint16_t>(sign | half);
}

uint16_t FloatToBFloat16Bits(float value) {
    uint32_t x = 0;
    std::memcpy(&x, &value, sizeof(x));
    if (std::isnan(value)) {
        return static_cast<uint16_t>((x >> 16) | 0x40u);
    }
    x += 0x7fffu + ((x >> 16) & 1u);  // round to nearest even
    return static_cast<uint16_t>(x >> 16);
}

template <typename T>
void Store(OwnedTensor& tensor, std::size_t index, T value) {
    std::memcpy(tensor.m_Data.data() + index * sizeof(T), &value, sizeof(T));
}

template <typename T>
T Load(const OwnedTensor& tensor, std::size_t index) {
    T value{};
    std::memcpy(&value, tensor.m_Data.data() + index * sizeof(T), sizeof(T));
    return value;
}

std::string FormatDouble(double value, int significantDigits = 6) {
    char buffer[64];
    std::snprintf(buffer, sizeof(buffer), "%.*g", significantDigits, value);
    return buffer;
}

}  // namespace

std::string FormatElement(const OwnedTensor& tensor, std::size_t index, int significantDigits) {
    const double value = ElementAsDouble(tensor, index);
    if (IsFloatType(tensor.m_Info.GetDataType())) {
        return FormatDouble(value, significantDigits);
    }
    if (tensor.m_Info.GetDataType() == DataType::Signed64) {
        return std::to_string(Load<int64_t>(tensor, index));  // exact beyond 2^53
    }
    if (tensor.m_Info.GetDataType() == DataType::UInt64) {
        return std::to_string(Load<uint64_t>(tensor, index));
    }
    return std::to_string(static_cast<long long>(value));
}

void TakeUInt16AsBFloat16(TensorInfo& file, DataType expected) {
    if (file.GetDataType() == DataType::UInt16 && expected == DataType::BFloat16) file.SetDataType(DataType::BFloat16);
}

bool IsFloatType(DataType type) {
    switch (type) {
        case DataType::Float32: case DataType::Float16: case DataType::BFloat16: case DataType::Float64:
        case DataType::Float8E4M3FN: case DataType::Float8E4M3FNUZ: case DataType::Float8E5M2:
        case DataType::Float8E5M2FNUZ: case DataType::Float8E8M0: case DataType::Float4E2M1:
            return true;
        default:
            return false;
    }
}

OwnedTensor MakeZeroTensor(const std::string& name, const TensorInfo& info) {
    OwnedTensor tensor;
    tensor.m_Name = name;
    tensor.m_Info = info;
    tensor.m_Data.assign(info.GetNumBytes(), 0);
    return tensor;
}

OwnedTensor MakeRandomTensor(const std::string& name, const TensorInfo& info, std::mt19937& rng) {
    OwnedTensor tensor = MakeZeroTensor(name, info);
    const std::size_t count = info.GetNumElements();
    std::uniform_real_distribution<float> floats(-1.0f, 1.0f);
    std::uniform_real_distribution<double> doubles(-1.0, 1.0);
    std::uniform_int_distribution<int> digits(0, 9);
    std::uniform_int_distribution<int> bits(0, 1);
    for (std::size_t i = 0; i < count; ++i) {
        switch (info.GetDataType()) {
            case DataType::Float32: Store<float>(tensor, i, floats(rng)); break;
            case DataType::Float16: Store<uint16_t>(tensor, i, FloatToHalfBits(floats(rng))); break;
            case DataType::BFloat16: Store<uint16_t>(tensor, i, FloatToBFloat16Bits(floats(rng))); break;
            case DataType::Float64: Store<double>(tensor, i, doubles(rng)); break;
            case DataType::QAsymmU8:
            case DataType::UInt8: Store<uint8_t>(tensor, i, static_cast<uint8_t>(digits(rng))); break;
            case DataType::QAsymmS8:
            case DataType::QSymmS8: Store<int8_t>(tensor, i, static_cast<int8_t>(digits(rng))); break;
            case DataType::QSymmS16: Store<int16_t>(tensor, i, static_cast<int16_t>(digits(rng))); break;
            case DataType::Signed32: Store<int32_t>(tensor, i, digits(rng)); break;
            case DataType::Signed64: Store<int64_t>(tensor, i, digits(rng)); break;
            case DataType::Boolean: Store<uint8_t>(tensor, i, static_cast<uint8_t>(bits(rng))); break;
            case DataType::Signed8: Store<int8_t>(tensor, i, static_cast<int8_t>(digits(rng))); break;
            case DataType::Signed16: Store<int16_t>(tensor, i, static_cast<int16_t>(digits(rng))); break;
            case DataType::UInt16: Store<uint16_t>(tensor, i, static_cast<uint16_t>(digits(rng))); break;
            case DataType::UInt32: Store<uint32_t>(tensor, i, static_cast<uint32_t>(digits(rng))); break;
            case DataType::UInt64: Store<uint64_t>(tensor, i, static_cast<uint64_t>(digits(rng))); break;
            case DataType::Float8E4M3FN: case DataType::Float8E4M3FNUZ: case DataType::Float8E5M2:
            case DataType::Float8E5M2FNUZ: case DataType::Float8E8M0: case DataType::Float4E2M1:
            case DataType::Int4: case DataType::UInt4: case DataType::Int2: case DataType::UInt2:
                Store<uint8_t>(tensor, i, EncodeSmallType(info.GetDataType(), digits(rng) % 2));
                break;
        }
    }
    return tensor;
}

double ElementAsDouble(const OwnedTensor& tensor, std::size_t index) {
    return GetElementAsDouble(tensor.AsConstTensor(), index);
}

std::string SummariseValues(const OwnedTensor& tensor, std::size_t maxValues) {
    const std::size_t count = tensor.m_Info.GetNumElements();
    if (count == 0) {
        return "  values: (empty)\n";
    }
    std::string text = "  values:";
    const std::size_t shown = count < maxValues ? count : maxValues;
    for (std::size_t i = 0; i < shown; ++i) {
        text += ' ';
        text += FormatElement(tensor, i);
    }
    if (shown < count) {
        text += " ... (first " + std::to_string(shown) + " of " + std::to_string(count) + ")";
    }
    text += "\n";
    if (!IsFloatType(tensor.m_Info.GetDataType())) {
        return text;
    }
    // NaNs would poison min/max/mean; count them separately so a NaN output is visible.
    double minValue = std::numeric_limits<double>::infinity();
    double maxValue = -std::numeric_limits<double>::infinity();
    double sum = 0.0;
    std::size_t finiteOrInf = 0;
    std::size_t nans = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const double v = ElementAsDouble(tensor, i);
        if (std::isnan(v)) {
            ++nans;
            continue;
        }
        minValue = v < minValue ? v : minValue;
        maxValue = v > maxValue ? v : maxValue;
        sum += v;
        ++finiteOrInf;
    }
    if (finiteOrInf != 0) {
        text += "  min " + FormatDouble(minValue) + " max " + FormatDouble(maxValue) + " mean " +
                FormatDouble(sum / static_cast<double>(finiteOrInf));
    } else {
        text += "  min nan max nan mean nan";
    }
    if (nans != 0) {
        text += " (" + std::to_string(nans) + " NaN)";
    }
    return text + "\n";
}

void RequireKnownShape(const BindingPointInfo& input, const TensorInfo& info) {
    const TensorShape& shape = info.GetShape();
    if (shape.AreAllDimensionsSpecified()) return;
    std::string dims;
    for (unsigned int d = 0; d < shape.GetNumDimensions(); ++d) {
        if (shape[d] != kUnknownDim) continue;
        const std::string symbol = d < input.m_DimNames.size() ? input.m_DimNames[d] : "?";
        dims += (dims.empty() ? "dim " : ", dim ") + std::to_string(d) +
                (symbol.empty() || symbol == "?" ? std::string(" (unknown)") : " ('" + symbol + "')");
    }
    throw UsageError("input '" + input.m_Name + "' is " + GetDataTypeName(info.GetDataType()) + " " +
                     shape.ToString() + ": " + dims + " must be decided before random data can be made for it; "
                     "give the input with --input " + input.m_Name + "=FILE, or pin the dims with --shape " +
                     input.m_Name + "=AxBx...");
}

std::vector<OwnedTensor> MakeRandomInputs(const IRuntime& runtime, NetworkId id,
                                          const std::vector<BindingPointInfo>& inputs, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<OwnedTensor> tensors;
    tensors.reserve(inputs.size());
    for (const BindingPointInfo& input : inputs) {
        const TensorInfo info = runtime.GetInputTensorInfo(id, input.m_BindingId);
        RequireKnownShape(input, info);
        tensors.push_back(MakeRandomTensor(input.m_Name, info, rng));
    }
    return tensors;
}

std::vector<OwnedTensor> MakeOutputBuffers(IRuntime& runtime, NetworkId id,
                                           const std::vector<BindingPointInfo>& outputs, const InputTensors& inputs) {
    std::vector<OwnedTensor> tensors;
    tensors.reserve(outputs.size());
    for (const BindingPointInfo& output : outputs) {
        tensors.push_back(MakeZeroTensor(output.m_Name, runtime.GetOutputTensorInfo(id, output.m_BindingId, inputs)));
    }
    return tensors;
}

std::string DescribeInputs(const std::vector<OwnedTensor>& inputs) {
    std::string text;
    for (const OwnedTensor& t : inputs) {
        text += (text.empty() ? "" : ", ") + t.m_Name + " " + GetDataTypeName(t.m_Info.GetDataType()) + " " +
                t.m_Info.GetShape().ToString();
    }
    return text.empty() ? "none" : text;
}

InputTensors BindInputs(const std::vector<BindingPointInfo>& bindings, const std::vector<OwnedTensor>& tensors) {
    InputTensors bound;
    for (std::size_t i = 0; i < bindings.size() && i < tensors.size(); ++i) {
        bound.emplace_back(bindings[i].m_BindingId, tensors[i].AsConstTensor());
    }
    return bound;
}

OutputTensors BindOutputs(const std::vector<BindingPointInfo>& bindings, std::vector<OwnedTensor>& tensors) {
    OutputTensors bound;
    for (std::size_t i = 0; i < bindings.size() && i < tensors.size(); ++i) {
        bound.emplace_back(bindings[i].m_BindingId, tensors[i].AsTensor());
    }
    return bound;
}


std::string DescribeInfo(const TensorInfo& info) {
    return std::string(GetDataTypeName(info.GetDataType())) + " " + info.GetShape().ToString();
}

InputSources ReadInputSources(const ParsedArgs& args) {
    InputSources sources;
    for (const std::string& text : args.GetAll("input")) {
        auto [name, file] = ParseNameValue(text, "input");
        if (!sources.m_Files.emplace(name, file).second) {
            throw UsageError("option '--input' gives input '" + name + "' more than once");
        }
    }
    sources.m_Directory = args.Get("input-dir").value_or("");
    if (args.Has("input-dir") && sources.m_Directory.empty()) {
        throw UsageError("option '--input-dir' expects a directory, got ''");
    }
    if (!sources.m_Directory.empty() && !std::filesystem::is_directory(sources.m_Directory)) {
        throw FileNotFoundException("input directory '" + sources.m_Directory + "' (--input-dir) does not exist");
    }
    return sources;
}

void CheckInputNames(const InputSources& sources, const std::vector<BindingPointInfo>& inputs,
                     const std::string& modelPath) {
    for (const auto& [name, file] : sources.m_Files) {
        bool known = false;
        std::string names;
        for (const BindingPointInfo& input : inputs) {
            known = known || input.m_Name == name;
            names += (names.empty() ? "'" : ", '") + input.m_Name + "'";
        }
        if (!known) {
            throw InvalidArgumentException("--input names '" + name + "', which is not a graph input of '" + modelPath +
                                           "'; its inputs are " + (names.empty() ? std::string("none") : names));
        }
    }
}

namespace {

// Loads one input file and holds it to the network's input contract. The tensor keeps the
// network's info (its quantization parameters are the ones the network was built with).
// Dims the network leaves to the run (kUnknownDim) take the file's size.
OwnedTensor LoadInputFile(const std::string& inputName, const std::string& path, const TensorInfo& expected) {
    OwnedTensor tensor = LoadTensorFile(path);
    TakeUInt16AsBFloat16(tensor.m_Info, expected.GetDataType());  // ONNX test data's bfloat16 files
    const TensorInfo& got = tensor.m_Info;
    const TensorShape& want = expected.GetShape();
    bool fits = got.GetDataType() == expected.GetDataType() && got.GetNumDimensions() == want.GetNumDimensions();
    for (unsigned int d = 0; fits && d < want.GetNumDimensions(); ++d) {
        fits = want[d] == kUnknownDim || want[d] == got.GetShape()[d];
    }
    if (!fits) {
        throw InvalidArgumentException("input '" + inputName + "' from file '" + path + "': expected " +
                                       DescribeInfo(expected) +
                                       (want.AreAllDimensionsSpecified() ? "" : " ('?' dims may take any size)") +
                                       ", got " + DescribeInfo(got));
    }
    tensor.m_Name = inputName;
    if (want.AreAllDimensionsSpecified()) tensor.m_Info = expected;
    return tensor;
}

}  // namespace

std::vector<OwnedTensor> GatherInputs(const IRuntime& runtime, NetworkId id, const std::vector<BindingPointInfo>& inputs,
                                      const InputSources& sources, uint32_t seed, std::ostream& notes) {
    std::mt19937 rng(seed);
    std::vector<OwnedTensor> tensors;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const BindingPointInfo& input = inputs[i];
        const TensorInfo info = runtime.GetInputTensorInfo(id, input.m_BindingId);
        std::string file;
        if (auto it = sources.m_Files.find(input.m_Name); it != sources.m_Files.end()) {
            file = it->second;
        } else if (!sources.m_Directory.empty()) {
            const auto candidate = std::filesystem::path(sources.m_Directory) / ("input_" + std::to_string(i) + ".pb");
            if (std::filesystem::exists(candidate)) {
                file = candidate.string();
            }
        }
        if (!file.empty()) {
            tensors.push_back(LoadInputFile(input.m_Name, file, info));
        } else {
            RequireKnownShape(input, info);
            tensors.push_back(MakeRandomTensor(input.m_Name, info, rng));
            notes << "note: input '" << input.m_Name << "' (" << DescribeInfo(info)
                  << ") not given: filled with random data (seed " << seed << ")\n";
        }
    }
    return tensors;
}

}  // namespace trellis::cli
