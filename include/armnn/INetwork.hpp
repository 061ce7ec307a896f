// Arm NN compatibility layer: building a network with Arm NN's INetwork API, and Optimize().
//
// An armnn::INetwork records the Arm NN layers, their connections and the tensor infos set on
// their outputs; Optimize() translates them to a Trellis network (one Arm NN layer may become a
// few Trellis layers: an NHWC convolution is Transpose, Convolution, Transpose) and optimizes
// that with trellis::Optimize. The translation of every layer is listed in docs/armnn-compat.md.
// A network made by armnnOnnxParser wraps the Trellis network the ONNX importer built; no layers
// can be added to it.
//
// Ownership: an INetwork owns its layers; IConnectableLayer/IInputSlot/IOutputSlot pointers stay
// valid while it lives. Optimize() does not keep the INetwork. IOptimizedNetwork is handed to
// IRuntime::LoadNetwork, which takes it.
// Thread-safety: build one network from one thread at a time; Optimize() is reentrant.
// Errors: an Add*Layer with a bad argument, a second connection into an input slot, or an Arm NN
// feature the compatibility layer does not cover throws an armnn exception naming the layer.
#pragma once

#include <armnn/BackendOptions.hpp>
#include <armnn/Descriptors.hpp>
#include <armnn/Exceptions.hpp>
#include <armnn/Optional.hpp>
#include <armnn/Tensor.hpp>
#include <armnn/Types.hpp>
#include <trellis/INetwork.hpp>

#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace armnn {

class IOutputSlot;
class IConnectableLayer;

class IInputSlot {
public:
    /// The output slot feeding this input, or nullptr when unconnected.
    virtual const IOutputSlot* GetConnection() const = 0;
    virtual IOutputSlot* GetConnection() = 0;
    virtual const IConnectableLayer& GetOwningIConnectableLayer() const = 0;
    virtual IConnectableLayer& GetOwningIConnectableLayer() = 0;
    virtual unsigned int GetSlotIndex() const = 0;
protected:
    ~IInputSlot() = default;
};

class IOutputSlot {
public:
    virtual unsigned int GetNumConnections() const = 0;
    virtual const IInputSlot* GetConnection(unsigned int index) const = 0;
    virtual IInputSlot* GetConnection(unsigned int index) = 0;
    /// The info of the tensor this output produces. Needed for Input layers; on any other layer it
    /// is checked against the info Trellis infers, and Optimize() fails naming the layer when they
    /// differ. A Constant layer's output starts with its tensor's info.
    virtual void SetTensorInfo(const TensorInfo& tensorInfo) = 0;
    /// Throws InvalidArgumentException naming the layer when no info was set.
    virtual const TensorInfo& GetTensorInfo() const = 0;
    virtual bool IsTensorInfoSet() const = 0;
    /// Connects this output to `destination` (returns 0). An input takes one connection: a second
    /// one throws InvalidArgumentException naming both layers.
    virtual int Connect(IInputSlot& destination) = 0;
    virtual void Disconnect(IInputSlot& slot) = 0;
    virtual unsigned int CalculateIndexOnOwner() const = 0;
    virtual LayerGuid GetOwningLayerGuid() const = 0;
    virtual const IConnectableLayer& GetOwningIConnectableLayer() const = 0;
    virtual IConnectableLayer& GetOwningIConnectableLayer() = 0;
protected:
    ~IOutputSlot() = default;
};

class IConnectableLayer {
public:
    virtual const char* GetName() const = 0;
    virtual unsigned int GetNumInputSlots() const = 0;
    virtual unsigned int GetNumOutputSlots() const = 0;
    virtual const IInputSlot& GetInputSlot(unsigned int index) const = 0;
    virtual IInputSlot& GetInputSlot(unsigned int index) = 0;
    virtual const IOutputSlot& GetOutputSlot(unsigned int index) const = 0;
    virtual IOutputSlot& GetOutputSlot(unsigned int index) = 0;
    virtual LayerGuid GetGuid() const = 0;
    virtual LayerType GetType() const = 0;
    /// The layer's descriptor (NullDescriptor for layers without parameters).
    virtual const BaseDescriptor& GetParameters() const = 0;
protected:
    ~IConnectableLayer() = default;
};

class INetwork;
using INetworkPtr = std::unique_ptr<INetwork, void (*)(INetwork*)>;
class IOptimizedNetwork;
using IOptimizedNetworkPtr = std::unique_ptr<IOptimizedNetwork, void (*)(IOptimizedNetwork*)>;
using IDeviceSpec = trellis::IDeviceSpec;

namespace detail {
struct NetworkImpl;
struct OptimizedNetworkImpl;
struct NetworkAccess;
}  // namespace detail

class INetwork {
public:
    /// `networkOptions` are kept for GetNetworkOptions(); Trellis's network takes none.
    static INetwork* CreateRaw(const NetworkOptions& networkOptions = {});
    static INetworkPtr Create(const NetworkOptions& networkOptions = {});
    static void Destroy(INetwork* network);

    IConnectableLayer* AddInputLayer(LayerBindingId id, const char* name = nullptr);
    IConnectableLayer* AddOutputLayer(LayerBindingId id, const char* name = nullptr);
    /// Copies the tensor's data. Its output's TensorInfo starts as the tensor's info.
    IConnectableLayer* AddConstantLayer(const ConstTensor& input, const char* name = nullptr);
    IConnectableLayer* AddFullyConnectedLayer(const FullyConnectedDescriptor& descriptor, const char* name = nullptr);
    IConnectableLayer* AddConvolution2dLayer(const Convolution2dDescriptor& descriptor, const char* name = nullptr);
    IConnectableLayer* AddDepthwiseConvolution2dLayer(const DepthwiseConvolution2dDescriptor& descriptor,
                                                      const char* name = nullptr);
    /// Arm NN 20.x's forms (deprecated there since 22.05, and still found in programs written for
    /// it, its own samples/SimpleSample.cpp among them): the weights and, when
    /// descriptor.m_BiasEnabled, the biases are given as tensors. They are copied into Constant
    /// layers connected to input slots 1 and 2, as Arm NN 22.x does, so the layer has the slots
    /// of the forms above. m_BiasEnabled without biases is an InvalidArgumentException; biases
    /// given while m_BiasEnabled is false are not used (Arm NN's rule).
    IConnectableLayer* AddFullyConnectedLayer(const FullyConnectedDescriptor& descriptor, const ConstTensor& weights,
                                              const Optional<ConstTensor>& biases, const char* name = nullptr);
    IConnectableLayer* AddConvolution2dLayer(const Convolution2dDescriptor& descriptor, const ConstTensor& weights,
                                             const Optional<ConstTensor>& biases, const char* name = nullptr);
    IConnectableLayer* AddDepthwiseConvolution2dLayer(const DepthwiseConvolution2dDescriptor& descriptor,
                                                      const ConstTensor& weights, const Optional<ConstTensor>& biases,
                                                      const char* name = nullptr);
    IConnectableLayer* AddPooling2dLayer(const Pooling2dDescriptor& descriptor, const char* name = nullptr);
    IConnectableLayer* AddActivationLayer(const ActivationDescriptor& descriptor, const char* name = nullptr);
    IConnectableLayer* AddAdditionLayer(const char* name = nullptr);
    IConnectableLayer* AddSubtractionLayer(const char* name = nullptr);
    IConnectableLayer* AddMultiplicationLayer(const char* name = nullptr);
    IConnectableLayer* AddDivisionLayer(const char* name = nullptr);
    IConnectableLayer* AddMaximumLayer(const char* name = nullptr);
    IConnectableLayer* AddMinimumLayer(const char* name = nullptr);
    IConnectableLayer* AddElementwiseBinaryLayer(const ElementwiseBinaryDescriptor& descriptor, const char* name = nullptr);
    IConnectableLayer* AddElementwiseUnaryLayer(const ElementwiseUnaryDescriptor& descriptor, const char* name = nullptr);
    IConnectableLayer* AddFloorLayer(const char* name = nullptr);
    IConnectableLayer* AddSoftmaxLayer(const SoftmaxDescriptor& descriptor, const char* name = nullptr);
    IConnectableLayer* AddReshapeLayer(const ReshapeDescriptor& descriptor, const char* name = nullptr);
    /// One input per view of the descriptor.
    IConnectableLayer* AddConcatLayer(const ConcatDescriptor& descriptor, const char* name = nullptr);
    IConnectableLayer* AddTransposeLayer(const TransposeDescriptor& descriptor, const char* name = nullptr);
    IConnectableLayer* AddPermuteLayer(const PermuteDescriptor& descriptor, const char* name = nullptr);
    /// The four tensors are copied; each has one value per channel.
    IConnectableLayer* AddBatchNormalizationLayer(const BatchNormalizationDescriptor& descriptor,
                                                  const ConstTensor& mean, const ConstTensor& variance,
                                                  const ConstTensor& beta, const ConstTensor& gamma,
                                                  const char* name = nullptr);

    /// Prints the layers and their connections to standard output.
    Status PrintGraph();
    size_t GetNumInputs() const;
    size_t GetNumOutputs() const;
    const NetworkOptions& GetNetworkOptions() const;

    ~INetwork();
    INetwork(const INetwork&) = delete;
    INetwork& operator=(const INetwork&) = delete;

protected:
    explicit INetwork(const NetworkOptions& networkOptions);
    friend struct detail::NetworkAccess;
    std::unique_ptr<detail::NetworkImpl> pNetworkImpl;
};

/// Arm NN's (deprecated but common) optimizer options struct; OptimizerOptionsOpaque converts
/// from it.
struct OptimizerOptions {
    bool m_ReduceFp32ToFp16 = false;
    bool m_Debug = false;
    bool m_DebugToFile = false;
    bool m_ReduceFp32ToBf16 = false;
    ShapeInferenceMethod m_shapeInferenceMethod = ShapeInferenceMethod::ValidateOnly;
    bool m_ImportEnabled = false;
    ModelOptions m_ModelOptions;
    bool m_ProfilingEnabled = false;
    bool m_ExportEnabled = false;
    bool m_AllowExpandedDims = false;
};

/// Arm NN's optimizer options. What each does in Trellis:
///  - ReduceFp32ToFp16: trellis::OptimizerOptions::m_ReduceFp32ToFp16.
///  - Debug: a Debug layer after every layer printing the layer, output, shape and values to
///    standard output; DebugToFile: writes "<layer>_out<k>.npy" into
///    <temp dir>/ArmNNIntermediateLayerOutputs instead.
///  - ReduceFp32ToBf16: refused (UnimplementedException from Optimize); CpuAcc's bf16 fast math
///    is the runtime backend option "FastMathEnabled" of CpuAcc.
///  - ImportEnabled, ExportEnabled, ShapeInferenceMethod, AllowExpandedDims, ProfilingEnabled:
///    accepted; Trellis reads and writes the caller's buffers as they are and always infers and
///    checks shapes (see docs/armnn-compat.md).
///  - Model options: kept (GetModelOptions()); Optimize() does not apply them and says so in
///    its messages and the log (pass them as IRuntime::CreationOptions::m_BackendOptions).
class OptimizerOptionsOpaque {
public:
    OptimizerOptionsOpaque() = default;
    OptimizerOptionsOpaque(const OptimizerOptions& options) : m_Options(options) {}  // NOLINT: implicit as in Arm NN
    OptimizerOptionsOpaque(bool reduceFp32ToFp16, bool debug, bool reduceFp32ToBf16 = false,
                           bool importEnabled = false, ModelOptions modelOptions = {}, bool exportEnabled = false,
                           bool debugToFile = false);

    void SetReduceFp32ToFp16(bool v) { m_Options.m_ReduceFp32ToFp16 = v; }
    void SetDebugEnabled(bool v) { m_Options.m_Debug = v; }
    void SetDebugToFileEnabled(bool v) { m_Options.m_DebugToFile = v; }
    void SetReduceFp32ToBf16(bool v) { m_Options.m_ReduceFp32ToBf16 = v; }
    void SetShapeInferenceMethod(ShapeInferenceMethod v) { m_Options.m_shapeInferenceMethod = v; }
    void SetImportEnabled(bool v) { m_Options.m_ImportEnabled = v; }
    void SetExportEnabled(bool v) { m_Options.m_ExportEnabled = v; }
    void SetProfilingEnabled(bool v) { m_Options.m_ProfilingEnabled = v; }
    void SetAllowExpandedDims(bool v) { m_Options.m_AllowExpandedDims = v; }
    void AddModelOption(const BackendOptions& option) { m_Options.m_ModelOptions.push_back(option); }

    bool GetReduceFp32ToFp16() const { return m_Options.m_ReduceFp32ToFp16; }
    bool GetDebugEnabled() const { return m_Options.m_Debug; }
    bool GetDebugToFileEnabled() const { return m_Options.m_DebugToFile; }
    bool GetReduceFp32ToBf16() const { return m_Options.m_ReduceFp32ToBf16; }
    ShapeInferenceMethod GetShapeInferenceMethod() const { return m_Options.m_shapeInferenceMethod; }
    bool GetImportEnabled() const { return m_Options.m_ImportEnabled; }
    bool GetExportEnabled() const { return m_Options.m_ExportEnabled; }
    bool GetProfilingEnabled() const { return m_Options.m_ProfilingEnabled; }
    bool GetAllowExpandedDims() const { return m_Options.m_AllowExpandedDims; }
    ModelOptions GetModelOptions() const { return m_Options.m_ModelOptions; }
    /// One line per option.
    std::string ToString() const;

private:
    OptimizerOptions m_Options;
};

class IOptimizedNetwork {
public:
    static void Destroy(IOptimizedNetwork* network);

    /// Prints the optimized layers, their backends and connections to standard output.
    Status PrintGraph();
    /// Graphviz: one node per layer (name, type, backend), one edge per connection labelled with
    /// the tensor's info.
    Status SerializeToDot(std::ostream& stream) const;
    LayerGuid GetGuid() const;
    size_t GetNumInputs() const;
    size_t GetNumOutputs() const;
    /// The Trellis network underneath: placements with every backend's reasons, the optimizer's log.
    const trellis::IOptimizedNetwork& GetTrellisNetwork() const;

    ~IOptimizedNetwork();
    IOptimizedNetwork(const IOptimizedNetwork&) = delete;
    IOptimizedNetwork& operator=(const IOptimizedNetwork&) = delete;

protected:
    IOptimizedNetwork();
    friend struct detail::NetworkAccess;
    std::unique_ptr<detail::OptimizedNetworkImpl> pOptimizedNetworkImpl;
};

/// Translates `network` to Trellis (see the top of this file) and optimizes it for the first
/// backend of `backendPreferences` that supports each layer. Throws an armnn exception (a Trellis
/// one: InvalidArgumentException, LayerValidationException, BackendUnavailableException, ...)
/// naming the layer and the rule when the network cannot be optimized; the same text, and the
/// optimizer's warnings, are appended to `messages` when given and logged (ConfigureLogging).
IOptimizedNetworkPtr Optimize(const INetwork& network, const std::vector<BackendId>& backendPreferences,
                              const IDeviceSpec& deviceSpec,
                              const OptimizerOptionsOpaque& options = OptimizerOptionsOpaque(),
                              Optional<std::vector<std::string>&> messages = EmptyOptional());

}  // namespace armnn
