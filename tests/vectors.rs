//! `mrnic vectors check` on the committed vectors (`verif/vectors/`): the
//! reference, the cycle model and the Verilated RTL pass, the last line is `N passed, N
//! failed`, a wrong expectation fails, and `gen` writes what is committed.

use std::path::{Path, PathBuf};
use std::process::Command;

fn mrnic(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mrnic")).args(args).output().expect("runs mrnic");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn committed() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("verif/vectors").display().to_string()
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mrnic-cli-vectors-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// `(passed, failed)` from the last line, which must be exactly that.
fn totals(stdout: &str) -> (usize, usize) {
    let last = stdout.lines().last().expect("output");
    let words: Vec<&str> = last.split(' ').collect();
    assert!(
        words.len() == 4 && words[1] == "passed," && words[3] == "failed",
        "last line is not `N passed, N failed`: {last:?}"
    );
    (words[0].parse().unwrap(), words[2].parse().unwrap())
}

#[test]
fn the_reference_passes_the_committed_vectors() {
    let (ok, out, err) = mrnic(&["vectors", "check", "--target", "reference", &committed()]);
    assert!(ok, "{out}{err}");
    let (pass, fail) = totals(&out);
    assert!(pass > 50 && fail == 0, "{out}");
}

#[test]
fn the_model_passes_every_modelled_block() {
    let (ok, out, err) = mrnic(&["vectors", "check", "--target", "model", &committed()]);
    let (pass, fail) = totals(&out);
    for f in ["path_selector.jsonl", "telemetry.jsonl", "dma_write.jsonl", "rx_parser.jsonl"] {
        assert!(out.contains(&format!("{f}: ")) && !out.contains(&format!("{f}: 0 passed")), "{f} not run: {out}");
        assert!(
            out.contains(&format!("{f}: ")) && out.lines().any(|l| l.starts_with(f) && l.contains(" 0 failed")),
            "{out}"
        );
    }
    // rx and tx run on the top (mrnic_core), every vector of them too.
    for f in ["rx.jsonl", "tx.jsonl"] {
        assert!(out.lines().any(|l| l.starts_with(f) && l.contains(" 0 failed (model)")), "{out}");
    }
    assert!(ok && fail == 0, "{out}{err}");
    assert!(pass > 30, "{out}");
}

#[test]
fn the_model_top_and_its_rtl_catch_a_wrong_packet() {
    // One byte of tx-000's first expected packet changed: the frame the
    // top sends for that work request must no longer match.
    let d = tmp("tx");
    std::fs::create_dir_all(&d).unwrap();
    let text = std::fs::read_to_string(Path::new(&committed()).join("tx.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut head: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    head["vectors"] = 1.into();
    let mut v: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
    assert_eq!(v["id"], "tx-000");
    let bytes = v["steps"][0]["out"]["pkts"][0]["bytes"].as_str().unwrap().to_string();
    let flipped = format!("{}{}", &bytes[..60], if &bytes[60..61] == "0" { "1" } else { "0" }) + &bytes[61..];
    v["steps"][0]["out"]["pkts"][0]["bytes"] = flipped.into();
    std::fs::write(d.join("tx.jsonl"), format!("{head}\n{v}\n")).unwrap();
    let (ok, out, _) = mrnic(&["vectors", "check", "--target", "model", d.to_str().unwrap()]);
    assert!(!ok && totals(&out) == (0, 1), "{out}");
    assert!(out.contains("FAIL tx.jsonl:2 tx-000: step 0 (t=0 ns): packet 0 differs"), "{out}");
    // The same on the top's RTL, where this build has it.
    let (ok, out, err) = mrnic(&["vectors", "check", "--target", "rtl", d.to_str().unwrap()]);
    if !err.contains("no Verilated designs") {
        assert!(!ok && totals(&out) == (0, 1), "{out}{err}");
        assert!(out.contains("FAIL tx.jsonl:2 tx-000: step 0 (t=0 ns): packet 0 differs"), "{out}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn the_rtl_passes_every_block_it_has_and_catches_a_wrong_expectation() {
    let (ok, out, err) = mrnic(&["vectors", "check", "--target", "rtl", &committed()]);
    if !ok && err.contains("no Verilated designs") {
        println!("skipped: {err}");
        return;
    }
    assert!(ok, "{out}{err}");
    assert_eq!(totals(&out).1, 0, "{out}");
    // Every vector runs on the RTL, none is left "not covered": the
    // per-block files on their blocks, rx and tx on the whole top.
    for (f, n) in
        [("path_selector", 13), ("telemetry", 20), ("dma_write", 12), ("rx_parser", 10), ("rx", 30), ("tx", 11)]
    {
        assert!(out.contains(&format!("{f}.jsonl: {n} passed, 0 failed (rtl)")), "{f}: {out}");
    }
    // A completion's length off by one fails on the top's RTL.
    let d = tmp("rtl-rx");
    std::fs::create_dir_all(&d).unwrap();
    let text = std::fs::read_to_string(Path::new(&committed()).join("rx.jsonl")).unwrap();
    std::fs::write(d.join("rx.jsonl"), text.replacen("\"byte_len\":300", "\"byte_len\":301", 1)).unwrap();
    let (ok, out, _) = mrnic(&["vectors", "check", "--target", "rtl", d.to_str().unwrap()]);
    assert!(!ok && totals(&out).1 == 1, "{out}");
    let _ = std::fs::remove_dir_all(&d);
    // A wrong drop reason fails on the RTL as on the model.
    let d = tmp("rtl");
    std::fs::create_dir_all(&d).unwrap();
    let text = std::fs::read_to_string(Path::new(&committed()).join("rx_parser.jsonl")).unwrap();
    std::fs::write(d.join("rx_parser.jsonl"), text.replacen("\"verdict\":\"icrc\"", "\"verdict\":\"length\"", 1))
        .unwrap();
    let (ok, out, _) = mrnic(&["vectors", "check", "--target", "rtl", d.to_str().unwrap()]);
    assert!(!ok && totals(&out) == (9, 1), "{out}");
    assert!(out.contains("FAIL rx_parser.jsonl:") && out.contains("drop pulses"), "{out}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn gen_writes_the_committed_set_and_the_model_catches_a_wrong_expectation() {
    let d = tmp("gen");
    let (ok, out, err) = mrnic(&["vectors", "gen", "--config", "small", "--seed", "1", "--out", d.to_str().unwrap()]);
    assert!(ok, "{out}{err}");
    for f in ["path_selector", "telemetry", "dma_write", "rx_parser", "rx", "tx"] {
        let name = format!("{f}.jsonl");
        let a = std::fs::read(d.join(&name)).unwrap();
        let b = std::fs::read(Path::new(&committed()).join(&name)).unwrap();
        assert!(a == b, "verif/vectors/{name} is stale: regenerate with `cargo run -- vectors gen --config small --seed 1 --out verif/vectors`");
    }
    // The block files only from here (the top's rx and tx have their own
    // tests above; they are the slow part of a model run).
    std::fs::remove_file(d.join("rx.jsonl")).unwrap();
    std::fs::remove_file(d.join("tx.jsonl")).unwrap();
    // One AW length off by one: the model target must fail that vector.
    let p = d.join("dma_write.jsonl");
    let text = std::fs::read_to_string(&p).unwrap();
    std::fs::write(&p, text.replacen("\"awlen\":63", "\"awlen\":62", 1)).unwrap();
    let (ok, out, _) = mrnic(&["vectors", "check", "--target", "model", d.to_str().unwrap()]);
    assert!(!ok, "{out}");
    assert_eq!(totals(&out).1, 1, "{out}");
    assert!(out.contains("FAIL dma_write.jsonl:") && out.contains("awlen"), "{out}");
    // One drop reason changed: the model's rx_parser must disagree.
    let p2 = d.join("rx_parser.jsonl");
    let text = std::fs::read_to_string(&p2).unwrap();
    std::fs::write(&p2, text.replacen("\"verdict\":\"icrc\"", "\"verdict\":\"length\"", 1)).unwrap();
    let (ok, out, _) = mrnic(&["vectors", "check", "--target", "model", d.to_str().unwrap()]);
    assert!(!ok && totals(&out).1 == 2, "{out}");
    assert!(out.contains("FAIL rx_parser.jsonl:") && out.contains("drop pulses"), "{out}");
    // A bad file is an error naming file and line, not a panic.
    std::fs::write(&p, "{\"format\":\"mrnic-vectors\",\"version\":9}\n").unwrap();
    let (ok, out, err) = mrnic(&["vectors", "check", "--target", "model", d.to_str().unwrap()]);
    assert!(!ok && err.contains("dma_write.jsonl:1:") && err.contains("version"), "{out}{err}");
    assert!(!err.contains("panicked"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}
