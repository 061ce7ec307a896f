// `trellis onnx-test`: runs ONNX backend test cases (model.onnx + test_data_set_*/input_<i>.pb ->
// output_<i>.pb, the layout of ONNX's own backend tests and of Debian's libonnx-testdata) and
// compares every output with ONNX's tolerance.
//
// Every case ends as exactly one of: pass; unsupported (the parser threw ParseException or the
// optimizer BackendUnavailableException: the engine refused the model with a reason); fail
// (anything else: a mismatch, bad test data - including data whose shapes contradict the shapes
// the model declares for its inputs -, any other exception). One case never stops the
// others; the runtime is shared and each case's network is unloaded when the case ends.
#include "Commands.hpp"
#include "Common.hpp"
#include "Tensors.hpp"

#include <trellis/TensorIO.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <regex>
#include <stdexcept>

namespace trellis::cli {

std::string OnnxTestHelp() {
    return std::string() +
           "Usage: trellis onnx-test DIR... [options]\n"
           "\n"
           "Run ONNX backend test cases and compare every output with the expected one.\n"
           "A DIR is one case (a folder holding model.onnx and test_data_set_*/) or a\n"
           "folder of cases (each subfolder holding model.onnx), for example\n"
           "/usr/share/libonnx-testdata/data/node.\n"
           "\n"
           "Options:\n"
           "  --backends LIST        Comma-separated backend ids in order of preference\n"
           "                         (default: " + kConformanceBackends + ").\n"
           "  --filter REGEX         Run only the cases whose name REGEX matches (ECMAScript\n"
           "                         syntax, searched anywhere in the name).\n"
           "  --summary-json FILE    Also write every case's result to FILE as JSON: an\n"
           "                         object with 'backends', 'passed', 'failed', 'skipped'\n"
           "                         and 'cases', a list of {dir, case, status, reason, ms}.\n"
           TRELLIS_CLI_DYNAMIC_BACKENDS_PATH_HELP
           "  -h, --help             Show this help.\n"
           "\n"
           "Cases run in name order within each DIR. Each is parsed, optimized and loaded,\n"
           "then every test_data_set_* runs: input_<i>.pb feeds the graph input its tensor\n"
           "names (the i-th graph input, initializers excluded, when unnamed; a named\n"
           "input's shape is passed to the parser) and output_<i>.pb is compared with the\n"
           "graph output matched the same way. Types and shapes must match exactly, and so\n"
           "must integer and bool values; a float value passes when\n"
           "|got - want| <= 1e-7 + 1e-3 * |want| (ONNX's atol and rtol; NaN matches NaN).\n"
           "\n"
           "Prints one line per case and a closing count:\n"
           "  <case>: pass\n"
           "  <case>: fail: <the first mismatch, or the error>\n"
           "  <case>: unsupported: <why the parser or the optimizer refused the model>\n"
           "  N passed, N failed, N skipped\n"
           "(skipped counts the unsupported cases).\n"
           "\n"
           "Exit status: 0 when no case failed (unsupported cases do not fail the\n"
           "command), 1 when one did or on an error, 2 on a usage error.\n";
}

namespace {

namespace fs = std::filesystem;

constexpr double kRelativeTolerance = 1e-3;
constexpr double kAbsoluteTolerance = 1e-7;

enum class Outcome { Pass, Fail, Unsupported };

const char* OutcomeName(Outcome outcome) {
    switch (outcome) {
        case Outcome::Pass: return "pass";
        case Outcome::Fail: return "fail";
        case Outcome::Unsupported: return "unsupported";
    }
    return "fail";
}

struct TestCase {
    std::string m_Dir;   ///< the DIR argument the case was found under, as given
    std::string m_Name;  ///< the case folder's name
    fs::path m_Path;     ///< the case folder
};

struct CaseResult {
    Outcome m_Outcome = Outcome::Pass;
    std::string m_Reason;
    double m_Ms = 0.0;
};

/// The engine refused the model (parser or optimizer) with `what()` as the reason.
class CaseUnsupported : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// A mismatch or unusable test data; `what()` says which.
class CaseFailure : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

std::string CaseNameOf(const fs::path& dir) {
    const fs::path normal = dir.lexically_normal();
    // "a/b/" normalises to "a/b/" whose filename() is empty.
    return normal.has_filename() ? normal.filename().string() : normal.parent_path().filename().string();
}

bool HasModel(const fs::path& dir) {
    std::error_code ec;
    return fs::is_regular_file(dir / "model.onnx", ec);
}

std::vector<TestCase> FindCases(const std::string& dir) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
        throw FileNotFoundException("test directory '" + dir + "' does not exist or is not a directory");
    }
    if (HasModel(dir)) {
        return {TestCase{dir, CaseNameOf(dir), fs::path(dir)}};
    }
    std::vector<TestCase> cases;
    fs::directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
    if (ec) {
        throw ParseException("cannot list test directory '" + dir + "': " + ec.message());
    }
    for (; it != fs::directory_iterator(); it.increment(ec)) {
        if (ec) {
            throw ParseException("cannot list test directory '" + dir + "': " + ec.message());
        }
        std::error_code entryEc;
        if (it->is_directory(entryEc) && HasModel(it->path())) {
            cases.push_back(TestCase{dir, it->path().filename().string(), it->path()});
        }
    }
    if (cases.empty()) {
        throw InvalidArgumentException("test directory '" + dir +
                                       "' holds no test case: neither it nor any subfolder has a model.onnx");
    }
    std::sort(cases.begin(), cases.end(),
              [](const TestCase& a, const TestCase& b) { return a.m_Name < b.m_Name; });
    return cases;
}

// "test_data_set_<n>" folders, in numeric order of n (then by name for anything else).
std::vector<fs::path> FindDataSets(const fs::path& caseDir) {
    static const std::regex pattern("test_data_set_([0-9]+)");
    std::vector<std::pair<std::pair<unsigned long long, std::string>, fs::path>> found;
    std::error_code ec;
    for (fs::directory_iterator it(caseDir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
        const std::string name = it->path().filename().string();
        std::smatch match;
        std::error_code entryEc;
        if (it->is_directory(entryEc) && std::regex_match(name, match, pattern)) {
            const std::string digits = match[1].str();
            const unsigned long long n = digits.size() > 18 ? ~0ull : std::stoull(digits);
            found.push_back({{n, name}, it->path()});
        }
    }
    if (ec) {
        throw CaseFailure("cannot list the case folder: " + ec.message());
    }
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<fs::path> sets;
    for (auto& entry : found) {
        sets.push_back(std::move(entry.second));
    }
    return sets;
}

struct DataFile {
    std::string m_Label;  ///< "test_data_set_0/input_1.pb"
    OwnedTensor m_Tensor;
};

// Every <prefix>_<i>.pb of a data set, i = 0..n-1 with no gap. Unreadable files throw (the
// library's ParseException, naming the file).
std::vector<DataFile> LoadNumbered(const fs::path& setDir, const std::string& prefix) {
    const std::regex pattern(prefix + "_([0-9]+)\\.pb");
    std::vector<unsigned long long> indices;
    std::error_code ec;
    for (fs::directory_iterator it(setDir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
        std::smatch match;
        const std::string name = it->path().filename().string();
        if (std::regex_match(name, match, pattern)) {
            const std::string digits = match[1].str();
            indices.push_back(digits.size() > 18 ? ~0ull : std::stoull(digits));
        }
    }
    if (ec) {
        throw CaseFailure("cannot list '" + setDir.filename().string() + "': " + ec.message());
    }
    std::sort(indices.begin(), indices.end());
    std::vector<DataFile> files;
    for (std::size_t i = 0; i < indices.size(); ++i) {
        const std::string label = setDir.filename().string() + "/" + prefix + "_" + std::to_string(i) + ".pb";
        if (indices[i] != i) {
            throw CaseFailure(label + " is missing (the " + prefix + " files must be numbered from 0 without gaps)");
        }
        files.push_back({label, LoadTensorFile((setDir / (prefix + "_" + std::to_string(i) + ".pb")).string())});
    }
    return files;
}

std::string Describe(const TensorInfo& info) {
    return std::string(GetDataTypeName(info.GetDataType())) + " " + info.GetShape().ToString();
}

// files[i] -> the binding it feeds: the one its tensor names, else position i. Every binding must
// get exactly one file.
std::vector<std::size_t> MatchFiles(const std::vector<DataFile>& files, const std::vector<BindingPointInfo>& bindings,
                                    const std::string& kind) {
    if (files.size() != bindings.size()) {
        throw CaseFailure("the test data set has " + std::to_string(files.size()) + " " + kind +
                          " files, the graph has " + std::to_string(bindings.size()) + " " + kind + "s");
    }
    std::vector<std::size_t> match(files.size());
    std::vector<int> fedBy(bindings.size(), -1);
    for (std::size_t i = 0; i < files.size(); ++i) {
        match[i] = i;
        const std::string& name = files[i].m_Tensor.m_Name;
        for (std::size_t b = 0; b < bindings.size() && !name.empty(); ++b) {
            if (bindings[b].m_Name == name) {
                match[i] = b;
            }
        }
        if (fedBy[match[i]] >= 0) {
            throw CaseFailure(files[i].m_Label + " and " + files[static_cast<std::size_t>(fedBy[match[i]])].m_Label +
                              " both give graph " + kind + " '" + bindings[match[i]].m_Name + "'");
        }
        fedBy[match[i]] = static_cast<int>(i);
    }
    return match;
}

// `given` can feed an input declared `declared` (whose kUnknownDim dims take any size).
bool ShapeFits(const TensorShape& given, const TensorShape& declared) {
    if (given.GetNumDimensions() != declared.GetNumDimensions()) return false;
    for (unsigned int d = 0; d < given.GetNumDimensions(); ++d) {
        if (declared[d] != kUnknownDim && declared[d] != given[d]) return false;
    }
    return true;
}

bool IsExactType(DataType type) {
    return !IsFloatType(type);
}

// Flat index -> "[i, j, k]" in `shape`.
std::string Coordinates(const TensorShape& shape, std::size_t index) {
    std::vector<std::size_t> coords(shape.GetNumDimensions());
    for (unsigned int d = shape.GetNumDimensions(); d-- > 0;) {
        const std::size_t dim = shape[d] == 0 ? 1 : shape[d];
        coords[d] = index % dim;
        index /= dim;
    }
    std::string text = "[";
    for (std::size_t d = 0; d < coords.size(); ++d) {
        text += (d ? ", " : "") + std::to_string(coords[d]);
    }
    return text + "]";
}

bool FloatsMatch(double got, double want) {
    if (std::isnan(got) || std::isnan(want)) {
        return std::isnan(got) && std::isnan(want);
    }
    if (got == want) {
        return true;  // equal infinities too, whose difference is NaN
    }
    if (std::isinf(got) || std::isinf(want)) {
        return false;
    }
    return std::fabs(got - want) <= kAbsoluteTolerance + kRelativeTolerance * std::fabs(want);
}

// Empty when `got` matches `want`; otherwise the first mismatch and how many elements differ.
std::string CompareValues(const std::string& what, const OwnedTensor& got, const OwnedTensor& want) {
    const DataType type = want.m_Info.GetDataType();
    const std::size_t count = want.m_Info.GetNumElements();
    const std::size_t size = GetDataTypeSize(type);
    std::size_t differ = 0;
    std::size_t first = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const bool same = IsExactType(type)
                              ? std::memcmp(got.m_Data.data() + i * size, want.m_Data.data() + i * size, size) == 0
                              : FloatsMatch(ElementAsDouble(got, i), ElementAsDouble(want, i));
        if (!same && differ++ == 0) {
            first = i;
        }
    }
    if (differ == 0) {
        return "";
    }
    return what + " element " + std::to_string(first) + " " + Coordinates(want.m_Info.GetShape(), first) + " (" +
           std::to_string(differ) + " of " + std::to_string(count) + " differ): got " + FormatElement(got, first, 9) +
           ", want " + FormatElement(want, first, 9) +
           (IsExactType(type) ? " (exact match required)" : " (rtol 1e-3, atol 1e-7)");
}

/// The parser refused `model` given the data files' shapes (`message`). When it accepts the model
/// without them, the data contradicts the shapes the model declares: ONNX requires a graph input's
/// value to have its declared static shape (rank and fixed dims), so that is bad test data (a
/// failure), not a refusal of the model. Throws CaseFailure or CaseUnsupported.
[[noreturn]] void RefusedWithDataShapes(const fs::path& model, const std::string& message) {
    try {
        IOnnxParser::Create()->CreateNetworkFromBinaryFile(model.string());
    } catch (const ParseException& e) {
        throw CaseUnsupported(e.what());
    }
    throw CaseFailure("test data contradicts the model: " + message +
                      " (a graph input's value must have the shape the model declares)");
}

/// One parsed, optimized and loaded network, unloaded when it goes.
class LoadedModel {
public:
    LoadedModel(IRuntime& runtime, const fs::path& model, const std::map<std::string, TensorShape>& shapes,
                const BackendIdVector& backends)
        : m_Runtime(runtime) {
        IOnnxParserPtr parser = IOnnxParser::Create();
        IOnnxParser::Options options;
        options.m_InputShapes = shapes;
        INetworkPtr network{nullptr, &INetwork::Destroy};
        try {
            network = parser->CreateNetworkFromBinaryFile(model.string(), options);
        } catch (const FileNotFoundException&) {
            throw;  // a file of the case is missing (external data): broken test data, not a refusal
        } catch (const ParseException& e) {
            RefusedWithDataShapes(model, e.what());
        }
        if (!network) {
            throw CaseFailure("the parser returned no network");
        }
        m_Inputs = parser->GetInputs();
        m_Outputs = parser->GetOutputs();
        IOptimizedNetworkPtr optimized{nullptr, &IOptimizedNetwork::Destroy};
        try {
            optimized = Optimize(*network, backends, runtime.GetDeviceSpec());
        } catch (const BackendUnavailableException& e) {
            throw CaseUnsupported(e.what());
        }
        if (!optimized) {
            throw CaseFailure("Optimize returned no network");
        }
        std::string error;
        if (runtime.LoadNetwork(m_Id, std::move(optimized), error) != Status::Success) {
            throw CaseFailure("loading the network failed: " + (error.empty() ? std::string("no reason given") : error));
        }
        m_Loaded = true;
    }
    ~LoadedModel() {
        if (m_Loaded) {
            m_Runtime.UnloadNetwork(m_Id);
        }
    }
    LoadedModel(const LoadedModel&) = delete;
    LoadedModel& operator=(const LoadedModel&) = delete;

    // Runs one data set; throws CaseFailure at the first problem.
    void Check(std::vector<DataFile>& inputs, std::vector<DataFile>& outputs) {
        const std::vector<std::size_t> inputOf = MatchFiles(inputs, m_Inputs, "input");
        const std::vector<std::size_t> outputOf = MatchFiles(outputs, m_Outputs, "output");

        std::vector<OwnedTensor> inputTensors(m_Inputs.size());
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            const BindingPointInfo& binding = m_Inputs[inputOf[i]];
            const TensorInfo info = m_Runtime.GetInputTensorInfo(m_Id, binding.m_BindingId);
            OwnedTensor& tensor = inputs[i].m_Tensor;
            TakeUInt16AsBFloat16(tensor.m_Info, info.GetDataType());
            if (tensor.m_Info.GetDataType() != info.GetDataType() || !ShapeFits(tensor.m_Info.GetShape(), info.GetShape())) {
                throw CaseFailure(inputs[i].m_Label + " is " + Describe(tensor.m_Info) + ", graph input '" +
                                  binding.m_Name + "' is " + Describe(info));
            }
            if (info.GetShape().AreAllDimensionsSpecified()) {
                tensor.m_Info = info;  // the network's quantization parameters
            }
            inputTensors[inputOf[i]] = tensor;
        }
        const InputTensors boundInputs = BindInputs(m_Inputs, inputTensors);

        std::vector<OwnedTensor> got(m_Outputs.size());
        std::vector<const DataFile*> want(m_Outputs.size());
        for (std::size_t i = 0; i < outputs.size(); ++i) {
            const BindingPointInfo& binding = m_Outputs[outputOf[i]];
            TensorInfo info;
            try {
                // A dynamic network is optimized for these inputs here (or reuses that result).
                info = m_Runtime.GetOutputTensorInfo(m_Id, binding.m_BindingId, boundInputs);
            } catch (const BackendUnavailableException& e) {
                throw CaseUnsupported(e.what());
            }
            TakeUInt16AsBFloat16(outputs[i].m_Tensor.m_Info, info.GetDataType());
            const TensorInfo& expected = outputs[i].m_Tensor.m_Info;
            if (expected.GetDataType() != info.GetDataType() || expected.GetShape() != info.GetShape()) {
                throw CaseFailure("output '" + binding.m_Name + "': got " + Describe(info) + ", want " +
                                  Describe(expected) + " (" + outputs[i].m_Label + ")");
            }
            got[outputOf[i]] = MakeZeroTensor(binding.m_Name, info);
            want[outputOf[i]] = &outputs[i];
        }

        const Status status = m_Runtime.EnqueueWorkload(m_Id, boundInputs, BindOutputs(m_Outputs, got));
        if (status != Status::Success) {
            throw CaseFailure("EnqueueWorkload returned Failure");
        }
        for (std::size_t b = 0; b < m_Outputs.size(); ++b) {
            const std::string mismatch = CompareValues(
                "output '" + m_Outputs[b].m_Name + "' (" + want[b]->m_Label + ")", got[b], want[b]->m_Tensor);
            if (!mismatch.empty()) {
                throw CaseFailure(mismatch);
            }
        }
    }

private:
    IRuntime& m_Runtime;
    NetworkId m_Id = 0;
    bool m_Loaded = false;
    std::vector<BindingPointInfo> m_Inputs;
    std::vector<BindingPointInfo> m_Outputs;
};

// Shapes of the named input tensors, passed to the parser (models with symbolic dims need them).
std::map<std::string, TensorShape> NamedShapes(const std::vector<DataFile>& inputs) {
    std::map<std::string, TensorShape> shapes;
    for (const DataFile& file : inputs) {
        if (!file.m_Tensor.m_Name.empty()) {
            shapes[file.m_Tensor.m_Name] = file.m_Tensor.m_Info.GetShape();
        }
    }
    return shapes;
}

void RunDataSets(IRuntime& runtime, const TestCase& testCase, const BackendIdVector& backends) {
    const std::vector<fs::path> sets = FindDataSets(testCase.m_Path);
    if (sets.empty()) {
        throw CaseFailure("the case has no test_data_set_* folder");
    }
    std::unique_ptr<LoadedModel> model;
    std::map<std::string, TensorShape> modelShapes;
    for (std::size_t s = 0; s < sets.size(); ++s) {
        std::vector<DataFile> inputs;
        std::vector<DataFile> outputs;
        std::string dataError;
        try {
            inputs = LoadNumbered(sets[s], "input");
            outputs = LoadNumbered(sets[s], "output");
        } catch (const std::exception& e) {
            dataError = e.what();
        }
        // A model the engine refuses is reported as such even when its test data (say, strings)
        // cannot be read either, so the model is parsed before a data error counts.
        const std::map<std::string, TensorShape> shapes = NamedShapes(inputs);
        if (!model || shapes != modelShapes) {
            model.reset();
            model = std::make_unique<LoadedModel>(runtime, testCase.m_Path / "model.onnx", shapes, backends);
            modelShapes = shapes;
        }
        if (!dataError.empty()) {
            throw CaseFailure("test data: " + dataError);
        }
        model->Check(inputs, outputs);
    }
}

// One line, with the case folder's path left out of the library's messages (the case is named
// at the start of the line already).
std::string CleanReason(const std::string& message, const TestCase& testCase) {
    std::string text = FoldLines(message);
    const std::string prefix = testCase.m_Path.string() + "/";
    for (std::size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at)) {
        text.erase(at, prefix.size());
    }
    return text.empty() ? std::string("no reason given") : text;
}

CaseResult RunCase(IRuntime& runtime, const TestCase& testCase, const BackendIdVector& backends) {
    CaseResult result;
    const int64_t start = NowNs();
    try {
        RunDataSets(runtime, testCase, backends);
    } catch (const CaseUnsupported& e) {
        result = {Outcome::Unsupported, CleanReason(e.what(), testCase), 0.0};
    } catch (const std::bad_alloc&) {
        result = {Outcome::Fail, "out of memory", 0.0};
    } catch (const std::exception& e) {
        result = {Outcome::Fail, CleanReason(e.what(), testCase), 0.0};
    } catch (...) {
        result = {Outcome::Fail, "unknown failure (a non-standard exception)", 0.0};
    }
    result.m_Ms = MsSince(start);
    return result;
}

void WriteSummary(const std::string& path, const BackendIdVector& backends, const std::vector<TestCase>& cases,
                  const std::vector<CaseResult>& results, const std::map<Outcome, std::size_t>& counts) {
    std::string backendList;
    for (const BackendId& id : backends) {
        backendList += (backendList.empty() ? "" : ", ") + JsonString(id.Get());
    }
    std::string text = "{\"backends\": [" + backendList + "], \"passed\": " + std::to_string(counts.at(Outcome::Pass)) +
                       ", \"failed\": " + std::to_string(counts.at(Outcome::Fail)) +
                       ", \"skipped\": " + std::to_string(counts.at(Outcome::Unsupported)) + ", \"cases\": [";
    for (std::size_t i = 0; i < results.size(); ++i) {
        text += std::string(i ? "," : "") + "\n  {\"dir\": " + JsonString(cases[i].m_Dir) +
                ", \"case\": " + JsonString(cases[i].m_Name) + ", \"status\": " +
                JsonString(OutcomeName(results[i].m_Outcome)) + ", \"reason\": " + JsonString(results[i].m_Reason) +
                ", \"ms\": " + JsonNumber(results[i].m_Ms) + "}";
    }
    text += "\n]}\n";
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
        throw RuntimeException("cannot write the summary file '" + path + "' (--summary-json)");
    }
}

}  // namespace

int OnnxTestCommand(const std::vector<std::string>& args) {
    const std::vector<OptionSpec> specs = {
        {"backends", true, false},
        {"filter", true, false},
        {"summary-json", true, false},
        {"dynamic-backends-path", true, false},
    };
    const ParsedArgs parsed = ParseArgs(args, specs, "onnx-test");
    if (parsed.m_Help) {
        std::cout << OnnxTestHelp() << RegisteredBackendsLine();
        return 0;
    }
    if (parsed.m_Positionals.empty()) {
        throw UsageError("onnx-test: missing DIR argument (see 'trellis onnx-test --help')");
    }
    const BackendIdVector backends = ParseBackendList(parsed.Get("backends").value_or(kConformanceBackends));
    std::optional<std::regex> filter;
    if (auto text = parsed.Get("filter")) {
        try {
            filter.emplace(*text, std::regex::ECMAScript);
        } catch (const std::regex_error& e) {
            throw UsageError("option '--filter' expects an ECMAScript regular expression, got '" + *text + "': " +
                             e.what());
        }
    }
    const std::string summaryPath = parsed.Get("summary-json").value_or("");
    if (parsed.Has("summary-json") && summaryPath.empty()) {
        throw UsageError("option '--summary-json' expects a file name, got ''");
    }
    // The runtime comes first: creating it registers the dynamic backends --backends may name.
    IRuntimePtr runtime = CreateRuntime(parsed);
    CheckBackendsRegistered(backends, *runtime);
    // Every DIR is checked before any case runs, so a typo costs nothing.
    std::vector<TestCase> cases;
    for (const std::string& dir : parsed.m_Positionals) {
        for (TestCase& testCase : FindCases(dir)) {
            if (!filter || std::regex_search(testCase.m_Name, *filter)) {
                cases.push_back(std::move(testCase));
            }
        }
    }

    std::vector<CaseResult> results;
    std::map<Outcome, std::size_t> counts = {{Outcome::Pass, 0}, {Outcome::Fail, 0}, {Outcome::Unsupported, 0}};
    for (const TestCase& testCase : cases) {
        results.push_back(RunCase(*runtime, testCase, backends));
        const CaseResult& result = results.back();
        ++counts[result.m_Outcome];
        // Flushed per case: should a case ever bring the process down, the last line names it.
        std::cout << testCase.m_Name << ": " << OutcomeName(result.m_Outcome)
                  << (result.m_Reason.empty() ? "" : ": " + result.m_Reason) << std::endl;
    }
    std::cout << counts[Outcome::Pass] << " passed, " << counts[Outcome::Fail] << " failed, "
              << counts[Outcome::Unsupported] << " skipped" << std::endl;
    if (!summaryPath.empty()) {
        WriteSummary(summaryPath, backends, cases, results, counts);
    }
    return counts[Outcome::Fail] == 0 ? 0 : 1;
}

}  // namespace trellis::cli
