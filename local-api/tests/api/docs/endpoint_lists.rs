//! The prose that lists endpoints, checked against the contract table (`crate::operations`) and
//! the declarations: docs/request-pipeline.md's endpoint table and its order of checks per
//! endpoint, each row's link to the topic that holds its rules, and each API function's
//! `Description` in `template.yaml`. An endpoint added without them fails here.

use std::collections::BTreeSet;

use hosting_http::endpoints::{ENDPOINTS, Function};

use crate::operations::{Access, OPERATIONS};

fn read(relative: &str) -> String {
    let path = format!("{}/../{relative}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{path}: {err}"))
}

/// The text of `document`'s section under the heading `heading` (any level), up to the next
/// heading of the same or a higher level.
fn section<'a>(document: &'a str, heading: &str) -> &'a str {
    let start = document
        .find(&format!("# {heading}\n"))
        .unwrap_or_else(|| panic!("no heading {heading:?}"));
    let level = document[..start]
        .chars()
        .rev()
        .take_while(|c| *c == '#')
        .count()
        + 1;
    let body_start = start + heading.len() + 3;
    let body = &document[body_start..];
    let end = body
        .match_indices("\n#")
        .find(|(at, _)| {
            let hashes = body[at + 1..].chars().take_while(|c| *c == '#').count();
            hashes <= level && body[at + 1 + hashes..].starts_with(' ')
        })
        .map_or(body.len(), |(at, _)| at);
    &body[..end]
}

/// GitHub's anchor of a heading.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

struct Row {
    operation: String,
    access: String,
    link: String,
}

/// docs/request-pipeline.md's "Endpoints" table.
fn endpoint_table() -> Vec<Row> {
    let document = read("docs/request-pipeline.md");
    section(&document, "Endpoints")
        .lines()
        .filter(|line| line.starts_with("| ") && !line.starts_with("| Method"))
        .map(|line| {
            let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
            let path = cells[1].trim_matches('`');
            let path = path.split('?').next().unwrap_or(path);
            Row {
                operation: format!("{} {path}", cells[0]),
                access: cells[2].to_owned(),
                link: cells[3].to_owned(),
            }
        })
        .collect()
}

fn access_cell(access: Access) -> String {
    match access {
        Access::Public => "public".into(),
        Access::Scope(scope) => format!("`{scope}`"),
        Access::TestKeys(scope) => format!("`{scope}`, test keys"),
    }
}

#[test]
fn the_endpoint_table_lists_every_operation_with_its_access() {
    let table: Vec<(String, String)> = endpoint_table()
        .into_iter()
        .map(|row| (row.operation, row.access))
        .collect();
    let contract: Vec<(String, String)> = OPERATIONS
        .iter()
        .map(|o| (o.key(), access_cell(o.access)))
        .collect();
    assert_eq!(table, contract);
}

/// Each row links to the section of a topic file (or of the page itself) that holds the
/// endpoint's rules, and that section exists.
#[test]
fn every_endpoint_links_to_an_existing_topic_section() {
    for row in endpoint_table() {
        let target = row
            .link
            .split("](")
            .nth(1)
            .and_then(|rest| rest.strip_suffix(')'))
            .unwrap_or_else(|| panic!("{}: no link in {:?}", row.operation, row.link));
        let (file, fragment) = target.split_once('#').unwrap_or((target, ""));
        let file = if file.is_empty() {
            "request-pipeline.md"
        } else {
            file
        };
        let document = read(&format!("docs/{file}"));
        if fragment.is_empty() {
            continue;
        }
        let anchors: BTreeSet<String> = document
            .lines()
            .filter_map(|line| line.strip_prefix('#'))
            .map(|heading| anchor(heading.trim_start_matches('#')))
            .collect();
        assert!(
            anchors.contains(fragment),
            "{}: docs/{file} has no section #{fragment}",
            row.operation
        );
    }
}

/// "Order of checks per endpoint" names every keyed operation (the public ones have their
/// own section).
#[test]
fn the_order_of_checks_covers_every_keyed_operation() {
    let document = read("docs/request-pipeline.md");
    let checks = section(&document, "Order of checks per endpoint");
    let missing: Vec<String> = OPERATIONS
        .iter()
        .filter(|o| o.access != Access::Public)
        .map(|o| o.key())
        .filter(|key| !checks.contains(key.as_str()))
        .collect();
    assert_eq!(missing, Vec::<String>::new());
}

/// A function's `Description` in the template: `"M1/M2 /path, M3 /other"` as the routes it
/// serves, one `"METHOD /path"` each.
fn described_routes(description: &str) -> BTreeSet<String> {
    description
        .split(", ")
        .flat_map(|item| {
            let (methods, path) = item.split_once(' ').unwrap_or((item, ""));
            methods
                .split('/')
                .map(move |method| format!("{method} {path}"))
        })
        .collect()
}

/// The `Description` of the template's resource `resource`.
fn template_description(template: &str, resource: &str) -> String {
    let start = template
        .find(&format!("\n  {resource}:\n"))
        .unwrap_or_else(|| panic!("no resource {resource}"));
    template[start..]
        .lines()
        .find_map(|line| line.strip_prefix("      Description: "))
        .unwrap_or_else(|| panic!("{resource} has no one-line Description"))
        .to_owned()
}

#[test]
fn each_api_function_describes_exactly_the_endpoints_it_serves() {
    let template = read("template.yaml");
    for function in Function::ALL {
        let resource = function.template_resource();
        let described = described_routes(&template_description(&template, resource));
        let served: BTreeSet<String> = ENDPOINTS
            .iter()
            .filter(|e| e.function == function)
            .map(|e| format!("{} {}", e.method, e.path))
            .collect();
        assert_eq!(described, served, "{resource}'s Description");
    }
}

/// The readers the checks stand on: a compact description expands to each route, anchors are
/// GitHub's, and a section ends at the next heading of its level.
#[test]
fn the_prose_readers_read_what_they_check() {
    assert_eq!(
        described_routes("POST/GET /streams, GET /analytics"),
        BTreeSet::from([
            "POST /streams".to_owned(),
            "GET /streams".to_owned(),
            "GET /analytics".to_owned()
        ])
    );
    assert_eq!(anchor(" Rotate the secret"), "rotate-the-secret");
    assert_eq!(
        anchor(" GET /streams/{id} and DELETE /streams/{id}"),
        "get-streamsid-and-delete-streamsid"
    );
    let document = "# A\n\n## Endpoints\n\nrows\n\n### Inner\n\nmore\n\n## Next\n\nafter\n";
    let endpoints = section(document, "Endpoints");
    assert!(endpoints.contains("more") && !endpoints.contains("after"));
}
