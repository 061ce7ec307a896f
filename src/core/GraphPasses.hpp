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

/// A Float32 Einsum of two inputs that is a batched matrix product ("bhid,bhjd->bhij") becomes a
/// MatMul, with Transposes where the labels are not in [batch..., rows, inner] x [batch..., inner,
/// cols] order: backends run MatMul with their fast kernels (CpuRef's Einsum is a generic loop).
unsigned int LowerEinsumToMatMul(Graph& graph, std::vector<std::string>& log);

/// All of the above (the Einsum lowering once, first), the rest repeated until nothing changes.
void RunGraphPasses(Graph& graph, std::vector<std::string>& log);

}  // namespace trellis::core
