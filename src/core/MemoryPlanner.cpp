#include "MemoryPlanner.hpp"

#include <algorithm>
#include <numeric>

namespace trellis::core {

std::size_t PlanMemory(std::vector<MemoryBlock>& blocks) {
    std::vector<std::size_t> order(blocks.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return blocks[a].m_Bytes > blocks[b].m_Bytes; });

    std::vector<std::size_t> placed;
    std::size_t arena = 0;
    for (std::size_t idx : order) {
        MemoryBlock& blk = blocks[idx];
        const std::size_t size = AlignedBlockBytes(blk);
        // Blocks already placed that are alive at the same time, by offset.
        std::vector<std::size_t> conflicts;
        for (std::size_t p : placed) {
            const MemoryBlock& o = blocks[p];
            if (o.m_FirstStep <= blk.m_LastStep && blk.m_FirstStep <= o.m_LastStep) conflicts.push_back(p);
        }
        std::sort(conflicts.begin(), conflicts.end(), [&](std::size_t a, std::size_t b) { return blocks[a].m_Offset < blocks[b].m_Offset; });
        std::size_t offset = 0;
        for (std::size_t c : conflicts) {
            const MemoryBlock& o = blocks[c];
            if (SaturatingAdd(offset, size) <= o.m_Offset) break;  // fits in the gap before this one
            offset = std::max(offset, SaturatingAdd(o.m_Offset, AlignedBlockBytes(o)));
        }
        blk.m_Offset = offset;
        arena = std::max(arena, SaturatingAdd(offset, size));
        placed.push_back(idx);
    }
    return arena;
}

}  // namespace trellis::core
