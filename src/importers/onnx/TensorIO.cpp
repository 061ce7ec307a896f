// Tensor files: ONNX TensorProto (.pb) and NumPy .npy (see include/trellis/TensorIO.hpp).
#include "OnnxProto.hpp"
#include "OnnxTensor.hpp"

#include <trellis/Exceptions.hpp>
#include <trellis/TensorIO.hpp>

#include <cctype>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace trellis {

namespace {

constexpr char kNpyMagic[] = "\x93NUMPY";
constexpr std::size_t kNpyMagicSize = 6;

std::string ReadWholeFile(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) throw FileNotFoundException(path + ": file not found");
    if (!std::filesystem::is_regular_file(path, ec)) throw ParseException(path + ": not a regular file");
    std::ifstream file(path, std::ios::binary);
    if (!file) throw ParseException(path + ": cannot open file");
    std::string bytes(static_cast<std::size_t>(std::filesystem::file_size(path, ec)), '\0');
    file.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!file) throw ParseException(path + ": reading the file failed");
    return bytes;
}

void WriteWholeFile(const std::string& path, const std::string& bytes) {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    if (!file) throw InvalidArgumentException(path + ": cannot open file for writing");
    file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    file.close();
    if (!file) throw InvalidArgumentException(path + ": writing the file failed");
}

// ---- .pb (TensorProto) ----

OwnedTensor LoadTensorProto(const std::string& path, const std::string& bytes) {
    onnx::TensorProto proto;
    if (bytes.size() > static_cast<std::size_t>(INT_MAX) ||
        !proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
        throw ParseException(path + ": not a valid TensorProto (protobuf parsing failed: the file is truncated or "
                             "is not a tensor)");
    }
    const std::string baseDir = std::filesystem::path(path).parent_path().string();
    onnximport::OnnxTensor decoded = onnximport::DecodeTensorProto(proto, baseDir.empty() ? "." : baseDir, path);
    OwnedTensor tensor;
    tensor.m_Name = proto.name();
    tensor.m_Info = decoded.m_Info;
    tensor.m_Info.SetConstant(false);
    const auto* data = static_cast<const uint8_t*>(decoded.m_Data);
    tensor.m_Data.assign(data, data + decoded.m_Info.GetNumBytes());
    return tensor;
}

// ---- .npy ----
// Layout: magic "\x93NUMPY", major, minor, header length (u16 for 1.x, u32 for 2.x/3.x), then a
// Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with
// spaces and a newline, then the data in C order.

struct NpyDtype {
    const char* m_Code;  // without the byte-order character
    DataType m_Type;
};
constexpr NpyDtype kNpyDtypes[] = {
    {"f4", DataType::Float32}, {"f8", DataType::Float64}, {"f2", DataType::Float16}, {"i4", DataType::Signed32},
    {"i8", DataType::Signed64}, {"b1", DataType::Boolean}, {"u1", DataType::UInt8}, {"i1", DataType::Signed8},
    {"i2", DataType::Signed16}, {"u2", DataType::UInt16}, {"u4", DataType::UInt32}, {"u8", DataType::UInt64},
};

// A small parser for the header dict: strings, True/False and tuples of integers are all it holds.
class NpyHeaderParser {
public:
    NpyHeaderParser(const std::string& text, const std::string& path) : m_Text(text), m_Path(path) {}

    void Parse(std::string& descr, bool& fortranOrder, std::vector<unsigned int>& shape) {
        bool haveDescr = false, haveOrder = false, haveShape = false;
        Expect('{');
        while (!TryConsume('}')) {
            const std::string key = ParseString();
            Expect(':');
            if (key == "descr") {
                descr = ParseString();
                haveDescr = true;
            } else if (key == "fortran_order") {
                fortranOrder = ParseBool();
                haveOrder = true;
            } else if (key == "shape") {
                shape = ParseShape();
                haveShape = true;
            } else {
                Fail("unexpected key '" + key + "'");
            }
            if (!TryConsume(',')) {
                Expect('}');
                break;
            }
        }
        if (!haveDescr || !haveOrder || !haveShape) Fail("the keys 'descr', 'fortran_order' and 'shape' are required");
    }

private:
    [[noreturn]] void Fail(const std::string& what) const {
        throw ParseException(m_Path + ": bad .npy header (" + what + "): " + m_Text);
    }
    void SkipSpace() {
        while (m_Pos < m_Text.size() && std::isspace(static_cast<unsigned char>(m_Text[m_Pos]))) ++m_Pos;
    }
    bool TryConsume(char c) {
        SkipSpace();
        if (m_Pos < m_Text.size() && m_Text[m_Pos] == c) {
            ++m_Pos;
            return true;
        }
        return false;
    }
    void Expect(char c) {
        if (!TryConsume(c)) Fail(std::string("expected '") + c + "'");
    }
    std::string ParseString() {
        SkipSpace();
        if (m_Pos >= m_Text.size() || (m_Text[m_Pos] != '\'' && m_Text[m_Pos] != '"')) Fail("expected a string");
        const char quote = m_Text[m_Pos++];
        const std::size_t end = m_Text.find(quote, m_Pos);
        if (end == std::string::npos) Fail("unterminated string");
        std::string value = m_Text.substr(m_Pos, end - m_Pos);
        m_Pos = end + 1;
        return value;
    }
    bool ParseBool() {
        SkipSpace();
        for (const auto& [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
            const std::size_t length = std::strlen(word);
            if (m_Text.compare(m_Pos, length, word) == 0) {
                m_Pos += length;
                return value;
            }
        }
        Fail("expected True or False");
    }
    std::vector<unsigned int> ParseShape() {
        std::vector<unsigned int> dims;
        Expect('(');
        while (!TryConsume(')')) {
            SkipSpace();
            std::size_t digits = 0;
            unsigned long long value = 0;
            while (m_Pos < m_Text.size() && std::isdigit(static_cast<unsigned char>(m_Text[m_Pos]))) {
                value = value * 10 + static_cast<unsigned>(m_Text[m_Pos++] - '0');
                if (value > UINT_MAX) Fail("dimension too large");
                ++digits;
            }
            if (digits == 0) Fail("expected a dimension");
            dims.push_back(static_cast<unsigned int>(value));
            if (!TryConsume(',')) {
                Expect(')');
                break;
            }
        }
        return dims;
    }

    const std::string& m_Text;
    const std::string& m_Path;
    std::size_t m_Pos = 0;
};

OwnedTensor LoadNpy(const std::string& path, const std::string& bytes) {
    if (bytes.size() < kNpyMagicSize + 4) {
        throw ParseException(path + ": truncated .npy file (" + std::to_string(bytes.size()) + " bytes)");
    }
    const auto major = static_cast<unsigned char>(bytes[6]);
    const auto minor = static_cast<unsigned char>(bytes[7]);
    if (major < 1 || major > 3) {
        throw ParseException(path + ": .npy version " + std::to_string(major) + "." + std::to_string(minor) +
                             " is not supported (1.x to 3.x)");
    }
    auto byteAt = [&](std::size_t i) { return static_cast<std::size_t>(static_cast<unsigned char>(bytes[i])); };
    std::size_t headerLength = 0;
    std::size_t headerStart = 0;
    if (major == 1) {
        headerLength = byteAt(8) | (byteAt(9) << 8);
        headerStart = 10;
    } else {
        if (bytes.size() < 12) throw ParseException(path + ": truncated .npy file (" + std::to_string(bytes.size()) + " bytes)");
        headerLength = byteAt(8) | (byteAt(9) << 8) | (byteAt(10) << 16) | (byteAt(11) << 24);
        headerStart = 12;
    }
    if (bytes.size() < headerStart + headerLength) {
        throw ParseException(path + ": truncated .npy header: expected " + std::to_string(headerStart + headerLength) +
                             " bytes, the file has " + std::to_string(bytes.size()));
    }
    const std::string header = bytes.substr(headerStart, headerLength);
    std::string descr;
    bool fortranOrder = false;
    std::vector<unsigned int> shape;
    NpyHeaderParser(header, path).Parse(descr, fortranOrder, shape);
    if (fortranOrder) throw ParseException(path + ": .npy arrays in Fortran order are not supported (only C order)");

    // Byte order: '<' little, '|' not applicable (single bytes), '=' native (little here).
    const NpyDtype* dtype = nullptr;
    if (descr.size() == 3 && (descr[0] == '<' || descr[0] == '|' || descr[0] == '=')) {
        for (const NpyDtype& candidate : kNpyDtypes) {
            if (descr.compare(1, 2, candidate.m_Code) == 0) dtype = &candidate;
        }
    }
    if (!dtype) {
        throw ParseException(path + ": .npy dtype '" + descr + "' is not supported (little-endian f4, f8, f2, i4, "
                             "i8, b1, u1)");
    }
    OwnedTensor tensor;
    tensor.m_Info = TensorInfo(TensorShape(std::move(shape)), dtype->m_Type);
    // Checked: a shape such as (65536, 65536, 65536, 65536) wraps to 0 bytes, which an empty
    // data section would match.
    const std::optional<std::size_t> size = tensor.m_Info.GetNumBytesChecked();
    if (!size) {
        throw ParseException(path + ": .npy shape " + tensor.m_Info.GetShape().ToString() +
                             " has more bytes than 64 bits can count");
    }
    const std::size_t expected = *size;
    const std::size_t actual = bytes.size() - headerStart - headerLength;
    if (actual != expected) {
        throw ParseException(path + ": .npy data of " + tensor.m_Info.ToString() + " needs " + std::to_string(expected) +
                             " bytes, the file has " + std::to_string(actual) + (actual < expected ? " (truncated)" : ""));
    }
    const auto* data = reinterpret_cast<const uint8_t*>(bytes.data()) + headerStart + headerLength;
    tensor.m_Data.assign(data, data + expected);
    return tensor;
}

std::string NpyDescr(DataType type) {
    switch (type) {
        case DataType::Float32: return "<f4";
        case DataType::Float64: return "<f8";
        case DataType::Float16: return "<f2";
        case DataType::Signed32: return "<i4";
        case DataType::Signed64: return "<i8";
        case DataType::Boolean: return "|b1";
        case DataType::UInt8: return "|u1";
        case DataType::Signed8: return "|i1";
        case DataType::Signed16: return "<i2";
        case DataType::UInt16: return "<u2";
        case DataType::UInt32: return "<u4";
        case DataType::UInt64: return "<u8";
        default: return "";
    }
}

void CheckDataSize(const std::string& path, const OwnedTensor& tensor) {
    if (tensor.m_Data.size() != tensor.m_Info.GetNumBytes()) {
        throw InvalidArgumentException(path + ": tensor '" + tensor.m_Name + "' (" + tensor.m_Info.ToString() +
                                       ") needs " + std::to_string(tensor.m_Info.GetNumBytes()) + " bytes of data, has " +
                                       std::to_string(tensor.m_Data.size()));
    }
}

}  // namespace

OwnedTensor LoadTensorFile(const std::string& path) {
    const std::string bytes = ReadWholeFile(path);
    if (bytes.compare(0, kNpyMagicSize, kNpyMagic, kNpyMagicSize) == 0) return LoadNpy(path, bytes);
    if (std::filesystem::path(path).extension() == ".npy") {
        throw ParseException(path + ": not a .npy file (the magic \"\\x93NUMPY\" is missing)");
    }
    return LoadTensorProto(path, bytes);
}

void SaveTensorProto(const std::string& path, const OwnedTensor& tensor) {
    CheckDataSize(path, tensor);
    const onnx::TensorProto proto = onnximport::EncodeTensorProto(tensor.m_Info, tensor.m_Data.data(), tensor.m_Name);
    WriteWholeFile(path, proto.SerializeAsString());
}

void SaveNpy(const std::string& path, const OwnedTensor& tensor) {
    CheckDataSize(path, tensor);
    const std::string descr = NpyDescr(tensor.m_Info.GetDataType());
    if (descr.empty()) {
        throw InvalidArgumentException(path + ": data type " + std::string(GetDataTypeName(tensor.m_Info.GetDataType())) +
                                       " has no .npy dtype");
    }
    // Python's tuple repr: "()", "(4,)", "(2, 3)".
    const std::vector<unsigned int>& dims = tensor.m_Info.GetShape().GetDims();
    std::string shape = "(";
    for (std::size_t i = 0; i < dims.size(); ++i) shape += (i ? ", " : "") + std::to_string(dims[i]);
    shape += dims.size() == 1 ? ",)" : ")";
    std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    // Version 1.0: the data starts at a multiple of 64 bytes; the header ends with '\n'.
    const std::size_t prefix = kNpyMagicSize + 4;
    header.append(63 - (prefix + header.size()) % 64, ' ');
    header += '\n';
    if (header.size() > 0xffff) throw InvalidArgumentException(path + ": .npy header too long for version 1.0");

    std::string bytes(kNpyMagic, kNpyMagicSize);
    bytes += '\x01';
    bytes += '\x00';
    bytes += static_cast<char>(header.size() & 0xff);
    bytes += static_cast<char>((header.size() >> 8) & 0xff);
    bytes += header;
    bytes.append(reinterpret_cast<const char*>(tensor.m_Data.data()), tensor.m_Data.size());
    WriteWholeFile(path, bytes);
}

}  // namespace trellis
