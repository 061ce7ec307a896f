// A small network built through the public API for a backend's own tests: loaded and run on a
// list of backends with fixed, seeded inputs, so that a test can compare the outputs of the
// backend under test with CpuRef's (the backends' test files add their own Check()).
#pragma once

#include <trellis/Trellis.hpp>

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace trellis::test {

class BackendComparisonNetwork {
public:
    BackendComparisonNetwork() : m_Net(INetwork::Create()) {}

    IOutputSlot* Input(const TensorShape& shape, DataType type = DataType::Float32);
    /// A Float32 constant of seeded random values offset + scale * U(-1, 1).
    IOutputSlot* Const(const TensorShape& shape, float scale = 0.5f, float offset = 0.0f);
    /// A Signed64 constant holding `values`.
    IOutputSlot* Ints(const TensorShape& shape, const std::vector<int64_t>& values);
    /// A Signed64 scalar constant.
    IOutputSlot* Index(int64_t value);
    /// A Float32 scalar constant.
    IOutputSlot* Scalar(float value);
    /// A constant of the given values (copied).
    IOutputSlot* ConstData(const TensorInfo& info, const void* data);
    /// Adds the layer, named "<type>_<count>", fed by `inputs` in order.
    IConnectableLayer* Layer(LayerType type, const LayerDescriptor& d, const std::vector<IOutputSlot*>& inputs,
                             int numOutputs = -1);
    /// Output 0 of a new layer.
    IOutputSlot* Op(LayerType type, const LayerDescriptor& d, const std::vector<IOutputSlot*>& inputs);
    IOutputSlot* Unary(UnaryOperation op, IOutputSlot* x, float a = 0.0f, float b = 0.0f);
    IOutputSlot* Binary(BinaryOperation op, IOutputSlot* a, IOutputSlot* b);
    /// The next network output (bindings 0, 1, ...).
    void Output(IOutputSlot* s);
    const INetwork& Network() const { return *m_Net; }

    /// The network optimized and loaded, ready to run (from several threads too).
    struct Loaded {
        IRuntimePtr m_Runtime{nullptr, &IRuntime::Destroy};
        NetworkId m_Id = 0;
        std::map<BackendId, unsigned int> m_Counts;
        /// The optimized network as text, then (with m_ReportOptimizationLog) the optimizer's log,
        /// then every layer a backend declined, with the reason.
        std::string m_Optimized;
        std::vector<LayerPlacement> m_Placements;
    };
    /// Optimizes for `backends` and loads (LoadNetwork's error is thrown as a RuntimeException);
    /// makes the inputs first when they are not made yet.
    Loaded Load(const std::vector<BackendId>& backends, const IRuntime::CreationOptions& options = {},
                const OptimizerOptions& optimizerOptions = {});
    /// One inference with this network's inputs; every output as floats (outputs start poisoned).
    std::vector<std::vector<float>> Execute(const Loaded& l) const;
    /// The seeded inputs (std::mt19937 seeded 1234, drawn input by input in binding order): Float32
    /// uniform in [-1, 1), Boolean 0 or 1, Signed64 and Signed32 uniform in [0, m_IndexRange).
    void MakeInputs();

    struct Result {
        std::vector<std::vector<float>> m_Outputs;
        std::map<BackendId, unsigned int> m_Counts;
        std::string m_Optimized;
    };
    /// Load() and one Execute().
    Result Run(const std::vector<BackendId>& backends, const IRuntime::CreationOptions& options = {},
               const OptimizerOptions& optimizerOptions = {});

    /// The exclusive upper bound of integer inputs.
    unsigned int m_IndexRange = 7;
    /// Loaded::m_Optimized also lists the optimizer's log.
    bool m_ReportOptimizationLog = false;
    /// What a Float32 output element holds before the run writes it (other types start as bytes
    /// 0xAB).
    float m_FloatOutputPoison = -12345.0f;

private:
    INetworkPtr m_Net;
    std::vector<TensorInfo> m_Inputs;
    std::vector<std::vector<unsigned char>> m_InputData;
    int m_NumOutputs = 0;
    int m_Count = 0;
    std::mt19937 m_Rng{42};
    std::uniform_real_distribution<float> m_Dist{-1.0f, 1.0f};
};

}  // namespace trellis::test
