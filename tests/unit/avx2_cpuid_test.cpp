// libtrellis_avx2_cpuid.so (tools/avx2_cpuid), the benchmark's way of showing ONNX Runtime and
// Trellis an AVX2-only CPU: CPUID seen through it lacks AVX-512, AMX and AVX-VNNI and keeps every
// other bit; a fault that is not a CPUID still ends the process. Each check runs in a forked child
// (the library turns CPUID faulting on for the process that loads it).
#include <gtest/gtest.h>

#if defined(TRELLIS_AVX2_CPUID_PATH)
#include <array>
#include <cpuid.h>
#include <csignal>
#include <dlfcn.h>
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

    EXPECT_EQ(seen.leaf0, real.leaf0);  // vendor and highest leaf
    // SSE*, AVX, FMA, F16C, OSXSAVE; EBX's top byte is the APIC ID of the core the CPUID ran on.
    EXPECT_EQ(seen.leaf1[0], real.leaf1[0]);
    EXPECT_EQ(seen.leaf1[1] & 0x00FFFFFFu, real.leaf1[1] & 0x00FFFFFFu);
    EXPECT_EQ(seen.leaf1[2], real.leaf1[2]);
    EXPECT_EQ(seen.leaf1[3], real.leaf1[3]);
    if (real.leaf0[0] < 7) GTEST_SKIP() << "this CPU has no CPUID leaf 7";
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
#else
TEST(Avx2Cpuid, HidesAvx512AmxAndAvxVnniAndKeepsEveryOtherBit)
{
    GTEST_SKIP() << "libtrellis_avx2_cpuid is built on x86-64 Linux only";
}
#endif
