// libFuzzer target: the tensor-file readers of include/trellis/TensorIO.hpp. The bytes are written
// to a file in a private scratch directory and read with LoadTensorFile(): as "tensor.npy" when
// they start with the .npy magic, else as "tensor.pb" (TensorProto; external data is resolved in
// that directory, which holds nothing else). A tensor read back must be consistent: its byte
// count fits 64 bits and equals the data it holds; it is then written again with SaveNpy (where
// the type has a .npy dtype) and SaveTensorProto and read back, and must come back the same.
#include "FuzzCommon.hpp"

#include <trellis/Exceptions.hpp>
#include <trellis/TensorIO.hpp>

#include <cstdint>
#include <cstring>

namespace {

constexpr std::size_t kMaxFileBytes = 1 << 20;

void Check(bool ok) {
    if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    using namespace trellis;
    if (size > kMaxFileBytes) return -1;
    static const std::filesystem::path dir = [] {
        const std::filesystem::path d = fuzz::ScratchDir() / "tensor";
        std::filesystem::create_directories(d);
        return d;
    }();
    const bool npy = size >= 6 && std::memcmp(data, "\x93NUMPY", 6) == 0;
    const std::filesystem::path path = dir / (npy ? "tensor.npy" : "tensor.pb");
    fuzz::WriteBytes(path, data, size);
    OwnedTensor tensor;
    try {
        tensor = LoadTensorFile(path.string());
    } catch (const Exception&) {
        return 0;
    }
    const std::optional<std::size_t> bytes = tensor.m_Info.GetNumBytesChecked();
    Check(bytes.has_value() && *bytes == tensor.m_Data.size());
    for (const bool asNpy : {true, false}) {
        const std::filesystem::path again = dir / (asNpy ? "again.npy" : "again.pb");
        try {
            if (asNpy) SaveNpy(again.string(), tensor);
            else SaveTensorProto(again.string(), tensor);
        } catch (const InvalidArgumentException&) {
            continue;  // a type without a .npy dtype (or an ONNX one): refused by name
        }
        const OwnedTensor back = LoadTensorFile(again.string());  // must not throw: we wrote it
        Check(back.m_Info.GetShape() == tensor.m_Info.GetShape());
        Check(back.m_Info.GetDataType() == tensor.m_Info.GetDataType());
        Check(back.m_Data == tensor.m_Data);
    }
    return 0;
}
