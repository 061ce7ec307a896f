// Arm NN compatibility layer, backend side: LayerSupportBase, the adapter that lets a backend keep
// Arm NN's per-layer support checks (IsAdditionSupported, IsConvolution2dSupported, ... with
// `Optional<std::string&> reasonIfUnsupported`) while it implements Trellis's one query,
// trellis::ILayerSupport::IsLayerSupported. A ported backend derives from it, overrides the
// IsXxxSupported checks it had, and returns it from IBackendInternal::GetLayerSupport();
// docs/armnn-porting.md has the map of the rest of the backend API.
//
// IsLayerSupported() translates each Trellis layer to the Arm NN layer it corresponds to, with
// Arm NN's descriptor and tensor infos (a Trellis ElementwiseUnary Relu is asked as
// IsActivationSupported with ActivationFunction::ReLu; a Convolution whose group count is its
// input channel count as IsDepthwiseConvolutionSupported, its weights' info in Arm NN's
// [1, H, W, I * M] layout; a Gemm with alpha 1 and beta 1 and no transposed A as
// IsFullyConnectedSupported), and calls that check. Every check's default declines with a reason
// naming the layer, as Arm NN's LayerSupportBase does. A Trellis layer with no Arm NN counterpart
// is declined with a reason saying so. Activations are 4-d NCHW (Trellis's layout).
// Thread-safety: IsLayerSupported is const and keeps no state; overrides must be const-correct too.
#pragma once

#include <armnn/Descriptors.hpp>
#include <armnn/Optional.hpp>
#include <armnn/Tensor.hpp>
#include <trellis/backends/ILayerSupport.hpp>

#include <string>
#include <vector>

namespace armnn {

class LayerSupportBase : public trellis::ILayerSupport {
public:
    /// Trellis's query: translates the layer and calls the matching IsXxxSupported below.
    bool IsLayerSupported(const trellis::QueueDescriptor& layer, const trellis::WorkloadInfo& info,
                          std::string* reasonIfUnsupported) const final;

    virtual bool IsActivationSupported(const TensorInfo& input, const TensorInfo& output,
                                       const ActivationDescriptor& descriptor,
                                       Optional<std::string&> reasonIfUnsupported = EmptyOptional()) const;
    virtual bool IsAdditionSupported(const TensorInfo& input0, const TensorInfo& input1, const TensorInfo& output,
                                     Optional<std::string&> reasonIfUnsupported = EmptyOptional()) const;
    virtual bool IsSubtractionSupported(const TensorInfo& input0, const TensorInfo& input1, const TensorInfo& output,
                                        Optional<std::string&> reasonIfUnsupported = EmptyOptional()) const;
    virtual bool IsMultiplicationSupported(const TensorInfo& input0, const TensorInfo& input1, const TensorInfo& output,
                                           Optional<std::string&> reasonIfUnsupported = EmptyOptional()) const;
    virtual bool IsDivisionSupported(const TensorInfo& input0, const TensorInfo& input1, const TensorInfo& output,
                                     Optional<std::string&> reasonIfUnsupported = EmptyOptional()) const;
    virtual bool IsMaximumSupported(const TensorInfo& input0, const TensorInfo& input1, const TensorInfo& output,
                                    Optional<std::string&> reasonIfUnsupported = EmptyOptional()) const;
    virtual bool IsMinimumSupported(const TensorInfo& input0, const TensorInfo& input1, const TensorInfo& output,
                                    Optional<std::string&> reasonIfUnsupported = EmptyOptional()) const;
    /// Binary operations without a layer of their own in Arm NN (Power).
    virtual bool IsElementwiseBinarySupported(const TensorInfo& input0, const TensorInfo& input1,
                                              const TensorInfo& output, const ElementwiseBinaryDescriptor& descriptor,
                                              Optional<std::string&> reasonIfUnsupported = EmptyOptional()) const;
    virtual bool IsElementwiseUnarySupported(const TensorInfo& input, const TensorInfo& output,
                                             const ElementwiseUnaryDescriptor& descriptor,
                                             Optional<std::string&> reasonIfUnsupported = EmptyOptional()) const;
    virtual bool IsFloorSupported(const TensorInfo& input, const TensorInfo& output,
                                  Optional<std::string&> reasonIfUnsupported = EmptyOptional()) const;
    virtual bool IsConvolution2dSupported(const TensorInfo& input, const TensorInfo& output,
                                          const Convolution2dDescriptor& descriptor, const TensorInfo& weights,
                                          const Optional<TensorInfo>& biases,
                                          Optional<std::string&> reasonIfUnsupported = EmptyOptional()) const;
    virtual bool IsDepthwiseConvolutionSupported(const TensorInfo& input, const TensorInfo& output,
                                                 const DepthwiseConvolution2dDescriptor& descriptor,
                                                 const TensorInfo& weights, const Optional<TensorInfo>& biases,
                                                 Optional<std::string&> reasonIfUnsupported = EmptyOptional()) const;
    virtual bool IsFullyConnectedSupported(const TensorInfo& input, const TensorInfo& output, const TensorInfo& weights,
                                           const TensorInfo& biases, const FullyConnectedDescriptor& descriptor,
                                           Optional<std::string&> reasonIfUnsupported = EmptyOptional()) const;
    virtual bool IsPooling2dSupported(const TensorInfo& input, const TensorInfo& output,
                                      const Pooling2dDescriptor& descriptor,
                                      Optional<std::string&> reasonIfUnsupported = EmptyOptional()) const;
    virtual bool IsSoftmaxSupported(const TensorInfo& input, const TensorInfo& output,
                                    const SoftmaxDescriptor& descriptor,
                                    Optional<std::string&> reasonIfUnsupported = EmptyOptional()) const;
    virtual bool IsReshapeSupported(const TensorInfo& input, const TensorInfo& output,
                                    const ReshapeDescriptor& descriptor,
                                    Optional<std::string&> reasonIfUnsupported = EmptyOptional()) const;
    virtual bool IsConcatSupported(const std::vector<const TensorInfo*> inputs, const TensorInfo& output,
                                   const OriginsDescriptor& descriptor,
                                   Optional<std::string&> reasonIfUnsupported = EmptyOptional()) const;
    virtual bool IsTransposeSupported(const TensorInfo& input, const TensorInfo& output,
                                      const TransposeDescriptor& descriptor,
                                      Optional<std::string&> reasonIfUnsupported = EmptyOptional()) const;
    virtual bool IsBatchNormalizationSupported(const TensorInfo& input, const TensorInfo& output,
                                               const TensorInfo& mean, const TensorInfo& var, const TensorInfo& beta,
                                               const TensorInfo& gamma, const BatchNormalizationDescriptor& descriptor,
                                               Optional<std::string&> reasonIfUnsupported = EmptyOptional()) const;
    virtual bool IsMemCopySupported(const TensorInfo& input, const TensorInfo& output,
                                    Optional<std::string&> reasonIfUnsupported = EmptyOptional()) const;
    /// A PreCompiled layer the backend's own OptimizeSubgraph made (the object is the descriptor's).
    virtual bool IsPreCompiledSupported(const std::vector<TensorInfo>& inputs,
                                        const trellis::PreCompiledDescriptor& descriptor,
                                        Optional<std::string&> reasonIfUnsupported = EmptyOptional()) const;
};

}  // namespace armnn
