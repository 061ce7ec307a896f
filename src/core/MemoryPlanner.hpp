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

/// Sets every block's m_Offset (64-byte aligned) and returns the arena size.
std::size_t PlanMemory(std::vector<MemoryBlock>& blocks);

}  // namespace trellis::core
