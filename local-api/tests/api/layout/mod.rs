//! The house rules (docs/development.md, "Layout"), checked on the workspace: file sizes, the
//! README's length, the width of the store ports, no import circle in the domain crate, and no
//! HTTP crate in a background function. Each failure names the file and the rule it broke;
//! `fixture.rs` shows each check failing on a tree made to break it.

mod checks;
mod fixture;

use std::path::Path;

use checks::*;

fn workspace() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

#[test]
fn no_source_file_over_600_lines_and_no_test_file_over_500() {
    let mut files = Vec::new();
    rust_files(workspace(), &mut files);
    assert!(files.len() > 100, "the workspace's files were found");
    assert_eq!(oversized(workspace()), Vec::<String>::new());
}

#[test]
fn the_readme_holds_at_most_200_lines() {
    assert_eq!(long_readme(workspace()), Vec::<String>::new());
}

#[test]
fn no_store_port_has_more_than_10_methods() {
    assert_eq!(wide_ports(workspace()), Vec::<String>::new());
}

#[test]
fn no_two_files_of_the_domain_import_each_other() {
    assert_eq!(domain_circles(workspace()), Vec::<String>::new());
}

#[test]
fn the_background_functions_link_no_http_crate() {
    assert_eq!(background_http(workspace()), Vec::<String>::new());
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
