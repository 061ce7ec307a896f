// Trellis application API: basic value types.
//
// Ownership: every type here is a plain value type. Tensor and ConstTensor do NOT own the memory
// they point at; the caller keeps it alive for as long as the tensor object is used.
// Thread-safety: value types; concurrent reads are safe, concurrent writes are not.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace trellis {

/// Element types a tensor can hold. Names follow the seed API.
enum class DataType {
    Float32,
    Float16,
    BFloat16,
    QAsymmU8,  ///< uint8 with scale and zero point
    QAsymmS8,  ///< int8 with scale and zero point
    QSymmS8,   ///< int8 with scale, zero point 0
    QSymmS16,  ///< int16 with scale, zero point 0
    Signed32,
    Signed64,
    Boolean,   ///< one byte per element, 0 or 1
    Float64,   ///< used by ONNX test data and Cast; not a compute type of the core op set
    UInt8,     ///< plain (non-quantized) unsigned byte, as ONNX's uint8
    // Plain integer types of ONNX (appended so existing values stay stable).
    Signed8,   ///< int8 (ONNX INT8), not quantized
    Signed16,  ///< int16 (ONNX INT16)
    UInt16,    ///< uint16 (ONNX UINT16)
    UInt32,    ///< uint32 (ONNX UINT32)
    UInt64,    ///< uint64 (ONNX UINT64)
    // The small ONNX types (opsets 19-25): storage types, one element per byte in memory (the
    // 4- and 2-bit types are packed only in files); arithmetic goes through float. Encoding and
    // decoding: include/trellis/backends/SmallTypes.hpp.
    Float8E4M3FN,    ///< float8 1-4-3, finite only (ONNX FLOAT8E4M3FN)
    Float8E4M3FNUZ,  ///< float8 1-4-3, finite, no -0 (ONNX FLOAT8E4M3FNUZ)
    Float8E5M2,      ///< float8 1-5-2 with infinities (ONNX FLOAT8E5M2)
    Float8E5M2FNUZ,  ///< float8 1-5-2, finite, no -0 (ONNX FLOAT8E5M2FNUZ)
    Float8E8M0,      ///< a power of two 2^(e - 127) (ONNX FLOAT8E8M0)
    Int4,            ///< int4, sign-extended in its byte (ONNX INT4)
    UInt4,           ///< uint4 (ONNX UINT4)
    Float4E2M1,      ///< float4 1-2-1 (ONNX FLOAT4E2M1)
    Int2,            ///< int2, sign-extended in its byte (ONNX INT2)
    UInt2,           ///< uint2 (ONNX UINT2)
};

/// Size in bytes of one element of `type`.
std::size_t GetDataTypeSize(DataType type);
/// Stable, human-readable name ("Float32", ...).
const char* GetDataTypeName(DataType type);
std::ostream& operator<<(std::ostream& os, DataType type);

/// Identifies a backend by its unique name ("CpuRef", "CpuAcc", "Custom", ...).
class BackendId {
public:
    BackendId() = default;
    BackendId(std::string id) : m_Id(std::move(id)) {}     // NOLINT: implicit by design (seed API)
    BackendId(const char* id) : m_Id(id ? id : "") {}       // NOLINT
    const std::string& Get() const { return m_Id; }
    bool IsEmpty() const { return m_Id.empty(); }
    bool operator==(const BackendId& o) const { return m_Id == o.m_Id; }
    bool operator!=(const BackendId& o) const { return m_Id != o.m_Id; }
    bool operator<(const BackendId& o) const { return m_Id < o.m_Id; }
private:
    std::string m_Id;
};
std::ostream& operator<<(std::ostream& os, const BackendId& id);
using BackendIdVector = std::vector<BackendId>;

/// Binding id of a network input or output layer (chosen by the application).
using LayerBindingId = int;
/// Handle to a network loaded into a runtime.
using NetworkId = int;

enum class Status { Success = 0, Failure = 1 };

/// A dimension whose size is not known until the network runs (an ONNX symbolic or unknown dim:
/// "batch", "sequence"). Only network inputs may have such dims; TensorShape::ToString() prints
/// them as "?". It is unsigned -1, so it never equals a real size.
constexpr unsigned int kUnknownDim = ~0u;

/// Dimensions of a tensor. Rank 0 is a scalar with one element. Dimensions may be 0 (empty tensor)
/// or, for a network input whose size is decided at run time, kUnknownDim.
class TensorShape {
public:
    TensorShape() = default;
    TensorShape(std::initializer_list<unsigned int> dims) : m_Dims(dims) {}
    explicit TensorShape(std::vector<unsigned int> dims) : m_Dims(std::move(dims)) {}
    TensorShape(unsigned int numDims, const unsigned int* dims) : m_Dims(dims, dims + numDims) {}

    unsigned int GetNumDimensions() const { return static_cast<unsigned int>(m_Dims.size()); }
    unsigned int operator[](unsigned int i) const;
    unsigned int& operator[](unsigned int i);
    /// Product of all dimensions (1 for a scalar; 0 when a dim is kUnknownDim). Wraps when the
    /// product does not fit std::size_t (dims are 32-bit, so rank 3 can overflow): code that
    /// handles shapes from outside (files, models) uses GetNumElementsChecked().
    std::size_t GetNumElements() const;
    /// GetNumElements(), or std::nullopt when the product overflows std::size_t.
    std::optional<std::size_t> GetNumElementsChecked() const;
    /// False when some dim is kUnknownDim.
    bool AreAllDimensionsSpecified() const;
    const std::vector<unsigned int>& GetDims() const { return m_Dims; }
    bool operator==(const TensorShape& o) const { return m_Dims == o.m_Dims; }
    bool operator!=(const TensorShape& o) const { return m_Dims != o.m_Dims; }
    /// "1x3x224x224"; "scalar" for rank 0; "?x3x224x224" with an unknown dim.
    std::string ToString() const;
private:
    std::vector<unsigned int> m_Dims;
};
std::ostream& operator<<(std::ostream& os, const TensorShape& s);

/// Shape, element type and (for quantized types) quantization parameters of a tensor.
/// Per-axis quantization: several scales plus the axis they run along.
class TensorInfo {
public:
    TensorInfo() = default;
    TensorInfo(const TensorShape& shape, DataType dataType, float quantizationScale = 0.0f,
               int32_t quantizationOffset = 0, bool isConstant = false);
    TensorInfo(const TensorShape& shape, DataType dataType, const std::vector<float>& quantizationScales,
               unsigned int quantizationDim, bool isConstant = false);
    /// From a dimension array (the form Arm NN programs use).
    TensorInfo(unsigned int numDimensions, const unsigned int* dimensionSizes, DataType dataType,
               float quantizationScale = 0.0f, int32_t quantizationOffset = 0, bool isConstant = false)
        : TensorInfo(TensorShape(numDimensions, dimensionSizes), dataType, quantizationScale, quantizationOffset,
                     isConstant) {}

    const TensorShape& GetShape() const { return m_Shape; }
    TensorShape& GetShape() { return m_Shape; }
    void SetShape(const TensorShape& s) { m_Shape = s; }
    DataType GetDataType() const { return m_DataType; }
    void SetDataType(DataType t) { m_DataType = t; }
    unsigned int GetNumDimensions() const { return m_Shape.GetNumDimensions(); }
    std::size_t GetNumElements() const { return m_Shape.GetNumElements(); }
    std::size_t GetNumBytes() const { return GetNumElements() * GetDataTypeSize(m_DataType); }
    /// GetNumBytes(), or std::nullopt when the element count or the byte count overflows
    /// std::size_t (where GetNumBytes() wraps, e.g. to 0 for Float32 2^31 x 2^31).
    std::optional<std::size_t> GetNumBytesChecked() const;

    bool HasPerAxisQuantization() const { return m_Scales.size() > 1 || m_QuantizationDim.has_value(); }
    float GetQuantizationScale() const { return m_Scales.empty() ? 0.0f : m_Scales[0]; }
    void SetQuantizationScale(float s) { m_Scales.assign(1, s); }
    const std::vector<float>& GetQuantizationScales() const { return m_Scales; }
    void SetQuantizationScales(const std::vector<float>& s) { m_Scales = s; }
    int32_t GetQuantizationOffset() const { return m_Offset; }
    void SetQuantizationOffset(int32_t o) { m_Offset = o; }
    std::optional<unsigned int> GetQuantizationDim() const { return m_QuantizationDim; }
    void SetQuantizationDim(std::optional<unsigned int> d) { m_QuantizationDim = d; }
    bool IsQuantized() const;

    bool IsConstant() const { return m_IsConstant; }
    void SetConstant(bool c = true) { m_IsConstant = c; }

    /// Equal shape, type and quantization (constness is ignored).
    bool operator==(const TensorInfo& o) const;
    bool operator!=(const TensorInfo& o) const { return !(*this == o); }
    /// "Float32 1x3x224x224"
    std::string ToString() const;
private:
    TensorShape m_Shape;
    DataType m_DataType = DataType::Float32;
    std::vector<float> m_Scales;
    int32_t m_Offset = 0;
    std::optional<unsigned int> m_QuantizationDim;
    bool m_IsConstant = false;
};
std::ostream& operator<<(std::ostream& os, const TensorInfo& s);

/// A tensor description plus a pointer to memory the caller owns.
template <typename MemoryType>
class BaseTensor {
public:
    BaseTensor() = default;
    BaseTensor(const TensorInfo& info, MemoryType memoryArea) : m_Info(info), m_Memory(memoryArea) {}
    const TensorInfo& GetInfo() const { return m_Info; }
    TensorInfo& GetInfo() { return m_Info; }
    const TensorShape& GetShape() const { return m_Info.GetShape(); }
    DataType GetDataType() const { return m_Info.GetDataType(); }
    unsigned int GetNumDimensions() const { return m_Info.GetNumDimensions(); }
    std::size_t GetNumBytes() const { return m_Info.GetNumBytes(); }
    std::size_t GetNumElements() const { return m_Info.GetNumElements(); }
    MemoryType GetMemoryArea() const { return m_Memory; }
    /// Where the memory is: empty (the default) for host memory, otherwise the working memory of
    /// that backend - "GpuAcc": a CUDA device pointer the caller owns. A network input given in a
    /// backend's memory is read there in place (the copy the network would make into that
    /// backend is skipped); see IRuntime::EnqueueWorkload.
    const BackendId& GetMemoryBackend() const { return m_MemoryBackend; }
    void SetMemoryBackend(const BackendId& backend) { m_MemoryBackend = backend; }
protected:
    TensorInfo m_Info;
    MemoryType m_Memory = nullptr;
    BackendId m_MemoryBackend;  // last, so the members before it keep their offsets
};

/// Writable tensor view (outputs).
class Tensor : public BaseTensor<void*> {
public:
    using BaseTensor<void*>::BaseTensor;
};

/// Read-only tensor view (inputs, constants).
class ConstTensor : public BaseTensor<const void*> {
public:
    using BaseTensor<const void*>::BaseTensor;
    ConstTensor(const Tensor& t) : BaseTensor<const void*>(t.GetInfo(), t.GetMemoryArea()) {  // NOLINT
        m_MemoryBackend = t.GetMemoryBackend();
    }
};

/// Element `index` of `tensor` as a double: floats (Float16 and BFloat16 decoded) and integers by
/// value; quantized types give the stored integer (not dequantized); Boolean 0 or 1.
double GetElementAsDouble(const ConstTensor& tensor, std::size_t index);

using InputTensors = std::vector<std::pair<LayerBindingId, ConstTensor>>;
using OutputTensors = std::vector<std::pair<LayerBindingId, Tensor>>;

}  // namespace trellis
