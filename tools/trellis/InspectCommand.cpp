// `trellis inspect`: what the optimizer made of a model, and why each layer landed where it did.
#include "Commands.hpp"
#include "Common.hpp"

#include <iostream>
#include <map>

namespace trellis::cli {

std::string InspectHelp() {
    return std::string() +
           "Usage: trellis inspect MODEL [options]\n"
           "\n"
           "Parse and optimize a model without running it, and show its inputs and outputs,\n"
           "every layer in execution order with the backend it was placed on (and each\n"
           "backend that declined it, with the reason; for a fused region, the layers\n"
           "inside it), the copies between backends with the bytes each copies per\n"
           "inference (per boundary, per direction and in all), the layers per backend\n"
           "and the optimizer's log. Constants made by constant folding are counted, and\n"
           "listed with --all.\n"
           "\n"
           "Options:\n"
           TRELLIS_CLI_BACKENDS_HELP
           TRELLIS_CLI_SHAPE_HELP
           TRELLIS_CLI_DYNAMIC_BACKENDS_PATH_HELP
           "  --all                  Also list the constants that constant folding made\n"
           "                         (by default only their count is shown).\n"
           TRELLIS_CLI_RESOURCE_LIMITS_HELP
           "  -h, --help             Show this help.\n"
           "\n"
           "Input and output types and shapes are the loaded network's; if loading fails,\n"
           "the model's declared ones are shown with a 'note:' saying why.\n";
}

namespace {

std::string DescribeInfo(const TensorInfo& info) {
    return std::string(GetDataTypeName(info.GetDataType())) + " " + info.GetShape().ToString();
}

std::string DescribeLayerType(const LayerPlacement& layer) {
    std::string text = GetLayerTypeName(layer.m_Type);
    if (!layer.m_OpDetail.empty() && layer.m_OpDetail != text) {
        text += "(" + layer.m_OpDetail + ")";
    }
    return text;
}

void PrintBindings(const char* title, const std::vector<BindingPointInfo>& bindings,
                   const std::vector<TensorInfo>& infos) {
    std::cout << title << ":\n";
    for (std::size_t i = 0; i < bindings.size(); ++i) {
        std::cout << "  [" << i << "] '" << bindings[i].m_Name << "' binding " << bindings[i].m_BindingId << ": "
                  << DescribeInfo(infos[i]) << "\n";
    }
}

bool IsFoldedConstant(const LayerPlacement& layer) {
    return layer.m_Type == LayerType::Constant && layer.m_OpDetail.rfind("folded on ", 0) == 0;
}

/// The layers a backend replaced with one of its own (a CpuAcc fused region, a PreCompiled
/// layer), wrapped to lines of about 100 columns.
void PrintRegionLayers(const std::vector<std::string>& layers) {
    const std::string indent = "        ";
    std::string line = "      layers inside (" + std::to_string(layers.size()) + "):";
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const std::string item = " " + layers[i] + (i + 1 < layers.size() ? "," : "");
        if (line.size() + item.size() > 100 && line.size() > indent.size()) {
            std::cout << line << "\n";
            line = indent;
        }
        line += item;
    }
    std::cout << line << "\n";
}

/// "1,234,567"
std::string WithThousands(std::size_t n) {
    std::string digits = std::to_string(n), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

/// The MemCopy layers at backend boundaries with the bytes each copies per inference, the bytes
/// per direction, and the total: what running part of the model on another backend costs.
void PrintCopies(const std::vector<LayerPlacement>& placements, bool dynamic) {
    std::size_t total = 0, count = 0;
    std::map<std::pair<std::string, std::string>, std::pair<std::size_t, std::size_t>> perDirection;
    std::string lines;
    for (const LayerPlacement& p : placements) {
        if (p.m_Type != LayerType::MemCopy) continue;
        ++count;
        total += p.m_CopyBytes;
        auto& d = perDirection[{p.m_CopySource, p.m_CopyDestination}];
        ++d.first;
        d.second += p.m_CopyBytes;
        lines += "  " + p.m_CopySource + " -> " + p.m_CopyDestination + ": " + WithThousands(p.m_CopyBytes) +
                 " bytes  '" + p.m_LayerName + "'" +
                 (p.m_Outputs.empty() ? std::string() : " (" + DescribeInfo(p.m_Outputs[0]) + ")") + "\n";
    }
    if (dynamic) {
        std::cout << "copies between backends per inference: decided per input shape (dynamic network)\n";
        return;
    }
    if (count == 0) {
        std::cout << "copies between backends per inference: none\n";
        return;
    }
    std::cout << "copies between backends per inference: " << WithThousands(total) << " bytes in "
              << count << " MemCopy layer" << (count == 1 ? "" : "s") << "\n"
              << lines;
    for (const auto& [direction, stats] : perDirection) {
        std::cout << "  total " << direction.first << " -> " << direction.second << ": "
                  << WithThousands(stats.second) << " bytes in " << stats.first << " cop"
                  << (stats.first == 1 ? "y" : "ies") << "\n";
    }
}

}  // namespace

int InspectCommand(const std::vector<std::string>& args) {
    std::vector<OptionSpec> specs = ModelOptionSpecs();
    specs.push_back({"all", false, false});
    const ParsedArgs parsed = ParseArgs(args, specs, "inspect");
    const bool all = parsed.Has("all");
    if (parsed.m_Help) {
        std::cout << InspectHelp() << RegisteredBackendsLine();
        return 0;
    }
    const ModelOptions options = ReadModelOptions(parsed, "inspect");
    PreparedModel model = PrepareModel(options);
    // LoadNetwork takes the optimized network, so read everything from it first.
    const std::vector<LayerPlacement> placements = model.m_Optimized->GetLayerPlacements();
    const std::vector<std::string> log = model.m_Optimized->GetOptimizationLog();

    // The parser's output infos are what the model declares (possibly incomplete); a loaded
    // network knows the real ones. Inspect stays useful when loading fails, so fall back.
    std::vector<TensorInfo> inputInfos;
    std::vector<TensorInfo> outputInfos;
    std::string loadFailure;
    bool dynamic = false;
    try {
        double loadMs = 0.0;
        const NetworkId id = LoadPrepared(model, loadMs);
        dynamic = model.m_Runtime->IsDynamic(id);
        for (const BindingPointInfo& b : model.m_Inputs) {
            inputInfos.push_back(model.m_Runtime->GetInputTensorInfo(id, b.m_BindingId));
        }
        for (const BindingPointInfo& b : model.m_Outputs) {
            // A dynamic network's output shapes come with each run's inputs: show the declared ones.
            outputInfos.push_back(dynamic ? b.m_TensorInfo : model.m_Runtime->GetOutputTensorInfo(id, b.m_BindingId));
        }
    } catch (const Exception& e) {
        loadFailure = e.what();
        inputInfos.clear();
        outputInfos.clear();
        for (const BindingPointInfo& b : model.m_Inputs) {
            inputInfos.push_back(b.m_TensorInfo);
        }
        for (const BindingPointInfo& b : model.m_Outputs) {
            outputInfos.push_back(b.m_TensorInfo);
        }
    }

    std::string backendList;
    for (const BackendId& b : options.m_Backends) {
        backendList += (backendList.empty() ? "" : ",") + b.Get();
    }
    std::cout << "model: " << options.m_ModelPath << " (opset " << model.m_Opset << ")\n"
              << "backends: " << backendList << "\n";
    for (const std::string& warning : model.m_Warnings) {
        std::cout << "warning: " << warning << "\n";
    }
    if (!loadFailure.empty()) {
        std::cout << "note: shapes below are the model's declared ones: loading failed: " << loadFailure << "\n";
    }
    if (dynamic) {
        std::cout << "note: dynamic network: it is optimized and placed for each run's input shapes ('?' dims); "
                     "output shapes are the model's declared ones and layers are shown before optimization\n";
    }
    PrintBindings("inputs", model.m_Inputs, inputInfos);
    PrintBindings("outputs", model.m_Outputs, outputInfos);

    std::cout << "layers (execution order):\n";
    std::size_t hiddenConstants = 0;
    for (std::size_t i = 0; i < placements.size(); ++i) {
        const LayerPlacement& layer = placements[i];
        if (!all && IsFoldedConstant(layer)) {
            ++hiddenConstants;
            continue;
        }
        std::string shapes;
        for (const TensorInfo& info : layer.m_Outputs) {
            shapes += (shapes.empty() ? "" : ", ") + DescribeInfo(info);
        }
        // Input/Output/Constant layers run nowhere, so they have no backend to show.
        std::cout << "  " << i << "  " << layer.m_LayerName << "  " << DescribeLayerType(layer) << "  -> "
                  << (shapes.empty() ? "(none)" : shapes)
                  << (layer.m_Backend.IsEmpty() ? std::string() : "  on " + layer.m_Backend.Get()) << "\n";
        for (const auto& [backend, reason] : layer.m_Declined) {
            std::cout << "      declined by " << backend.Get() << ": " << reason << "\n";
        }
        if (!layer.m_SubstitutedLayers.empty()) PrintRegionLayers(layer.m_SubstitutedLayers);
    }
    if (hiddenConstants) {
        std::cout << "  (" << hiddenConstants << " constant" << (hiddenConstants == 1 ? "" : "s")
                  << " made by constant folding not shown; --all lists them)\n";
    }
    PrintCopies(placements, dynamic);
    std::cout << "layers: "
              << (dynamic ? std::string("placed per input shape (dynamic network)")
                          : FormatLayerCounts(model.m_LayerCounts, options.m_Backends))
              << "\n"
              << "optimization log:" << (log.empty() ? " (empty)" : "") << "\n";
    for (const std::string& line : log) {
        std::cout << "  " << line << "\n";
    }
    return 0;
}

}  // namespace trellis::cli
