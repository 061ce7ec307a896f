// Arm NN compatibility layer: names of enums (GetDataTypeName, GetComputeDeviceAsCString, ...),
// declared with the enums in <armnn/Types.hpp>.
#pragma once

#include <armnn/Types.hpp>

namespace armnn {

inline const char* GetDataTypeName(DataType type) { return trellis::GetDataTypeName(type); }

}  // namespace armnn
