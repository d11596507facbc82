#include "src/api/auth/oidc/jwks_source.h"

#include <curl/curl.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace regatta::auth::oidc {
namespace {

class FileJwksSource final : public JwksSource {
 public:
  explicit FileJwksSource(std::string path) : path_(std::move(path)) {}
  const std::string& Describe() const override { return path_; }

  absl::StatusOr<std::optional<std::string>> Fetch() override {
    struct stat st;
    if (stat(path_.c_str(), &st) != 0) {
      return absl::NotFoundError(absl::StrCat("JWKS file ", path_, ": cannot stat"));
    }
    const Version version{st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec, st.st_ino};
    if (loaded_ && version == version_) return std::nullopt;
    if (static_cast<size_t>(st.st_size) > kMaxJwksBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("JWKS file ", path_, ": larger than ", kMaxJwksBytes, " bytes"));
    }
    std::ifstream in(path_, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) return absl::NotFoundError(absl::StrCat("JWKS file ", path_, ": cannot read"));
    loaded_ = true;
    version_ = version;
    return text.str();
  }

 private:
  struct Version {
    off_t size;
    time_t mtime_sec;
    long mtime_nsec;
    ino_t inode;  // a replaced file (atomic rename, Kubernetes secret update) is a new inode
    bool operator==(const Version&) const = default;
  };
  std::string path_;
  bool loaded_ = false;
  Version version_{};
};

size_t AppendBody(char* data, size_t size, size_t count, void* user) {
  auto* body = static_cast<std::string*>(user);
  const size_t bytes = size * count;
  if (body->size() + bytes > kMaxJwksBytes) return 0;  // aborts the transfer
  body->append(data, bytes);
  return bytes;
}

class UrlJwksSource final : public JwksSource {
 public:
  UrlJwksSource(std::string url, UrlSourceOptions options)
      : url_(std::move(url)), options_(std::move(options)) {
    static const CURLcode init = curl_global_init(CURL_GLOBAL_DEFAULT);
    (void)init;
  }
  const std::string& Describe() const override { return url_; }

  absl::StatusOr<std::optional<std::string>> Fetch() override {
    CURL* curl = curl_easy_init();
    if (curl == nullptr) return absl::InternalError("JWKS: curl_easy_init failed");
    std::string body;
    char error[CURL_ERROR_SIZE] = {0};
    curl_easy_setopt(curl, CURLOPT_URL, url_.c_str());
    curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);  // many threads; no SIGALRM for DNS timeouts
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS,
                     static_cast<long>(absl::ToInt64Milliseconds(options_.timeout)));
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, AppendBody);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
    if (!options_.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, options_.ca_file.c_str());
    const CURLcode code = curl_easy_perform(curl);
    long status = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(curl);
    if (code == CURLE_WRITE_ERROR) {
      return absl::UnavailableError(
          absl::StrCat("JWKS ", url_, ": larger than ", kMaxJwksBytes, " bytes"));
    }
    if (code != CURLE_OK) {
      return absl::UnavailableError(
          absl::StrCat("JWKS ", url_, ": ", error[0] != '\0' ? error : curl_easy_strerror(code)));
    }
    if (status != 200) {
      return absl::UnavailableError(absl::StrCat("JWKS ", url_, ": HTTP status ", status));
    }
    return body;
  }

 private:
  std::string url_;
  UrlSourceOptions options_;
};

}  // namespace

std::unique_ptr<JwksSource> NewFileJwksSource(std::string path) {
  return std::make_unique<FileJwksSource>(std::move(path));
}

std::unique_ptr<JwksSource> NewUrlJwksSource(std::string url, UrlSourceOptions options) {
  return std::make_unique<UrlJwksSource>(std::move(url), std::move(options));
}

}  // namespace regatta::auth::oidc
