//! The size of the code's files (docs/development.md, "Layout"): a source file over 600 lines,
//! or a test file over 500, is two concerns to split. The generated clients are exempt.

use std::path::{Path, PathBuf};

const MAX_SOURCE_LINES: usize = 600;
const MAX_TEST_LINES: usize = 500;

/// Every `.rs` file of the workspace's own code: not the build directory, not the generated
/// clients, not version control.
fn rust_files(dir: &Path, into: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a readable folder") {
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
fn is_test_file(relative: &Path) -> bool {
    relative
        .components()
        .any(|part| part.as_os_str() == "tests")
}

fn oversized(root: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(root, &mut files);
    assert!(files.len() > 100, "the workspace's files were found");
    let mut problems = Vec::new();
    for file in files {
        let relative = file.strip_prefix(root).expect("under the root");
        let lines = std::fs::read_to_string(&file)
            .expect("readable")
            .lines()
            .count();
        let max = if is_test_file(relative) {
            MAX_TEST_LINES
        } else {
            MAX_SOURCE_LINES
        };
        if lines > max {
            problems.push(format!("{}: {lines} lines, over {max}", relative.display()));
        }
    }
    problems.sort();
    problems
}

#[test]
fn no_source_file_over_600_lines_and_no_test_file_over_500() {
    let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    assert_eq!(oversized(root), Vec::<String>::new());
}

#[test]
fn a_test_file_is_one_under_a_tests_folder() {
    assert!(is_test_file(Path::new(
        "local-api/tests/api/streams/get.rs"
    )));
    assert!(is_test_file(Path::new("shared/aws/tests/trust.rs")));
    assert!(!is_test_file(Path::new(
        "shared/app/src/service/streams.rs"
    )));
    assert!(!is_test_file(Path::new("local-api/examples/scale/main.rs")));
}
