//! `mrnic gen`: the committed outputs under `hdl/generated/<config>/` are
//! what the generators produce now, configs the hardware cannot build are
//! refused before anything is written, and an output folder is replaced
//! whole or not at all.
//!
//! When a block generator changes, `committed_outputs_are_current` fails
//! and prints the command that refreshes the committed files.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mrnic_hdl::gen::{outputs, write, GenError, WriteError, BLOCKS};
use mrnic_proto::Config;

mod common;
use common::Scratch;

fn regen(name: &str) -> String {
    format!("cargo run --release -- gen --config {name} --out hdl/generated/{name}")
}

/// Every file under `dir`, by relative path.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

#[test]
fn committed_outputs_are_current() {
    let committed_root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("generated");
    let mut problems = Vec::new();
    for name in ["small", "default"] {
        let cfg = Config::builtin(name).unwrap();
        let dir = Scratch::new(&format!("current-{name}"));
        let out = dir.0.join(name);
        write(&cfg, &out).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (fresh, committed) = (tree(&out), tree(&committed_root.join(name)));
        let mut diffs = Vec::new();
        for (path, text) in &fresh {
            match committed.get(path) {
                None => diffs.push(format!("{path}: missing from hdl/generated/{name}")),
                Some(c) if c != text => diffs.push(format!("{path}: differs from what the generator prints now")),
                Some(_) => {}
            }
        }
        for path in committed.keys().filter(|p| !fresh.contains_key(*p)) {
            diffs.push(format!("{path}: no longer generated"));
        }
        if !diffs.is_empty() {
            problems.push(format!(
                "hdl/generated/{name} is stale:\n  {}\nregenerate from the repository root with:\n  {}",
                diffs.join("\n  "),
                regen(name)
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "{}\nthen review the diff and commit it with the generator change.",
        problems.join("\n")
    );
}

#[test]
fn output_is_deterministic_and_complete() {
    let cfg = Config::builtin("small").unwrap();
    let a = outputs(&cfg).unwrap();
    assert_eq!(a, outputs(&cfg).unwrap());
    for b in BLOCKS {
        assert!(a.contains_key(&format!("{}.v", b.name)), "{}", b.name);
    }
    // Every block, then tx_engine's units and state, tx_engine, and the
    // top last: each file after every module it instantiates.
    let files_f: Vec<&str> = a["files.f"].lines().collect();
    let blocks: Vec<String> = BLOCKS.iter().map(|b| format!("{}.v", b.name)).collect();
    assert_eq!(files_f[..blocks.len()], blocks.iter().map(String::as_str).collect::<Vec<_>>()[..]);
    let rest = &files_f[blocks.len()..];
    assert_eq!(rest.len(), 16, "{rest:?}");
    assert!(rest[..14].iter().all(|f| f.starts_with("tx_") && a.contains_key(*f)), "{rest:?}");
    assert_eq!(rest[13..], ["tx_state.v", "tx_engine.v", "mrnic_core.v"]);
    assert!(a["mrnic.core"].contains("toplevel: mrnic_core\n"));
    assert!(a["README.md"].contains("The top is `mrnic_core`."));
    // `default` does not fit tx_engine's assembly yet: its blocks alone,
    // and the README says why there is no top.
    let d = outputs(&Config::builtin("default").unwrap()).unwrap();
    assert_eq!(d["files.f"].lines().count(), blocks.len());
    assert!(!d.contains_key("mrnic_core.v") && d["mrnic.core"].contains("toplevel: csr\n"));
    assert!(d["README.md"].contains("no tx_engine and no `mrnic_core` yet (tx_state keeps"), "{}", d["README.md"]);
    for f in ["mrnic.core", "regmap.md", "mrnic_regs.h", "README.md", "constraints/mrnic_core.xdc"] {
        assert!(a.contains_key(f), "{f}");
    }
    let core = &a["mrnic.core"];
    assert!(core.starts_with("CAPI=2:\n"));
    assert!(core.contains("name: mrnic:mrnic:mrnic_core_small:"));
    assert!(core.contains("file_type: verilogSource"));
    for t in ["default:", "lint:", "sim:"] {
        assert!(core.contains(&format!("\n  {t}\n")), "target {t}");
    }
    let h = &a["mrnic_regs.h"];
    assert!(h.contains("#ifndef MRNIC_REGS_H\n#define MRNIC_REGS_H"));
    assert!(h.contains("#define MRNIC_MR_COMMIT_GO_MASK 0x00000001u"));
    assert!(h.contains("#define MRNIC_UDP_PORT_RESET 0x000012bdu"));
}

/// The C header compiles and its values are what the map says.
#[test]
fn c_header_compiles() {
    let Ok(cc) = which_cc() else {
        eprintln!("skipped: no C compiler");
        return;
    };
    let dir = Scratch::new("cheader");
    let cfg = Config::builtin("default").unwrap();
    let files = outputs(&cfg).unwrap();
    std::fs::write(dir.0.join("mrnic_regs.h"), &files["mrnic_regs.h"]).unwrap();
    std::fs::write(
        dir.0.join("t.c"),
        "#include \"mrnic_regs.h\"\n#include \"mrnic_regs.h\"\n\
         _Static_assert(MRNIC_ID_RESET == 0x4d524e43u, \"magic\");\n\
         _Static_assert(MRNIC_CONTROL_ENABLE_MASK == 1u, \"enable\");\n\
         int main(void) { return MRNIC_SCRATCH_OFFSET == 0x10u ? 0 : 1; }\n",
    )
    .unwrap();
    let out = std::process::Command::new(cc)
        .args(["-std=c11", "-Wall", "-Werror", "-fsyntax-only", "t.c"])
        .current_dir(&dir.0)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

fn which_cc() -> Result<&'static str, ()> {
    for cc in ["cc", "gcc", "clang"] {
        if std::process::Command::new(cc).arg("--version").output().is_ok() {
            return Ok(cc);
        }
    }
    Err(())
}

#[test]
fn unbuildable_configs_are_refused_before_anything_is_written() {
    let dir = Scratch::new("refuse");
    let out = dir.0.join("out");
    let good = Config::builtin("small").unwrap();
    write(&good, &out).unwrap();
    let before = tree(&out);

    // One connection passes the config checks but the tables need 2 (the
    // first block in the table that notices names it).
    let mut bad = good.clone();
    bad.transport.connections = 1;
    match write(&bad, &out) {
        Err(WriteError::Gen(GenError::Config { field, why, .. })) => {
            assert_eq!(field, "transport.connections", "{why}");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    // 64 paths: above what the selector supports.
    let mut bad = good.clone();
    bad.transport.paths_per_conn = 64;
    let e = write(&bad, &out).unwrap_err().to_string();
    assert!(e.contains("transport.paths_per_conn") && e.contains("64"), "{e}");
    // Read latency 3: the table memories support 1 or 2.
    let mut bad = good.clone();
    bad.hardware.table_read_latency = 3;
    let e = write(&bad, &out).unwrap_err().to_string();
    assert!(e.contains("hardware.table_read_latency"), "{e}");

    // A retransmit ring deeper than the window: only tx_engine's sizes
    // refuse it, and the first block built from its ports, enable_gate
    // (whose work request channel mirrors tx_engine's), names the field and
    // the part, not a field of its own.
    let mut bad = good.clone();
    bad.hardware.tx_ring_depth = bad.transport.window * 2;
    match write(&bad, &out) {
        Err(WriteError::Gen(GenError::Config { block, field, why, .. })) => {
            assert_eq!((block, field), ("enable_gate", "hardware.tx_ring_depth"), "{why}");
            assert!(why.starts_with("tx_engine: "), "{why}");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }

    assert_eq!(tree(&out), before, "a refused config changed the output folder");
    let leftovers: Vec<_> = std::fs::read_dir(&dir.0).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(leftovers, vec![std::ffi::OsString::from("out")], "temp folders left behind");
}

#[test]
fn a_folder_that_is_not_a_gen_output_is_never_replaced() {
    let dir = Scratch::new("notours");
    let out = dir.0.join("src");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("main.rs"), "fn main() {}").unwrap();
    let cfg = Config::builtin("small").unwrap();
    assert!(matches!(write(&cfg, &out), Err(WriteError::NotOurs(_))));
    assert_eq!(std::fs::read_to_string(out.join("main.rs")).unwrap(), "fn main() {}");
    // An empty folder is fine.
    let empty = dir.0.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    write(&cfg, &empty).unwrap();
    assert!(empty.join("csr.v").is_file());
}

#[test]
fn a_previous_output_is_replaced_whole() {
    let dir = Scratch::new("replace");
    let out = dir.0.join("rtl");
    write(&Config::builtin("default").unwrap(), &out).unwrap();
    std::fs::write(out.join("stale.v"), "// left by an older generator").unwrap();
    let files = write(&Config::builtin("small").unwrap(), &out).unwrap();
    let now = tree(&out);
    assert_eq!(now.keys().cloned().collect::<Vec<_>>(), files);
    assert!(!now.contains_key("stale.v"));
    assert!(String::from_utf8_lossy(&now["README.md"]).contains("config `small`"));
}
