// SHA-256 (FIPS 180-4), for content-addressed compile keys.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace kt {

class Sha256 {
 public:
  Sha256();
  // Appends bytes. Fields of a composite key should be separated with update_field() so
  // that ("ab","c") and ("a","bc") hash differently.
  void update(std::string_view bytes);
  void update_field(std::string_view field);  // length-prefixed
  std::array<std::uint8_t, 32> digest();      // finishes; the object is spent afterwards
  std::string hex_digest();

 private:
  void compress(const std::uint8_t* block);
  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> buffer_;
  std::uint64_t total_bytes_ = 0;
  std::size_t buffered_ = 0;
};

std::string sha256_hex(std::string_view bytes);

}  // namespace kt
