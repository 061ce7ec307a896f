// Arm NN compatibility layer: the exceptions, as Arm NN names them. They are Trellis's exception
// types, so `catch (const armnn::Exception&)` also catches everything the Trellis API throws.
// Messages name the layer, tensor or file and the rule broken.
#pragma once

#include <armnn/Optional.hpp>
#include <trellis/Exceptions.hpp>

namespace armnn {

using Exception = trellis::Exception;
using InvalidArgumentException = trellis::InvalidArgumentException;
using ParseException = trellis::ParseException;
using FileNotFoundException = trellis::FileNotFoundException;
using LayerValidationException = trellis::LayerValidationException;
using GraphValidationException = trellis::GraphValidationException;
using BackendUnavailableException = trellis::BackendUnavailableException;
using RuntimeException = trellis::RuntimeException;
using MemoryException = trellis::MemoryException;
/// Arm NN throws this for a descriptor or feature a backend does not implement; the
/// compatibility layer throws it for an Arm NN feature Trellis does not cover (docs/armnn-compat.md).
class UnimplementedException : public trellis::Exception {
    using trellis::Exception::Exception;
};

}  // namespace armnn
