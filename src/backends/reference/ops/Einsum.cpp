// CpuRef Einsum: Float32 and Float64, any number of inputs. The core resolved the equation to
// its explicit form ("bij,bjk->bik": one letter per dim, no ellipsis, output given).
//
// Every label gets a size (the largest of its dims; a dim of 1 broadcasts) and, per input, a
// stride: the sum of the input's strides of the dims it labels (so a repeated label walks the
// diagonal), 0 where the input lacks it or broadcasts it. One odometer then runs over all labels,
// output labels first; each step adds the product of the inputs' elements to the output
// element, accumulated in double in scratch. The work is the product of all label sizes: the
// plain definition, fine for a reference.
#include "RefKernelTable.hpp"
#include "ops/RefMathCommon.hpp"

#include <algorithm>
#include <map>
#include <vector>

namespace trellis::ref {

namespace {

template <typename T>
class EinsumWorkload final : public IWorkload {
public:
    EinsumWorkload(const std::string& equation, const std::vector<TensorInfo>& inputs) {
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
        m_Sizes.clear();
        for (char c : labels) m_Sizes.push_back(size[c]);
        m_OutCount = 1;
        for (char c : out) m_OutCount *= size[c];
        m_OutStrides.assign(labels.size(), 0);
        std::size_t s = 1;
        for (std::size_t k = out.size(); k-- > 0;) {
            m_OutStrides[k] = s;
            s *= size[out[k]];
        }
        m_InStrides.assign(terms.size(), std::vector<std::size_t>(labels.size(), 0));
        for (std::size_t i = 0; i < terms.size(); ++i) {
            const std::vector<std::size_t> strides = math::Strides(inputs[i].GetShape());
            for (std::size_t k = 0; k < terms[i].size(); ++k) {
                if (inputs[i].GetShape()[static_cast<unsigned int>(k)] == 1) continue;  // broadcast
                m_InStrides[i][labels.find(terms[i][k])] += strides[k];
            }
        }
        m_Total = 1;
        for (std::size_t v : m_Sizes) m_Total *= v;
    }

    std::size_t GetScratchBytes() const override { return m_OutCount * sizeof(double); }

    void Execute(const WorkloadIo& io) const override {
        double* acc = static_cast<double*>(io.m_Scratch);
        std::fill_n(acc, m_OutCount, 0.0);
        const std::size_t n = m_InStrides.size(), rank = m_Sizes.size();
        std::vector<const T*> in(n);
        for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<const T*>(io.m_Inputs[i]->Map());
        std::vector<std::size_t> pos(rank, 0), off(n, 0);
        std::size_t outOff = 0;
        for (std::size_t step = 0; step < m_Total; ++step) {
            double p = 1.0;
            for (std::size_t i = 0; i < n; ++i) p *= static_cast<double>(in[i][off[i]]);
            acc[outOff] += p;
            for (std::size_t k = rank; k-- > 0;) {  // odometer: the last label varies fastest
                outOff += m_OutStrides[k];
                for (std::size_t i = 0; i < n; ++i) off[i] += m_InStrides[i][k];
                if (++pos[k] < m_Sizes[k]) break;
                outOff -= m_OutStrides[k] * m_Sizes[k];
                for (std::size_t i = 0; i < n; ++i) off[i] -= m_InStrides[i][k] * m_Sizes[k];
                pos[k] = 0;
            }
        }
        T* y = static_cast<T*>(io.m_Outputs[0]->Map());
        for (std::size_t o = 0; o < m_OutCount; ++o) y[o] = static_cast<T>(acc[o]);
    }

private:
    std::vector<std::size_t> m_Sizes;                    // per label, loop order
    std::vector<std::size_t> m_OutStrides;               // per label (0 for summed ones)
    std::vector<std::vector<std::size_t>> m_InStrides;   // per input, per label
    std::size_t m_OutCount = 1, m_Total = 1;
};

}  // namespace

bool EinsumRefSupport(const QueueDescriptor& layer, const WorkloadInfo& info, std::string* reason) {
    const DataType t = info.m_OutputTensorInfos[0].GetDataType();
    if (t != DataType::Float32 && t != DataType::Float64) {
        return math::Refuse(reason, std::string("Einsum: data type ") + GetDataTypeName(t) +
                                        " not supported by CpuRef (Float32, Float64)");
    }
    if (layer.Get<EinsumDescriptor>().m_Equation.find("->") == std::string::npos) {
        return math::Refuse(reason, "Einsum: the equation is not resolved to its explicit form");
    }
    return true;
}

IWorkloadPtr EinsumRefCreate(const QueueDescriptor& layer, const WorkloadInfo& info) {
    const std::string& eq = layer.Get<EinsumDescriptor>().m_Equation;
    if (info.m_OutputTensorInfos[0].GetDataType() == DataType::Float64) {
        return std::make_unique<EinsumWorkload<double>>(eq, info.m_InputTensorInfos);
    }
    return std::make_unique<EinsumWorkload<float>>(eq, info.m_InputTensorInfos);
}

}  // namespace trellis::ref
