// `trellis run`: one inference with inputs from files or seeded random data.
#include "Commands.hpp"
#include "Common.hpp"
#include "Tensors.hpp"

#include <trellis/TensorIO.hpp>

#include <filesystem>
#include <iostream>
#include <map>
#include <random>

namespace trellis::cli {

std::string RunHelp() {
    return std::string() +
           "Usage: trellis run MODEL [options]\n"
           "\n"
           "Parse an ONNX model, optimize it for the chosen backends, run it once and print\n"
           "each output.\n"
           "\n"
           "Options:\n"
           TRELLIS_CLI_BACKENDS_HELP
           "                         Each layer runs on the first backend that supports\n"
           "                         it.\n"
           "  --input NAME=FILE      Feed graph input NAME from FILE (.pb TensorProto or\n"
           "                         .npy). Repeatable.\n"
           "  --input-dir DIR        Feed graph input i (graph order, from 0) from\n"
           "                         DIR/input_<i>.pb where that file exists (DIR must\n"
           "                         exist); --input wins for the same input.\n"
           "  --output-dir DIR       Write output i to DIR/output_<i>.pb, a TensorProto\n"
           "                         named after the graph output; DIR is created if\n"
           "                         missing.\n"
           TRELLIS_CLI_SHAPE_HELP
           "  --seed N               Seed of the random data for inputs not given\n"
           "                         (default: 0).\n"
           TRELLIS_CLI_THREADS_HELP
           TRELLIS_CLI_BACKEND_OPTION_HELP
           TRELLIS_CLI_DYNAMIC_BACKENDS_PATH_HELP
           TRELLIS_CLI_RESOURCE_LIMITS_HELP
           "  -h, --help             Show this help.\n"
           "\n"
           "Inputs not given are filled with random data (std::mt19937 seeded with --seed,\n"
           "drawn input by input in graph order): floats uniform in [-1, 1), integer and\n"
           "quantized types uniform in [0, 10), booleans 0 or 1; a 'note:' line names each.\n"
           "A given tensor must have the input's type and shape. Dims the model leaves\n"
           "symbolic and --shape does not pin are taken from the given tensor (the network\n"
           "is optimized for the shapes of the run); random data needs them pinned.\n"
           "\n"
           "Prints optimizer warnings ('warning: ...'), 'inputs: NAME TYPE SHAPE, ...' (the\n"
           "shapes the run uses), then for each output its name, type, shape, first 8\n"
           "values (and min/max/mean for float types), then 'layers: N on BACKEND, ...'\n"
           "(for a dynamic network: 'layers: placed per input shape (dynamic network)')\n"
           "and 'time: load X ms, run Y ms'.\n";
}

namespace {

std::vector<OptionSpec> RunOptionSpecs() {
    std::vector<OptionSpec> specs = ModelOptionSpecs();
    specs.push_back({"input", true, true});
    specs.push_back({"input-dir", true, false});
    specs.push_back({"output-dir", true, false});
    specs.push_back({"seed", true, false});
    for (const OptionSpec& spec : BackendTuningOptionSpecs()) specs.push_back(spec);
    return specs;
}

}  // namespace

int RunCommand(const std::vector<std::string>& args) {
    const ParsedArgs parsed = ParseArgs(args, RunOptionSpecs(), "run");
    if (parsed.m_Help) {
        std::cout << RunHelp() << RegisteredBackendsLine();
        return 0;
    }
    // Every option is checked before any work, so a typo never costs a model load.
    ModelOptions options = ReadModelOptions(parsed, "run");
    ReadBackendTuning(parsed, options);
    const uint32_t seed = ReadSeed(parsed);
    const InputSources sources = ReadInputSources(parsed);
    const std::string outputDir = parsed.Get("output-dir").value_or("");
    if (parsed.Has("output-dir") && outputDir.empty()) {
        throw UsageError("option '--output-dir' expects a directory, got ''");
    }

    PreparedModel model = PrepareModel(options);
    CheckInputNames(sources, model.m_Inputs, options.m_ModelPath);
    if (!outputDir.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(outputDir, ec);
        if (ec || !std::filesystem::is_directory(outputDir)) {
            throw RuntimeException("cannot create output directory '" + outputDir + "': " +
                                   (ec ? ec.message() : std::string("a file of that name exists")));
        }
    }
    for (const std::string& warning : model.m_Warnings) {
        std::cout << "warning: " << warning << "\n";
    }

    double loadMs = 0.0;
    const NetworkId id = LoadPrepared(model, loadMs);
    IRuntime& runtime = *model.m_Runtime;

    const std::vector<OwnedTensor> inputs = GatherInputs(runtime, id, model.m_Inputs, sources, seed, std::cout);
    std::cout << "inputs: " << DescribeInputs(inputs) << "\n";
    const InputTensors boundInputs = BindInputs(model.m_Inputs, inputs);
    // Timed with the run: for a dynamic network this optimizes and plans it for these shapes.
    const int64_t start = NowNs();
    std::vector<OwnedTensor> outputs = MakeOutputBuffers(runtime, id, model.m_Outputs, boundInputs);
    const Status status = runtime.EnqueueWorkload(id, boundInputs, BindOutputs(model.m_Outputs, outputs));
    const double runMs = MsSince(start);
    if (status != Status::Success) {
        throw RuntimeException("running '" + options.m_ModelPath + "' failed (EnqueueWorkload returned Failure)");
    }

    for (std::size_t i = 0; i < outputs.size(); ++i) {
        const OwnedTensor& output = outputs[i];
        std::cout << "output '" << output.m_Name << "': " << DescribeInfo(output.m_Info) << "\n"
                  << SummariseValues(output);
        if (!outputDir.empty()) {
            const auto path = std::filesystem::path(outputDir) / ("output_" + std::to_string(i) + ".pb");
            SaveTensorProto(path.string(), output);
        }
    }
    std::cout << "layers: "
              << (runtime.IsDynamic(id) ? std::string("placed per input shape (dynamic network)")
                                        : FormatLayerCounts(model.m_LayerCounts, options.m_Backends))
              << "\n"
              << "time: load " << FormatMs(loadMs) << " ms, run " << FormatMs(runMs) << " ms\n";
    return 0;
}

}  // namespace trellis::cli
