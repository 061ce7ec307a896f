// Trellis application API: the ONNX importer.
//
// Ownership: the parser owns nothing after CreateNetworkFromBinaryFile() returns except the
// binding tables of the last parsed model. Thread-safety: one parser per thread.
// Errors: ParseException naming the file, node, op and opset for anything unsupported or
// malformed; FileNotFoundException for missing files (model or external data).
#pragma once

#include <trellis/INetwork.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace trellis {

/// Binding id plus tensor info of a network input or output. For outputs the info holds the
/// data type and the shape the model declares (dims it leaves open are kUnknownDim); the
/// runtime's GetOutputTensorInfo() is authoritative after loading.
/// For an input, dims the model leaves symbolic or unknown (and no Options::m_InputShapes entry
/// pins) are kUnknownDim: the network is then dynamic and takes their size from each run.
struct BindingPointInfo {
    LayerBindingId m_BindingId = 0;
    TensorInfo m_TensorInfo;
    std::string m_Name;
    /// Per dim: the model's symbol ("batch") for a symbolic dim, "?" for an unknown one, "" else.
    std::vector<std::string> m_DimNames;
};

class IOnnxParser;
using IOnnxParserPtr = std::unique_ptr<IOnnxParser>;

class IOnnxParser {
public:
    /// The highest opset of the default ONNX domain ("" or "ai.onnx") whose operator forms the
    /// importer reads and is tested on. A model importing a newer one is refused with a
    /// ParseException naming both opsets: an op whose meaning changed in a newer opset could
    /// otherwise run with the old meaning and give a wrong answer without a word (attributes new
    /// in later opsets are refused by name, but changed semantics of an existing form are not
    /// detectable). Opsets of other domains are not checked here; a node of another domain is
    /// refused when it is converted. See docs/reliability.md.
    static constexpr int64_t kHighestSupportedOpset = 28;

    struct Options {
        /// Shapes for graph inputs, by name: pins symbolic or unknown dims at load time (else
        /// they are decided by each run); a given shape must agree with every fixed dim the
        /// model declares.
        std::map<std::string, TensorShape> m_InputShapes;
    };

    static IOnnxParserPtr Create();
    /// ONNX op types (default domain) the importer converts, sorted.
    static std::vector<std::string> GetSupportedOperators();
    virtual ~IOnnxParser() = default;

    /// Parses a .onnx file (external-data files are resolved relative to its folder).
    virtual INetworkPtr CreateNetworkFromBinaryFile(const std::string& path, const Options& options = {}) = 0;
    /// Parses a serialized ModelProto; external data is resolved relative to `baseDir`.
    virtual INetworkPtr CreateNetworkFromBinary(const std::string& bytes, const std::string& baseDir,
                                                const Options& options = {}) = 0;

    /// Graph inputs (initializers excluded) and outputs in graph order, after the last parse.
    virtual const std::vector<BindingPointInfo>& GetInputs() const = 0;
    virtual const std::vector<BindingPointInfo>& GetOutputs() const = 0;
    /// Throws InvalidArgumentException naming the known inputs/outputs if `name` is not one.
    virtual BindingPointInfo GetNetworkInputBindingInfo(const std::string& name) const = 0;
    virtual BindingPointInfo GetNetworkOutputBindingInfo(const std::string& name) const = 0;
    /// Opset of the default ONNX domain of the last parsed model.
    virtual int64_t GetOpsetVersion() const = 0;
};

}  // namespace trellis
