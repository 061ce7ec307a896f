// CpuRef: helpers shared by the kernels that move elements without computing on them (Concat,
// Split, Slice, Transpose, Expand, Pad, Gather, Where, Reshape, Identity, MemCopy), and the
// small support-check helpers every kernel file of this family uses.
//
// The copiers work on raw bytes by element size, so one implementation serves every DataType.
// Strides count elements; a stride may be 0 (broadcast) or negative (a reversed slice).
// Everything is immutable after construction: workloads share it across threads freely.
#pragma once

#include <trellis/backends/IWorkload.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace trellis::ref {

/// Row-major strides (in elements) of a dense tensor of `shape`.
std::vector<int64_t> RowMajorStrides(const TensorShape& shape);

/// Copies the box `dims`: element (i_0, ..., i_n) goes from src + sum(i_k * srcStrides[k]) to
/// dst + sum(i_k * dstStrides[k]) (in elements). Built once at workload creation; dims that are
/// contiguous on both sides are merged, so a dense copy becomes one memcpy.
class StridedCopy {
public:
    StridedCopy() = default;
    StridedCopy(const std::vector<int64_t>& dims, const std::vector<int64_t>& srcStrides,
                const std::vector<int64_t>& dstStrides, std::size_t elementSize);
    /// `src` and `dst` point at the box's first element on each side.
    void Run(const void* src, void* dst) const;
private:
    void Level(std::size_t level, const std::byte* src, std::byte* dst) const;
    std::vector<int64_t> m_Dims;        // merged; empty when the box has no elements
    std::vector<int64_t> m_SrcStrides;  // in bytes
    std::vector<int64_t> m_DstStrides;  // in bytes
    std::size_t m_ElementSize = 0;
};

/// Fills `count` elements at `dst` with copies of the `elementSize`-byte element at `value`.
void FillElements(void* dst, const void* value, std::size_t elementSize, std::size_t count);

/// Copies `bytes` bytes; nothing when the two pointers are the same buffer (in-place layers).
void CopyBytes(const void* src, void* dst, std::size_t bytes);

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
