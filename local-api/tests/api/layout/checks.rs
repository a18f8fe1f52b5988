//! The house rules as checks over a tree (docs/development.md, "Layout"), each answering with
//! the file and the rule it broke, so `mod.rs` runs them on the workspace and `fixture.rs` on a
//! small tree made to break each one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

pub const MAX_SOURCE_LINES: usize = 600;
pub const MAX_TEST_LINES: usize = 500;
pub const MAX_README_LINES: usize = 200;
pub const MAX_PORT_METHODS: usize = 10;
/// Where the store ports are declared, and the domain crate whose files may not import in a
/// circle.
pub const PORTS_DIR: &str = "shared/domain/src/ports";
pub const DOMAIN_SRC: &str = "shared/domain/src";

/// Every `.rs` file under `dir`: not the build directory, not the generated clients, not
/// version control.
pub fn rust_files(dir: &Path, into: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.expect("a folder entry").path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if path.is_dir() {
            if !matches!(name.as_ref(), "target" | "clients" | "node_modules")
                && !name.starts_with('.')
            {
                rust_files(&path, into);
            }
        } else if name.ends_with(".rs") {
            into.push(path);
        }
    }
}

/// A file under a `tests/` folder of a crate is a test file.
pub fn is_test_file(relative: &Path) -> bool {
    relative
        .components()
        .any(|part| part.as_os_str() == "tests")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Source files over 600 lines and test files over 500.
pub fn oversized(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(root, &mut files);
    let mut problems = Vec::new();
    for file in files {
        let relative = file.strip_prefix(root).expect("under the root");
        let lines = read(&file).lines().count();
        let max = if is_test_file(relative) {
            MAX_TEST_LINES
        } else {
            MAX_SOURCE_LINES
        };
        if lines > max {
            problems.push(format!(
                "{}: {lines} lines, over {max} (split it by concern)",
                relative.display()
            ));
        }
    }
    problems.sort();
    problems
}

/// The README's first screens stay an entrance: details belong in docs/.
pub fn long_readme(root: &Path) -> Vec<String> {
    let lines = read(&root.join("README.md")).lines().count();
    if lines > MAX_README_LINES {
        vec![format!(
            "README.md: {lines} lines, over {MAX_README_LINES} (move the detail into docs/)"
        )]
    } else {
        Vec::new()
    }
}

/// Code without comments or the test module at its end: what the file imports to work.
fn code_of(text: &str) -> String {
    let mut code = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        let line = match line.find("//") {
            // A `//` in a string (a URL) is not a comment; one after code or at the start is.
            Some(at) if line[..at].matches('"').count() % 2 == 0 => &line[..at],
            _ => line,
        };
        code.push_str(line);
        code.push('\n');
    }
    code
}

/// Each trait of the ports folder with more methods than a port may have.
pub fn wide_ports(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(&root.join(PORTS_DIR), &mut files);
    let mut problems = Vec::new();
    for file in files {
        let code = code_of(&read(&file));
        let mut rest = code.as_str();
        while let Some(at) = rest.find("pub trait ") {
            rest = &rest[at + "pub trait ".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let Some(open) = rest.find('{') else { break };
            let mut depth = 0;
            let mut methods = 0;
            let mut end = rest.len();
            for (i, c) in rest[open..].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = open + i;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            // Methods are the `fn`s at the trait's own level.
            let body = &rest[open..end];
            let mut level = 0;
            for (i, c) in body.char_indices() {
                match c {
                    '{' => level += 1,
                    '}' => level -= 1,
                    'f' if level == 1
                        && body[i..].starts_with("fn ")
                        && body[..i].ends_with(|p: char| p.is_whitespace()) =>
                    {
                        methods += 1
                    }
                    _ => {}
                }
            }
            if methods > MAX_PORT_METHODS {
                problems.push(format!(
                    "{}: trait {name} has {methods} methods, over {MAX_PORT_METHODS} (split it by what its callers need)",
                    file.strip_prefix(root).unwrap().display()
                ));
            }
            rest = &rest[end..];
        }
    }
    problems.sort();
    problems
}

/// A top-level module of the domain crate: a file `x.rs` or a folder `x/` (whose files are one
/// concern split for size, and may use each other).
fn unit_of(relative: &Path) -> String {
    let first = relative.components().next().unwrap().as_os_str();
    first.to_string_lossy().trim_end_matches(".rs").to_owned()
}

/// The module path of a file under the crate's `src/`: `stream/mod.rs` is `[stream]`,
/// `stream/representations.rs` is `[stream, representations]`.
fn module_path(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .components()
        .map(|c| {
            c.as_os_str()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_owned()
        })
        .collect();
    if parts.last().is_some_and(|last| last == "mod") {
        parts.pop();
    }
    parts
}

/// The first names after each `crate::` (and each `super::` that climbs to the crate root) in
/// `code`: `crate::a::b` names `a`, `crate::{a::b, c}` names `a` and `c`.
fn crate_level_names(code: &str, path: &[String]) -> Vec<String> {
    let mut names = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < code.len() {
        let rest = &code[i..];
        let boundary = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        let after = if boundary && rest.starts_with("crate::") {
            Some(i + "crate::".len())
        } else if boundary && rest.starts_with("super::") {
            let mut at = i;
            let mut climbs = 0;
            while code[at..].starts_with("super::") {
                at += "super::".len();
                climbs += 1;
            }
            i = at - 1;
            (climbs >= path.len()).then_some(at)
        } else {
            None
        };
        if let Some(at) = after {
            if code[at..].starts_with('{') {
                let mut depth = 0;
                let mut segment_start = at + 1;
                for (k, c) in code[at..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' | ',' if depth == 1 => {
                            names.push(leading_name(&code[segment_start..at + k]));
                            segment_start = at + k + 1;
                            if c == '}' {
                                break;
                            }
                        }
                        '}' => depth -= 1,
                        _ => {}
                    }
                }
            } else {
                names.push(leading_name(&code[at..]));
            }
        }
        i += 1;
    }
    names.retain(|name| !name.is_empty());
    names
}

fn leading_name(text: &str) -> String {
    text.trim_start()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// The crate root's `pub use x::{A, B}`: which module each re-exported name comes from.
fn reexports(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for line in code_of(lib).lines() {
        let Some(rest) = line.trim().strip_prefix("pub use ") else {
            continue;
        };
        let module = leading_name(rest);
        let names = rest[module.len()..].trim_start_matches("::");
        let names = names.trim_matches(|c| c == '{' || c == '}' || c == ';');
        for name in names.split(',') {
            map.insert(leading_name(name), module.clone());
        }
    }
    map
}

/// Import circles between the domain crate's top-level modules (a folder counting as one), each
/// named by its files: the events sit above the entities they describe, a stream above its parts.
pub fn domain_circles(root: &Path) -> Vec<String> {
    let src = root.join(DOMAIN_SRC);
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let reexported = reexports(&read(&src.join("lib.rs")));
    let units: BTreeSet<String> = files
        .iter()
        .map(|f| unit_of(f.strip_prefix(&src).unwrap()))
        .filter(|u| u != "lib")
        .collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let relative = file.strip_prefix(&src).unwrap();
        let unit = unit_of(relative);
        if unit == "lib" {
            continue;
        }
        for name in crate_level_names(&code_of(&read(file)), &module_path(relative)) {
            let target = if units.contains(&name) {
                Some(name)
            } else {
                reexported.get(&name).cloned()
            };
            if let Some(target) = target.filter(|t| *t != unit) {
                edges.entry(unit.clone()).or_default().insert(target);
            }
        }
    }
    let shown = |unit: &str| {
        if src.join(unit).is_dir() {
            format!("{unit}/")
        } else {
            format!("{unit}.rs")
        }
    };
    let mut problems = Vec::new();
    for circle in circles(&units, &edges) {
        let names: Vec<String> = circle.iter().map(|u| shown(u)).collect();
        problems.push(format!(
            "{DOMAIN_SRC}: an import circle: {} -> {} (no file of the domain imports one that imports it back)",
            names.join(" -> "),
            names[0]
        ));
    }
    problems
}

/// One circle per strongly connected group of more than one module, as a path through it.
fn circles(
    units: &BTreeSet<String>,
    edges: &BTreeMap<String, BTreeSet<String>>,
) -> Vec<Vec<String>> {
    let reaches = |from: &String| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(u) = stack.pop() {
            for v in edges.get(&u).into_iter().flatten() {
                if seen.insert(v.clone()) {
                    stack.push(v.clone());
                }
            }
        }
        seen
    };
    let reach: BTreeMap<&String, BTreeSet<String>> =
        units.iter().map(|u| (u, reaches(u))).collect();
    let mut grouped = BTreeSet::new();
    let mut found = Vec::new();
    for u in units {
        if grouped.contains(u) || !reach[u].contains(u) {
            continue;
        }
        let group: BTreeSet<String> = units
            .iter()
            .filter(|v| reach[u].contains(*v) && reach[*v].contains(u))
            .cloned()
            .collect();
        grouped.extend(group.iter().cloned());
        // A walk from `u` that stays in the group and comes back: a shortest way round.
        let mut previous: BTreeMap<String, String> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([u.clone()]);
        let mut closing = None;
        while let Some(at) = queue.pop_front() {
            for v in edges.get(&at).into_iter().flatten() {
                if v == u {
                    closing = Some(at.clone());
                    break;
                }
                if group.contains(v) && !previous.contains_key(v) {
                    previous.insert(v.clone(), at.clone());
                    queue.push_back(v.clone());
                }
            }
            if closing.is_some() {
                break;
            }
        }
        let mut path = vec![closing.expect("a way back")];
        while path.last() != Some(u) {
            let before = previous[path.last().unwrap()].clone();
            path.push(before);
        }
        path.reverse();
        found.push(path);
    }
    found
}

/// Crates an HTTP server is made of: a background function linking one pays its size and cold
/// start for nothing. (`tower-http` is not one: reqwest, the webhook and LiveKit client, uses it
/// for its own requests.)
pub const HTTP_CRATES: [&str; 4] = ["hosting-http", "hosting-docs", "axum", "lambda_http"];
/// The functions fed by a queue, a stream or a schedule, never by a request.
pub const BACKGROUND_FUNCTIONS: [&str; 3] = ["delivery", "timers", "outbox-relay"];

/// Each HTTP crate a background function links, by `cargo tree` of the workspace at `root`.
pub fn background_http(root: &Path) -> Vec<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut problems = Vec::new();
    for function in BACKGROUND_FUNCTIONS {
        let out = std::process::Command::new(&cargo)
            .current_dir(root)
            .args([
                "tree",
                "--offline",
                "--locked",
                "-e",
                "normal",
                "--prefix",
                "none",
            ])
            .args(["--format", "{p}", "-p", function])
            .output()
            .expect("cargo tree");
        assert!(
            out.status.success(),
            "cargo tree -p {function}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let linked: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|line| line.split_whitespace().next().map(str::to_owned))
            .collect();
        for http in HTTP_CRATES {
            if linked.contains(http) {
                problems.push(format!(
                    "functions/{function}/Cargo.toml: links {http}, an HTTP crate (a background function serves no request)"
                ));
            }
        }
    }
    problems
}
