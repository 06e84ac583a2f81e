#include "loader/sha256.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace etrt::loader {
namespace {

using ::testing::HasSubstr;

std::string hex_of(const std::string& s) { return sha256_hex(s.data(), s.size()); }

std::string to_hex(const std::array<uint8_t, 32>& d) {
  std::string out;
  char buf[3];
  for (uint8_t b : d) {
    std::snprintf(buf, sizeof buf, "%02x", b);
    out += buf;
  }
  return out;
}

// FIPS 180-2 appendix B / NIST CAVS example vectors.
TEST(Sha256Test, KnownAnswers) {
  EXPECT_EQ(hex_of(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex(nullptr, 0), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex_of("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hex_of("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopq"
                   "rsmnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

TEST(Sha256Test, OneMillionAInOddChunks) {
  std::string chunk(997, 'a');
  Sha256 h;
  size_t remaining = 1000000;
  size_t sizes[] = {1, 3, 63, 64, 65, 127, 997};
  for (size_t i = 0; remaining > 0; ++i) {
    size_t n = std::min(sizes[i % 7], remaining);
    h.update(chunk.data(), n);
    remaining -= n;
  }
  EXPECT_EQ(to_hex(h.finish()), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Lengths around the 55/56/64-byte padding boundaries (checked against sha256sum).
TEST(Sha256Test, PaddingBoundaries) {
  EXPECT_EQ(hex_of(std::string(55, 'a')), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(hex_of(std::string(56, 'a')), "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(hex_of(std::string(63, 'a')), "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34");
  EXPECT_EQ(hex_of(std::string(64, 'a')), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
  EXPECT_EQ(hex_of(std::string(65, 'a')), "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0");
  EXPECT_EQ(hex_of(std::string(119, 'a')), "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb");
  EXPECT_EQ(hex_of(std::string(120, 'a')), "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c");
}

TEST(Sha256Test, StreamingMatchesOneShotForEverySplit) {
  std::string data;
  for (int i = 0; i < 200; ++i) data.push_back(static_cast<char>(i * 7 + 3));
  std::string expected = hex_of(data);
  for (size_t split = 0; split <= data.size(); ++split) {
    Sha256 h;
    h.update(data.data(), split);
    h.update(data.data() + split, data.size() - split);
    EXPECT_EQ(to_hex(h.finish()), expected) << "split at " << split;
  }
}

TEST(Sha256Test, FinishResetsForReuse) {
  Sha256 h;
  h.update("xyz", 3);
  (void)h.finish();
  h.update("abc", 3);
  EXPECT_EQ(to_hex(h.finish()), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

class TempFile {
 public:
  explicit TempFile(const std::string& contents) {
    char tmpl[] = "/tmp/etrt_sha256_test_XXXXXX";
    int fd = mkstemp(tmpl);
    EXPECT_GE(fd, 0);
    path_ = tmpl;
    size_t off = 0;
    while (off < contents.size()) {
      ssize_t n = write(fd, contents.data() + off, contents.size() - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    close(fd);
  }
  ~TempFile() { unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(Sha256Test, FileHashing) {
  std::string big(300000, 'q');  // spans several read buffers
  for (size_t i = 0; i < big.size(); i += 13) big[i] = static_cast<char>(i);
  TempFile f(big);
  std::string hex, error;
  ASSERT_TRUE(sha256_file_hex(f.path(), &hex, &error)) << error;
  EXPECT_EQ(hex, hex_of(big));

  TempFile empty("");
  ASSERT_TRUE(sha256_file_hex(empty.path(), &hex, &error));
  EXPECT_EQ(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256Test, FileErrors) {
  std::string hex = "unchanged", error;
  EXPECT_FALSE(sha256_file_hex("/nonexistent/etrt/file.so", &hex, &error));
  EXPECT_EQ(error, "cannot open: No such file or directory");
  EXPECT_EQ(hex, "unchanged");

  error.clear();
  EXPECT_FALSE(sha256_file_hex("/tmp", &hex, &error));  // a directory opens but cannot be read
  EXPECT_THAT(error, HasSubstr("Is a directory"));
}

}  // namespace
}  // namespace etrt::loader
