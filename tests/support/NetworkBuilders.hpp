// Networks built layer by layer for the GoogleTest executables (trellis_test_support): the
// builder the op validation tests share, running what it built, and the checks of what
// Optimize() and a run refuse.
#pragma once

#include <trellis/TensorIO.hpp>
#include <trellis/Trellis.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace trellis::test {

/// A network built layer by layer for validation tests: inputs with given infos, constants, and
/// layers whose outputs become network outputs (bindings 0, 1, ... in creation order), with the
/// runtime whose device spec Optimize() needs.
struct LayerTestNetwork {
    INetworkPtr m_Net = INetwork::Create();
    IRuntimePtr m_Runtime = IRuntime::Create(IRuntime::CreationOptions());
    int m_NextInput = 0;
    int m_NextOutput = 0;

    IOutputSlot& Input(const TensorShape& shape, DataType type = DataType::Float32);
    /// A constant of `type` holding `bytes` (copied by the network).
    IOutputSlot& Constant(const TensorShape& shape, DataType type, const void* bytes);
    IOutputSlot& ConstInts(const std::vector<int64_t>& values, TensorShape shape);
    /// A 1-D Signed64 constant (shapes, axes, pads, sizes, ...).
    IOutputSlot& ConstInts(const std::vector<int64_t>& values);
    IOutputSlot& ConstFloats(const std::vector<float>& values, TensorShape shape);
    /// A Float32 constant of `shape` with every element `value`.
    IOutputSlot& ConstFilled(const TensorShape& shape, float value = 0.5f);
    /// A Float32 scalar constant.
    IOutputSlot& ScalarFloat(float value);
    /// Adds the layer (numOutputs -1: the op's default), feeds it `inputs` in order and sends its
    /// first `boundOutputs` outputs (-1: every output) to Output layers.
    IConnectableLayer* Layer(LayerType type, const LayerDescriptor& d, const char* name, std::vector<IOutputSlot*> inputs,
                             int numOutputs = -1, int boundOutputs = -1);
    /// Optimized for CpuRef.
    IOptimizedNetworkPtr Optimize();

    /// The output infos the optimizer inferred for layer `name` (a layer whose inputs are all
    /// constant is folded into a Constant named "name" or "name_1"); a test failure when absent.
    std::vector<TensorInfo> OutputsOf(const IOptimizedNetwork& opt, const std::string& name) const;
    /// The first of OutputsOf() (an empty TensorInfo when absent).
    TensorInfo OutputOf(const IOptimizedNetwork& opt, const std::string& name) const;
};

/// Expects `what` to throw a trellis::Exception whose message names `layerName` and contains `rule`.
template <typename F>
void ExpectThrowsNaming(F&& what, const std::string& layerName, const std::string& rule) {
    try {
        what();
        ADD_FAILURE() << "'" << layerName << "' was accepted; expected: " << rule;
    } catch (const trellis::Exception& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find(layerName), std::string::npos) << "message does not name the layer: " << msg;
        EXPECT_NE(msg.find(rule), std::string::npos) << "message does not state the rule '" << rule << "': " << msg;
    }
}

/// Optimize() must throw a trellis::Exception whose message names `layerName` and states `rule`.
/// `Network` is any test builder with an Optimize().
template <typename Network>
void ExpectRejected(Network& n, const std::string& layerName, const std::string& rule) {
    ExpectThrowsNaming([&] { n.Optimize(); }, layerName, rule);
}

/// A parameter of `layerName` fed by a graph input: Optimize() defers the network (its log names
/// the layer and `parameter`, e.g. "input 1 (frame_step)") and it loads as a dynamic network,
/// optimized for each run's values.
void ExpectOptimizeDefers(LayerTestNetwork& n, const std::string& layerName, const std::string& parameter);

/// `network` as the shared, immutable network a LoopDescriptor's or IfDescriptor's body is.
std::shared_ptr<const INetwork> ShareNetwork(INetworkPtr network);

/// Runs loaded network `id` of `runtime` once with `in`; returns its outputs of bindings 0, 1, ...,
/// numOutputs - 1 (each output's info from the runtime, for these inputs). Throws a
/// RuntimeException when EnqueueWorkload does not succeed.
std::vector<OwnedTensor> RunNetwork(IRuntime& runtime, NetworkId id, const InputTensors& in, std::size_t numOutputs);

/// Loads the network and runs it with `inputs` (one tensor per input binding, in order); returns
/// every output (bindings 0, 1, ...). Exceptions propagate.
std::vector<OwnedTensor> RunLayerTestNetwork(LayerTestNetwork& n, const std::vector<OwnedTensor>& inputs);

/// The run must throw a RuntimeException whose message names `layerName` and states `rule`.
void ExpectRunThrows(LayerTestNetwork& n, const std::vector<OwnedTensor>& inputs, const std::string& layerName,
                     const std::string& rule);

/// Loads the network (which must succeed) and runs it once with `inputs` (one buffer per input
/// binding, in order); the run must throw a RuntimeException naming `layerName` and `rule`.
void ExpectRunFails(LayerTestNetwork& n, const std::vector<std::pair<TensorInfo, const void*>>& inputs,
                    const std::string& layerName, const std::string& rule);

/// An OwnedTensor of `shape` and `type` holding `values` (their bytes, copied as they are).
template <typename T>
OwnedTensor MakeTensor(const TensorShape& shape, DataType type, const std::vector<T>& values) {
    OwnedTensor t;
    t.m_Info = TensorInfo(shape, type);
    t.m_Data.resize(values.size() * sizeof(T));
    std::memcpy(t.m_Data.data(), values.data(), t.m_Data.size());
    return t;
}

}  // namespace trellis::test
