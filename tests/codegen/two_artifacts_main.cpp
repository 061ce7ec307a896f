// Two artifacts of different models linked into one program: both headers included, both classes
// constructed and run (twice, interleaved), each output written for comparison with CpuRef.
//
//   c++ -std=c++17 -Wall -Wextra -Werror -I DIR_A -I DIR_B
//       -DARTIFACT_A_HEADER='"A.h"' -DARTIFACT_A_CLASS=A -DARTIFACT_B_HEADER='"B.h"' -DARTIFACT_B_CLASS=B
//       tests/codegen/two_artifacts_main.cpp DIR_A/A.cpp DIR_B/B.cpp [target libraries]
//   ./a.out A.params A_input.bin A_output.bin B.params B_input.bin B_output.bin
//
// The .bin files are raw float32 data of the only input and output of each artifact. Exits 0 when
// both ran and the second run of each reproduced its first exactly; 1 otherwise.
#include ARTIFACT_A_HEADER
#include ARTIFACT_B_HEADER

#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <string>
#include <vector>

namespace {

std::vector<float> ReadRaw(const std::string& path, std::size_t count) {
    std::vector<float> data(count);
    std::ifstream in(path, std::ios::binary);
    if (!in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(count * sizeof(float)))) {
        throw std::runtime_error(path + ": cannot read " + std::to_string(count) + " floats");
    }
    return data;
}

void WriteRaw(const std::string& path, const void* data, std::size_t count) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(count * sizeof(float)));
    if (!out) throw std::runtime_error("cannot write " + path);
}

template <typename Net>
void Feed(Net& net, const std::string& input) {
    const std::vector<float> x = ReadRaw(input, net.getInput().size);
    std::memcpy(net.getInput().data, x.data(), x.size() * sizeof(float));
}

template <typename Net>
std::vector<float> Output(Net& net) {
    const float* y = static_cast<const float*>(net.getOutput().data);
    return std::vector<float>(y, y + net.getOutput().size);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 7) {
        std::fprintf(stderr, "usage: %s A.params A_in.bin A_out.bin B.params B_in.bin B_out.bin\n", argv[0]);
        return 2;
    }
    try {
        ARTIFACT_A_CLASS a(argv[1]);
        ARTIFACT_B_CLASS b(argv[4]);
        Feed(a, argv[2]);
        Feed(b, argv[5]);
        a.Inference();
        b.Inference();
        const std::vector<float> firstA = Output(a), firstB = Output(b);
        b.Inference();
        a.Inference();
        if (Output(a) != firstA || Output(b) != firstB) {
            std::fprintf(stderr, "a second run gave other outputs\n");
            return 1;
        }
        WriteRaw(argv[3], firstA.data(), firstA.size());
        WriteRaw(argv[6], firstB.data(), firstB.size());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    return 0;
}
