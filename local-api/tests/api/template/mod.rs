//! The gateway's limits in `template.yaml` (docs/aws.md, "Limits" and "Sizing"): stage throttling on the HTTP
//! API from template parameters, and reserved concurrency on every function but the outbox
//! relay from parameters that leave it unreserved at 0, the API functions' apart from the
//! background functions', all of it fitting a default account at the defaults. And its
//! routes: every declared endpoint is routed to the function that serves it, and nothing else
//! is.

use std::collections::{BTreeMap, BTreeSet};

use hosting_http::endpoints::{ENDPOINTS, Function};

mod s3;

/// Each resource of `template.yaml` and the gateway routes it serves (`"GET /api/v1/streams"`).
fn template_routes(template: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut routes: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let (mut in_resources, mut resource, mut method) = (false, String::new(), None);
    for line in template.lines() {
        if !line.starts_with(' ') && !line.is_empty() {
            in_resources = line.trim_end() == "Resources:";
        } else if in_resources
            && let Some(name) = line.strip_prefix("  ").and_then(|l| l.strip_suffix(':'))
            && !name.starts_with(' ')
        {
            resource = name.to_owned();
        } else if let Some(m) = line.trim().strip_prefix("Method: ") {
            method = Some(m.to_owned());
        } else if let (Some(path), Some(m)) = (line.trim().strip_prefix("Path: "), method.take()) {
            routes
                .entry(resource.clone())
                .or_default()
                .insert(format!("{m} {path}"));
        }
    }
    routes
}

/// What is wrong between the template's routes and the declarations: every endpoint routed to
/// the function that serves it, and no function routed any other route of the API.
fn route_problems(routes: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut problems = Vec::new();
    for function in Function::ALL {
        let declared: BTreeSet<String> = ENDPOINTS
            .iter()
            .filter(|e| e.function == function)
            .map(|e| match e.path {
                "/" => format!("{} /api/v1", e.method),
                path => format!("{} /api/v1{path}", e.method),
            })
            .collect();
        let resource = function.template_resource();
        let routed = routes.get(resource).cloned().unwrap_or_default();
        for missing in declared.difference(&routed) {
            problems.push(format!("{resource} lacks the route {missing}"));
        }
        for extra in routed.difference(&declared) {
            problems.push(format!(
                "{resource} routes {extra}, declared for no endpoint of it"
            ));
        }
    }
    let api_functions: BTreeSet<&str> = Function::ALL
        .iter()
        .map(|f| f.template_resource())
        .collect();
    for (resource, routed) in routes {
        if api_functions.contains(resource.as_str()) {
            continue;
        }
        for route in routed.iter().filter(|r| r.contains(" /api/v1")) {
            problems.push(format!(
                "{resource} routes {route}, an endpoint of another function"
            ));
        }
    }
    problems
}

/// Every declared endpoint has its route in `template.yaml` under the function that serves it
/// (not the gateway's catch-all, not another function, where it would answer 404 in
/// production), and no function is routed anything else of the API.
#[test]
fn the_template_routes_each_endpoint_to_its_function() {
    let routes = template_routes(&template());
    assert_eq!(route_problems(&routes), Vec::<String>::new());
    // The routes outside the API: the gateway's catch-all and LiveKit's receiver.
    assert!(routes["GatewayDefaultFunction"].contains("ANY $default"));
    assert!(routes["LiveKitWebhookFunction"].contains("POST /livekit/webhook"));
}

/// The check is not vacuous: a route filed under the wrong function, or missing, fails it.
#[test]
fn a_misfiled_or_missing_route_fails_the_template_check() {
    let mut routes = template_routes(&template());
    let moved = routes
        .get_mut("AnalyticsFunction")
        .unwrap()
        .pop_first()
        .unwrap();
    routes
        .get_mut("StreamsFunction")
        .unwrap()
        .insert(moved.clone());
    let problems = route_problems(&routes);
    assert!(problems.contains(&format!("AnalyticsFunction lacks the route {moved}")));
    assert!(problems.contains(&format!(
        "StreamsFunction routes {moved}, declared for no endpoint of it"
    )));

    let mut routes = template_routes(&template());
    routes
        .get_mut("GatewayDefaultFunction")
        .unwrap()
        .insert("GET /api/v1/streams".into());
    assert_eq!(
        route_problems(&routes),
        ["GatewayDefaultFunction routes GET /api/v1/streams, an endpoint of another function"]
    );
}

/// Lambda's default concurrency limit per account and region, and what it keeps unreserved.
const DEFAULT_ACCOUNT_LIMIT: u64 = 1000;

const KEPT_UNRESERVED: u64 = 100;

/// The functions that reserve no concurrency. The outbox relay's event source is the table's
/// stream, which runs one batch per shard at a time: its concurrency is the stream's shard
/// count, which DynamoDB grows with the table, and a fixed reservation would fall below it.
const UNRESERVED: [&str; 1] = ["OutboxRelayFunction"];

fn template() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../template.yaml"))
        .expect("template.yaml beside the workspace")
}

/// The entries of the template's top-level `section`: name -> its lines, trimmed, the rest
/// of the name's own line first.
fn section(template: &str, section: &str) -> BTreeMap<String, Vec<String>> {
    let mut entries = BTreeMap::new();
    let mut inside = false;
    let mut current: Option<String> = None;
    for line in template.lines() {
        if line.trim_start().starts_with('#') || line.trim().is_empty() {
            continue;
        }
        if !line.starts_with(' ') {
            inside = line == format!("{section}:");
            current = None;
            continue;
        }
        if !inside {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        if indent == 2 {
            let (name, rest) = line.trim().split_once(':').expect("a key");
            entries.insert(name.to_owned(), vec![rest.trim().to_owned()]);
            current = Some(name.to_owned());
        } else if let Some(name) = &current {
            entries.get_mut(name).unwrap().push(line.trim().to_owned());
        }
    }
    entries
}

/// The value of `key: value` among `lines`.
fn value<'a>(lines: &'a [String], key: &str) -> Option<&'a str> {
    lines
        .iter()
        .find_map(|line| line.strip_prefix(&format!("{key}: ")))
}

/// A Number parameter's default.
fn default_of(parameters: &BTreeMap<String, Vec<String>>, name: &str) -> u64 {
    let lines = parameters
        .get(name)
        .unwrap_or_else(|| panic!("parameter {name}"));
    assert_eq!(value(lines, "Type"), Some("Number"), "{name}");
    value(lines, "Default")
        .and_then(|d| d.parse().ok())
        .unwrap_or_else(|| panic!("{name} has a numeric default"))
}

#[test]
fn the_http_api_throttles_every_route_from_parameters() {
    let template = template();
    let parameters = section(&template, "Parameters");
    let resources = section(&template, "Resources");
    let apis: Vec<_> = resources
        .values()
        .filter(|lines| value(lines, "Type") == Some("AWS::Serverless::HttpApi"))
        .collect();
    assert_eq!(apis.len(), 1);
    let api = apis[0];
    assert!(api.iter().any(|l| l == "DefaultRouteSettings:"), "{api:?}");
    let mut limits = Vec::new();
    for setting in ["ThrottlingBurstLimit", "ThrottlingRateLimit"] {
        let parameter = value(api, setting)
            .and_then(|v| v.strip_prefix("!Ref "))
            .unwrap_or_else(|| panic!("{setting} is a parameter"));
        let default = default_of(&parameters, parameter);
        assert!(default > 0, "{parameter}");
        assert_eq!(
            value(&parameters[parameter], "MinValue"),
            Some("1"),
            "{parameter}: 0 would refuse every request"
        );
        limits.push(default);
    }
    assert!(
        limits[0] >= limits[1],
        "the burst admits at least a second's rate"
    );
}

#[test]
fn every_function_reserves_concurrency_from_parameters_that_fit_a_default_account() {
    let template = template();
    let parameters = section(&template, "Parameters");
    let conditions = section(&template, "Conditions");
    let resources = section(&template, "Resources");
    let functions: Vec<_> = resources
        .iter()
        .filter(|(_, lines)| value(lines, "Type") == Some("AWS::Serverless::Function"))
        .collect();
    assert_eq!(functions.len(), 10);
    let mut reserved = 0;
    let mut switches = BTreeMap::new();
    for (name, lines) in functions {
        let Some(reservation) = value(lines, "ReservedConcurrentExecutions") else {
            assert!(
                UNRESERVED.contains(&name.as_str()),
                "{name} reserves concurrency"
            );
            assert!(
                lines.iter().any(|l| l == "Type: DynamoDB"),
                "{name} reserves none because it reads the table's stream"
            );
            continue;
        };
        assert!(
            !UNRESERVED.contains(&name.as_str()),
            "{name} reserves none: its stream's shards set its concurrency"
        );
        // `!If [<condition>, !Ref <parameter>, !Ref AWS::NoValue]`
        let parts: Vec<&str> = reservation
            .strip_prefix("!If [")
            .and_then(|r| r.strip_suffix(']'))
            .unwrap_or_else(|| panic!("{name}: {reservation}"))
            .split(", ")
            .collect();
        let [condition, amount, "!Ref AWS::NoValue"] = parts[..] else {
            panic!("{name}: {reservation}");
        };
        let amount = amount.strip_prefix("!Ref ").expect(reservation);
        // The condition: its switch parameter is not 0.
        let switch = conditions
            .get(condition)
            .and_then(|lines| lines[0].strip_prefix("!Not [!Equals [!Ref "))
            .and_then(|rest| rest.strip_suffix(", \"0\"]]"))
            .unwrap_or_else(|| panic!("{name}: {condition} is `parameter is not 0`"));
        assert_eq!(
            value(&parameters[switch], "MinValue"),
            Some("0"),
            "{switch}: 0 leaves it unreserved"
        );
        assert!(default_of(&parameters, switch) > 0, "{switch}");
        let default = default_of(&parameters, amount);
        assert!(default > 0, "{name}");
        reserved += default;
        // API functions serve the API's routes; the others are the background functions.
        let serves_api = lines
            .iter()
            .filter_map(|line| line.strip_prefix("Path: "))
            .any(|path| path.starts_with("/api/v1") || path == "$default");
        switches.insert(name.as_str(), (serves_api, switch));
    }
    let api_switches: Vec<_> = switches.values().filter(|(api, _)| *api).collect();
    let background_switches: Vec<_> = switches.values().filter(|(api, _)| !*api).collect();
    assert_eq!((api_switches.len(), background_switches.len()), (5, 4));
    for (_, switch) in &background_switches {
        assert!(
            api_switches.iter().all(|(_, api)| api != switch),
            "the API's reservations and the background functions' are set apart"
        );
    }
    assert!(
        reserved + KEPT_UNRESERVED <= DEFAULT_ACCOUNT_LIMIT,
        "{reserved} reserved at the defaults"
    );
}

#[test]
fn the_recordings_bucket_is_private_encrypted_tls_only_and_expires_with_the_retention() {
    let template = template();
    let resources = section(&template, "Resources");
    let bucket = &resources["RecordingsBucket"];
    assert_eq!(bucket[0], "");
    for setting in [
        "Type: AWS::S3::Bucket",
        "SSEAlgorithm: AES256",
        "BlockPublicAcls: true",
        "BlockPublicPolicy: true",
        "IgnorePublicAcls: true",
        "RestrictPublicBuckets: true",
        "ObjectOwnership: BucketOwnerEnforced",
        "Prefix: recordings/",
        "ExpirationInDays: !Ref RecordingRetentionDays",
    ] {
        assert!(
            bucket
                .iter()
                .any(|line| line.trim_start_matches("- ") == setting),
            "RecordingsBucket lacks {setting}: {bucket:?}"
        );
    }
    let policy = &resources["RecordingsBucketPolicy"];
    for setting in [
        "Bucket: !Ref RecordingsBucket",
        "Effect: Deny",
        "Principal: \"*\"",
        "aws:SecureTransport: \"false\"",
    ] {
        assert!(policy.iter().any(|l| l == setting), "{setting}: {policy:?}");
    }
    // One retention for the bucket and the API, one URL lifetime, from parameters.
    let parameters = section(&template, "Parameters");
    assert_eq!(default_of(&parameters, "RecordingRetentionDays"), 30);
    assert_eq!(default_of(&parameters, "RecordingUrlTtlSeconds"), 3600);
    let globals = template
        .split("\nGlobals:")
        .nth(1)
        .and_then(|g| g.split("\nResources:").next())
        .unwrap();
    for variable in [
        "RECORDINGS_BUCKET: !Ref RecordingsBucket",
        "RECORDING_RETENTION_DAYS: !Ref RecordingRetentionDays",
        "RECORDING_URL_TTL_SECS: !Ref RecordingUrlTtlSeconds",
        "RECORDING_DOWNLOAD_ROLE_ARN: !GetAtt RecordingDownloadRole.Arn",
    ] {
        assert!(
            globals.lines().any(|l| l.trim() == variable),
            "Globals lack {variable}"
        );
    }
    // The upload key pair only from SSM, and only for the function that starts egresses.
    assert_eq!(
        template
            .matches("RECORDING_UPLOAD_KEY_PARAMETER: !Ref RecordingUploadKeyParameter")
            .count(),
        1
    );
    // Downloads are signed by sessions of a role only the presigning functions assume, an
    // hour long at most (docs/recordings.md, "Downloads").
    let has = |resource: &str, line: &str| {
        resources[resource]
            .iter()
            .any(|l| l.trim_start_matches("- ") == line)
    };
    for line in [
        "MaxSessionDuration: 3600",
        "!GetAtt StreamsFunctionRole.Arn",
        "!GetAtt GatewayDefaultFunctionRole.Arn",
        "Action: sts:AssumeRole",
    ] {
        assert!(has("RecordingDownloadRole", line), "{line}");
    }
    for line in [
        "!Ref StreamsFunctionRole",
        "!Ref GatewayDefaultFunctionRole",
        "Resource: !GetAtt RecordingDownloadRole.Arn",
    ] {
        assert!(has("RecordingDownloadAssumePolicy", line), "{line}");
    }
    let timers = &resources["TimersFunction"];
    assert!(
        timers
            .iter()
            .any(|l| l.contains("RECORDING_UPLOAD_KEY_PARAMETER"))
    );
    assert!(
        timers
            .iter()
            .any(|l| l.contains("!Ref RecordingUploadKeyReadPolicy"))
    );
}
