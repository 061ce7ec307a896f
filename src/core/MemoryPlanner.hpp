// Internal: assigns arena offsets to tensors by lifetime.
//
// Each block lives from the step that writes it to the last step that reads it (inclusive).
// Blocks whose lifetimes overlap never share bytes; others may. Greedy by size, largest first,
// each at the lowest offset that fits (the strategy TFLite's arena planner and others use).
#pragma once

#include <cstddef>
#include <vector>

namespace trellis::core {

struct MemoryBlock {
    std::size_t m_Bytes = 0;
    unsigned int m_FirstStep = 0;
    unsigned int m_LastStep = 0;
    std::size_t m_Offset = 0;  ///< output of PlanMemory
};

/// Sets every block's m_Offset (64-byte aligned) and returns the arena size. Sizes saturate at
/// SIZE_MAX instead of wrapping (the caller's working-memory limit then refuses the plan).
std::size_t PlanMemory(std::vector<MemoryBlock>& blocks);

/// a + b, or SIZE_MAX when that overflows.
inline std::size_t SaturatingAdd(std::size_t a, std::size_t b) {
    std::size_t sum = 0;
    return __builtin_add_overflow(a, b, &sum) ? static_cast<std::size_t>(-1) : sum;
}
/// A block's size in the arena: at least 1 byte, rounded up to the 64-byte alignment (saturating).
inline std::size_t AlignedBlockBytes(const MemoryBlock& block) {
    const std::size_t bytes = block.m_Bytes == 0 ? 1 : block.m_Bytes;
    return SaturatingAdd(bytes, 63) / 64 * 64;
}

}  // namespace trellis::core
