// Trellis application API: exceptions.
//
// The application API reports caller errors (bad model, bad input, unsupported layer) by throwing
// one of these. Nothing throws across the dynamic-backend C boundary. Messages name the thing
// (node, layer, file, backend) and the rule that was broken.
#pragma once

#include <stdexcept>
#include <string>

namespace trellis {

class Exception : public std::runtime_error {
public:
    explicit Exception(const std::string& message) : std::runtime_error(message) {}
};

/// A caller passed an argument that breaks the API's contract (wrong binding id, wrong shape, ...).
class InvalidArgumentException : public Exception { using Exception::Exception; };
/// A file could not be read or parsed (model, tensor file).
class ParseException : public Exception { using Exception::Exception; };
class FileNotFoundException : public ParseException { using ParseException::ParseException; };
/// The model uses an operator (or an operator domain) the ONNX importer does not convert; the
/// message names the node, the op and the opset.
class UnsupportedOperatorException : public ParseException { using ParseException::ParseException; };
/// A layer is inconsistent (shape/type mismatch, bad descriptor, unconnected slot).
class LayerValidationException : public Exception { using Exception::Exception; };
/// The graph as a whole is invalid (cycle, missing output, ...).
class GraphValidationException : public Exception { using Exception::Exception; };
/// No preferred backend can run a layer, or a backend is not registered.
class BackendUnavailableException : public Exception { using Exception::Exception; };
/// A failure while loading or executing a network.
class RuntimeException : public Exception { using Exception::Exception; };
/// A tensor or a network's working memory would exceed a resource limit
/// (OptimizerOptions::m_MaxTensorBytes, m_MaxWorkingMemoryBytes); raised before the memory is
/// allocated, naming the layer, the size and the limit.
class ResourceLimitException : public Exception { using Exception::Exception; };
/// An allocation failed.
class MemoryException : public Exception { using Exception::Exception; };

}  // namespace trellis
