// trellis_cpuid_probe: the program tests/unit/avx2_cpuid_test.cpp runs under libtrellis_avx2_cpuid
// (LD_AUDIT), as the benchmark runs its engines. `leaves` prints CPUID leaves 0, 1, 7.0 and 7.1
// (EAX EBX ECX EDX in hex, a line each) as this process sees them; `ud2` runs a UD2 of its own,
// which the library must leave to end the process with SIGILL.
#include <cpuid.h>
#include <cstdio>
#include <cstring>

int main(int argc, char** argv)
{
    if (argc == 2 && std::strcmp(argv[1], "ud2") == 0) {
        __builtin_trap();
    }
    if (argc != 2 || std::strcmp(argv[1], "leaves") != 0) {
        std::fprintf(stderr, "usage: trellis_cpuid_probe leaves|ud2\n");
        return 2;
    }
    const unsigned leaves[4][2] = {{0, 0}, {1, 0}, {7, 0}, {7, 1}};
    for (const auto& l : leaves) {
        unsigned a = 0, b = 0, c = 0, d = 0;
        __cpuid_count(l[0], l[1], a, b, c, d);
        std::printf("%08x %08x %08x %08x\n", a, b, c, d);
    }
    return 0;
}
