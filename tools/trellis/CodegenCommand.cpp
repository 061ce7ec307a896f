// trellis codegen: generate an artifact (C++ source and a weights file) for a model.
#include "Commands.hpp"
#include "Common.hpp"

#include <trellis/Codegen.hpp>

#include <algorithm>
#include <iostream>
#include <sstream>

namespace trellis::cli {

std::string CodegenHelp() {
    return "Usage: trellis codegen MODEL -o DIR [options]\n"
           "\n"
           "Generate C++ source for a model: a class NAME whose constructor configures\n"
           "every layer, allocates one arena and reads the weights, whose Inference()\n"
           "runs the network and whose get_<tensor>() accessors (and getInput()/\n"
           "getOutput() where there is one) expose its inputs and outputs. Writes\n"
           "DIR/NAME.h, DIR/NAME.cpp, DIR/NAME.params (the weights) and\n"
           "DIR/CMakeLists.txt, which builds the artifact as a library.\n"
           "\n"
           "Options:\n"
           "  -o, --output-dir DIR   Where to write the files (created if missing).\n"
           "  --name NAME            The class and file name, a C++ identifier (default:\n"
           "                         Net).\n"
           "  --target TARGET        soft: the C++ standard library alone (CpuRef's\n"
           "                         kernels); onednn: oneDNN primitives, where Trellis\n"
           "                         was built with oneDNN; cuda: an NVIDIA GPU through\n"
           "                         cuDNN, cuBLASLt and CUDA kernels of its own (also\n"
           "                         writes DIR/NAME_kernels.cu, for nvcc; builds where\n"
           "                         the CUDA toolkit and cuDNN are) (default: soft).\n"
           "  --with-main            Also generate NAME_main.cpp, a program that reads\n"
           "                         each input from a .npy file (--input NAME=FILE.npy),\n"
           "                         runs one inference and writes each output to\n"
           "                         DIR/<output name>.npy (--output-dir DIR).\n"
           "  --c-api                Also give NAME.cpp C entry points (extern \"C\"):\n"
           "                         NAME_create(params path), NAME_run(net, inputs,\n"
           "                         outputs), NAME_destroy(net), NAME_error(), as the\n"
           "                         Codegen backend loads them with dlopen.\n"
           TRELLIS_CLI_SHAPE_HELP
           "  -h, --help             Show this help.\n"
           "\n"
           "Every shape must be static: pin symbolic dims with --shape. A layer the\n"
           "target cannot generate is refused with one error line naming the layer, its\n"
           "op and why. Build the artifact with\n"
           "  cmake -S DIR -B DIR/build && cmake --build DIR/build\n"
           "See docs/codegen.md for the artifact's API, the weights file's format and\n"
           "the Codegen backend, which compiles and runs artifacts inside Trellis.\n";
}

namespace {

std::string Bytes(std::size_t bytes) {
    std::ostringstream s;
    if (bytes >= (1u << 20)) s << static_cast<double>(bytes) / (1u << 20) << " MiB";
    else if (bytes >= 1024) s << static_cast<double>(bytes) / 1024 << " KiB";
    else s << bytes << " bytes";
    return s.str();
}

}  // namespace

int CodegenCommand(const std::vector<std::string>& args) {
    const ParsedArgs parsed = ParseArgs(args,
                                        {{"output-dir", true, false},
                                         {"name", true, false},
                                         {"target", true, false},
                                         {"with-main", false, false},
                                         {"c-api", false, false},
                                         {"shape", true, true}},
                                        "codegen", {{"o", "output-dir"}});
    if (parsed.m_Help) {
        std::cout << CodegenHelp() << RegisteredBackendsLine();
        return 0;
    }
    ModelOptions model;
    model.m_ModelPath = RequireModelPath(parsed, "codegen");
    model.m_InputShapes = ParseShapeOptions(parsed.GetAll("shape"));
    // Shapes are inferred and constants folded by the optimizer, for the reference backend: the
    // targets generate from that graph.
    model.m_Backends = {"CpuRef"};
    const auto dir = parsed.Get("output-dir");
    if (!dir || dir->empty()) throw UsageError("codegen: -o DIR (--output-dir) is required (see 'trellis codegen --help')");
    ArtifactOptions options;
    options.m_Name = parsed.Get("name").value_or("Net");
    options.m_Target = parsed.Get("target").value_or("soft");
    options.m_WithMain = parsed.Has("with-main");
    options.m_CEntryPoints = parsed.Has("c-api");
    const std::vector<std::string> targets = GetArtifactTargets();
    if (std::find(targets.begin(), targets.end(), options.m_Target) == targets.end()) {
        std::string list;
        for (const std::string& t : targets) list += (list.empty() ? "" : ", ") + t;
        throw UsageError("codegen: unknown target '" + options.m_Target + "' (targets built in: " + list + ")");
    }

    PreparedModel prepared = PrepareModel(model);
    for (const std::string& w : prepared.m_Warnings) std::cout << "warning: " << FoldLines(w) << '\n';
    for (const BindingPointInfo& input : prepared.m_Inputs) {
        if (input.m_TensorInfo.GetShape().AreAllDimensionsSpecified()) continue;
        std::string dims;
        const TensorShape& shape = input.m_TensorInfo.GetShape();
        for (unsigned int d = 0; d < shape.GetNumDimensions(); ++d) {
            if (shape[d] != kUnknownDim) continue;
            const std::string symbol = d < input.m_DimNames.size() ? input.m_DimNames[d] : "?";
            dims += (dims.empty() ? "dim " : ", dim ") + std::to_string(d) +
                    (symbol.empty() || symbol == "?" ? std::string(" (unknown)") : " ('" + symbol + "')");
        }
        throw Exception("input '" + input.m_Name + "' is " + input.m_TensorInfo.ToString() + ": " + dims +
                        " must be static to generate code; pin the dims with --shape " + input.m_Name + "=AxBx...");
    }
    const Artifact artifact = GenerateArtifact(*prepared.m_Optimized, options);
    WriteArtifact(artifact, *dir);

    std::cout << "artifact " << artifact.m_Name << " (target " << artifact.m_Target << "): ";
    unsigned int layers = 0;
    for (const auto& [backend, count] : prepared.m_LayerCounts) layers += count;
    std::cout << layers << " layers\n";
    for (const ArtifactBinding& b : artifact.m_Inputs) std::cout << "  input '" << b.m_Name << "' " << b.m_Info.ToString() << ": " << b.m_Accessor << "()\n";
    for (const ArtifactBinding& b : artifact.m_Outputs) std::cout << "  output '" << b.m_Name << "' " << b.m_Info.ToString() << ": " << b.m_Accessor << "()\n";
    std::cout << "wrote";
    for (const auto& [file, text] : artifact.m_Sources) std::cout << ' ' << *dir << '/' << file;
    std::cout << ' ' << *dir << '/' << artifact.m_Name << ".params (" << Bytes(artifact.m_Params.size()) << ")\n";
    return 0;
}

}  // namespace trellis::cli
