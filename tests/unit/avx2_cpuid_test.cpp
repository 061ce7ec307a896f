// libtrellis_avx2_cpuid.so (tools/avx2_cpuid), the benchmark's way of showing ONNX Runtime and
// Trellis an AVX2-only CPU: CPUID seen through it lacks AVX-512, AMX and AVX-VNNI and keeps every
// other bit; a fault that is not a CPUID still ends the process. Both of its ways: CPUID faulting
// (checked in a forked child that loads the library, where the machine offers faulting) and the
// rewriting of the CPUIDs a sites file lists (checked everywhere, on trellis_cpuid_probe run under
// LD_AUDIT with the sites file tools/avx2_cpuid/cpuid_sites.py writes for it), and the rewriting
// way's refusals: an address that holds no CPUID, no sites file.
#include <gtest/gtest.h>

#if defined(TRELLIS_AVX2_CPUID_PATH)
#include <array>
#include <cpuid.h>
#include <csignal>
#include <cstdio>
#include <dlfcn.h>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using Regs = std::array<unsigned, 4>;
struct Leaves {
    Regs leaf0, leaf1, leaf7, leaf7sub1;
};

Leaves ReadLeaves()
{
    Leaves l{};
    __cpuid_count(0, 0, l.leaf0[0], l.leaf0[1], l.leaf0[2], l.leaf0[3]);
    __cpuid_count(1, 0, l.leaf1[0], l.leaf1[1], l.leaf1[2], l.leaf1[3]);
    if (l.leaf0[0] >= 7) {
        __cpuid_count(7, 0, l.leaf7[0], l.leaf7[1], l.leaf7[2], l.leaf7[3]);
        __cpuid_count(7, 1, l.leaf7sub1[0], l.leaf7sub1[1], l.leaf7sub1[2], l.leaf7sub1[3]);
    }
    return l;
}

/// Forks; the child loads the library and runs `body`, whose return value becomes its exit status.
/// Returns the wait status.
template <typename Body>
int InChildWithLibrary(Body body)
{
    const pid_t pid = fork();
    if (pid == 0) {
        if (!dlopen(TRELLIS_AVX2_CPUID_PATH, RTLD_NOW)) _exit(4);
        _exit(body());
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
}

constexpr unsigned Bit(int i) { return 1u << i; }

/// What an AVX2-only CPU's CPUID shows of the real one's leaves. False where the CPU has no leaf 7
/// (only leaves 0 and 1 checked: the caller skips).
bool ExpectAvx2Only(const Leaves& seen, const Leaves& real)
{
    EXPECT_EQ(seen.leaf0, real.leaf0);  // vendor and highest leaf
    // SSE*, AVX, FMA, F16C, OSXSAVE; EBX's top byte is the APIC ID of the core the CPUID ran on.
    EXPECT_EQ(seen.leaf1[0], real.leaf1[0]);
    EXPECT_EQ(seen.leaf1[1] & 0x00FFFFFFu, real.leaf1[1] & 0x00FFFFFFu);
    EXPECT_EQ(seen.leaf1[2], real.leaf1[2]);
    EXPECT_EQ(seen.leaf1[3], real.leaf1[3]);
    if (real.leaf0[0] < 7) return false;
    // Hidden: AVX512 F, DQ, IFMA, CD, BW, VL; VBMI, VBMI2, VNNI, BITALG, VPOPCNTDQ; AMX-BF16,
    // AVX512-FP16, AMX-TILE, AMX-INT8; AVX-VNNI, AVX512-BF16.
    const unsigned hiddenEbx = Bit(16) | Bit(17) | Bit(21) | Bit(28) | Bit(30) | Bit(31);
    const unsigned hiddenEcx = Bit(1) | Bit(6) | Bit(11) | Bit(12) | Bit(14);
    const unsigned hiddenEdx = Bit(22) | Bit(23) | Bit(24) | Bit(25);
    EXPECT_EQ(seen.leaf7[1] & hiddenEbx, 0u);
    EXPECT_EQ(seen.leaf7[2] & hiddenEcx, 0u);
    EXPECT_EQ(seen.leaf7[3] & hiddenEdx, 0u);
    EXPECT_EQ(seen.leaf7sub1[0] & (Bit(4) | Bit(5)), 0u);
    // Kept: AVX2, BMI1, BMI2 and the rest of the leaf as the CPU reports it.
    const unsigned keptEbx = Bit(3) | Bit(5) | Bit(8);
    EXPECT_EQ(seen.leaf7[1] & keptEbx, real.leaf7[1] & keptEbx);
    EXPECT_EQ(seen.leaf7[0], real.leaf7[0]);
    EXPECT_EQ(seen.leaf7[1] | hiddenEbx | Bit(26) | Bit(27), real.leaf7[1] | hiddenEbx | Bit(26) | Bit(27));
    return true;
}

struct ProbeRun {
    int exitCode = -1;  // the shell's: 128 + N for signal N
    std::string output;  // stdout and stderr
};

/// Runs trellis_cpuid_probe `arg` under LD_AUDIT=the library, with `env` ("NAME=value ...") before it.
ProbeRun RunProbe(const std::string& env, const char* arg)
{
    const std::string cmd = env + " LD_AUDIT=" TRELLIS_AVX2_CPUID_PATH " " TRELLIS_CPUID_PROBE_PATH " " + arg +
                            " 2>&1; echo \"exit=$?\"";
    ProbeRun run;
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return run;
    char buffer[512];
    while (std::fgets(buffer, sizeof buffer, p)) run.output += buffer;
    pclose(p);
    const auto at = run.output.rfind("exit=");
    if (at != std::string::npos) {
        run.exitCode = std::stoi(run.output.substr(at + 5));
        run.output.erase(at);
    }
    return run;
}

bool ParseLeaves(const std::string& text, Leaves& l)
{
    std::istringstream in(text);
    for (Regs* r : {&l.leaf0, &l.leaf1, &l.leaf7, &l.leaf7sub1}) {
        for (unsigned& v : *r) {
            if (!(in >> std::hex >> v)) return false;
        }
    }
    return true;
}

/// The probe's sites file (tools/avx2_cpuid/cpuid_sites.py: objdump's CPUIDs of the probe).
std::string ProbeSitesFile()
{
    const std::string path = ::testing::TempDir() + "trellis_cpuid_probe_sites.txt";
    const std::string cmd = std::string(TRELLIS_PYTHON) + " " TRELLIS_SOURCE_DIR "/tools/avx2_cpuid/cpuid_sites.py --out " +
                            path + " " TRELLIS_CPUID_PROBE_PATH " > /dev/null";
    return std::system(cmd.c_str()) == 0 ? path : std::string();
}

}  // namespace

TEST(Avx2Cpuid, HidesAvx512AmxAndAvxVnniAndKeepsEveryOtherBit)
{
    const Leaves real = ReadLeaves();
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const int status = InChildWithLibrary([&] {
        const Leaves seen = ReadLeaves();
        return write(fds[1], &seen, sizeof seen) == static_cast<ssize_t>(sizeof seen) ? 0 : 5;
    });
    close(fds[1]);
    Leaves seen{};
    const ssize_t got = read(fds[0], &seen, sizeof seen);
    close(fds[0]);
    ASSERT_TRUE(WIFEXITED(status)) << "the child ended by signal " << WTERMSIG(status);
    if (WEXITSTATUS(status) == 3) GTEST_SKIP() << "this CPU or kernel has no CPUID faulting (cpuid_fault)";
    ASSERT_EQ(WEXITSTATUS(status), 0) << "4: dlopen failed, 5: pipe write failed";
    ASSERT_EQ(got, static_cast<ssize_t>(sizeof seen));
    if (!ExpectAvx2Only(seen, real)) GTEST_SKIP() << "this CPU has no CPUID leaf 7";
}

TEST(Avx2Cpuid, AFaultThatIsNotACpuidStillEndsTheProcessWithSigsegv)
{
    const int status = InChildWithLibrary([] {
        volatile int* nowhere = nullptr;
        *nowhere = 1;
        return 0;
    });
    if (WIFEXITED(status) && WEXITSTATUS(status) == 3) GTEST_SKIP() << "this CPU or kernel has no CPUID faulting";
    ASSERT_TRUE(WIFSIGNALED(status)) << "the child exited with " << WEXITSTATUS(status);
    EXPECT_EQ(WTERMSIG(status), SIGSEGV);
}

TEST(Avx2Cpuid, RewritingTheListedCpuidsHidesAvx512AmxAndAvxVnni)
{
    const std::string sites = ProbeSitesFile();
    ASSERT_FALSE(sites.empty()) << "cpuid_sites.py failed on the probe";
    const ProbeRun run = RunProbe("TRELLIS_AVX2_CPUID_REWRITE=1 TRELLIS_AVX2_CPUID_VERBOSE=1 TRELLIS_AVX2_CPUID_SITES=" + sites,
                                  "leaves");
    ASSERT_EQ(run.exitCode, 0) << run.output;
    EXPECT_NE(run.output.find("rewrote"), std::string::npos) << run.output;
    Leaves seen{};
    // The verbose lines go first and last; the leaves are the lines of hex between them.
    std::string leaves;
    std::istringstream lines(run.output);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("libtrellis_avx2_cpuid:", 0) != 0) leaves += line + "\n";
    }
    ASSERT_TRUE(ParseLeaves(leaves, seen)) << run.output;
    if (!ExpectAvx2Only(seen, ReadLeaves())) GTEST_SKIP() << "this CPU has no CPUID leaf 7";
}

TEST(Avx2Cpuid, UnderLdAuditWithFaultingHidesAvx512)
{
    const ProbeRun run = RunProbe("", "leaves");
    if (run.exitCode == 3) GTEST_SKIP() << "no CPUID faulting here: " << run.output;
    ASSERT_EQ(run.exitCode, 0) << run.output;
    Leaves seen{};
    ASSERT_TRUE(ParseLeaves(run.output, seen)) << run.output;
    if (!ExpectAvx2Only(seen, ReadLeaves())) GTEST_SKIP() << "this CPU has no CPUID leaf 7";
}

TEST(Avx2Cpuid, AUd2ThatWasNotRewrittenStillEndsTheProcessWithSigill)
{
    const std::string sites = ProbeSitesFile();
    ASSERT_FALSE(sites.empty());
    const ProbeRun run = RunProbe("TRELLIS_AVX2_CPUID_REWRITE=1 TRELLIS_AVX2_CPUID_SITES=" + sites, "ud2");
    EXPECT_EQ(run.exitCode, 128 + SIGILL) << run.output;
}

TEST(Avx2Cpuid, RewritingRefusesAnAddressThatHoldsNoCpuid)
{
    const std::string sites = ProbeSitesFile();
    ASSERT_FALSE(sites.empty());
    // The probe's line with each address moved one byte on (into the CPUID instruction).
    std::ifstream in(sites);
    std::string line, comment, path, address;
    std::getline(in, comment);
    std::getline(in, line);
    std::istringstream words(line);
    words >> path >> address;
    ASSERT_FALSE(address.empty()) << "objdump found no CPUID in the probe: " << line;
    const std::string bad = ::testing::TempDir() + "trellis_cpuid_probe_bad_sites.txt";
    std::ofstream(bad) << path << " " << std::hex << (std::stoull(address, nullptr, 16) + 1) << "\n";
    const ProbeRun run = RunProbe("TRELLIS_AVX2_CPUID_REWRITE=1 TRELLIS_AVX2_CPUID_SITES=" + bad, "leaves");
    EXPECT_EQ(run.exitCode, 3) << run.output;
    EXPECT_NE(run.output.find("no CPUID at address"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("stops rather than run uncapped"), std::string::npos) << run.output;
}

TEST(Avx2Cpuid, RewritingWithoutASitesFileStopsTheProcess)
{
    const ProbeRun run = RunProbe("TRELLIS_AVX2_CPUID_REWRITE=1 TRELLIS_AVX2_CPUID_SITES=", "leaves");
    EXPECT_EQ(run.exitCode, 3) << run.output;
    EXPECT_NE(run.output.find("no TRELLIS_AVX2_CPUID_SITES file"), std::string::npos) << run.output;
    const ProbeRun missing = RunProbe("TRELLIS_AVX2_CPUID_REWRITE=1 TRELLIS_AVX2_CPUID_SITES=/nonexistent/sites.txt", "leaves");
    EXPECT_EQ(missing.exitCode, 3) << missing.output;
    EXPECT_NE(missing.output.find("cannot read TRELLIS_AVX2_CPUID_SITES"), std::string::npos) << missing.output;
}
#else
TEST(Avx2Cpuid, HidesAvx512AmxAndAvxVnniAndKeepsEveryOtherBit)
{
    GTEST_SKIP() << "libtrellis_avx2_cpuid is built on x86-64 Linux only";
}
#endif
