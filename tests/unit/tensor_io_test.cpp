// TensorIO: .pb (TensorProto) and .npy round trips for every supported type, the typed
// TensorProto fields, and clean ParseExceptions for truncated, inconsistent or garbage files.
#ifndef ONNX_ML
#define ONNX_ML 1  // the onnx_proto target defines it; the fallback keeps the file checkable alone
#endif
#include <onnx/onnx_pb.h>

#include <trellis/Exceptions.hpp>
#include <trellis/TensorIO.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace trellis;

namespace {

class TensorIOTest : public ::testing::Test {
protected:
    void SetUp() override {
        m_Dir = fs::temp_directory_path() / ("trellis_tensor_io_" + std::to_string(::getpid()) + "_" +
                                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(m_Dir);
    }
    void TearDown() override { fs::remove_all(m_Dir); }

    std::string PathOf(const std::string& name) const { return (m_Dir / name).string(); }
    std::string WriteFile(const std::string& name, const std::string& bytes) const {
        std::ofstream(PathOf(name), std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        return PathOf(name);
    }
    static std::string ReadFile(const std::string& path) {
        std::ifstream file(path, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(file), {});
    }

    fs::path m_Dir;
};

OwnedTensor MakeTensor(const std::string& name, const TensorShape& shape, DataType type, unsigned seed) {
    OwnedTensor t;
    t.m_Name = name;
    t.m_Info = TensorInfo(shape, type);
    t.m_Data.resize(t.m_Info.GetNumBytes());
    std::mt19937 rng(seed);
    for (auto& b : t.m_Data) b = static_cast<uint8_t>(rng());
    if (type == DataType::Boolean) {
        for (auto& b : t.m_Data) b &= 1;  // booleans are 0 or 1
    }
    return t;
}

void ExpectSameTensor(const OwnedTensor& got, const OwnedTensor& want, bool compareName) {
    EXPECT_EQ(got.m_Info.GetShape(), want.m_Info.GetShape());
    EXPECT_EQ(got.m_Info.GetDataType(), want.m_Info.GetDataType());
    EXPECT_EQ(got.m_Data, want.m_Data);
    if (compareName) {
        EXPECT_EQ(got.m_Name, want.m_Name);
    }
}

const DataType kTypes[] = {DataType::Float32, DataType::Float16, DataType::BFloat16, DataType::Float64,
                           DataType::Signed32, DataType::Signed64, DataType::Boolean, DataType::UInt8,
                           DataType::Signed8, DataType::Signed16, DataType::UInt16, DataType::UInt32,
                           DataType::UInt64};
const TensorShape kShapes[] = {TensorShape({2, 3, 5}), TensorShape({7}), TensorShape{}, TensorShape({0, 4})};

TEST_F(TensorIOTest, TensorProtoRoundTripsEveryType) {
    unsigned seed = 1;
    for (DataType type : kTypes) {
        for (const TensorShape& shape : kShapes) {
            const OwnedTensor t = MakeTensor(std::string("tensor_") + std::to_string(seed), shape, type, seed);
            const std::string path = PathOf(std::to_string(seed++) + "_t.pb");
            SaveTensorProto(path, t);
            SCOPED_TRACE(t.m_Info.ToString());
            ExpectSameTensor(LoadTensorFile(path), t, /*compareName=*/true);
        }
    }
}

TEST_F(TensorIOTest, NpyRoundTripsEveryNumpyType) {
    unsigned seed = 100;
    for (DataType type : kTypes) {
        if (type == DataType::BFloat16) continue;  // numpy has no bfloat16
        for (const TensorShape& shape : kShapes) {
            const OwnedTensor t = MakeTensor("", shape, type, seed);
            const std::string path = PathOf(std::to_string(seed++) + "_t.npy");
            SaveNpy(path, t);
            SCOPED_TRACE(t.m_Info.ToString());
            const std::string bytes = ReadFile(path);
            ASSERT_GE(bytes.size(), 10u);
            EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));  // version 1.0
            const std::size_t headerEnd = 10 + (static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8));
            EXPECT_EQ(headerEnd % 64, 0u);
            EXPECT_EQ(bytes[headerEnd - 1], '\n');
            ExpectSameTensor(LoadTensorFile(path), t, /*compareName=*/false);
        }
    }
    EXPECT_THROW(SaveNpy(PathOf("bf16.npy"), MakeTensor("", TensorShape({2}), DataType::BFloat16, 1)),
                 InvalidArgumentException);
}

TEST_F(TensorIOTest, NpyHeaderTupleForms) {
    SaveNpy(PathOf("scalar.npy"), MakeTensor("", TensorShape{}, DataType::Float32, 1));
    EXPECT_NE(ReadFile(PathOf("scalar.npy")).find("'shape': ()"), std::string::npos);
    SaveNpy(PathOf("vector.npy"), MakeTensor("", TensorShape({4}), DataType::Float32, 1));
    EXPECT_NE(ReadFile(PathOf("vector.npy")).find("'shape': (4,)"), std::string::npos);
    SaveNpy(PathOf("matrix.npy"), MakeTensor("", TensorShape({2, 3}), DataType::Float32, 1));
    EXPECT_NE(ReadFile(PathOf("matrix.npy")).find("'shape': (2, 3)"), std::string::npos);
}

std::string NpyFile(int major, const std::string& header, const std::string& data) {
    std::string bytes("\x93NUMPY", 6);
    bytes += static_cast<char>(major);
    bytes += '\0';
    const std::size_t n = header.size();
    bytes += static_cast<char>(n & 0xff);
    bytes += static_cast<char>((n >> 8) & 0xff);
    if (major >= 2) {
        bytes += static_cast<char>((n >> 16) & 0xff);
        bytes += static_cast<char>((n >> 24) & 0xff);
    }
    return bytes + header + data;
}

TEST_F(TensorIOTest, NpyVersionsAndByteOrders) {
    const std::vector<int32_t> values = {1, -2, 3};
    const std::string data(reinterpret_cast<const char*>(values.data()), sizeof(int32_t) * values.size());
    for (int major : {1, 2, 3}) {
        for (const char* descr : {"<i4", "=i4", "|i4"}) {
            const std::string header = std::string("{\"descr\": '") + descr + "', 'fortran_order': False, 'shape': (3,)}\n";
            const OwnedTensor t = LoadTensorFile(WriteFile("v.npy", NpyFile(major, header, data)));
            EXPECT_EQ(t.m_Info.GetDataType(), DataType::Signed32);
            EXPECT_EQ(t.m_Info.GetShape(), TensorShape({3}));
            EXPECT_EQ(std::memcmp(t.m_Data.data(), values.data(), data.size()), 0);
        }
    }
}

TEST_F(TensorIOTest, NpyErrorsAreParseExceptions) {
    const std::string data(24, '\0');
    auto expectError = [&](const std::string& bytes, const std::string& fragment) {
        const std::string path = WriteFile("bad.npy", bytes);
        try {
            LoadTensorFile(path);
            ADD_FAILURE() << "accepted: " << fragment;
        } catch (const ParseException& e) {
            EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
        }
    };
    const std::string good = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n";
    expectError(NpyFile(1, good, data.substr(0, 20)), "needs 24 bytes, the file has 20");
    expectError(NpyFile(1, good, data + "xx"), "needs 24 bytes, the file has 26");
    expectError(NpyFile(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }\n", data), "Fortran order");
    expectError(NpyFile(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }\n", data), "dtype '>f4'");
    expectError(NpyFile(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (2, 3), }\n", data), "dtype '<c8'");
    expectError(NpyFile(1, "{'descr': '<f4', 'shape': (2, 3), }\n", data), "required");
    expectError(NpyFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }\n", data), "bad .npy header");
    expectError(NpyFile(4, good, data), "version 4.0");
    // 2^64 elements wrap to 0 bytes in unchecked math, which an empty data section would match.
    expectError(NpyFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (65536, 65536, 65536, 65536), }\n", ""),
                "has more bytes than 64 bits can count");
    expectError(NpyFile(1, good, data).substr(0, 30), "truncated .npy header");
    expectError(std::string("\x93NUMPY", 6), "truncated");
    expectError("PK\x03\x04 definitely not numpy", "not a .npy file");
}

TEST_F(TensorIOTest, TensorProtoTypedFields) {
    struct Case {
        const char* m_Name;
        onnx::TensorProto m_Proto;
        DataType m_Type;
        std::vector<uint8_t> m_Bytes;
    };
    auto bytesOf = [](const auto& values) {
        const auto* p = reinterpret_cast<const uint8_t*>(values.data());
        return std::vector<uint8_t>(p, p + values.size() * sizeof(values[0]));
    };
    std::vector<Case> cases;
    {
        onnx::TensorProto t;
        t.set_data_type(onnx::TensorProto_DataType_FLOAT);
        t.add_dims(2);
        t.add_float_data(1.5f);
        t.add_float_data(-2.0f);
        cases.push_back({"float_data", t, DataType::Float32, bytesOf(std::vector<float>{1.5f, -2.0f})});
    }
    {
        onnx::TensorProto t;
        t.set_data_type(onnx::TensorProto_DataType_DOUBLE);
        t.add_dims(1);
        t.add_double_data(0.25);
        cases.push_back({"double_data", t, DataType::Float64, bytesOf(std::vector<double>{0.25})});
    }
    {
        onnx::TensorProto t;
        t.set_data_type(onnx::TensorProto_DataType_INT64);
        t.add_dims(2);
        t.add_int64_data(-7);
        t.add_int64_data(int64_t{1} << 40);
        cases.push_back({"int64_data", t, DataType::Signed64, bytesOf(std::vector<int64_t>{-7, int64_t{1} << 40})});
    }
    {
        onnx::TensorProto t;
        t.set_data_type(onnx::TensorProto_DataType_INT32);
        t.add_dims(1);
        t.add_int32_data(-5);
        cases.push_back({"int32_data", t, DataType::Signed32, bytesOf(std::vector<int32_t>{-5})});
    }
    {
        onnx::TensorProto t;
        t.set_data_type(onnx::TensorProto_DataType_BOOL);
        t.add_dims(3);
        for (int v : {1, 0, 1}) t.add_int32_data(v);
        cases.push_back({"bool int32_data", t, DataType::Boolean, {1, 0, 1}});
    }
    {
        onnx::TensorProto t;
        t.set_data_type(onnx::TensorProto_DataType_UINT8);
        t.add_dims(2);
        for (int v : {200, 7}) t.add_int32_data(v);
        cases.push_back({"uint8 int32_data", t, DataType::UInt8, {200, 7}});
    }
    {
        onnx::TensorProto t;
        t.set_data_type(onnx::TensorProto_DataType_FLOAT16);
        t.add_dims(2);
        for (int v : {0x3c00, 0xc000}) t.add_int32_data(v);  // 1.0, -2.0
        cases.push_back({"float16 int32_data", t, DataType::Float16, bytesOf(std::vector<uint16_t>{0x3c00, 0xc000})});
    }
    {
        // INT8, INT16 and UINT16 live in int32_data; UINT32 and UINT64 in uint64_data.
        onnx::TensorProto t;
        t.set_data_type(onnx::TensorProto_DataType_INT8);
        t.add_dims(2);
        for (int v : {-128, 5}) t.add_int32_data(v);
        cases.push_back({"int8 int32_data", t, DataType::Signed8, bytesOf(std::vector<int8_t>{-128, 5})});
    }
    {
        onnx::TensorProto t;
        t.set_data_type(onnx::TensorProto_DataType_INT16);
        t.add_dims(1);
        t.add_int32_data(-30000);
        cases.push_back({"int16 int32_data", t, DataType::Signed16, bytesOf(std::vector<int16_t>{-30000})});
    }
    {
        onnx::TensorProto t;
        t.set_data_type(onnx::TensorProto_DataType_UINT16);
        t.add_dims(1);
        t.add_int32_data(65535);
        cases.push_back({"uint16 int32_data", t, DataType::UInt16, bytesOf(std::vector<uint16_t>{65535})});
    }
    {
        onnx::TensorProto t;
        t.set_data_type(onnx::TensorProto_DataType_UINT32);
        t.add_dims(1);
        t.add_uint64_data(4000000000u);
        cases.push_back({"uint32 uint64_data", t, DataType::UInt32, bytesOf(std::vector<uint32_t>{4000000000u})});
    }
    {
        onnx::TensorProto t;
        t.set_data_type(onnx::TensorProto_DataType_UINT64);
        t.add_dims(2);
        t.add_uint64_data(~uint64_t{0});
        t.add_uint64_data(3);
        cases.push_back({"uint64 uint64_data", t, DataType::UInt64, bytesOf(std::vector<uint64_t>{~uint64_t{0}, 3})});
    }
    for (auto& c : cases) {
        SCOPED_TRACE(c.m_Name);
        c.m_Proto.set_name(c.m_Name);
        const OwnedTensor t = LoadTensorFile(WriteFile("typed.pb", c.m_Proto.SerializeAsString()));
        EXPECT_EQ(t.m_Name, c.m_Name);
        EXPECT_EQ(t.m_Info.GetDataType(), c.m_Type);
        EXPECT_EQ(t.m_Data, c.m_Bytes);
    }
}

TEST_F(TensorIOTest, TensorProtoErrorsAreParseExceptions) {
    auto expectError = [&](const std::string& bytes, const std::string& fragment) {
        const std::string path = WriteFile("bad.pb", bytes);
        try {
            LoadTensorFile(path);
            ADD_FAILURE() << "accepted: " << fragment;
        } catch (const ParseException& e) {
            EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
        }
    };
    onnx::TensorProto raw;
    raw.set_data_type(onnx::TensorProto_DataType_FLOAT);
    raw.add_dims(2);
    raw.add_dims(3);
    raw.set_raw_data(std::string(20, '\0'));
    expectError(raw.SerializeAsString(), "raw_data holds 20 bytes, expected 24");

    onnx::TensorProto typed;
    typed.set_data_type(onnx::TensorProto_DataType_INT64);
    typed.add_dims(3);
    typed.add_int64_data(1);
    expectError(typed.SerializeAsString(), "int64_data holds 1 values, expected 3");

    onnx::TensorProto complex;
    complex.set_name("complex_values");
    complex.set_data_type(onnx::TensorProto_DataType_COMPLEX64);
    complex.add_dims(1);
    complex.add_float_data(1);
    complex.add_float_data(2);
    expectError(complex.SerializeAsString(), "data type COMPLEX64 is not supported");

    // 2^63 two-bit elements: their packed size must not wrap to 0 bytes (and match an empty field).
    onnx::TensorProto huge;
    huge.set_data_type(26);  // INT2
    for (int d = 0; d < 21; ++d) huge.add_dims(8);
    huge.add_int32_data(0);
    expectError(huge.SerializeAsString(), "int32_data holds 1 values, expected 2305843009213693952");

    onnx::TensorProto good;
    good.set_data_type(onnx::TensorProto_DataType_FLOAT);
    good.add_dims(64);
    good.set_raw_data(std::string(256, '\1'));
    const std::string goodBytes = good.SerializeAsString();
    expectError(goodBytes.substr(0, goodBytes.size() - 10), "truncated");
    expectError("", "no data type");
    expectError("definitely not a tensor", "");

    std::mt19937 rng(3);
    for (int trial = 0; trial < 50; ++trial) {
        std::string garbage(32 + trial * 7, '\0');
        for (char& ch : garbage) ch = static_cast<char>(rng());
        EXPECT_THROW(LoadTensorFile(WriteFile("garbage.pb", garbage)), ParseException) << "trial " << trial;
    }
}

TEST_F(TensorIOTest, MissingFileIsFileNotFound) {
    EXPECT_THROW(LoadTensorFile(PathOf("missing.pb")), FileNotFoundException);
    EXPECT_THROW(LoadTensorFile(PathOf("missing.npy")), FileNotFoundException);
}

TEST_F(TensorIOTest, QuantizedTypesAreRefusedOnSave) {
    OwnedTensor q;
    q.m_Info = TensorInfo(TensorShape({2}), DataType::QAsymmU8, 0.5f, 3);
    q.m_Data = {1, 2};
    EXPECT_THROW(SaveTensorProto(PathOf("q.pb"), q), InvalidArgumentException);
    EXPECT_THROW(SaveNpy(PathOf("q.npy"), q), InvalidArgumentException);
    OwnedTensor wrongSize = MakeTensor("w", TensorShape({4}), DataType::Float32, 1);
    wrongSize.m_Data.pop_back();
    EXPECT_THROW(SaveTensorProto(PathOf("w.pb"), wrongSize), InvalidArgumentException);
}

}  // namespace
