// Trellis application API: finding where backends diverge from the reference.
//
// CompareBackends() runs one network twice - optimized for the candidate backends and for the
// reference backend - with the same inputs, observes every tensor both runs compute (each layer's
// outputs and every constant the optimizer folded) and compares them tensor by tensor, in the
// reference's execution order. The first tensor that differs beyond the tolerance is where a
// wrong answer starts: its producing layer, backend, fused region and inputs are reported.
//
// What can be observed: the reference (CpuRef) runs every layer on its own, so all its tensors are
// seen. A candidate backend that fuses a run of layers into one region (OptimizeSubgraph
// substitution) exposes only the region's outputs; tensors inside it are reported as not observed,
// naming the region. Each region output is matched to the original layer output it stands for.
//
// Ownership: the caller owns the network and the input memory; nothing is kept after the call.
// Thread-safety: reentrant (each call creates its own runtime).
#pragma once

#include <trellis/IRuntime.hpp>
#include <trellis/INetwork.hpp>
#include <trellis/Types.hpp>

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace trellis {

struct CompareOptions {
    /// Candidate backends, in order of preference (as for Optimize()).
    std::vector<BackendId> m_Backends;
    /// The backend whose values are taken as right.
    BackendId m_Reference = "CpuRef";
    /// Backend options of the candidate run (e.g. {"CpuAcc", {{"Winograd", "off"}}}).
    std::map<BackendId, std::map<std::string, std::string>> m_BackendOptions;
    /// Dynamic-backend directory of the runtimes (empty: the built-in paths).
    std::string m_DynamicBackendsPath;
    /// Optimizer options of both runs (m_Debug and its fields are set by CompareBackends()).
    OptimizerOptions m_OptimizerOptions;
    /// A float tensor differs when some element has |candidate - reference| > m_AbsTolerance +
    /// m_RelTolerance * |reference|, or when NaN/infinity appear in one but not the other.
    /// Integer and Boolean tensors must be equal.
    double m_RelTolerance = 1e-4;
    double m_AbsTolerance = 1e-5;
};

/// Summary statistics of one tensor's values (floats; integers converted).
struct TensorStatistics {
    double m_Min = 0.0;
    double m_Max = 0.0;
    double m_Mean = 0.0;
    double m_StdDev = 0.0;
    std::size_t m_NaNs = 0;
    std::size_t m_Infinities = 0;
};

/// One tensor of the reference run, compared with the candidate's.
struct TensorComparison {
    std::string m_Tensor;         ///< "<layer>:<output>", as the network was built
    std::string m_LayerName;
    unsigned int m_OutputIndex = 0;
    std::string m_OpDetail;       ///< the reference layer's op ("Conv", "Div", "Constant (folded)")
    TensorInfo m_Info;
    std::vector<std::string> m_Inputs;  ///< the tensors the reference layer read ("<layer>:<output>")
    /// Where the candidate computed it: the producing layer (a region for fused layers), its
    /// backend and op, and the layers that region replaced.
    bool m_Observed = false;      ///< false: the tensor lives inside a candidate region
    std::string m_CandidateLayer;
    BackendId m_CandidateBackend;
    std::string m_CandidateOpDetail;
    std::vector<std::string> m_CandidateRegionLayers;
    /// Valid when m_Observed.
    TensorStatistics m_Reference;
    TensorStatistics m_Candidate;
    double m_MaxAbsError = 0.0;
    std::size_t m_MaxErrorIndex = 0;     ///< flat index of the largest error
    double m_RelativeL2Error = 0.0;      ///< ||c - r|| / ||r|| (||c - r|| when ||r|| = 0)
    std::size_t m_ElementsOutOfTolerance = 0;
    bool m_Differs = false;
};

struct CompareResult {
    /// Every tensor of the reference run, in its execution order (folded constants first).
    std::vector<TensorComparison> m_Tensors;
    /// Index into m_Tensors of the first observed tensor that differs; -1 when none does.
    long m_FirstDivergence = -1;
    /// Placement summaries of both runs ("40 on CpuAcc, 12 on CpuRef").
    std::map<BackendId, unsigned int> m_CandidateLayerCounts;
    std::size_t m_ObservedTensors = 0;
    /// The candidate runtime's backend option warnings (IRuntime::GetBackendOptionWarnings()).
    std::vector<std::string> m_Warnings;
};

/// Runs `network` on the candidate backends and on the reference with `inputs` (every input
/// binding, as for EnqueueWorkload) and compares every tensor. Throws like Optimize(),
/// LoadNetwork() and EnqueueWorkload() do, and InvalidArgumentException for bad options.
CompareResult CompareBackends(const INetwork& network, const InputTensors& inputs, const CompareOptions& options);

/// The report of one comparison as text: statistics of both values, the error, the producing
/// layer/backend/region and its inputs (several lines, each indented by `indent`).
std::string DescribeTensorComparison(const TensorComparison& comparison, const std::string& indent = "");

}  // namespace trellis
