// libFuzzer target: the dynamic-backend file loader (src/core/DynamicBackendLoader.cpp) on files
// of fuzzed bytes, without ever running them.
//
// Input layout: byte 0 chooses how the file is laid out (bits below); byte 1 is the length n of a
// file name taken from the next n bytes ('/' and NUL replaced); the rest is the file's content.
//   bit 0: use the fuzzed name instead of "Fuzz_Target_backend.so"
//   bit 1: add a version suffix ".1.2" to the name
//   bit 2: reach the file through a symlink named like a backend (and the file under another name)
//   bit 3: add a dangling symlink named like a backend
//   bit 4: add a second symlink to the same file (the duplicate rule)
//   bit 5: add a directory named like a backend
// Each input runs the file-name rule on the fuzzed name, CheckSharedObject() on the content, and a
// whole scan (DynamicBackendSet::LoadPaths, as IRuntime::Create does) of a fresh directory laid
// out as chosen. The library of this build is compiled with TRELLIS_FUZZING_NO_DLOPEN, so a file
// that passes every check before dlopen is reported as not opened instead of being opened: the
// fuzzed bytes never run. What comes after dlopen (symbols, GetVersion, the version rule, ids,
// factories) is code of the loaded file and is covered by the test backends of tests/dynamic in
// tests/unit/dynamic_backend_test.cpp; the version rule itself (IsBackendApiCompatible) is run
// here on versions taken from the content.
#include "FuzzCommon.hpp"

#include "core/DynamicBackendLoader.hpp"

#include <trellis/backends/BackendVersion.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

namespace {

constexpr std::size_t kMaxFileBytes = 256 * 1024;
namespace fs = std::filesystem;

void Check(bool ok) {
    if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    using namespace trellis;
    if (size > kMaxFileBytes) return -1;
    const unsigned int flags = size > 0 ? data[0] : 0;
    std::size_t pos = size > 0 ? 1 : 0;
    std::size_t nameLength = 0;
    if (pos < size) {
        nameLength = data[pos];
        ++pos;
        nameLength = std::min(nameLength, size - pos);
    }
    std::string fuzzedName(reinterpret_cast<const char*>(data + pos), nameLength);
    pos += nameLength;
    for (char& c : fuzzedName) {
        if (c == '/' || c == '\0') c = '_';
    }
    const unsigned char* content = data + pos;
    const std::size_t contentSize = size - pos;

    // The rules that need no file.
    (void)core::IsValidDynamicBackendFileName(fuzzedName);
    (void)core::SplitDynamicBackendPaths(fuzzedName);
    const std::string reason = core::CheckSharedObject(content, contentSize, contentSize);
    if (contentSize >= 8) {
        uint32_t major = 0, minor = 0;
        std::memcpy(&major, content, 4);
        std::memcpy(&minor, content + 4, 4);
        (void)IsBackendApiCompatible(kBackendApiVersion, BackendVersion{major, minor});
    }

    // A fresh directory laid out as the flags say, scanned as IRuntime::Create scans one.
    static const fs::path root = fuzz::ScratchDir() / "backends";
    std::error_code ec;
    fs::remove_all(root, ec);
    fs::create_directories(root);
    std::string name = (flags & 1) && !fuzzedName.empty() && fuzzedName != "." && fuzzedName != ".."
                           ? fuzzedName
                           : std::string("Fuzz_Target_backend.so");
    if (flags & 2) name += ".1.2";
    if (name.size() > 200) name.resize(200);
    const fs::path file = root / ((flags & 4) ? "payload.bin" : name);
    fuzz::WriteBytes(file, content, contentSize);
    if (flags & 4) fs::create_symlink(file, root / name, ec);
    if (flags & 8) fs::create_symlink(root / "missing.so", root / "Fuzz_Dangling_backend.so", ec);
    if (flags & 16) fs::create_symlink(file, root / "Fuzz_Again_backend.so", ec);
    if (flags & 32) fs::create_directories(root / "Fuzz_Directory_backend.so", ec);

    // The whole scan must agree with the check above and never open the file.
    std::unique_ptr<core::DynamicBackendSet> set = core::DynamicBackendSet::LoadPaths({root.string()});
    for (const DynamicBackendStatus& status : set->GetStatus()) {
        Check(!status.m_Loaded);
        if (status.m_CanonicalPath == fs::canonical(file, ec).string() && !reason.empty()) {
            Check(status.m_Reason == "not a loadable shared object: " + reason ||
                  status.m_Reason.find("duplicate") == 0);
        }
    }
    return 0;
}
