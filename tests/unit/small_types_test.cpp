// The small ONNX types' encodings (include/trellis/backends/SmallTypes.hpp) against values
// ml_dtypes 0.5.4 gives (what ONNX's reference and its test data use), and their round trip
// through ONNX tensor files (packed 4- and 2-bit elements).
#include "TestHelpers.hpp"

#include <trellis/TensorIO.hpp>
#include <trellis/backends/SmallTypes.hpp>

#include <cmath>
#include <filesystem>
#include <limits>
#include <unistd.h>

using namespace trellis;

namespace {

double RoundTrip(DataType t, double v, bool saturate = true) { return DecodeSmallType(t, EncodeSmallType(t, v, saturate)); }
const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

TEST(SmallTypes, Float8RoundsToNearestEvenAndSaturatesOrOverflows) {
    // ml_dtypes float8_e4m3fn: 1000, 500 and inf become NaN without saturation, 448 with it.
    EXPECT_TRUE(std::isnan(RoundTrip(DataType::Float8E4M3FN, 1000.0, false)));
    EXPECT_TRUE(std::isnan(RoundTrip(DataType::Float8E4M3FN, 500.0, false)));
    EXPECT_TRUE(std::isnan(RoundTrip(DataType::Float8E4M3FN, kInf, false)));
    EXPECT_EQ(RoundTrip(DataType::Float8E4M3FN, 1000.0), 448.0);
    EXPECT_EQ(RoundTrip(DataType::Float8E4M3FN, -kInf), -448.0);
    EXPECT_EQ(RoundTrip(DataType::Float8E4M3FN, 464.0), 448.0);   // a tie between 448 and 480: even
    EXPECT_EQ(RoundTrip(DataType::Float8E4M3FN, 0.001953125), 0.001953125);  // 2^-9, the least subnormal
    EXPECT_EQ(RoundTrip(DataType::Float8E4M3FN, 0.0009765625), 0.0);         // 2^-10, a tie with 0: even
    EXPECT_EQ(RoundTrip(DataType::Float8E4M3FN, 0.00146484375), 0.001953125);
    // float8_e5m2 has infinities: 1000 -> 1024, 500 -> 512, -1e9 -> -inf without saturation.
    EXPECT_EQ(RoundTrip(DataType::Float8E5M2, 1000.0, false), 1024.0);
    EXPECT_EQ(RoundTrip(DataType::Float8E5M2, 500.0, false), 512.0);
    EXPECT_EQ(RoundTrip(DataType::Float8E5M2, -1e9, false), -kInf);
    EXPECT_EQ(RoundTrip(DataType::Float8E5M2, -1e9), -57344.0);
    // The FNUZ types: NaN is 0x80 and -0 becomes +0.
    EXPECT_EQ(EncodeSmallType(DataType::Float8E4M3FNUZ, kNaN), 0x80);
    EXPECT_EQ(EncodeSmallType(DataType::Float8E4M3FNUZ, -0.0), 0x00);
    EXPECT_TRUE(std::isnan(RoundTrip(DataType::Float8E4M3FNUZ, 1000.0, false)));
    EXPECT_EQ(RoundTrip(DataType::Float8E4M3FNUZ, 1000.0), 240.0);
    EXPECT_EQ(RoundTrip(DataType::Float8E5M2FNUZ, 1000.0), 1024.0);
}

TEST(SmallTypes, Float4E2M1AlwaysSaturates) {
    const double in[] = {0.48, 0.25, 1.05, -3.5, -8, 9, 1e6, 1e-7, kInf, -kInf, -4, 0.01, 2.5, 5};
    const double want[] = {0.5, 0.0, 1.0, -4.0, -6.0, 6.0, 6.0, 0.0, 6.0, -6.0, -4.0, 0.0, 2.0, 4.0};
    for (std::size_t i = 0; i < std::size(in); ++i) EXPECT_EQ(RoundTrip(DataType::Float4E2M1, in[i]), want[i]) << in[i];
    EXPECT_EQ(EncodeSmallType(DataType::Float4E2M1, kNaN), 0x8);  // no NaN: -0, as ml_dtypes
}

TEST(SmallTypes, Float8E8M0RoundsByMode) {
    EXPECT_EQ(DecodeSmallType(DataType::Float8E8M0, EncodeSmallType(DataType::Float8E8M0, 1.5)), 2.0);
    EXPECT_EQ(DecodeSmallType(DataType::Float8E8M0, EncodeSmallType(DataType::Float8E8M0, 1.5, true, SmallTypeRounding::Down)), 1.0);
    EXPECT_EQ(DecodeSmallType(DataType::Float8E8M0, EncodeSmallType(DataType::Float8E8M0, 1.25, true, SmallTypeRounding::Nearest)), 1.0);
    EXPECT_EQ(DecodeSmallType(DataType::Float8E8M0, EncodeSmallType(DataType::Float8E8M0, 1.5, true, SmallTypeRounding::Nearest)), 2.0);
    EXPECT_EQ(EncodeSmallType(DataType::Float8E8M0, kInf), 0xFF);
}

TEST(SmallTypes, SmallIntegersTruncateAndWrap) {
    // ml_dtypes: -9 -> 7, 8 -> -8 (int4); -1 -> 15 (uint4); -3 -> 1, 2 -> -2 (int2); -3.7 -> -3.
    EXPECT_EQ(RoundTrip(DataType::Int4, -9), 7.0);
    EXPECT_EQ(RoundTrip(DataType::Int4, 8), -8.0);
    EXPECT_EQ(RoundTrip(DataType::Int4, -3.7), -3.0);
    EXPECT_EQ(RoundTrip(DataType::UInt4, -1), 15.0);
    EXPECT_EQ(RoundTrip(DataType::Int2, -3), 1.0);
    EXPECT_EQ(RoundTrip(DataType::Int2, 2), -2.0);
    EXPECT_EQ(RoundTrip(DataType::UInt2, 7), 3.0);
    EXPECT_EQ(EncodeSmallType(DataType::Int4, -3), 0xFD);  // sign-extended in its byte
}

TEST(SmallTypes, PackedTypesRoundTripThroughTensorFiles) {
    const std::string dir = (std::filesystem::temp_directory_path() / ("trellis_small_types_" + std::to_string(::getpid()))).string();
    std::filesystem::create_directories(dir);
    for (DataType t : {DataType::Int4, DataType::UInt4, DataType::Float4E2M1, DataType::Int2, DataType::UInt2,
                       DataType::Float8E4M3FN}) {
        OwnedTensor tensor;
        tensor.m_Name = "x";
        tensor.m_Info = TensorInfo(TensorShape({7}), t);  // odd: the last packed byte is partly used
        for (int i = 0; i < 7; ++i) tensor.m_Data.push_back(EncodeSmallType(t, i - 3));
        const std::string path = dir + "/" + GetDataTypeName(t) + ".pb";
        SaveTensorProto(path, tensor);
        const OwnedTensor back = LoadTensorFile(path);
        EXPECT_EQ(back.m_Info, tensor.m_Info) << GetDataTypeName(t);
        EXPECT_EQ(back.m_Data, tensor.m_Data) << GetDataTypeName(t);
    }
    std::filesystem::remove_all(dir);
}
