// `trellis compare`: where do the chosen backends start to differ from the reference?
#include "Commands.hpp"
#include "Common.hpp"
#include "Tensors.hpp"

#include <trellis/Compare.hpp>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace trellis::cli {

std::string CompareHelp() {
    return std::string() +
           "Usage: trellis compare MODEL [options]\n"
           "\n"
           "Run a model on the chosen backends and on the reference backend with the same\n"
           "inputs, compare every tensor both compute (each layer's outputs and every\n"
           "constant the optimizer folded) in the reference's execution order, and report\n"
           "the first one that differs beyond the tolerance: both values' statistics, the\n"
           "error, the layer, its backend, the fused region it belongs to and its inputs.\n"
           "\n"
           "Options:\n"
           "  --backends LIST        Candidate backends in order of preference (default:\n"
           "                         CpuAcc,CpuRef where CpuAcc is built in, otherwise\n"
           "                         CpuRef).\n"
           "  --reference ID         The backend taken as right (default: CpuRef).\n"
           "  --input NAME=FILE      Feed graph input NAME from FILE (.pb or .npy).\n"
           "                         Repeatable.\n"
           "  --input-dir DIR        Feed graph input i from DIR/input_<i>.pb where that\n"
           "                         file exists.\n"
           TRELLIS_CLI_SHAPE_HELP
           "  --seed N               Seed of the random data for inputs not given\n"
           "                         (default: 0).\n"
           "  --rtol X               Relative tolerance (default: 1e-4).\n"
           "  --atol X               Absolute tolerance (default: 1e-5). A float element\n"
           "                         differs when |candidate - reference| > atol + rtol *\n"
           "                         |reference| or NaN/inf appear in one only; integer\n"
           "                         and boolean tensors must be equal.\n"
           "  --all                  Print every tensor's error, not just the first\n"
           "                         divergence.\n"
           "  --threads N            Backend option NumThreads of every candidate backend.\n"
           "  --backend-option BACKEND:NAME=VALUE\n"
           "                         Backend option of the candidate run (e.g.\n"
           "                         CpuAcc:Winograd=off). Repeatable.\n"
           TRELLIS_CLI_DYNAMIC_BACKENDS_PATH_HELP
           TRELLIS_CLI_RESOURCE_LIMITS_HELP
           "  -h, --help             Show this help.\n"
           "\n"
           "A backend that fuses layers into one region exposes only the region's outputs:\n"
           "tensors inside it are listed as not observed, naming the region, and a\n"
           "divergence is reported at the region output it first reaches.\n"
           "\n"
           "Exit status: 0 when every observed tensor is within tolerance, 1 when one\n"
           "differs (no 'error:' line: the report says which), 1 with an 'error:' line\n"
           "when the model cannot be run, 2 on a usage error.\n";
}

namespace {

std::vector<OptionSpec> CompareOptionSpecs() {
    std::vector<OptionSpec> specs = ModelOptionSpecs();
    specs.push_back({"reference", true, false});
    specs.push_back({"input", true, true});
    specs.push_back({"input-dir", true, false});
    specs.push_back({"seed", true, false});
    specs.push_back({"rtol", true, false});
    specs.push_back({"atol", true, false});
    specs.push_back({"all", false, false});
    for (const OptionSpec& spec : BackendTuningOptionSpecs()) specs.push_back(spec);
    return specs;
}

double ReadTolerance(const ParsedArgs& args, const std::string& name, double fallback) {
    const auto text = args.Get(name);
    if (!text) return fallback;
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(text->c_str(), &end);
    if (text->empty() || *end != '\0' || errno != 0 || !std::isfinite(v) || v < 0.0) {
        throw UsageError("option '--" + name + "' expects a number >= 0, got '" + *text + "'");
    }
    return v;
}

std::string ShortLine(std::size_t index, const TensorComparison& c) {
    char error[96];
    if (!c.m_Observed) {
        std::snprintf(error, sizeof(error), "%-34s", "not observed");
    } else {
        std::snprintf(error, sizeof(error), "max abs %-10.3g rel L2 %-10.3g %s", c.m_MaxAbsError, c.m_RelativeL2Error,
                      c.m_Differs ? "DIFFERS" : "ok");
    }
    std::string where = c.m_CandidateBackend.IsEmpty() ? std::string("constant") : c.m_CandidateBackend.Get();
    if (!c.m_CandidateRegionLayers.empty()) where += " region '" + c.m_CandidateLayer + "'";
    return "  " + std::to_string(index) + "  " + error + "  " + c.m_Tensor + " (" + c.m_OpDetail + ", " + where + ")\n";
}

}  // namespace

int CompareCommand(const std::vector<std::string>& args) {
    const ParsedArgs parsed = ParseArgs(args, CompareOptionSpecs(), "compare");
    if (parsed.m_Help) {
        std::cout << CompareHelp() << RegisteredBackendsLine();
        return 0;
    }
    ModelOptions candidate = ReadModelOptions(parsed, "compare");
    ReadBackendTuning(parsed, candidate);
    const BackendId reference = parsed.Get("reference").value_or("CpuRef");
    if (reference.IsEmpty()) throw UsageError("option '--reference' expects a backend id, got ''");
    const uint32_t seed = ReadSeed(parsed);
    const InputSources sources = ReadInputSources(parsed);
    CompareOptions options;
    options.m_RelTolerance = ReadTolerance(parsed, "rtol", options.m_RelTolerance);
    options.m_AbsTolerance = ReadTolerance(parsed, "atol", options.m_AbsTolerance);
    const bool all = parsed.Has("all");

    // The model is prepared on the reference (its inputs' infos decide the random data), then
    // compared from the parsed network.
    ModelOptions refOptions = candidate;
    refOptions.m_Backends = {reference};
    refOptions.m_NumThreads = 0;
    refOptions.m_BackendOptions.clear();
    PreparedModel model = PrepareModel(refOptions);
    CheckBackendsRegistered(candidate.m_Backends, *model.m_Runtime);
    CheckInputNames(sources, model.m_Inputs, candidate.m_ModelPath);
    double loadMs = 0.0;
    const NetworkId id = LoadPrepared(model, loadMs);
    const std::vector<OwnedTensor> inputs = GatherInputs(*model.m_Runtime, id, model.m_Inputs, sources, seed, std::cout);
    std::cout << "inputs: " << DescribeInputs(inputs) << "\n";

    options.m_Backends = candidate.m_Backends;
    options.m_Reference = reference;
    options.m_DynamicBackendsPath = candidate.m_DynamicBackendsPath;
    options.m_OptimizerOptions.m_MaxTensorBytes = candidate.m_MaxTensorBytes;
    options.m_OptimizerOptions.m_MaxWorkingMemoryBytes = candidate.m_MaxWorkingMemoryBytes;
    for (const BackendId& b : candidate.m_Backends) {
        if (candidate.m_NumThreads != 0) options.m_BackendOptions[b]["NumThreads"] = std::to_string(candidate.m_NumThreads);
    }
    for (const auto& [b, values] : candidate.m_BackendOptions) {
        for (const auto& [name, value] : values) options.m_BackendOptions[b][name] = value;
    }
    const CompareResult result = CompareBackends(*model.m_Network, BindInputs(model.m_Inputs, inputs), options);

    for (const std::string& w : result.m_Warnings) std::cout << "warning: " << w << "\n";
    std::string candidates;
    for (const BackendId& b : candidate.m_Backends) {
        if (!candidates.empty()) candidates += ',';
        candidates += b.Get();
    }
    std::cout << "compared: " << candidates << " (layers: "
              << (result.m_CandidateLayerCounts.empty() ? std::string("placed per input shape (dynamic network)")
                                                        : FormatLayerCounts(result.m_CandidateLayerCounts, candidate.m_Backends))
              << ") against " << reference.Get() << "; " << result.m_Tensors.size() << " tensors, "
              << result.m_ObservedTensors << " observed in both runs; tolerance rtol " << options.m_RelTolerance << " atol "
              << options.m_AbsTolerance << "\n";
    if (all) {
        std::cout << "tensors (reference execution order):\n";
        for (std::size_t i = 0; i < result.m_Tensors.size(); ++i) std::cout << ShortLine(i, result.m_Tensors[i]);
    }
    if (result.m_FirstDivergence < 0) {
        std::cout << "no divergence: every observed tensor is within tolerance\n";
        return 0;
    }
    const auto first = static_cast<std::size_t>(result.m_FirstDivergence);
    std::cout << "first divergence (tensor " << first << " in execution order):\n"
              << DescribeTensorComparison(result.m_Tensors[first], "  ");
    // Not-observed tensors just before it are candidates for where it really starts.
    std::size_t hidden = 0;
    for (std::size_t i = first; i-- > 0 && !result.m_Tensors[i].m_Observed &&
                                result.m_Tensors[i].m_CandidateLayer == result.m_Tensors[first].m_CandidateLayer;) {
        ++hidden;
    }
    if (hidden) {
        std::cout << "  the " << hidden << " tensor(s) computed just before it inside the same region were not observed\n";
    }
    std::size_t differing = 0;
    for (const TensorComparison& c : result.m_Tensors) differing += c.m_Differs ? 1 : 0;
    std::cout << differing << " of " << result.m_ObservedTensors << " observed tensors differ\n";
    return 1;
}

}  // namespace trellis::cli
