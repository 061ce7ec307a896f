// Recurrent (ONNX LSTM/GRU/RNN) validation and run-time errors: a bad layer makes Optimize()
// throw naming the layer and the rule; a bad sequence_lens value, which only arrives with the
// inputs, makes EnqueueWorkload() throw naming the layer. Numeric results are covered by the
// numpy cases (tests/ops/cases_rnn.py) and the official ONNX node cases.
#include "TestHelpers.hpp"

#include <trellis/Trellis.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

using namespace trellis;

namespace {

using test::ExpectRejected;
using test::LayerTestNetwork;

/// The recurrent layer in `n`; only output 0 (Y) is bound, the other outputs feed nothing.
void Recurrent(LayerTestNetwork& n, const RecurrentDescriptor& d, const char* name,
               std::vector<IOutputSlot*> inputs, int numOutputs) {
    n.Layer(LayerType::Recurrent, d, name, std::move(inputs), numOutputs, 1);
}

RecurrentDescriptor Lstm(unsigned int hidden) {
    RecurrentDescriptor d;
    d.m_Mode = RecurrentMode::Lstm;
    d.m_HiddenSize = hidden;
    return d;
}

TEST(OpsRecurrent, RejectsWrongWeightShape) {
    LayerTestNetwork n;
    // X [seq 3, batch 2, input 4], hidden 5: W must be [1, 20, 4].
    Recurrent(n, Lstm(5), "lstm_w", {&n.Input({3, 2, 4}), &n.Input({1, 20, 3}), &n.Input({1, 20, 5})}, 3);
    ExpectRejected(n, "lstm_w", "W has shape 1x20x3, expected 1x20x4");
}

TEST(OpsRecurrent, RejectsWrongOutputCount) {
    LayerTestNetwork n;
    Recurrent(n, Lstm(5), "lstm_outs", {&n.Input({3, 2, 4}), &n.Input({1, 20, 4}), &n.Input({1, 20, 5})}, 2);
    ExpectRejected(n, "lstm_outs", "has 2 outputs; this mode has 3");
}

TEST(OpsRecurrent, RejectsPeepholesOnGru) {
    LayerTestNetwork n;
    RecurrentDescriptor d;
    d.m_Mode = RecurrentMode::Gru;
    d.m_HiddenSize = 2;
    IOutputSlot& x = n.Input({1, 1, 2});
    IOutputSlot& w = n.Input({1, 6, 2});
    IOutputSlot& r = n.Input({1, 6, 2});
    IOutputSlot& b = n.Input({1, 12});
    IOutputSlot& sl = n.Input({1}, DataType::Signed32);
    IOutputSlot& h0 = n.Input({1, 1, 2});
    IOutputSlot& c0 = n.Input({1, 1, 2});
    Recurrent(n, d, "gru_c", {&x, &w, &r, &b, &sl, &h0, &c0}, 2);
    ExpectRejected(n, "gru_c", "initial_c and P (inputs 6, 7) exist only for LSTM");
}

TEST(OpsRecurrent, SequenceLengthOutOfRangeFailsTheRun) {
    LayerTestNetwork n;
    RecurrentDescriptor d;
    d.m_Mode = RecurrentMode::Rnn;
    d.m_HiddenSize = 2;
    IOutputSlot& x = n.Input({3, 2, 1});
    IOutputSlot& w = n.Input({1, 2, 1});
    IOutputSlot& r = n.Input({1, 2, 2});
    IOutputSlot& b = n.Input({1, 4});
    IOutputSlot& sl = n.Input({2}, DataType::Signed32);
    Recurrent(n, d, "rnn_len", {&x, &w, &r, &b, &sl}, 2);
    NetworkId id;
    ASSERT_EQ(n.m_Runtime->LoadNetwork(id, n.Optimize()), Status::Success);
    const std::vector<float> xv(6, 0.5f), wv(2, 1.0f), rv(4, 0.0f), bv(4, 0.0f);
    auto run = [&](std::vector<int32_t> lens, std::vector<float>& y) {
        InputTensors in;
        const std::vector<std::pair<TensorInfo, const void*>> data = {
            {TensorInfo({3, 2, 1}, DataType::Float32), xv.data()}, {TensorInfo({1, 2, 1}, DataType::Float32), wv.data()},
            {TensorInfo({1, 2, 2}, DataType::Float32), rv.data()}, {TensorInfo({1, 4}, DataType::Float32), bv.data()},
            {TensorInfo({2}, DataType::Signed32), lens.data()}};
        for (std::size_t i = 0; i < data.size(); ++i) {
            TensorInfo info = data[i].first;
            info.SetConstant(true);
            in.push_back({static_cast<int>(i), ConstTensor(info, data[i].second)});
        }
        const TensorInfo outInfo = n.m_Runtime->GetOutputTensorInfo(id, 0);
        y.assign(outInfo.GetNumElements(), -1.0f);
        n.m_Runtime->EnqueueWorkload(id, in, {{0, Tensor(outInfo, y.data())}});
    };
    // Valid lengths: with R = 0 every active step is tanh(0.5); steps past a row's length are 0.
    std::vector<float> y;
    run({3, 1}, y);
    ASSERT_EQ(y.size(), 12u);  // Y [3, 1, 2, 2]
    const float v = std::tanh(0.5f);
    const std::vector<float> want = {v, v, v, v, v, v, 0, 0, v, v, 0, 0};
    for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(y[i], want[i], 1e-6f) << "Y element " << i;
    try {
        run({3, 7}, y);
        ADD_FAILURE() << "the run with sequence_lens[1] = 7 succeeded";
    } catch (const RuntimeException& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("rnn_len"), std::string::npos) << msg;
        EXPECT_NE(msg.find("sequence_lens[1] = 7 is outside [0, 3]"), std::string::npos) << msg;
    }
}

}  // namespace
