//! The template's S3 grants: each function and role gets the actions it needs on its own
//! prefix of the recordings bucket, and nothing wider.

use std::collections::{BTreeMap, BTreeSet};

use super::template;

/// Every S3 grant of the template's resources: resource -> (effect, action, resource granted).
fn s3_grants(template: &str) -> BTreeMap<String, BTreeSet<(String, String, String)>> {
    let mut grants: BTreeMap<String, BTreeSet<(String, String, String)>> = BTreeMap::new();
    let (mut in_resources, mut resource) = (false, String::new());
    let (mut effect, mut actions) = (String::new(), Vec::new());
    let mut lines = template.lines().peekable();
    while let Some(line) = lines.next() {
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
            continue;
        }
        let trimmed = line.trim().trim_start_matches("- ");
        if let Some(e) = trimmed.strip_prefix("Effect: ") {
            effect = e.to_owned();
            actions.clear();
        }
        if let Some(action) = trimmed.strip_prefix("Action: ") {
            let action = action.trim_matches('"');
            if action.starts_with("s3:") {
                actions.push(action.to_owned());
            }
        }
        if trimmed == "Action:" {
            // A list: each action on its own line.
            while let Some(item) = lines.peek().and_then(|l| l.trim().strip_prefix("- ")) {
                let action = item.trim_matches('"');
                if action.starts_with("s3:") {
                    actions.push(action.to_owned());
                }
                lines.next();
            }
        }
        if trimmed == "Resource:" {
            // A list: each item on its own line.
            while let Some(item) = lines.peek().and_then(|l| l.trim().strip_prefix("- ")) {
                for action in &actions {
                    grants.entry(resource.clone()).or_default().insert((
                        effect.clone(),
                        action.clone(),
                        item.to_owned(),
                    ));
                }
                lines.next();
            }
            actions.clear();
        } else if let Some(target) = trimmed.strip_prefix("Resource: ") {
            for action in actions.drain(..) {
                grants.entry(resource.clone()).or_default().insert((
                    effect.clone(),
                    action,
                    target.to_owned(),
                ));
            }
        }
    }
    grants
}

/// The download role signs downloads (`s3:GetObject`) of recordings and clips, the relay writes
/// the test streams' recordings and the egress's policy uploads (`s3:PutObject`) under
/// `recordings/` only; the clips function reads `recordings/` and writes `clips/` (docs/clips.md),
/// and the functions that delete clips or sweep them remove objects under `clips/` only;
/// nothing else of the stack touches S3 but the bucket's own TLS-only refusal.
#[test]
fn s3_is_granted_nothing_wider_than_each_function_needs() {
    let under = "!Sub \"${RecordingsBucket.Arn}/recordings/*\"";
    let clips = "!Sub \"${RecordingsBucket.Arn}/clips/*\"";
    let grant = |effect: &str, action: &str, on: &str| {
        BTreeSet::from([(effect.to_owned(), action.to_owned(), on.to_owned())])
    };
    let mut expected = BTreeMap::from([
        (
            "RecordingDownloadRole".to_owned(),
            grant("Allow", "s3:GetObject", under)
                .union(&grant("Allow", "s3:GetObject", clips))
                .cloned()
                .collect(),
        ),
        (
            "ClipsFunction".to_owned(),
            [
                grant("Allow", "s3:GetObject", under),
                grant("Allow", "s3:PutObject", clips),
                grant("Allow", "s3:AbortMultipartUpload", clips),
            ]
            .into_iter()
            .flatten()
            .collect(),
        ),
        (
            "OutboxRelayFunction".to_owned(),
            grant("Allow", "s3:PutObject", under),
        ),
        (
            "RecordingUploadPolicy".to_owned(),
            grant("Allow", "s3:PutObject", under),
        ),
    ]);
    for deleting in [
        "StreamsFunction",
        "GatewayDefaultFunction",
        "TimersFunction",
    ] {
        expected.insert(
            deleting.to_owned(),
            grant("Allow", "s3:DeleteObject", clips),
        );
    }
    let mut tls_only = grant("Deny", "s3:*", "!GetAtt RecordingsBucket.Arn");
    tls_only.extend(grant("Deny", "s3:*", "!Sub \"${RecordingsBucket.Arn}/*\""));
    expected.insert("RecordingsBucketPolicy".to_owned(), tls_only);
    assert_eq!(s3_grants(&template()), expected);
    // The reading is not vacuous: a wider grant shows.
    let widened = template().replacen("Action: s3:GetObject", "Action: s3:*", 1);
    assert_ne!(s3_grants(&widened), expected);
}
