//! In Lambda the function refuses to start without its configuration, naming what is missing.

#[test]
fn exits_at_start_up_naming_a_missing_variable() {
    hosting_runtime::lambda::assert_fails_fast_without_configuration(env!("CARGO_BIN_EXE_clips"));
}
