// Trellis application API: reading and writing tensor files.
//
// Formats: ONNX TensorProto (.pb, the ONNX test-data format, raw_data or typed fields) and NumPy
// .npy (version 1/2/3, little-endian, C order). Errors: ParseException naming the file and what is
// wrong (truncated, unsupported dtype, Fortran order, ...).
#pragma once

#include <trellis/Types.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace trellis {

/// A tensor that owns its bytes.
struct OwnedTensor {
    std::string m_Name;      ///< TensorProto name ("" for .npy)
    TensorInfo m_Info;
    std::vector<uint8_t> m_Data;

    ConstTensor AsConstTensor() const { return ConstTensor(m_Info, m_Data.data()); }
    Tensor AsTensor() { return Tensor(m_Info, m_Data.data()); }
};

/// Reads a .pb TensorProto or a .npy file, chosen by the file's content (.npy magic) and extension.
/// A UINT16 TensorProto is read as UInt16 (ONNX's test data also stores bfloat16 tensors that way:
/// a caller that expects BFloat16 may take the same bits as BFloat16).
OwnedTensor LoadTensorFile(const std::string& path);
/// Writes a TensorProto (raw_data) named `tensor.m_Name`.
void SaveTensorProto(const std::string& path, const OwnedTensor& tensor);
void SaveNpy(const std::string& path, const OwnedTensor& tensor);

}  // namespace trellis
