#include "ArtifactMemoryPlan.hpp"

#include <algorithm>
#include <numeric>
#include <utility>

namespace trellis::codegen {

namespace {
std::size_t Aligned(std::size_t bytes) {
    return (bytes + ArtifactMemoryPlan::kAlignment - 1) / ArtifactMemoryPlan::kAlignment * ArtifactMemoryPlan::kAlignment;
}
}  // namespace

int ArtifactMemoryPlan::AddBuffer(std::size_t bytes, int first, int last) {
    m_Buffers.push_back({bytes, std::min(first, last), std::max(first, last), 0});
    return static_cast<int>(m_Buffers.size() - 1);
}

void ArtifactMemoryPlan::Touch(int id, int step) {
    Buffer& b = m_Buffers[static_cast<std::size_t>(id)];
    b.m_First = std::min(b.m_First, step);
    b.m_Last = std::max(b.m_Last, step);
}

void ArtifactMemoryPlan::Plan() {
    std::vector<std::size_t> order(m_Buffers.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return m_Buffers[a].m_Bytes > m_Buffers[b].m_Bytes; });
    std::vector<std::size_t> placed;
    m_Size = 0;
    for (std::size_t id : order) {
        Buffer& s = m_Buffers[id];
        const std::size_t size = Aligned(s.m_Bytes);
        std::vector<std::pair<std::size_t, std::size_t>> busy;
        for (std::size_t p : placed) {
            const Buffer& o = m_Buffers[p];
            if (o.m_First <= s.m_Last && s.m_First <= o.m_Last) busy.emplace_back(o.m_Offset, o.m_Offset + Aligned(o.m_Bytes));
        }
        std::sort(busy.begin(), busy.end());
        std::size_t offset = 0;
        for (const auto& [b, e] : busy) {
            if (offset + size <= b) break;
            offset = std::max(offset, e);
        }
        s.m_Offset = offset;
        m_Size = std::max(m_Size, offset + size);
        placed.push_back(id);
    }
}

std::size_t ArtifactMemoryPlan::GetUnplannedSize() const {
    std::size_t total = 0;
    for (const Buffer& b : m_Buffers) total += Aligned(b.m_Bytes);
    return total;
}

}  // namespace trellis::codegen
