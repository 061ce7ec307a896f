// libtrellis_avx2_cpuid.so: makes an x86-64 CPU with AVX-512 look like an AVX2-only one to every
// library of the process that loads it (LD_PRELOAD), so a benchmark can compare Trellis capped to
// AVX2 against a peer whose kernels have no cap of their own (ONNX Runtime's MLAS, XNNPACK's
// cpuinfo and numpy all read CPUID directly). bench/cpu/run_bench.py --isa-cap AVX2 preloads it
// into both processes.
//
// How: Linux's CPUID faulting (arch_prctl ARCH_SET_CPUID, x86 CPUs and hypervisors that offer it:
// the `cpuid_fault` flag of /proc/cpuinfo) makes every CPUID instruction of this thread and of
// the threads and processes it starts raise SIGSEGV; the handler runs the real CPUID with
// faulting briefly off, clears the AVX-512, AMX and AVX-VNNI/AVX-IFMA feature bits (the ISA of an
// AMD Zen 2/3 or an Intel Skylake client) and steps over the instruction. Only CPUID is
// changed: XGETBV still reports the AVX-512 register state, which libraries consult only together
// with the CPUID bit. The C library's own dispatch (memcpy etc.) was made before this runs and
// keeps the real CPU's choice.
//
// Where CPUID faulting is missing the constructor prints why and exits the process with status 3:
// a benchmark that believes it is capped must not run uncapped. The mask is lost if the process
// later installs its own SIGSEGV handler (none of the benchmark's processes do).
//
// Hand-written: no packaged library masks CPUID (Intel SDE emulates whole CPUs and is not in
// Debian); the mechanism is the kernel's and this file only supplies the handler.
#include <asm/prctl.h>
#include <cerrno>
#include <cpuid.h>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

namespace {

struct sigaction g_previous {};

bool SetCpuidFaulting(bool on)
{
    // ARCH_SET_CPUID's argument is "CPUID allowed": 0 turns faulting on.
    return syscall(SYS_arch_prctl, ARCH_SET_CPUID, on ? 0 : 1) == 0;
}

/// The feature bits an AVX2-only CPU lacks, per CPUID leaf 7 sub-leaf 0 register and sub-leaf 1 EAX.
constexpr uint32_t kLeaf7Ebx = (1u << 16) | (1u << 17) | (1u << 21) | (1u << 26) | (1u << 27) | (1u << 28) |
                               (1u << 30) | (1u << 31);  // AVX512 F, DQ, IFMA, PF, ER, CD, BW, VL
constexpr uint32_t kLeaf7Ecx = (1u << 1) | (1u << 6) | (1u << 11) | (1u << 12) |
                               (1u << 14);  // AVX512 VBMI, VBMI2, VNNI, BITALG, VPOPCNTDQ
constexpr uint32_t kLeaf7Edx = (1u << 2) | (1u << 3) | (1u << 8) | (1u << 22) | (1u << 23) | (1u << 24) |
                               (1u << 25);  // 4VNNIW, 4FMAPS, VP2INTERSECT, AMX-BF16, AVX512-FP16, AMX-TILE, AMX-INT8
constexpr uint32_t kLeaf7Sub1Eax = (1u << 4) | (1u << 5) | (1u << 21) |
                                   (1u << 23);  // AVX-VNNI, AVX512-BF16, AMX-FP16, AVX-IFMA

void OnSegv(int signal, siginfo_t* info, void* context)
{
    auto* uc = static_cast<ucontext_t*>(context);
    greg_t* r = uc->uc_mcontext.gregs;
    const auto* ip = reinterpret_cast<const unsigned char*>(r[REG_RIP]);
    if (ip[0] != 0x0F || ip[1] != 0xA2) {
        // Not a CPUID: the fault is the program's own. Hand it on, or let the default action end it.
        if ((g_previous.sa_flags & SA_SIGINFO) && g_previous.sa_sigaction) {
            g_previous.sa_sigaction(signal, info, context);
        } else if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) {
            g_previous.sa_handler(signal);
        } else {
            ::signal(SIGSEGV, SIG_DFL);  // returning re-runs the instruction, which faults again
        }
        return;
    }
    const int savedErrno = errno;
    const uint32_t leaf = static_cast<uint32_t>(r[REG_RAX]);
    const uint32_t subleaf = static_cast<uint32_t>(r[REG_RCX]);
    uint32_t a = 0, b = 0, c = 0, d = 0;
    SetCpuidFaulting(false);
    __cpuid_count(leaf, subleaf, a, b, c, d);
    SetCpuidFaulting(true);
    errno = savedErrno;
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
}

[[noreturn]] void Refuse(const char* what)
{
    std::fprintf(stderr,
                 "libtrellis_avx2_cpuid: %s (%s); this CPU or kernel offers no CPUID faulting (no cpuid_fault "
                 "in /proc/cpuinfo), so the process cannot be shown an AVX2-only CPU and stops rather than run "
                 "uncapped\n",
                 what, std::strerror(errno));
    _exit(3);
}

__attribute__((constructor)) void MaskAvx512()
{
    struct sigaction action {};
    action.sa_sigaction = OnSegv;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGSEGV, &action, &g_previous) != 0) Refuse("sigaction(SIGSEGV) failed");
    if (!SetCpuidFaulting(true)) {
        sigaction(SIGSEGV, &g_previous, nullptr);
        Refuse("arch_prctl(ARCH_SET_CPUID) failed");
    }
}

}  // namespace

// The rtld-audit entry point: loaded with LD_AUDIT, this library is mapped and its constructor run
// before any library of the program is initialized (with LD_PRELOAD the program's own libraries'
// constructors would run first, and oneDNN reads CPUID in one of them).
extern "C" unsigned int la_version(unsigned int version)
{
    return version;
}
