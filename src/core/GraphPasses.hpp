// Internal: backend-independent graph passes run by Optimize() after shape inference.
//
// Each pass is a small function over a fully inferred graph; it keeps every tensor info valid
// and appends one log line per change. Passes never change what the network computes.
#pragma once

#include "Graph.hpp"

#include <string>
#include <vector>

namespace trellis::core {

/// Identity layers, and Casts to the type (and quantization) their input already has, are bypassed.
unsigned int RemoveIdentities(Graph& graph, std::vector<std::string>& log);
/// Reshape to the same shape is bypassed; Reshape after Reshape reads the first one's input.
unsigned int SimplifyReshapes(Graph& graph, std::vector<std::string>& log);
/// Identity-permutation Transposes are bypassed; Transpose after Transpose becomes one.
unsigned int SimplifyTransposes(Graph& graph, std::vector<std::string>& log);
/// BatchNormalization after a Convolution or Gemm with constant weights is folded into them.
unsigned int FoldBatchNorms(Graph& graph, std::vector<std::string>& log);

/// A Where whose condition is a constant that is all true (all false) is its second (third) input,
/// where that input already has the output's shape and type: DistilBERT's mask fill
/// Where(mask == 0, finfo.min, scores) with no padding mask exported is the scores, and the
/// attention around it can fuse.
unsigned int FoldConstantConditionWheres(Graph& graph, std::vector<std::string>& log);
/// A Float32 Gather of one constant index (a scalar, or a 1-element list) is a Slice of that index on its
/// axis, then (scalar) a Reshape that drops the axis: PyTorch 2.x exports nn.MultiheadAttention's
/// split of the packed Q/K/V projection as three such Gathers, which backends without an
/// Int64-indexed Gather (CpuAcc) would leave to CpuRef. Indices out of range are left to Gather.
unsigned int LowerConstantIndexGathers(Graph& graph, std::vector<std::string>& log);
/// A constant-zero Pad of the spatial dims before an AveragePool (floor mode, no dilation) becomes
/// the pool's own padding with count_include_pad = 1 (what PyTorch's avg_pool2d with padding
/// exports to; the same sums and divisors), where the pool had no padding or counted it already.
unsigned int FoldPadsIntoAveragePools(Graph& graph, std::vector<std::string>& log);
/// A Convolution with constant Float32 weights whose outer kernel taps read only padding at every
/// output position (DeepLab's ASPP: dilation 24 or 36 on a 14x14 map) loses those taps: the
/// weights are cropped and the pads reduced by as much, so the output shape and every sum are
/// unchanged (the dropped products were weight x 0). Not where a dropped weight is infinite or NaN
/// (that product would be NaN).
unsigned int CropConvolutionTapsOverPadding(Graph& graph, std::vector<std::string>& log);

/// A Float32 Einsum of two inputs that is a batched matrix product ("bhid,bhjd->bhij") becomes a
/// MatMul, with Transposes where the labels are not in [batch..., rows, inner] x [batch..., inner,
/// cols] order: backends run MatMul with their fast kernels (CpuRef's Einsum is a generic loop).
unsigned int LowerEinsumToMatMul(Graph& graph, std::vector<std::string>& log);

/// All of the above (the Einsum lowering once, first), the rest repeated until nothing changes.
void RunGraphPasses(Graph& graph, std::vector<std::string>& log);

}  // namespace trellis::core
