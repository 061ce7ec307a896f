// EnqueueWorkload from several threads at once on the same loaded network, outputs checked
// against single-threaded runs of the same inputs.
#include "TestHelpers.hpp"

#include <random>
#include <thread>

using namespace trellis;
using namespace trellis::test;

namespace {

OwnedTensor RandomLike(const TensorInfo& info, unsigned int seed) {
    OwnedTensor t;
    t.m_Info = info;
    t.m_Data.resize(info.GetNumBytes());
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    auto* p = reinterpret_cast<float*>(t.m_Data.data());
    for (std::size_t i = 0; i < info.GetNumElements(); ++i) p[i] = dist(rng);
    return t;
}

void RunConcurrently(const std::string& model, unsigned int threads, unsigned int iterations) {
    LoadedModel m = LoadedModel::Load(model, {"CpuRef"});
    ASSERT_EQ(m.m_Inputs.size(), 1u);
    const TensorInfo inInfo = m.m_Runtime->GetInputTensorInfo(m.m_Id, m.m_Inputs[0].m_BindingId);

    // Distinct inputs per (thread, iteration), with single-threaded reference outputs.
    std::vector<std::vector<OwnedTensor>> inputs(threads), expected(threads);
    for (unsigned int t = 0; t < threads; ++t) {
        for (unsigned int i = 0; i < iterations; ++i) {
            inputs[t].push_back(RandomLike(inInfo, 1000 * t + i));
            expected[t].push_back(m.Run({inputs[t].back()})[0]);
        }
    }
    std::vector<std::string> errors(threads);
    std::vector<std::thread> pool;
    for (unsigned int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            try {
                for (unsigned int round = 0; round < 3; ++round) {
                    for (unsigned int i = 0; i < iterations; ++i) {
                        const auto out = m.Run({inputs[t][i]});
                        // Bitwise equal: the same kernels on the same data.
                        if (out[0].m_Data != expected[t][i].m_Data) {
                            errors[t] = "thread " + std::to_string(t) + " iteration " + std::to_string(i) +
                                        ": output differs from the single-threaded run";
                            return;
                        }
                    }
                }
            } catch (const std::exception& e) {
                errors[t] = e.what();
            }
        });
    }
    for (auto& th : pool) th.join();
    for (unsigned int t = 0; t < threads; ++t) EXPECT_EQ(errors[t], "") << "thread " << t;
}

}  // namespace

TEST(Concurrency, SixThreadsOnTinyCnn) {
    RunConcurrently(std::string(TRELLIS_TEST_MODELS_DIR) + "/tiny_cnn_op13.onnx", 6, 8);
}

TEST(Concurrency, FourThreadsOnTransformer) {
    RunConcurrently(std::string(TRELLIS_TEST_MODELS_DIR) + "/transformer_op17.onnx", 4, 4);
}
