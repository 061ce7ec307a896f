// libtrellis_avx2_cpuid.so: makes an x86-64 CPU with AVX-512 look like an AVX2-only one to the
// libraries of the process that loads it (LD_AUDIT), so a benchmark can compare Trellis capped to
// AVX2 against a peer whose kernels have no cap of their own (ONNX Runtime's MLAS, XNNPACK's
// cpuinfo and numpy all read CPUID directly). bench/cpu/run_bench.py --isa-cap AVX2 loads it into
// both processes. The CPUID seen lacks the AVX-512, AMX and AVX-VNNI/AVX-IFMA feature bits (the ISA
// of an AMD Zen 2/3 or an Intel Skylake client) and keeps every other bit.
//
// Two ways, the first where the machine has it:
// 1. CPUID faulting (arch_prctl ARCH_SET_CPUID; x86 CPUs and hypervisors that offer it show
//    `cpuid_fault` in /proc/cpuinfo) makes every CPUID instruction of this thread and of the
//    threads and processes it starts raise SIGSEGV; the handler runs the real CPUID with faulting
//    briefly off, clears the bits and steps over the instruction. Covers every library.
// 2. Without faulting, the CPUID instructions of the libraries listed in the file that
//    TRELLIS_AVX2_CPUID_SITES names (lines "<real path> <hex address>...", the addresses of the
//    object's CPUID instructions as `objdump -d` prints them; tools/avx2_cpuid/cpuid_sites.py
//    writes it) are overwritten with UD2 (the same two bytes long) when the dynamic linker maps the
//    object, before it is relocated or initialized (the la_objopen audit hook, also for dlopen); the
//    SIGILL handler answers a UD2 at a rewritten address as that CPUID would, masked. Only the
//    listed objects are covered; each listed address must hold a CPUID (0F A2) or the process stops.
//
// Only CPUID is changed: XGETBV still reports the AVX-512 register state, which libraries consult
// only together with the CPUID bit. The C library's own dispatch (memcpy etc.) was made before
// this runs and keeps the real CPU's choice.
//
// TRELLIS_AVX2_CPUID_REWRITE=1 takes the second way even where the first is available (its tests).
// Where neither way is available (no faulting and no sites file), or the sites file is unreadable,
// the library prints why and exits the process with status 3: a benchmark that believes it is
// capped must not run uncapped. The mask is lost if the process later installs its own SIGSEGV
// (way 1) or SIGILL (way 2) handler (none of the benchmark's processes do). With
// TRELLIS_AVX2_CPUID_VERBOSE=1 it reports on stderr what it rewrote and how many CPUIDs it answered.
//
// Hand-written: no packaged library masks CPUID (Intel SDE emulates whole CPUs and is not in
// Debian); the mechanisms are the kernel's and the dynamic linker's, this file only supplies the
// handlers.
#include <asm/prctl.h>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cpuid.h>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <link.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

namespace {

/// The feature bits an AVX2-only CPU lacks, per CPUID leaf 7 sub-leaf 0 register and sub-leaf 1 EAX.
constexpr uint32_t kLeaf7Ebx = (1u << 16) | (1u << 17) | (1u << 21) | (1u << 26) | (1u << 27) | (1u << 28) |
                               (1u << 30) | (1u << 31);  // AVX512 F, DQ, IFMA, PF, ER, CD, BW, VL
constexpr uint32_t kLeaf7Ecx = (1u << 1) | (1u << 6) | (1u << 11) | (1u << 12) |
                               (1u << 14);  // AVX512 VBMI, VBMI2, VNNI, BITALG, VPOPCNTDQ
constexpr uint32_t kLeaf7Edx = (1u << 2) | (1u << 3) | (1u << 8) | (1u << 22) | (1u << 23) | (1u << 24) |
                               (1u << 25);  // 4VNNIW, 4FMAPS, VP2INTERSECT, AMX-BF16, AVX512-FP16, AMX-TILE, AMX-INT8
constexpr uint32_t kLeaf7Sub1Eax = (1u << 4) | (1u << 5) | (1u << 21) |
                                   (1u << 23);  // AVX-VNNI, AVX512-BF16, AMX-FP16, AVX-IFMA

enum class Way { kNone, kFaulting, kRewriting };
Way g_way = Way::kNone;
bool g_verbose = false;
struct sigaction g_previous {};
std::atomic<unsigned long> g_answered{0};

/// Way 2's plan (the sites file) and what was rewritten. Fixed arrays: the handler reads them, and
/// the auditor's namespace is best kept to the C library.
constexpr int kMaxObjects = 128;
constexpr int kMaxSites = 1 << 14;
struct PlannedObject {
    char path[PATH_MAX];
    int firstSite;  // into g_planned
    int siteCount;
};
PlannedObject g_objects[kMaxObjects];
int g_objectCount = 0;
uint64_t g_planned[kMaxSites];  // link-time addresses, per object
int g_plannedCount = 0;
uintptr_t g_rewritten[kMaxSites];  // run-time addresses of the UD2s written
std::atomic<int> g_rewrittenCount{0};

[[noreturn]] void Stop(const char* what, const char* detail)
{
    std::fprintf(stderr, "libtrellis_avx2_cpuid: %s (%s); the process cannot be shown an AVX2-only CPU and stops "
                 "rather than run uncapped\n", what, detail);
    _exit(3);
}

bool SetCpuidFaulting(bool on)
{
    // ARCH_SET_CPUID's argument is "CPUID allowed": 0 turns faulting on.
    return syscall(SYS_arch_prctl, ARCH_SET_CPUID, on ? 0 : 1) == 0;
}

/// Runs CPUID(leaf, subleaf) as the CPU answers and writes the AVX2-only answer into the context.
void AnswerCpuid(greg_t* r)
{
    const uint32_t leaf = static_cast<uint32_t>(r[REG_RAX]);
    const uint32_t subleaf = static_cast<uint32_t>(r[REG_RCX]);
    uint32_t a = 0, b = 0, c = 0, d = 0;
    if (g_way == Way::kFaulting) {
        const int savedErrno = errno;
        SetCpuidFaulting(false);
        __cpuid_count(leaf, subleaf, a, b, c, d);
        SetCpuidFaulting(true);
        errno = savedErrno;
    } else {
        __cpuid_count(leaf, subleaf, a, b, c, d);
    }
    if (leaf == 7 && subleaf == 0) {
        b &= ~kLeaf7Ebx;
        c &= ~kLeaf7Ecx;
        d &= ~kLeaf7Edx;
    } else if (leaf == 7 && subleaf == 1) {
        a &= ~kLeaf7Sub1Eax;
    }
    // CPUID writes the low 32 bits and zeroes the high ones.
    r[REG_RAX] = a;
    r[REG_RBX] = b;
    r[REG_RCX] = c;
    r[REG_RDX] = d;
    r[REG_RIP] += 2;
    g_answered.fetch_add(1, std::memory_order_relaxed);
}

bool IsRewrittenSite(uintptr_t ip)
{
    const int n = g_rewrittenCount.load(std::memory_order_acquire);
    for (int i = 0; i < n; ++i) {
        if (g_rewritten[i] == ip) return true;
    }
    return false;
}

void OnFault(int signal, siginfo_t* info, void* context)
{
    auto* uc = static_cast<ucontext_t*>(context);
    greg_t* r = uc->uc_mcontext.gregs;
    const auto* ip = reinterpret_cast<const unsigned char*>(r[REG_RIP]);
    const bool ours = g_way == Way::kFaulting ? (signal == SIGSEGV && ip[0] == 0x0F && ip[1] == 0xA2)
                                              : (signal == SIGILL && IsRewrittenSite(reinterpret_cast<uintptr_t>(ip)));
    if (ours) {
        AnswerCpuid(r);
        return;
    }
    // Not a CPUID: the fault is the program's own. Hand it on, or let the default action end it.
    if ((g_previous.sa_flags & SA_SIGINFO) && g_previous.sa_sigaction) {
        g_previous.sa_sigaction(signal, info, context);
    } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
        g_previous.sa_handler(signal);
    } else {
        ::signal(signal, SIG_DFL);  // returning re-runs the instruction, which faults again
    }
}

void InstallHandler(int signal)
{
    struct sigaction action {};
    action.sa_sigaction = OnFault;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    if (sigaction(signal, &action, &g_previous) != 0) Stop("sigaction failed", std::strerror(errno));
}

/// Reads the sites file: "<real path> <hex address> <hex address>..." per line, '#' comments.
void ReadSites(const char* file)
{
    FILE* f = std::fopen(file, "r");
    if (!f) Stop("cannot read TRELLIS_AVX2_CPUID_SITES", file);
    static char line[1 << 16];
    int lineNo = 0;
    while (std::fgets(line, sizeof line, f)) {
        ++lineNo;
        if (!std::strchr(line, '\n') && !std::feof(f)) Stop("a line of the sites file is too long", file);
        char* save = nullptr;
        char* word = strtok_r(line, " \t\r\n", &save);
        if (!word || word[0] == '#') continue;
        if (g_objectCount == kMaxObjects) Stop("the sites file lists too many objects", file);
        PlannedObject& object = g_objects[g_objectCount++];
        if (std::strlen(word) >= sizeof object.path) Stop("a path of the sites file is too long", file);
        std::strcpy(object.path, word);
        object.firstSite = g_plannedCount;
        object.siteCount = 0;
        while ((word = strtok_r(nullptr, " \t\r\n", &save))) {
            char* end = nullptr;
            errno = 0;
            const unsigned long long address = std::strtoull(word, &end, 16);
            if (errno != 0 || *end != '\0' || end == word) {
                std::fprintf(stderr, "libtrellis_avx2_cpuid: %s:%d: '%s' is not a hex address\n", file, lineNo, word);
                Stop("malformed sites file", file);
            }
            if (g_plannedCount == kMaxSites) Stop("the sites file lists too many CPUID instructions", file);
            g_planned[g_plannedCount++] = address;
            ++object.siteCount;
        }
    }
    std::fclose(f);
}

/// Rewrites the planned CPUIDs of one mapped object (way 2).
void Rewrite(const PlannedObject& object, uintptr_t loadBias)
{
    const long page = sysconf(_SC_PAGESIZE);
    for (int i = object.firstSite; i < object.firstSite + object.siteCount; ++i) {
        auto* site = reinterpret_cast<unsigned char*>(loadBias + g_planned[i]);
        if (site[0] != 0x0F || site[1] != 0xA2) {
            std::fprintf(stderr, "libtrellis_avx2_cpuid: %s: no CPUID at address %#llx (bytes %02x %02x)\n",
                         object.path, static_cast<unsigned long long>(g_planned[i]), site[0], site[1]);
            Stop("the sites file does not match the object (rebuilt or updated since it was written?)", object.path);
        }
        const uintptr_t first = reinterpret_cast<uintptr_t>(site) & ~static_cast<uintptr_t>(page - 1);
        const uintptr_t last = (reinterpret_cast<uintptr_t>(site) + 1) & ~static_cast<uintptr_t>(page - 1);
        const size_t length = last - first + static_cast<size_t>(page);
        if (mprotect(reinterpret_cast<void*>(first), length, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
            Stop("mprotect failed", std::strerror(errno));
        }
        const int slot = g_rewrittenCount.load(std::memory_order_relaxed);
        if (slot == kMaxSites) Stop("too many CPUID instructions rewritten", object.path);
        g_rewritten[slot] = reinterpret_cast<uintptr_t>(site);
        g_rewrittenCount.store(slot + 1, std::memory_order_release);  // before the UD2 can run
        site[1] = 0x0B;  // 0F A2 (CPUID) -> 0F 0B (UD2)
        if (mprotect(reinterpret_cast<void*>(first), length, PROT_READ | PROT_EXEC) != 0) {
            Stop("mprotect failed", std::strerror(errno));
        }
    }
    if (g_verbose) {
        std::fprintf(stderr, "libtrellis_avx2_cpuid: rewrote %d CPUID instructions of %s\n", object.siteCount,
                     object.path);
    }
}

void Start()
{
    if (g_way != Way::kNone) return;
    const char* verbose = std::getenv("TRELLIS_AVX2_CPUID_VERBOSE");
    g_verbose = verbose && verbose[0] == '1';
    const char* rewrite = std::getenv("TRELLIS_AVX2_CPUID_REWRITE");
    const bool forceRewriting = rewrite && rewrite[0] == '1';
    const char* why = "TRELLIS_AVX2_CPUID_REWRITE=1";
    if (!forceRewriting) {
        g_way = Way::kFaulting;  // the handler is in place before the first CPUID faults
        InstallHandler(SIGSEGV);
        if (SetCpuidFaulting(true)) {
            if (g_verbose) std::fprintf(stderr, "libtrellis_avx2_cpuid: CPUID faulting on\n");
            return;
        }
        why = std::strerror(errno);
        sigaction(SIGSEGV, &g_previous, nullptr);
        g_way = Way::kNone;
    }
    const char* sites = std::getenv("TRELLIS_AVX2_CPUID_SITES");
    if (!sites || !*sites) {
        Stop(forceRewriting ? "TRELLIS_AVX2_CPUID_REWRITE=1 but no TRELLIS_AVX2_CPUID_SITES file naming the CPUID "
                              "instructions to rewrite"
                            : "no CPUID faulting here (no cpuid_fault in /proc/cpuinfo) and no TRELLIS_AVX2_CPUID_SITES "
                              "file naming the CPUID instructions to rewrite",
             why);
    }
    ReadSites(sites);
    g_way = Way::kRewriting;
    InstallHandler(SIGILL);
}

__attribute__((constructor)) void MaskAvx512()
{
    Start();
}

__attribute__((destructor)) void Report()
{
    if (g_verbose) {
        std::fprintf(stderr, "libtrellis_avx2_cpuid: answered %lu CPUIDs\n", g_answered.load());
    }
}

}  // namespace

// The rtld-audit entry points: loaded with LD_AUDIT, this library is mapped and its constructor run
// before any library of the program is initialized (with LD_PRELOAD the program's own libraries'
// constructors would run first, and oneDNN reads CPUID in one of them), and la_objopen sees every
// object as it is mapped, before it is relocated or initialized.
extern "C" unsigned int la_version(unsigned int version)
{
    return version;
}

extern "C" unsigned int la_objopen(struct link_map* map, Lmid_t /*lmid*/, uintptr_t* /*cookie*/)
{
    Start();
    if (g_way != Way::kRewriting) return 0;
    char real[PATH_MAX];
    // The main program's map has an empty name.
    const char* name = (map->l_name && map->l_name[0]) ? map->l_name : "/proc/self/exe";
    if (!realpath(name, real)) return 0;
    for (int i = 0; i < g_objectCount; ++i) {
        if (std::strcmp(g_objects[i].path, real) == 0) {
            Rewrite(g_objects[i], map->l_addr);
            break;
        }
    }
    return 0;
}
