// Helpers shared by the libFuzzer targets of tests/fuzz (see docs/reliability.md).
//
// Contract of every target: an input may end in one of the engine's own exceptions
// (trellis::Exception and its subclasses: a clean, named refusal) and nothing else. A crash, a
// sanitizer report, a timeout, an allocation beyond libFuzzer's -malloc_limit_mb or any other
// exception escaping the target is a bug; libFuzzer saves the input as a reproducer.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace trellis::fuzz {

/// A private directory for this process's files (removed at exit): under $TMPDIR when set, else
/// /dev/shm where it exists (rewriting a file on a disk file system costs milliseconds: ext4
/// flushes a truncated-and-rewritten file, which made the file-based targets 30x slower), else
/// /tmp.
inline const std::filesystem::path& ScratchDir() {
    static const std::filesystem::path dir = [] {
        std::error_code ec;
        const bool shm = std::getenv("TMPDIR") == nullptr && std::filesystem::is_directory("/dev/shm", ec);
        const std::filesystem::path base = shm ? std::filesystem::path("/dev/shm") : std::filesystem::temp_directory_path();
        std::string pattern = (base / "trellis_fuzz_XXXXXX").string();
        if (!::mkdtemp(pattern.data())) std::abort();
        static const std::string remove = pattern;
        std::atexit([] {
            std::error_code ec;
            std::filesystem::remove_all(remove, ec);
        });
        return std::filesystem::path(pattern);
    }();
    return dir;
}

inline void WriteBytes(const std::filesystem::path& path, const unsigned char* data, std::size_t size) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out) std::abort();  // the fuzzer's own environment is broken, not the engine
}

}  // namespace trellis::fuzz
