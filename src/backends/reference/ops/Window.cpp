// CpuRef Window (ONNX HannWindow, HammingWindow, BlackmanWindow): computed in double at create
// time and written in any plain output type. With N = size (periodic) or size - 1 (symmetric):
//   Hann      0.5 - 0.5 cos(2 pi n / N)
//   Hamming   25/46 - 21/46 cos(2 pi n / N)
//   Blackman  0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N)
// A symmetric window of one value (N = 0) is 1, as numpy's hanning/hamming/blackman give.
#include "RefConvert.hpp"
#include "RefKernelTable.hpp"
#include "ops/RefMathCommon.hpp"

#include <cmath>
#include <cstring>
#include <numbers>

namespace trellis::ref {

namespace {

double WindowValue(WindowFunction f, double n, double period) {
    if (period == 0.0) return 1.0;
    const double c1 = std::cos(2.0 * std::numbers::pi * n / period);
    switch (f) {
        case WindowFunction::Hann: return 0.5 - 0.5 * c1;
        case WindowFunction::Hamming: return 25.0 / 46.0 - 21.0 / 46.0 * c1;
        case WindowFunction::Blackman: return 0.42 - 0.5 * c1 + 0.08 * std::cos(4.0 * std::numbers::pi * n / period);
    }
    return 0.0;
}

class WindowWorkload final : public IWorkload {
public:
    explicit WindowWorkload(const WindowDescriptor& d) {
        const std::size_t elem = GetDataTypeSize(d.m_DataType);
        const std::size_t size = static_cast<std::size_t>(d.m_Size);
        const double period = static_cast<double>(d.m_Periodic ? d.m_Size : d.m_Size - 1);
        m_Bytes.resize(size * elem);
        for (std::size_t n = 0; n < size; ++n) {
            EncodeScalar(d.m_DataType, WindowValue(d.m_Function, static_cast<double>(n), period), m_Bytes.data() + n * elem);
        }
    }
    void Execute(const WorkloadIo& io) const override {
        if (!m_Bytes.empty()) std::memcpy(io.m_Outputs[0]->Map(), m_Bytes.data(), m_Bytes.size());
    }
private:
    std::vector<unsigned char> m_Bytes;
};

}  // namespace

bool WindowRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    const auto& d = layer.Get<WindowDescriptor>();
    const char* name = GetWindowFunctionName(d.m_Function);
    if (!info.m_InputTensorInfos.empty()) {
        return math::Refuse(reason, std::string(name) + ": size must be folded into the descriptor (got " +
                                        std::to_string(info.m_InputTensorInfos.size()) + " inputs)");
    }
    if (!IsPlainConvertibleType(d.m_DataType)) {
        return math::Refuse(reason, std::string(name) + ": output data type " + GetDataTypeName(d.m_DataType) +
                                        " not supported by CpuRef");
    }
    return true;
}

IWorkloadPtr WindowRefCreate(const QueueDescriptor& layer, const WorkloadInfo&) {
    return std::make_unique<WindowWorkload>(layer.Get<WindowDescriptor>());
}

}  // namespace trellis::ref
