//! Each check of the house rules fails on a small tree made to break it, naming the file and
//! the rule, and passes once the tree is put right: the checks can fail.

use std::path::Path;

use super::checks::*;

fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A port of `methods` methods, one of them with a default body holding a nested `fn`.
fn port(methods: usize) -> String {
    let mut text = String::from("#[async_trait]\npub trait WideStore: Send + Sync {\n");
    for i in 0..methods {
        text.push_str(&format!(
            "    /// Method {i}: fn in a comment is no method.\n    async fn method_{i}(&self) -> StoreResult<()>;\n"
        ));
    }
    text.push_str("    fn described(&self) -> u8 {\n        fn helper() -> u8 { 1 }\n        helper()\n    }\n}\n");
    text
}

#[test]
fn each_check_fails_on_a_tree_that_breaks_it_and_names_the_file() {
    let tree = tempfile::tempdir().unwrap();
    let root = tree.path();
    write(root, "README.md", &"a line\n".repeat(201));
    write(root, &format!("{PORTS_DIR}/wide.rs"), &port(10));
    // Two files of the domain that import each other, one through the crate root's
    // re-export, one through `super::`; a third imported by both, in no circle.
    write(
        root,
        &format!("{DOMAIN_SRC}/lib.rs"),
        "pub mod clock;\npub mod event;\npub mod stream;\npub use stream::{Stream, StreamStatus};\n",
    );
    write(
        root,
        &format!("{DOMAIN_SRC}/event.rs"),
        "use crate::Stream;\nuse crate::clock::now;\npub struct Event(Stream);\n",
    );
    write(
        root,
        &format!("{DOMAIN_SRC}/stream/mod.rs"),
        "mod parts;\nuse crate::clock::now;\npub struct Stream;\npub enum StreamStatus {}\n",
    );
    write(
        root,
        &format!("{DOMAIN_SRC}/stream/parts.rs"),
        "// crate::event::Event in a comment is no import\nuse super::super::{clock, event::EventType};\n",
    );
    write(root, &format!("{DOMAIN_SRC}/clock.rs"), "pub fn now() {}\n");

    assert_eq!(
        long_readme(root),
        ["README.md: 201 lines, over 200 (move the detail into docs/)"]
    );
    // Ten methods and a default one: eleven.
    assert_eq!(
        wide_ports(root),
        [format!(
            "{PORTS_DIR}/wide.rs: trait WideStore has 11 methods, over 10 (split it by what its callers need)"
        )]
    );
    assert_eq!(
        domain_circles(root),
        [format!(
            "{DOMAIN_SRC}: an import circle: event.rs -> stream/ -> event.rs (no file of the domain imports one that imports it back)"
        )]
    );

    // Put right, each passes.
    write(root, "README.md", &"a line\n".repeat(200));
    write(root, &format!("{PORTS_DIR}/wide.rs"), &port(9));
    write(
        root,
        &format!("{DOMAIN_SRC}/stream/parts.rs"),
        "// crate::event::Event in a comment is no import\nuse super::super::clock;\n",
    );
    assert_eq!(long_readme(root), Vec::<String>::new());
    assert_eq!(wide_ports(root), Vec::<String>::new());
    assert_eq!(domain_circles(root), Vec::<String>::new());
}
