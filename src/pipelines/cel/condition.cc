#include "src/pipelines/cel/condition.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "src/common/status_macros.h"

namespace regatta::pipelines::cel {

using nlohmann::json;

enum class CompareOp { kEq, kNe, kLt, kLe, kGt, kGe };
enum class CastType { kInt, kDouble, kString, kBool };

struct Node {
  enum class Kind { kLiteral, kParameter, kNot, kNegate, kAnd, kOr, kCompare, kCast };
  Kind kind = Kind::kLiteral;
  int column = 0;  // 1-based, for error messages
  json literal;
  std::string key;  // kParameter
  CompareOp compare = CompareOp::kEq;
  CastType cast = CastType::kInt;
  std::unique_ptr<Node> lhs;  // the operand of unary nodes and casts
  std::unique_ptr<Node> rhs;
};

namespace {

// ---------------------------------------------------------------------------------------------
// Lexer

enum class Tok {
  kEnd,
  kIdent,
  kString,
  kInt,
  kDouble,
  kLParen,
  kRParen,
  kLBracket,
  kRBracket,
  kDot,
  kComma,
  kNot,
  kMinus,
  kAnd,
  kOr,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe
};

struct Token {
  Tok kind = Tok::kEnd;
  int column = 0;
  std::string text;  // identifier name or decoded string literal
  int64_t int_value = 0;
  bool int_is_2_pow_63 = false;  // only valid negated: -9223372036854775808
  double double_value = 0;
};

absl::Status SyntaxError(int column, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("column ", column, ": ", message));
}

absl::StatusOr<std::vector<Token>> Lex(absl::string_view text) {
  std::vector<Token> tokens;
  size_t i = 0;
  auto col = [&](size_t pos) { return static_cast<int>(pos) + 1; };
  while (i < text.size()) {
    char c = text[i];
    if (absl::ascii_isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    Token token;
    token.column = col(i);
    if (absl::ascii_isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = i;
      while (i < text.size() &&
             (absl::ascii_isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_')) {
        ++i;
      }
      token.kind = Tok::kIdent;
      token.text = std::string(text.substr(start, i - start));
    } else if (absl::ascii_isdigit(static_cast<unsigned char>(c)) ||
               (c == '.' && i + 1 < text.size() &&
                absl::ascii_isdigit(static_cast<unsigned char>(text[i + 1])))) {
      size_t start = i;
      bool is_double = false;
      while (i < text.size() && absl::ascii_isdigit(static_cast<unsigned char>(text[i]))) ++i;
      if (i < text.size() && text[i] == '.') {
        is_double = true;
        ++i;
        while (i < text.size() && absl::ascii_isdigit(static_cast<unsigned char>(text[i]))) ++i;
      }
      if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
        is_double = true;
        ++i;
        if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
        size_t digits = i;
        while (i < text.size() && absl::ascii_isdigit(static_cast<unsigned char>(text[i]))) ++i;
        if (digits == i) return SyntaxError(col(start), "malformed number exponent");
      }
      absl::string_view number = text.substr(start, i - start);
      if (i < text.size() &&
          (absl::ascii_isalpha(static_cast<unsigned char>(text[i])) || text[i] == '_')) {
        return SyntaxError(
            col(i), absl::StrCat("unexpected character '", text.substr(i, 1), "' after number"));
      }
      if (is_double) {
        token.kind = Tok::kDouble;
        if (!absl::SimpleAtod(number, &token.double_value)) {
          return SyntaxError(col(start), absl::StrCat("malformed number '", number, "'"));
        }
      } else {
        token.kind = Tok::kInt;
        // Parsed as unsigned so that -9223372036854775808 (the negation of 2^63) is accepted.
        uint64_t magnitude = 0;
        if (!absl::SimpleAtoi(number, &magnitude) ||
            magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1) {
          return SyntaxError(col(start), absl::StrCat("integer '", number, "' out of range"));
        }
        token.int_value = static_cast<int64_t>(magnitude);  // 2^63 wraps; fixed by negation
        token.int_is_2_pow_63 =
            magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
        token.text = std::string(number);
      }
    } else if (c == '\'' || c == '"') {
      char quote = c;
      ++i;
      std::string value;
      bool closed = false;
      while (i < text.size()) {
        char d = text[i];
        if (d == quote) {
          closed = true;
          ++i;
          break;
        }
        if (d == '\n') break;
        if (d == '\\') {
          if (i + 1 >= text.size()) break;
          char e = text[i + 1];
          switch (e) {
            case '\\':
              value.push_back('\\');
              break;
            case '\'':
              value.push_back('\'');
              break;
            case '"':
              value.push_back('"');
              break;
            case 'n':
              value.push_back('\n');
              break;
            case 't':
              value.push_back('\t');
              break;
            case 'r':
              value.push_back('\r');
              break;
            default:
              return SyntaxError(col(i),
                                 absl::StrCat("unsupported escape '\\", text.substr(i + 1, 1),
                                              "' in string literal"));
          }
          i += 2;
          continue;
        }
        value.push_back(d);
        ++i;
      }
      if (!closed) return SyntaxError(token.column, "unterminated string literal");
      token.kind = Tok::kString;
      token.text = std::move(value);
    } else {
      auto two = [&](char next) { return i + 1 < text.size() && text[i + 1] == next; };
      size_t width = 1;
      switch (c) {
        case '(':
          token.kind = Tok::kLParen;
          break;
        case ')':
          token.kind = Tok::kRParen;
          break;
        case '[':
          token.kind = Tok::kLBracket;
          break;
        case ']':
          token.kind = Tok::kRBracket;
          break;
        case '.':
          token.kind = Tok::kDot;
          break;
        case ',':
          token.kind = Tok::kComma;
          break;
        case '-':
          token.kind = Tok::kMinus;
          break;
        case '!':
          token.kind = two('=') ? Tok::kNe : Tok::kNot;
          width = two('=') ? 2 : 1;
          break;
        case '<':
          token.kind = two('=') ? Tok::kLe : Tok::kLt;
          width = two('=') ? 2 : 1;
          break;
        case '>':
          token.kind = two('=') ? Tok::kGe : Tok::kGt;
          width = two('=') ? 2 : 1;
          break;
        case '=':
          if (!two('=')) return SyntaxError(token.column, "'=' is not an operator; use '=='");
          token.kind = Tok::kEq;
          width = 2;
          break;
        case '&':
          if (!two('&')) return SyntaxError(token.column, "'&' is not an operator; use '&&'");
          token.kind = Tok::kAnd;
          width = 2;
          break;
        case '|':
          if (!two('|')) return SyntaxError(token.column, "'|' is not an operator; use '||'");
          token.kind = Tok::kOr;
          width = 2;
          break;
        default:
          return SyntaxError(token.column,
                             absl::StrCat("unexpected character '", text.substr(i, 1), "'"));
      }
      i += width;
    }
    tokens.push_back(std::move(token));
  }
  Token end;
  end.kind = Tok::kEnd;
  end.column = col(text.size());
  tokens.push_back(end);
  return tokens;
}

// ---------------------------------------------------------------------------------------------
// Parser: recursive descent with CEL's precedence (|| < && < relations < unary < member).

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  absl::StatusOr<std::unique_ptr<Node>> ParseAll() {
    ASSIGN_OR_RETURN(std::unique_ptr<Node> root, ParseOr());
    if (Peek().kind != Tok::kEnd) return Unexpected(Peek(), "end of condition");
    return root;
  }

 private:
  static constexpr int kMaxDepth = 200;  // bounds recursion on hostile input

  const Token& Peek() const { return tokens_[pos_]; }
  const Token& Next() { return tokens_[pos_++]; }
  bool Accept(Tok kind) {
    if (Peek().kind != kind) return false;
    ++pos_;
    return true;
  }

  static absl::Status Unexpected(const Token& token, absl::string_view expected) {
    if (token.kind == Tok::kEnd) {
      return SyntaxError(token.column,
                         absl::StrCat("unexpected end of condition, expected ", expected));
    }
    return SyntaxError(token.column, absl::StrCat("unexpected token, expected ", expected));
  }

  absl::Status Expect(Tok kind, absl::string_view what) {
    if (!Accept(kind)) return Unexpected(Peek(), what);
    return absl::OkStatus();
  }

  static std::unique_ptr<Node> Binary(Node::Kind kind, int column, std::unique_ptr<Node> lhs,
                                      std::unique_ptr<Node> rhs) {
    auto node = std::make_unique<Node>();
    node->kind = kind;
    node->column = column;
    node->lhs = std::move(lhs);
    node->rhs = std::move(rhs);
    return node;
  }

  absl::StatusOr<std::unique_ptr<Node>> ParseOr() {
    if (++depth_ > kMaxDepth) return SyntaxError(Peek().column, "condition nested too deeply");
    ASSIGN_OR_RETURN(std::unique_ptr<Node> lhs, ParseAnd());
    while (Peek().kind == Tok::kOr) {
      int column = Next().column;
      ASSIGN_OR_RETURN(std::unique_ptr<Node> rhs, ParseAnd());
      lhs = Binary(Node::Kind::kOr, column, std::move(lhs), std::move(rhs));
    }
    --depth_;
    return lhs;
  }

  absl::StatusOr<std::unique_ptr<Node>> ParseAnd() {
    ASSIGN_OR_RETURN(std::unique_ptr<Node> lhs, ParseRelation());
    while (Peek().kind == Tok::kAnd) {
      int column = Next().column;
      ASSIGN_OR_RETURN(std::unique_ptr<Node> rhs, ParseRelation());
      lhs = Binary(Node::Kind::kAnd, column, std::move(lhs), std::move(rhs));
    }
    return lhs;
  }

  absl::StatusOr<std::unique_ptr<Node>> ParseRelation() {
    ASSIGN_OR_RETURN(std::unique_ptr<Node> lhs, ParseUnary());
    while (true) {
      CompareOp op;
      switch (Peek().kind) {
        case Tok::kEq:
          op = CompareOp::kEq;
          break;
        case Tok::kNe:
          op = CompareOp::kNe;
          break;
        case Tok::kLt:
          op = CompareOp::kLt;
          break;
        case Tok::kLe:
          op = CompareOp::kLe;
          break;
        case Tok::kGt:
          op = CompareOp::kGt;
          break;
        case Tok::kGe:
          op = CompareOp::kGe;
          break;
        default:
          return lhs;
      }
      int column = Next().column;
      ASSIGN_OR_RETURN(std::unique_ptr<Node> rhs, ParseUnary());
      lhs = Binary(Node::Kind::kCompare, column, std::move(lhs), std::move(rhs));
      lhs->compare = op;
    }
  }

  absl::StatusOr<std::unique_ptr<Node>> ParseUnary() {
    if (Peek().kind == Tok::kNot || Peek().kind == Tok::kMinus) {
      const Token& op = Next();
      if (++depth_ > kMaxDepth) return SyntaxError(op.column, "condition nested too deeply");
      // A negated integer literal is folded so that the most negative int64 is representable.
      if (op.kind == Tok::kMinus && Peek().kind == Tok::kInt) {
        const Token& number = Next();
        auto node = std::make_unique<Node>();
        node->column = op.column;
        // Negated in unsigned arithmetic: 2^63 was stored wrapped to INT64_MIN and maps to itself.
        node->literal = static_cast<int64_t>(0 - static_cast<uint64_t>(number.int_value));
        --depth_;
        return node;
      }
      ASSIGN_OR_RETURN(std::unique_ptr<Node> operand, ParseUnary());
      auto node = std::make_unique<Node>();
      node->kind = op.kind == Tok::kNot ? Node::Kind::kNot : Node::Kind::kNegate;
      node->column = op.column;
      node->lhs = std::move(operand);
      --depth_;
      return node;
    }
    return ParsePrimary();
  }

  absl::StatusOr<std::unique_ptr<Node>> ParsePrimary() {
    const Token& token = Next();
    auto node = std::make_unique<Node>();
    node->column = token.column;
    switch (token.kind) {
      case Tok::kString:
        node->literal = token.text;
        return node;
      case Tok::kInt:
        if (token.int_is_2_pow_63) {
          return SyntaxError(token.column, absl::StrCat("integer '", token.text, "' out of range"));
        }
        node->literal = token.int_value;
        return node;
      case Tok::kDouble:
        node->literal = token.double_value;
        return node;
      case Tok::kLParen: {
        ASSIGN_OR_RETURN(std::unique_ptr<Node> inner, ParseOr());
        RETURN_IF_ERROR(Expect(Tok::kRParen, "')'"));
        return inner;
      }
      case Tok::kIdent:
        break;
      default:
        --pos_;
        return Unexpected(token, "a value");
    }
    const std::string& name = token.text;
    if (name == "true" || name == "false") {
      node->literal = name == "true";
      return node;
    }
    if (name == "null") {
      node->literal = nullptr;
      return node;
    }
    if (Peek().kind == Tok::kLParen) {
      if (name == "int") {
        node->cast = CastType::kInt;
      } else if (name == "double") {
        node->cast = CastType::kDouble;
      } else if (name == "string") {
        node->cast = CastType::kString;
      } else if (name == "bool") {
        node->cast = CastType::kBool;
      } else {
        return SyntaxError(token.column, absl::StrCat("unsupported function '", name,
                                                      "' (supported: int, double, string, bool)"));
      }
      Next();
      node->kind = Node::Kind::kCast;
      ASSIGN_OR_RETURN(node->lhs, ParseOr());
      RETURN_IF_ERROR(Expect(Tok::kRParen, absl::StrCat("')' closing ", name, "(")));
      return node;
    }
    if (name == "inputs") return ParseParameterReference(std::move(node));
    return SyntaxError(token.column, absl::StrCat("unknown identifier '", name,
                                                  "' (expected inputs.parameter_values['...'])"));
  }

  // inputs.parameter_values['k'] or inputs.parameters['k']; `inputs` is already consumed.
  absl::StatusOr<std::unique_ptr<Node>> ParseParameterReference(std::unique_ptr<Node> node) {
    RETURN_IF_ERROR(Expect(Tok::kDot, "'.parameter_values' after 'inputs'"));
    const Token& field = Peek();
    if (field.kind != Tok::kIdent ||
        (field.text != "parameter_values" && field.text != "parameters")) {
      return SyntaxError(field.column, "expected 'parameter_values' after 'inputs.'");
    }
    Next();
    RETURN_IF_ERROR(Expect(Tok::kLBracket, "'[' after inputs.parameter_values"));
    const Token& key = Peek();
    if (key.kind != Tok::kString) {
      return SyntaxError(key.column, "expected a string literal parameter name");
    }
    node->kind = Node::Kind::kParameter;
    node->key = Next().text;
    RETURN_IF_ERROR(Expect(Tok::kRBracket, "']'"));
    if (Peek().kind == Tok::kDot || Peek().kind == Tok::kLBracket) {
      return SyntaxError(Peek().column, "field or index access on a parameter is not supported");
    }
    return node;
  }

  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Evaluation

absl::Status EvalError(const Node& node, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("column ", node.column, ": ", message));
}

const char* KindName(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "bool";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "int";
    case json::value_t::number_float:
      return "double";
    case json::value_t::string:
      return "string";
    case json::value_t::array:
      return "list";
    case json::value_t::object:
      return "map";
    default:
      return "unknown";
  }
}

const char* OpName(CompareOp op) {
  switch (op) {
    case CompareOp::kEq:
      return "==";
    case CompareOp::kNe:
      return "!=";
    case CompareOp::kLt:
      return "<";
    case CompareOp::kLe:
      return "<=";
    case CompareOp::kGt:
      return ">";
    case CompareOp::kGe:
      return ">=";
  }
  return "?";
}

// -1, 0, 1 for two numbers of any JSON numeric kind, exact for ints of either signedness.
int CompareNumbers(const json& a, const json& b) {
  if (a.is_number_float() || b.is_number_float()) {
    double x = a.get<double>();
    double y = b.get<double>();
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  bool a_unsigned = a.is_number_unsigned();
  bool b_unsigned = b.is_number_unsigned();
  if (a_unsigned && b_unsigned) {
    uint64_t x = a.get<uint64_t>(), y = b.get<uint64_t>();
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  if (!a_unsigned && !b_unsigned) {
    int64_t x = a.get<int64_t>(), y = b.get<int64_t>();
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  // One signed, one unsigned: a negative signed value is smaller than any unsigned one.
  if (a_unsigned) return -CompareNumbers(b, a);
  int64_t x = a.get<int64_t>();
  if (x < 0) return -1;
  uint64_t ux = static_cast<uint64_t>(x), y = b.get<uint64_t>();
  return ux < y ? -1 : (ux > y ? 1 : 0);
}

bool ValuesEqual(const json& a, const json& b) {
  if (a.is_number() && b.is_number()) {
    if ((a.is_number_float() && std::isnan(a.get<double>())) ||
        (b.is_number_float() && std::isnan(b.get<double>()))) {
      return false;
    }
    return CompareNumbers(a, b) == 0;
  }
  if (a.type() != b.type()) return false;
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!ValuesEqual(a[i], b[i])) return false;
    }
    return true;
  }
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it) {
      auto other = b.find(it.key());
      if (other == b.end() || !ValuesEqual(it.value(), *other)) return false;
    }
    return true;
  }
  return a == b;
}

absl::StatusOr<json> Eval(const Node& node, const json& params);

absl::StatusOr<bool> EvalBool(const Node& node, const json& params, absl::string_view op) {
  ASSIGN_OR_RETURN(json value, Eval(node, params));
  if (!value.is_boolean()) {
    return EvalError(node,
                     absl::StrCat("operand of '", op, "' is ", KindName(value), ", expected bool"));
  }
  return value.get<bool>();
}

absl::StatusOr<json> EvalCompare(const Node& node, const json& params) {
  ASSIGN_OR_RETURN(json lhs, Eval(*node.lhs, params));
  ASSIGN_OR_RETURN(json rhs, Eval(*node.rhs, params));
  if (node.compare == CompareOp::kEq) return ValuesEqual(lhs, rhs);
  if (node.compare == CompareOp::kNe) return !ValuesEqual(lhs, rhs);
  int order;
  if (lhs.is_number() && rhs.is_number()) {
    if ((lhs.is_number_float() && std::isnan(lhs.get<double>())) ||
        (rhs.is_number_float() && std::isnan(rhs.get<double>()))) {
      return false;  // NaN is unordered
    }
    order = CompareNumbers(lhs, rhs);
  } else if (lhs.is_string() && rhs.is_string()) {
    int c = lhs.get_ref<const std::string&>().compare(rhs.get_ref<const std::string&>());
    order = c < 0 ? -1 : (c > 0 ? 1 : 0);
  } else if (lhs.is_boolean() && rhs.is_boolean()) {
    order = static_cast<int>(lhs.get<bool>()) - static_cast<int>(rhs.get<bool>());
  } else {
    return EvalError(node, absl::StrCat("no matching overload for '", OpName(node.compare), "' on ",
                                        KindName(lhs), " and ", KindName(rhs)));
  }
  switch (node.compare) {
    case CompareOp::kLt:
      return order < 0;
    case CompareOp::kLe:
      return order <= 0;
    case CompareOp::kGt:
      return order > 0;
    case CompareOp::kGe:
      return order >= 0;
    default:
      return false;
  }
}

// CEL's string(double) is Go's strconv.FormatFloat(d, 'g', -1, 64): the shortest digits that read
// back as d, in exponent form ("1e+06") when the decimal exponent is < -4 or >= 6, else plain
// ("2.5", "3", "123456").
std::string FormatDouble(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == 0) return std::signbit(value) ? "-0" : "0";
  int digits = 1;
  std::string scientific;
  for (; digits <= 17; ++digits) {
    scientific = absl::StrFormat("%.*e", digits - 1, value);
    double back = 0;
    if (absl::SimpleAtod(scientific, &back) && back == value) break;
  }
  int exponent = std::atoi(scientific.c_str() + scientific.find('e') + 1);
  if (exponent < -4 || exponent >= 6) return scientific;
  return absl::StrFormat("%.*f", std::max(digits - 1 - exponent, 0), value);
}

absl::StatusOr<json> EvalCast(const Node& node, const json& params) {
  ASSIGN_OR_RETURN(json value, Eval(*node.lhs, params));
  switch (node.cast) {
    case CastType::kInt: {
      if (value.is_number_integer()) return value;
      if (value.is_number_unsigned()) {
        if (value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
          return EvalError(node, "int() overflow");
        }
        return json(value.get<int64_t>());
      }
      if (value.is_number_float()) {
        double d = value.get<double>();
        // The int64 range is [-2^63, 2^63); 2^63 itself is exactly representable as a double.
        if (!std::isfinite(d) || d >= 9223372036854775808.0 || d < -9223372036854775808.0) {
          return EvalError(node, absl::StrCat("int() overflow on ", FormatDouble(d)));
        }
        return json(static_cast<int64_t>(d));
      }
      if (value.is_string()) {
        int64_t parsed;
        const std::string& s = value.get_ref<const std::string&>();
        if (!absl::SimpleAtoi(s, &parsed) || s.empty() || absl::ascii_isspace(s.front()) ||
            absl::ascii_isspace(s.back()) || s.front() == '+') {
          return EvalError(node, absl::StrCat("int() cannot parse '", s, "'"));
        }
        return json(parsed);
      }
      break;
    }
    case CastType::kDouble: {
      if (value.is_number()) return json(value.get<double>());
      if (value.is_string()) {
        const std::string& s = value.get_ref<const std::string&>();
        double parsed;
        if (s.empty() || absl::ascii_isspace(s.front()) || absl::ascii_isspace(s.back()) ||
            !absl::SimpleAtod(s, &parsed)) {
          return EvalError(node, absl::StrCat("double() cannot parse '", s, "'"));
        }
        return json(parsed);
      }
      break;
    }
    case CastType::kString: {
      if (value.is_string()) return value;
      if (value.is_boolean()) return json(value.get<bool>() ? "true" : "false");
      if (value.is_number_float()) return json(FormatDouble(value.get<double>()));
      if (value.is_number()) return json(value.dump());
      break;
    }
    case CastType::kBool: {
      if (value.is_boolean()) return value;
      if (value.is_string()) {
        // The spellings CEL's bool(string) accepts.
        const std::string& s = value.get_ref<const std::string&>();
        if (s == "true" || s == "True" || s == "TRUE" || s == "t" || s == "1") return json(true);
        if (s == "false" || s == "False" || s == "FALSE" || s == "f" || s == "0") {
          return json(false);
        }
        return EvalError(node, absl::StrCat("bool() cannot parse '", s, "'"));
      }
      break;
    }
  }
  static constexpr const char* kNames[] = {"int", "double", "string", "bool"};
  return EvalError(
      node, absl::StrCat("no matching overload for ", kNames[static_cast<int>(node.cast)], "(",
                         KindName(value), ")"));
}

absl::StatusOr<json> Eval(const Node& node, const json& params) {
  switch (node.kind) {
    case Node::Kind::kLiteral:
      return node.literal;
    case Node::Kind::kParameter: {
      auto it = params.is_object() ? params.find(node.key) : params.end();
      if (it == params.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("column ", node.column, ": no parameter value for '", node.key, "'"));
      }
      return *it;
    }
    case Node::Kind::kNot: {
      ASSIGN_OR_RETURN(bool value, EvalBool(*node.lhs, params, "!"));
      return json(!value);
    }
    case Node::Kind::kNegate: {
      ASSIGN_OR_RETURN(json value, Eval(*node.lhs, params));
      if (value.is_number_float()) return json(-value.get<double>());
      if (value.is_number_integer()) {
        int64_t v = value.get<int64_t>();
        if (v == std::numeric_limits<int64_t>::min()) return EvalError(node, "int overflow");
        return json(-v);
      }
      return EvalError(node, absl::StrCat("no matching overload for '-' on ", KindName(value)));
    }
    case Node::Kind::kAnd:
    case Node::Kind::kOr: {
      // CEL's && and || are commutative: a decisive operand wins over an error on the other side.
      const bool is_and = node.kind == Node::Kind::kAnd;
      const char* op = is_and ? "&&" : "||";
      absl::StatusOr<bool> lhs = EvalBool(*node.lhs, params, op);
      if (lhs.ok() && *lhs != is_and) return json(*lhs);
      absl::StatusOr<bool> rhs = EvalBool(*node.rhs, params, op);
      if (rhs.ok() && *rhs != is_and) return json(*rhs);
      if (!lhs.ok()) return lhs.status();
      if (!rhs.ok()) return rhs.status();
      return json(is_and);
    }
    case Node::Kind::kCompare:
      return EvalCompare(node, params);
    case Node::Kind::kCast:
      return EvalCast(node, params);
  }
  return absl::InternalError("unknown condition node");
}

}  // namespace

absl::StatusOr<CompiledCondition> ParseCondition(absl::string_view text) {
  ASSIGN_OR_RETURN(std::vector<Token> tokens, Lex(text));
  if (tokens.size() == 1) return SyntaxError(1, "empty condition");
  Parser parser(std::move(tokens));
  ASSIGN_OR_RETURN(std::unique_ptr<Node> root, parser.ParseAll());
  CompiledCondition condition;
  condition.text_ = std::string(text);
  condition.root_ = std::move(root);
  return condition;
}

absl::StatusOr<bool> Evaluate(const CompiledCondition& condition,
                              const nlohmann::json& parameter_values) {
  if (condition.root_ == nullptr) return absl::FailedPreconditionError("condition not parsed");
  ASSIGN_OR_RETURN(json value, Eval(*condition.root_, parameter_values));
  if (!value.is_boolean()) {
    return absl::InvalidArgumentError(
        absl::StrCat("condition evaluates to ", KindName(value), ", expected bool"));
  }
  return value.get<bool>();
}

}  // namespace regatta::pipelines::cel
