// The Arm NN compatibility layer's armnnOnnxParser::IOnnxParser, over Trellis's ONNX importer.
#include "armnncompat/ArmnnNetwork.hpp"
#include "importers/onnx/OnnxProto.hpp"

#include <armnnOnnxParser/IOnnxParser.hpp>
#include <trellis/OnnxParser.hpp>

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace armnnOnnxParser {

namespace detail {
struct OnnxParserImpl {
    trellis::IOnnxParserPtr m_Parser = trellis::IOnnxParser::Create();

    armnn::INetworkPtr Wrap(trellis::INetworkPtr network) {
        armnn::INetworkPtr net = armnn::detail::NetworkAccess::Wrap(std::move(network));
        auto& impl = armnn::detail::NetworkAccess::Impl(*net);
        impl.m_ParsedInputs = m_Parser->GetInputs().size();
        impl.m_ParsedOutputs = m_Parser->GetOutputs().size();
        return net;
    }
    static trellis::IOnnxParser::Options Options(const std::map<std::string, armnn::TensorShape>& inputShapes) {
        trellis::IOnnxParser::Options o;
        o.m_InputShapes = inputShapes;
        return o;
    }
    /// A text-format ModelProto as the binary form the importer reads.
    static std::string TextToBinary(const std::string& text, const std::string& what) {
        // Errors go into the exception, not to protobuf's log on standard error.
        struct Collector : google::protobuf::io::ErrorCollector {
            std::string m_First;
            void AddError(int line, google::protobuf::io::ColumnNumber column, const std::string& message) override {
                if (m_First.empty())
                    m_First = "line " + std::to_string(line + 1) + ", column " + std::to_string(column + 1) + ": " + message;
            }
        } collector;
        google::protobuf::TextFormat::Parser parser;
        parser.RecordErrorsTo(&collector);
        onnx::ModelProto model;
        if (!parser.ParseFromString(text, &model))
            throw armnn::ParseException(what + ": not a valid ONNX model in protobuf text format (" +
                                        (collector.m_First.empty() ? std::string("no detail") : collector.m_First) + ")");
        std::string bytes;
        if (!model.SerializeToString(&bytes)) throw armnn::ParseException(what + ": the model could not be serialized");
        return bytes;
    }
};
}  // namespace detail

IOnnxParser::IOnnxParser() : pOnnxParserImpl(std::make_unique<detail::OnnxParserImpl>()) {}
IOnnxParser::~IOnnxParser() = default;
IOnnxParser* IOnnxParser::CreateRaw() { return new IOnnxParser(); }
IOnnxParserPtr IOnnxParser::Create() { return IOnnxParserPtr(CreateRaw(), &IOnnxParser::Destroy); }
void IOnnxParser::Destroy(IOnnxParser* parser) { delete parser; }

armnn::INetworkPtr IOnnxParser::CreateNetworkFromBinaryFile(const char* graphFile) {
    return CreateNetworkFromBinaryFile(graphFile, {});
}
armnn::INetworkPtr IOnnxParser::CreateNetworkFromBinaryFile(const char* graphFile,
                                                            const std::map<std::string, armnn::TensorShape>& inputShapes) {
    if (!graphFile) throw armnn::InvalidArgumentException("IOnnxParser::CreateNetworkFromBinaryFile: the file name is null");
    auto& p = *pOnnxParserImpl;
    return p.Wrap(p.m_Parser->CreateNetworkFromBinaryFile(graphFile, detail::OnnxParserImpl::Options(inputShapes)));
}
armnn::INetworkPtr IOnnxParser::CreateNetworkFromBinary(const std::vector<uint8_t>& binaryContent) {
    return CreateNetworkFromBinary(binaryContent, {});
}
armnn::INetworkPtr IOnnxParser::CreateNetworkFromBinary(const std::vector<uint8_t>& binaryContent,
                                                        const std::map<std::string, armnn::TensorShape>& inputShapes) {
    auto& p = *pOnnxParserImpl;
    const std::string bytes(binaryContent.begin(), binaryContent.end());
    return p.Wrap(p.m_Parser->CreateNetworkFromBinary(bytes, ".", detail::OnnxParserImpl::Options(inputShapes)));
}
armnn::INetworkPtr IOnnxParser::CreateNetworkFromTextFile(const char* graphFile) {
    return CreateNetworkFromTextFile(graphFile, {});
}
armnn::INetworkPtr IOnnxParser::CreateNetworkFromTextFile(const char* graphFile,
                                                          const std::map<std::string, armnn::TensorShape>& inputShapes) {
    if (!graphFile) throw armnn::InvalidArgumentException("IOnnxParser::CreateNetworkFromTextFile: the file name is null");
    std::ifstream in(graphFile, std::ios::binary);
    if (!in) throw armnn::FileNotFoundException(std::string("IOnnxParser: cannot open '") + graphFile + "'");
    std::ostringstream text;
    text << in.rdbuf();
    const std::string bytes = detail::OnnxParserImpl::TextToBinary(text.str(), std::string("'") + graphFile + "'");
    const std::string dir = std::filesystem::path(graphFile).parent_path().string();
    auto& p = *pOnnxParserImpl;
    return p.Wrap(p.m_Parser->CreateNetworkFromBinary(bytes, dir.empty() ? "." : dir,
                                                      detail::OnnxParserImpl::Options(inputShapes)));
}
armnn::INetworkPtr IOnnxParser::CreateNetworkFromString(const std::string& protoText) {
    return CreateNetworkFromString(protoText, {});
}
armnn::INetworkPtr IOnnxParser::CreateNetworkFromString(const std::string& protoText,
                                                        const std::map<std::string, armnn::TensorShape>& inputShapes) {
    const std::string bytes = detail::OnnxParserImpl::TextToBinary(protoText, "IOnnxParser::CreateNetworkFromString");
    auto& p = *pOnnxParserImpl;
    return p.Wrap(p.m_Parser->CreateNetworkFromBinary(bytes, ".", detail::OnnxParserImpl::Options(inputShapes)));
}

BindingPointInfo IOnnxParser::GetNetworkInputBindingInfo(const std::string& name) const {
    const trellis::BindingPointInfo b = pOnnxParserImpl->m_Parser->GetNetworkInputBindingInfo(name);
    return {b.m_BindingId, b.m_TensorInfo};
}
BindingPointInfo IOnnxParser::GetNetworkOutputBindingInfo(const std::string& name) const {
    const trellis::BindingPointInfo b = pOnnxParserImpl->m_Parser->GetNetworkOutputBindingInfo(name);
    return {b.m_BindingId, b.m_TensorInfo};
}

}  // namespace armnnOnnxParser
