// CpuRef: helpers shared by the kernels that move elements without computing on them (Concat,
// Split, Slice, Transpose, Expand, Pad, Gather, Where, Reshape, Identity, MemCopy), and the
// small support-check helpers every kernel file of this family uses.
//
// The copier is the kernel snippet kernels/StridedCopy.hpp (raw bytes by element size, so one
// implementation serves every DataType). Everything is immutable after construction: workloads
// share it across threads freely.
#pragma once

#include "kernels/StridedCopy.hpp"

#include <trellis/backends/IWorkload.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace trellis::ref {

/// Row-major strides (in elements) of a dense tensor of `shape`.
std::vector<int64_t> RowMajorStrides(const TensorShape& shape);

/// The element copier (kernels/StridedCopy.hpp): MakeStridedCopy(dims, srcStrides, dstStrides,
/// elementSize) builds one, Run(src, dst) copies.
using kernels::CopyBytes;
using kernels::FillElements;
using kernels::MakeStridedCopy;
using kernels::StridedCopy;

/// Sets *reason (when given) to `message` and returns false: how support checks say no.
bool Refuse(std::string* reason, const std::string& message);

/// Support rule: exactly `numInputs` inputs and `numOutputs` outputs (parameter inputs must have
/// been folded into the descriptor by Optimize()).
bool CheckArity(const char* op, const WorkloadInfo& info, std::size_t numInputs, std::size_t numOutputs,
                std::string* reason);

/// Support rule of kernels that move raw elements: `t` holds the same element encoding (data type
/// and quantization) as `ref`, so its bytes mean the same values. `what`/`refWhat` name the two
/// tensors in the reason ("input 2", "output").
bool CheckSameEncoding(const char* op, const char* what, const TensorInfo& t, const char* refWhat,
                       const TensorInfo& ref, std::string* reason);

/// Support rule: `t` has data type `type`.
bool CheckType(const char* op, const char* what, const TensorInfo& t, DataType type, std::string* reason);

}  // namespace trellis::ref
