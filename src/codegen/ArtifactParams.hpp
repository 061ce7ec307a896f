// Code generator: writing an artifact's weights file, <Name>.params (the format is described in
// resources/ParamsFile.hpp, the reader every artifact carries). The op generator adds each constant
// tensor once as it visits the graph (the seed's "serializes the weights as a side effect") and
// learns its offset; Finish() writes the header with the model hash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace trellis::codegen {

class ArtifactParamsWriter {
public:
    static constexpr std::size_t kAlignment = 64;
    static constexpr std::size_t kHeaderBytes = 64;
    static constexpr std::uint32_t kVersion = 1;

    /// Appends `bytes` bytes at the next aligned offset and returns that offset (from the file's start).
    std::uint64_t Add(const void* data, std::size_t bytes);
    std::size_t GetNumTensors() const { return m_NumTensors; }
    /// The file: header (with a hash of `structure` and of every weight) and the weights.
    std::vector<std::uint8_t> Finish(const std::string& structure);
    /// The hash Finish() put in the header.
    std::uint64_t GetHash() const { return m_Hash; }
    /// The file's size once finished.
    std::uint64_t GetFileSize() const { return m_Bytes.size() + kHeaderBytes; }

private:
    std::vector<std::uint8_t> m_Bytes;  ///< the payload, from offset kHeaderBytes
    std::size_t m_NumTensors = 0;
    std::uint64_t m_Hash = 0;
};

/// FNV-1a, 64 bits.
std::uint64_t HashBytes(const void* data, std::size_t bytes, std::uint64_t seed = 14695981039346656037ull);

}  // namespace trellis::codegen
