// ONNX converters: signal processing and feature extraction (HannWindow, HammingWindow,
// BlackmanWindow, DFT, STFT, MelWeightMatrix, TfIdfVectorizer), the sampling ops GridSample and
// RoiAlign, and Det.
//
// Parameter inputs (a window's size, DFT's dft_length, STFT's frame_step/frame_length, every
// MelWeightMatrix input) are folded into the descriptor when constant. When one is computed by
// the graph (or is a graph input) the layer keeps it as an input slot and the core's shape
// inference refuses it by name ("input 0 (size) must be constant when the network is loaded").
#include "OnnxConverters.hpp"

namespace trellis::onnximport {

namespace {

/// The output_datatype attribute (ONNX element type), default Float32.
DataType ReadOutputDataType(OnnxNodeContext& ctx) {
    const int64_t onnxType = ctx.GetInt("output_datatype", 1);
    const std::optional<DataType> type = FromOnnxDataType(static_cast<int32_t>(onnxType));
    if (!type) {
        ctx.Fail("attribute output_datatype=" + OnnxDataTypeName(static_cast<int32_t>(onnxType)) +
                 " names a data type Trellis does not support");
    }
    return *type;
}

/// Constant input i as one integer (fails naming `what` unless it holds exactly one value).
int64_t ConstScalarInt(OnnxNodeContext& ctx, unsigned int i, const char* what) {
    const std::vector<int64_t> v = ctx.ConstInts(i, what);
    if (v.size() != 1) {
        ctx.Fail("input " + std::to_string(i) + " (" + what + ") must hold one value, has " + std::to_string(v.size()));
    }
    return v[0];
}

double ConstScalarDouble(OnnxNodeContext& ctx, unsigned int i, const char* what) {
    const std::vector<double> v = ctx.ConstDoubles(i, what);
    if (v.size() != 1) {
        ctx.Fail("input " + std::to_string(i) + " (" + what + ") must hold one value, has " + std::to_string(v.size()));
    }
    return v[0];
}

}  // namespace

void ConvertWindow(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(1, 1);
    ctx.ExpectOutputs(1, 1);
    WindowDescriptor d;
    const std::string& op = ctx.OpType();
    d.m_Function = op == "HannWindow" ? WindowFunction::Hann
                   : op == "HammingWindow" ? WindowFunction::Hamming
                                           : WindowFunction::Blackman;
    d.m_Periodic = ctx.GetBool("periodic", true);
    d.m_DataType = ReadOutputDataType(ctx);
    const unsigned int slots = ctx.ParamSlots(0);
    if (slots == 0) d.m_Size = ConstScalarInt(ctx, 0, "size");
    ctx.AddNodeLayer(LayerType::Window, d, slots);
}

void ConvertDft(OnnxNodeContext& ctx) {
    // DFT-17: axis attribute (default 1); DFT-20: axis as constant input 2 (default -2).
    const bool axisInput = ctx.Opset() >= 20;
    ctx.ExpectInputs(1, axisInput ? 3 : 2);
    ctx.ExpectOutputs(1, 1);
    DftDescriptor d;
    if (axisInput) {
        // A constant axis is folded here; one computed or fed at run time stays slot 2 (the core
        // reads it when the network is optimized or specialized for a run).
        d.m_Axis = -2;
        if (ctx.HasInput(2) && ctx.ConstantInput(2)) d.m_Axis = ConstScalarInt(ctx, 2, "axis");
    } else {
        d.m_Axis = ctx.GetInt("axis", 1);
    }
    d.m_Inverse = ctx.GetBool("inverse", false);
    d.m_Onesided = ctx.GetBool("onesided", false);
    const unsigned int slots = ctx.ParamSlots(1);
    if (slots == 1 && ctx.HasInput(1)) d.m_DftLength = ConstScalarInt(ctx, 1, "dft_length");
    ctx.AddNodeLayer(LayerType::Dft, d, slots);
}

void ConvertStft(OnnxNodeContext& ctx) {
    // Inputs: signal, frame_step (parameter), window (data, optional), frame_length (parameter,
    // optional).
    ctx.ExpectInputs(2, 4);
    ctx.ExpectOutputs(1, 1);
    StftDescriptor d;
    d.m_Onesided = ctx.GetBool("onesided", true);
    const bool stepConstant = ctx.ConstantInput(1) != nullptr;
    const bool lengthConstant = !ctx.HasInput(3) || ctx.ConstantInput(3) != nullptr;
    if (stepConstant && lengthConstant) {
        d.m_FrameStep = ConstScalarInt(ctx, 1, "frame_step");
        if (ctx.HasInput(3)) d.m_FrameLength = ConstScalarInt(ctx, 3, "frame_length");
        std::vector<IOutputSlot*> inputs{&ctx.InputSlot(0)};
        if (ctx.HasInput(2)) {
            inputs.push_back(&ctx.Graph().EmptyPlaceholder(DataType::Signed64));
            inputs.push_back(&ctx.InputSlot(2));
        }
        IConnectableLayer* layer = ctx.AddLayer(LayerType::Stft, d, inputs, 1);
        ctx.SetOutput(0, layer->GetOutputSlot(0));
    } else {
        ctx.AddNodeLayer(LayerType::Stft, d, ctx.NumInputs());
    }
}

void ConvertMelWeightMatrix(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(5, 5);
    ctx.ExpectOutputs(1, 1);
    MelWeightMatrixDescriptor d;
    d.m_DataType = ReadOutputDataType(ctx);
    const unsigned int slots = ctx.ParamSlots(0);
    if (slots == 0) {
        d.m_NumMelBins = ConstScalarInt(ctx, 0, "num_mel_bins");
        d.m_DftLength = ConstScalarInt(ctx, 1, "dft_length");
        d.m_SampleRate = ConstScalarInt(ctx, 2, "sample_rate");
        d.m_LowerEdgeHertz = static_cast<float>(ConstScalarDouble(ctx, 3, "lower_edge_hertz"));
        d.m_UpperEdgeHertz = static_cast<float>(ConstScalarDouble(ctx, 4, "upper_edge_hertz"));
    }
    ctx.AddNodeLayer(LayerType::MelWeightMatrix, d, slots);
}

void ConvertTfIdfVectorizer(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(1, 1);
    ctx.ExpectOutputs(1, 1);
    TfIdfVectorizerDescriptor d;
    const std::string mode = ctx.GetString("mode", "");
    if (mode == "TF") d.m_Mode = TfIdfMode::Tf;
    else if (mode == "IDF") d.m_Mode = TfIdfMode::Idf;
    else if (mode == "TFIDF") d.m_Mode = TfIdfMode::TfIdf;
    else ctx.Fail("attribute mode='" + mode + "' is not supported (expected TF, IDF or TFIDF)");
    d.m_MinGramLength = ctx.GetRequiredInt("min_gram_length");
    d.m_MaxGramLength = ctx.GetRequiredInt("max_gram_length");
    d.m_MaxSkipCount = ctx.GetRequiredInt("max_skip_count");
    d.m_NgramCounts = ctx.GetInts("ngram_counts");
    d.m_NgramIndexes = ctx.GetInts("ngram_indexes");
    if (ctx.FindAttribute("pool_strings")) {
        ctx.Fail("attribute pool_strings is not supported (string tensors are not; only pool_int64s)");
    }
    if (!ctx.FindInts("pool_int64s")) ctx.Fail("attribute pool_int64s is required (the n-grams to count)");
    d.m_Pool = ctx.GetInts("pool_int64s");
    if (std::optional<std::vector<float>> w = ctx.FindFloats("weights")) d.m_Weights = *w;
    ctx.AddNodeLayer(LayerType::TfIdfVectorizer, d, 1);
}

void ConvertGridSample(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(2, 2);
    ctx.ExpectOutputs(1, 1);
    GridSampleDescriptor d;
    // Opset 16 names the modes bilinear/nearest/bicubic; opset 20 renamed them linear/cubic
    // (and allowed N-d input; the core takes 4-D and 5-D).
    const bool opset20 = ctx.Opset() >= 20;
    const std::string linear = opset20 ? "linear" : "bilinear", cubic = opset20 ? "cubic" : "bicubic";
    const std::string mode = ctx.GetString("mode", linear);
    if (mode == linear) d.m_Mode = GridSampleMode::Bilinear;
    else if (mode == "nearest") d.m_Mode = GridSampleMode::Nearest;
    else if (mode == cubic) d.m_Mode = GridSampleMode::Bicubic;
    else ctx.Fail("attribute mode='" + mode + "' is not supported (expected " + linear + ", nearest or " + cubic + ")");
    const std::string padding = ctx.GetString("padding_mode", "zeros");
    if (padding == "zeros") d.m_Padding = GridSamplePadding::Zeros;
    else if (padding == "border") d.m_Padding = GridSamplePadding::Border;
    else if (padding == "reflection") d.m_Padding = GridSamplePadding::Reflection;
    else ctx.Fail("attribute padding_mode='" + padding + "' is not supported (expected zeros, border or reflection)");
    d.m_AlignCorners = ctx.GetBool("align_corners", false);
    ctx.AddNodeLayer(LayerType::GridSample, d, 2);
}

void ConvertAffineGrid(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(2, 2);
    ctx.ExpectOutputs(1, 1);
    AffineGridDescriptor d;
    d.m_AlignCorners = ctx.GetBool("align_corners", false);
    ctx.AddNodeLayer(LayerType::AffineGrid, d, 2);  // size: a parameter input the core folds
}

void ConvertCol2Im(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(3, 3);
    ctx.ExpectOutputs(1, 1);
    Col2ImDescriptor d;
    d.m_Strides = ctx.ToUnsigned(ctx.GetInts("strides"), "attribute strides", 1);
    d.m_Dilations = ctx.ToUnsigned(ctx.GetInts("dilations"), "attribute dilations", 1);
    const std::vector<int64_t> pads = ctx.GetInts("pads");
    if (pads.size() % 2 != 0) ctx.Fail("attribute pads has " + std::to_string(pads.size()) + " values; it needs an even number");
    const std::vector<unsigned int> values = ctx.ToUnsigned(pads, "attribute pads", 0);
    d.m_PadsBegin.assign(values.begin(), values.begin() + values.size() / 2);
    d.m_PadsEnd.assign(values.begin() + values.size() / 2, values.end());
    ctx.AddNodeLayer(LayerType::Col2Im, d, 3);  // image_shape and block_shape: parameter inputs the core folds
}

void ConvertDeformConv(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(3, 5);
    ctx.ExpectOutputs(1, 1);
    DeformConvolutionDescriptor d;
    d.m_KernelShape = ctx.ToUnsigned(ctx.GetInts("kernel_shape"), "attribute kernel_shape", 1);
    d.m_Strides = ctx.ToUnsigned(ctx.GetInts("strides"), "attribute strides", 1);
    d.m_Dilations = ctx.ToUnsigned(ctx.GetInts("dilations"), "attribute dilations", 1);
    const std::vector<int64_t> pads = ctx.GetInts("pads");
    if (pads.size() % 2 != 0) ctx.Fail("attribute pads has " + std::to_string(pads.size()) + " values; it needs an even number");
    const std::vector<unsigned int> values = ctx.ToUnsigned(pads, "attribute pads", 0);
    d.m_PadsBegin.assign(values.begin(), values.begin() + values.size() / 2);
    d.m_PadsEnd.assign(values.begin() + values.size() / 2, values.end());
    d.m_Groups = ctx.ToUnsigned({ctx.GetInt("group", 1)}, "attribute group", 1)[0];
    d.m_OffsetGroups = ctx.ToUnsigned({ctx.GetInt("offset_group", 1)}, "attribute offset_group", 1)[0];
    const unsigned int inputs = ctx.HasInput(4) ? 5 : ctx.HasInput(3) ? 4 : 3;
    ctx.AddNodeLayer(LayerType::DeformConvolution, d, inputs);
}

void ConvertRoiAlign(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(3, 3);
    ctx.ExpectOutputs(1, 1);
    RoiAlignDescriptor d;
    const std::string mode = ctx.GetString("mode", "avg");
    if (mode == "avg") d.m_Mode = RoiAlignMode::Average;
    else if (mode == "max") d.m_Mode = RoiAlignMode::Max;
    else ctx.Fail("attribute mode='" + mode + "' is not supported (expected avg or max)");
    // RoiAlign-10 had no coordinate_transformation_mode and behaves as output_half_pixel;
    // opset 16 added it with default half_pixel.
    if (ctx.Opset() >= 16) {
        const std::string ct = ctx.GetString("coordinate_transformation_mode", "half_pixel");
        if (ct == "half_pixel") d.m_HalfPixel = true;
        else if (ct == "output_half_pixel") d.m_HalfPixel = false;
        else ctx.Fail("attribute coordinate_transformation_mode='" + ct + "' is not supported (expected half_pixel or "
                      "output_half_pixel)");
    } else {
        d.m_HalfPixel = false;
    }
    d.m_OutputHeight = ctx.ToUnsigned({ctx.GetInt("output_height", 1)}, "attribute output_height", 1)[0];
    d.m_OutputWidth = ctx.ToUnsigned({ctx.GetInt("output_width", 1)}, "attribute output_width", 1)[0];
    d.m_SamplingRatio = ctx.ToUnsigned({ctx.GetInt("sampling_ratio", 0)}, "attribute sampling_ratio", 0)[0];
    d.m_SpatialScale = ctx.GetFloat("spatial_scale", 1.0f);
    ctx.AddNodeLayer(LayerType::RoiAlign, d, 3);
}

void ConvertDet(OnnxNodeContext& ctx) {
    ctx.ExpectInputs(1, 1);
    ctx.ExpectOutputs(1, 1);
    ctx.AddNodeLayer(LayerType::Det, EmptyDescriptor{}, 1);
}

}  // namespace trellis::onnximport
