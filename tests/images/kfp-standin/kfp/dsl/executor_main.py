"""python3 -m kfp.dsl.executor_main: runs one lightweight component function.

Reads --executor_input (the ExecutorInput JSON), calls --function_to_execute from
--component_module_path with its inputs, and writes the ExecutorOutput JSON to the file the
input names (outputs.outputFile).
"""
import argparse
import importlib.util
import inspect
import json
import os
import sys

from kfp import dsl


def _artifact(entry, artifact_type):
    cls = artifact_type if isinstance(artifact_type, type) else dsl.Artifact
    return cls(name=entry.get("name", ""), uri=entry.get("uri", ""),
               metadata=entry.get("metadata") or {})


def _cast(value, annotation):
    if annotation is int:
        return int(value)
    if annotation is float:
        return float(value)
    if annotation is bool:
        return value if isinstance(value, bool) else str(value).lower() == "true"
    return value


def main(argv):
    parser = argparse.ArgumentParser(prog="kfp.dsl.executor_main")
    parser.add_argument("--component_module_path", required=True)
    parser.add_argument("--executor_input", required=True)
    parser.add_argument("--function_to_execute", required=True)
    args, _ = parser.parse_known_args(argv)

    executor_input = json.loads(args.executor_input)
    inputs = executor_input.get("inputs", {})
    outputs = executor_input.get("outputs", {})

    spec = importlib.util.spec_from_file_location("ephemeral_component", args.component_module_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    func = getattr(module, args.function_to_execute)

    kwargs = {}
    output_artifacts = {}
    for name, parameter in inspect.signature(func).parameters.items():
        annotation = parameter.annotation
        kind = getattr(annotation, "kind", None)
        if kind == "input":
            entries = inputs.get("artifacts", {}).get(name, {}).get("artifacts", [])
            kwargs[name] = _artifact(entries[0], annotation.artifact_type) if entries else None
        elif kind == "output":
            entries = outputs.get("artifacts", {}).get(name, {}).get("artifacts", [])
            artifact = _artifact(entries[0], annotation.artifact_type)
            dsl._ensure_parent(artifact.path)
            output_artifacts[name] = artifact
            kwargs[name] = artifact
        elif name in inputs.get("parameterValues", {}):
            kwargs[name] = _cast(inputs["parameterValues"][name], annotation)
        elif parameter.default is inspect.Parameter.empty:
            sys.exit("executor_main: no value for parameter %r" % name)

    result = func(**kwargs)

    executor_output = {}
    if result is not None:
        executor_output["parameterValues"] = {"Output": result}
    if output_artifacts:
        executor_output["artifacts"] = {
            name: {"artifacts": [{"name": a.name, "uri": a.uri, "metadata": a.metadata}]}
            for name, a in output_artifacts.items()
        }
    output_file = outputs.get("outputFile")
    if output_file:
        dsl._ensure_parent(output_file)
        with open(output_file, "w") as f:
            json.dump(executor_output, f)


if __name__ == "__main__":
    main(sys.argv[1:])
