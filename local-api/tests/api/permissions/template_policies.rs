//! Reading the functions' permissions out of `template.yaml`: the DynamoDB and KMS actions
//! each function is allowed, and the partitions the discovery function may read.

use std::collections::{BTreeMap, BTreeSet};

/// Each function of the template and the DynamoDB and KMS actions its inline statements allow:
/// on the table (`dynamodb:GetItem`), on an index (`dynamodb:Query@index/due`), or on the
/// secrets key (`kms:Decrypt`).
pub(crate) fn allowed_actions(template: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut allowed: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    // A function's `- !Ref <policy>` entries: the managed policies it is given.
    let mut managed: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let (mut in_resources, mut resource, mut actions) = (false, String::new(), Vec::new());
    for line in template.lines() {
        if !line.starts_with(' ') && !line.is_empty() {
            in_resources = line.trim_end() == "Resources:";
            continue;
        }
        if !in_resources {
            continue;
        }
        if let Some(name) = line.strip_prefix("  ").and_then(|l| l.strip_suffix(':'))
            && !name.starts_with(' ')
        {
            resource = name.to_owned();
            actions.clear();
            continue;
        }
        let trimmed = line.trim().trim_start_matches("- ");
        if let Some(policy) = line.trim().strip_prefix("- !Ref ")
            && policy.ends_with("Policy")
        {
            managed
                .entry(resource.clone())
                .or_default()
                .push(policy.to_owned());
        }
        if trimmed.starts_with("Effect:") {
            actions.clear();
        }
        let action = trimmed.strip_prefix("Action: ").unwrap_or(trimmed);
        if action.starts_with("dynamodb:") || action.starts_with("kms:") {
            actions.push(action.to_owned());
        }
        if let Some(target) = trimmed.strip_prefix("Resource: ") {
            let on = if target.contains("Table.Arn}/index/due") {
                "@index/due"
            } else if target == "!GetAtt Table.Arn" || target == "!GetAtt SecretsKey.Arn" {
                ""
            } else {
                continue;
            };
            let entry = allowed.entry(resource.clone()).or_default();
            entry.extend(actions.drain(..).map(|action| format!("{action}{on}")));
        }
    }
    for (function, policies) in managed {
        for policy in policies {
            let granted = allowed.get(&policy).cloned().unwrap_or_default();
            allowed.entry(function.clone()).or_default().extend(granted);
        }
    }
    allowed
}

pub(crate) fn template() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../template.yaml"))
        .expect("template.yaml beside the workspace")
}

/// The partition keys the discovery function's table statement is limited to
/// (`dynamodb:LeadingKeys`), in `template.yaml`.
pub(crate) fn discovery_leading_keys(template: &str) -> Vec<String> {
    let block = template
        .split("\n  DiscoveryFunction:\n")
        .nth(1)
        .and_then(|rest| rest.split("\n  StreamsFunction:\n").next())
        .expect("the discovery function in the template");
    let line = block
        .lines()
        .find(|line| line.contains("\"dynamodb:LeadingKeys\":"))
        .expect("a LeadingKeys condition on the discovery function");
    let list = line
        .split_once("\": ")
        .map(|(_, list)| list)
        .unwrap_or_default();
    serde_json::from_str(list.trim()).expect("a JSON list of partition keys")
}

/// Where each function's actions fall short of what its code called.
pub(crate) fn missing(
    allowed: &BTreeMap<String, BTreeSet<String>>,
    function: &str,
    called: &BTreeSet<String>,
    what: &str,
) -> Vec<String> {
    let granted = allowed.get(function).cloned().unwrap_or_default();
    called
        .difference(&granted)
        .map(|action| format!("{what}: {function} lacks {action}"))
        .collect()
}

/// The template's reading is not vacuous: it finds the table and index statements, and a
/// function missing an action the code needs is reported.
#[test]
fn the_policies_are_read_from_the_template() {
    let allowed = allowed_actions(&template());
    assert!(allowed["StreamsFunction"].contains("dynamodb:UpdateItem"));
    assert!(allowed["TimersFunction"].contains("dynamodb:Query@index/due"));
    assert!(!allowed["StreamsFunction"].contains("dynamodb:Query@index/due"));
    assert!(!allowed["DiscoveryFunction"].contains("dynamodb:PutItem"));
    // Only the functions that sign or push open a secret; only those that store one seal it.
    assert!(allowed["DeliveryFunction"].contains("kms:Decrypt"));
    assert!(!allowed["DeliveryFunction"].contains("kms:GenerateDataKey"));
    assert!(allowed["WebhooksFunction"].contains("kms:GenerateDataKey"));
    for function in [
        "DiscoveryFunction",
        "AnalyticsFunction",
        "OutboxRelayFunction",
    ] {
        assert!(
            allowed[function].iter().all(|a| !a.starts_with("kms:")),
            "{function}: {:?}",
            allowed[function]
        );
    }
    // The discovery function reads the creators' partition alone: never a brand's items,
    // where its webhooks (and their sealed secrets) live.
    assert_eq!(discovery_leading_keys(&template()), ["CREATORS"]);
    let called = BTreeSet::from(["dynamodb:PutItem".to_owned()]);
    assert_eq!(
        missing(&allowed, "DiscoveryFunction", &called, "x"),
        ["x: DiscoveryFunction lacks dynamodb:PutItem"]
    );
}
