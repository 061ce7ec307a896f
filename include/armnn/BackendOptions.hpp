// Arm NN compatibility layer: BackendOptions, named options for one backend. IRuntime passes them
// to Trellis as IRuntime::CreationOptions::m_BackendOptions (each value as text: "true",
// "4", "0.5", ...); OptimizerOptionsOpaque::AddModelOption keeps them for the caller (Trellis's
// Optimize takes no backend options: see docs/armnn-compat.md). Value types.
#pragma once

#include <armnn/Types.hpp>

#include <initializer_list>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace armnn {

class BackendOptions {
public:
    /// One value: bool, int, unsigned int, float or string.
    class Var {
    public:
        Var(bool v) : m_Value(v) {}                          // NOLINT: implicit as in Arm NN
        Var(int v) : m_Value(v) {}                           // NOLINT
        Var(unsigned int v) : m_Value(v) {}                  // NOLINT
        Var(float v) : m_Value(v) {}                         // NOLINT
        Var(const char* v) : m_Value(std::string(v)) {}      // NOLINT
        Var(std::string v) : m_Value(std::move(v)) {}        // NOLINT
        bool IsBool() const { return std::holds_alternative<bool>(m_Value); }
        bool IsInt() const { return std::holds_alternative<int>(m_Value); }
        bool IsUnsignedInt() const { return std::holds_alternative<unsigned int>(m_Value); }
        bool IsFloat() const { return std::holds_alternative<float>(m_Value); }
        bool IsString() const { return std::holds_alternative<std::string>(m_Value); }
        /// The As* accessors throw InvalidArgumentException naming both types on a wrong type.
        bool AsBool() const { return Get<bool>("bool"); }
        int AsInt() const { return Get<int>("int"); }
        unsigned int AsUnsignedInt() const { return Get<unsigned int>("unsigned int"); }
        float AsFloat() const { return Get<float>("float"); }
        std::string AsString() const { return Get<std::string>("string"); }
        /// The value as text ("true", "4", "0.5", the string itself).
        std::string ToString() const;
    private:
        template <typename T>
        T Get(const char* wanted) const {
            if (const T* v = std::get_if<T>(&m_Value)) return *v;
            ThrowWrongType(wanted);
        }
        [[noreturn]] void ThrowWrongType(const char* wanted) const;
        std::variant<bool, int, unsigned int, float, std::string> m_Value;
    };

    class BackendOption {
    public:
        BackendOption(std::string name, Var value) : m_Name(std::move(name)), m_Value(std::move(value)) {}
        const std::string& GetName() const { return m_Name; }
        const Var& GetValue() const { return m_Value; }
    private:
        std::string m_Name;
        Var m_Value;
    };

    explicit BackendOptions(BackendId backend) : m_TargetBackend(std::move(backend)) {}
    BackendOptions(BackendId backend, std::initializer_list<BackendOption> options)
        : m_TargetBackend(std::move(backend)), m_Options(options) {}
    void AddOption(BackendOption&& option) { m_Options.push_back(std::move(option)); }
    void AddOption(const BackendOption& option) { m_Options.push_back(option); }
    const BackendId& GetBackendId() const { return m_TargetBackend; }
    size_t GetOptionCount() const noexcept { return m_Options.size(); }
    const BackendOption& GetOption(size_t idx) const { return m_Options.at(idx); }
private:
    BackendId m_TargetBackend;
    std::vector<BackendOption> m_Options;
};

using NetworkOptions = std::vector<BackendOptions>;
using ModelOptions = std::vector<BackendOptions>;

}  // namespace armnn
