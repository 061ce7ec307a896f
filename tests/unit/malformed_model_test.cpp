// Malformed and hostile models: resource limits (OptimizerOptions::m_MaxTensorBytes and
// m_MaxWorkingMemoryBytes), the refused newer opsets, and one regression test for every crash
// the fuzzers (tests/fuzz/) found. Each must end in one of the engine's exceptions naming the
// layer, never a crash or an allocation of the size the model asks for. docs/reliability.md lists
// the bugs behind these tests.
#ifndef ONNX_ML
#define ONNX_ML 1  // the onnx_proto target defines it; the fallback keeps the file checkable alone
#endif
#include <onnx/onnx_pb.h>

#include "TestHelpers.hpp"

#include <trellis/backends/ITensorHandle.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

using namespace trellis;
using namespace trellis::test;

namespace {

constexpr int kFloat = onnx::TensorProto_DataType_FLOAT;
constexpr int kInt64 = onnx::TensorProto_DataType_INT64;

/// A ModelProto under construction (default domain only). Dims of -1 become the symbolic "batch".
class Model {
public:
    explicit Model(int64_t opset = 13) {
        m_Proto.set_ir_version(8);
        auto* import = m_Proto.add_opset_import();
        import->set_domain("");
        import->set_version(opset);
        m_Proto.mutable_graph()->set_name("malformed");
    }
    Model& Input(const std::string& name, const std::vector<int64_t>& dims, int type = kFloat) {
        Declare(m_Proto.mutable_graph()->add_input(), name, &dims, type);
        return *this;
    }
    /// An output with no shape (the optimizer infers it).
    Model& Output(const std::string& name, int type = kFloat) {
        Declare(m_Proto.mutable_graph()->add_output(), name, nullptr, type);
        return *this;
    }
    onnx::NodeProto& Node(const std::string& op, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs, const std::string& name) {
        auto* n = m_Proto.mutable_graph()->add_node();
        n->set_op_type(op);
        n->set_name(name);
        for (const auto& i : inputs) n->add_input(i);
        for (const auto& o : outputs) n->add_output(o);
        return *n;
    }
    Model& Ints(const std::string& name, const std::vector<int64_t>& dims, const std::vector<int64_t>& values) {
        auto* t = m_Proto.mutable_graph()->add_initializer();
        t->set_name(name);
        t->set_data_type(kInt64);
        for (int64_t d : dims) t->add_dims(d);
        for (int64_t v : values) t->add_int64_data(v);
        return *this;
    }
    std::string Bytes() const { return m_Proto.SerializeAsString(); }

private:
    static void Declare(onnx::ValueInfoProto* info, const std::string& name, const std::vector<int64_t>* dims,
                        int type) {
        info->set_name(name);
        auto* tensorType = info->mutable_type()->mutable_tensor_type();
        tensorType->set_elem_type(type);
        if (!dims) return;
        auto* shape = tensorType->mutable_shape();
        for (int64_t d : *dims) {
            if (d < 0) shape->add_dim()->set_dim_param("batch");
            else shape->add_dim()->set_dim_value(d);
        }
    }
    onnx::ModelProto m_Proto;
};

/// The message of the exception of type E that parse + Optimize + LoadNetwork (+ one run with
/// zero-filled inputs of the given shapes, for dynamic networks) of `bytes` on CpuRef throws;
/// fails the test when none or another type is thrown.
template <typename E>
std::string ErrorOf(const std::string& bytes, const OptimizerOptions& options = {},
                    const std::vector<TensorShape>& runShapes = {}) {
    try {
        IOnnxParserPtr parser = IOnnxParser::Create();
        INetworkPtr network = parser->CreateNetworkFromBinary(bytes, ".");
        IRuntimePtr runtime = IRuntime::Create({});
        NetworkId id = 0;
        runtime->LoadNetwork(id, Optimize(*network, {"CpuRef"}, runtime->GetDeviceSpec(), options));
        std::vector<std::vector<uint8_t>> buffers;
        InputTensors inputs;
        for (std::size_t i = 0; i < parser->GetInputs().size(); ++i) {
            const TensorInfo info(runShapes.at(i), parser->GetInputs()[i].m_TensorInfo.GetDataType());
            buffers.emplace_back(info.GetNumBytes());
            inputs.emplace_back(parser->GetInputs()[i].m_BindingId, ConstTensor(info, buffers.back().data()));
        }
        std::vector<OwnedTensor> outputs(parser->GetOutputs().size());
        OutputTensors outs;
        for (std::size_t i = 0; i < outputs.size(); ++i) {
            outputs[i].m_Info = runtime->GetOutputTensorInfo(id, parser->GetOutputs()[i].m_BindingId, inputs);
            outputs[i].m_Data.resize(outputs[i].m_Info.GetNumBytes());
            outs.emplace_back(parser->GetOutputs()[i].m_BindingId, outputs[i].AsTensor());
        }
        runtime->EnqueueWorkload(id, inputs, outs);
    } catch (const E& e) {
        return e.what();
    } catch (const std::exception& e) {
        ADD_FAILURE() << "another exception than expected: " << e.what();
        return e.what();
    }
    ADD_FAILURE() << "no exception";
    return "";
}

#define EXPECT_MENTIONS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

// y = ConstantOfShape(shape) with `shape` an initializer.
std::string ConstantOfShapeModel(const std::vector<int64_t>& shape) {
    Model m;
    m.Ints("shape", {static_cast<int64_t>(shape.size())}, shape).Output("y");
    m.Node("ConstantOfShape", {"shape"}, {"y"}, "fill");
    return m.Bytes();
}

}  // namespace

// The crash: 2^31 x 2^31 Float32 is 2^64 bytes, which wrapped to 0 in 64-bit math, so
// constant folding allocated one byte and the kernel wrote 2^62 floats into it (SIGSEGV).
TEST(ResourceLimits, ConstantOfShapeWhoseByteCountOverflowsIsRefused) {
    const std::string message = ErrorOf<ResourceLimitException>(ConstantOfShapeModel({1ll << 31, 1ll << 31}));
    EXPECT_MENTIONS(message, "ConstantOfShape 'fill'");
    EXPECT_MENTIONS(message, "Float32 2147483648x2147483648");
    EXPECT_MENTIONS(message, "does not fit 64 bits");
}

TEST(ResourceLimits, TensorOverTheLimitNamesLayerShapeAndLimit) {
    OptimizerOptions options;
    options.m_MaxTensorBytes = 1 << 20;
    // 512 x 1024 floats = 2 MiB.
    const std::string message = ErrorOf<ResourceLimitException>(ConstantOfShapeModel({512, 1024}), options);
    EXPECT_MENTIONS(message, "ConstantOfShape 'fill': output 0 would be Float32 512x1024, 2.00 MiB (2097152 bytes)");
    EXPECT_MENTIONS(message, "maximum tensor size of 1.00 MiB (1048576 bytes)");
    EXPECT_MENTIONS(message, "m_MaxTensorBytes");
    EXPECT_MENTIONS(message, "--max-tensor-bytes");
}

TEST(ResourceLimits, TensorAtTheLimitIsAccepted) {
    OptimizerOptions options;
    options.m_MaxTensorBytes = 2 << 20;
    IOnnxParserPtr parser = IOnnxParser::Create();
    INetworkPtr network = parser->CreateNetworkFromBinary(ConstantOfShapeModel({512, 1024}), ".");
    IRuntimePtr runtime = IRuntime::Create({});
    EXPECT_NO_THROW(Optimize(*network, {"CpuRef"}, runtime->GetDeviceSpec(), options));
}

TEST(ResourceLimits, RangeWithAHugeCountIsRefusedBeforeFolding) {
    Model m;
    m.Ints("start", {}, {0}).Ints("limit", {}, {4'000'000'000}).Ints("delta", {}, {1}).Output("y", kInt64);
    m.Node("Range", {"start", "limit", "delta"}, {"y"}, "count");
    OptimizerOptions options;
    options.m_MaxTensorBytes = 1ull << 30;
    const std::string message = ErrorOf<ResourceLimitException>(m.Bytes(), options);
    EXPECT_MENTIONS(message, "Range 'count': output 0 would be Signed64 4000000000, 29.80 GiB (32000000000 bytes)");
    EXPECT_MENTIONS(message, "1.00 GiB");
}

TEST(ResourceLimits, ExpandAndTileToHugeShapesAreRefusedWithTheDefaultLimit) {
    // 2^48 floats (1 PiB): larger than any machine's memory, so the default limit refuses it.
    Model expand;
    expand.Input("x", {1}).Ints("shape", {3}, {65536, 65536, 65536}).Output("y");
    expand.Node("Expand", {"x", "shape"}, {"y"}, "wide");
    std::string message = ErrorOf<ResourceLimitException>(expand.Bytes());
    EXPECT_MENTIONS(message, "Expand 'wide': output 0 would be Float32 65536x65536x65536, 1.00 PiB");

    Model tile;
    tile.Input("x", {1024, 1024}).Ints("repeats", {2}, {1 << 21, 1 << 21}).Output("y");
    tile.Node("Tile", {"x", "repeats"}, {"y"}, "tiles");
    message = ErrorOf<ResourceLimitException>(tile.Bytes());
    EXPECT_MENTIONS(message, "Tile 'tiles': output 0 would be Float32 2147483648x2147483648");
    EXPECT_MENTIONS(message, "does not fit 64 bits");
}

TEST(ResourceLimits, HugeNetworkInputIsRefusedBeforeAnyoneAllocatesIt) {
    Model m;
    m.Input("x", {65536, 65536, 65536}).Output("y");
    m.Node("Relu", {"x"}, {"y"}, "relu");
    const std::string message = ErrorOf<ResourceLimitException>(m.Bytes());
    EXPECT_MENTIONS(message, "Input 'x': output 0 would be Float32 65536x65536x65536");
}

TEST(ResourceLimits, DynamicNetworkChecksEachRunsShapes) {
    // x [batch, 1024] -> Relu -> y: 4 KiB a row; the limit allows 2 rows.
    Model m;
    m.Input("x", {-1, 1024}).Output("y");
    m.Node("Relu", {"x"}, {"y"}, "relu");
    OptimizerOptions options;
    options.m_MaxTensorBytes = 8192;
    const std::string message = ErrorOf<ResourceLimitException>(m.Bytes(), options, {TensorShape{3, 1024}});
    EXPECT_MENTIONS(message, "Input 'x': output 0 would be Float32 3x1024, 12.00 KiB (12288 bytes)");
}

namespace {
// x [n] -> Relu -> Relu -> y: the first Relu's output lives in the arena (n floats).
std::string TwoRelus(int64_t n) {
    Model m;
    m.Input("x", {n}).Output("y");
    m.Node("Relu", {"x"}, {"t"}, "first");
    m.Node("Relu", {"t"}, {"y"}, "second");
    return m.Bytes();
}
}  // namespace

TEST(ResourceLimits, WorkingMemoryLimitIsCheckedOnThePlanBeforeTheArenaExists) {
    IOnnxParserPtr parser = IOnnxParser::Create();
    INetworkPtr network = parser->CreateNetworkFromBinary(TwoRelus(4096), ".");
    IRuntimePtr runtime = IRuntime::Create({});
    NetworkId id = 0;
    runtime->LoadNetwork(id, Optimize(*network, {"CpuRef"}, runtime->GetDeviceSpec()));
    const std::size_t peak = runtime->GetPeakWorkingMemoryBytes(id);
    ASSERT_GE(peak, 4096u * sizeof(float));

    OptimizerOptions options;
    options.m_MaxWorkingMemoryBytes = peak;
    EXPECT_EQ(runtime->LoadNetwork(id, Optimize(*network, {"CpuRef"}, runtime->GetDeviceSpec(), options)),
              Status::Success);

    options.m_MaxWorkingMemoryBytes = peak - 1;
    std::string error;
    EXPECT_EQ(runtime->LoadNetwork(id, Optimize(*network, {"CpuRef"}, runtime->GetDeviceSpec(), options), error),
              Status::Failure);
    EXPECT_MENTIONS(error, "output 0 of Relu 'first' (Float32 4096) needs 16.00 KiB (16384 bytes) of working memory");
    EXPECT_MENTIONS(error, "m_MaxWorkingMemoryBytes");
    EXPECT_MENTIONS(error, "--max-working-memory");
}

TEST(ResourceLimits, WorkingMemoryTotalOverTheLimitNamesTheLargestBlocks) {
    // x -> a = Relu(x), b = Neg(x), y = a + b: a and b are alive together (2 x 16 KiB).
    Model m;
    m.Input("x", {4096}).Output("y");
    m.Node("Relu", {"x"}, {"a"}, "a");
    m.Node("Neg", {"x"}, {"b"}, "b");
    m.Node("Add", {"a", "b"}, {"y"}, "sum");
    OptimizerOptions options;
    options.m_MaxWorkingMemoryBytes = 20000;  // each block fits, both together do not
    IOnnxParserPtr parser = IOnnxParser::Create();
    INetworkPtr network = parser->CreateNetworkFromBinary(m.Bytes(), ".");
    IRuntimePtr runtime = IRuntime::Create({});
    NetworkId id = 0;
    std::string error;
    EXPECT_EQ(runtime->LoadNetwork(id, Optimize(*network, {"CpuRef"}, runtime->GetDeviceSpec(), options), error),
              Status::Failure);
    EXPECT_MENTIONS(error, "the network needs 32.00 KiB (32768 bytes) of working memory per run");
    EXPECT_MENTIONS(error, "more than the limit of 19.53 KiB (20000 bytes)");
    EXPECT_MENTIONS(error, "output 0 of Relu 'a' (Float32 4096): 16.00 KiB");
    EXPECT_MENTIONS(error, "output 0 of Neg 'b' (Float32 4096): 16.00 KiB");
}

TEST(ResourceLimits, DynamicNetworkWorkingMemoryIsCheckedPerSpecialization) {
    Model m;
    m.Input("x", {-1}).Output("y");
    m.Node("Relu", {"x"}, {"t"}, "first");
    m.Node("Relu", {"t"}, {"y"}, "second");
    OptimizerOptions options;
    options.m_MaxWorkingMemoryBytes = 1024;
    const std::string message = ErrorOf<ResourceLimitException>(m.Bytes(), options, {TensorShape{4096}});
    EXPECT_MENTIONS(message, "specializing the network for this run's inputs (x 4096)");
    EXPECT_MENTIONS(message, "output 0 of Relu 'first'");
}

TEST(ResourceLimits, CheckedSizesReportOverflow) {
    EXPECT_EQ(TensorShape({1u << 31, 1u << 31}).GetNumElementsChecked(), std::optional<std::size_t>(1ull << 62));
    EXPECT_EQ(TensorInfo(TensorShape({1u << 31, 1u << 31}), DataType::Float32).GetNumBytesChecked(), std::nullopt);
    EXPECT_EQ(TensorShape({~0u - 1, ~0u - 1, ~0u - 1}).GetNumElementsChecked(), std::nullopt);
    EXPECT_EQ(TensorInfo(TensorShape({2, 3}), DataType::Signed64).GetNumBytesChecked(), std::optional<std::size_t>(48));
    EXPECT_EQ(TensorShape({kUnknownDim, 3}).GetNumElementsChecked(), std::optional<std::size_t>(0));
}

// ---- opsets ----

TEST(Opsets, NewerDefaultDomainOpsetIsRefusedNamingBothOpsets) {
    Model m(99);
    m.Input("x", {2}).Output("y");
    m.Node("Relu", {"x"}, {"y"}, "relu");
    IOnnxParserPtr parser = IOnnxParser::Create();
    try {
        parser->CreateNetworkFromBinary(m.Bytes(), ".");
        FAIL() << "opset 99 was accepted";
    } catch (const ParseException& e) {
        const std::string message = e.what();
        EXPECT_MENTIONS(message, "opset 99 is newer than the highest supported opset " +
                                     std::to_string(IOnnxParser::kHighestSupportedOpset));
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
}

TEST(Opsets, HighestSupportedOpsetIsAccepted) {
    Model m(IOnnxParser::kHighestSupportedOpset);
    m.Input("x", {2}).Output("y");
    m.Node("Relu", {"x"}, {"y"}, "relu");
    IOnnxParserPtr parser = IOnnxParser::Create();
    EXPECT_NO_THROW(parser->CreateNetworkFromBinary(m.Bytes(), "."));
    EXPECT_EQ(parser->GetOpsetVersion(), IOnnxParser::kHighestSupportedOpset);
}

TEST(Opsets, OtherDomainsAreNotChecked) {
    // An import of another domain at any version does not matter while no node uses it.
    Model m;
    m.Input("x", {2}).Output("y");
    m.Node("Relu", {"x"}, {"y"}, "relu");
    onnx::ModelProto proto;
    ASSERT_TRUE(proto.ParseFromString(m.Bytes()));
    auto* ml = proto.add_opset_import();
    ml->set_domain("ai.onnx.ml");
    ml->set_version(99);
    IOnnxParserPtr parser = IOnnxParser::Create();
    EXPECT_NO_THROW(parser->CreateNetworkFromBinary(proto.SerializeAsString(), "."));
}

// ---- crashes and hangs found by the fuzzers (tests/fuzz/regressions holds their inputs) ----

namespace {
/// Parses, optimizes and loads `bytes` on CpuRef and runs it once on `inputs`; returns the outputs.
std::vector<OwnedTensor> RunOnCpuRef(const std::string& bytes, const std::vector<OwnedTensor>& inputs) {
    IOnnxParserPtr parser = IOnnxParser::Create();
    INetworkPtr network = parser->CreateNetworkFromBinary(bytes, ".");
    LoadedModel model;
    model.m_Inputs = parser->GetInputs();
    model.m_Outputs = parser->GetOutputs();
    model.m_Runtime = IRuntime::Create({});
    model.m_Runtime->LoadNetwork(model.m_Id, Optimize(*network, {"CpuRef"}, model.m_Runtime->GetDeviceSpec()));
    return model.Run(inputs);
}

OwnedTensor FloatInput(const TensorShape& shape, float first, float step) {
    OwnedTensor t;
    t.m_Info = TensorInfo(shape, DataType::Float32);
    std::vector<float> values(shape.GetNumElements());
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = first + step * static_cast<float>(i % 97);
    t.m_Data.resize(values.size() * sizeof(float));
    if (!values.empty()) std::memcpy(t.m_Data.data(), values.data(), t.m_Data.size());
    return t;
}
}  // namespace

// Found by fuzz_onnx_model: EyeLike of a 0x5 input got a null output pointer (an empty output
// buffer) and passed it to memset with size 0, which is undefined behaviour (UBSan: "null
// pointer passed as argument 1"). Fixed where every kernel benefits: a tensor handle of an empty
// tensor maps to EmptyTensorAddress() (ITensorHandle::Map() is never null during Execute), an
// address in an inaccessible page, so a kernel that writes into an empty tensor still crashes.
TEST(FuzzRegressions, EmptyTensorsMapToAValidAddress) {
    PassthroughTensorHandle empty(TensorInfo(TensorShape({0, 5}), DataType::Float32), nullptr);
    EXPECT_NE(empty.Map(), nullptr);
    EXPECT_EQ(empty.Map(), EmptyTensorAddress());
    EXPECT_DEATH(*static_cast<volatile unsigned char*>(EmptyTensorAddress()) = 1, "");
    PassthroughTensorHandle scalarLike(TensorInfo(TensorShape({1}), DataType::Float32), nullptr);
    EXPECT_EQ(scalarLike.Map(), nullptr) << "only empty tensors get the stand-in address";

    Model m;
    m.Input("x", {0, 5}).Output("y");
    m.Node("EyeLike", {"x"}, {"y"}, "eye");
    const std::vector<OwnedTensor> outputs = RunOnCpuRef(m.Bytes(), {FloatInput({0, 5}, 0, 0)});
    ASSERT_EQ(outputs.size(), 1u);
    EXPECT_EQ(outputs[0].m_Info.GetShape(), TensorShape({0, 5}));
}

// Found by fuzz_onnx_model (a slow unit, 25 s): MaxPool with kernel_shape [2, 56623103] and
// SAME_UPPER padding on a 32x32 input. CpuRef built its per-dim tap tables by visiting every tap
// of every window, 32 x 56623103 of them; it now computes each window's range of taps inside the
// input (and inside the padded input) directly. Here the kernel is 2^31 - 1 wide (the old tables
// took 32 x 2^31 steps, minutes); every window spans the whole row.
TEST(FuzzRegressions, PoolingKernelFarWiderThanItsInputIsCheap) {
    Model m;
    m.Input("x", {1, 1, 4, 32}).Output("y");
    onnx::NodeProto& pool = m.Node("MaxPool", {"x"}, {"y"}, "pool");
    auto* autoPad = pool.add_attribute();
    autoPad->set_name("auto_pad");
    autoPad->set_type(onnx::AttributeProto_AttributeType_STRING);
    autoPad->set_s("SAME_UPPER");
    auto* kernel = pool.add_attribute();
    kernel->set_name("kernel_shape");
    kernel->set_type(onnx::AttributeProto_AttributeType_INTS);
    kernel->add_ints(2);
    kernel->add_ints(2147483647);
    const OwnedTensor x = FloatInput({1, 1, 4, 32}, -3.0f, 0.37f);
    const auto start = std::chrono::steady_clock::now();
    const std::vector<OwnedTensor> outputs = RunOnCpuRef(m.Bytes(), {x});
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
    ASSERT_EQ(outputs.size(), 1u);
    ASSERT_EQ(outputs[0].m_Info.GetShape(), TensorShape({1, 1, 4, 32}));
    const auto* in = reinterpret_cast<const float*>(x.m_Data.data());
    const auto* out = reinterpret_cast<const float*>(outputs[0].m_Data.data());
    for (unsigned int i = 0; i < 4; ++i) {
        // Rows i and i + 1 (the end padding covers the last), every column.
        float expected = -1e30f;
        for (unsigned int r = i; r < std::min(i + 2, 4u); ++r) {
            for (unsigned int c = 0; c < 32; ++c) expected = std::max(expected, in[r * 32 + c]);
        }
        for (unsigned int j = 0; j < 32; ++j) EXPECT_EQ(out[i * 32 + j], expected) << i << "," << j;
    }
}

// Found by fuzz_onnx_model (out of memory, 4 GB): a 1-d MaxPool of 220000 inputs, kernel 4232,
// dilation 10, pads 100 and stride 2. CpuRef stored every tap's input offset for every output
// (outputs x kernel entries, 3.7 GB for 1 MiB tensors); it now stores one range of taps per
// output. Checked here on a smaller case against a direct computation.
TEST(FuzzRegressions, PoolingWithAWideDilatedKernelKeepsSmallTables) {
    const unsigned int in = 50000, kernel = 1000, dilation = 10, pad = 100, stride = 2;
    const unsigned int out = (in + 2 * pad - ((kernel - 1) * dilation + 1)) / stride + 1;
    for (const char* op : {"MaxPool", "AveragePool"}) {
        Model m;
        m.Input("x", {1, 1, in}).Output("y");
        onnx::NodeProto& pool = m.Node(op, {"x"}, {"y"}, "pool");
        auto ints = [&](const char* name, std::vector<int64_t> values) {
            auto* a = pool.add_attribute();
            a->set_name(name);
            a->set_type(onnx::AttributeProto_AttributeType_INTS);
            for (int64_t v : values) a->add_ints(v);
        };
        ints("kernel_shape", {kernel});
        ints("pads", {pad, pad});
        ints("strides", {stride});
        if (std::string(op) == "MaxPool") ints("dilations", {dilation});
        const unsigned int d = std::string(op) == "MaxPool" ? dilation : 1;
        const unsigned int o = (in + 2 * pad - ((kernel - 1) * d + 1)) / stride + 1;
        const OwnedTensor x = FloatInput({1, 1, in}, -5.0f, 0.11f);
        const std::vector<OwnedTensor> outputs = RunOnCpuRef(m.Bytes(), {x});
        ASSERT_EQ(outputs.at(0).m_Info.GetShape(), TensorShape({1, 1, o})) << op;
        const auto* xs = reinterpret_cast<const float*>(x.m_Data.data());
        const auto* ys = reinterpret_cast<const float*>(outputs[0].m_Data.data());
        for (unsigned int i = 0; i < o; i += 97) {
            float best = -1e30f;
            double sum = 0;
            unsigned int count = 0;
            for (unsigned int j = 0; j < kernel; ++j) {
                const long long p = static_cast<long long>(i) * stride - pad + static_cast<long long>(j) * d;
                if (p < 0 || p >= in) continue;
                best = std::max(best, xs[p]);
                sum += xs[p];
                ++count;
            }
            const float expected = std::string(op) == "MaxPool" ? best : static_cast<float>(sum / count);
            EXPECT_NEAR(ys[i], expected, 1e-4) << op << " output " << i;
        }
    }
    EXPECT_GT(out, 20000u);
}

// Found by fuzz_onnx_model (UBSan: reference binding to a null pointer, then a write out of
// bounds): QLinearConv with a per-channel w_scale and weights of rank 1. The importer lined the
// scale up with rank - 2 trailing ones, which wrapped around to a huge count and then to an
// empty shape that it indexed. Weights of rank below 3 are now refused by name.
TEST(FuzzRegressions, QLinearConvWithRank1WeightsIsRefused) {
    constexpr int kUint8 = onnx::TensorProto_DataType_UINT8;
    Model m(10);
    m.Input("x", {1, 1, 7, 7}, kUint8).Input("x_scale", {}).Input("x_zero_point", {}, kUint8);
    m.Input("w", {1}, kUint8).Input("w_scale", {4}).Input("w_zero_point", {1}, kUint8);
    m.Input("y_scale", {}).Input("y_zero_point", {}, kUint8).Output("y", kUint8);
    m.Node("QLinearConv", {"x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point", "y_scale", "y_zero_point"},
           {"y"}, "qconv");
    try {
        IOnnxParser::Create()->CreateNetworkFromBinary(m.Bytes(), ".");
        FAIL() << "accepted";
    } catch (const ParseException& e) {
        EXPECT_MENTIONS(std::string(e.what()), "node 'qconv' (QLinearConv, opset 10): input 3 (w) has rank 1");
    }
}

// Found by fuzz_onnx_model (ASan: global-buffer-overflow, a write): MatMul of [1, 0, 126, 4] by
// [4, 3]. CpuRef took each batch dim as max(dim of A, dim of B), so a batch dim of 0 against a
// broadcast 1 became 1 and the kernel wrote a 126 x 3 matrix into the empty output. numpy's rule
// (a 1 takes the other's dim) gives 0.
TEST(FuzzRegressions, MatMulWithAnEmptyBatchDimWritesNothing) {
    for (const bool emptyFirst : {true, false}) {
        Model m;
        if (emptyFirst) m.Input("a", {1, 0, 5, 4}).Input("b", {4, 3});
        else m.Input("a", {5, 4}).Input("b", {2, 0, 4, 3});
        m.Output("c");
        m.Node("MatMul", {"a", "b"}, {"c"}, "mm");
        const TensorShape a = emptyFirst ? TensorShape{1, 0, 5, 4} : TensorShape{5, 4};
        const TensorShape b = emptyFirst ? TensorShape{4, 3} : TensorShape{2, 0, 4, 3};
        const std::vector<OwnedTensor> outputs = RunOnCpuRef(m.Bytes(), {FloatInput(a, 1, 1), FloatInput(b, 1, 1)});
        EXPECT_EQ(outputs.at(0).m_Info.GetShape(), emptyFirst ? TensorShape({1, 0, 5, 3}) : TensorShape({2, 0, 5, 3}));
    }
    // A broadcast batch of 1 against 2 still runs both batches.
    Model m;
    m.Input("a", {1, 2, 2}).Input("b", {2, 2, 1}).Output("c");
    m.Node("MatMul", {"a", "b"}, {"c"}, "mm");
    const std::vector<OwnedTensor> outputs =
        RunOnCpuRef(m.Bytes(), {FloatInput({1, 2, 2}, 1, 1), FloatInput({2, 2, 1}, 1, 1)});
    ASSERT_EQ(outputs.at(0).m_Info.GetShape(), TensorShape({2, 2, 1}));
    const auto* c = reinterpret_cast<const float*>(outputs[0].m_Data.data());
    // a = [[1, 2], [3, 4]]; b = [[1], [2]], [[3], [4]]
    EXPECT_EQ(std::vector<float>(c, c + 4), (std::vector<float>{5, 11, 11, 25}));
}

// Found by fuzz_onnx_model (an uncaught std::bad_optional_access): ConstantOfShape whose `value`
// attribute is an Int4 tensor, which has no reading as numbers. The committed input is refused with
// an error naming the node and the attribute.
TEST(FuzzRegressions, ConstantOfShapeWithAnInt4ValueIsRefused) {
    const std::string file =
        std::string(TRELLIS_SOURCE_DIR) + "/tests/fuzz/regressions/onnx_model/constantofshape-value-int4-bad-optional.onnx";
    try {
        IOnnxParser::Create()->CreateNetworkFromBinaryFile(file);
        FAIL() << "accepted";
    } catch (const ParseException& e) {
        EXPECT_MENTIONS(std::string(e.what()), "(ConstantOfShape, opset 9): attribute value: Int4 tensor");
    }
}
