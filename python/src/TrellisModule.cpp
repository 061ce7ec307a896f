// trellis._trellis: the nanobind extension behind the `trellis` Python package.
//
// One Session wraps one IRuntime with one loaded network (parse -> Optimize -> LoadNetwork, as the
// CLI's PrepareModel does). Thread-safety: a Session is immutable after construction except for
// its input-copy counter (atomic); Run() and Bench() release the GIL around the inference, so
// many Python threads may run one session at once (IRuntime::EnqueueWorkload is thread-safe).
// Inputs are bound in place when they are C-contiguous and of the model's dtype (numpy arrays,
// DLPack capsules and objects with __dlpack__); anything strided is copied once and counted.
// Outputs are numpy arrays allocated with numpy.empty, so they own their memory.
// bfloat16, which numpy lacks, is exchanged as float32: a float32 input is rounded to bfloat16 (to
// nearest even; a copy, counted), a DLPack bfloat16 tensor (torch.bfloat16) or a uint16 array of
// bfloat16 bit patterns is read in place, and
// a bfloat16 output comes back widened to float32 (exactly).
// Errors: every trellis::Exception and the input checks below are translated into the classes of
// trellis/errors.py by TranslateException; nothing is left to abort the interpreter.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <trellis/OnnxParser.hpp>
#include <trellis/Trellis.hpp>
#include <trellis/backends/BackendRegistry.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nb = nanobind;

namespace {

using trellis::BackendId;
using trellis::BindingPointInfo;
using trellis::DataType;
using trellis::kUnknownDim;

// ---- dtypes ---------------------------------------------------------------------------------

/// A Trellis element type as numpy and DLPack see it.
struct DtypeRow {
    DataType m_Type;
    const char* m_Numpy;     ///< numpy dtype name
    const char* m_OrtType;   ///< ONNX Runtime's NodeArg.type spelling
    nb::dlpack::dtype_code m_Code;
    uint8_t m_Bits;
    /// The Trellis type is bfloat16, given and returned as numpy float32 (m_Numpy).
    bool m_Bfloat16AsFloat32 = false;
};

// Quantized Trellis types appear at graph boundaries only as their storage integers.
constexpr DtypeRow kDtypes[] = {
    {DataType::Float32, "float32", "tensor(float)", nb::dlpack::dtype_code::Float, 32},
    {DataType::Float16, "float16", "tensor(float16)", nb::dlpack::dtype_code::Float, 16},
    {DataType::Float64, "float64", "tensor(double)", nb::dlpack::dtype_code::Float, 64},
    {DataType::Signed8, "int8", "tensor(int8)", nb::dlpack::dtype_code::Int, 8},
    {DataType::QAsymmS8, "int8", "tensor(int8)", nb::dlpack::dtype_code::Int, 8},
    {DataType::QSymmS8, "int8", "tensor(int8)", nb::dlpack::dtype_code::Int, 8},
    {DataType::Signed16, "int16", "tensor(int16)", nb::dlpack::dtype_code::Int, 16},
    {DataType::QSymmS16, "int16", "tensor(int16)", nb::dlpack::dtype_code::Int, 16},
    {DataType::Signed32, "int32", "tensor(int32)", nb::dlpack::dtype_code::Int, 32},
    {DataType::Signed64, "int64", "tensor(int64)", nb::dlpack::dtype_code::Int, 64},
    {DataType::UInt8, "uint8", "tensor(uint8)", nb::dlpack::dtype_code::UInt, 8},
    {DataType::QAsymmU8, "uint8", "tensor(uint8)", nb::dlpack::dtype_code::UInt, 8},
    {DataType::UInt16, "uint16", "tensor(uint16)", nb::dlpack::dtype_code::UInt, 16},
    {DataType::UInt32, "uint32", "tensor(uint32)", nb::dlpack::dtype_code::UInt, 32},
    {DataType::UInt64, "uint64", "tensor(uint64)", nb::dlpack::dtype_code::UInt, 64},
    {DataType::Boolean, "bool", "tensor(bool)", nb::dlpack::dtype_code::Bool, 8},
    {DataType::BFloat16, "float32", "tensor(bfloat16)", nb::dlpack::dtype_code::Bfloat, 16, true},
};

/// float32 -> bfloat16 bits, rounded to nearest even (NaN stays a quiet NaN).
uint16_t FloatToBfloat16(float value) {
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x0040u);
    bits += 0x7fffu + ((bits >> 16) & 1u);
    return static_cast<uint16_t>(bits >> 16);
}

float Bfloat16ToFloat(uint16_t value) {
    const uint32_t bits = static_cast<uint32_t>(value) << 16;
    float result;
    std::memcpy(&result, &bits, sizeof(result));
    return result;
}

const DtypeRow* FindDtype(DataType type) {
    for (const DtypeRow& row : kDtypes) {
        if (row.m_Type == type) return &row;
    }
    return nullptr;
}

/// "float32", or the DLPack code and bits of a dtype numpy does not name.
std::string DescribeDlpackDtype(const nb::dlpack::dtype& d) {
    for (const DtypeRow& row : kDtypes) {
        if (!row.m_Bfloat16AsFloat32 && static_cast<uint8_t>(row.m_Code) == d.code && row.m_Bits == d.bits &&
            d.lanes == 1) {
            return row.m_Numpy;
        }
    }
    if (d.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Bfloat) && d.bits == 16) return "bfloat16";
    if (d.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Complex)) return "complex" + std::to_string(d.bits);
    return "DLPack dtype (code " + std::to_string(d.code) + ", " + std::to_string(d.bits) + " bits, " +
           std::to_string(d.lanes) + " lanes)";
}

// ---- errors ---------------------------------------------------------------------------------

/// A bad input to run()/bench(): becomes trellis.InvalidInputError with these fields.
struct InputError : std::runtime_error {
    InputError(std::string name, std::string expected, std::string got, const std::string& message)
        : std::runtime_error(message), m_Name(std::move(name)), m_Expected(std::move(expected)),
          m_Got(std::move(got)) {}
    std::string m_Name, m_Expected, m_Got;
};

/// A bad session option (backend name, shape): becomes trellis.InvalidArgumentError.
struct OptionError : std::runtime_error { using std::runtime_error::runtime_error; };
/// An unknown or unusable backend: becomes trellis.BackendError.
struct BackendError : std::runtime_error { using std::runtime_error::runtime_error; };

void RaiseAs(const char* className, const char* message) {
    nb::object cls = nb::module_::import_("trellis.errors").attr(className);
    PyErr_SetString(cls.ptr(), message);
}

void TranslateException(const std::exception_ptr& p, void*) {
    try {
        std::rethrow_exception(p);
    } catch (const InputError& e) {
        nb::object cls = nb::module_::import_("trellis.errors").attr("InvalidInputError");
        nb::object error = cls(e.what(), nb::arg("input_name") = e.m_Name, nb::arg("expected") = e.m_Expected,
                               nb::arg("got") = e.m_Got);
        PyErr_SetObject(cls.ptr(), error.ptr());
    } catch (const OptionError& e) {
        RaiseAs("InvalidArgumentError", e.what());
    } catch (const BackendError& e) {
        RaiseAs("BackendError", e.what());
    } catch (const trellis::FileNotFoundException& e) {
        RaiseAs("ModelFileNotFoundError", e.what());
    } catch (const trellis::UnsupportedOperatorException& e) {
        RaiseAs("UnsupportedOperatorError", e.what());
    } catch (const trellis::ParseException& e) {
        RaiseAs("InvalidModelError", e.what());
    } catch (const trellis::LayerValidationException& e) {
        RaiseAs("InvalidModelError", e.what());
    } catch (const trellis::GraphValidationException& e) {
        RaiseAs("InvalidModelError", e.what());
    } catch (const trellis::BackendUnavailableException& e) {
        RaiseAs("BackendError", e.what());
    } catch (const trellis::ResourceLimitException& e) {
        RaiseAs("ResourceLimitError", e.what());
    } catch (const trellis::InvalidArgumentException& e) {
        RaiseAs("InvalidArgumentError", e.what());
    } catch (const trellis::Exception& e) {
        RaiseAs("EngineError", e.what());
    } catch (const std::bad_alloc&) {
        RaiseAs("EngineError", "out of memory (std::bad_alloc)");
    }
    // Anything else propagates to nanobind's own translators (builtins.RuntimeError).
}

// ---- shapes ---------------------------------------------------------------------------------

/// (1, 3, 'batch', 224): the shape as ONNX Runtime prints it, symbolic dims by name.
std::string DescribeShape(const trellis::TensorShape& shape, const std::vector<std::string>& dimNames) {
    std::string text = "(";
    for (unsigned int d = 0; d < shape.GetNumDimensions(); ++d) {
        if (d) text += ", ";
        if (shape[d] != kUnknownDim) {
            text += std::to_string(shape[d]);
        } else {
            const std::string name = d < dimNames.size() && !dimNames[d].empty() ? dimNames[d] : "?";
            text += "'" + name + "'";
        }
    }
    if (shape.GetNumDimensions() == 1) text += ",";
    return text + ")";
}

std::string DescribeShape(const std::vector<std::size_t>& shape) {
    std::string text = "(";
    for (std::size_t d = 0; d < shape.size(); ++d) text += (d ? ", " : "") + std::to_string(shape[d]);
    if (shape.size() == 1) text += ",";
    return text + ")";
}

/// True when the elements lie in C order without gaps (a dim of size 1 may have any stride; an
/// empty array needs none).
bool IsCContiguous(const nb::ndarray<nb::ro, nb::device::cpu>& array) {
    int64_t expected = 1;
    for (std::size_t d = array.ndim(); d-- > 0;) {
        if (array.shape(d) == 0) return true;  // empty: nothing to read
        if (array.shape(d) != 1 && array.stride(d) != expected) return false;
        expected *= static_cast<int64_t>(array.shape(d));
    }
    return true;
}

/// Copies a strided array into `out` in C order (element size `itemSize`).
void CopyToCOrder(const nb::ndarray<nb::ro, nb::device::cpu>& array, std::size_t itemSize, uint8_t* out) {
    const std::size_t ndim = array.ndim();
    const auto* base = static_cast<const uint8_t*>(array.data());
    std::vector<std::size_t> index(ndim, 0);
    const std::size_t count = array.size();
    for (std::size_t n = 0; n < count; ++n) {
        int64_t offset = 0;
        for (std::size_t d = 0; d < ndim; ++d) offset += static_cast<int64_t>(index[d]) * array.stride(d);
        std::memcpy(out + n * itemSize, base + offset * static_cast<int64_t>(itemSize), itemSize);
        for (std::size_t d = ndim; d-- > 0;) {
            if (++index[d] < array.shape(d)) break;
            index[d] = 0;
        }
    }
}

double MsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

trellis::BackendIdVector DefaultBackends() {
    if (trellis::BackendRegistryInstance().IsBackendRegistered("CpuAcc")) return {"CpuAcc", "CpuRef"};
    return {"CpuRef"};
}

// ---- the session ----------------------------------------------------------------------------

/// The inputs of one run, bound: the arrays are kept alive (and copies held) until it ends.
struct BoundInputs {
    std::vector<nb::ndarray<nb::ro, nb::device::cpu>> m_Arrays;
    std::vector<std::unique_ptr<uint8_t[]>> m_Copies;
    trellis::InputTensors m_Tensors;
};

class Session {
public:
    Session(nb::object model, std::optional<std::vector<std::string>> backends,
            std::map<std::string, std::map<std::string, std::string>> backendOptions,
            std::map<std::string, std::vector<int64_t>> shapes, std::string dynamicBackendsPath,
            std::size_t maxTensorBytes, std::size_t maxWorkingMemoryBytes) {
        std::string modelBytes;
        bool fromBytes = false;
        if (nb::isinstance<nb::bytes>(model)) {
            nb::bytes b = nb::borrow<nb::bytes>(model);
            modelBytes.assign(b.c_str(), b.size());
            fromBytes = true;
            m_ModelName = "<model bytes>";
        } else if (nb::isinstance<nb::str>(model)) {
            m_ModelName = nb::cast<std::string>(model);
        } else {
            throw OptionError("InferenceSession: the model must be a path (str or os.PathLike) or the bytes of an "
                              "ONNX ModelProto, got " + std::string(nb::type_name(model.type()).c_str()));
        }
        trellis::IOnnxParser::Options parseOptions;
        for (const auto& [name, dims] : shapes) {
            std::vector<unsigned int> fixed;
            for (int64_t d : dims) {
                if (d < 0 || d >= static_cast<int64_t>(kUnknownDim)) {
                    throw OptionError("shapes['" + name + "']: dim " + std::to_string(d) +
                                      " is not a size (each dim must be in [0, 2^32-1))");
                }
                fixed.push_back(static_cast<unsigned int>(d));
            }
            parseOptions.m_InputShapes[name] = trellis::TensorShape(fixed);
        }

        nb::gil_scoped_release release;
        trellis::IRuntime::CreationOptions creation;
        creation.m_DynamicBackendsPath = dynamicBackendsPath;
        for (const auto& [id, values] : backendOptions) {
            for (const auto& [name, value] : values) creation.m_BackendOptions[BackendId(id)][name] = value;
        }
        m_Runtime = trellis::IRuntime::Create(creation);
        if (!m_Runtime) throw trellis::RuntimeException("could not create the Trellis runtime");
        m_Warnings = m_Runtime->GetBackendOptionWarnings();

        if (backends) {
            if (backends->empty()) throw OptionError("InferenceSession: backends is empty; name at least one");
            for (const std::string& b : *backends) m_Backends.emplace_back(b);
        } else {
            m_Backends = DefaultBackends();
        }
        CheckBackendsRegistered();

        trellis::IOnnxParserPtr parser = trellis::IOnnxParser::Create();
        trellis::INetworkPtr network{nullptr, &trellis::INetwork::Destroy};
        if (fromBytes) {
            network = parser->CreateNetworkFromBinary(modelBytes, std::filesystem::current_path().string(),
                                                      parseOptions);
        } else {
            if (std::filesystem::is_directory(m_ModelName)) {
                throw trellis::ParseException("model file '" + m_ModelName + "' is a directory, not an .onnx file");
            }
            if (!std::filesystem::exists(m_ModelName)) {
                throw trellis::FileNotFoundException("model file '" + m_ModelName + "' does not exist");
            }
            network = parser->CreateNetworkFromBinaryFile(m_ModelName, parseOptions);
        }
        if (!network) throw trellis::ParseException("model '" + m_ModelName + "' gave no network");
        m_Inputs = parser->GetInputs();
        m_Outputs = parser->GetOutputs();
        m_Opset = parser->GetOpsetVersion();
        CheckBoundaryTypes();

        trellis::OptimizerOptions optimizerOptions;
        optimizerOptions.m_MaxTensorBytes = maxTensorBytes;
        optimizerOptions.m_MaxWorkingMemoryBytes = maxWorkingMemoryBytes;
        std::vector<std::string> messages;
        trellis::IOptimizedNetworkPtr optimized =
            trellis::Optimize(*network, m_Backends, m_Runtime->GetDeviceSpec(), optimizerOptions, &messages);
        if (!optimized) {
            std::string text = "optimizing '" + m_ModelName + "' failed";
            for (const std::string& m : messages) text += ": " + m;
            throw trellis::RuntimeException(text);
        }
        m_Warnings.insert(m_Warnings.end(), messages.begin(), messages.end());
        m_Placements = optimized->GetLayerPlacements();
        m_LayerCounts = optimized->GetBackendLayerCounts();
        m_OptimizationLog = optimized->GetOptimizationLog();
        std::string error;
        if (m_Runtime->LoadNetwork(m_NetworkId, std::move(optimized), error) != trellis::Status::Success) {
            throw trellis::RuntimeException("loading '" + m_ModelName + "' failed: " +
                                            (error.empty() ? std::string("no reason given") : error));
        }
        m_Dynamic = m_Runtime->IsDynamic(m_NetworkId);
        for (BindingPointInfo& input : m_Inputs) {
            input.m_TensorInfo = m_Runtime->GetInputTensorInfo(m_NetworkId, input.m_BindingId);
        }
        if (!m_Dynamic) {
            for (BindingPointInfo& output : m_Outputs) {
                output.m_TensorInfo = m_Runtime->GetOutputTensorInfo(m_NetworkId, output.m_BindingId);
            }
        }
    }

    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    ~Session() {
        if (m_Runtime) m_Runtime->UnloadNetwork(m_NetworkId);
    }

    /// [(name, shape, numpy dtype, ORT type)]: shape entries are ints or the symbolic dim's name.
    nb::list Inputs() const { return DescribeBindings(m_Inputs); }
    nb::list Outputs() const { return DescribeBindings(m_Outputs); }

    nb::list Run(std::optional<std::vector<std::string>> outputNames, nb::dict feed) {
        const std::vector<std::size_t> wanted = SelectOutputs(outputNames);
        BoundInputs inputs = BindInputs(feed);
        std::vector<trellis::TensorInfo> infos;
        std::vector<nb::object> arrays;
        if (m_Dynamic) {
            nb::gil_scoped_release release;
            infos = DynamicOutputInfos(inputs.m_Tensors);
        } else {
            for (const BindingPointInfo& output : m_Outputs) infos.push_back(output.m_TensorInfo);
        }
        std::vector<WidenedOutput> widened;
        trellis::OutputTensors outputs = AllocateOutputs(infos, arrays, widened);
        {
            nb::gil_scoped_release release;
            Enqueue(inputs.m_Tensors, outputs);
            WidenOutputs(widened);
        }
        nb::list result;
        for (std::size_t index : wanted) result.append(arrays[index]);
        return result;
    }

    /// Times `iterations` runs (after `warmup` untimed ones) on one set of inputs and outputs,
    /// without the GIL: the engine's time, without Python's per-call cost.
    nb::dict Bench(nb::dict feed, unsigned int iterations, unsigned int warmup) {
        if (iterations == 0) throw OptionError("bench: iterations must be at least 1");
        BoundInputs inputs = BindInputs(feed);
        std::vector<trellis::TensorInfo> infos;
        std::vector<nb::object> arrays;
        if (m_Dynamic) {
            nb::gil_scoped_release release;
            infos = DynamicOutputInfos(inputs.m_Tensors);
        } else {
            for (const BindingPointInfo& output : m_Outputs) infos.push_back(output.m_TensorInfo);
        }
        std::vector<WidenedOutput> widened;
        trellis::OutputTensors outputs = AllocateOutputs(infos, arrays, widened);
        std::vector<double> times;
        {
            nb::gil_scoped_release release;
            for (unsigned int i = 0; i < warmup; ++i) Enqueue(inputs.m_Tensors, outputs);
            for (unsigned int i = 0; i < iterations; ++i) {
                const auto start = std::chrono::steady_clock::now();
                Enqueue(inputs.m_Tensors, outputs);
                times.push_back(MsSince(start));
            }
        }
        std::vector<double> sorted = times;
        std::sort(sorted.begin(), sorted.end());
        auto percentile = [&](double p) {
            const std::size_t i = static_cast<std::size_t>(p * static_cast<double>(sorted.size() - 1) + 0.5);
            return sorted[std::min(i, sorted.size() - 1)];
        };
        double sum = 0.0;
        for (double t : times) sum += t;
        nb::dict result;
        result["iterations"] = iterations;
        result["warmup"] = warmup;
        result["min_ms"] = sorted.front();
        result["median_ms"] = percentile(0.5);
        result["p90_ms"] = percentile(0.9);
        result["max_ms"] = sorted.back();
        result["mean_ms"] = sum / static_cast<double>(times.size());
        result["times_ms"] = times;
        return result;
    }

    nb::dict Inspect() const {
        nb::dict result;
        result["model"] = m_ModelName;
        result["opset"] = m_Opset;
        nb::list backends;
        for (const BackendId& b : m_Backends) backends.append(b.Get());
        result["backends"] = backends;
        result["dynamic"] = m_Dynamic;
        nb::dict counts;
        for (const auto& [id, count] : m_LayerCounts) counts[id.Get().c_str()] = count;
        result["layer_counts"] = counts;
        nb::list layers;
        for (const trellis::LayerPlacement& p : m_Placements) {
            nb::dict layer;
            layer["name"] = p.m_LayerName;
            layer["op"] = p.m_OpDetail.empty() ? std::string(trellis::GetLayerTypeName(p.m_Type)) : p.m_OpDetail;
            layer["backend"] = p.m_Backend.Get();
            nb::list outputs;
            for (const trellis::TensorInfo& info : p.m_Outputs) outputs.append(info.ToString());
            layer["outputs"] = outputs;
            nb::dict declined;
            for (const auto& [id, reason] : p.m_Declined) declined[id.Get().c_str()] = reason;
            layer["declined"] = declined;
            layer["substituted"] = p.m_SubstitutedLayers;
            layers.append(layer);
        }
        result["layers"] = layers;
        result["optimization_log"] = m_OptimizationLog;
        result["warnings"] = m_Warnings;
        result["peak_working_memory_bytes"] = m_Runtime->GetPeakWorkingMemoryBytes(m_NetworkId);
        return result;
    }

    uint64_t CopiedInputs() const { return m_CopiedInputs.load(); }
    bool IsDynamic() const { return m_Dynamic; }

private:
    std::string InputNames() const {
        std::string text;
        for (const BindingPointInfo& b : m_Inputs) text += (text.empty() ? "'" : ", '") + b.m_Name + "'";
        return text.empty() ? "none" : text;
    }

    void CheckBackendsRegistered() const {
        const trellis::BackendRegistry& registry = trellis::BackendRegistryInstance();
        for (const BackendId& id : m_Backends) {
            if (registry.IsBackendRegistered(id)) continue;
            std::string why;
            for (const trellis::DynamicBackendStatus& s : m_Runtime->GetDynamicBackendStatus()) {
                if (!s.m_Loaded && s.m_Id == id) {
                    why += "; dynamic backend file '" + s.m_Path + "' was skipped: " + s.m_Reason;
                }
            }
            for (const std::string& warning : m_Runtime->GetDynamicBackendWarnings()) why += "; " + warning;
            throw BackendError("unknown backend '" + id.Get() + "' in backends: registered backends are " +
                               registry.GetBackendIdsAsString() + why);
        }
    }

    /// Graph inputs and outputs must have a numpy dtype (bfloat16, float8, int4 ... have none).
    void CheckBoundaryTypes() const {
        auto check = [&](const std::vector<BindingPointInfo>& bindings, const char* what) {
            for (const BindingPointInfo& b : bindings) {
                if (!FindDtype(b.m_TensorInfo.GetDataType())) {
                    throw trellis::InvalidArgumentException(
                        "model '" + m_ModelName + "': " + what + " '" + b.m_Name + "' has type " +
                        trellis::GetDataTypeName(b.m_TensorInfo.GetDataType()) +
                        ", which has no numpy dtype (the Python package takes and gives float16/32/64, "
                        "int8/16/32/64, uint8/16/32/64, bool, and bfloat16 as float32)");
                }
            }
        };
        check(m_Inputs, "input");
        check(m_Outputs, "output");
    }

    nb::list DescribeBindings(const std::vector<BindingPointInfo>& bindings) const {
        nb::list list;
        for (const BindingPointInfo& b : bindings) {
            const trellis::TensorShape& shape = b.m_TensorInfo.GetShape();
            nb::list dims;
            for (unsigned int d = 0; d < shape.GetNumDimensions(); ++d) {
                if (shape[d] != kUnknownDim) {
                    dims.append(shape[d]);
                } else if (d < b.m_DimNames.size() && !b.m_DimNames[d].empty() && b.m_DimNames[d] != "?") {
                    dims.append(b.m_DimNames[d]);
                } else {
                    dims.append(nb::none());
                }
            }
            const DtypeRow* row = FindDtype(b.m_TensorInfo.GetDataType());
            list.append(nb::make_tuple(b.m_Name, dims, row->m_Numpy, row->m_OrtType));
        }
        return list;
    }

    std::vector<std::size_t> SelectOutputs(const std::optional<std::vector<std::string>>& names) const {
        std::vector<std::size_t> wanted;
        if (!names || names->empty()) {
            for (std::size_t i = 0; i < m_Outputs.size(); ++i) wanted.push_back(i);
            return wanted;
        }
        for (const std::string& name : *names) {
            auto it = std::find_if(m_Outputs.begin(), m_Outputs.end(),
                                   [&](const BindingPointInfo& b) { return b.m_Name == name; });
            if (it == m_Outputs.end()) {
                std::string known;
                for (const BindingPointInfo& b : m_Outputs) known += (known.empty() ? "'" : ", '") + b.m_Name + "'";
                throw OptionError("run: '" + name + "' is not an output of the model (outputs: " + known + ")");
            }
            wanted.push_back(static_cast<std::size_t>(it - m_Outputs.begin()));
        }
        return wanted;
    }

    BoundInputs BindInputs(nb::dict feed) {
        for (auto [key, value] : feed) {
            if (!nb::isinstance<nb::str>(key)) {
                throw InputError("", "str", nb::type_name(key.type()).c_str(),
                                 "input_feed: keys must be input names (str), got a " +
                                     std::string(nb::type_name(key.type()).c_str()));
            }
            const std::string name = nb::cast<std::string>(key);
            const bool known = std::any_of(m_Inputs.begin(), m_Inputs.end(),
                                           [&](const BindingPointInfo& b) { return b.m_Name == name; });
            if (!known) {
                throw InputError(name, InputNames(), "unknown input",
                                 "input '" + name + "' is not an input of the model (inputs: " + InputNames() + ")");
            }
        }
        BoundInputs bound;
        for (const BindingPointInfo& input : m_Inputs) {
            const DtypeRow* row = FindDtype(input.m_TensorInfo.GetDataType());
            const trellis::TensorShape& want = input.m_TensorInfo.GetShape();
            const std::string wantShape = DescribeShape(want, input.m_DimNames);
            if (!feed.contains(input.m_Name.c_str())) {
                throw InputError(input.m_Name, std::string(row->m_Numpy) + " " + wantShape, "missing",
                                 "input '" + input.m_Name + "' is missing from input_feed (the model needs " +
                                     std::string(row->m_Numpy) + " " + wantShape + ")");
            }
            nb::object value = feed[input.m_Name.c_str()];
            nb::ndarray<nb::ro, nb::device::cpu> array;
            if (!nb::try_cast(value, array, false)) {
                const std::string got = nb::type_name(value.type()).c_str();
                throw InputError(input.m_Name, "numpy.ndarray or DLPack tensor on the CPU", got,
                                 "input '" + input.m_Name + "': expected a numpy array or a CPU tensor with "
                                 "__dlpack__ (a torch tensor: detached, on the CPU), got " + got);
            }
            const nb::dlpack::dtype dtype = array.dtype();
            // A bfloat16 input also takes uint16 arrays as its bit patterns (ONNX's test data stores
            // bfloat16 tensors that way), in place.
            const bool exact = (dtype.code == static_cast<uint8_t>(row->m_Code) && dtype.bits == row->m_Bits &&
                                dtype.lanes == 1) ||
                               (row->m_Bfloat16AsFloat32 && dtype == nb::dtype<uint16_t>());
            const bool bfloat16FromFloat32 = row->m_Bfloat16AsFloat32 && dtype == nb::dtype<float>();
            if (!exact && !bfloat16FromFloat32) {
                const std::string got = DescribeDlpackDtype(dtype);
                const std::string expected =
                    row->m_Bfloat16AsFloat32 ? "float32 (or a bfloat16 tensor, or uint16 bfloat16 bits)" : row->m_Numpy;
                throw InputError(input.m_Name, expected, got,
                                 "input '" + input.m_Name + "': dtype " + got + " does not match the model's " +
                                     expected + " (convert it, e.g. with .astype(numpy." + row->m_Numpy + "))");
            }
            std::vector<std::size_t> gotDims(array.ndim());
            for (std::size_t d = 0; d < array.ndim(); ++d) gotDims[d] = array.shape(d);
            bool fits = gotDims.size() == want.GetNumDimensions();
            for (std::size_t d = 0; fits && d < gotDims.size(); ++d) {
                fits = want[static_cast<unsigned int>(d)] == kUnknownDim ||
                       want[static_cast<unsigned int>(d)] == gotDims[d];
            }
            for (std::size_t d = 0; fits && d < gotDims.size(); ++d) fits = gotDims[d] < kUnknownDim;
            if (!fits) {
                const std::string got = DescribeShape(gotDims);
                throw InputError(input.m_Name, wantShape, got,
                                 "input '" + input.m_Name + "': shape " + got + " does not match the model's " +
                                     wantShape);
            }
            std::vector<unsigned int> dims(gotDims.begin(), gotDims.end());
            trellis::TensorInfo info(trellis::TensorShape(dims), input.m_TensorInfo.GetDataType(),
                                     input.m_TensorInfo.GetQuantizationScale(),
                                     input.m_TensorInfo.GetQuantizationOffset());
            const void* data = array.data();
            if (!IsCContiguous(array)) {
                auto copy = std::make_unique<uint8_t[]>(std::max<std::size_t>(array.nbytes(), 1));
                CopyToCOrder(array, dtype.bits / 8, copy.get());
                data = copy.get();
                bound.m_Copies.push_back(std::move(copy));
            }
            if (bfloat16FromFloat32) {
                auto rounded = std::make_unique<uint8_t[]>(std::max<std::size_t>(array.size() * 2, 1));
                const auto* from = static_cast<const float*>(data);
                auto* to = reinterpret_cast<uint16_t*>(rounded.get());
                for (std::size_t n = 0; n < array.size(); ++n) to[n] = FloatToBfloat16(from[n]);
                data = rounded.get();
                bound.m_Copies.push_back(std::move(rounded));
            }
            if (data != array.data()) m_CopiedInputs.fetch_add(1);
            info.SetConstant(true);
            bound.m_Tensors.emplace_back(input.m_BindingId, trellis::ConstTensor(info, data));
            bound.m_Arrays.push_back(std::move(array));
        }
        return bound;
    }

    std::vector<trellis::TensorInfo> DynamicOutputInfos(const trellis::InputTensors& inputs) {
        std::vector<trellis::TensorInfo> infos;
        for (const BindingPointInfo& output : m_Outputs) {
            infos.push_back(m_Runtime->GetOutputTensorInfo(m_NetworkId, output.m_BindingId, inputs));
        }
        return infos;
    }

    /// A bfloat16 output: the engine writes m_Staging, WidenOutputs() fills the float32 array.
    struct WidenedOutput {
        std::unique_ptr<uint16_t[]> m_Staging;
        float* m_Destination = nullptr;
        std::size_t m_Count = 0;
    };

    /// numpy.empty per output (with the GIL); `arrays` keeps them, the result binds their memory
    /// (or, for a bfloat16 output, a staging buffer in `widened`).
    trellis::OutputTensors AllocateOutputs(const std::vector<trellis::TensorInfo>& infos,
                                           std::vector<nb::object>& arrays, std::vector<WidenedOutput>& widened) {
        // Kept for the life of the process: a static nb::object would be released after the
        // interpreter has finalized.
        static nb::handle empty = nb::object(nb::module_::import_("numpy").attr("empty")).release();
        trellis::OutputTensors outputs;
        for (std::size_t i = 0; i < infos.size(); ++i) {
            const trellis::TensorInfo& info = infos[i];
            const DtypeRow* row = FindDtype(info.GetDataType());
            if (!row) {
                throw trellis::InvalidArgumentException("output '" + m_Outputs[i].m_Name + "' has type " +
                                                        trellis::GetDataTypeName(info.GetDataType()) +
                                                        ", which has no numpy dtype");
            }
            nb::list shape;
            for (unsigned int d = 0; d < info.GetNumDimensions(); ++d) shape.append(info.GetShape()[d]);
            nb::object array = empty(nb::tuple(shape), row->m_Numpy);
            auto view = nb::cast<nb::ndarray<nb::device::cpu, nb::c_contig>>(array);
            void* data = view.data();
            if (row->m_Bfloat16AsFloat32) {
                WidenedOutput w;
                w.m_Count = info.GetNumElements();
                w.m_Staging = std::make_unique<uint16_t[]>(std::max<std::size_t>(w.m_Count, 1));
                w.m_Destination = static_cast<float*>(data);
                data = w.m_Staging.get();
                widened.push_back(std::move(w));
            }
            outputs.emplace_back(m_Outputs[i].m_BindingId, trellis::Tensor(info, data));
            arrays.push_back(std::move(array));
        }
        return outputs;
    }

    static void WidenOutputs(const std::vector<WidenedOutput>& widened) {
        for (const WidenedOutput& w : widened) {
            for (std::size_t n = 0; n < w.m_Count; ++n) w.m_Destination[n] = Bfloat16ToFloat(w.m_Staging[n]);
        }
    }

    void Enqueue(const trellis::InputTensors& inputs, const trellis::OutputTensors& outputs) {
        if (m_Runtime->EnqueueWorkload(m_NetworkId, inputs, outputs) != trellis::Status::Success) {
            throw trellis::RuntimeException("running '" + m_ModelName + "' failed (EnqueueWorkload returned Failure)");
        }
    }

    std::string m_ModelName;
    trellis::IRuntimePtr m_Runtime{nullptr, &trellis::IRuntime::Destroy};
    trellis::NetworkId m_NetworkId = 0;
    trellis::BackendIdVector m_Backends;
    std::vector<BindingPointInfo> m_Inputs;
    std::vector<BindingPointInfo> m_Outputs;
    int64_t m_Opset = 0;
    bool m_Dynamic = false;
    std::vector<trellis::LayerPlacement> m_Placements;
    std::map<BackendId, unsigned int> m_LayerCounts;
    std::vector<std::string> m_OptimizationLog;
    std::vector<std::string> m_Warnings;
    std::atomic<uint64_t> m_CopiedInputs{0};
};

/// The registered backends and the dynamic-backend report of a runtime created with `path`.
nb::dict ListBackends(std::string path) {
    trellis::IRuntime::CreationOptions creation;
    creation.m_DynamicBackendsPath = path;
    trellis::IRuntimePtr runtime = trellis::IRuntime::Create(creation);
    if (!runtime) throw trellis::RuntimeException("could not create the Trellis runtime");
    const trellis::BackendRegistry& registry = trellis::BackendRegistryInstance();
    const std::vector<trellis::DynamicBackendStatus> files = runtime->GetDynamicBackendStatus();
    nb::list registered;
    for (const BackendId& id : registry.GetBackendIds()) {
        nb::dict entry;
        entry["id"] = id.Get();
        entry["origin"] = registry.GetOrigin(id);
        std::string reason;
        bool available = false;
        try {
            available = registry.IsBackendAvailable(id, &reason);
        } catch (const std::exception& e) {
            reason = e.what();
        }
        entry["available"] = available;
        entry["unavailable_reason"] = reason;
        entry["backend_api"] = registry.GetApiVersion(id).ToString();
        registered.append(entry);
    }
    nb::list dynamic;
    for (const trellis::DynamicBackendStatus& s : files) {
        nb::dict entry;
        entry["path"] = s.m_Path;
        entry["canonical_path"] = s.m_CanonicalPath;
        entry["id"] = s.m_Id.Get();
        entry["backend_api"] = s.m_Version.ToString();
        entry["loaded"] = s.m_Loaded;
        entry["reason"] = s.m_Reason;
        dynamic.append(entry);
    }
    nb::dict result;
    result["engine_backend_api"] = trellis::kBackendApiVersion.ToString();
    result["registered"] = registered;
    result["dynamic_backend_files"] = dynamic;
    result["dynamic_backend_warnings"] = runtime->GetDynamicBackendWarnings();
    result["default"] = [] {
        std::vector<std::string> ids;
        for (const BackendId& id : DefaultBackends()) ids.push_back(id.Get());
        return ids;
    }();
    return result;
}

}  // namespace

NB_MODULE(_trellis, m) {
    m.doc() = "The compiled core of the trellis package; use the trellis module's API instead.";
    m.attr("__version__") = TRELLIS_VERSION;
    m.attr("HIGHEST_SUPPORTED_OPSET") = trellis::IOnnxParser::kHighestSupportedOpset;
    nb::register_exception_translator(&TranslateException);

    nb::class_<Session>(m, "Session", "One loaded network; see trellis.InferenceSession.")
        .def(nb::init<nb::object, std::optional<std::vector<std::string>>,
                      std::map<std::string, std::map<std::string, std::string>>,
                      std::map<std::string, std::vector<int64_t>>, std::string, std::size_t, std::size_t>(),
             nb::arg("model"), nb::arg("backends").none(), nb::arg("backend_options"), nb::arg("shapes"),
             nb::arg("dynamic_backends_path"), nb::arg("max_tensor_bytes"), nb::arg("max_working_memory_bytes"))
        .def("inputs", &Session::Inputs)
        .def("outputs", &Session::Outputs)
        .def("run", &Session::Run, nb::arg("output_names").none(), nb::arg("input_feed"))
        .def("bench", &Session::Bench, nb::arg("input_feed"), nb::arg("iterations"), nb::arg("warmup"))
        .def("inspect", &Session::Inspect)
        .def_prop_ro("copied_inputs", &Session::CopiedInputs)
        .def_prop_ro("dynamic", &Session::IsDynamic);

    m.def("backends", &ListBackends, nb::arg("dynamic_backends_path"));
    m.def("supported_operators", &trellis::IOnnxParser::GetSupportedOperators);
}
