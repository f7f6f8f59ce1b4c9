//! The printed example design, compared with committed files so any change to
//! the printer or the example shows up as a diff in review.
//!
//! After an intended change, regenerate with
//! `UPDATE_SNAPSHOTS=1 cargo test -p mrnic-hdl --test snapshot` and review the diff.

use std::path::PathBuf;

use mrnic_hdl::example::{event_log_design, tour, EventLog};
use mrnic_hdl::Header;

const COMMAND: &str = "UPDATE_SNAPSHOTS=1 cargo test -p mrnic-hdl --test snapshot";

#[test]
fn example_design_matches_snapshots() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    let update = std::env::var_os("UPDATE_SNAPSHOTS").is_some();
    let header = Header::new("mrnic_hdl::example (default configs)", COMMAND);
    let mut modules = event_log_design(&EventLog::default()).unwrap();
    modules.push(tour(8));
    for m in modules {
        let text = m.to_verilog(&header).unwrap_or_else(|e| panic!("{e}"));
        let path = dir.join(format!("{}.v", m.name()));
        if update {
            std::fs::write(&path, &text).unwrap();
            continue;
        }
        let expected =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}; run {COMMAND}", path.display()));
        assert!(
            text == expected,
            "{} differs from the printed module; if the change is intended, run {COMMAND}\n--- printed ---\n{text}",
            path.display()
        );
    }
}
