// Arm NN compatibility layer: armnn::Optional, the optional value and optional reference that Arm
// NN's API passes for "no biases", "no reason wanted" and "no messages wanted".
//
// Optional<T> holds a T or nothing; Optional<T&> refers to a T the caller owns, or to nothing.
// Both convert from EmptyOptional() and from a value (a reference for Optional<T&>).
// value() on an empty optional throws armnn::BadOptionalAccessException naming the type.
// Value types; not synchronized.
#pragma once

#include <trellis/Exceptions.hpp>

#include <optional>
#include <string>
#include <typeinfo>
#include <utility>

namespace armnn {

/// Thrown by Optional::value() when the optional holds nothing.
class BadOptionalAccessException : public trellis::Exception {
    using trellis::Exception::Exception;
};

/// The "nothing" that every Optional converts from.
struct EmptyOptional {};

template <typename T>
class Optional {
public:
    Optional() = default;
    Optional(EmptyOptional) {}                                         // NOLINT: implicit as in Arm NN
    Optional(const T& value) : m_Value(value) {}                       // NOLINT
    Optional(T&& value) : m_Value(std::move(value)) {}                 // NOLINT
    template <typename... Args>
    explicit Optional(std::in_place_t, Args&&... args) : m_Value(std::in_place, std::forward<Args>(args)...) {}

    bool has_value() const noexcept { return m_Value.has_value(); }
    explicit operator bool() const noexcept { return has_value(); }
    T& value() {
        Check();
        return *m_Value;
    }
    const T& value() const {
        Check();
        return *m_Value;
    }
    void reset() { m_Value.reset(); }
    bool operator==(const Optional& o) const { return m_Value == o.m_Value; }

private:
    void Check() const {
        if (!m_Value) throw BadOptionalAccessException(std::string("armnn::Optional<") + typeid(T).name() +
                                                       ">::value(): the optional is empty");
    }
    std::optional<T> m_Value;
};

/// Optional reference: the form Arm NN uses for out-parameters such as
/// `Optional<std::string&> reasonIfUnsupported` and `Optional<std::vector<std::string>&> messages`.
template <typename T>
class Optional<T&> {
public:
    Optional() = default;
    Optional(EmptyOptional) {}               // NOLINT: implicit as in Arm NN
    Optional(T& value) : m_Ptr(&value) {}    // NOLINT

    bool has_value() const noexcept { return m_Ptr != nullptr; }
    explicit operator bool() const noexcept { return has_value(); }
    T& value() const {
        if (!m_Ptr) throw BadOptionalAccessException(std::string("armnn::Optional<") + typeid(T).name() +
                                                     "&>::value(): the optional is empty");
        return *m_Ptr;
    }
    void reset() { m_Ptr = nullptr; }

private:
    T* m_Ptr = nullptr;
};

template <typename T, typename... Args>
Optional<T> MakeOptional(Args&&... args) {
    return Optional<T>(std::in_place, std::forward<Args>(args)...);
}

}  // namespace armnn
