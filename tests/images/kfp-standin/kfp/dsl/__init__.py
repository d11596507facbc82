"""The names a compiled lightweight component's source imports from kfp.dsl."""
import json
import os

__all__ = [
    "Artifact", "Dataset", "Model", "Metrics", "HTML", "Markdown", "Input", "Output",
    "InputPath", "OutputPath", "component",
]

# kfp's local paths of bucket uris (the buckets are mounted there).
_BUCKET_MOUNTS = (("gs://", "/gcs/"), ("minio://", "/minio/"), ("s3://", "/s3/"))


class Artifact:
    schema_title = "system.Artifact"

    def __init__(self, name="", uri="", metadata=None):
        self.name = name
        self.uri = uri
        self.metadata = dict(metadata or {})

    @property
    def path(self):
        for scheme, mount in _BUCKET_MOUNTS:
            if self.uri.startswith(scheme):
                return mount + self.uri[len(scheme):]
        return self.uri


class Dataset(Artifact):
    schema_title = "system.Dataset"


class Model(Artifact):
    schema_title = "system.Model"


class HTML(Artifact):
    schema_title = "system.HTML"


class Markdown(Artifact):
    schema_title = "system.Markdown"


class Metrics(Artifact):
    schema_title = "system.Metrics"

    def log_metric(self, metric, value):
        self.metadata[metric] = value


class _Marker:
    """Input[T] / Output[T]: which artifacts a parameter receives."""

    def __init__(self, kind, artifact_type):
        self.kind = kind
        self.artifact_type = artifact_type


class Input:
    def __class_getitem__(cls, artifact_type):
        return _Marker("input", artifact_type)


class Output:
    def __class_getitem__(cls, artifact_type):
        return _Marker("output", artifact_type)


class InputPath:
    def __init__(self, type=None):  # noqa: A002 (kfp's own argument name)
        self.kind = "input_path"


class OutputPath:
    def __init__(self, type=None):  # noqa: A002
        self.kind = "output_path"


def component(func=None, **unused_options):
    """@dsl.component with or without options: the function itself."""
    if func is None:
        return lambda f: f
    return func


def _dumps(value):
    return json.dumps(value, sort_keys=True)


def _ensure_parent(path):
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
