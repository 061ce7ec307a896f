// End-to-end: models exported with Debian's PyTorch (tests/models/export_models.py and
// export_transformers.py, random seeded weights) run on CpuRef and match PyTorch's own outputs within 1e-4 relative L2 error.
#include "TestHelpers.hpp"

#include <filesystem>

using namespace trellis;
using namespace trellis::test;

namespace {

class PyTorchModel : public ::testing::TestWithParam<std::string> {};

TEST_P(PyTorchModel, MatchesPyTorchOnCpuRef) {
    double err = -1;
    std::map<BackendId, unsigned int> counts;
    ModelErrorVsPyTorch(std::string(TRELLIS_TEST_MODELS_DIR) + "/" + GetParam(), {"CpuRef"}, &err, &counts);
    if (HasFatalFailure()) return;
    EXPECT_LT(err, 1e-4) << GetParam() << ": relative L2 error vs PyTorch";
    std::cout << GetParam() << ": relative L2 error vs PyTorch " << err << "\n";
    EXPECT_EQ(counts.size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Models, PyTorchModel,
                         ::testing::Values("tiny_cnn_op13", "tiny_cnn_op17", "squeezenet1_1_op13", "squeezenet1_1_op17",
                                           "mobilenet_v2_op13", "mobilenet_v2_op17", "resnet50_op13", "resnet50_op17",
                                           "transformer_op13", "transformer_op17", "lstm_op13", "lstm_op17",
                                           "efficientnet_b0_op13", "efficientnet_b0_op17", "shufflenet_v2_x1_0_op13",
                                           "shufflenet_v2_x1_0_op17", "mobilenet_v3_small_op13",
                                           "mobilenet_v3_small_op17", "vit_b_16_op13", "t5_encoder_op14", "bert_op14",
                                           "gpt2_op14", "llama_op14", "gpt2_decoder_op14",
                                           "llama_decoder_op14"));

}  // namespace
