#include "src/common/config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "src/common/bounded_parse.h"
#include "src/common/status_macros.h"

extern char** environ;

namespace regatta {
namespace {

std::string SnakeUpper(absl::string_view camel) {
  std::string out;
  for (char c : camel) {
    if (absl::ascii_isupper(c) && !out.empty()) out.push_back('_');
    out.push_back(absl::ascii_toupper(c));
  }
  return out;
}

// True if `path` or one of its prefixes matches one of the open-map patterns ("*" matches any
// one segment): everything inside an open map is the operator's, checked by the caller.
bool IsOpenMap(const std::string& path, const std::vector<std::string>& open_maps) {
  std::vector<absl::string_view> segments = absl::StrSplit(path, '.');
  for (const std::string& pattern : open_maps) {
    std::vector<absl::string_view> want = absl::StrSplit(pattern, '.');
    if (want.size() > segments.size()) continue;
    bool match = true;
    for (size_t i = 0; i < want.size() && match; ++i) {
      match = want[i] == "*" || want[i] == segments[i];
    }
    if (match) return true;
  }
  return false;
}

// Merges `overlay` into `base` (maps recursively; anything else replaces). Keys missing from
// `base` are errors naming them, except in open maps, which take new keys as given.
absl::Status Merge(YAML::Node base, const YAML::Node& overlay, const std::string& path,
                   const std::vector<std::string>& open_maps) {
  if (!overlay.IsMap()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path.empty() ? "config" : path, ": expected a mapping"));
  }
  for (const auto& kv : overlay) {
    std::string key = kv.first.as<std::string>();
    std::string child_path = path.empty() ? key : absl::StrCat(path, ".", key);
    if (!base[key]) {
      if (!IsOpenMap(path, open_maps)) {
        return absl::InvalidArgumentError(absl::StrCat("unknown configuration key ", child_path));
      }
      base[key] = YAML::Clone(kv.second);
      continue;
    }
    YAML::Node target = base[key];
    if (target.IsMap() && kv.second.IsMap()) {
      RETURN_IF_ERROR(Merge(target, kv.second, child_path, open_maps));
    } else if (target.IsMap() && !kv.second.IsNull()) {
      return absl::InvalidArgumentError(absl::StrCat(child_path, ": expected a mapping"));
    } else {
      base[key] = YAML::Clone(kv.second);
    }
  }
  return absl::OkStatus();
}

// Sets the value at a dotted path, matching each segment to an existing key exactly or by its
// upper snake case spelling (for environment variables).
absl::Status SetPath(YAML::Node root, const std::vector<std::string>& segments,
                     absl::string_view value_text, absl::string_view origin, bool snake,
                     const std::vector<std::string>& open_maps) {
  absl::StatusOr<YAML::Node> loaded = LoadYaml(value_text);
  if (!loaded.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": cannot parse value: ", loaded.status().message()));
  }
  YAML::Node value = *std::move(loaded);
  YAML::Node node = root;
  std::vector<std::string> resolved;
  bool created = false;
  for (size_t i = 0; i < segments.size(); ++i) {
    if (!node.IsMap()) {
      return absl::InvalidArgumentError(
          absl::StrCat(origin, ": ", absl::StrJoin(resolved, "."), " is not a mapping"));
    }
    std::string found;
    for (const auto& kv : node) {
      std::string key = kv.first.as<std::string>();
      if (key == segments[i] || (snake && SnakeUpper(key) == segments[i])) {
        found = key;
        break;
      }
    }
    if (found.empty() && (created || IsOpenMap(absl::StrJoin(resolved, "."), open_maps))) {
      // A new entry of an open map (e.g. a priority class), or a key inside one; --set spells
      // it exactly.
      found = segments[i];
      created = true;
      if (i + 1 < segments.size()) node[found] = YAML::Node(YAML::NodeType::Map);
    }
    if (found.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(origin, ": unknown configuration key ", absl::StrJoin(segments, ".")));
    }
    resolved.push_back(found);
    if (i + 1 == segments.size()) {
      if (node[found].IsMap() && !value.IsMap()) {
        return absl::InvalidArgumentError(
            absl::StrCat(origin, ": ", absl::StrJoin(resolved, "."), " expects a mapping"));
      }
      node[found] = value;
    } else {
      node.reset(node[found]);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> ReadFileToString(absl::string_view path) {
  // Plain read(2): an ifstream costs a locale and a stdio buffer per call, which the pipeline
  // engine paid on every step's outputs.
  const std::string name(path);
  int fd;
  do {
    fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) return absl::NotFoundError(absl::StrCat(path, ": no such file"));
    return absl::UnavailableError(absl::StrCat(path, ": ", std::strerror(err)));
  }
  std::string out;
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    out.reserve(static_cast<size_t>(st.st_size));
  }
  char buffer[16384];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return absl::UnavailableError(absl::StrCat(path, ": ", std::strerror(err)));
    }
    if (n == 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

std::map<std::string, std::string> ProcessEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    absl::string_view kv(*e);
    size_t eq = kv.find('=');
    if (eq == absl::string_view::npos) continue;
    env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return env;
}

absl::StatusOr<YAML::Node> LoadConfigTree(absl::string_view defaults, absl::string_view file_path,
                                          const std::map<std::string, std::string>& env,
                                          const std::vector<std::string>& overrides,
                                          const std::vector<std::string>& open_maps) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(defaults));
  } catch (const YAML::Exception& e) {
    return absl::InternalError(absl::StrCat("built-in defaults: ", e.what()));
  }
  if (!file_path.empty()) {
    ASSIGN_OR_RETURN(std::string text, ReadFileToString(file_path));
    absl::StatusOr<YAML::Node> loaded = LoadYaml(text);
    if (!loaded.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(file_path, ": ", loaded.status().message()));
    }
    YAML::Node file = *std::move(loaded);
    if (!file.IsNull()) {
      absl::Status merged = Merge(root, file, "", open_maps);
      if (!merged.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(file_path, ": ", merged.message()));
      }
    }
  }
  for (const auto& [name, value] : env) {
    if (!absl::StartsWith(name, "REGATTA_")) continue;
    absl::string_view path = absl::string_view(name).substr(8);
    // Not configuration keys: the config file's own path, the CLI's client settings, and
    // the variables of scripts/ (build.sh, test.sh) and the test harness.
    static const auto* kNotKeys = new absl::flat_hash_set<std::string>(
        {"CONFIG", "SERVER", "TOKEN", "USER", "PASSWORD", "BINARY", "PRESET", "BUILD_JOBS",
         "TLS_CA", "TLS_CERT", "TLS_KEY", "TLS_SERVER_NAME"});
    if (kNotKeys->contains(std::string(path)) || absl::StartsWith(path, "TEST_")) continue;
    std::vector<std::string> segments = absl::StrSplit(path, "__");
    RETURN_IF_ERROR(SetPath(root, segments, value, name, /*snake=*/true, open_maps));
  }
  for (const std::string& o : overrides) {
    size_t eq = o.find('=');
    if (eq == std::string::npos || eq == 0) {
      return absl::InvalidArgumentError(absl::StrCat("--set ", o, ": expected key.path=value"));
    }
    std::vector<std::string> segments = absl::StrSplit(o.substr(0, eq), '.');
    RETURN_IF_ERROR(SetPath(root, segments, o.substr(eq + 1), absl::StrCat("--set ", o),
                            /*snake=*/false, open_maps));
  }
  return root;
}

}  // namespace regatta
