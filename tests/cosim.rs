//! `mrnic cosim --block all`: every block that has RTL runs in lockstep
//! with its model, one line each, and a block that cannot start is an
//! error naming it, not a skipped line.

use std::process::Command;

fn mrnic(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mrnic")).args(args).output().expect("runs mrnic");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

#[test]
fn every_block_runs_in_lockstep_and_is_listed() {
    if mrnic_verif::skip_without_verilator() {
        return;
    }
    let (ok, list, err) = mrnic(&["cosim", "--block", "list"]);
    assert!(ok, "{err}");
    let blocks: Vec<&str> = list.lines().filter(|b| *b != "verif_fifo").collect();
    assert!(blocks.contains(&"rx_ctl") && blocks.len() >= 18, "{list}");

    let (ok, out, err) = mrnic(&["cosim", "--block", "all", "--cycles", "3000", "--seed", "5"]);
    assert!(ok, "{out}\n{err}");
    for b in &blocks {
        let line = out.lines().find(|l| l.split_whitespace().next() == Some(b)).unwrap_or_else(|| panic!("{b}: {out}"));
        let cols: Vec<&str> = line.split_whitespace().collect();
        assert_eq!((cols[1], cols[3]), ("3000", "0"), "{b}: cycles and mismatches: {line}");
    }
}

#[test]
fn all_on_default_runs_what_is_built_and_says_what_is_not() {
    if mrnic_verif::skip_without_verilator() {
        return;
    }
    let (ok, out, err) = mrnic(&["cosim", "--config", "default", "--block", "all", "--cycles", "500"]);
    assert!(ok, "{out}\n{err}");
    for b in ["path_selector", "rx_ctl"] {
        let l = out.lines().find(|l| l.split_whitespace().next() == Some(b)).unwrap_or_else(|| panic!("{b}: {out}"));
        assert_eq!(l.split_whitespace().nth(3), Some("0"), "{b}: mismatches: {l}");
    }
    // Left out of the default build on purpose (verif/README.md).
    assert!(out.lines().any(|l| l.starts_with("rx_parser ") && l.contains("not run")), "{out}");
}

#[test]
fn an_unknown_block_or_a_top_is_refused_with_the_list() {
    let (ok, _, err) = mrnic(&["cosim", "--block", "nope", "--cycles", "10"]);
    assert!(!ok && err.contains("rx_ctl"), "{err}");
    let (ok, _, err) = mrnic(&["cosim", "--block", "top", "--cycles", "10"]);
    assert!(!ok && err.contains("not built yet"), "{err}");
}
