// trellis CLI: making, checking and summarising tensors.
//
// Contract: every DataType of Types.hpp is handled; random data is a pure function of the seed
// and the order of calls (std::mt19937), so `--seed N` reproduces a run exactly.
#pragma once

#include <trellis/OnnxParser.hpp>
#include <trellis/TensorIO.hpp>
#include <trellis/Trellis.hpp>

#include "Args.hpp"

#include <map>
#include <ostream>
#include <random>
#include <string>
#include <vector>

namespace trellis::cli {

/// Float32/Float16/BFloat16/Float64.
bool IsFloatType(DataType type);

/// ONNX's test data stores bfloat16 tensors as UINT16 TensorProtos (the same 16 bits): a UInt16
/// tensor read from a file that feeds (or checks) a BFloat16 tensor is retyped as BFloat16.
void TakeUInt16AsBFloat16(TensorInfo& file, DataType expected);

/// A tensor of `info` filled with random data: floats uniform in [-1, 1), integer and quantized
/// types uniform in [0, 10) (stored values), Boolean uniform in {0, 1}.
OwnedTensor MakeRandomTensor(const std::string& name, const TensorInfo& info, std::mt19937& rng);

/// A zero-filled tensor of `info` (output buffers).
OwnedTensor MakeZeroTensor(const std::string& name, const TensorInfo& info);

/// Element `index` as a double (quantized types: the stored integer, not dequantized).
double ElementAsDouble(const OwnedTensor& tensor, std::size_t index);

/// Element `index` as text: floats with `significantDigits` significant digits ("%g"), integers
/// exactly (Signed64 too).
std::string FormatElement(const OwnedTensor& tensor, std::size_t index, int significantDigits = 6);

/// The report lines of one output: "  values: ... " and, for float types, "  min ... max ... mean ...".
std::string SummariseValues(const OwnedTensor& tensor, std::size_t maxValues = 8);

/// Throws UsageError when `info` (the runtime's info of `input`) has dims decided at run time:
/// random data cannot be made for it; the message names those dims and the options that help.
void RequireKnownShape(const BindingPointInfo& input, const TensorInfo& info);

/// Random inputs for every graph input, in graph order, with the runtime's infos (one generator
/// seeded with `seed`, drawn from input by input). Throws as RequireKnownShape does.
std::vector<OwnedTensor> MakeRandomInputs(const IRuntime& runtime, NetworkId id,
                                          const std::vector<BindingPointInfo>& inputs, uint32_t seed);

/// Zero-filled output buffers, in graph order, named after the outputs, with the infos the
/// runtime gives for running with `inputs` (a dynamic network is specialized for them here).
std::vector<OwnedTensor> MakeOutputBuffers(IRuntime& runtime, NetworkId id,
                                           const std::vector<BindingPointInfo>& outputs, const InputTensors& inputs);

/// "x Float32 1x3x224x224, mask Boolean 7": the shapes a run uses.
std::string DescribeInputs(const std::vector<OwnedTensor>& inputs);

/// "Float32 1x3x224x224"
std::string DescribeInfo(const TensorInfo& info);

/// Where a run's inputs come from: --input NAME=FILE (repeatable) and --input-dir DIR.
struct InputSources {
    std::map<std::string, std::string> m_Files;  ///< input name -> file
    std::string m_Directory;                     ///< DIR/input_<i>.pb, "" when not given
};
/// Reads --input and --input-dir (UsageError for a name given twice or an empty directory;
/// FileNotFoundException for a directory that does not exist).
InputSources ReadInputSources(const ParsedArgs& args);
/// InvalidArgumentException when --input names something that is not a graph input of the model.
void CheckInputNames(const InputSources& sources, const std::vector<BindingPointInfo>& inputs,
                     const std::string& modelPath);
/// The inputs of one run, in graph order, with the runtime's infos: from the files given (held
/// to the input's type and shape; dims the network leaves to the run take the file's size), else
/// random data (one generator seeded with `seed`, drawn input by input; a 'note:' line on `notes`
/// names each).
std::vector<OwnedTensor> GatherInputs(const IRuntime& runtime, NetworkId id, const std::vector<BindingPointInfo>& inputs,
                                      const InputSources& sources, uint32_t seed, std::ostream& notes);

/// Binds `tensors[i]` to `bindings[i]`'s binding id.
InputTensors BindInputs(const std::vector<BindingPointInfo>& bindings, const std::vector<OwnedTensor>& tensors);
OutputTensors BindOutputs(const std::vector<BindingPointInfo>& bindings, std::vector<OwnedTensor>& tensors);

}  // namespace trellis::cli
