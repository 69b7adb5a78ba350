//! The workspace README's lead Rust example is this crate's README example, word for word,
//! so the example a new user reads first is the one `cargo test -p multiforadb` compiles and
//! runs as a doctest (issue 50: it once named a `User` type and an `ada` value it never
//! defined).

/// The first ```rust block of `text`, without its fences.
fn first_rust_block(text: &str) -> Option<&str> {
    let start = text.find("```rust\n")? + "```rust\n".len();
    let length = text.get(start..)?.find("```")?;
    text.get(start..start + length)
}

#[test]
fn the_workspace_readme_leads_with_this_crate_s_example() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let ours = std::fs::read_to_string(root.join("README.md")).expect("crate README");
    let workspace = std::fs::read_to_string(root.join("../../README.md")).expect("README");
    let ours = first_rust_block(&ours).expect("a rust block in crates/multiforadb/README.md");
    let workspace = first_rust_block(&workspace).expect("a rust block in README.md");
    assert_eq!(
        workspace, ours,
        "README.md's first rust block must be crates/multiforadb/README.md's"
    );
    assert!(ours.contains("use multiforadb::"), "{ours}");
}

#[test]
fn first_rust_block_takes_the_first_rust_fence_only() {
    let text = "a\n```sh\nx\n```\n```rust\nlet a = 1;\n```\n```rust\nb\n```\n";
    assert_eq!(first_rust_block(text), Some("let a = 1;\n"));
    assert_eq!(first_rust_block("```sh\nx\n```\n"), None);
}
