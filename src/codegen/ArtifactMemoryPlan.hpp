// Code generator: the static memory plan of an artifact's arena. Buffers live over a range of steps
// (layers, in execution order); each is placed, largest first, at the lowest 64-byte aligned offset
// not used by a buffer alive at the same time (the same rule as the runtime's MemoryPlanner and
// CpuAcc's region planner). The artifact allocates GetSize() bytes once, in its constructor.
#pragma once

#include <cstddef>
#include <vector>

namespace trellis::codegen {

class ArtifactMemoryPlan {
public:
    static constexpr std::size_t kAlignment = 64;
    /// A buffer of `bytes` alive from step `first` to step `last` (inclusive); returns its id.
    int AddBuffer(std::size_t bytes, int first, int last);
    /// Extends buffer `id`'s lifetime to cover step `step`.
    void Touch(int id, int step);
    /// Places every buffer. Call once, after the last AddBuffer/Touch.
    void Plan();
    std::size_t GetOffset(int id) const { return m_Buffers[static_cast<std::size_t>(id)].m_Offset; }
    std::size_t GetBytes(int id) const { return m_Buffers[static_cast<std::size_t>(id)].m_Bytes; }
    /// The arena's size.
    std::size_t GetSize() const { return m_Size; }
    /// What the buffers would take without reuse.
    std::size_t GetUnplannedSize() const;
private:
    struct Buffer {
        std::size_t m_Bytes = 0;
        int m_First = 0, m_Last = 0;
        std::size_t m_Offset = 0;
    };
    std::vector<Buffer> m_Buffers;
    std::size_t m_Size = 0;
};

}  // namespace trellis::codegen
