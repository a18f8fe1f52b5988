"""Checks what cfn-lint cannot in template.yaml: alarms on real metrics, least-privilege
function roles, and names that fit AWS's limits for any stack name.

CloudWatch accepts an alarm on any namespace, metric and dimension, and an alarm on a metric
nobody publishes never fires. So this checks that:

- every metric the alarms and the dashboard name is a real one: FunctionName is a `!Ref` to a
  function of the template, QueueName a `!GetAtt <queue>.QueueName`, ApiId a `!Ref` to the HTTP
  API on Stage `$default`, each AWS namespace uses only its own dimensions, and the stack's
  namespace is the functions' METRICS_NAMESPACE with the metric names of
  shared/app/src/metrics.rs (StreamTransitions by Transition, the others without dimensions);
- the alarms cover what must be watched: every dead-letter queue's depth, errors and throttles
  of every function, the HTTP API's 5xx, the iterator age of every stream-triggered function,
  events the relay set aside and the age of the oldest pending outbox event;
- every alarm notifies AlarmTopicArn (when given) on entering and leaving ALARM.

IAM accepts any grant, and SAM's policy templates grant more than a function needs (its
DynamoDBCrudPolicy includes Scan and every index). So this checks, for every function's
Policies (inline statements, policy templates, and the template's own managed policies it
references, both branches of an !If):

- no SAM policy template but SQSSendMessagePolicy (sqs:SendMessage* on one queue), and no AWS
  managed policy (`AWSLambda*`, `*FullAccess`, ...): grants are inline statements; no function
  sets Role (a role of its own would escape these checks);
- every DynamoDB action is one of DYNAMODB_ACTIONS (never Scan, DescribeTable, CreateTable), on
  a table's `!GetAtt <table>.Arn` or one of its indexes by name (`!Sub "${<table>.Arn}/index/
  <name>"`, never `index/*`), an index only for dynamodb:Query and only in INDEX_READERS (the
  sweeps); no action holds a `*`, no resource is `*`, no statement uses NotAction or
  NotResource;
- the `$default` route's function (an HttpApi event on path `$default`) is granted everything
  each API function (an HttpApi event on a path under /api/v1) is: every action on every
  resource, the queues it may send to included, since it serves every route as a fallback.

And, since CloudFormation refuses a name over its limit only when it creates the resource:

- every ScheduleV2 event sets OmitName: true (or a Name built with !Sub, or a GroupName): SAM
  names its schedule by the event's logical id otherwise, the same in every stack of the
  template, and two stacks in one region would collide in the default schedule group;
- every name the template sets (NAME_LIMITS: a function's FunctionName, a schedule group's or
  schedule's Name, a ScheduleV2 or Schedule event's Name, a role's RoleName, a queue's
  QueueName) fits its limit for any stack: AWS::StackName counts as 128 characters (its
  limit), the stack id's UUID (`!Select [2, !Split ["/", !Ref AWS::StackId]]`) as 36, a
  parameter as its MaxLength (or longest AllowedValues); a name whose length has no such bound
  is refused;
- SCHEDULER_TARGET_ARN (Globals) names a function of the template by the FunctionName it is
  given, and the role of SCHEDULER_ROLE_ARN may invoke exactly that ARN (the ARN is built from
  the name, not !GetAtt, to avoid a circular dependency, so nothing else ties them).

Usage: check_template.py [--self-test] [TEMPLATE]. Prints one line per problem; exits 1 on any.
--self-test breaks an in-memory copy of the template in several ways (each permission and name
rule at least once) and checks that each is refused. Runs with the cfn-lint virtualenv's python
(scripts/lib/venv.sh cfn-lint).
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

ROOT = Path(__file__).resolve().parents[2]
METRICS_RS = ROOT / "shared/app/src/metrics.rs"
TRANSITIONS_RS = ROOT / "shared/domain/src/stream/mod.rs"

FUNCTION = "AWS::Serverless::Function"
QUEUE = "AWS::SQS::Queue"
HTTP_API = "AWS::Serverless::HttpApi"
ALARM = "AWS::CloudWatch::Alarm"
DASHBOARD = "AWS::CloudWatch::Dashboard"
TABLE = "AWS::DynamoDB::Table"
ROLE = "AWS::IAM::Role"
MANAGED_POLICY = "AWS::IAM::ManagedPolicy"

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

# The SAM policy templates a function may use; every other grant is an inline statement.
ALLOWED_POLICY_TEMPLATES = {"SQSSendMessagePolicy"}
# The DynamoDB actions the functions may be granted. A transaction needs no action of its own:
# its parts need PutItem, UpdateItem, DeleteItem, ConditionCheckItem or GetItem.
DYNAMODB_ACTIONS = {
    "dynamodb:GetItem",
    "dynamodb:BatchGetItem",
    "dynamodb:Query",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:ConditionCheckItem",
    "dynamodb:BatchWriteItem",
}
# The functions that read the table's index: the sweeps (timers, outbox relay).
INDEX_READERS = {"TimersFunction", "OutboxRelayFunction"}

# The names the template may set, by resource type and property, and their AWS limits.
NAME_LIMITS: dict[tuple[str, str], int] = {
    (FUNCTION, "FunctionName"): 64,
    ("AWS::Lambda::Function", "FunctionName"): 64,
    ("AWS::Scheduler::ScheduleGroup", "Name"): 64,
    ("AWS::Scheduler::Schedule", "Name"): 64,
    (ROLE, "RoleName"): 64,
    (QUEUE, "QueueName"): 80,
}
# A function event's Name (the schedule or rule SAM creates), by event type, and its limit.
EVENT_NAME_LIMITS = {"ScheduleV2": 64, "Schedule": 64}
# The longest each pseudo parameter can be (AWS::StackName: CloudFormation's limit).
PSEUDO_LENGTHS = {
    "AWS::StackName": 128,
    "AWS::AccountId": 12,
    "AWS::Region": 20,
    "AWS::Partition": 15,
    "AWS::URLSuffix": 20,
}
# The stack id's UUID: arn:<partition>:cloudformation:<region>:<account>:stack/<name>/<uuid>.
STACK_UUID = {"Fn::Select": [2, {"Fn::Split": ["/", {"Ref": "AWS::StackId"}]}]}
STACK_UUID_LENGTH = 36


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


def normalized(value: Any) -> Any:
    """`value` with every !GetAtt in its list form, so equal references compare equal."""
    if isinstance(value, dict):
        target = get_att(value)
        if target is not None:
            return {"Fn::GetAtt": list(target)}
        return {k: normalized(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalized(v) for v in value]
    return value


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def sub_parts(value: Any) -> tuple[str, dict[str, Any]] | None:
    """A !Sub's string and variables (none for the one-argument form)."""
    if not isinstance(value, dict) or set(value) != {"Fn::Sub"}:
        return None
    body = value["Fn::Sub"]
    if isinstance(body, str):
        return body, {}
    if (
        isinstance(body, list)
        and len(body) == 2
        and isinstance(body[0], str)
        and isinstance(body[1], dict)
    ):
        return body[0], body[1]
    return None


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
                    f"metric {show(name)} is not one shared/app/src/metrics.rs emits "
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

    # --- function permissions --------------------------------------------------------------

    def policy_entries(self, function: str) -> list[Any]:
        """A function's Policies, each branch of an !If as an entry of its own."""
        policies = self.resources[function].get("Properties", {}).get("Policies")
        entries: list[Any] = []
        for entry in as_list(policies) if policies is not None else []:
            if isinstance(entry, dict) and set(entry) == {"Fn::If"}:
                branches = entry["Fn::If"]
                if isinstance(branches, list) and len(branches) == 3:
                    entries.extend(b for b in branches[1:] if ref(b) != "AWS::NoValue")
                    continue
            entries.append(entry)
        return entries

    def grants(self, function: str) -> set[tuple[str, str]]:
        """(action, resource JSON) of everything `function`'s Policies allow, an
        SQSSendMessagePolicy as sqs:SendMessage on its queue's ARN; reports what they may not
        hold."""
        where = f"function {function}"
        granted: set[tuple[str, str]] = set()
        if "Role" in self.resources[function].get("Properties", {}):
            self.problem(where, "sets Role: give it Policies, which are checked here, instead")
        for entry in self.policy_entries(function):
            target = ref(entry)
            if target is not None:
                policy = self.resources.get(target, {})
                if policy.get("Type") != MANAGED_POLICY:
                    self.problem(
                        where, f"policy !Ref {target} is not a managed policy of the template"
                    )
                    continue
                document = policy.get("Properties", {}).get("PolicyDocument", {})
                granted |= self.statement_grants(where, document.get("Statement"))
            elif isinstance(entry, str):
                self.problem(
                    where,
                    f"uses the managed policy {entry}: grant what it needs in a Statement instead",
                )
            elif isinstance(entry, dict) and "Statement" in entry:
                granted |= self.statement_grants(where, entry["Statement"])
            elif isinstance(entry, dict) and len(entry) == 1:
                ((template_name, parameters),) = entry.items()
                if template_name not in ALLOWED_POLICY_TEMPLATES:
                    self.problem(
                        where,
                        f"uses the SAM policy template {template_name}: only "
                        f"{', '.join(sorted(ALLOWED_POLICY_TEMPLATES))} may be used; grant the "
                        "rest in a Statement",
                    )
                    continue
                queue = get_att((parameters or {}).get("QueueName"))
                if queue is None or queue[1] != "QueueName":
                    self.problem(
                        where, f"{template_name} QueueName is not a !GetAtt <queue>.QueueName"
                    )
                    continue
                # It grants sqs:SendMessage* (and reads the queue's URL and attributes).
                granted.add(("sqs:SendMessage", show({"Fn::GetAtt": [queue[0], "Arn"]})))
            else:
                self.problem(where, f"policy {show(entry)} is none the check knows")
        return granted

    def statement_grants(self, where: str, statements: Any) -> set[tuple[str, str]]:
        granted: set[tuple[str, str]] = set()
        for statement in as_list(statements):
            if not isinstance(statement, dict):
                self.problem(where, f"statement {show(statement)} is not a mapping")
                continue
            for key in ("NotAction", "NotResource"):
                if key in statement:
                    self.problem(
                        where, f"a statement uses {key}, which grants all but what it lists"
                    )
            if statement.get("Effect") != "Allow":
                continue
            actions = [a for a in as_list(statement.get("Action")) if a is not None]
            resources = [normalized(r) for r in as_list(statement.get("Resource"))]
            for action in actions:
                if not isinstance(action, str):
                    self.problem(where, f"action {show(action)} is not a string")
                    continue
                if "*" in action:
                    self.problem(where, f"grants the wildcard action {action}")
                for resource in resources:
                    if resource == "*":
                        self.problem(where, f"grants {action} on every resource (*)")
                    granted.add((action, show(resource)))
        return granted

    def dynamodb_resource(self, resource: Any) -> tuple[str, str | None] | None:
        """(table, index or None) when `resource` is a table's ARN or one of its indexes'."""
        target = get_att(resource)
        if target is not None:
            kind = self.resources.get(target[0], {}).get("Type")
            return (target[0], None) if target[1] == "Arn" and kind == TABLE else None
        parts = sub_parts(resource)
        if parts is None or parts[1]:
            return None
        match = re.fullmatch(r"\$\{(\w+)\.Arn\}/index/([\w.-]+)", parts[0])
        if not match:
            return None
        table, index = match.groups()
        props = self.resources.get(table, {}).get("Properties", {})
        if self.resources.get(table, {}).get("Type") != TABLE:
            return None
        names = {
            i.get("IndexName")
            for key in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes")
            for i in props.get(key) or []
        }
        return (table, index) if index in names else None

    def check_dynamodb(self, function: str, granted: set[tuple[str, str]]) -> None:
        where = f"function {function}"
        for action, resource_json in sorted(granted):
            if not action.lower().startswith("dynamodb:"):
                continue
            if action not in DYNAMODB_ACTIONS:
                self.problem(
                    where,
                    f"grants {action}, not one of {', '.join(sorted(DYNAMODB_ACTIONS))}",
                )
            resource = json.loads(resource_json)
            target = self.dynamodb_resource(resource)
            if target is None:
                self.problem(
                    where,
                    f"grants {action} on {resource_json}: neither a table's !GetAtt <table>.Arn "
                    "nor one of its indexes by name",
                )
            elif target[1] is not None:
                if action != "dynamodb:Query":
                    self.problem(
                        where, f"grants {action} on index {target[1]}: only dynamodb:Query"
                    )
                if function not in INDEX_READERS:
                    self.problem(
                        where,
                        f"reads index {target[1]}: only {', '.join(sorted(INDEX_READERS))} "
                        "(the sweeps) may",
                    )

    def check_permissions(self) -> None:
        functions = self.of_type(FUNCTION)
        granted = {function: self.grants(function) for function in functions}
        for function in functions:
            self.check_dynamodb(function, granted[function])

        def paths(function: str) -> list[str]:
            events = self.resources[function].get("Properties", {}).get("Events") or {}
            return [
                e.get("Properties", {}).get("Path", "")
                for e in events.values()
                if isinstance(e, dict) and e.get("Type") == "HttpApi"
            ]

        api = [f for f in functions if any(p.startswith("/api/v1") for p in paths(f))]
        fallbacks = [f for f in functions if "$default" in paths(f)]
        if api and not fallbacks:
            self.problem("functions", "no function serves the HTTP API's $default route")
        for fallback in fallbacks:
            for function in api:
                for action, resource in sorted(granted[function] - granted[fallback]):
                    self.problem(
                        f"function {fallback}",
                        f"lacks {action} on {resource}, which {function} has: the $default "
                        "route serves every route as a fallback",
                    )

    # --- names -----------------------------------------------------------------------------

    def longest(self, value: Any) -> int | None:
        """The most characters `value` can be for any stack; None when nothing bounds it."""
        if isinstance(value, str):
            return len(value)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return len(str(value))
        if value == STACK_UUID:
            return STACK_UUID_LENGTH
        target = ref(value)
        if target is not None:
            if target in PSEUDO_LENGTHS:
                return PSEUDO_LENGTHS[target]
            parameter = self.template.get("Parameters", {}).get(target, {})
            if "AllowedValues" in parameter:
                return max(len(str(v)) for v in parameter["AllowedValues"])
            if "MaxLength" in parameter:
                return int(parameter["MaxLength"])
            return None
        parts = sub_parts(value)
        if parts is not None:
            body, variables = parts
            total = 0
            for piece in re.split(r"(\$\{[^}]*\})", body):
                match = re.fullmatch(r"\$\{([^!}][^}]*)\}", piece)
                if not match:
                    total += len(piece.replace("${!", "${"))
                    continue
                name = match.group(1)
                if name in variables:
                    length = self.longest(variables[name])
                elif "." in name and "::" not in name:
                    length = None  # an attribute of a resource
                else:
                    length = self.longest({"Ref": name})
                if length is None:
                    return None
                total += length
            return total
        if isinstance(value, dict) and set(value) == {"Fn::Join"}:
            joined = value["Fn::Join"]
            if not isinstance(joined, list) or len(joined) != 2 or not isinstance(joined[0], str):
                return None
            items = as_list(joined[1])
            known = [n for n in (self.longest(item) for item in items) if n is not None]
            if len(known) != len(items):
                return None
            return sum(known) + len(joined[0]) * max(len(known) - 1, 0)
        if isinstance(value, dict) and set(value) == {"Fn::If"}:
            branches = [b for b in as_list(value["Fn::If"])[1:] if ref(b) != "AWS::NoValue"]
            known = [n for n in (self.longest(b) for b in branches) if n is not None]
            return max(known, default=0) if len(known) == len(branches) else None
        return None

    def check_name(self, where: str, key: str, value: Any, limit: int) -> None:
        length = self.longest(value)
        if length is None:
            self.problem(
                where,
                f"{key} {show(value)} has no bounded length (at most {limit} characters): "
                "build it from strings, the stack's UUID or parameters with MaxLength",
            )
        elif length > limit:
            self.problem(
                where,
                f"{key} {show(value)} may be {length} characters (AWS::StackName counts as "
                f"{PSEUDO_LENGTHS['AWS::StackName']}), over its limit of {limit}",
            )

    def check_names(self) -> None:
        for name, resource in self.resources.items():
            props = resource.get("Properties", {}) or {}
            for (kind, key), limit in NAME_LIMITS.items():
                if resource.get("Type") == kind and key in props:
                    self.check_name(f"resource {name}", key, props[key], limit)
            if resource.get("Type") != FUNCTION:
                continue
            for event_name, event in (props.get("Events") or {}).items():
                limit = EVENT_NAME_LIMITS.get(event.get("Type"))
                event_props = event.get("Properties", {}) or {}
                where = f"resource {name} event {event_name}"
                if limit is not None and "Name" in event_props:
                    self.check_name(where, "Name", event_props["Name"], limit)
                fixed = isinstance(event_props.get("Name", event_name), str)
                shared_group = "GroupName" not in event_props
                if (
                    event.get("Type") == "ScheduleV2"
                    and fixed
                    and shared_group
                    and not event_props.get("OmitName")
                ):
                    self.problem(
                        where,
                        "SAM names its schedule by the event's logical id (or its fixed Name), in "
                        "a group every stack of the template shares: set OmitName: true",
                    )

    def check_scheduler_target(self) -> None:
        """SCHEDULER_TARGET_ARN names a function by its FunctionName; the scheduler role may
        invoke it."""
        variables = (
            self.template.get("Globals", {})
            .get("Function", {})
            .get("Environment", {})
            .get("Variables", {})
        )
        target = variables.get("SCHEDULER_TARGET_ARN")
        if target is None:
            return
        where = "Globals SCHEDULER_TARGET_ARN"
        parts = sub_parts(target)
        prefix = "arn:${AWS::Partition}:lambda:${AWS::Region}:${AWS::AccountId}:function:"
        if parts is None or not parts[0].startswith(prefix):
            self.problem(where, f"{show(target)} is not a !Sub of {prefix}<name>")
            return
        body, names = parts
        name = body[len(prefix) :]

        def given(function: str) -> bool:
            """Whether `function` is given the FunctionName the ARN names."""
            value = self.resources[function].get("Properties", {}).get("FunctionName")
            return sub_parts(value) == (name, names) or (not names and value == name)

        if not any(given(f) for f in self.of_type(FUNCTION)):
            self.problem(
                where,
                f"names the function {show(name)} (with {show(names)}): no function of the "
                "template is given that FunctionName",
            )
        role = get_att(variables.get("SCHEDULER_ROLE_ARN"))
        if role is None or self.resources.get(role[0], {}).get("Type") != ROLE:
            self.problem(
                "Globals SCHEDULER_ROLE_ARN", "is not a !GetAtt <role>.Arn of the template"
            )
            return
        invokable = set()
        for policy in self.resources[role[0]].get("Properties", {}).get("Policies") or []:
            if not isinstance(policy, dict):
                continue
            for statement in as_list(policy.get("PolicyDocument", {}).get("Statement")):
                if isinstance(statement, dict) and "lambda:InvokeFunction" in as_list(
                    statement.get("Action")
                ):
                    invokable.update(
                        show(normalized(r)) for r in as_list(statement.get("Resource"))
                    )
        if show(normalized(target)) not in invokable:
            self.problem(
                f"role {role[0]}",
                "has no lambda:InvokeFunction on SCHEDULER_TARGET_ARN as Globals builds it",
            )

    # --- all -------------------------------------------------------------------------------

    def run(self) -> list[str]:
        if self.namespace is None:
            self.problem("Globals", "no METRICS_NAMESPACE in the functions' environment")
        if not self.metrics:
            self.problem("shared/app/src/metrics.rs", 'no `Metric::X => "Name"` arms in `fn name`')
        if not self.transitions:
            self.problem("shared/domain/src/stream/mod.rs", 'no `Transition::X => "name"` arms')
        for name in self.of_type(ALARM):
            self.check_alarm(name, self.resources[name])
        self.check_required()
        for name in self.of_type(DASHBOARD):
            self.check_dashboard(name, self.resources[name])
        self.check_permissions()
        self.check_names()
        self.check_scheduler_target()
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


def policies_of(t: dict[str, Any], function: str) -> list[Any]:
    return t["Resources"][function]["Properties"]["Policies"]


def statements_of(t: dict[str, Any], function: str) -> list[dict[str, Any]]:
    """The inline statements of a function's Policies."""
    return [
        statement
        for policy in policies_of(t, function)
        if isinstance(policy, dict) and "Statement" in policy
        for statement in policy["Statement"]
    ]


def statement_with(t: dict[str, Any], function: str, action: str) -> dict[str, Any]:
    for statement in statements_of(t, function):
        if action in as_list(statement["Action"]):
            return statement
    raise AssertionError(f"self-test: {function} has no statement granting {action}")


def index_statement(t: dict[str, Any], function: str) -> dict[str, Any]:
    for statement in statements_of(t, function):
        if "/index/" in show(statement["Resource"]):
            return statement
    raise AssertionError(f"self-test: {function} has no statement on an index")


def mutate_crud_policy_template(t: dict[str, Any]) -> None:
    policies_of(t, "StreamsFunction").append(
        {"DynamoDBCrudPolicy": {"TableName": {"Ref": "Table"}}}
    )


def mutate_aws_managed_policy(t: dict[str, Any]) -> None:
    policies_of(t, "DeliveryFunction").append("AmazonDynamoDBFullAccess")


def mutate_scan(t: dict[str, Any]) -> None:
    statement = statement_with(t, "AnalyticsFunction", "dynamodb:GetItem")
    statement["Action"] = as_list(statement["Action"]) + ["dynamodb:Scan"]


def mutate_wildcard_action(t: dict[str, Any]) -> None:
    statement_with(t, "StreamsFunction", "scheduler:CreateSchedule")["Action"] = "scheduler:*"


def mutate_every_resource(t: dict[str, Any]) -> None:
    statement_with(t, "TimersFunction", "iam:PassRole")["Resource"] = "*"


def mutate_every_index(t: dict[str, Any]) -> None:
    index_statement(t, "TimersFunction")["Resource"] = {"Fn::Sub": "${Table.Arn}/index/*"}


def mutate_not_action(t: dict[str, Any]) -> None:
    statement = statement_with(t, "DiscoveryFunction", "dynamodb:GetItem")
    statement["NotAction"] = statement.pop("Action")


def mutate_own_role(t: dict[str, Any]) -> None:
    t["Resources"]["DeliveryFunction"]["Properties"]["Role"] = {
        "Fn::GetAtt": ["SchedulerRole", "Arn"]
    }


def mutate_index_read_elsewhere(t: dict[str, Any]) -> None:
    statement = copy.deepcopy(index_statement(t, "OutboxRelayFunction"))
    policies_of(t, "WebhooksFunction").append({"Statement": [statement]})


def mutate_index_write(t: dict[str, Any]) -> None:
    index_statement(t, "OutboxRelayFunction")["Action"] = ["dynamodb:Query", "dynamodb:PutItem"]


def mutate_fallback_without_queue(t: dict[str, Any]) -> None:
    policies = policies_of(t, "GatewayDefaultFunction")
    policies[:] = [p for p in policies if not (isinstance(p, dict) and "SQSSendMessagePolicy" in p)]


def mutate_fallback_without_batch_writes(t: dict[str, Any]) -> None:
    statement = statement_with(t, "GatewayDefaultFunction", "dynamodb:BatchWriteItem")
    statement["Action"] = [a for a in statement["Action"] if a != "dynamodb:BatchWriteItem"]


def mutate_function_name_of_stack_name(t: dict[str, Any]) -> None:
    props = t["Resources"]["TimersFunction"]["Properties"]
    props["FunctionName"] = {"Fn::Sub": "${AWS::StackName}-timers"}


def mutate_group_name_of_stack_name(t: dict[str, Any]) -> None:
    for resource in t["Resources"].values():
        if resource.get("Type") == "AWS::Scheduler::ScheduleGroup":
            resource["Properties"]["Name"] = {"Fn::Sub": "${AWS::StackName}-timers"}
            return
    raise AssertionError("self-test: no schedule group")


def mutate_schedule_name_unbounded(t: dict[str, Any]) -> None:
    events = t["Resources"]["TimersFunction"]["Properties"]["Events"]
    for event in events.values():
        if event.get("Type") == "ScheduleV2":
            event["Properties"].pop("OmitName", None)
            event["Properties"]["Name"] = {"Fn::Sub": "${LogLevel}-sweep"}
            return
    raise AssertionError("self-test: no ScheduleV2 event")


def mutate_schedule_named_by_sam(t: dict[str, Any]) -> None:
    events = t["Resources"]["OutboxRelayFunction"]["Properties"]["Events"]
    for event in events.values():
        if event.get("Type") == "ScheduleV2":
            event["Properties"].pop("OmitName", None)
            return
    raise AssertionError("self-test: no ScheduleV2 event")


def mutate_target_of_another_name(t: dict[str, Any]) -> None:
    variables = t["Globals"]["Function"]["Environment"]["Variables"]
    body, names = sub_parts(variables["SCHEDULER_TARGET_ARN"]) or ("", {})
    variables["SCHEDULER_TARGET_ARN"] = {"Fn::Sub": [body.replace("timers", "timer"), names]}


def mutate_scheduler_role_invokes_other(t: dict[str, Any]) -> None:
    role = get_att(t["Globals"]["Function"]["Environment"]["Variables"]["SCHEDULER_ROLE_ARN"])
    assert role is not None, "self-test: no scheduler role"
    for policy in t["Resources"][role[0]]["Properties"]["Policies"]:
        for statement in as_list(policy.get("PolicyDocument", {}).get("Statement")):
            if "lambda:InvokeFunction" in as_list(statement.get("Action")):
                statement["Resource"] = {"Fn::GetAtt": ["DeliveryFunction", "Arn"]}
                return
    raise AssertionError("self-test: the scheduler role invokes nothing")


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
    ("DynamoDBCrudPolicy on a function", mutate_crud_policy_template, "DynamoDBCrudPolicy"),
    ("AWS managed policy on a function", mutate_aws_managed_policy, "AmazonDynamoDBFullAccess"),
    ("dynamodb:Scan granted", mutate_scan, "grants dynamodb:Scan"),
    ("wildcard action", mutate_wildcard_action, "wildcard action scheduler:*"),
    ("a grant on every resource", mutate_every_resource, "every resource (*)"),
    ("a grant on index/*", mutate_every_index, "index/*"),
    ("a statement with NotAction", mutate_not_action, "NotAction"),
    ("a function with a role of its own", mutate_own_role, "sets Role"),
    ("index read by a function other than the sweeps", mutate_index_read_elsewhere, "reads index"),
    ("index granted more than Query", mutate_index_write, "only dynamodb:Query"),
    (
        "$default function without the delivery queue",
        mutate_fallback_without_queue,
        "lacks sqs:SendMessage",
    ),
    (
        "$default function without batch writes",
        mutate_fallback_without_batch_writes,
        "lacks dynamodb:BatchWriteItem",
    ),
    (
        "function name from the stack name",
        mutate_function_name_of_stack_name,
        "TimersFunction: FunctionName",
    ),
    (
        "schedule group name from the stack name",
        mutate_group_name_of_stack_name,
        "TimerScheduleGroup: Name",
    ),
    ("schedule name of unbounded length", mutate_schedule_name_unbounded, "no bounded length"),
    ("schedule named by SAM after its logical id", mutate_schedule_named_by_sam, "OmitName"),
    (
        "SCHEDULER_TARGET_ARN naming no function",
        mutate_target_of_another_name,
        "SCHEDULER_TARGET_ARN",
    ),
    (
        "scheduler role that cannot invoke the target",
        mutate_scheduler_role_invokes_other,
        "lambda:InvokeFunction",
    ),
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
