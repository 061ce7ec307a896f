// Reading a tensor's elements as numbers, whatever its element type (trellis_test_support).
#pragma once

#include <trellis/TensorIO.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace trellis::test {

/// Element `i` of `t` as a double (NaN for a type it cannot read).
inline double ToDouble(const OwnedTensor& t, std::size_t i) {
    switch (t.m_Info.GetDataType()) {
        case DataType::Float32: return reinterpret_cast<const float*>(t.m_Data.data())[i];
        case DataType::Float64: return reinterpret_cast<const double*>(t.m_Data.data())[i];
        case DataType::Signed32: return reinterpret_cast<const int32_t*>(t.m_Data.data())[i];
        case DataType::Signed64: return static_cast<double>(reinterpret_cast<const int64_t*>(t.m_Data.data())[i]);
        case DataType::Boolean:
        case DataType::UInt8: return t.m_Data[i];
        case DataType::Signed8: return reinterpret_cast<const int8_t*>(t.m_Data.data())[i];
        case DataType::Signed16: return reinterpret_cast<const int16_t*>(t.m_Data.data())[i];
        case DataType::UInt16: return reinterpret_cast<const uint16_t*>(t.m_Data.data())[i];
        case DataType::UInt32: return reinterpret_cast<const uint32_t*>(t.m_Data.data())[i];
        case DataType::UInt64: return static_cast<double>(reinterpret_cast<const uint64_t*>(t.m_Data.data())[i]);
        default: return std::nan("");
    }
}

}  // namespace trellis::test
