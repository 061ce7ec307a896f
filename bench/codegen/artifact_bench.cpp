// Times one generated artifact (trellis codegen): its start-up (the constructor: configure every
// layer, allocate the arena, read the weights) and its Inference() latency. Built by
// bench/codegen/run_artifact_bench.py against the artifact's header and source:
//
//   c++ -O2 -std=c++17 -fopenmp -I DIR -DARTIFACT_HEADER='"Net.h"' -DARTIFACT_CLASS=Net \
//       bench/codegen/artifact_bench.cpp DIR/Net.cpp -ldnnl -o artifact_bench
//   OMP_NUM_THREADS=1 ./artifact_bench --params DIR/Net.params --input x.npy [--output y.npy]
//       [--warmup 3] [--min-time 1.5]
//
// Prints one JSON object: startup_ms, min_ms, median_ms, iterations. --input fills the only input
// from a float32 .npy file; --output writes the only output as float32 .npy.
#include ARTIFACT_HEADER

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

/// The float32 data of a C-order .npy file (version 1 or 2 headers).
std::vector<float> ReadNpy(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw std::runtime_error("cannot open " + path);
    char magic[8];
    f.read(magic, 8);
    if (std::memcmp(magic, "\x93NUMPY", 6) != 0) throw std::runtime_error(path + " is not a .npy file");
    std::size_t headerLen = 0;
    if (magic[6] == 1) {
        unsigned char b[2];
        f.read(reinterpret_cast<char*>(b), 2);
        headerLen = b[0] | (b[1] << 8);
    } else {
        unsigned char b[4];
        f.read(reinterpret_cast<char*>(b), 4);
        headerLen = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<std::size_t>(b[3]) << 24);
    }
    std::string header(headerLen, ' ');
    f.read(header.data(), static_cast<std::streamsize>(headerLen));
    if (header.find("'<f4'") == std::string::npos || header.find("'fortran_order': False") == std::string::npos) {
        throw std::runtime_error(path + ": not a C-order float32 array");
    }
    std::vector<float> data;
    float v;
    while (f.read(reinterpret_cast<char*>(&v), sizeof v)) data.push_back(v);
    return data;
}

void WriteNpy(const std::string& path, const float* data, const std::size_t* shape, std::size_t rank, std::size_t size) {
    std::ostringstream dims;
    for (std::size_t i = 0; i < rank; ++i) dims << shape[i] << (rank == 1 || i + 1 < rank ? "," : "");
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + dims.str() + "), }";
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::ofstream f(path, std::ios::binary);
    f.write("\x93NUMPY\x01\x00", 8);
    const unsigned char len[2] = {static_cast<unsigned char>(header.size() & 0xff), static_cast<unsigned char>(header.size() >> 8)};
    f.write(reinterpret_cast<const char*>(len), 2);
    f << header;
    f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size * sizeof(float)));
    if (!f) throw std::runtime_error("cannot write " + path);
}

}  // namespace

int main(int argc, char** argv) {
    std::string params, input, output;
    int warmup = 3;
    double minTime = 1.5;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--params") params = argv[i + 1];
        else if (a == "--input") input = argv[i + 1];
        else if (a == "--output") output = argv[i + 1];
        else if (a == "--warmup") warmup = std::stoi(argv[i + 1]);
        else if (a == "--min-time") minTime = std::stod(argv[i + 1]);
        else {
            std::cerr << "artifact_bench: unknown option " << a << "\n";
            return 2;
        }
    }
    try {
        const Clock::time_point t0 = Clock::now();
        ARTIFACT_CLASS net(params);
        const double startup = Ms(Clock::now() - t0);
        if (!input.empty()) {
            const std::vector<float> x = ReadNpy(input);
            if (x.size() != net.getInput().size) throw std::runtime_error(input + ": wrong element count");
            std::memcpy(net.getInput().data, x.data(), x.size() * sizeof(float));
        }
        for (int i = 0; i < warmup; ++i) net.Inference();
        std::vector<double> times;
        const Clock::time_point start = Clock::now();
        while (times.size() < 5 || Ms(Clock::now() - start) < minTime * 1e3) {
            const Clock::time_point a = Clock::now();
            net.Inference();
            times.push_back(Ms(Clock::now() - a));
        }
        std::sort(times.begin(), times.end());
        if (!output.empty()) {
            const auto& y = net.getOutput();
            WriteNpy(output, static_cast<const float*>(y.data), y.shape, y.rank, y.size);
        }
        std::printf("{\"startup_ms\": %.3f, \"min_ms\": %.4f, \"median_ms\": %.4f, \"iterations\": %zu}\n", startup, times.front(),
                    times[times.size() / 2], times.size());
    } catch (const std::exception& e) {
        std::cerr << "artifact_bench: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
