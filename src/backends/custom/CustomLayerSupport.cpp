// Custom: layer support (see CustomLayerSupport.hpp).
#include "CustomLayerSupport.hpp"

#include "CustomPreCompiledObject.hpp"

namespace trellis::custom {

namespace {

bool Refuse(std::string* reason, const std::string& why) {
    if (reason) *reason = why;
    return false;
}

bool CheckArity(const char* op, const WorkloadInfo& info, std::size_t inputs, std::size_t outputs, std::string* reason) {
    if (info.m_InputTensorInfos.size() != inputs || info.m_OutputTensorInfos.size() != outputs) {
        return Refuse(reason, std::string(op) + ": Custom expects " + std::to_string(inputs) + " inputs and " +
                                  std::to_string(outputs) + " outputs, the layer has " +
                                  std::to_string(info.m_InputTensorInfos.size()) + " and " +
                                  std::to_string(info.m_OutputTensorInfos.size()));
    }
    return true;
}

bool IsPreCompiledSupported(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    const auto* d = layer.m_Descriptor ? std::get_if<PreCompiledDescriptor>(layer.m_Descriptor) : nullptr;
    if (!d || !CustomPreCompiledObject::IsCustomObject(d->m_PreCompiledObject.get())) {
        return Refuse(reason, "PreCompiled: the layer's object was not created by the Custom backend");
    }
    if (!CheckArity("PreCompiled", info, 2, 1, reason)) return false;
    const auto* object = static_cast<const CustomPreCompiledObject*>(d->m_PreCompiledObject.get());
    for (unsigned int i = 0; i < 2; ++i) {
        if (info.m_InputTensorInfos[i] != object->GetInputInfo(i)) {
            return Refuse(reason, "PreCompiled: input " + std::to_string(i) + " is " + info.m_InputTensorInfos[i].ToString() +
                                      " but the object was compiled for " + object->GetInputInfo(i).ToString());
        }
    }
    if (info.m_OutputTensorInfos[0] != object->GetOutputInfo()) {
        return Refuse(reason, "PreCompiled: the output is " + info.m_OutputTensorInfos[0].ToString() +
                                  " but the object was compiled for " + object->GetOutputInfo().ToString());
    }
    return true;
}

}  // namespace

bool CustomLayerSupport::IsLayerSupported(const QueueDescriptor& layer, const WorkloadInfo& info,
                                          std::string* reason) const {
    switch (layer.m_Type) {
        case LayerType::ElementwiseBinary: {
            const auto* d = layer.m_Descriptor ? std::get_if<ElementwiseBinaryDescriptor>(layer.m_Descriptor) : nullptr;
            if (!d) return Refuse(reason, "ElementwiseBinary: the layer has no ElementwiseBinary descriptor");
            if (d->m_Operation != BinaryOperation::Add) {
                return Refuse(reason, std::string(GetBinaryOperationName(d->m_Operation)) +
                                          ": Custom runs Add only among the elementwise binary ops");
            }
            if (!CheckArity("Add", info, 2, 1, reason)) return false;
            return IsAdditionSupported(info.m_InputTensorInfos[0], info.m_InputTensorInfos[1], info.m_OutputTensorInfos[0],
                                       reason);
        }
        case LayerType::PreCompiled: return IsPreCompiledSupported(layer, info, reason);
        case LayerType::MemCopy: {
            if (!CheckArity("MemCopy", info, 1, 1, reason)) return false;
            const TensorInfo& in = info.m_InputTensorInfos[0];
            const TensorInfo& out = info.m_OutputTensorInfos[0];
            if (in.GetNumBytes() != out.GetNumBytes()) {
                return Refuse(reason, "MemCopy: input " + in.ToString() + " and output " + out.ToString() +
                                          " differ in size");
            }
            return true;
        }
        default:
            return Refuse(reason, std::string(GetLayerTypeName(layer.m_Type)) +
                                      ": not supported by Custom (it runs additions, its PreCompiled layers and MemCopy)");
    }
}

}  // namespace trellis::custom
