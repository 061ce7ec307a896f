// GpuAcc: layer support (see GpuAccSupport.hpp).
#include "GpuAccSupport.hpp"

#include "GpuAccGraph.hpp"

#include <algorithm>

namespace trellis::gpuacc {

namespace {

bool Refuse(std::string* reason, const std::string& why) {
    if (reason) *reason = why;
    return false;
}

bool IsFloat32(const TensorInfo& t) { return t.GetDataType() == DataType::Float32; }

/// The layers that compute (rather than move data) run Float32 networks; the Precision option
/// decides the device types inside.
bool AllFloat32(const std::string& op, const std::vector<TensorInfo>& tensors, std::size_t count, std::string* reason) {
    for (std::size_t i = 0; i < std::min(count, tensors.size()); ++i) {
        if (!IsFloat32(tensors[i])) {
            return Refuse(reason, op + ": GpuAcc computes Float32 tensors (the Precision option picks the device "
                                       "types); tensor " + std::to_string(i) + " is " +
                                       GetDataTypeName(tensors[i].GetDataType()));
        }
    }
    return true;
}

bool IsConvolutionSupported(const ConvolutionDescriptor& d, const std::vector<TensorInfo>& in,
                            const std::vector<bool>& constants, std::string* reason) {
    if (in[0].GetNumDimensions() != 4) {
        return Refuse(reason, "Convolution: " + std::to_string(in[0].GetNumDimensions() - 2) +
                                  " spatial dims; GpuAcc runs 2-D convolutions only");
    }
    if (!constants[1]) return Refuse(reason, "Convolution: the weights must be constant (GpuAcc packs them at load)");
    if (in.size() > 2 && !constants[2]) return Refuse(reason, "Convolution: the bias must be constant");
    const unsigned int c = in[0].GetShape()[1], k = in[1].GetShape()[0];
    if (d.m_Groups == 0 || c % d.m_Groups != 0 || k % d.m_Groups != 0) {
        return Refuse(reason, "Convolution: group=" + std::to_string(d.m_Groups) + " must divide input channels=" +
                                  std::to_string(c) + " and output channels=" + std::to_string(k));
    }
    return AllFloat32("Convolution", in, in.size(), reason);
}

bool IsGemmSupported(const GemmDescriptor& d, const std::vector<TensorInfo>& in, const std::vector<TensorInfo>& out,
                     const std::vector<bool>& constants, std::string* reason) {
    if (!AllFloat32("Gemm", in, in.size(), reason)) return false;
    if (in.size() > 2) {
        const TensorShape& c = in[2].GetShape();
        const TensorShape& y = out[0].GetShape();
        const bool full = c == y;
        const bool row = c.GetNumElements() == y[1] && c.GetNumDimensions() >= 1 && c[c.GetNumDimensions() - 1] == y[1];
        if (!full && !row) {
            return Refuse(reason, "Gemm: C " + c.ToString() + " must be a bias of N=" + std::to_string(y[1]) +
                                      " elements or have the output's shape " + y.ToString());
        }
        if (row && !full && !constants[2]) {
            return Refuse(reason, "Gemm: a bias C must be constant (GpuAcc scales it by beta at load)");
        }
    }
    (void)d;
    return true;
}

bool IsMatMulSupported(const std::vector<TensorInfo>& in, std::string* reason) {
    if (!AllFloat32("MatMul", in, 2, reason)) return false;
    const unsigned int ra = in[0].GetNumDimensions(), rb = in[1].GetNumDimensions();
    if (ra < 2 || rb < 2) return Refuse(reason, "MatMul: 1-D operands are not supported by GpuAcc");
    const unsigned int r = std::max(ra, rb);
    for (unsigned int i = 0; i + 2 < r; ++i) {
        const int ia = static_cast<int>(i) - static_cast<int>(r - ra);
        const int ib = static_cast<int>(i) - static_cast<int>(r - rb);
        const unsigned int da = ia >= 0 ? in[0].GetShape()[static_cast<unsigned int>(ia)] : 1;
        const unsigned int db = ib >= 0 ? in[1].GetShape()[static_cast<unsigned int>(ib)] : 1;
        if (da != db && da != 1 && db != 1) return Refuse(reason, "MatMul: batch dims do not broadcast");
    }
    return true;
}

bool IsPoolingSupported(const PoolingDescriptor& d, const std::vector<TensorInfo>& in,
                        const std::vector<TensorInfo>& out, std::string* reason) {
    if (!AllFloat32("Pooling", in, 1, reason)) return false;
    if (in[0].GetNumDimensions() != 4) {
        return Refuse(reason, "Pooling: " + std::to_string(in[0].GetNumDimensions() - 2) +
                                  " spatial dims; GpuAcc pools 2-D only");
    }
    if (out.size() > 1) return Refuse(reason, "Pooling: the Indices output of MaxPool is not supported by GpuAcc");
    (void)d;
    return true;
}

bool IsReduceSupported(const ReduceDescriptor& d, const std::vector<TensorInfo>& in, std::string* reason) {
    if (!AllFloat32("Reduce", in, 1, reason)) return false;
    if (in.size() != 1) return Refuse(reason, "Reduce: the axes must be constant");
    const unsigned int rank = in[0].GetNumDimensions();
    if (rank == 0) return Refuse(reason, "Reduce: scalar input");
    if (in[0].GetNumElements() == 0) {
        return Refuse(reason, "Reduce: an empty input (reductions over an empty set run on the reference)");
    }
    if (d.m_Axes.empty() && d.m_NoopWithEmptyAxes) return Refuse(reason, "Reduce: noop_with_empty_axes is not supported");
    // The reduced dims (size-1 dims aside) must be consecutive: x is then [outer, reduced, inner].
    std::vector<bool> reduced(rank, d.m_Axes.empty());
    for (int64_t a : d.m_Axes) reduced[static_cast<std::size_t>(a)] = true;
    int first = -1, last = -1;
    for (unsigned int i = 0; i < rank; ++i) {
        if (!reduced[i] || in[0].GetShape()[i] == 1) continue;
        if (first < 0) first = static_cast<int>(i);
        last = static_cast<int>(i);
    }
    for (int i = first; i >= 0 && i <= last; ++i) {
        if (!reduced[static_cast<std::size_t>(i)] && in[0].GetShape()[static_cast<unsigned int>(i)] != 1) {
            return Refuse(reason, "Reduce: the reduced dims must be consecutive (dim " + std::to_string(i) +
                                      " between them is kept)");
        }
    }
    return true;
}

bool SupportedTypes(const std::string& op, const std::vector<TensorInfo>& tensors, std::string* reason) {
    for (const TensorInfo& t : tensors) {
        if (!DTypeOf(t.GetDataType())) {
            return Refuse(reason, op + ": data type " + GetDataTypeName(t.GetDataType()) + " is not supported by GpuAcc");
        }
        if (t.GetNumDimensions() > static_cast<unsigned int>(kMaxDims)) {
            return Refuse(reason, op + ": rank " + std::to_string(t.GetNumDimensions()) + " is above GpuAcc's " +
                                      std::to_string(kMaxDims));
        }
    }
    return true;
}

}  // namespace

std::optional<DType> DTypeOf(DataType type) {
    switch (type) {
        case DataType::Float32: return DType::F32;
        case DataType::Float16: return DType::F16;
        case DataType::BFloat16: return DType::BF16;
        case DataType::Signed32: return DType::I32;
        case DataType::Signed64: return DType::I64;
        case DataType::Boolean: return DType::Bool;
        case DataType::UInt8: return DType::U8;
        case DataType::Signed8: return DType::I8;
        default: return std::nullopt;
    }
}

bool IsSupportedLayer(LayerType type, const LayerDescriptor& descriptor, const std::vector<TensorInfo>& in,
                      const std::vector<TensorInfo>& out, const std::vector<bool>& constants, std::string* reason) {
    const std::string op = GetLayerTypeName(type);
    if (!SupportedTypes(op, in, reason) || !SupportedTypes(op, out, reason)) return false;
    for (const TensorInfo& t : out) {
        if (t.GetNumElements() == 0) return Refuse(reason, op + ": empty tensors are not supported by GpuAcc");
    }
    std::vector<bool> isConst = constants;
    isConst.resize(in.size(), false);
    // A layer of constants only is folded on the host while optimizing, where device workloads
    // cannot run (the guide's rule for backends with device memory).
    if (!in.empty() && std::all_of(isConst.begin(), isConst.end(), [](bool c) { return c; })) {
        return Refuse(reason, op + ": every input is constant; GpuAcc runs on device memory and leaves folding to the "
                                   "host backends");
    }

    switch (type) {
        case LayerType::Convolution:
            return IsConvolutionSupported(std::get<ConvolutionDescriptor>(descriptor), in, isConst, reason);
        case LayerType::Gemm: return IsGemmSupported(std::get<GemmDescriptor>(descriptor), in, out, isConst, reason);
        case LayerType::MatMul: return IsMatMulSupported(in, reason);
        case LayerType::Pooling: return IsPoolingSupported(std::get<PoolingDescriptor>(descriptor), in, out, reason);
        case LayerType::ElementwiseUnary:
        case LayerType::ElementwiseBinary:
        case LayerType::PRelu:
        case LayerType::Where: {
            EltwiseProgram p;
            std::vector<int> ids(in.size());
            if (!EltwiseProgramOf(type, descriptor, ids, p)) {
                std::string what = op;
                if (type == LayerType::ElementwiseUnary) {
                    what = GetUnaryOperationName(std::get<ElementwiseUnaryDescriptor>(descriptor).m_Operation);
                } else if (type == LayerType::ElementwiseBinary) {
                    what = GetBinaryOperationName(std::get<ElementwiseBinaryDescriptor>(descriptor).m_Operation);
                }
                return Refuse(reason, op + " " + what + ": GpuAcc has no kernel for it");
            }
            // Arithmetic in float: integer inputs would lose digits, so only float and Boolean
            // operands (conditions, logic) are accepted.
            for (std::size_t i = 0; i < in.size(); ++i) {
                const DataType t = in[i].GetDataType();
                if (t != DataType::Float32 && t != DataType::Boolean) {
                    return Refuse(reason, op + ": GpuAcc runs element-wise ops on Float32 and Boolean tensors; input " +
                                              std::to_string(i) + " is " + GetDataTypeName(t));
                }
            }
            if (type == LayerType::Where && in[0].GetDataType() != DataType::Boolean) {
                return Refuse(reason, "Where: the condition must be Boolean");
            }
            return true;
        }
        case LayerType::Cast:
            // Every pair of the types above: integer to integer exactly, through float otherwise
            // (round to nearest even into 16-bit floats, truncation toward zero into integers,
            // non-zero into Boolean), as CpuRef converts.
            return true;
        case LayerType::BatchNormalization: {
            const auto& d = std::get<BatchNormalizationDescriptor>(descriptor);
            if (d.m_Training || out.size() > 1) return Refuse(reason, "BatchNormalization: training mode is not supported");
            if (in[0].GetNumDimensions() < 2) return Refuse(reason, "BatchNormalization: the input needs a channel dim");
            for (std::size_t i = 1; i < 5; ++i) {
                if (!isConst[i]) return Refuse(reason, "BatchNormalization: scale, bias, mean and variance must be constant");
            }
            return AllFloat32("BatchNormalization", in, in.size(), reason);
        }
        case LayerType::Softmax: {
            if (!AllFloat32("Softmax", in, 1, reason)) return false;
            if (in[0].GetNumDimensions() == 0) return Refuse(reason, "Softmax: scalar input");
            return true;
        }
        case LayerType::LayerNormalization: {
            if (!AllFloat32("LayerNormalization", in, in.size(), reason)) return false;
            if (out.size() != 1) return Refuse(reason, "LayerNormalization: only output 0 (Y) is supported by GpuAcc");
            if (!isConst[1] || (in.size() > 2 && !isConst[2])) {
                return Refuse(reason, "LayerNormalization: scale and bias must be constant");
            }
            const auto& d = std::get<LayerNormalizationDescriptor>(descriptor);
            const int rank = static_cast<int>(in[0].GetNumDimensions());
            const int axis = d.m_Axis < 0 ? d.m_Axis + rank : d.m_Axis;
            std::size_t inner = 1;
            for (int i = axis; i < rank; ++i) inner *= in[0].GetShape()[static_cast<unsigned int>(i)];
            if (in[1].GetNumElements() != inner || (in.size() > 2 && in[2].GetNumElements() != inner)) {
                return Refuse(reason, "LayerNormalization: scale and bias must have one value per normalized element");
            }
            return true;
        }
        case LayerType::ConvolutionTranspose: {
            const auto& d = std::get<ConvolutionDescriptor>(descriptor);
            if (!AllFloat32("ConvolutionTranspose", in, in.size(), reason)) return false;
            if (in[0].GetNumDimensions() != 4) {
                return Refuse(reason, "ConvolutionTranspose: " + std::to_string(in[0].GetNumDimensions() - 2) +
                                          " spatial dims; GpuAcc runs 2-D only");
            }
            if (d.m_AutoPad != PaddingMode::Explicit || !d.m_OutputShape.empty() || d.m_Strides.size() != 2 ||
                d.m_Dilations.size() != 2 || d.m_PadsBegin.size() != 2 || d.m_Groups == 0) {
                return Refuse(reason, "ConvolutionTranspose: the descriptor is not resolved (explicit pads per spatial dim)");
            }
            return true;
        }
        case LayerType::Attention: {
            const auto& d = std::get<AttentionDescriptor>(descriptor);
            if (!AllFloat32("Attention", in, in.size(), reason)) {
                return Refuse(reason, "Attention: GpuAcc takes Float32 Q, K, V and an additive Float32 mask (a Boolean "
                                      "mask runs on the reference)");
            }
            if (d.m_HasPast || d.m_HasNonpadKvSeqlen || out.size() != 1) {
                return Refuse(reason, "Attention: past_key/past_value, nonpad_kv_seqlen and the present or qk outputs are "
                                      "not supported by GpuAcc");
            }
            if (d.m_Softcap != 0.0f || d.m_QkMatmulOutputMode != 0 || d.m_LeftWindow >= 0 || d.m_RightWindow >= 0) {
                return Refuse(reason, "Attention: softcap, qk_matmul_output_mode and windows are not supported by GpuAcc");
            }
            const unsigned int rank = in[0].GetNumDimensions();
            for (std::size_t i = 0; i < 3; ++i) {
                if (in[i].GetNumDimensions() != rank || (rank != 3 && rank != 4)) {
                    return Refuse(reason, "Attention: Q, K and V must all be 3-D or all 4-D");
                }
            }
            const unsigned int hq = rank == 4 ? in[0].GetShape()[1] : d.m_QNumHeads;
            const unsigned int hkv = rank == 4 ? in[1].GetShape()[1] : d.m_KvNumHeads;
            if (hq == 0 || hkv == 0 || hq % hkv != 0) {
                return Refuse(reason, "Attention: the query heads must be a multiple of the key/value heads");
            }
            const unsigned int skv = in[1].GetShape()[rank - 2];
            if (skv > kAttentionRefMaxKeys) {
                return Refuse(reason, "Attention: more than " + std::to_string(kAttentionRefMaxKeys) + " keys");
            }
            if (d.m_HasMask) {
                const TensorShape& m = in[3].GetShape();
                if (m.GetNumDimensions() > 4 || m.GetNumDimensions() < 2 || m[m.GetNumDimensions() - 1] != skv) {
                    return Refuse(reason, "Attention: GpuAcc takes a mask whose last dim is the number of keys (" +
                                              std::to_string(skv) + "), broadcast over the others");
                }
            }
            return true;
        }
        case LayerType::RmsNormalization: {
            if (!AllFloat32("RMSNormalization", in, in.size(), reason)) return false;
            if (!isConst[1]) return Refuse(reason, "RMSNormalization: the scale must be constant");
            const auto& d = std::get<RmsNormalizationDescriptor>(descriptor);
            const int rank = static_cast<int>(in[0].GetNumDimensions());
            const int axis = d.m_Axis < 0 ? d.m_Axis + rank : d.m_Axis;
            std::size_t inner = 1;
            for (int i = axis; i < rank; ++i) inner *= in[0].GetShape()[static_cast<unsigned int>(i)];
            if (in[1].GetNumElements() != inner) {
                return Refuse(reason, "RMSNormalization: the scale must have one value per normalized element (" +
                                          std::to_string(inner) + "), has " + std::to_string(in[1].GetNumElements()));
            }
            return true;
        }
        case LayerType::Reduce: return IsReduceSupported(std::get<ReduceDescriptor>(descriptor), in, reason);
        case LayerType::Transpose:
        case LayerType::Concat:
        case LayerType::Reshape:
        case LayerType::Identity:
            return true;
        case LayerType::Split:
        case LayerType::Slice:
        case LayerType::Expand:
            if (in.size() != 1) return Refuse(reason, op + ": its parameter inputs must be constant");
            return true;
        case LayerType::Gather: {
            const DataType t = in[1].GetDataType();
            if (t != DataType::Signed32 && t != DataType::Signed64) {
                return Refuse(reason, "Gather: the indices must be Signed32 or Signed64");
            }
            return true;
        }
        case LayerType::Resize: {
            const auto& d = std::get<ResizeDescriptor>(descriptor);
            if (!AllFloat32("Resize", in, 1, reason)) return false;
            for (std::size_t i = 1; i < in.size(); ++i) {
                if (!isConst[i]) return Refuse(reason, "Resize: roi, scales and sizes must be constant");
            }
            const unsigned int rank = in[0].GetNumDimensions();
            if (d.m_Scales.size() != rank) return Refuse(reason, "Resize: the scales are not resolved (one per dim)");
            if (d.m_CoordinateTransform == CoordinateTransform::TfCropAndResize) {
                return Refuse(reason, "Resize: tf_crop_and_resize is not supported by GpuAcc");
            }
            if (d.m_CoordinateTransform == CoordinateTransform::HalfPixelSymmetric) {
                return Refuse(reason, "Resize: half_pixel_symmetric is not supported by GpuAcc");
            }
            if (d.m_Antialias && d.m_Mode != ResizeMode::Nearest) {
                return Refuse(reason, "Resize: antialias is not supported by GpuAcc");
            }
            if (d.m_Mode != ResizeMode::Nearest && d.m_CoordinateTransform == CoordinateTransform::TfHalfPixelForNearest) {
                return Refuse(reason, "Resize: tf_half_pixel_for_nn is defined for nearest mode only");
            }
            // Linear and cubic map dims of scale 1 index to index; every combination of the
            // other dims' taps is read (2 or 4 per dim), so at most kMaxResampledDims of them.
            int resampled = 0;
            for (unsigned int i = 0; i < rank; ++i) {
                resampled += in[0].GetShape()[i] != out[0].GetShape()[i] || d.m_Scales[i] != 1.0f ? 1 : 0;
            }
            if (d.m_Mode != ResizeMode::Nearest && resampled > kMaxResampledDims) {
                return Refuse(reason, "Resize: " + std::to_string(resampled) + " resampled dims; GpuAcc resamples at most " +
                                          std::to_string(kMaxResampledDims));
            }
            return true;
        }
        case LayerType::Pad: {
            const auto& d = std::get<PadDescriptor>(descriptor);
            if (!AllFloat32("Pad", in, 1, reason)) return false;
            for (std::size_t i = 1; i < in.size(); ++i) {
                if (!isConst[i]) return Refuse(reason, "Pad: pads, value and axes must be constant");
            }
            if (d.m_Pads.size() != 2 * static_cast<std::size_t>(in[0].GetNumDimensions())) {
                return Refuse(reason, "Pad: the pads are not resolved (a begin and an end per dim)");
            }
            return true;
        }
        case LayerType::Trilu:
            if (!AllFloat32("Trilu", in, 1, reason)) return false;
            if (in.size() > 1 && !isConst[1]) return Refuse(reason, "Trilu: k must be constant");
            if (in[0].GetNumDimensions() < 2) return Refuse(reason, "Trilu: the input needs two dims");
            return true;
        case LayerType::ArgMinMax:
            if (!AllFloat32("ArgMinMax", in, 1, reason)) return false;
            if (in[0].GetNumDimensions() == 0) return Refuse(reason, "ArgMinMax: scalar input");
            return true;
        case LayerType::MemCopy:
            if (in[0].GetNumBytes() != out[0].GetNumBytes()) {
                return Refuse(reason, "MemCopy: input " + in[0].ToString() + " and output " + out[0].ToString() +
                                          " differ in size");
            }
            return true;
        default: break;
    }
    return Refuse(reason, "GpuAcc has no kernel for " + op);
}

bool GpuAccLayerSupport::IsLayerSupported(const QueueDescriptor& layer, const WorkloadInfo& info,
                                          std::string* reason) const {
    if (!layer.m_Descriptor) return Refuse(reason, "the layer has no descriptor");
    if (layer.m_Type == LayerType::PreCompiled) {
        const auto* d = std::get_if<PreCompiledDescriptor>(layer.m_Descriptor);
        if (!d || !RegionObject::IsRegionObject(d->m_PreCompiledObject.get())) {
            return Refuse(reason, "PreCompiled: the layer's object was not created by GpuAcc");
        }
        const auto& graph = *static_cast<const RegionObject*>(d->m_PreCompiledObject.get())->GetGraph();
        if (info.m_InputTensorInfos != graph.m_InputInfos || info.m_OutputTensorInfos != graph.m_OutputInfos) {
            return Refuse(reason, "PreCompiled: the tensors differ from those the region was compiled for");
        }
        return true;
    }
    std::vector<bool> constants;
    for (const ConstTensor* c : layer.m_ConstantInputs) constants.push_back(c != nullptr);
    if (layer.m_Type == LayerType::MemCopy) constants.assign(constants.size(), false);
    return IsSupportedLayer(layer.m_Type, *layer.m_Descriptor, info.m_InputTensorInfos, info.m_OutputTensorInfos,
                            constants, reason);
}

}  // namespace trellis::gpuacc
