// Generates RSA test keys with OpenSSL at test time and shares them as PEM files (see the header).
#include "support/test_keys.hpp"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>

namespace seatflow::testing {
namespace {

namespace fs = std::filesystem;

// The process's temporary folder; removed (with everything in it) at exit.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = (base != nullptr && *base != '\0') ? base : "/tmp";
    pattern += "/seatflow-testfiles-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("cannot create a temporary folder for tests");
    }
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TempDir& temp_dir() {
  static TempDir dir;
  return dir;
}

// "<folder of the test binary>/test-keys", private to the owner.
fs::path key_dir() {
  std::error_code error;
  const auto exe = fs::read_symlink("/proc/self/exe", error);
  const fs::path dir =
      error ? fs::path(temp_dir().path()) / "test-keys" : exe.parent_path() / "test-keys";
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace);
  return dir;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) {
    throw std::runtime_error("cannot read " + path.string());
  }
  return text.str();
}

// Puts `content` at `path` unless a file is already there: written to a unique temporary name,
// then link()ed, which is atomic and fails when the name exists — the first writer wins and no
// reader ever sees half a file. Returns what is at `path` afterwards.
std::string publish_once(const fs::path& path, const std::string& content) {
  if (!fs::exists(path)) {
    const auto temp = path.string() + ".tmp." + std::to_string(getpid());
    {
      std::ofstream out(temp, std::ios::binary | std::ios::trunc);
      out << content;
      if (!out.flush()) {
        throw std::runtime_error("cannot write " + temp);
      }
    }
    ::chmod(temp.c_str(), S_IRUSR | S_IWUSR);
    if (::link(temp.c_str(), path.c_str()) != 0 && errno != EEXIST) {
      throw std::runtime_error("cannot create " + path.string());
    }
    std::error_code ignored;
    fs::remove(temp, ignored);
  }
  return read_file(path);
}

using BioPtr = std::unique_ptr<BIO, decltype(&BIO_free)>;

std::string bio_text(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<std::size_t>(size));
}

std::string generate_private_pem(int bits) {
  const std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      EVP_RSA_gen(static_cast<unsigned int>(bits)), &EVP_PKEY_free);
  const BioPtr bio(BIO_new(BIO_s_mem()), &BIO_free);
  if (!key ||
      PEM_write_bio_PrivateKey(bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    throw std::runtime_error("RSA test key generation failed");
  }
  return bio_text(bio.get());
}

TestKeyPair load_or_generate(const std::string& name, int bits) {
  const auto dir = key_dir();
  const auto stem = name + "-" + std::to_string(bits);
  const auto private_path = dir / (stem + "-private.pem");
  std::string private_pem = fs::exists(private_path) ? read_file(private_path) : std::string();
  if (private_pem.empty()) {
    private_pem = publish_once(private_path, generate_private_pem(bits));
  }
  const BioPtr in(BIO_new_mem_buf(private_pem.data(), static_cast<int>(private_pem.size())),
                  &BIO_free);
  EVP_PKEY* raw = PEM_read_bio_PrivateKey(in.get(), nullptr, nullptr, nullptr);
  if (raw == nullptr) {
    throw std::runtime_error("unreadable test key " + private_path.string());
  }
  TestKeyPair pair;
  pair.private_key = codec::SharedKey(raw, [](EVP_PKEY* k) { EVP_PKEY_free(k); });
  const BioPtr out(BIO_new(BIO_s_mem()), &BIO_free);
  if (PEM_write_bio_PUBKEY(out.get(), raw) != 1) {
    throw std::runtime_error("cannot write a PEM public key");
  }
  // Every process derives the same public PEM from the same private key, so a race is harmless.
  pair.public_pem = publish_once(dir / (stem + "-public.pem"), bio_text(out.get()));
  auto loaded = codec::public_key_from_pem(pair.public_pem);
  if (bits >= codec::kMinRsaBits && !loaded.ok()) {
    throw std::runtime_error("test public key does not load: " + loaded.detail());
  }
  // A key under kMinRsaBits is refused: it stays null, for the tests of that refusal.
  pair.public_key = loaded.ok() ? std::move(loaded).value() : nullptr;
  pair.public_pem_path = (dir / (stem + "-public.pem")).string();
  pair.private_pem_path = private_path.string();
  return pair;
}

}  // namespace

const TestKeyPair& test_key(const std::string& name, int bits) {
  static std::mutex mutex;
  static std::map<std::string, TestKeyPair> keys;
  const std::lock_guard lock(mutex);
  const auto id = name + "/" + std::to_string(bits);
  auto it = keys.find(id);
  if (it == keys.end()) {
    it = keys.emplace(id, load_or_generate(name, bits)).first;
  }
  return it->second;
}

std::string write_temp_file(const std::string& name, const std::string& content) {
  const std::string path = temp_dir().path() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  out.close();
  if (!out) {
    throw std::runtime_error("cannot write " + path);
  }
  return path;
}

}  // namespace seatflow::testing
