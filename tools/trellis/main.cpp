// trellis: command-line front end of the Trellis inference engine (run, bench, inspect, compare,
// backends, onnx-test, codegen).
//
// Every exception stops here: a usage mistake prints one `error: ...` line and exits 2, any other
// failure (bad model, bad tensor file, unsupported layer, runtime error) prints one `error: ...`
// line and exits 1. Nothing is allowed to abort the process.
#include "Args.hpp"
#include "Commands.hpp"
#include "Common.hpp"

#include <cstdio>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <vector>

namespace trellis::cli {

std::string MainHelp() {
    return "Usage: trellis <command> [options]\n"
           "\n"
           "Commands:\n"
           "  run        Run a model once and print its outputs.\n"
           "  bench      Time repeated runs of a model.\n"
           "  inspect    Show a model's inputs, outputs and where each layer was placed.\n"
           "  compare    Find the first tensor where backends differ from the reference.\n"
           "  backends   List the registered backends and the dynamic-backend files found.\n"
           "  onnx-test  Run ONNX backend test cases against their expected outputs.\n"
           "  codegen    Generate C++ source (a class and a weights file) for a model.\n"
           "\n"
           "Run 'trellis <command> --help' for a command's options.\n"
           "\n"
           "Exit status: 0 on success, 1 on an error, 2 on a usage error. An error is one\n"
           "line 'error: <message>' on stderr.\n";
}

}  // namespace trellis::cli

namespace {

using namespace trellis::cli;

void PrintError(const std::string& message) {
    std::cout.flush();
    const std::string line = FoldLines(message);
    std::cerr << "error: " << (line.empty() ? std::string("unknown failure") : line) << std::endl;
}

int Dispatch(const std::vector<std::string>& args) {
    if (args.empty()) {
        throw UsageError("no command given (see 'trellis --help')");
    }
    const std::string& command = args[0];
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    if (command == "--help" || command == "-h" || command == "help") {
        std::cout << MainHelp() << RegisteredBackendsLine();
        return 0;
    }
    if (command == "run") {
        return RunCommand(rest);
    }
    if (command == "bench") {
        return BenchCommand(rest);
    }
    if (command == "inspect") {
        return InspectCommand(rest);
    }
    if (command == "compare") {
        return CompareCommand(rest);
    }
    if (command == "backends") {
        return BackendsCommand(rest);
    }
    if (command == "onnx-test") {
        return OnnxTestCommand(rest);
    }
    if (command == "codegen") {
        return CodegenCommand(rest);
    }
    if (!command.empty() && command[0] == '-') {
        throw UsageError("unknown option '" + command + "' (see 'trellis --help')");
    }
    throw UsageError("unknown command '" + command + "': commands are run, bench, inspect, compare, backends, onnx-test, codegen (see 'trellis --help')");
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return Dispatch(std::vector<std::string>(argv + 1, argv + argc));
    } catch (const UsageError& e) {
        PrintError(e.what());
        return 2;
    } catch (const std::bad_alloc&) {
        PrintError("out of memory");
        return 1;
    } catch (const std::exception& e) {
        PrintError(e.what());
        return 1;
    } catch (...) {
        PrintError("unknown failure (a non-standard exception)");
        return 1;
    }
}
