// Arm NN compatibility layer: armnnOnnxParser::IOnnxParser, over Trellis's ONNX importer
// (<trellis/OnnxParser.hpp>: every ONNX op and opset Trellis reads). The network it returns
// wraps the Trellis network; Optimize() and IRuntime take it like any armnn::INetwork. Binding
// ids are the graph inputs' and outputs' positions, as in Arm NN.
//
// Ownership: the parser keeps the binding tables of the last parsed model only.
// Thread-safety: one parser per thread.
// Errors: armnn::ParseException / FileNotFoundException naming the file, node, op and opset.
#pragma once

#include <armnn/INetwork.hpp>
#include <armnn/Tensor.hpp>
#include <armnn/Types.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace armnnOnnxParser {

using BindingPointInfo = armnn::BindingPointInfo;

class IOnnxParser;
using IOnnxParserPtr = std::unique_ptr<IOnnxParser, void (*)(IOnnxParser*)>;

namespace detail {
struct OnnxParserImpl;
}  // namespace detail

class IOnnxParser {
public:
    static IOnnxParser* CreateRaw();
    static IOnnxParserPtr Create();
    static void Destroy(IOnnxParser* parser);

    armnn::INetworkPtr CreateNetworkFromBinaryFile(const char* graphFile);
    /// `inputShapes` pins the shapes of inputs by name (symbolic dims included).
    armnn::INetworkPtr CreateNetworkFromBinaryFile(const char* graphFile,
                                                   const std::map<std::string, armnn::TensorShape>& inputShapes);
    armnn::INetworkPtr CreateNetworkFromBinary(const std::vector<uint8_t>& binaryContent);
    armnn::INetworkPtr CreateNetworkFromBinary(const std::vector<uint8_t>& binaryContent,
                                               const std::map<std::string, armnn::TensorShape>& inputShapes);
    /// A model in protobuf text format, from a file or a string.
    armnn::INetworkPtr CreateNetworkFromTextFile(const char* graphFile);
    armnn::INetworkPtr CreateNetworkFromTextFile(const char* graphFile,
                                                 const std::map<std::string, armnn::TensorShape>& inputShapes);
    armnn::INetworkPtr CreateNetworkFromString(const std::string& protoText);
    armnn::INetworkPtr CreateNetworkFromString(const std::string& protoText,
                                               const std::map<std::string, armnn::TensorShape>& inputShapes);

    /// Throws armnn::InvalidArgumentException naming the known inputs/outputs for an unknown name.
    BindingPointInfo GetNetworkInputBindingInfo(const std::string& name) const;
    BindingPointInfo GetNetworkOutputBindingInfo(const std::string& name) const;

    ~IOnnxParser();
    IOnnxParser(const IOnnxParser&) = delete;
    IOnnxParser& operator=(const IOnnxParser&) = delete;

private:
    IOnnxParser();
    std::unique_ptr<detail::OnnxParserImpl> pOnnxParserImpl;
};

}  // namespace armnnOnnxParser
