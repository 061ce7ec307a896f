// Trellis application API: building a network and optimizing it for a set of backends.
//
// Ownership: an INetwork owns its layers; IConnectableLayer/IInputSlot/IOutputSlot pointers stay
// valid while the network lives. Optimize() copies the network, so the INetwork may be destroyed
// or changed afterwards. IOptimizedNetwork is handed to IRuntime::LoadNetwork, which takes it.
// Thread-safety: building one network from several threads at once is not supported; separate
// networks may be built concurrently. Optimize() is reentrant.
#pragma once

#include <trellis/Descriptors.hpp>
#include <trellis/Types.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace trellis {

class IOutputSlot;
class IConnectableLayer;

class IInputSlot {
public:
    /// The output slot feeding this input, or nullptr when unconnected.
    virtual const IOutputSlot* GetConnection() const = 0;
    virtual IOutputSlot* GetConnection() = 0;
    virtual const IConnectableLayer& GetOwningIConnectableLayer() const = 0;
    virtual unsigned int GetSlotIndex() const = 0;
protected:
    ~IInputSlot() = default;
};

class IOutputSlot {
public:
    virtual unsigned int GetNumConnections() const = 0;
    virtual const IInputSlot* GetConnection(unsigned int index) const = 0;
    virtual IInputSlot* GetConnection(unsigned int index) = 0;
    /// Connects this output to `destination`; an input takes one connection (throws if taken).
    virtual int Connect(IInputSlot& destination) = 0;
    virtual void Disconnect(IInputSlot& slot) = 0;
    /// Sets the output's tensor info. Needed for Input layers only: every other layer's output is
    /// inferred, and an info set by hand is checked against the inferred one.
    virtual void SetTensorInfo(const TensorInfo& tensorInfo) = 0;
    virtual const TensorInfo& GetTensorInfo() const = 0;
    virtual bool IsTensorInfoSet() const = 0;
    virtual const IConnectableLayer& GetOwningIConnectableLayer() const = 0;
    virtual unsigned int CalculateIndexOnOwner() const = 0;
protected:
    ~IOutputSlot() = default;
};

using LayerGuid = uint64_t;

class IConnectableLayer {
public:
    virtual const char* GetName() const = 0;
    virtual LayerType GetType() const = 0;
    virtual LayerGuid GetGuid() const = 0;
    virtual unsigned int GetNumInputSlots() const = 0;
    virtual unsigned int GetNumOutputSlots() const = 0;
    virtual const IInputSlot& GetInputSlot(unsigned int index) const = 0;
    virtual IInputSlot& GetInputSlot(unsigned int index) = 0;
    virtual const IOutputSlot& GetOutputSlot(unsigned int index) const = 0;
    virtual IOutputSlot& GetOutputSlot(unsigned int index) = 0;
    virtual const LayerDescriptor& GetDescriptor() const = 0;
    /// The backend this layer was assigned to (empty before Optimize()).
    virtual const BackendId& GetBackendId() const = 0;
protected:
    ~IConnectableLayer() = default;
};

class INetwork;
using INetworkPtr = std::unique_ptr<INetwork, void (*)(INetwork*)>;

/// Options of the network itself (reserved for future fields).
struct NetworkOptions {};

class INetwork {
public:
    static INetwork* CreateRaw(const NetworkOptions& options = {});
    static INetworkPtr Create(const NetworkOptions& options = {});
    static void Destroy(INetwork* network);

    /// Generic form: a layer of any op-table type. `numInputs`/`numOutputs` = -1 take the op's
    /// default (its minimum input count; its output count, 1 for an op whose extra outputs are
    /// optional, such as Pooling's Indices). Throws InvalidArgumentException when
    /// the descriptor type does not match the op or the counts are out of the op's range.
    virtual IConnectableLayer* AddLayer(LayerType type, const LayerDescriptor& descriptor,
                                        const char* name = nullptr, int numInputs = -1,
                                        int numOutputs = -1) = 0;

    // Seed-named conveniences.
    virtual IConnectableLayer* AddInputLayer(LayerBindingId id, const char* name = nullptr) = 0;
    virtual IConnectableLayer* AddOutputLayer(LayerBindingId id, const char* name = nullptr) = 0;
    /// The network copies the tensor's data. (AddLayer with a ConstantDescriptor whose m_Storage is set
    /// shares that storage instead.)
    virtual IConnectableLayer* AddConstantLayer(const ConstTensor& input, const char* name = nullptr) = 0;
    virtual IConnectableLayer* AddAdditionLayer(const char* name = nullptr) = 0;
    virtual IConnectableLayer* AddMultiplicationLayer(const char* name = nullptr) = 0;
    virtual IConnectableLayer* AddElementwiseBinaryLayer(const ElementwiseBinaryDescriptor& d, const char* name = nullptr) = 0;
    virtual IConnectableLayer* AddElementwiseUnaryLayer(const ElementwiseUnaryDescriptor& d, const char* name = nullptr) = 0;
    /// Inputs: X, weights, and bias when `biasEnabled`.
    virtual IConnectableLayer* AddConvolutionLayer(const ConvolutionDescriptor& d, bool biasEnabled, const char* name = nullptr) = 0;
    virtual IConnectableLayer* AddSoftmaxLayer(const SoftmaxDescriptor& d, const char* name = nullptr) = 0;
    virtual IConnectableLayer* AddReshapeLayer(const ReshapeDescriptor& d, const char* name = nullptr) = 0;

    virtual unsigned int GetNumLayers() const = 0;
    /// Human-readable listing of the layers (for logs and tests).
    virtual std::string ToString() const = 0;
protected:
    virtual ~INetwork() = default;
};

/// Describes the devices a runtime has; passed to Optimize().
class IDeviceSpec {
public:
    virtual const BackendIdVector& GetSupportedBackends() const = 0;
protected:
    ~IDeviceSpec() = default;
};

struct OptimizerOptions {
    /// Run Float32 layers in Float16 where the assigned backend supports that layer in Float16:
    /// their Float32 constants are converted and Cast layers are inserted where Float32 and
    /// Float16 layers meet. Network inputs and outputs stay Float32. Costs accuracy (about 3
    /// significant digits per value).
    bool m_ReduceFp32ToFp16 = false;
    /// Insert a Debug layer after every layer output (folded constants included): each execution
    /// writes the tensor to m_DebugToFolder as "<layer>_out<k>.npy" (a later execution overwrites
    /// the file) when that is set, and calls m_DebugCallback when that is set (one of the two is
    /// needed). The callback is called from the thread running EnqueueWorkload(), in execution
    /// order; concurrent runs call it concurrently. Debug layers run on the first preferred
    /// backend that supports them, else on any registered one that does.
    bool m_Debug = false;
    std::string m_DebugToFolder;
    DebugCallback m_DebugCallback;
    /// Run the backend-independent passes (identity removal, reshape/transpose simplification,
    /// batch-norm folding). Shape inference and constant folding always run.
    bool m_EnableGraphOptimizations = true;
    /// Resource limits (docs/reliability.md). 0 (the default of both) means the machine's
    /// physical memory: nothing larger could be held anyway, and a model that asks for more (a
    /// ConstantOfShape of 2^31 x 2^31, say) is refused with an error instead of crashing.
    ///
    /// m_MaxTensorBytes: the most bytes any one tensor of the network may hold: every layer
    /// output, network inputs and constants included. Checked for each layer right after its
    /// shape is inferred (phase 3 of Optimize, and again for each specialization of a dynamic
    /// network), so before constant folding or anything else allocates it; element and byte
    /// counts are computed with overflow checks. A larger tensor throws ResourceLimitException
    /// naming the layer, the output's type and shape, its size and the limit.
    std::size_t m_MaxTensorBytes = 0;
    /// m_MaxWorkingMemoryBytes: the most working memory one EnqueueWorkload() call may use (the
    /// arena of intermediate tensors and workload scratch after lifetime-based reuse, as
    /// IRuntime::GetPeakWorkingMemoryBytes() reports it). Checked when the memory plan is made:
    /// by LoadNetwork() (for a dynamic network, by the EnqueueWorkload() that builds a
    /// specialization), before the arena is allocated. A larger plan fails with a message naming
    /// its size, the limit and its largest blocks: LoadNetwork() returns Failure with it (its
    /// throwing form throws RuntimeException, as for every load failure); EnqueueWorkload() of
    /// a dynamic network throws ResourceLimitException.
    std::size_t m_MaxWorkingMemoryBytes = 0;
};

/// Why a layer ended up on its backend: the backends tried before it and their reasons.
struct LayerPlacement {
    std::string m_LayerName;
    LayerType m_Type = LayerType::Input;
    std::string m_OpDetail;  ///< e.g. "Add", "MaxPool"; "folded on CpuRef": a constant that constant folding made
    BackendId m_Backend;
    std::vector<TensorInfo> m_Outputs;
    std::vector<std::pair<BackendId, std::string>> m_Declined;  ///< (backend, reason)
    /// For a layer a backend substituted (OptimizeSubgraph), the layers it replaced.
    std::vector<std::string> m_SubstitutedLayers;
    /// MemCopy layers (the copies at backend boundaries): the memory copied from and into ("host"
    /// or the backend whose working memory it is) and the bytes every inference copies.
    std::string m_CopySource;
    std::string m_CopyDestination;
    std::size_t m_CopyBytes = 0;
};

class IOptimizedNetwork;
using IOptimizedNetworkPtr = std::unique_ptr<IOptimizedNetwork, void (*)(IOptimizedNetwork*)>;

class IOptimizedNetwork {
public:
    static void Destroy(IOptimizedNetwork* network);
    /// Layers in execution order with their placement.
    virtual std::vector<LayerPlacement> GetLayerPlacements() const = 0;
    /// Number of (non input/output/constant) layers per backend.
    virtual std::map<BackendId, unsigned int> GetBackendLayerCounts() const = 0;
    /// What the optimizer did (passes run, layers removed/folded), one line each.
    virtual const std::vector<std::string>& GetOptimizationLog() const = 0;
    virtual std::string ToString() const = 0;
    /// The optimized graph's layers in execution order, Input, Constant and Output layers included,
    /// for tools that read the graph (the code generator, <trellis/Codegen.hpp>): type, descriptor,
    /// tensor infos, connections, backend. Valid while this object lives. For a dynamic network
    /// (IsDynamic()) these are the layers as built, whose shapes are decided per run.
    virtual std::vector<const IConnectableLayer*> GetLayers() const = 0;
    /// True when the network's shapes are decided by each run (inputs with unknown dims, or inputs
    /// whose values size tensors): it was not optimized past validation, and the runtime
    /// specializes it per run. The optimization log says why.
    virtual bool IsDynamic() const = 0;
protected:
    virtual ~IOptimizedNetwork() = default;
};

/// Validates `network`, infers every shape, runs the graph passes and assigns each layer to the
/// first backend in `backendPreferences` that supports it. Throws InvalidArgumentException /
/// LayerValidationException / BackendUnavailableException with a message that names the layers;
/// when `messages` is given the same text (and warnings) is appended to it too.
IOptimizedNetworkPtr Optimize(const INetwork& network, const std::vector<BackendId>& backendPreferences,
                              const IDeviceSpec& deviceSpec, const OptimizerOptions& options = OptimizerOptions(),
                              std::vector<std::string>* messages = nullptr);

}  // namespace trellis
