// Artifact support code: reading the weights file <Name>.params. Emitted verbatim into every
// artifact (the same rules as the kernel snippets: see
// src/backends/reference/kernels/KernelSnippets.md); the writer is src/codegen/ArtifactParams.cpp.
//
// Format, version 1 (integers little-endian):
//   offset  size  field
//        0     8  magic "TRLPARAM"
//        8     4  format version (1)
//       12     4  alignment of every weight's offset, in bytes (64)
//       16     8  hash of the model (the artifact checks it equals its own)
//       24     8  size of the whole file, in bytes
//       32     8  number of weight tensors
//       40    24  zero
//       64        the weights, each at an offset (from the file's start) that is a multiple of the
//                 alignment, so a mapping of the file can be used in place
// Where POSIX mmap is available the file is mapped read-only and the weights are used without a
// copy; elsewhere it is read into memory once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#if defined(__unix__) || defined(__APPLE__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

namespace trellis::artifact {

class ParamsFile {
public:
    static constexpr std::uint32_t kVersion = 1;
    static constexpr std::size_t kHeaderBytes = 64;

    ParamsFile() = default;
    ParamsFile(const ParamsFile&) = delete;
    ParamsFile& operator=(const ParamsFile&) = delete;
    ~ParamsFile() { Close(); }

    /// Maps (or reads) `path` and checks it is the weights file of the model whose hash is `hash`
    /// and whose file is `size` bytes long; throws std::runtime_error naming the file and the rule.
    void Open(const std::string& path, std::uint64_t hash, std::uint64_t size) {
        Close();
#if defined(__unix__) || defined(__APPLE__)
        const int fd = ::open(path.c_str(), O_RDONLY);
        if (fd < 0) throw std::runtime_error(path + ": cannot open the weights file");
        struct stat st {};
        if (::fstat(fd, &st) != 0) {
            ::close(fd);
            throw std::runtime_error(path + ": cannot read the weights file's size");
        }
        const std::uint64_t actual = static_cast<std::uint64_t>(st.st_size);
#if defined(MAP_POPULATE)
        // Read ahead as the mapping is made: the layers read every weight right away.
        const int flags = MAP_PRIVATE | MAP_POPULATE;
#else
        const int flags = MAP_PRIVATE;
#endif
        void* map = actual >= kHeaderBytes ? ::mmap(nullptr, static_cast<std::size_t>(actual), PROT_READ, flags, fd, 0)
                                           : MAP_FAILED;
        ::close(fd);
        if (map == MAP_FAILED) {
            Check(path, nullptr, actual, hash, size);  // throws: too short
            throw std::runtime_error(path + ": cannot map the weights file");
        }
        m_Map = map;
        m_MapBytes = static_cast<std::size_t>(actual);
        m_Data = static_cast<const unsigned char*>(map);
        try {
            Check(path, m_Data, actual, hash, size);
        } catch (...) {
            Close();
            throw;
        }
#else
        std::ifstream in(path, std::ios::binary | std::ios::ate);
        if (!in) throw std::runtime_error(path + ": cannot open the weights file");
        const std::uint64_t actual = static_cast<std::uint64_t>(in.tellg());
        in.seekg(0);
        m_Copy.reset(new unsigned char[static_cast<std::size_t>(actual) + 64]);
        unsigned char* p = m_Copy.get();
        while (reinterpret_cast<std::uintptr_t>(p) % 64 != 0) ++p;
        if (!in.read(reinterpret_cast<char*>(p), static_cast<std::streamsize>(actual))) {
            throw std::runtime_error(path + ": cannot read the weights file");
        }
        m_Data = p;
        Check(path, m_Data, actual, hash, size);
#endif
    }

    /// The first byte of the file; a weight at offset k is at Data() + k.
    const unsigned char* Data() const { return m_Data; }

    void Close() {
#if defined(__unix__) || defined(__APPLE__)
        if (m_Map) ::munmap(m_Map, m_MapBytes);
        m_Map = nullptr;
        m_MapBytes = 0;
#endif
        m_Copy.reset();
        m_Data = nullptr;
    }

private:
    static std::uint64_t Read(const unsigned char* p, int bytes) {
        std::uint64_t v = 0;
        for (int i = bytes; i-- > 0;) v = (v << 8) | p[i];
        return v;
    }

    static std::string Hex(std::uint64_t v) {
        char text[24];
        std::snprintf(text, sizeof(text), "0x%016llx", static_cast<unsigned long long>(v));
        return text;
    }

    static void Check(const std::string& path, const unsigned char* p, std::uint64_t actual, std::uint64_t hash,
                      std::uint64_t size) {
        if (actual < kHeaderBytes) {
            throw std::runtime_error(path + ": truncated weights file (" + std::to_string(actual) +
                                     " bytes, shorter than the " + std::to_string(kHeaderBytes) + "-byte header)");
        }
        static const char kMagic[8] = {'T', 'R', 'L', 'P', 'A', 'R', 'A', 'M'};
        for (int i = 0; i < 8; ++i) {
            if (p[i] != static_cast<unsigned char>(kMagic[i])) {
                throw std::runtime_error(path + ": not a Trellis artifact weights file (no TRLPARAM magic)");
            }
        }
        const std::uint64_t version = Read(p + 8, 4);
        if (version != kVersion) {
            throw std::runtime_error(path + ": weights file format version " + std::to_string(version) +
                                     "; this artifact reads version " + std::to_string(kVersion));
        }
        const std::uint64_t fileHash = Read(p + 16, 8);
        if (fileHash != hash) {
            throw std::runtime_error(path + ": the weights file belongs to another model (model hash " + Hex(fileHash) +
                                     ", this artifact's is " + Hex(hash) + ")");
        }
        const std::uint64_t declared = Read(p + 24, 8);
        if (declared != size || actual < declared) {
            throw std::runtime_error(path + ": truncated or damaged weights file (" + std::to_string(actual) +
                                     " bytes; the header says " + std::to_string(declared) + ", the artifact expects " +
                                     std::to_string(size) + ")");
        }
    }

    const unsigned char* m_Data = nullptr;
    void* m_Map = nullptr;
    std::size_t m_MapBytes = 0;
    std::unique_ptr<unsigned char[]> m_Copy;
};

}  // namespace trellis::artifact
