// Test harness: the CUDA runtime, cuDNN and cuBLASLt calls of a cuda-target artifact emulated on
// the host, so that the generated code (its memory plan, library configurations and kernels) can be
// checked against CpuRef on a machine without a GPU (tests/codegen/run_cuda_emulated.py). The
// artifact's kernels file is turned into host C++ by emulate_kernels.py: each launch becomes one of
// the two functions below, which run the kernel body for every (block, thread) of the grid.
#pragma once

#include <functional>

struct EmulatedIndex {
    unsigned int x = 0, y = 0, z = 0;
};
extern thread_local EmulatedIndex g_EmulatedBlockIdx, g_EmulatedThreadIdx;
extern EmulatedIndex g_EmulatedBlockDim, g_EmulatedGridDim;
/// __syncthreads() of a kernel run by EmulateBlocks.
void EmulatedSyncThreads();
/// Runs `op` now, or records it while a stream capture is under way (a graph launch replays it).
void EmulatedEnqueue(std::function<void()> op);
/// A kernel without __syncthreads: every thread of every block in turn, on this thread.
void EmulateSerially(unsigned int blocks, unsigned int threads, std::function<void()> body);
/// A kernel with __syncthreads: each block's threads as host threads meeting at a barrier.
void EmulateBlocks(unsigned int blocks, unsigned int threads, std::function<void()> body);
