// ONNX TensorProto decoding and encoding (see OnnxTensor.hpp for the contract).
#include "OnnxTensor.hpp"

#include <trellis/Exceptions.hpp>
#include <trellis/backends/SmallTypes.hpp>

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace trellis::onnximport {

// Raw data and external data are little-endian by the ONNX spec; we copy them as they are.
static_assert(std::endian::native == std::endian::little, "the ONNX importer assumes a little-endian host");

namespace {

constexpr const char* kSupportedTypes =
    "FLOAT, FLOAT16, BFLOAT16, DOUBLE, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64, BOOL, "
    "FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ, FLOAT8E8M0, INT4, UINT4, FLOAT4E2M1, INT2, UINT2";

// ONNX element types newer than the onnx.proto Trellis builds against (the field is an int32).
constexpr int32_t kFloat8E4M3FN = 17, kFloat8E4M3FNUZ = 18, kFloat8E5M2 = 19, kFloat8E5M2FNUZ = 20, kUInt4 = 21,
                  kInt4 = 22, kFloat4E2M1 = 23, kFloat8E8M0 = 24, kUInt2 = 25, kInt2 = 26;

/// Bytes an ONNX file uses for `n` elements of `type`: the 4- and 2-bit types are packed.
std::size_t PackedBytes(DataType type, std::size_t n) {
    const unsigned int bits = GetPackedBits(type);
    if (bits >= 8) return n * (bits / 8);
    const std::size_t perByte = 8 / bits;  // n * bits could overflow for a hostile element count
    return n / perByte + (n % perByte != 0 ? 1 : 0);
}

/// `n` elements of a packed sub-byte type (low bits first) as one byte each, as held in memory.
std::string UnpackElements(DataType type, const std::string& packed, std::size_t n) {
    const unsigned int bits = GetPackedBits(type);
    const unsigned int perByte = 8 / bits;
    const unsigned int mask = (1u << bits) - 1;
    std::string out(n, '\0');
    for (std::size_t i = 0; i < n; ++i) {
        const unsigned int code = (static_cast<unsigned char>(packed[i / perByte]) >> ((i % perByte) * bits)) & mask;
        out[i] = static_cast<char>(type == DataType::Float4E2M1 ? code : EncodeSmallInt(type, code));
    }
    return out;
}

/// The packed file form of `n` one-byte elements of a sub-byte type.
std::string PackElements(DataType type, const void* data, std::size_t n) {
    const unsigned int bits = GetPackedBits(type);
    const unsigned int perByte = 8 / bits;
    const unsigned int mask = (1u << bits) - 1;
    std::string out(PackedBytes(type, n), '\0');
    const auto* p = static_cast<const uint8_t*>(data);
    for (std::size_t i = 0; i < n; ++i) {
        out[i / perByte] = static_cast<char>(static_cast<unsigned char>(out[i / perByte]) |
                                             ((p[i] & mask) << ((i % perByte) * bits)));
    }
    return out;
}

std::string DescribeTensor(const TensorInfo& info) {
    return std::string(GetDataTypeName(info.GetDataType())) + " " + info.GetShape().ToString();
}

// Copies a typed repeated field into `out`, converting each value with `convert`; the count must
// match the shape exactly.
template <typename Element, typename Field, typename Convert>
void CopyTypedField(const Field& field, const char* fieldName, std::size_t numElements, const TensorInfo& info,
                    const std::string& what, std::string& out, Convert convert) {
    if (static_cast<std::size_t>(field.size()) != numElements) {
        throw ParseException(what + ": " + fieldName + " holds " + std::to_string(field.size()) +
                             " values, expected " + std::to_string(numElements) + " for " + DescribeTensor(info));
    }
    out.resize(numElements * sizeof(Element));
    auto* dst = reinterpret_cast<Element*>(out.data());
    for (std::size_t i = 0; i < numElements; ++i) {
        dst[i] = convert(field.Get(static_cast<int>(i)));
    }
}

std::string ReadExternalData(const onnx::TensorProto& proto, const std::string& baseDir, std::size_t expectedBytes,
                             const std::string& what) {
    std::string location;
    std::optional<unsigned long long> offset;
    std::optional<unsigned long long> length;
    for (const auto& entry : proto.external_data()) {
        auto parseNumber = [&](const std::string& text) {
            try {
                std::size_t used = 0;
                unsigned long long v = std::stoull(text, &used);
                if (used != text.size() || text.empty() || text[0] == '-') throw std::invalid_argument(text);
                return v;
            } catch (const std::exception&) {
                throw ParseException(what + ": external data " + entry.key() + "='" + text + "' is not a byte count");
            }
        };
        if (entry.key() == "location") location = entry.value();
        else if (entry.key() == "offset") offset = parseNumber(entry.value());
        else if (entry.key() == "length") length = parseNumber(entry.value());
        // "checksum" and any future keys do not change where the bytes are.
    }
    if (location.empty()) throw ParseException(what + ": external data has no 'location'");
    // A model may come from anywhere: it must not make us read files outside its own folder.
    const std::filesystem::path relative(location);
    const bool escapes = relative.is_absolute() || relative.has_root_name() ||
                         std::any_of(relative.begin(), relative.end(), [](const auto& part) { return part == ".."; });
    if (escapes) {
        throw ParseException(what + ": external data location '" + location +
                             "' must be a relative path inside the model's folder");
    }

    const std::filesystem::path path = std::filesystem::path(baseDir.empty() ? "." : baseDir) / location;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
        throw FileNotFoundException(what + ": external data file '" + path.string() + "' not found");
    }
    const unsigned long long fileSize = std::filesystem::file_size(path, ec);
    if (ec) throw ParseException(what + ": cannot read external data file '" + path.string() + "': " + ec.message());
    const unsigned long long begin = offset.value_or(0);
    if (begin > fileSize) {
        throw ParseException(what + ": external data file '" + path.string() + "' has " + std::to_string(fileSize) +
                             " bytes, shorter than offset " + std::to_string(begin));
    }
    const unsigned long long available = fileSize - begin;
    const unsigned long long size = length.value_or(available);
    if (size > available) {
        throw ParseException(what + ": external data file '" + path.string() + "' is too short: needs " +
                             std::to_string(size) + " bytes at offset " + std::to_string(begin) + ", has " +
                             std::to_string(available));
    }
    if (size != expectedBytes) {
        throw ParseException(what + ": external data holds " + std::to_string(size) + " bytes, expected " +
                             std::to_string(expectedBytes));
    }
    std::ifstream file(path, std::ios::binary);
    std::string bytes(static_cast<std::size_t>(size), '\0');
    file.seekg(static_cast<std::streamoff>(begin));
    file.read(bytes.data(), static_cast<std::streamsize>(size));
    if (!file) throw ParseException(what + ": reading external data file '" + path.string() + "' failed");
    return bytes;
}

// n values of type T at `data`, as int64.
template <typename T>
std::vector<int64_t> CopyAs(const void* data, std::size_t n) {
    const auto* p = static_cast<const T*>(data);
    return std::vector<int64_t>(p, p + n);
}

}  // namespace

std::optional<DataType> FromOnnxDataType(int32_t onnxType) {
    switch (onnxType) {
        case onnx::TensorProto_DataType_FLOAT: return DataType::Float32;
        case onnx::TensorProto_DataType_FLOAT16: return DataType::Float16;
        case onnx::TensorProto_DataType_BFLOAT16: return DataType::BFloat16;
        case onnx::TensorProto_DataType_DOUBLE: return DataType::Float64;
        case onnx::TensorProto_DataType_INT32: return DataType::Signed32;
        case onnx::TensorProto_DataType_INT64: return DataType::Signed64;
        case onnx::TensorProto_DataType_BOOL: return DataType::Boolean;
        case onnx::TensorProto_DataType_UINT8: return DataType::UInt8;
        case onnx::TensorProto_DataType_INT8: return DataType::Signed8;
        case onnx::TensorProto_DataType_INT16: return DataType::Signed16;
        case onnx::TensorProto_DataType_UINT16: return DataType::UInt16;
        case onnx::TensorProto_DataType_UINT32: return DataType::UInt32;
        case onnx::TensorProto_DataType_UINT64: return DataType::UInt64;
        case kFloat8E4M3FN: return DataType::Float8E4M3FN;
        case kFloat8E4M3FNUZ: return DataType::Float8E4M3FNUZ;
        case kFloat8E5M2: return DataType::Float8E5M2;
        case kFloat8E5M2FNUZ: return DataType::Float8E5M2FNUZ;
        case kFloat8E8M0: return DataType::Float8E8M0;
        case kInt4: return DataType::Int4;
        case kUInt4: return DataType::UInt4;
        case kFloat4E2M1: return DataType::Float4E2M1;
        case kInt2: return DataType::Int2;
        case kUInt2: return DataType::UInt2;
        default: return std::nullopt;
    }
}

std::optional<int32_t> ToOnnxDataType(DataType type) {
    switch (type) {
        case DataType::Float32: return onnx::TensorProto_DataType_FLOAT;
        case DataType::Float16: return onnx::TensorProto_DataType_FLOAT16;
        case DataType::BFloat16: return onnx::TensorProto_DataType_BFLOAT16;
        case DataType::Float64: return onnx::TensorProto_DataType_DOUBLE;
        case DataType::Signed32: return onnx::TensorProto_DataType_INT32;
        case DataType::Signed64: return onnx::TensorProto_DataType_INT64;
        case DataType::Boolean: return onnx::TensorProto_DataType_BOOL;
        case DataType::UInt8: return onnx::TensorProto_DataType_UINT8;
        case DataType::Signed8: return onnx::TensorProto_DataType_INT8;
        case DataType::Signed16: return onnx::TensorProto_DataType_INT16;
        case DataType::UInt16: return onnx::TensorProto_DataType_UINT16;
        case DataType::UInt32: return onnx::TensorProto_DataType_UINT32;
        case DataType::UInt64: return onnx::TensorProto_DataType_UINT64;
        case DataType::Float8E4M3FN: return kFloat8E4M3FN;
        case DataType::Float8E4M3FNUZ: return kFloat8E4M3FNUZ;
        case DataType::Float8E5M2: return kFloat8E5M2;
        case DataType::Float8E5M2FNUZ: return kFloat8E5M2FNUZ;
        case DataType::Float8E8M0: return kFloat8E8M0;
        case DataType::Int4: return kInt4;
        case DataType::UInt4: return kUInt4;
        case DataType::Float4E2M1: return kFloat4E2M1;
        case DataType::Int2: return kInt2;
        case DataType::UInt2: return kUInt2;
        default: return std::nullopt;  // quantized types: ONNX keeps scale/zero point elsewhere
    }
}

std::string OnnxDataTypeName(int32_t onnxType) {
    if (onnx::TensorProto_DataType_IsValid(onnxType)) return onnx::TensorProto_DataType_Name(onnxType);
    static const char* const kNewer[] = {"FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4",
                                         "INT4", "FLOAT4E2M1", "FLOAT8E8M0", "UINT2", "INT2"};
    if (onnxType >= kFloat8E4M3FN && onnxType <= kInt2) return kNewer[onnxType - kFloat8E4M3FN];
    return "type " + std::to_string(onnxType);
}

float HalfBitsToFloat(uint16_t bits) {
    const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
    const uint32_t exponent = (bits >> 10) & 0x1fu;
    const uint32_t mantissa = bits & 0x3ffu;
    if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
        const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
        return sign ? -magnitude : magnitude;
    }
    const uint32_t out = exponent == 0x1f ? (sign | 0x7f800000u | (mantissa << 13))           // inf / nan
                                          : (sign | ((exponent + 112u) << 23) | (mantissa << 13));
    return std::bit_cast<float>(out);
}

float BFloat16BitsToFloat(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

std::optional<std::vector<int64_t>> OnnxTensor::AsInts() const {
    const std::size_t n = GetNumElements();
    std::vector<int64_t> out(n);
    switch (m_Info.GetDataType()) {
        case DataType::Signed64:
            if (n != 0) std::memcpy(out.data(), m_Data, n * sizeof(int64_t));  // empty vectors may have no data()
            return out;
        case DataType::Signed32: {
            const auto* p = static_cast<const int32_t*>(m_Data);
            for (std::size_t i = 0; i < n; ++i) out[i] = p[i];
            return out;
        }
        case DataType::Boolean:
        case DataType::UInt8: return CopyAs<uint8_t>(m_Data, n);
        case DataType::Signed8: return CopyAs<int8_t>(m_Data, n);
        case DataType::Signed16: return CopyAs<int16_t>(m_Data, n);
        case DataType::UInt16: return CopyAs<uint16_t>(m_Data, n);
        case DataType::UInt32: return CopyAs<uint32_t>(m_Data, n);
        case DataType::UInt64: return CopyAs<uint64_t>(m_Data, n);  // values of 2^63 and more wrap
        default: return std::nullopt;
    }
}

std::vector<double> OnnxTensor::AsDoubles() const {
    const std::size_t n = GetNumElements();
    std::vector<double> out(n);
    auto convertAll = [&](auto load) { for (std::size_t i = 0; i < n; ++i) out[i] = load(i); };
    switch (m_Info.GetDataType()) {
        case DataType::Float32: convertAll([&](std::size_t i) { return double(static_cast<const float*>(m_Data)[i]); }); break;
        case DataType::Float64: convertAll([&](std::size_t i) { return static_cast<const double*>(m_Data)[i]; }); break;
        case DataType::Float16:
            convertAll([&](std::size_t i) { return double(HalfBitsToFloat(static_cast<const uint16_t*>(m_Data)[i])); });
            break;
        case DataType::BFloat16:
            convertAll([&](std::size_t i) { return double(BFloat16BitsToFloat(static_cast<const uint16_t*>(m_Data)[i])); });
            break;
        default: {
            // The integer types; the small float and integer types (float8, float4, int4, ...)
            // have no reading as numbers here.
            const std::optional<std::vector<int64_t>> ints = AsInts();
            if (!ints) {
                throw ParseException(std::string(GetDataTypeName(m_Info.GetDataType())) +
                                     " tensor: cannot be read as numbers here (an attribute or parameter value must "
                                     "be a float or integer tensor)");
            }
            for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<double>((*ints)[i]);
        }
    }
    return out;
}

OnnxTensor DecodeTensorProto(onnx::TensorProto& proto, const std::string& baseDir, const std::string& what) {
    if (proto.has_segment()) throw ParseException(what + ": segmented tensors are not supported");
    const std::optional<DataType> type = FromOnnxDataType(proto.data_type());
    if (!type) {
        if (proto.data_type() == onnx::TensorProto_DataType_UNDEFINED) {
            throw ParseException(what + ": tensor has no data type (not a TensorProto?)");
        }
        throw ParseException(what + ": data type " + OnnxDataTypeName(proto.data_type()) +
                             " is not supported by Trellis (supported: " + kSupportedTypes + ")");
    }

    std::vector<unsigned int> dims;
    std::size_t numElements = 1;
    for (int64_t d : proto.dims()) {
        if (d < 0 || d > static_cast<int64_t>(UINT_MAX)) {
            throw ParseException(what + ": dimension " + std::to_string(d) + " is out of range");
        }
        dims.push_back(static_cast<unsigned int>(d));
        if (__builtin_mul_overflow(numElements, static_cast<std::size_t>(d), &numElements)) {
            throw ParseException(what + ": element count overflows");
        }
    }
    OnnxTensor tensor;
    tensor.m_Info = TensorInfo(TensorShape(std::move(dims)), *type, 0.0f, 0, /*isConstant=*/true);
    std::size_t expectedBytes = 0;
    if (__builtin_mul_overflow(numElements, GetDataTypeSize(*type), &expectedBytes)) {
        throw ParseException(what + ": byte size overflows");
    }
    const bool packed = GetPackedBits(*type) < 8;  // the 4- and 2-bit types: packed in files
    if (packed) expectedBytes = PackedBytes(*type, numElements);

    auto bytes = std::make_shared<std::string>();
    if (proto.data_location() == onnx::TensorProto_DataLocation_EXTERNAL) {
        *bytes = ReadExternalData(proto, baseDir, expectedBytes, what);
    } else if (proto.has_raw_data()) {
        if (proto.raw_data().size() != expectedBytes) {
            throw ParseException(what + ": raw_data holds " + std::to_string(proto.raw_data().size()) +
                                 " bytes, expected " + std::to_string(expectedBytes) + " for " +
                                 DescribeTensor(tensor.m_Info));
        }
        *bytes = std::move(*proto.mutable_raw_data());  // weights can be hundreds of MB: no copy
        proto.clear_raw_data();
    } else {
        const TensorInfo& info = tensor.m_Info;
        auto identity = [](auto v) { return v; };
        switch (*type) {
            case DataType::Float32:
                CopyTypedField<float>(proto.float_data(), "float_data", numElements, info, what, *bytes, identity);
                break;
            case DataType::Float64:
                CopyTypedField<double>(proto.double_data(), "double_data", numElements, info, what, *bytes, identity);
                break;
            case DataType::Signed64:
                CopyTypedField<int64_t>(proto.int64_data(), "int64_data", numElements, info, what, *bytes, identity);
                break;
            case DataType::Signed32:
                CopyTypedField<int32_t>(proto.int32_data(), "int32_data", numElements, info, what, *bytes, identity);
                break;
            case DataType::Float16:
            case DataType::BFloat16:  // int32_data holds the 16 bits of each value
                CopyTypedField<uint16_t>(proto.int32_data(), "int32_data", numElements, info, what, *bytes,
                                                                       [](int32_t v) { return static_cast<uint16_t>(v); });
                break;
            case DataType::Boolean:
                CopyTypedField<uint8_t>(proto.int32_data(), "int32_data", numElements, info, what, *bytes,
                                                                      [](int32_t v) { return static_cast<uint8_t>(v != 0); });
                break;
            case DataType::UInt8:
                CopyTypedField<uint8_t>(proto.int32_data(), "int32_data", numElements, info, what, *bytes,
                                                                      [](int32_t v) { return static_cast<uint8_t>(v); });
                break;
            case DataType::Signed8:  // int32_data holds the small integer types, uint64_data UINT32/UINT64
                CopyTypedField<int8_t>(proto.int32_data(), "int32_data", numElements, info, what, *bytes,
                                       [](int32_t v) { return static_cast<int8_t>(v); });
                break;
            case DataType::Signed16:
                CopyTypedField<int16_t>(proto.int32_data(), "int32_data", numElements, info, what, *bytes,
                                        [](int32_t v) { return static_cast<int16_t>(v); });
                break;
            case DataType::UInt16:
                CopyTypedField<uint16_t>(proto.int32_data(), "int32_data", numElements, info, what, *bytes,
                                         [](int32_t v) { return static_cast<uint16_t>(v); });
                break;
            case DataType::UInt32:
                CopyTypedField<uint32_t>(proto.uint64_data(), "uint64_data", numElements, info, what, *bytes,
                                         [](uint64_t v) { return static_cast<uint32_t>(v); });
                break;
            case DataType::UInt64:
                CopyTypedField<uint64_t>(proto.uint64_data(), "uint64_data", numElements, info, what, *bytes, identity);
                break;
            case DataType::Float8E4M3FN: case DataType::Float8E4M3FNUZ: case DataType::Float8E5M2:
            case DataType::Float8E5M2FNUZ: case DataType::Float8E8M0:  // int32_data holds each code
                CopyTypedField<uint8_t>(proto.int32_data(), "int32_data", numElements, info, what, *bytes,
                                        [](int32_t v) { return static_cast<uint8_t>(v); });
                break;
            case DataType::Int4: case DataType::UInt4: case DataType::Float4E2M1: case DataType::Int2:
            case DataType::UInt2:  // int32_data holds the packed bytes
                CopyTypedField<uint8_t>(proto.int32_data(), "int32_data", expectedBytes, info, what, *bytes,
                                        [](int32_t v) { return static_cast<uint8_t>(v); });
                break;
            default: throw ParseException(what + ": internal error: unhandled data type");  // FromOnnxDataType covers all
        }
    }
    if (packed) *bytes = UnpackElements(*type, *bytes, numElements);
    tensor.m_Data = bytes->data();
    tensor.m_Storage = std::move(bytes);
    return tensor;
}

onnx::TensorProto EncodeTensorProto(const TensorInfo& info, const void* data, const std::string& name) {
    const std::optional<int32_t> onnxType = ToOnnxDataType(info.GetDataType());
    if (!onnxType) {
        throw InvalidArgumentException(std::string("TensorProto: data type ") + GetDataTypeName(info.GetDataType()) +
                                       " has no ONNX equivalent (quantization parameters would be lost)");
    }
    onnx::TensorProto proto;
    proto.set_name(name);
    proto.set_data_type(*onnxType);
    for (unsigned int d : info.GetShape().GetDims()) proto.add_dims(d);
    if (GetPackedBits(info.GetDataType()) < 8) {
        proto.set_raw_data(PackElements(info.GetDataType(), data, info.GetNumElements()));
    } else {
        proto.set_raw_data(data, info.GetNumBytes());
    }
    return proto;
}

}  // namespace trellis::onnximport
