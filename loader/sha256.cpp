#include "loader/sha256.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace etrt::loader {
namespace {

// FIPS 180-4 section 4.2.2: first 32 bits of the fractional parts of the cube
// roots of the first 64 primes.
constexpr uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

// Section 5.3.3: first 32 bits of the fractional parts of the square roots of
// the first 8 primes.
constexpr uint32_t kInitial[8] = {
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

constexpr uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

#if defined(__x86_64__)
// The SHA extensions (CPUID leaf 7, EBX bit 29) make hashing a plugin file
// roughly ten times faster, which is start-up time for every process.
bool has_sha_extensions() {
  // ETRT_DISABLE_SHA_NI=1 forces the portable path (tests run both).
  if (const char* off = secure_getenv("ETRT_DISABLE_SHA_NI"); off != nullptr && *off == '1') return false;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  return (ebx >> 29) & 1;
}

// Sixteen groups of four rounds; W[0..3] hold the message schedule, rotating.
__attribute__((target("sha,sse4.1,ssse3"))) void compress_sha_ni(uint32_t state[8], const uint8_t* data,
                                                                 size_t blocks) {
  const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i abcd = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state));
  __m128i efgh = _mm_loadu_si128(reinterpret_cast<const __m128i*>(state + 4));
  // The instructions want the state as (A, B, E, F) and (C, D, G, H).
  __m128i cdab = _mm_shuffle_epi32(abcd, 0xB1);
  __m128i hgfe = _mm_shuffle_epi32(efgh, 0x1B);
  __m128i state0 = _mm_alignr_epi8(cdab, hgfe, 8);
  __m128i state1 = _mm_blend_epi16(hgfe, cdab, 0xF0);
  for (; blocks > 0; --blocks, data += 64) {
    const __m128i save0 = state0, save1 = state1;
    __m128i w[4];
    for (int g = 0; g < 16; ++g) {
      if (g < 4) w[g] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(data + 16 * g)), byte_swap);
      __m128i msg = _mm_add_epi32(w[g % 4], _mm_loadu_si128(reinterpret_cast<const __m128i*>(kRound + 4 * g)));
      state1 = _mm_sha256rnds2_epu32(state1, state0, msg);
      if (g >= 3 && g <= 14) {
        __m128i carry = _mm_alignr_epi8(w[g % 4], w[(g + 3) % 4], 4);
        w[(g + 1) % 4] = _mm_sha256msg2_epu32(_mm_add_epi32(w[(g + 1) % 4], carry), w[g % 4]);
      }
      state0 = _mm_sha256rnds2_epu32(state0, state1, _mm_shuffle_epi32(msg, 0x0E));
      if (g >= 1 && g <= 12) w[(g + 3) % 4] = _mm_sha256msg1_epu32(w[(g + 3) % 4], w[g % 4]);
    }
    state0 = _mm_add_epi32(state0, save0);
    state1 = _mm_add_epi32(state1, save1);
  }
  __m128i feba = _mm_shuffle_epi32(state0, 0x1B);
  __m128i dchg = _mm_shuffle_epi32(state1, 0xB1);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state), _mm_blend_epi16(feba, dchg, 0xF0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(state + 4), _mm_alignr_epi8(dchg, feba, 8));
}
#endif

}  // namespace

Sha256::Sha256() { reset(); }

void Sha256::reset() {
  std::memcpy(state_, kInitial, sizeof state_);
  buffered_ = 0;
  total_bytes_ = 0;
}

// Section 6.2.2.
void Sha256::compress(const uint8_t* block) {
  uint32_t w[64];
  for (int t = 0; t < 16; ++t) {
    w[t] = (uint32_t{block[4 * t]} << 24) | (uint32_t{block[4 * t + 1]} << 16) |
           (uint32_t{block[4 * t + 2]} << 8) | uint32_t{block[4 * t + 3]};
  }
  for (int t = 16; t < 64; ++t) {
    uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
    uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
    w[t] = w[t - 16] + s0 + w[t - 7] + s1;
  }
  uint32_t a = state_[0], b = state_[1], c = state_[2], d = state_[3];
  uint32_t e = state_[4], f = state_[5], g = state_[6], h = state_[7];
  for (int t = 0; t < 64; ++t) {
    uint32_t sigma1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
    uint32_t ch = (e & f) ^ (~e & g);
    uint32_t t1 = h + sigma1 + ch + kRound[t] + w[t];
    uint32_t sigma0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
    uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
    uint32_t t2 = sigma0 + maj;
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  state_[0] += a;
  state_[1] += b;
  state_[2] += c;
  state_[3] += d;
  state_[4] += e;
  state_[5] += f;
  state_[6] += g;
  state_[7] += h;
}

void Sha256::compress_blocks(const uint8_t* data, size_t blocks) {
#if defined(__x86_64__)
  static const bool accelerated = has_sha_extensions();
  if (accelerated) {
    compress_sha_ni(state_, data, blocks);
    return;
  }
#endif
  for (; blocks > 0; --blocks, data += 64) compress(data);
}

void Sha256::update(const void* data, size_t size) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  total_bytes_ += size;
  if (buffered_ > 0) {
    size_t take = std::min(size, sizeof buffer_ - buffered_);
    std::memcpy(buffer_ + buffered_, p, take);
    buffered_ += take;
    p += take;
    size -= take;
    if (buffered_ < sizeof buffer_) return;
    compress_blocks(buffer_, 1);
    buffered_ = 0;
  }
  size_t blocks = size / 64;
  compress_blocks(p, blocks);
  p += blocks * 64;
  size -= blocks * 64;
  if (size > 0) {
    std::memcpy(buffer_, p, size);
    buffered_ = size;
  }
}

// Section 5.1.1 padding: 0x80, zeros, then the bit length big-endian.
std::array<uint8_t, 32> Sha256::finish() {
  uint64_t bit_length = total_bytes_ * 8;
  uint8_t pad[72] = {0x80};
  size_t pad_len = (buffered_ < 56) ? 56 - buffered_ : 120 - buffered_;
  for (int i = 0; i < 8; ++i) pad[pad_len + i] = static_cast<uint8_t>(bit_length >> (56 - 8 * i));
  update(pad, pad_len + 8);
  std::array<uint8_t, 32> digest;
  for (int i = 0; i < 8; ++i) {
    digest[4 * i] = static_cast<uint8_t>(state_[i] >> 24);
    digest[4 * i + 1] = static_cast<uint8_t>(state_[i] >> 16);
    digest[4 * i + 2] = static_cast<uint8_t>(state_[i] >> 8);
    digest[4 * i + 3] = static_cast<uint8_t>(state_[i]);
  }
  reset();
  return digest;
}

namespace {

std::string to_hex(const std::array<uint8_t, 32>& digest) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex(64, '0');
  for (size_t i = 0; i < digest.size(); ++i) {
    hex[2 * i] = kDigits[digest[i] >> 4];
    hex[2 * i + 1] = kDigits[digest[i] & 0xF];
  }
  return hex;
}

}  // namespace

std::string sha256_hex(const void* data, size_t size) {
  Sha256 h;
  h.update(data, size);
  return to_hex(h.finish());
}

bool sha256_file_hex(const std::string& path, std::string* hex, std::string* error) {
  try {
    // O_NONBLOCK: a FIFO must not block the open; S_ISREG then refuses it.
    int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
      if (error) *error = std::string("cannot open: ") + std::strerror(errno);
      return false;
    }
    struct stat st;
    if (::fstat(fd, &st) != 0) st.st_mode = 0;
    if (!S_ISREG(st.st_mode)) {
      ::close(fd);
      if (error) *error = S_ISDIR(st.st_mode) ? std::string("cannot read: ") + std::strerror(EISDIR) : "not a regular file";
      return false;
    }
    Sha256 h;
    uint8_t buf[64 * 1024];
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0) {
        if (errno == EINTR) continue;
        int saved = errno;
        ::close(fd);
        if (error) *error = std::string("cannot read: ") + std::strerror(saved);
        return false;
      }
      if (n == 0) break;
      h.update(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    if (hex) *hex = to_hex(h.finish());
    return true;
  } catch (...) {
    // Only std::string allocation can throw; the message may fail as well.
    try {
      if (error) *error = "out of memory";
    } catch (...) {
    }
    return false;
  }
}

}  // namespace etrt::loader
