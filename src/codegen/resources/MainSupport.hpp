// Artifact support code for the self-test program <Name>_main (trellis codegen --with-main):
// command-line parsing and NumPy .npy reading and writing. Emitted verbatim into <Name>_main.cpp
// (the same rules as the kernel snippets: see src/backends/reference/kernels/KernelSnippets.md).
//
//   <Name>_main --input NAME=FILE.npy ... --output-dir DIR [--params FILE]
// reads every input from its .npy file (C order; the dtype and shape must be the input's), runs one
// inference and writes output NAME as DIR/NAME.npy (DIR is created if missing). --params defaults to <Name>.params in the
// program's own directory. Exit status: 0 on success, 1 on an error, 2 on a usage error; an error
// is one line "error: ..." on stderr.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace trellis::artifact {

/// A mistake on the command line (exit status 2).
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct MainArgs {
    std::vector<std::pair<std::string, std::string>> inputs;  ///< (name, file)
    std::string outputDir;
    std::string params;
};

inline MainArgs ParseMainArgs(int argc, char** argv, const std::string& paramsFile, const std::vector<std::string>& inputNames) {
    MainArgs args;
    const std::string program = argc > 0 ? argv[0] : "main";
    const auto slash = program.rfind('/');
    args.params = slash == std::string::npos ? paramsFile : program.substr(0, slash + 1) + paramsFile;
    for (int i = 1; i < argc; ++i) {
        const std::string word = argv[i];
        const auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw UsageError("option '" + word + "' needs a value");
            return argv[++i];
        };
        if (word == "--input") {
            const std::string v = value();
            const auto eq = v.rfind('=');
            if (eq == std::string::npos || eq == 0 || eq + 1 == v.size()) {
                throw UsageError("option '--input' expects NAME=FILE.npy, got '" + v + "'");
            }
            const std::string name = v.substr(0, eq);
            bool known = false;
            for (const std::string& n : inputNames) known = known || n == name;
            if (!known) {
                std::string list;
                for (const std::string& n : inputNames) list += (list.empty() ? "" : ", ") + n;
                throw UsageError("'" + name + "' is not an input of the network (inputs: " + list + ")");
            }
            for (const auto& given : args.inputs) {
                if (given.first == name) throw UsageError("input '" + name + "' given twice");
            }
            args.inputs.emplace_back(name, v.substr(eq + 1));
        } else if (word == "--output-dir") {
            args.outputDir = value();
        } else if (word == "--params") {
            args.params = value();
        } else {
            throw UsageError("unknown option '" + word +
                             "' (usage: --input NAME=FILE.npy ... --output-dir DIR [--params FILE])");
        }
    }
    for (const std::string& n : inputNames) {
        bool given = false;
        for (const auto& in : args.inputs) given = given || in.first == n;
        if (!given) throw UsageError("input '" + n + "' not given (--input " + n + "=FILE.npy)");
    }
    if (args.outputDir.empty()) throw UsageError("--output-dir DIR not given");
    return args;
}

/// The .npy dtype of an artifact tensor type ("float32" -> "<f4").
inline std::string NpyDescr(const std::string& type) {
    if (type == "float32") return "<f4";
    if (type == "float64") return "<f8";
    if (type == "int8") return "|i1";
    if (type == "int16") return "<i2";
    if (type == "int32") return "<i4";
    if (type == "int64") return "<i8";
    if (type == "uint8") return "|u1";
    if (type == "uint16") return "<u2";
    if (type == "uint32") return "<u4";
    if (type == "uint64") return "<u8";
    if (type == "bool") return "|b1";
    throw std::runtime_error("no .npy dtype for tensor type " + type);
}

inline std::size_t NpyElementBytes(const std::string& descr) {
    return static_cast<std::size_t>(std::stoul(descr.substr(2)));
}

inline std::string ShapeText(const std::vector<std::size_t>& shape) {
    std::string s = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + (shape.size() == 1 ? ",)" : ")");
}

/// Reads `path` into tensor `t` (input `name`): the file's dtype and shape must be the tensor's.
template <typename Tensor>
void ReadNpy(const std::string& path, const std::string& name, Tensor& t) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("input '" + name + "': cannot open '" + path + "'");
    char magic[8];
    if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) {
        throw std::runtime_error("input '" + name + "': '" + path + "' is not a .npy file");
    }
    std::size_t headerBytes = 0;
    unsigned char len[4] = {0, 0, 0, 0};
    if (magic[6] == 1) {
        in.read(reinterpret_cast<char*>(len), 2);
        headerBytes = len[0] | (len[1] << 8);
    } else {
        in.read(reinterpret_cast<char*>(len), 4);
        headerBytes = len[0] | (len[1] << 8) | (len[2] << 16) | (static_cast<std::size_t>(len[3]) << 24);
    }
    std::string header(headerBytes, '\0');
    if (!in.read(&header[0], static_cast<std::streamsize>(headerBytes))) {
        throw std::runtime_error("input '" + name + "': '" + path + "' is truncated");
    }
    const auto field = [&](const std::string& key) {
        const auto at = header.find("'" + key + "'");
        if (at == std::string::npos) throw std::runtime_error("input '" + name + "': '" + path + "' has no " + key);
        return header.substr(header.find(':', at) + 1);
    };
    std::string descr = field("descr");
    descr = descr.substr(descr.find('\'') + 1);
    descr = descr.substr(0, descr.find('\''));
    if (field("fortran_order").find("True") < field("fortran_order").find(',')) {
        throw std::runtime_error("input '" + name + "': '" + path + "' is in Fortran order; save it in C order");
    }
    std::string shapeText = field("shape");
    shapeText = shapeText.substr(shapeText.find('(') + 1, shapeText.find(')') - shapeText.find('(') - 1);
    std::vector<std::size_t> shape;
    for (std::size_t p = 0; p < shapeText.size();) {
        const auto comma = shapeText.find(',', p);
        const std::string dim = shapeText.substr(p, comma == std::string::npos ? std::string::npos : comma - p);
        if (dim.find_first_of("0123456789") != std::string::npos) shape.push_back(static_cast<std::size_t>(std::stoull(dim)));
        if (comma == std::string::npos) break;
        p = comma + 1;
    }
    const std::vector<std::size_t> want(t.shape, t.shape + t.rank);
    std::string wantDescr = NpyDescr(t.type);
    // '=' (native) and '<' are the same on the little-endian machines artifacts run on.
    if (!descr.empty() && descr[0] == '=') descr[0] = '<';
    if (descr != wantDescr || shape != want) {
        throw std::runtime_error("input '" + name + "' from '" + path + "': expected " + wantDescr + " " + ShapeText(want) +
                                 ", got " + descr + " " + ShapeText(shape));
    }
    const std::size_t bytes = t.size * NpyElementBytes(descr);
    if (!in.read(static_cast<char*>(t.data), static_cast<std::streamsize>(bytes))) {
        throw std::runtime_error("input '" + name + "': '" + path + "' is truncated");
    }
}

/// Writes tensor `t` as a .npy file.
template <typename Tensor>
void WriteNpy(const std::string& path, const Tensor& t) {
    const std::vector<std::size_t> shape(t.shape, t.shape + t.rank);
    std::string header = "{'descr': '" + NpyDescr(t.type) + "', 'fortran_order': False, 'shape': " + ShapeText(shape) + ", }";
    // Magic, version, length and header padded with spaces and a newline to a multiple of 64 bytes.
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::ofstream out(path, std::ios::binary);
    if (!out) throw std::runtime_error("cannot write '" + path + "'");
    const unsigned char prefix[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<unsigned char>(header.size() & 0xff),
                                      static_cast<unsigned char>(header.size() >> 8)};
    out.write(reinterpret_cast<const char*>(prefix), 10);
    out << header;
    out.write(static_cast<const char*>(t.data), static_cast<std::streamsize>(t.size * NpyElementBytes(NpyDescr(t.type))));
    if (!out) throw std::runtime_error("cannot write '" + path + "'");
}

template <typename Tensor>
void ReadInput(const MainArgs& args, const std::string& name, Tensor& t) {
    for (const auto& in : args.inputs) {
        if (in.first == name) ReadNpy(in.second, name, t);
    }
}

/// Writes output `name` as <output dir>/<name>.npy ('/' in the name becomes '_'), creating the
/// directory if missing.
template <typename Tensor>
void WriteOutput(const MainArgs& args, const std::string& name, const Tensor& t) {
    std::error_code ec;
    std::filesystem::create_directories(args.outputDir, ec);
    std::string file = name;
    for (char& c : file) {
        if (c == '/') c = '_';
    }
    WriteNpy(args.outputDir + "/" + file + ".npy", t);
}

/// Parses the command line and calls run(args); returns the exit status.
inline int RunMain(int argc, char** argv, const std::string& paramsFile, const std::vector<std::string>& inputNames,
                   void (*run)(const MainArgs&)) {
    try {
        run(ParseMainArgs(argc, argv, paramsFile, inputNames));
        return 0;
    } catch (const UsageError& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}

}  // namespace trellis::artifact
