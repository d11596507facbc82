// CompileAuthoring's errors: each rule rejects its document with INVALID_ARGUMENT naming the path
// in the authoring document.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/pipelines/authoring/authoring.h"

namespace regatta::pipelines::authoring {
namespace {

using ::testing::HasSubstr;

struct ErrorCase {
  std::string name;
  std::string yaml;
  std::string error;  // a substring of the message, starting with the path
};

class CompileErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(CompileErrorTest, NamesThePath) {
  absl::StatusOr<ir::PipelineSpec> spec = CompileAuthoring(GetParam().yaml);
  ASSERT_FALSE(spec.ok()) << GetParam().yaml;
  EXPECT_TRUE(absl::IsInvalidArgument(spec.status())) << spec.status();
  EXPECT_THAT(std::string(spec.status().message()), HasSubstr(GetParam().error));
}

// A two-task pipeline plus `extra` under tasks.b (indented by four spaces).
std::string WithB(const std::string& extra) {
  return "name: p\nparams: {rows: int, xs: list}\ntasks:\n  a:\n    command: [a]\n"
         "    outputs: {n: int, data: dataset, xs: list}\n  b:\n    command: [b]\n" +
         extra;
}

const ErrorCase kCases[] = {
    {"NotAMap", "- a\n", "expected a map with name and tasks"},
    {"NotYaml", "name: [\n", "line "},
    {"UnknownTopLevelKey", "nmae: p\ntasks: {a: {command: [a]}}\n", "nmae: unknown key"},
    {"MissingName", "tasks: {a: {command: [a]}}\n", "name: missing"},
    {"MissingTasks", "name: p\n", "tasks: missing"},
    {"UnknownParamType", "name: p\nparams: {x: integr}\ntasks: {a: {command: [a]}}\n",
     "params.x: unknown type 'integr'"},
    {"ParamDefaultOfAnotherType",
     "name: p\nparams: {x: {type: int, default: abc}}\ntasks: {a: {command: [a]}}\n",
     "params.x.default: \"abc\" is not of type int"},
    {"ParamWithoutTypeOrDefault",
     "name: p\nparams: {x: {description: d}}\ntasks: {a: {command: [a]}}\n",
     "params.x: needs a type or a default"},
    {"ParamName", "name: p\nparams: {2x: int}\ntasks: {a: {command: [a]}}\n", "params.2x: "},
    {"TaskName", "name: p\ntasks: {Make_Data: {command: [a]}}\n",
     "tasks.Make_Data: a task name is lowercase"},
    {"ReservedTaskName", "name: p\ntasks: {for-loop-1: {command: [a]}}\n",
     "tasks.for-loop-1: 'for-loop-1' is reserved"},
    {"TaskNotAMap", "name: p\ntasks: {a: [x]}\n", "tasks.a: expected a map"},
    {"UnknownTaskKey", "name: p\ntasks: {a: {command: [a], imgae: x}}\n",
     "tasks.a.imgae: unknown key"},
    {"MissingCommand", "name: p\ntasks: {a: {image: x}}\n", "tasks.a.command: missing"},
    {"CommandNotAList", "name: p\ntasks: {a: {command: {x: 1}}}\n",
     "tasks.a.command: expected a list"},
    {"UnknownOutputType", "name: p\ntasks: {a: {command: [a], outputs: {x: tensor}}}\n",
     "tasks.a.outputs.x: unknown type 'tensor'"},
    {"NoSuchOutput",
     "name: p\ntasks:\n  make-data: {command: [a], outputs: {data: dataset}}\n"
     "  train: {command: [t], inputs: {data: make-data.dta}}\n",
     "tasks.train.inputs.data: task 'make-data' has no output 'dta'"},
    {"NoSuchTask", WithB("    inputs: {x: mk.data}\n"), "tasks.b.inputs.x: no task 'mk'"},
    {"NoSuchParam", WithB("    inputs: {x: params.nope}\n"),
     "tasks.b.inputs.x: no parameter 'nope' in params"},
    {"NullInput", WithB("    inputs: {x: null}\n"), "tasks.b.inputs.x: expected a value"},
    {"OwnOutput", WithB("    inputs: {x: b.n}\n    outputs: {n: int}\n"),
     "tasks.b.inputs.x: a task cannot read its own output"},
    {"CollectedFromAPlainTask", WithB("    inputs: {x: 'a.n[*]'}\n"),
     "tasks.b.inputs.x: [*] collects the outputs of a for_each task; 'a' has no for_each"},
    {"LoopOutputWithoutCollect",
     "name: p\ntasks:\n  a: {command: [a], for_each: [1, 2], outputs: {n: int}}\n"
     "  b: {command: [b], inputs: {x: a.n}}\n",
     "tasks.b.inputs.x: task 'a' runs once per item (for_each); write a.n[*]"},
    {"ConditionalOutput",
     "name: p\nparams: {rows: int}\ntasks:\n"
     "  a: {command: [a], when: params.rows > 1, outputs: {n: int}}\n"
     "  b: {command: [b], inputs: {x: a.n}}\n",
     "tasks.b.inputs.x: task 'a' runs only when its condition holds"},
    {"AfterUnknownTask", WithB("    after: [zz]\n"), "tasks.b.after: no task 'zz'"},
    {"AfterItself", WithB("    after: b\n"), "tasks.b.after: a task cannot run after itself"},
    {"AfterConditionalTask",
     "name: p\nparams: {rows: int}\ntasks:\n  a: {command: [a], when: params.rows > 1}\n"
     "  b: {command: [b], after: [a]}\n",
     "tasks.b.after: task 'a' has a when condition"},
    {"Cycle",
     "name: p\ntasks:\n  a: {command: [a], after: [b]}\n  b: {command: [b], after: [c]}\n"
     "  c: {command: [c], after: [a]}\n",
     "tasks: dependency cycle a -> b -> c -> a"},
    {"PlaceholderUnknownInput", WithB("    args: [x, '{{inputs.x}}']\n"),
     "tasks.b.args[1]: '{{inputs.x}}': no input 'x' in inputs"},
    {"PlaceholderUnknownOutput", "name: p\ntasks: {a: {command: [a, '{{outputs.out}}']}}\n",
     "tasks.a.command[1]: '{{outputs.out}}': task has no output 'out'"},
    {"PlaceholderNotAReference", "name: p\ntasks: {a: {command: ['{{foo}}']}}\n",
     "tasks.a.command[0]: '{{foo}}' is not a placeholder"},
    {"PlaceholderUnclosed", "name: p\ntasks: {a: {command: ['{{inputs.x']}}\n",
     "tasks.a.command[0]: '{{' without '}}'"},
    {"ParameterOutputHasNoUri",
     "name: p\ntasks: {a: {command: [a, '{{outputs.n.uri}}'], outputs: {n: int}}}\n",
     "tasks.a.command[1]: '{{outputs.n.uri}}': a parameter output has no uri"},
    {"PlaceholderNeedsATakenInputName",
     WithB("    inputs: {rows: 3}\n    args: ['{{params.rows}}']\n"),
     "tasks.b.args[0]: '{{params.rows}}' needs an input named 'rows' but inputs.rows is something"},
    {"StatusPlaceholderOutsideTheExitHandler", WithB("    args: ['{{$status}}']\n"),
     "tasks.b.args[0]: $status (the pipeline's final status) is only for the exit_handler"},
    {"StatusOutsideTheExitHandler", WithB("    inputs: {s: $status}\n"),
     "tasks.b.inputs.s: $status (the pipeline's final status) is only for the exit_handler"},
    {"ExitHandlerReadsATaskOutput",
     "name: p\ntasks: {a: {command: [a], outputs: {n: int}}}\n"
     "exit_handler: {e: {command: [e], inputs: {x: a.n}}}\n",
     "exit_handler.e.inputs.x: the exit handler reads params, constants and $status"},
    {"ExitHandlerWithWhen",
     "name: p\nparams: {rows: int}\ntasks: {a: {command: [a]}}\n"
     "exit_handler: {e: {command: [e], when: params.rows > 1}}\n",
     "exit_handler.e.when: not allowed on the exit handler task"},
    {"TwoExitHandlers",
     "name: p\ntasks: {a: {command: [a]}}\nexit_handler: {e: {command: [e]}, f: {command: [f]}}\n",
     "exit_handler: expected one task"},
    {"ExitHandlerNameTaken",
     "name: p\ntasks: {a: {command: [a]}}\nexit_handler: {a: {command: [e]}}\n",
     "exit_handler.a: a task of that name exists already"},
    {"WhenUnknownName", WithB("    when: rows > 1\n"),
     "tasks.b.when: 'rows' is not params.NAME, TASK.OUTPUT or the loop item"},
    {"WhenUnknownTask", WithB("    when: x.y > 1\n"), "tasks.b.when: no task 'x'"},
    {"WhenSyntax", WithB("    when: params.rows >\n"),
     "tasks.b.when: not a supported condition: unexpected end of condition, expected a value in "
     "'params.rows >'"},
    {"WhenOnAnArtifact", WithB("    when: a.data == 'x'\n"),
     "tasks.b.when: 'a.data' is an artifact"},
    {"WhenUnterminatedString", WithB("    when: \"params.rows == 'x\"\n"),
     "tasks.b.when: unterminated string"},
    {"LoopWithoutItems", WithB("    for_each: {parallelism: 2}\n"),
     "tasks.b.for_each.items: missing"},
    {"LoopEmptyItems", WithB("    for_each: []\n"), "tasks.b.for_each: must not be empty"},
    {"LoopOverANonList", WithB("    for_each: {items: params.rows}\n"),
     "tasks.b.for_each.items: 'params.rows' is not a list parameter or a list output"},
    {"LoopOverAnUnknownOutput", WithB("    for_each: a.zz\n"),
     "tasks.b.for_each: task 'a' has no output 'zz'"},
    {"LoopParallelism", WithB("    for_each: {items: [1], parallelism: 0}\n"),
     "tasks.b.for_each.parallelism: must be at least 1"},
    {"LoopItemNamedAfterATask", WithB("    for_each: {items: [1], as: a}\n"),
     "tasks.b.for_each.as: 'a' is a task name"},
    {"LoopItemType", WithB("    for_each: {items: [1], type: tensor}\n"),
     "tasks.b.for_each.type: unknown type 'tensor'"},
    {"NoSuchLoop", WithB("    loop: nope\n"), "tasks.b.loop: no loop 'nope' in loops"},
    {"ForEachAndLoop",
     "name: p\nloops: {l: [1]}\ntasks: {a: {command: [a], for_each: [1], loop: l}}\n",
     "tasks.a.loop: either for_each or loop"},
    {"UnusedLoop", "name: p\nloops: {l: [1]}\ntasks: {a: {command: [a]}}\n",
     "loops.l: no task has this loop"},
    {"LoopName", "name: p\nloops: {L: [1]}\ntasks: {a: {command: [a], loop: L}}\n",
     "loops.L: a loop name is lowercase"},
    {"CollectedInTheSameLoop",
     "name: p\nloops: {l: [1]}\ntasks:\n  a: {command: [a], loop: l, outputs: {n: int}}\n"
     "  b: {command: [b], loop: l, inputs: {x: 'a.n[*]'}}\n",
     "tasks.b.inputs.x: task 'a' runs in the same loop; read a.n (this item's) without [*]"},
    {"LoopOverItsOwnOutput",
     "name: p\nloops: {l: {items: a.xs}}\ntasks:\n  a: {command: [a], loop: l, outputs: {xs: "
     "list}}\n",
     "loops.l.items: a loop cannot iterate over an output of its own tasks"},
    {"CycleInALoop",
     "name: p\nloops: {l: [1]}\ntasks:\n  a: {command: [a], loop: l, after: b}\n"
     "  b: {command: [b], loop: l, after: a}\n",
     "loops.l: dependency cycle a -> b -> a"},
    {"CycleThroughALoop",
     "name: p\nloops: {l: [1]}\ntasks:\n  a: {command: [a], loop: l, after: x}\n"
     "  b: {command: [b], loop: l, outputs: {n: int}}\n"
     "  x: {command: [x], inputs: {ns: 'b.n[*]'}}\n",
     "tasks: dependency cycle loops.l -> x -> loops.l"},
    {"ImportWithACommand", "name: p\ntasks: {a: {import: {uri: 'gs://b/k'}, command: [a]}}\n",
     "tasks.a.command: an import task runs no container"},
    {"ImportWithoutUri", "name: p\ntasks: {a: {import: {type: dataset}}}\n",
     "tasks.a.import.uri: missing"},
    {"ImportType", "name: p\ntasks: {a: {import: {uri: 'gs://b/k', type: tensor}}}\n",
     "tasks.a.import.type: unknown artifact type 'tensor'"},
    {"ImportUriNotAString", WithB("  c: {import: {uri: params.rows}}\n"),
     "tasks.c.import.uri: expected a URI string or a reference to one"},
    {"RetryMaxBackoff", WithB("    retry: {max: 1, max_backoff: 2h}\n"),
     "tasks.b.retry.max_backoff: must be between 0 and 1h"},
    {"RetryBackoff", WithB("    retry: {max: 1, backoff: soon}\n"),
     "tasks.b.retry.backoff: expected a duration"},
    {"RetryWithoutMax", WithB("    retry: {backoff: 1s}\n"), "tasks.b.retry.max: missing"},
    {"RetryFactor", WithB("    retry: {max: 1, factor: -1}\n"),
     "tasks.b.retry.factor: expected a number >= 0"},
    {"Cpu", WithB("    resources: {cpu: lots}\n"), "tasks.b.resources.cpu: expected cores"},
    {"Memory", WithB("    resources: {memory: 64m}\n"), "tasks.b.resources.memory: expected bytes"},
    {"AcceleratorWithoutType", WithB("    resources: {accelerator: {count: 1}}\n"),
     "tasks.b.resources.accelerator.type: missing"},
    {"CacheNotABool", WithB("    cache: sometimes\n"), "tasks.b.cache: expected true or false"},
    {"EnvNotAString", WithB("    env: {A: [1]}\n"), "tasks.b.env.A: expected a string"},
    {"PipelineOutputNotAReference", WithB("outputs: {x: hello}\n"),
     "outputs.x: expected TASK.OUTPUT"},
    {"PipelineOutputWithExitHandler",
     "name: p\ntasks: {a: {command: [a], outputs: {n: int}}}\n"
     "exit_handler: {e: {command: [e]}}\noutputs: {x: a.n}\n",
     "outputs.x: pipeline outputs cannot be combined with an exit_handler"},
};

INSTANTIATE_TEST_SUITE_P(Rules, CompileErrorTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<ErrorCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace regatta::pipelines::authoring
