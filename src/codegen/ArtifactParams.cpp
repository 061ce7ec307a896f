#include "ArtifactParams.hpp"

#include <cstring>

namespace trellis::codegen {

std::uint64_t HashBytes(const void* data, std::size_t bytes, std::uint64_t seed) {
    const auto* p = static_cast<const std::uint8_t*>(data);
    std::uint64_t h = seed;
    for (std::size_t i = 0; i < bytes; ++i) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

std::uint64_t ArtifactParamsWriter::Add(const void* data, std::size_t bytes) {
    while ((m_Bytes.size() + kHeaderBytes) % kAlignment != 0) m_Bytes.push_back(0);
    const std::uint64_t offset = m_Bytes.size() + kHeaderBytes;
    const auto* p = static_cast<const std::uint8_t*>(data);
    m_Bytes.insert(m_Bytes.end(), p, p + bytes);
    ++m_NumTensors;
    return offset;
}

std::vector<std::uint8_t> ArtifactParamsWriter::Finish(const std::string& structure) {
    m_Hash = HashBytes(m_Bytes.data(), m_Bytes.size(), HashBytes(structure.data(), structure.size()));
    std::vector<std::uint8_t> file(kHeaderBytes + m_Bytes.size(), 0);
    std::memcpy(file.data(), "TRLPARAM", 8);
    const auto put = [&](std::size_t at, std::uint64_t v, int bytes) {
        for (int i = 0; i < bytes; ++i) file[at + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v >> (8 * i));
    };
    put(8, kVersion, 4);
    put(12, kAlignment, 4);
    put(16, m_Hash, 8);
    put(24, GetFileSize(), 8);
    put(32, m_NumTensors, 8);
    if (!m_Bytes.empty()) std::memcpy(file.data() + kHeaderBytes, m_Bytes.data(), m_Bytes.size());
    return file;
}

}  // namespace trellis::codegen
