// Internal: the ONNX protobuf classes (Debian's libonnx, generated with ONNX_ML=1, namespace onnx).
// Only the files of the ONNX importer and TensorIO include this; public headers never do.
#pragma once

// The onnx_proto CMake target defines both; the fallbacks let a file be checked on its own.
#ifndef ONNX_ML
#define ONNX_ML 1
#endif
#ifndef ONNX_NAMESPACE
#define ONNX_NAMESPACE onnx
#endif
#include <onnx/onnx_pb.h>
