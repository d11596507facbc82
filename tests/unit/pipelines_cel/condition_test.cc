#include "src/pipelines/cel/condition.h"

#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace regatta::pipelines::cel {
namespace {

using ::nlohmann::json;
using ::testing::HasSubstr;

// Parses and evaluates; a parse or evaluation error fails the test with its message.
bool Eval(const std::string& text, const json& params = json::object()) {
  absl::StatusOr<CompiledCondition> condition = ParseCondition(text);
  EXPECT_TRUE(condition.ok()) << text << ": " << condition.status();
  if (!condition.ok()) return false;
  absl::StatusOr<bool> result = Evaluate(*condition, params);
  EXPECT_TRUE(result.ok()) << text << ": " << result.status();
  return result.ok() && *result;
}

std::string ParseError(const std::string& text) {
  absl::StatusOr<CompiledCondition> condition = ParseCondition(text);
  EXPECT_FALSE(condition.ok()) << text << " parsed";
  return condition.ok() ? "" : std::string(condition.status().message());
}

std::string EvalError(const std::string& text, const json& params = json::object()) {
  absl::StatusOr<CompiledCondition> condition = ParseCondition(text);
  EXPECT_TRUE(condition.ok()) << text << ": " << condition.status();
  if (!condition.ok()) return "";
  absl::StatusOr<bool> result = Evaluate(*condition, params);
  EXPECT_FALSE(result.ok()) << text << " evaluated to " << (result.ok() && *result);
  return result.ok() ? "" : std::string(result.status().message());
}

TEST(CelConditionTest, Literals) {
  EXPECT_TRUE(Eval("true"));
  EXPECT_FALSE(Eval("false"));
  EXPECT_TRUE(Eval("'a' == \"a\""));
  EXPECT_TRUE(Eval("'it\\'s' == \"it's\""));
  EXPECT_TRUE(Eval("'a\\nb' != 'a\\\\nb'"));
  EXPECT_TRUE(Eval("3 == 3"));
  EXPECT_TRUE(Eval("2.5 == 2.5"));
  EXPECT_TRUE(Eval("1e3 == 1000"));
  EXPECT_TRUE(Eval("null == null"));
  EXPECT_TRUE(Eval("-3 < -2"));
  EXPECT_TRUE(Eval("-9223372036854775808 < 9223372036854775807"));
  EXPECT_TRUE(Eval("-2.5 < -(2)"));
}

TEST(CelConditionTest, EveryComparisonOperator) {
  EXPECT_TRUE(Eval("1 == 1"));
  EXPECT_FALSE(Eval("1 == 2"));
  EXPECT_TRUE(Eval("1 != 2"));
  EXPECT_FALSE(Eval("1 != 1"));
  EXPECT_TRUE(Eval("1 < 2"));
  EXPECT_FALSE(Eval("2 < 2"));
  EXPECT_TRUE(Eval("2 <= 2"));
  EXPECT_FALSE(Eval("3 <= 2"));
  EXPECT_TRUE(Eval("3 > 2"));
  EXPECT_FALSE(Eval("2 > 2"));
  EXPECT_TRUE(Eval("2 >= 2"));
  EXPECT_FALSE(Eval("1 >= 2"));
  EXPECT_TRUE(Eval("'abc' < 'abd'"));
  EXPECT_TRUE(Eval("'b' >= 'a'"));
  EXPECT_TRUE(Eval("false < true"));
}

TEST(CelConditionTest, NumbersCompareAcrossIntAndDouble) {
  EXPECT_TRUE(Eval("1 == 1.0"));
  EXPECT_TRUE(Eval("2 > 1.5"));
  EXPECT_TRUE(Eval("inputs.parameter_values['p'] == 3", {{"p", 3.0}}));
  EXPECT_TRUE(Eval("inputs.parameter_values['p'] < 4", {{"p", 3.5}}));
  EXPECT_TRUE(
      Eval("inputs.parameter_values['p'] > 9223372036854775807", {{"p", 18446744073709551615ull}}));
  EXPECT_TRUE(Eval("inputs.parameter_values['p'] < -1 == false", {{"p", 18446744073709551615ull}}));
}

TEST(CelConditionTest, DifferentKindsAreUnequalButNotOrdered) {
  EXPECT_FALSE(Eval("'1' == 1"));
  EXPECT_TRUE(Eval("'1' != 1"));
  EXPECT_FALSE(Eval("null == false"));
  EXPECT_THAT(EvalError("'1' < 1"), HasSubstr("no matching overload for '<' on string and int"));
  EXPECT_THAT(EvalError("null >= null"), HasSubstr("'>=' on null and null"));
}

TEST(CelConditionTest, LogicalOperatorsAndPrecedence) {
  EXPECT_TRUE(Eval("true && true"));
  EXPECT_FALSE(Eval("true && false"));
  EXPECT_TRUE(Eval("false || true"));
  EXPECT_FALSE(Eval("false || false"));
  EXPECT_TRUE(Eval("!false"));
  EXPECT_TRUE(Eval("!!true"));
  // && binds tighter than ||.
  EXPECT_TRUE(Eval("true || false && false"));
  EXPECT_FALSE(Eval("(true || false) && false"));
  // Comparisons bind tighter than && and ||.
  EXPECT_TRUE(Eval("1 < 2 && 2 < 3 || 1 > 2"));
  // ! binds tighter than comparisons: !true == false is (!true) == false.
  EXPECT_TRUE(Eval("!true == false"));
  // Relations are left-associative.
  EXPECT_TRUE(Eval("1 < 2 == true"));
}

TEST(CelConditionTest, LogicalOperatorsAbsorbErrorsLikeCel) {
  json params = {{"s", "x"}};
  EXPECT_FALSE(Eval("false && int(inputs.parameter_values['s']) > 1", params));
  EXPECT_FALSE(Eval("int(inputs.parameter_values['s']) > 1 && false", params));
  EXPECT_TRUE(Eval("int(inputs.parameter_values['s']) > 1 || true", params));
  EXPECT_TRUE(Eval("true || inputs.parameter_values['missing'] == 1", params));
  EXPECT_THAT(EvalError("true && int(inputs.parameter_values['s']) > 1", params),
              HasSubstr("int() cannot parse 'x'"));
  EXPECT_THAT(EvalError("false || 1"), HasSubstr("operand of '||' is int, expected bool"));
  EXPECT_THAT(EvalError("!'a'"), HasSubstr("operand of '!' is string, expected bool"));
}

TEST(CelConditionTest, ParameterReferences) {
  json params = {{"pipelinechannel--flip-coin-Output", "heads"}, {"n", 7}, {"flag", true}};
  EXPECT_TRUE(
      Eval("inputs.parameter_values['pipelinechannel--flip-coin-Output'] == 'heads'", params));
  EXPECT_TRUE(Eval("inputs.parameter_values[\"n\"] > 5", params));
  EXPECT_TRUE(Eval("inputs.parameters['flag'] == true", params));
  EXPECT_TRUE(Eval("inputs . parameter_values [ 'flag' ]", params));
}

TEST(CelConditionTest, MissingParameterNamesTheKey) {
  EXPECT_THAT(EvalError("inputs.parameter_values['pipelinechannel--x'] == 1", {{"y", 1}}),
              HasSubstr("no parameter value for 'pipelinechannel--x'"));
  EXPECT_THAT(EvalError("inputs.parameter_values['x'] == 1", json()),
              HasSubstr("no parameter value for 'x'"));
}

TEST(CelConditionTest, Casts) {
  EXPECT_TRUE(Eval("int('3') == 3"));
  EXPECT_TRUE(Eval("int('-42') == -42"));
  EXPECT_TRUE(Eval("int(3.9) == 3"));
  EXPECT_TRUE(Eval("int(-3.9) == -3"));
  EXPECT_TRUE(Eval("int(7) == 7"));
  EXPECT_TRUE(Eval("double('2.5') == 2.5"));
  EXPECT_TRUE(Eval("double(2) == 2.0"));
  EXPECT_TRUE(Eval("string(5) == '5'"));
  EXPECT_TRUE(Eval("string(2.5) == '2.5'"));
  // Go's FormatFloat(d, 'g', -1, 64), as cel-go uses.
  EXPECT_TRUE(Eval("string(3.0) == '3'"));
  EXPECT_TRUE(Eval("string(123456.0) == '123456'"));
  EXPECT_TRUE(Eval("string(1e6) == '1e+06'"));
  EXPECT_TRUE(Eval("string(0.0001) == '0.0001'"));
  EXPECT_TRUE(Eval("string(0.00001) == '1e-05'"));
  EXPECT_TRUE(Eval("string(-1.5e300) == '-1.5e+300'"));
  EXPECT_TRUE(Eval("string(0.1) == '0.1'"));
  EXPECT_TRUE(Eval("string(true) == 'true'"));
  EXPECT_TRUE(Eval("string('s') == 's'"));
  EXPECT_TRUE(Eval("bool('true') && !bool('false') && bool('1') && !bool('f')"));
  EXPECT_TRUE(Eval("bool(true)"));
  // What the SDK emits for an integer parameter that kfp delivers as a double.
  EXPECT_TRUE(Eval("int(inputs.parameter_values['n']) == 3", {{"n", 3.0}}));
}

TEST(CelConditionTest, CastErrors) {
  EXPECT_THAT(EvalError("int('x') == 1"), HasSubstr("int() cannot parse 'x'"));
  EXPECT_THAT(EvalError("int('3.5') == 3"), HasSubstr("int() cannot parse '3.5'"));
  EXPECT_THAT(EvalError("int(' 3') == 3"), HasSubstr("int() cannot parse"));
  EXPECT_THAT(EvalError("int(1e300) == 1"), HasSubstr("int() overflow"));
  EXPECT_THAT(EvalError("int(true) == 1"), HasSubstr("no matching overload for int(bool)"));
  EXPECT_THAT(EvalError("double('abc') == 1.0"), HasSubstr("double() cannot parse 'abc'"));
  EXPECT_THAT(EvalError("string(null) == ''"), HasSubstr("no matching overload for string(null)"));
  EXPECT_THAT(EvalError("bool('yes')"), HasSubstr("bool() cannot parse 'yes'"));
  EXPECT_THAT(EvalError("bool(1)"), HasSubstr("no matching overload for bool(int)"));
}

TEST(CelConditionTest, WhatTheSdkEmitsForIfElifElse) {
  // dsl.If(n < 5000) / dsl.Elif(n > 5000) / dsl.Else(), as compiled by kfp 2.x.
  const std::string n = "int(inputs.parameter_values['pipelinechannel--int-0-to-9999-Output'])";
  const std::string if_branch = n + " < 5000";
  const std::string elif_branch = "!(" + n + " < 5000) && " + n + " > 5000";
  const std::string else_branch = "!(" + n + " < 5000) && !(" + n + " > 5000)";
  for (double value : {10.0, 5000.0, 9000.0}) {
    json params = {{"pipelinechannel--int-0-to-9999-Output", value}};
    int taken = Eval(if_branch, params) + Eval(elif_branch, params) + Eval(else_branch, params);
    EXPECT_EQ(taken, 1) << value;
  }
  EXPECT_TRUE(Eval(else_branch, {{"pipelinechannel--int-0-to-9999-Output", 5000}}));
  EXPECT_TRUE(Eval("!(inputs.parameter_values['pipelinechannel--is-even-or-odd-Output'] == 'even')",
                   {{"pipelinechannel--is-even-or-odd-Output", "odd"}}));
  EXPECT_TRUE(Eval("!(inputs.parameter_values['a'] == 'x') && inputs.parameter_values['b'] > 2",
                   {{"a", "y"}, {"b", 3}}));
  EXPECT_FALSE(Eval("!(inputs.parameter_values['a'] == 'x') && inputs.parameter_values['b'] > 2",
                    {{"a", "x"}, {"b", 3}}));
  EXPECT_TRUE(Eval("inputs.parameter_values['pipelinechannel--repeat'] == true",
                   {{"pipelinechannel--repeat", true}}));
  // An int channel against a float constant: the SDK promotes with double(); Python's str(float)
  // may use an exponent.
  EXPECT_TRUE(Eval("double(int(inputs.parameter_values['n'])) < 1e+20", {{"n", 7.0}}));
  EXPECT_TRUE(Eval("inputs.parameter_values['x'] >= 1e-05", {{"x", 0.5}}));
  EXPECT_TRUE(Eval("inputs.parameter_values['s'] != 'heads'", {{"s", "tails"}}));
}

TEST(CelConditionTest, SyntaxErrorsNameTheColumn) {
  EXPECT_THAT(ParseError(""), HasSubstr("column 1: empty condition"));
  EXPECT_THAT(ParseError("1 = 1"), HasSubstr("column 3: '=' is not an operator"));
  EXPECT_THAT(ParseError("true & false"), HasSubstr("column 6:"));
  EXPECT_THAT(ParseError("true | false"), HasSubstr("column 6:"));
  EXPECT_THAT(ParseError("(1 == 1"), HasSubstr("column 8: unexpected end of condition"));
  EXPECT_THAT(ParseError("1 == 1)"), HasSubstr("column 7: unexpected token"));
  EXPECT_THAT(ParseError("'abc"), HasSubstr("column 1: unterminated string literal"));
  EXPECT_THAT(ParseError("1 == "), HasSubstr("expected a value"));
  EXPECT_THAT(ParseError("x == 1"), HasSubstr("column 1: unknown identifier 'x'"));
  EXPECT_THAT(ParseError("size('a') == 1"), HasSubstr("column 1: unsupported function 'size'"));
  EXPECT_THAT(ParseError("inputs.outputs['a']"),
              HasSubstr("column 8: expected 'parameter_values'"));
  EXPECT_THAT(ParseError("inputs.parameter_values[x]"), HasSubstr("column 25: expected a string"));
  EXPECT_THAT(ParseError("inputs.parameter_values['a'].b"),
              HasSubstr("column 29: field or index access"));
  EXPECT_THAT(ParseError("1 == 1 # c"), HasSubstr("column 8: unexpected character '#'"));
  EXPECT_THAT(ParseError("12abc"), HasSubstr("column 3:"));
  EXPECT_THAT(ParseError("9223372036854775808 > 1"), HasSubstr("out of range"));
  EXPECT_THAT(ParseError("'\\q'"), HasSubstr("unsupported escape"));
  EXPECT_THAT(ParseError(std::string(1000, '(') + "true" + std::string(1000, ')')),
              HasSubstr("nested too deeply"));
  EXPECT_THAT(ParseError(std::string(1000, '!') + "true"), HasSubstr("nested too deeply"));
}

TEST(CelConditionTest, NonBoolResultIsAnError) {
  EXPECT_THAT(EvalError("1"), HasSubstr("condition evaluates to int, expected bool"));
  EXPECT_THAT(EvalError("inputs.parameter_values['s']", {{"s", "true"}}),
              HasSubstr("evaluates to string"));
}

TEST(CelConditionTest, ListsAndMapsCompareByValue) {
  json params = {{"l", json::array({1, 2})}, {"m", {{"a", 1}}}, {"l2", json::array({1.0, 2.0})}};
  EXPECT_TRUE(Eval("inputs.parameter_values['l'] == inputs.parameter_values['l2']", params));
  EXPECT_FALSE(Eval("inputs.parameter_values['l'] == inputs.parameter_values['m']", params));
  EXPECT_THAT(EvalError("inputs.parameter_values['l'] < inputs.parameter_values['l2']", params),
              HasSubstr("on list and list"));
}

TEST(CelConditionTest, CompiledConditionIsReusableAndKeepsItsText) {
  absl::StatusOr<CompiledCondition> condition = ParseCondition("inputs.parameter_values['n'] > 1");
  ASSERT_TRUE(condition.ok());
  EXPECT_EQ(condition->text(), "inputs.parameter_values['n'] > 1");
  CompiledCondition copy = *condition;
  EXPECT_TRUE(*Evaluate(copy, {{"n", 2}}));
  EXPECT_FALSE(*Evaluate(*condition, {{"n", 1}}));
}

}  // namespace
}  // namespace regatta::pipelines::cel

namespace regatta::pipelines::cel {
namespace {

// Random token soup: parsing never crashes, and every rejection names a column.
TEST(CelConditionTest, RandomInputIsParsedOrRejectedWithAColumn) {
  const std::vector<std::string> pieces = {"inputs",
                                           ".",
                                           "parameter_values",
                                           "[",
                                           "]",
                                           "'k'",
                                           "\"k\"",
                                           "(",
                                           ")",
                                           "!",
                                           "-",
                                           "&&",
                                           "||",
                                           "==",
                                           "!=",
                                           "<",
                                           "<=",
                                           ">",
                                           ">=",
                                           "1",
                                           "2.5",
                                           "1e3",
                                           "true",
                                           "null",
                                           "int",
                                           "double",
                                           "string",
                                           "bool",
                                           " ",
                                           "'",
                                           "=",
                                           "&",
                                           "x",
                                           "9223372036854775808"};
  std::mt19937 random(42);
  int parsed = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text;
    int length = 1 + static_cast<int>(random() % 12);
    for (int j = 0; j < length; ++j) text += pieces[random() % pieces.size()];
    absl::StatusOr<CompiledCondition> condition = ParseCondition(text);
    if (!condition.ok()) {
      EXPECT_THAT(std::string(condition.status().message()), ::testing::StartsWith("column "))
          << text;
      continue;
    }
    ++parsed;
    absl::StatusOr<bool> result = Evaluate(*condition, {{"k", 1}});
    if (!result.ok()) {
      EXPECT_THAT(std::string(result.status().message()),
                  ::testing::AnyOf(::testing::StartsWith("column "),
                                   ::testing::StartsWith("condition evaluates to")))
          << text;
    }
  }
  EXPECT_GT(parsed, 100);  // the generator does reach the evaluator
}

}  // namespace
}  // namespace regatta::pipelines::cel
