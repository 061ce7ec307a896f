// Size: the number of elements of the input, as a Signed64 scalar.
#include "core/InferContext.hpp"

namespace trellis::core {

std::vector<TensorInfo> SizeInfer(InferContext&) {
    return {TensorInfo(TensorShape(std::vector<unsigned int>{}), DataType::Signed64)};
}

}  // namespace trellis::core
