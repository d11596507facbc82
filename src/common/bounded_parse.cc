#include "src/common/bounded_parse.h"

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "src/common/status_macros.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/parser.h"

namespace regatta {
namespace {

constexpr absl::string_view kLimitPayload = "type.regatta.dev/regatta.ParseLimit";

absl::Status LimitError(std::string message) {
  absl::Status status = absl::InvalidArgumentError(std::move(message));
  status.SetPayload(kLimitPayload, absl::Cord("1"));
  return status;
}

std::string At(int line, int column) {
  return absl::StrCat("line ", line + 1, ", column ", column + 1, ": ");
}

absl::Status CheckInputBytes(absl::string_view what, size_t size, const ParseLimits& limits) {
  if (size <= limits.max_input_bytes) return absl::OkStatus();
  return LimitError(absl::StrCat(what, " input is ", size, " bytes, more than the limit of ",
                                 limits.max_input_bytes, " bytes"));
}

// Thrown from inside the parser's event loop to stop it at the first exceeded limit (or the
// first scalar that is not UTF-8).
struct Refusal {
  YAML::Mark mark;
  std::string message;
  bool limit = true;
};

// RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF.
bool IsValidUtf8(absl::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    int length = 0;
    uint32_t min = 0;
    uint32_t code = 0;
    if ((c & 0xE0) == 0xC0) {
      length = 2, min = 0x80, code = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      length = 3, min = 0x800, code = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      length = 4, min = 0x10000, code = c & 0x07;
    } else {
      return false;
    }
    if (i + length > s.size()) return false;
    for (int k = 1; k < length; ++k) {
      const unsigned char next = static_cast<unsigned char>(s[i + k]);
      if ((next & 0xC0) != 0x80) return false;
      code = (code << 6) | (next & 0x3F);
    }
    if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return false;
    i += length;
  }
  return true;
}

// Follows the parser's events and keeps, for every anchor, the size and height of the node it
// names with its aliases expanded, so that each alias costs O(1) however much it expands to.
class ExpansionScanner : public YAML::EventHandler {
 public:
  explicit ExpansionScanner(const ParseLimits& limits) : limits_(limits) {}

  void OnDocumentStart(const YAML::Mark&) override {
    // Anchor numbers start again in every document, and aliases do not cross documents.
    anchors_.clear();
    names_.clear();
    open_.clear();
  }
  void OnDocumentEnd() override {}

  void OnAnchor(const YAML::Mark&, const std::string& name) override { pending_name_ = name; }

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { Leaf(mark, anchor, 0); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string& value) override {
    // yaml-cpp passes raw bytes through unchecked; JSON (nlohmann's dump throws on anything
    // else) and protobuf strings need UTF-8.
    if (!IsValidUtf8(value)) throw Refusal{mark, "YAML scalar is not valid UTF-8", false};
    Leaf(mark, anchor, value.size());
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (++aliases_ > limits_.max_aliases) {
      Fail(mark, absl::StrCat("YAML has more than ", limits_.max_aliases,
                              " aliases (limit: ", limits_.max_aliases, " aliases)"));
    }
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) {
      // yaml-cpp rejects unknown anchors itself, so this is an alias inside its own anchor:
      // the graph would have a cycle and every walk of it would recurse forever.
      Fail(mark, absl::StrCat("YAML alias *", Name(anchor),
                              " refers to a node that contains it (a cycle)"));
    }
    const Expansion& expansion = it->second;
    Count(mark, expansion.nodes, expansion.scalar_bytes, /*through_alias=*/true);
    Reach(mark, static_cast<int>(open_.size()) + expansion.height, /*through_alias=*/true);
    ChildHeight(expansion.height);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(mark, anchor);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(mark, anchor);
  }
  void OnMapEnd() override { Close(); }

 private:
  struct Expansion {
    uint64_t nodes = 0;
    uint64_t scalar_bytes = 0;
    int height = 0;  // levels of containers below and including the node; 0 for a scalar
  };
  struct Frame {
    YAML::anchor_t anchor;
    uint64_t nodes_before;
    uint64_t scalar_bytes_before;
    int child_height = 0;
  };

  [[noreturn]] static void Fail(const YAML::Mark& mark, std::string message) {
    throw Refusal{mark, std::move(message)};
  }

  void RecordName(YAML::anchor_t anchor) {
    if (anchor == YAML::NullAnchor) return;
    names_[anchor] = std::move(pending_name_);
    pending_name_.clear();
  }
  std::string Name(YAML::anchor_t anchor) const {
    auto it = names_.find(anchor);
    return it == names_.end() ? "" : it->second;
  }

  void Count(const YAML::Mark& mark, uint64_t nodes, uint64_t scalar_bytes, bool through_alias) {
    // Each term is at most its limit (or the input's size), so the sums cannot overflow.
    nodes_ += nodes;
    scalar_bytes_ += scalar_bytes;
    const absl::string_view what = through_alias ? "YAML aliases expand to" : "YAML has";
    if (nodes_ > limits_.max_expanded_nodes) {
      Fail(mark, absl::StrCat(what, " more than ", limits_.max_expanded_nodes,
                              " nodes (limit: ", limits_.max_expanded_nodes, " expanded nodes)"));
    }
    if (scalar_bytes_ > limits_.max_expanded_scalar_bytes) {
      Fail(mark, absl::StrCat(what, " more than ", limits_.max_expanded_scalar_bytes,
                              " bytes of scalars (limit: ", limits_.max_expanded_scalar_bytes,
                              " expanded scalar bytes)"));
    }
  }

  void Reach(const YAML::Mark& mark, int depth, bool through_alias) const {
    if (depth <= limits_.max_depth) return;
    Fail(mark, absl::StrCat("YAML nests more than ", limits_.max_depth, " levels deep",
                            through_alias ? " through aliases" : "", " (limit: ", limits_.max_depth,
                            " levels)"));
  }

  void ChildHeight(int height) {
    if (!open_.empty()) open_.back().child_height = std::max(open_.back().child_height, height);
  }

  void Leaf(const YAML::Mark& mark, YAML::anchor_t anchor, size_t bytes) {
    RecordName(anchor);
    Count(mark, 1, bytes, /*through_alias=*/false);
    if (anchor != YAML::NullAnchor) anchors_[anchor] = Expansion{1, bytes, 0};
    ChildHeight(0);
  }

  void Open(const YAML::Mark& mark, YAML::anchor_t anchor) {
    RecordName(anchor);
    open_.push_back(Frame{anchor, nodes_, scalar_bytes_});
    Count(mark, 1, 0, /*through_alias=*/false);
    Reach(mark, static_cast<int>(open_.size()), /*through_alias=*/false);
  }

  void Close() {
    if (open_.empty()) return;
    const Frame frame = open_.back();
    open_.pop_back();
    const int height = frame.child_height + 1;
    if (frame.anchor != YAML::NullAnchor) {
      anchors_[frame.anchor] =
          Expansion{nodes_ - frame.nodes_before, scalar_bytes_ - frame.scalar_bytes_before, height};
    }
    ChildHeight(height);
  }

  const ParseLimits& limits_;
  uint64_t nodes_ = 0;
  uint64_t scalar_bytes_ = 0;
  uint64_t aliases_ = 0;
  absl::flat_hash_map<YAML::anchor_t, Expansion> anchors_;
  absl::flat_hash_map<YAML::anchor_t, std::string> names_;
  std::string pending_name_;
  std::vector<Frame> open_;
};

absl::Status YamlSyntaxError(const YAML::Exception& e) {
  return absl::InvalidArgumentError(absl::StrCat(At(e.mark.line, e.mark.column), e.msg));
}

// Runs the scanner over every document; syntax errors surface here, before any Node exists.
absl::Status ScanYaml(const std::string& text, const ParseLimits& limits) {
  std::istringstream in(text);
  ExpansionScanner scanner(limits);
  try {
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(scanner)) {
    }
  } catch (const Refusal& e) {
    std::string message = absl::StrCat(At(e.mark.line, e.mark.column), e.message);
    return e.limit ? LimitError(std::move(message)) : absl::InvalidArgumentError(message);
  } catch (const YAML::Exception& e) {
    return YamlSyntaxError(e);
  }
  return absl::OkStatus();
}

template <typename Result, typename LoadFn>
absl::StatusOr<Result> BoundedYaml(absl::string_view text, const ParseLimits& limits, LoadFn load) {
  RETURN_IF_ERROR(CheckInputBytes("YAML", text.size(), limits));
  const std::string copy(text);
  RETURN_IF_ERROR(ScanYaml(copy, limits));
  try {
    return load(copy);
  } catch (const YAML::Exception& e) {
    return YamlSyntaxError(e);
  }
}

// The position of byte `offset` of `text`, as 0-based line and column.
std::pair<int, int> Position(absl::string_view text, size_t offset) {
  int line = 0;
  size_t line_start = 0;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return {line, static_cast<int>(offset - line_start)};
}

// One linear pass over the text: nesting depth and the number of values, counted the way the
// parser will see them for valid JSON (an object member counts once). Invalid JSON is left to
// the parser to reject.
absl::Status ScanJson(absl::string_view text, const ParseLimits& limits) {
  RETURN_IF_ERROR(CheckInputBytes("JSON", text.size(), limits));
  int depth = 0;
  uint64_t values = 0;
  bool in_string = false;
  bool escaped = false;
  bool first_in_container = true;  // the root is the first value of an imaginary container
  auto fail = [&](size_t offset, std::string message) {
    auto [line, column] = Position(text, offset);
    return LimitError(absl::StrCat(At(line, column), message));
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    if (first_in_container) {
      first_in_container = false;
      if (c != ']' && c != '}') ++values;
    } else if (c == ',' && depth > 0) {
      ++values;
    }
    if (values > limits.max_expanded_nodes) {
      return fail(i, absl::StrCat("JSON has more than ", limits.max_expanded_nodes,
                                  " values (limit: ", limits.max_expanded_nodes, " values)"));
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > limits.max_depth) {
          return fail(i, absl::StrCat("JSON nests more than ", limits.max_depth,
                                      " levels deep (limit: ", limits.max_depth, " levels)"));
        }
        first_in_container = true;
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      default:
        break;
    }
  }
  return absl::OkStatus();
}

template <typename Json>
absl::StatusOr<Json> BoundedJson(absl::string_view text, const ParseLimits& limits) {
  RETURN_IF_ERROR(ScanJson(text, limits));
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const typename Json::parse_error& e) {
    // nlohmann says "[json.exception.parse_error.101] parse error at line 1, column 2: ...".
    const absl::string_view what = e.what();
    constexpr absl::string_view kAt = "parse error at ";
    const size_t at = what.find(kAt);
    if (at != absl::string_view::npos) {
      return absl::InvalidArgumentError(what.substr(at + kAt.size()));
    }
    return absl::InvalidArgumentError(what);
  } catch (const typename Json::exception& e) {
    return absl::InvalidArgumentError(e.what());
  }
}

}  // namespace

absl::StatusOr<YAML::Node> LoadYaml(absl::string_view text, const ParseLimits& limits) {
  return BoundedYaml<YAML::Node>(text, limits, [](const std::string& s) { return YAML::Load(s); });
}

absl::StatusOr<std::vector<YAML::Node>> LoadAllYaml(absl::string_view text,
                                                    const ParseLimits& limits) {
  return BoundedYaml<std::vector<YAML::Node>>(
      text, limits, [](const std::string& s) { return YAML::LoadAll(s); });
}

absl::StatusOr<nlohmann::json> ParseJson(absl::string_view text, const ParseLimits& limits) {
  return BoundedJson<nlohmann::json>(text, limits);
}

absl::StatusOr<nlohmann::ordered_json> ParseOrderedJson(absl::string_view text,
                                                        const ParseLimits& limits) {
  return BoundedJson<nlohmann::ordered_json>(text, limits);
}

absl::Status CheckJsonLimits(absl::string_view text, const ParseLimits& limits) {
  return ScanJson(text, limits);
}

bool IsParseLimitError(const absl::Status& status) {
  return status.GetPayload(kLimitPayload).has_value();
}

std::string ParseErrorText(const absl::Status& status, absl::string_view syntax_prefix) {
  if (IsParseLimitError(status)) return std::string(status.message());
  return absl::StrCat(syntax_prefix, ": ", status.message());
}

}  // namespace regatta
