//! The gateway's limits in `template.yaml` (README "On AWS"): stage throttling on the HTTP
//! API from template parameters, and reserved concurrency on every function from parameters
//! that leave it unreserved at 0, the API functions' apart from the background functions',
//! all of it fitting a default account at the defaults.

use std::collections::BTreeMap;

/// Lambda's default concurrency limit per account and region, and what it keeps unreserved.
const DEFAULT_ACCOUNT_LIMIT: u64 = 1000;
const KEPT_UNRESERVED: u64 = 100;

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
    assert_eq!(functions.len(), 9);
    let mut reserved = 0;
    let mut switches = BTreeMap::new();
    for (name, lines) in functions {
        let reservation = value(lines, "ReservedConcurrentExecutions")
            .unwrap_or_else(|| panic!("{name} reserves concurrency"));
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
