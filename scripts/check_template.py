"""Checks that the alarms and the dashboard in template.yaml watch things that exist.

CloudWatch accepts an alarm on any namespace, metric and dimension, and an alarm on a metric
nobody publishes never fires. So this checks that:

- every metric the alarms and the dashboard name is a real one: FunctionName is a `!Ref` to a
  function of the template, QueueName a `!GetAtt <queue>.QueueName`, ApiId a `!Ref` to the HTTP
  API on Stage `$default`, each AWS namespace uses only its own dimensions, and the stack's
  namespace is the functions' METRICS_NAMESPACE with the metric names of
  shared/domain/src/metrics.rs (StreamTransitions by Transition, the others without dimensions);
- the alarms cover what must be watched: every dead-letter queue's depth, errors and throttles
  of every function, the HTTP API's 5xx, the iterator age of every stream-triggered function,
  events the relay set aside and the age of the oldest pending outbox event;
- every alarm notifies AlarmTopicArn (when given) on entering and leaving ALARM.

Usage: check_template.py [--self-test] [TEMPLATE]. Prints one line per problem; exits 1 on any.
--self-test breaks an in-memory copy of the template in several ways and checks that each is
refused. Runs with the cfn-lint virtualenv's python (scripts/venv.sh cfn-lint).
"""

from __future__ import annotations

import copy
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cfnlint.decode import decode

ROOT = Path(__file__).resolve().parent.parent
METRICS_RS = ROOT / "shared/domain/src/metrics.rs"
TRANSITIONS_RS = ROOT / "shared/domain/src/domain/stream/mod.rs"

FUNCTION = "AWS::Serverless::Function"
QUEUE = "AWS::SQS::Queue"
HTTP_API = "AWS::Serverless::HttpApi"
ALARM = "AWS::CloudWatch::Alarm"
DASHBOARD = "AWS::CloudWatch::Dashboard"

# The dimensions each AWS namespace is watched by here (all required), and its metric names.
AWS_NAMESPACES: dict[str, tuple[set[str], set[str]]] = {
    "AWS/Lambda": (
        {"FunctionName"},
        {
            "Errors",
            "Throttles",
            "Invocations",
            "Duration",
            "ConcurrentExecutions",
            "IteratorAge",
            "AsyncEventAge",
            "AsyncEventsDropped",
            "DeadLetterErrors",
            "DestinationDeliveryFailures",
        },
    ),
    "AWS/SQS": (
        {"QueueName"},
        {
            "ApproximateNumberOfMessagesVisible",
            "ApproximateNumberOfMessagesNotVisible",
            "ApproximateAgeOfOldestMessage",
            "NumberOfMessagesSent",
            "NumberOfMessagesReceived",
            "NumberOfMessagesDeleted",
        },
    ),
    "AWS/ApiGateway": (
        {"ApiId", "Stage"},
        {"Count", "4xx", "5xx", "Latency", "IntegrationLatency", "DataProcessed"},
    ),
}
TRANSITION_DIMENSION = "Transition"
DIMENSIONED_METRIC = "StreamTransitions"
STREAM_EVENT_TYPES = {"DynamoDB", "Kinesis"}


def load_template(path: Path) -> dict[str, Any]:
    template, matches = decode(str(path))
    if template is None:
        raise SystemExit(f"{path}: cannot parse: {matches}")
    # Plain dicts, lists and strings (cfn-lint's nodes carry line marks).
    return json.loads(json.dumps(template))


def name_arms(path: Path, enum: str) -> set[str]:
    """The `Enum::X => "name"` arms of the `fn name` methods in a Rust file."""
    names: set[str] = set()
    text = path.read_text()
    for body in re.findall(r"fn name\(self\)[^{]*\{(.*?)\n    \}", text, re.DOTALL):
        names.update(re.findall(rf'{enum}::\w+ => "(\w+)"', body))
    return names


def metric_names() -> set[str]:
    return name_arms(METRICS_RS, "Metric")


def transition_names() -> set[str]:
    return name_arms(TRANSITIONS_RS, "Transition")


def ref(value: Any) -> str | None:
    if isinstance(value, dict) and set(value) == {"Ref"} and isinstance(value["Ref"], str):
        return value["Ref"]
    return None


def get_att(value: Any) -> tuple[str, str] | None:
    if not isinstance(value, dict) or set(value) != {"Fn::GetAtt"}:
        return None
    target = value["Fn::GetAtt"]
    if isinstance(target, str) and "." in target:
        resource, attribute = target.split(".", 1)
        return resource, attribute
    if isinstance(target, list) and len(target) == 2 and all(isinstance(t, str) for t in target):
        return target[0], target[1]
    return None


def show(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


class Checker:
    def __init__(self, template: dict[str, Any], metrics: set[str], transitions: set[str]):
        self.template = template
        self.resources: dict[str, Any] = template.get("Resources", {})
        self.metrics = metrics
        self.transitions = transitions
        self.problems: list[str] = []
        self.namespace = (
            template.get("Globals", {})
            .get("Function", {})
            .get("Environment", {})
            .get("Variables", {})
            .get("METRICS_NAMESPACE")
        )
        # What the alarms watch: (namespace, metric, frozenset of dimension items).
        self.watched: set[tuple[str, str, frozenset[tuple[str, str]]]] = set()

    def of_type(self, kind: str) -> list[str]:
        return [name for name, r in self.resources.items() if r.get("Type") == kind]

    def problem(self, where: str, message: str) -> None:
        self.problems.append(f"template.yaml: {where}: {message}")

    # --- one metric ------------------------------------------------------------------------

    def check_metric(
        self, where: str, namespace: Any, name: Any, dimensions: dict[str, Any]
    ) -> tuple[str, str, frozenset[tuple[str, str]]] | None:
        """Checks one metric; returns its key (dimension values as resource names) if real."""
        ok = True
        keyed: dict[str, str] = {}
        if isinstance(namespace, str) and namespace in AWS_NAMESPACES:
            allowed, names = AWS_NAMESPACES[namespace]
            if name not in names:
                self.problem(where, f"{namespace} has no metric {show(name)} watched here")
                ok = False
            for dimension in sorted(set(dimensions) - allowed):
                self.problem(where, f"{namespace} has no dimension {dimension}")
                ok = False
            for dimension in sorted(allowed - set(dimensions)):
                self.problem(where, f"{namespace} metric {name} needs dimension {dimension}")
                ok = False
            for dimension, value in dimensions.items():
                resolved = self.dimension_value(where, dimension, value)
                if resolved is None:
                    ok = False
                else:
                    keyed[dimension] = resolved
        elif namespace == self.namespace and namespace is not None:
            namespace = "METRICS_NAMESPACE"
            if name not in self.metrics:
                self.problem(
                    where,
                    f"metric {show(name)} is not one shared/domain/src/metrics.rs emits "
                    f"({', '.join(sorted(self.metrics))})",
                )
                ok = False
            expected = {TRANSITION_DIMENSION} if name == DIMENSIONED_METRIC else set()
            if set(dimensions) != expected:
                self.problem(
                    where,
                    f"{name} is published with dimensions {sorted(expected)}, "
                    f"not {sorted(dimensions)}",
                )
                ok = False
            value = dimensions.get(TRANSITION_DIMENSION)
            if value is not None:
                if value not in self.transitions:
                    self.problem(where, f"no transition named {show(value)}")
                    ok = False
                else:
                    keyed[TRANSITION_DIMENSION] = value
        else:
            self.problem(
                where,
                f"namespace {show(namespace)} is neither an AWS one watched here "
                f"({', '.join(sorted(AWS_NAMESPACES))}) nor METRICS_NAMESPACE {show(self.namespace)}",
            )
            ok = False
        if not ok or not isinstance(name, str):
            return None
        return namespace, name, frozenset(keyed.items())

    def dimension_value(self, where: str, dimension: str, value: Any) -> str | None:
        if dimension == "FunctionName":
            target = ref(value)
            kind = self.resources.get(target, {}).get("Type") if target else None
            if kind != FUNCTION:
                self.problem(where, f"FunctionName {show(value)} is not a !Ref to a function")
                return None
            return target
        if dimension == "QueueName":
            target = get_att(value)
            kind = self.resources.get(target[0], {}).get("Type") if target else None
            if target is None or target[1] != "QueueName" or kind != QUEUE:
                self.problem(where, f"QueueName {show(value)} is not a !GetAtt <queue>.QueueName")
                return None
            return target[0]
        if dimension == "ApiId":
            target = ref(value)
            kind = self.resources.get(target, {}).get("Type") if target else None
            if kind != HTTP_API:
                self.problem(where, f"ApiId {show(value)} is not a !Ref to the HTTP API")
                return None
            return target
        if dimension == "Stage":
            if value != "$default":
                self.problem(where, f"Stage {show(value)} is not the HTTP API's $default")
                return None
            return value
        return None

    def dimensions(self, where: str, raw: Any) -> dict[str, Any] | None:
        if raw is None:
            return {}
        if not isinstance(raw, list):
            self.problem(where, "Dimensions is not a list")
            return None
        out: dict[str, Any] = {}
        for item in raw:
            if not isinstance(item, dict) or not isinstance(item.get("Name"), str):
                self.problem(where, f"dimension {show(item)} has no Name")
                return None
            if item["Name"] in out:
                self.problem(where, f"dimension {item['Name']} given twice")
                return None
            out[item["Name"]] = item.get("Value")
        return out

    # --- alarms ----------------------------------------------------------------------------

    def check_alarm(self, name: str, alarm: dict[str, Any]) -> None:
        where = f"alarm {name}"
        props = alarm.get("Properties", {})
        for key in ("AlarmActions", "OKActions"):
            if not self.notifies_topic(props.get(key)):
                self.problem(
                    where,
                    f"{key} must be !If [<AlarmTopicArn is set>, [!Ref AlarmTopicArn], "
                    "!Ref AWS::NoValue]",
                )
        if "Metrics" in props:
            self.check_metric_math(where, props["Metrics"])
            return
        dimensions = self.dimensions(where, props.get("Dimensions"))
        if dimensions is None:
            return
        key = self.check_metric(where, props.get("Namespace"), props.get("MetricName"), dimensions)
        if key:
            self.watched.add(key)

    def notifies_topic(self, actions: Any) -> bool:
        if not isinstance(actions, dict) or set(actions) != {"Fn::If"}:
            return False
        branches = actions["Fn::If"]
        if not isinstance(branches, list) or len(branches) != 3:
            return False
        condition, when_set, otherwise = branches
        definition = self.template.get("Conditions", {}).get(condition)
        topic_set = {"Fn::Not": [{"Fn::Equals": [{"Ref": "AlarmTopicArn"}, ""]}]}
        return (
            definition == topic_set
            and when_set == [{"Ref": "AlarmTopicArn"}]
            and ref(otherwise) == "AWS::NoValue"
        )

    def check_metric_math(self, where: str, metrics: Any) -> None:
        if not isinstance(metrics, list) or not metrics:
            self.problem(where, "Metrics is not a list of metrics")
            return
        returned = [m for m in metrics if isinstance(m, dict) and m.get("ReturnData", True)]
        if len(returned) != 1:
            self.problem(where, "exactly one of Metrics must return data (ReturnData)")
        expressions = " ".join(
            m["Expression"] for m in metrics if isinstance(m, dict) and "Expression" in m
        )
        uses_all = "METRICS()" in expressions.replace(" ", "")
        used = set(re.findall(r"\b[a-z][a-zA-Z0-9_]*\b", expressions))
        for entry in metrics:
            if not isinstance(entry, dict) or "MetricStat" not in entry:
                continue
            metric_id = entry.get("Id")
            metric = entry["MetricStat"].get("Metric", {})
            entry_where = f"{where} metric {metric_id}"
            dimensions = self.dimensions(entry_where, metric.get("Dimensions"))
            if dimensions is None:
                continue
            key = self.check_metric(
                entry_where, metric.get("Namespace"), metric.get("MetricName"), dimensions
            )
            if entry.get("ReturnData", True) or uses_all or metric_id in used:
                if key:
                    self.watched.add(key)
            else:
                self.problem(entry_where, "is neither returned nor used by an expression")

    # --- required alarms -------------------------------------------------------------------

    def check_required(self) -> None:
        functions = self.of_type(FUNCTION)

        def watched(namespace: str, metric: str, **dimensions: str) -> bool:
            return (namespace, metric, frozenset(dimensions.items())) in self.watched

        for function in functions:
            for metric in ("Errors", "Throttles"):
                if not watched("AWS/Lambda", metric, FunctionName=function):
                    self.problem(f"function {function}", f"no alarm watches its {metric}")
            events = self.resources[function].get("Properties", {}).get("Events", {}) or {}
            reads_stream = any(e.get("Type") in STREAM_EVENT_TYPES for e in events.values())
            if reads_stream and not watched("AWS/Lambda", "IteratorAge", FunctionName=function):
                self.problem(
                    f"function {function}", "reads a stream but no alarm watches IteratorAge"
                )
        for queue in self.of_type(QUEUE):
            if queue.endswith("DeadLetterQueue") and not watched(
                "AWS/SQS", "ApproximateNumberOfMessagesVisible", QueueName=queue
            ):
                self.problem(f"queue {queue}", "no alarm watches its depth")
        for api in self.of_type(HTTP_API):
            if not watched("AWS/ApiGateway", "5xx", ApiId=api, Stage="$default"):
                self.problem(f"HTTP API {api}", "no alarm watches its 5xx")
        for metric in ("RelayEventsSetAside", "OldestPendingEventAge"):
            if not watched("METRICS_NAMESPACE", metric):
                self.problem(f"metric {metric}", "no alarm watches it")

    # --- dashboards ------------------------------------------------------------------------

    def check_dashboard(self, name: str, dashboard: dict[str, Any]) -> None:
        where = f"dashboard {name}"
        body = dashboard.get("Properties", {}).get("DashboardBody")
        if not isinstance(body, dict) or "Fn::Sub" not in body:
            self.problem(where, "DashboardBody is not a !Sub of JSON")
            return
        text = body["Fn::Sub"]
        if not isinstance(text, str):
            self.problem(where, "DashboardBody is a !Sub with variables; not checked")
            return
        # ${X} and ${X.Attr} become markers JSON keeps; ${!X} is a literal ${X}.
        placeholders: dict[str, str] = {}

        def mark(match: re.Match[str]) -> str:
            marker = f"@@{len(placeholders)}@@"
            placeholders[marker] = match.group(1)
            return marker

        marked = re.sub(r"\$\{(?!!)([^}]+)\}", mark, text)
        try:
            parsed = json.loads(marked)
        except json.JSONDecodeError as error:
            self.problem(where, f"DashboardBody is not JSON: {error}")
            return

        def unmark(value: Any) -> Any:
            """The template value a dashboard string stands for."""
            if not isinstance(value, str):
                return value
            if value in placeholders:
                variable = placeholders[value]
                if "." in variable and "::" not in variable:
                    return {"Fn::GetAtt": variable.split(".", 1)}
                return {"Ref": variable}
            whole = re.sub(r"@@\d+@@", lambda m: "${" + placeholders[m.group(0)] + "}", value)
            return {"Fn::Sub": whole} if whole != value else value

        for variable in placeholders.values():
            resource = variable.split(".", 1)[0]
            known = resource in self.resources or resource in self.template.get("Parameters", {})
            if "::" not in variable and not known:
                self.problem(where, f"${{{variable}}} names nothing in the template")
        for index, widget in enumerate(parsed.get("widgets", [])):
            props = widget.get("properties", {})
            title = props.get("title", index)
            if widget.get("type") == "alarm":
                for alarm in props.get("alarms", []):
                    target = get_att(unmark(alarm))
                    if target is None or target[1] != "Arn":
                        self.problem(f"{where} widget {title}", f"{show(alarm)} is no alarm ARN")
                    elif self.resources.get(target[0], {}).get("Type") != ALARM:
                        self.problem(f"{where} widget {title}", f"{target[0]} is no alarm")
                continue
            if widget.get("type") != "metric":
                continue
            previous: list[Any] = []
            for row in props.get("metrics", []):
                fields = [f for f in row if not isinstance(f, dict)]
                if any(isinstance(f, dict) and "expression" in f for f in row):
                    continue
                if "..." in fields:
                    self.problem(f"{where} widget {title}", "spell rows out; '...' is not checked")
                    continue
                fields = [
                    previous[i] if f == "." and i < len(previous) else f
                    for i, f in enumerate(fields)
                ]
                previous = fields
                row_where = f"{where} widget {title}"
                if len(fields) < 2 or len(fields) % 2:
                    self.problem(row_where, f"metric row {show(row)} is not namespace, name, pairs")
                    continue
                dimensions = {fields[i]: unmark(fields[i + 1]) for i in range(2, len(fields), 2)}
                self.check_metric(row_where, unmark(fields[0]), fields[1], dimensions)

    # --- all -------------------------------------------------------------------------------

    def run(self) -> list[str]:
        if self.namespace is None:
            self.problem("Globals", "no METRICS_NAMESPACE in the functions' environment")
        if not self.metrics:
            self.problem("shared/domain/src/metrics.rs", 'no `Metric::X => "Name"` arms in `fn name`')
        if not self.transitions:
            self.problem("shared/domain/src/domain/stream/mod.rs", 'no `Transition::X => "name"` arms')
        for name in self.of_type(ALARM):
            self.check_alarm(name, self.resources[name])
        self.check_required()
        for name in self.of_type(DASHBOARD):
            self.check_dashboard(name, self.resources[name])
        return self.problems


def check(template: dict[str, Any]) -> list[str]:
    return Checker(template, metric_names(), transition_names()).run()


# --- self-test -------------------------------------------------------------------------------


def alarms_with(template: dict[str, Any], predicate: Callable[[dict[str, Any]], bool]) -> dict:
    for resource in template["Resources"].values():
        if resource.get("Type") == ALARM and predicate(resource["Properties"]):
            return resource["Properties"]
    raise AssertionError("self-test: no alarm to mutate")


def first_dimension(props: dict[str, Any], name: str) -> dict[str, Any] | None:
    candidates = [props.get("Dimensions") or []]
    for entry in props.get("Metrics") or []:
        candidates.append(entry.get("MetricStat", {}).get("Metric", {}).get("Dimensions") or [])
    for dimensions in candidates:
        for dimension in dimensions:
            if dimension.get("Name") == name:
                return dimension
    return None


def mutate_function_ref(t: dict[str, Any]) -> None:
    props = alarms_with(t, lambda p: first_dimension(p, "FunctionName") is not None)
    first_dimension(props, "FunctionName")["Value"] = {"Ref": "NoSuchFunction"}


def mutate_queue_of_non_queue(t: dict[str, Any]) -> None:
    props = alarms_with(t, lambda p: first_dimension(p, "QueueName") is not None)
    first_dimension(props, "QueueName")["Value"] = {"Fn::GetAtt": ["Table", "QueueName"]}


def mutate_unknown_emf_metric(t: dict[str, Any]) -> None:
    props = alarms_with(t, lambda p: p.get("MetricName") == "RelayEventsSetAside")
    props["MetricName"] = "RelayEventSetAside"


def mutate_function_without_alarms(t: dict[str, Any]) -> None:
    functions = [r for r in t["Resources"].values() if r.get("Type") == FUNCTION]
    t["Resources"]["UnwatchedFunction"] = copy.deepcopy(functions[0])


def mutate_dimension_on_plain_metric(t: dict[str, Any]) -> None:
    props = alarms_with(t, lambda p: p.get("MetricName") == "OldestPendingEventAge")
    props["Dimensions"] = [{"Name": "Transition", "Value": "agent_joined"}]


def mutate_foreign_dimension(t: dict[str, Any]) -> None:
    props = alarms_with(t, lambda p: p.get("Namespace") == "AWS/SQS")
    props["Dimensions"].append({"Name": "FunctionName", "Value": {"Ref": "DeliveryFunction"}})


def mutate_wrong_stage(t: dict[str, Any]) -> None:
    props = alarms_with(t, lambda p: first_dimension(p, "Stage") is not None)
    first_dimension(props, "Stage")["Value"] = "prod"


def mutate_other_namespace(t: dict[str, Any]) -> None:
    props = alarms_with(t, lambda p: p.get("MetricName") == "RelayEventsSetAside")
    props["Namespace"] = "LiveStreamHosting"


def mutate_silent_alarm(t: dict[str, Any]) -> None:
    props = alarms_with(t, lambda p: True)
    del props["AlarmActions"]


def mutate_dashboard_metric(t: dict[str, Any]) -> None:
    for resource in t["Resources"].values():
        if resource.get("Type") == DASHBOARD:
            body = resource["Properties"]["DashboardBody"]
            body["Fn::Sub"] = body["Fn::Sub"].replace('"DeliveriesFailed"', '"DeliveryFailures"')
            return
    raise AssertionError("self-test: no dashboard")


def mutate_dashboard_function(t: dict[str, Any]) -> None:
    for resource in t["Resources"].values():
        if resource.get("Type") == DASHBOARD:
            body = resource["Properties"]["DashboardBody"]
            body["Fn::Sub"] = body["Fn::Sub"].replace("${DiscoveryFunction}", "${Table}", 1)
            return
    raise AssertionError("self-test: no dashboard")


MUTATIONS: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    ("FunctionName !Ref to a missing resource", mutate_function_ref, "FunctionName"),
    ("QueueName !GetAtt of a non-queue", mutate_queue_of_non_queue, "QueueName"),
    ("unknown metrics.rs metric name", mutate_unknown_emf_metric, "RelayEventSetAside"),
    ("function without Errors alarm", mutate_function_without_alarms, "its Errors"),
    ("dimension on a metric published without", mutate_dimension_on_plain_metric, "dimensions"),
    ("Lambda dimension on an SQS metric", mutate_foreign_dimension, "no dimension FunctionName"),
    ("Stage other than $default", mutate_wrong_stage, "Stage"),
    ("namespace other than METRICS_NAMESPACE", mutate_other_namespace, "namespace"),
    ("alarm that notifies nobody", mutate_silent_alarm, "AlarmActions"),
    ("dashboard metric metrics.rs lacks", mutate_dashboard_metric, "DeliveryFailures"),
    ("dashboard FunctionName of a table", mutate_dashboard_function, "FunctionName"),
]


def self_test(template: dict[str, Any]) -> list[str]:
    failures = []
    baseline = set(check(template))
    for description, mutate, expected in MUTATIONS:
        mutated = copy.deepcopy(template)
        mutate(mutated)
        new = [p for p in check(mutated) if p not in baseline]
        if not any(expected in p for p in new):
            failures.append(
                f"self-test: {description} was not refused "
                f"(expected a problem mentioning {expected!r}; got {new})"
            )
    return failures


def main(argv: list[str]) -> int:
    args = [a for a in argv if a != "--self-test"]
    path = Path(args[0]) if args else ROOT / "template.yaml"
    template = load_template(path)
    problems = self_test(template) if "--self-test" in argv else check(template)
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
