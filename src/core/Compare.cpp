// CompareBackends(): the network run on the candidate backends and on the reference, every tensor
// observed through Debug layers with a callback (OptimizerOptions::m_DebugCallback) and compared.
// Written against the public API, plus the network's graph for its output bindings.
#include "Network.hpp"

#include <trellis/Compare.hpp>
#include <trellis/Exceptions.hpp>
#include <trellis/IRuntime.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>

namespace trellis {

namespace {

struct CapturedTensor {
    DebugTensorSource m_Source;
    TensorInfo m_Info;
    std::vector<uint8_t> m_Bytes;
};

struct CapturedRun {
    std::vector<CapturedTensor> m_Tensors;  // in execution order
    std::map<BackendId, unsigned int> m_LayerCounts;
    std::vector<std::string> m_Warnings;
};

/// Runs `network` once on `backends` with a Debug layer after every tensor, keeping a copy of each.
CapturedRun RunAndCapture(const INetwork& network, const std::vector<BackendId>& backends, const CompareOptions& options,
                          bool candidate, const InputTensors& inputs) {
    IRuntime::CreationOptions creation;
    creation.m_DynamicBackendsPath = options.m_DynamicBackendsPath;
    if (candidate) {
        for (const auto& [id, values] : options.m_BackendOptions) creation.m_BackendOptions[id] = values;
    }
    IRuntimePtr runtime = IRuntime::Create(creation);
    std::vector<std::string> warnings = runtime->GetBackendOptionWarnings();

    struct Sink {
        std::mutex m_Mutex;
        std::vector<CapturedTensor> m_Tensors;
    };
    auto sink = std::make_shared<Sink>();
    OptimizerOptions optimizerOptions = options.m_OptimizerOptions;
    optimizerOptions.m_Debug = true;
    optimizerOptions.m_DebugToFolder.clear();
    optimizerOptions.m_DebugCallback = [sink](const DebugTensorEvent& e) {
        CapturedTensor t{e.m_Source, e.m_Value.GetInfo(), {}};
        const auto* p = static_cast<const uint8_t*>(e.m_Value.GetMemoryArea());
        t.m_Bytes.assign(p, p + e.m_Value.GetNumBytes());
        std::lock_guard<std::mutex> lock(sink->m_Mutex);
        sink->m_Tensors.push_back(std::move(t));
    };
    IOptimizedNetworkPtr optimized = Optimize(network, backends, runtime->GetDeviceSpec(), optimizerOptions);
    CapturedRun run;
    run.m_LayerCounts = optimized->GetBackendLayerCounts();
    // The Debug layers are counted with their backend; they are not the model's.
    for (const LayerPlacement& p : optimized->GetLayerPlacements()) {
        if (p.m_Type == LayerType::Debug && run.m_LayerCounts.count(p.m_Backend) && --run.m_LayerCounts[p.m_Backend] == 0) {
            run.m_LayerCounts.erase(p.m_Backend);
        }
    }
    NetworkId id = 0;
    runtime->LoadNetwork(id, std::move(optimized));

    // Output buffers for every output binding of the network, with this run's shapes.
    const auto* impl = dynamic_cast<const core::NetworkImpl*>(&network);
    if (!impl) throw InvalidArgumentException("CompareBackends: the network was not created by INetwork::Create()");
    std::vector<std::vector<uint8_t>> outputMemory;
    OutputTensors outputs;
    for (const auto& l : impl->GetGraph().Layers()) {
        if (l->GetType() != LayerType::Output) continue;
        const LayerBindingId binding = l->Desc<BindingDescriptor>().m_BindingId;
        const TensorInfo info = runtime->GetOutputTensorInfo(id, binding, inputs);
        outputMemory.emplace_back(std::max<std::size_t>(info.GetNumBytes(), 1));
        outputs.emplace_back(binding, Tensor(info, outputMemory.back().data()));
    }
    if (runtime->EnqueueWorkload(id, inputs, outputs) != Status::Success) {
        throw RuntimeException("CompareBackends: running the network on " + backends.front().Get() + " failed");
    }
    run.m_Tensors = std::move(sink->m_Tensors);
    run.m_Warnings = std::move(warnings);
    return run;
}

double ElementOf(const CapturedTensor& t, std::size_t i) { return GetElementAsDouble(ConstTensor(t.m_Info, t.m_Bytes.data()), i); }

bool IsFloat(DataType t) {
    return t == DataType::Float32 || t == DataType::Float16 || t == DataType::BFloat16 || t == DataType::Float64;
}

TensorStatistics Statistics(const CapturedTensor& t) {
    TensorStatistics s;
    const std::size_t n = t.m_Info.GetNumElements();
    double sum = 0.0, sumSq = 0.0;
    std::size_t finite = 0;
    s.m_Min = std::numeric_limits<double>::infinity();
    s.m_Max = -std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < n; ++i) {
        const double v = ElementOf(t, i);
        if (std::isnan(v)) { ++s.m_NaNs; continue; }
        if (std::isinf(v)) { ++s.m_Infinities; continue; }
        s.m_Min = std::min(s.m_Min, v);
        s.m_Max = std::max(s.m_Max, v);
        sum += v;
        sumSq += v * v;
        ++finite;
    }
    if (finite == 0) {
        s.m_Min = s.m_Max = 0.0;
        return s;
    }
    s.m_Mean = sum / static_cast<double>(finite);
    s.m_StdDev = std::sqrt(std::max(0.0, sumSq / static_cast<double>(finite) - s.m_Mean * s.m_Mean));
    return s;
}

/// Compares one candidate tensor with the reference's; fills the error fields of `c`.
void CompareValues(const CapturedTensor& ref, const CapturedTensor& cand, const CompareOptions& options,
                   TensorComparison& c) {
    c.m_Reference = Statistics(ref);
    c.m_Candidate = Statistics(cand);
    if (ref.m_Info.GetShape() != cand.m_Info.GetShape() ||
        (ref.m_Info.GetDataType() != cand.m_Info.GetDataType() &&
         !(IsFloat(ref.m_Info.GetDataType()) && IsFloat(cand.m_Info.GetDataType())))) {
        c.m_Differs = true;
        c.m_ElementsOutOfTolerance = ref.m_Info.GetNumElements();
        c.m_MaxAbsError = std::numeric_limits<double>::infinity();
        c.m_RelativeL2Error = std::numeric_limits<double>::infinity();
        return;
    }
    const bool exact = !IsFloat(ref.m_Info.GetDataType());
    const std::size_t n = ref.m_Info.GetNumElements();
    double diffSq = 0.0, refSq = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
        const double r = ElementOf(ref, i), v = ElementOf(cand, i);
        double err = 0.0;
        bool bad = false;
        if (std::isnan(r) || std::isnan(v)) {
            bad = std::isnan(r) != std::isnan(v);
            err = bad ? std::numeric_limits<double>::infinity() : 0.0;
        } else if (std::isinf(r) || std::isinf(v)) {
            bad = r != v;
            err = bad ? std::numeric_limits<double>::infinity() : 0.0;
        } else {
            err = std::fabs(v - r);
            bad = exact ? v != r : err > options.m_AbsTolerance + options.m_RelTolerance * std::fabs(r);
            diffSq += err * err;
            refSq += r * r;
        }
        if (bad) ++c.m_ElementsOutOfTolerance;
        if (err > c.m_MaxAbsError || (i == 0 && err == 0.0)) {
            c.m_MaxAbsError = err;
            c.m_MaxErrorIndex = i;
        }
    }
    c.m_RelativeL2Error = refSq > 0.0 ? std::sqrt(diffSq / refSq) : std::sqrt(diffSq);
    c.m_Differs = c.m_ElementsOutOfTolerance > 0;
}

std::string Number(double v) {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%.6g", v);
    return buffer;
}

std::string DescribeStatistics(const TensorStatistics& s) {
    std::string text = "min " + Number(s.m_Min) + " max " + Number(s.m_Max) + " mean " + Number(s.m_Mean) + " std " +
                       Number(s.m_StdDev);
    if (s.m_NaNs) text += ", " + std::to_string(s.m_NaNs) + " NaN";
    if (s.m_Infinities) text += ", " + std::to_string(s.m_Infinities) + " inf";
    return text;
}

std::string IndexOf(const TensorShape& shape, std::size_t flat) {
    std::vector<std::size_t> index(shape.GetNumDimensions());
    for (unsigned int d = shape.GetNumDimensions(); d-- > 0;) {
        if (shape[d] == 0) break;
        index[d] = flat % shape[d];
        flat /= shape[d];
    }
    std::string text = "[";
    for (std::size_t d = 0; d < index.size(); ++d) {
        if (d) text += ',';
        text += std::to_string(index[d]);
    }
    return text + "]";
}

std::string JoinNames(const std::vector<std::string>& names, std::size_t limit = 12) {
    std::string text;
    for (std::size_t i = 0; i < names.size() && i < limit; ++i) {
        if (i) text += ", ";
        text += names[i];
    }
    if (names.size() > limit) text += ", ... (" + std::to_string(names.size()) + " in all)";
    return text;
}

}  // namespace

CompareResult CompareBackends(const INetwork& network, const InputTensors& inputs, const CompareOptions& options) {
    if (options.m_Backends.empty()) throw InvalidArgumentException("CompareBackends: no candidate backends given");
    if (options.m_Reference.IsEmpty()) throw InvalidArgumentException("CompareBackends: no reference backend given");
    if (!(options.m_RelTolerance >= 0.0) || !(options.m_AbsTolerance >= 0.0)) {
        throw InvalidArgumentException("CompareBackends: tolerances must be >= 0 (relative " +
                                       Number(options.m_RelTolerance) + ", absolute " + Number(options.m_AbsTolerance) + ")");
    }
    const CapturedRun ref = RunAndCapture(network, {options.m_Reference}, options, false, inputs);
    const CapturedRun cand = RunAndCapture(network, options.m_Backends, options, true, inputs);

    std::map<std::string, const CapturedTensor*> candByTensor;
    std::map<std::string, const CapturedTensor*> regionOfLayer;  // original layer -> a region output
    for (const CapturedTensor& t : cand.m_Tensors) {
        candByTensor.emplace(t.m_Source.m_Tensor, &t);
        for (const std::string& l : t.m_Source.m_SubstitutedLayers) regionOfLayer.emplace(l, &t);
    }

    CompareResult result;
    result.m_CandidateLayerCounts = cand.m_LayerCounts;
    result.m_Warnings = cand.m_Warnings;
    std::set<std::string> seen;
    for (const CapturedTensor& r : ref.m_Tensors) {
        if (!seen.insert(r.m_Source.m_Tensor).second) continue;
        TensorComparison c;
        c.m_Tensor = r.m_Source.m_Tensor;
        c.m_LayerName = r.m_Source.m_LayerName;
        c.m_OutputIndex = r.m_Source.m_OutputIndex;
        c.m_OpDetail = r.m_Source.m_OpDetail == "Constant" ? "Constant (folded)" : r.m_Source.m_OpDetail;
        c.m_Info = r.m_Info;
        c.m_Inputs = r.m_Source.m_InputTensors;
        const auto it = candByTensor.find(c.m_Tensor);
        const CapturedTensor* producer = it != candByTensor.end() ? it->second : nullptr;
        if (!producer) {
            const auto region = regionOfLayer.find(c.m_LayerName);
            if (region != regionOfLayer.end()) producer = region->second;
        }
        if (producer) {
            c.m_CandidateLayer = producer->m_Source.m_LayerName;
            c.m_CandidateBackend = producer->m_Source.m_Backend;
            c.m_CandidateOpDetail = producer->m_Source.m_OpDetail;
            c.m_CandidateRegionLayers = producer->m_Source.m_SubstitutedLayers;
        }
        if (it != candByTensor.end()) {
            c.m_Observed = true;
            ++result.m_ObservedTensors;
            CompareValues(r, *it->second, options, c);
            if (c.m_Differs && result.m_FirstDivergence < 0) {
                result.m_FirstDivergence = static_cast<long>(result.m_Tensors.size());
            }
        }
        result.m_Tensors.push_back(std::move(c));
    }
    return result;
}

std::string DescribeTensorComparison(const TensorComparison& c, const std::string& indent) {
    std::string text = indent + "tensor '" + c.m_Tensor + "' (" + c.m_OpDetail + " '" + c.m_LayerName + "'), " +
                       c.m_Info.ToString() + "\n";
    if (!c.m_Inputs.empty()) text += indent + "  inputs: " + JoinNames(c.m_Inputs) + "\n";
    std::string where = c.m_CandidateBackend.IsEmpty() ? std::string("constant")
                        : c.m_CandidateOpDetail == "Constant" ? "folded while optimizing, evaluated on " + c.m_CandidateBackend.Get()
                                                              : "on " + c.m_CandidateBackend.Get();
    if (!c.m_CandidateLayer.empty() && c.m_CandidateLayer != c.m_LayerName) {
        where += ", by layer '" + c.m_CandidateLayer + "' (" + c.m_CandidateOpDetail + ")";
    }
    if (!c.m_CandidateRegionLayers.empty()) {
        where += ", a region fused from " + std::to_string(c.m_CandidateRegionLayers.size()) +
                 " layers: " + JoinNames(c.m_CandidateRegionLayers);
    }
    if (!c.m_Observed) {
        text += indent + "  candidate: not observed (" +
                (c.m_CandidateLayer.empty() ? std::string("not computed by the candidate network")
                                            : "inside the region '" + c.m_CandidateLayer + "' " + where) +
                ")\n";
        return text;
    }
    text += indent + "  reference: " + DescribeStatistics(c.m_Reference) + "\n";
    text += indent + "  candidate: " + DescribeStatistics(c.m_Candidate) + " (" + where + ")\n";
    text += indent + "  error: max abs " + Number(c.m_MaxAbsError) + " at " + IndexOf(c.m_Info.GetShape(), c.m_MaxErrorIndex) +
            ", relative L2 " + Number(c.m_RelativeL2Error) + ", " + std::to_string(c.m_ElementsOutOfTolerance) + " of " +
            std::to_string(c.m_Info.GetNumElements()) + " elements out of tolerance\n";
    return text;
}

}  // namespace trellis
