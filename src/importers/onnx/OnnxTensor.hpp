// Internal: ONNX TensorProto <-> Trellis tensors, shared by the ONNX importer and TensorIO.
//
// Contract:
//  - Data types map FLOAT->Float32, FLOAT16->Float16, BFLOAT16->BFloat16, DOUBLE->Float64,
//    INT8/16/32/64->Signed8/16/32/64, UINT8/16/32/64->UInt8/16/32/64, BOOL->Boolean; every other
//    ONNX type is refused with a ParseException naming the tensor and the type.
//  - DecodeTensorProto accepts raw_data, the typed fields (float_data, int32_data for
//    INT8/INT16/INT32/UINT8/UINT16/BOOL and FLOAT16/BFLOAT16 bits, int64_data, uint64_data for
//    UINT32/UINT64, double_data) and external data
//    (location/offset/length, resolved relative to `baseDir`). Sizes are checked exactly: a
//    mismatch is a ParseException giving the expected and actual counts.
//  - Error messages start with the caller's `what` ("model.onnx: initializer 'w'").
#pragma once

#include "OnnxProto.hpp"

#include <trellis/Types.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace trellis::onnximport {

/// A decoded constant tensor. m_Storage keeps the bytes m_Data points at alive (shared, so one
/// initializer can back several Constant layers without copies).
struct OnnxTensor {
    TensorInfo m_Info;
    std::shared_ptr<const void> m_Storage;
    const void* m_Data = nullptr;

    ConstTensor AsConstTensor() const { return ConstTensor(m_Info, m_Data); }
    std::size_t GetNumElements() const { return m_Info.GetNumElements(); }
    /// Values as int64 (integer and Boolean types only; std::nullopt for floating-point types).
    std::optional<std::vector<int64_t>> AsInts() const;
    /// Values as double (every supported type).
    std::vector<double> AsDoubles() const;
};

/// The Trellis type of an ONNX TensorProto::DataType value, or std::nullopt if Trellis has none.
std::optional<DataType> FromOnnxDataType(int32_t onnxType);
/// The ONNX TensorProto::DataType of `type`, or std::nullopt (quantized types have none).
std::optional<int32_t> ToOnnxDataType(DataType type);
/// "FLOAT", "INT8", ... ("type 42" for values ONNX does not define).
std::string OnnxDataTypeName(int32_t onnxType);

/// Decodes `proto`. raw_data is moved out of the proto (no copy), so the proto is left without
/// its data. Throws ParseException / FileNotFoundException (missing external-data file).
OnnxTensor DecodeTensorProto(onnx::TensorProto& proto, const std::string& baseDir, const std::string& what);

/// A TensorProto holding `info`'s dims and type, `name` and `data` as raw_data. Throws
/// InvalidArgumentException for types ONNX has no TensorProto type for (quantized types).
onnx::TensorProto EncodeTensorProto(const TensorInfo& info, const void* data, const std::string& name);

/// IEEE half / bfloat16 bits to float.
float HalfBitsToFloat(uint16_t bits);
float BFloat16BitsToFloat(uint16_t bits);

}  // namespace trellis::onnximport
