// Payload schemas. A message names its fields once; its encoder and its
// validating decoder are both derived from that list, so the two directions
// cannot disagree and no decoder is written by hand:
//
//   struct OutputAck {
//     std::uint32_t job = 0;
//     std::uint64_t bytes = 0;
//     static constexpr const char* wire_name = "output ack";
//     static auto wire_fields(auto& m) { return std::tie(m.job, m.bytes); }
//   };
//   Bytes bytes = encode(ack);
//   Result<OutputAck> back = wire_decode<OutputAck>(bytes);
//
// Field forms, all big-endian: integers at their width (signed ones as their
// two's complement), bool as one byte 0 or 1, enums at their width within
// the bounds their WireEnum specialisation gives, std::string and Bytes as a
// u32 length and the bytes (ByteView the same: decoded, it points into the
// payload, which must outlive it), std::vector as a u32 count and the items,
// std::optional as one byte 0 or 1 and the value, std::pair as both, nested
// messages as their fields, other types through a WireCodec specialisation.
// A message may add `bool wire_valid() const` for what its types cannot say.
//
// Decoding never trusts a count: a vector may not claim more items than the
// bytes left could hold, so a hostile length cannot make a daemon allocate.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "util/bytes.h"
#include "util/result.h"

namespace grove {

// Specialise with `static constexpr E first, last;`: the values a peer may send.
template <typename E>
struct WireEnum;

// Specialise for a type that is not a plain message:
//   static void put(WireWriter&, const T&);
//   static bool get(WireReader&, T&);
//   static constexpr std::size_t min_size;   // fewest bytes it can take
template <typename T>
struct WireCodec;

template <typename T>
concept WireMessage = requires(T& m, const T& c) {
  { T::wire_name } -> std::convertible_to<std::string_view>;
  T::wire_fields(m);
  T::wire_fields(c);
};

namespace wire_detail {

template <typename T>
struct is_vector : std::false_type {};
template <typename T>
struct is_vector<std::vector<T>> : std::true_type {};
template <typename T>
struct is_optional : std::false_type {};
template <typename T>
struct is_optional<std::optional<T>> : std::true_type {};
template <typename T>
struct is_pair : std::false_type {};
template <typename A, typename B>
struct is_pair<std::pair<A, B>> : std::true_type {};
template <typename T>
inline constexpr bool no_wire_form = false;

template <typename T>
concept HasCodec = requires {
  WireCodec<T>::min_size;
};

template <typename M>
using FieldTuple = decltype(M::wire_fields(std::declval<M&>()));

}  // namespace wire_detail

// The fewest bytes a value of T takes on the wire.
template <typename T>
constexpr std::size_t wire_min_size() {
  using namespace wire_detail;
  if constexpr (WireMessage<T>) {
    using Fields = FieldTuple<T>;
    return []<std::size_t... I>(std::index_sequence<I...>) {
      return (std::size_t{0} + ... +
              wire_min_size<std::remove_cvref_t<std::tuple_element_t<I, Fields>>>());
    }
    (std::make_index_sequence<std::tuple_size_v<Fields>>{});
  } else if constexpr (HasCodec<T>) {
    return WireCodec<T>::min_size;
  } else if constexpr (std::is_same_v<T, bool>) {
    return 1;
  } else if constexpr (std::is_enum_v<T> || std::is_integral_v<T>) {
    return sizeof(T);
  } else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, ByteView> ||
                       is_vector<T>::value) {
    return 4;
  } else if constexpr (is_optional<T>::value) {
    return 1;
  } else if constexpr (is_pair<T>::value) {
    return wire_min_size<typename T::first_type>() + wire_min_size<typename T::second_type>();
  } else {
    static_assert(no_wire_form<T>, "this type has no wire form");
  }
}

class WireWriter {
 public:
  WireWriter() = default;
  explicit WireWriter(ByteWriter::CountOnly count) : out_(count) {}
  explicit WireWriter(Bytes start) : out_(std::move(start)) {}

  template <typename T>
  void put(const T& value) {
    using namespace wire_detail;
    if constexpr (WireMessage<T>) {
      std::apply([this](const auto&... field) { (put(field), ...); }, T::wire_fields(value));
    } else if constexpr (HasCodec<T>) {
      WireCodec<T>::put(*this, value);
    } else if constexpr (std::is_same_v<T, bool>) {
      out_.u8(value ? 1 : 0);
    } else if constexpr (std::is_enum_v<T>) {
      put(static_cast<std::underlying_type_t<T>>(value));
    } else if constexpr (std::is_integral_v<T>) {
      put_integer(static_cast<std::make_unsigned_t<T>>(value));
    } else if constexpr (std::is_same_v<T, std::string>) {
      out_.text(value);
    } else if constexpr (std::is_same_v<T, Bytes> || std::is_same_v<T, ByteView>) {
      out_.blob(value);
    } else if constexpr (is_vector<T>::value) {
      out_.u32(static_cast<std::uint32_t>(value.size()));
      for (const auto& item : value)
        put(item);
    } else if constexpr (is_optional<T>::value) {
      out_.u8(value ? 1 : 0);
      if (value) put(*value);
    } else if constexpr (is_pair<T>::value) {
      put(value.first);
      put(value.second);
    } else {
      static_assert(no_wire_form<T>, "this type has no wire form");
    }
  }

  Bytes take() { return out_.take(); }
  std::size_t size() const { return out_.size(); }
  void reserve(std::size_t bytes) { out_.reserve(bytes); }

 private:
  template <typename U>
  void put_integer(U value) {
    if constexpr (sizeof(U) == 1) out_.u8(value);
    if constexpr (sizeof(U) == 2) out_.u16(value);
    if constexpr (sizeof(U) == 4) out_.u32(value);
    if constexpr (sizeof(U) == 8) out_.u64(value);
  }

  ByteWriter out_;
};

class WireReader {
 public:
  explicit WireReader(std::span<const std::byte> in) : in_(in) {}

  // Reads one value; false if the bytes are short or the value is not one
  // the schema allows (value is then unspecified).
  template <typename T>
  bool get(T& value) {
    using namespace wire_detail;
    if constexpr (WireMessage<T>) {
      const bool read =
          std::apply([this](auto&... field) { return (get(field) && ...); }, T::wire_fields(value));
      if constexpr (requires { value.wire_valid(); }) {
        return read && value.wire_valid();
      } else {
        return read;
      }
    } else if constexpr (HasCodec<T>) {
      return WireCodec<T>::get(*this, value);
    } else if constexpr (std::is_same_v<T, bool>) {
      auto byte = in_.u8();
      if (!byte || *byte > 1) return false;
      value = *byte == 1;
      return true;
    } else if constexpr (std::is_enum_v<T>) {
      using Raw = std::underlying_type_t<T>;
      Raw raw{};
      if (!get(raw)) return false;
      constexpr Raw first = static_cast<Raw>(WireEnum<T>::first);
      constexpr Raw last = static_cast<Raw>(WireEnum<T>::last);
      if constexpr (first > 0) {
        if (raw < first) return false;
      }
      if (raw > last) return false;
      value = static_cast<T>(raw);
      return true;
    } else if constexpr (std::is_integral_v<T>) {
      std::make_unsigned_t<T> raw{};
      if (!get_integer(raw)) return false;
      value = static_cast<T>(raw);
      return true;
    } else if constexpr (std::is_same_v<T, std::string>) {
      auto text = in_.text();
      if (!text) return false;
      value = std::move(*text);
      return true;
    } else if constexpr (std::is_same_v<T, Bytes>) {
      auto blob = in_.blob();
      if (!blob) return false;
      value.assign(blob->begin(), blob->end());
      return true;
    } else if constexpr (std::is_same_v<T, ByteView>) {
      auto blob = in_.blob();
      if (!blob) return false;
      value = *blob;
      return true;
    } else if constexpr (is_vector<T>::value) {
      using Item = typename T::value_type;
      auto count = in_.u32();
      constexpr std::size_t item_size = std::max<std::size_t>(1, wire_min_size<Item>());
      if (!count || *count > in_.remaining() / item_size) return false;
      value.clear();
      for (std::uint32_t i = 0; i < *count; ++i) {
        Item item{};
        if (!get(item)) return false;
        value.push_back(std::move(item));
      }
      return true;
    } else if constexpr (is_optional<T>::value) {
      bool present = false;
      if (!get(present)) return false;
      if (!present) {
        value.reset();
        return true;
      }
      typename T::value_type inner{};
      if (!get(inner)) return false;
      value = std::move(inner);
      return true;
    } else if constexpr (is_pair<T>::value) {
      return get(value.first) && get(value.second);
    } else {
      static_assert(no_wire_form<T>, "this type has no wire form");
    }
  }

  bool done() const { return in_.done(); }

 private:
  template <typename U>
  bool get_integer(U& value) {
    std::optional<U> read;
    if constexpr (sizeof(U) == 1) read = in_.u8();
    if constexpr (sizeof(U) == 2) read = in_.u16();
    if constexpr (sizeof(U) == 4) read = in_.u32();
    if constexpr (sizeof(U) == 8) read = in_.u64();
    if (!read) return false;
    value = *read;
    return true;
  }

  ByteReader in_;
};

template <WireMessage M>
Bytes encode(const M& message) {
  // Measured first: one allocation of the exact size (a rollup grew through
  // five as its buffer doubled).
  WireWriter measure{ByteWriter::CountOnly{}};
  measure.put(message);
  WireWriter writer;
  writer.reserve(measure.size());
  writer.put(message);
  return writer.take();
}

// The whole payload as an M, or "malformed <wire_name> payload".
template <WireMessage M>
Result<M> wire_decode(std::span<const std::byte> payload) {
  WireReader reader(payload);
  M message{};
  if (!reader.get(message) || !reader.done()) return malformed_payload<M>(M::wire_name);
  return message;
}

// Only the first N fields of M, the rest of the payload left unread: a
// header for a reader that must not pay for a bulky tail. wire_valid is not
// applied (it may speak of fields not read).
template <WireMessage M, std::size_t N>
Result<M> wire_decode_leading(std::span<const std::byte> payload) {
  WireReader reader(payload);
  M message{};
  auto fields = M::wire_fields(message);
  static_assert(N <= std::tuple_size_v<decltype(fields)>);
  const bool read = [&]<std::size_t... I>(std::index_sequence<I...>) {
    return (reader.get(std::get<I>(fields)) && ...);
  }
  (std::make_index_sequence<N>{});
  if (!read) return malformed_payload<M>(M::wire_name);
  return message;
}

}  // namespace grove
