// CpuRef Debug: writes its input tensor to "<folder>/<stem>.npy" (NumPy format 1.0) and/or hands it
// to the debug callback every time it runs. Concurrent executions of the same network serialize
// on the workload's file lock (the last one wins); the callback is called concurrently.
#include "RefKernelTable.hpp"

#include <trellis/Exceptions.hpp>

#include <filesystem>
#include <fstream>
#include <mutex>

namespace trellis::ref {

namespace {

const char* NpyDescr(DataType t) {
    switch (t) {
        case DataType::Float32: return "<f4";
        case DataType::Float16: return "<f2";
        case DataType::Float64: return "<f8";
        case DataType::Signed32: return "<i4";
        case DataType::Signed64: return "<i8";
        case DataType::Boolean: return "|b1";
        case DataType::UInt8: return "|u1";
        case DataType::QAsymmU8: return "|u1";
        case DataType::QAsymmS8:
        case DataType::QSymmS8: return "|i1";
        case DataType::QSymmS16: return "<i2";
        case DataType::BFloat16: return "<u2";  // raw bits: numpy has no bfloat16
        case DataType::Signed8: return "|i1";
        case DataType::Signed16: return "<i2";
        case DataType::UInt16: return "<u2";
        case DataType::UInt32: return "<u4";
        case DataType::UInt64: return "<u8";
        case DataType::Float8E4M3FN: case DataType::Float8E4M3FNUZ: case DataType::Float8E5M2:
        case DataType::Float8E5M2FNUZ: case DataType::Float8E8M0: case DataType::Int4: case DataType::UInt4:
        case DataType::Float4E2M1: case DataType::Int2: case DataType::UInt2:
            return "|u1";  // the one-byte codes (backends/SmallTypes.hpp): numpy has no such types
    }
    return nullptr;
}

class DebugWorkload final : public IWorkload {
public:
    DebugWorkload(std::string path, TensorInfo info, DebugDescriptor desc)
        : m_Path(std::move(path)), m_Info(std::move(info)), m_Desc(std::move(desc)) {}
    void Execute(const WorkloadIo& io) const override {
        if (!m_Path.empty()) WriteNpy(io.m_Inputs[0]->Map());
        if (m_Desc.m_Callback) (*m_Desc.m_Callback)(DebugTensorEvent{m_Desc.m_Source, ConstTensor(m_Info, io.m_Inputs[0]->Map())});
    }
private:
    void WriteNpy(const void* data) const {
        std::string shape = "(";
        for (unsigned int d : m_Info.GetShape().GetDims()) shape += std::to_string(d) + ",";
        if (m_Info.GetNumDimensions() > 1) shape.pop_back();
        shape += ")";
        std::string header = std::string("{'descr': '") + NpyDescr(m_Info.GetDataType()) +
                             "', 'fortran_order': False, 'shape': " + shape + ", }";
        // Pad so that magic (6) + version (2) + length (2) + header + '\n' is a multiple of 64.
        while ((10 + header.size() + 1) % 64 != 0) header += ' ';
        header += '\n';
        std::lock_guard<std::mutex> lock(m_FileMutex);
        std::ofstream f(m_Path, std::ios::binary | std::ios::trunc);
        if (!f) throw RuntimeException("Debug: cannot write " + m_Path);
        const unsigned char preamble[8] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
        f.write(reinterpret_cast<const char*>(preamble), 8);
        const uint16_t len = static_cast<uint16_t>(header.size());
        const unsigned char lenBytes[2] = {static_cast<unsigned char>(len & 0xff), static_cast<unsigned char>(len >> 8)};
        f.write(reinterpret_cast<const char*>(lenBytes), 2);
        f.write(header.data(), static_cast<std::streamsize>(header.size()));
        f.write(static_cast<const char*>(data), static_cast<std::streamsize>(m_Info.GetNumBytes()));
        if (!f) throw RuntimeException("Debug: writing " + m_Path + " failed");
    }
    std::string m_Path;
    TensorInfo m_Info;
    DebugDescriptor m_Desc;
    mutable std::mutex m_FileMutex;  // serializes concurrent writers of this one file
};

}  // namespace

bool DebugRefSupport(const QueueDescriptor&, const WorkloadInfo& info, std::string* reason) {
    if (info.m_InputTensorInfos.size() != 1) {
        if (reason) *reason = "Debug: needs exactly one input";
        return false;
    }
    return true;
}

IWorkloadPtr DebugRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const auto& d = layer.Get<DebugDescriptor>();
    std::string path;
    if (!d.m_Folder.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(d.m_Folder, ec);
        if (ec || !std::filesystem::is_directory(d.m_Folder)) {
            throw RuntimeException("Debug '" + layer.m_LayerName + "': cannot create the folder " + d.m_Folder);
        }
        path = (std::filesystem::path(d.m_Folder) / (d.m_FileStem + ".npy")).string();
    }
    return std::make_unique<DebugWorkload>(std::move(path), info.m_InputTensorInfos[0], d);
}

}  // namespace trellis::ref
