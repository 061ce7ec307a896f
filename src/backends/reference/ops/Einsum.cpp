// CpuRef Einsum: Float32 and Float64, and Float16 / BFloat16 widened exactly to double (each result
// rounded once), any number of inputs. The core resolved the equation to
// its explicit form ("bij,bjk->bik": one letter per dim, no ellipsis, output given).
//
// Every label gets a size (the largest of its dims; a dim of 1 broadcasts) and, per input, a
// stride: the sum of the input's strides of the dims it labels (so a repeated label walks the
// diagonal), 0 where the input lacks it or broadcasts it. One odometer then runs over all labels,
// output labels first; each step adds the product of the inputs' elements to the output
// element, accumulated in double in scratch. The work is the product of all label sizes: the
// plain definition, fine for a reference.
#include "RefKernelParams.hpp"
#include "RefKernelTable.hpp"
#include "kernels/Einsum.hpp"
#include "ops/RefFloatIo.hpp"
#include "ops/RefMathCommon.hpp"

#include <algorithm>
#include <map>
#include <vector>

namespace trellis::ref {

namespace {

template <typename T>
class EinsumWorkload final : public IWorkload {
public:
    explicit EinsumWorkload(kernels::EinsumParams p) : m_P(std::move(p)) {}
    std::size_t GetScratchBytes() const override { return kernels::EinsumWorkspaceBytes(m_P); }
    void Execute(const WorkloadIo& io) const override {
        std::vector<const T*> in;
        for (ITensorHandle* h : io.m_Inputs) in.push_back(static_cast<const T*>(h->Map()));
        kernels::Einsum<T>(m_P, in.data(), static_cast<T*>(io.m_Outputs[0]->Map()), io.m_Scratch);
    }
private:
    const kernels::EinsumParams m_P;
};

// Float16 / BFloat16 through the double kernel.
class HalfEinsumWorkload final : public IWorkload {
public:
    HalfEinsumWorkload(kernels::EinsumParams p, DataType type, std::vector<std::size_t> inCounts)
        : m_P(std::move(p)), m_Type(type), m_InCounts(std::move(inCounts)) {}
    std::size_t GetScratchBytes() const override { return kernels::EinsumWorkspaceBytes(m_P); }
    void Execute(const WorkloadIo& io) const override {
        std::vector<std::vector<double>> values;
        std::vector<const double*> in;
        for (std::size_t i = 0; i < io.m_Inputs.size(); ++i) values.push_back(floatio::Read(m_Type, io.m_Inputs[i]->Map(), m_InCounts[i]));
        for (const auto& v : values) in.push_back(v.data());
        std::vector<double> y(m_P.outCount);
        kernels::Einsum<double>(m_P, in.data(), y.data(), io.m_Scratch);
        floatio::WriteAll(m_Type, y, io.m_Outputs[0]->Map());
    }
private:
    const kernels::EinsumParams m_P;
    const DataType m_Type;
    const std::vector<std::size_t> m_InCounts;
};

}  // namespace

bool EinsumRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    const DataType t = info.m_OutputTensorInfos[0].GetDataType();
    if (!floatio::IsFloatType(t)) {
        return math::Refuse(reason, std::string("Einsum: data type ") + GetDataTypeName(t) +
                                        " not supported by CpuRef (Float32, Float64, Float16, BFloat16)");
    }
    if (layer.Get<EinsumDescriptor>().m_Equation.find("->") == std::string::npos) {
        return math::Refuse(reason, "Einsum: the equation is not resolved to its explicit form");
    }
    return true;
}

kernels::EinsumParams EinsumRefParams(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const std::string& equation = layer.Get<EinsumDescriptor>().m_Equation;
    const std::vector<TensorInfo>& inputs = info.m_InputTensorInfos;
    kernels::EinsumParams p;
        const std::size_t arrow = equation.find("->");
        std::vector<std::string> terms;
        for (std::size_t start = 0;;) {
            const std::size_t comma = equation.find(',', start);
            const std::size_t end = std::min(comma, arrow);
            terms.push_back(equation.substr(start, end - start));
            if (comma == std::string::npos || comma > arrow) break;
            start = comma + 1;
        }
        const std::string out = equation.substr(arrow + 2);
        std::map<char, std::size_t> size;
        for (std::size_t i = 0; i < terms.size(); ++i) {
            for (std::size_t k = 0; k < terms[i].size(); ++k) {
                std::size_t& s = size[terms[i][k]];
                s = std::max<std::size_t>(s, inputs[i].GetShape()[static_cast<unsigned int>(k)]);
            }
        }
        // Labels in loop order: the output's, then the summed ones.
        std::string labels = out;
        for (const auto& [c, s] : size) {
            if (out.find(c) == std::string::npos) labels += c;
        }
        p.sizes.clear();
        for (char c : labels) p.sizes.push_back(size[c]);
        p.outCount = 1;
        for (char c : out) p.outCount *= size[c];
        p.outStrides.assign(labels.size(), 0);
        std::size_t s = 1;
        for (std::size_t k = out.size(); k-- > 0;) {
            p.outStrides[k] = s;
            s *= size[out[k]];
        }
        p.inStrides.assign(terms.size(), std::vector<std::size_t>(labels.size(), 0));
        for (std::size_t i = 0; i < terms.size(); ++i) {
            const std::vector<std::size_t> strides = math::Strides(inputs[i].GetShape());
            for (std::size_t k = 0; k < terms[i].size(); ++k) {
                if (inputs[i].GetShape()[static_cast<unsigned int>(k)] == 1) continue;  // broadcast
                p.inStrides[i][labels.find(terms[i][k])] += strides[k];
            }
        }
        p.total = 1;
        for (std::size_t v : p.sizes) p.total *= v;
        return p;
}

IWorkloadPtr EinsumRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const DataType t = info.m_OutputTensorInfos[0].GetDataType();
    if (t == DataType::Float64) return std::make_unique<EinsumWorkload<double>>(EinsumRefParams(layer, info));
    if (floatio::IsHalfType(t)) {
        std::vector<std::size_t> counts;
        for (const TensorInfo& i : info.m_InputTensorInfos) counts.push_back(i.GetNumElements());
        return std::make_unique<HalfEinsumWorkload>(EinsumRefParams(layer, info), t, std::move(counts));
    }
    return std::make_unique<EinsumWorkload<float>>(EinsumRefParams(layer, info));
}

}  // namespace trellis::ref
