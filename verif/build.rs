//! Verilates every design of the table below, compiles the generic C++
//! shim with `cxx`, and links it all into `mrnic-verif`.
//!
//! Without Verilator the crate still compiles: the `verilator` cfg is not
//! set, and the co-simulation tests print "skipped: verilator not
//! installed" (with `CI=true` a missing Verilator fails the build instead).
//! A design that fails to Verilate (lint, a port mismatch) does not break
//! the build: its error is recorded, and opening it at run time fails with
//! that message, so the failure belongs to that design's tests.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use mrnic_model::block::{Dir, PortDef};

#[path = "src/designs/verif_fifo.rs"]
#[allow(dead_code)]
mod verif_fifo;
#[path = "src/verilate.rs"]
mod verilate;

use verilate::{DesignSpec, PortSpec, Toolchain};

/// The designs built into the crate: one row per (block, config). A row is
/// the block name (= Verilog top), the config name, the Verilog files and the
/// model's port list; lint waivers go in `waive` with a reason.
fn designs() -> Vec<DesignSpec> {
    vec![
        // The harness's own test design (a hand-written fixture).
        row("verif_fifo", "test", verif_fifo::verilog(), &verif_fifo::ports()),
    ]
}

fn row(block: &str, config: &str, verilog: Vec<(String, String)>, ports: &[PortDef]) -> DesignSpec {
    DesignSpec {
        block: block.into(),
        config: config.into(),
        verilog,
        ports: ports
            .iter()
            .map(|p| PortSpec { name: p.name.clone(), input: p.dir == Dir::In, width: p.width })
            .collect(),
        waivers: Vec::new(),
    }
}

/// One design's result, written into `designs.rs` for the library.
struct Row {
    spec: DesignSpec,
    key: String,
    status: Result<verilate::Built, String>,
}

fn main() {
    println!("cargo:rustc-check-cfg=cfg(verilator)");
    for p in ["build.rs", "src/verilate.rs", "src/designs", "src/ffi.rs", "designs", "shim"] {
        println!("cargo:rerun-if-changed={p}");
    }
    for v in ["VERILATOR", "VERILATOR_ROOT", "CXX", "CI", "MRNIC_VERILATED_CACHE", "PATH"] {
        println!("cargo:rerun-if-env-changed={v}");
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");

    let tc = match Toolchain::detect() {
        Ok(Some(tc)) => tc,
        Ok(None) => {
            if ci {
                panic!("verilator not installed, and CI=true: install it (apt-get install -y verilator) or unset CI");
            }
            println!("cargo:warning=verilator not installed: the co-simulation tests will be skipped");
            write_designs(&out, &[], false, "verilator not installed (apt-get install -y verilator)");
            return;
        }
        Err(e) => {
            if ci {
                panic!("{e}");
            }
            println!("cargo:warning={e}; the co-simulation tests will be skipped");
            write_designs(&out, &[], false, &e);
            return;
        }
    };

    let cache = cache_root(&out);
    println!("cargo:rustc-env=MRNIC_VERIF_CACHE={}", cache.display());
    let mut rows = Vec::new();
    for spec in designs() {
        let key = verilate::cache_key(&tc, &spec);
        let status = verilate::build_design(&tc, &spec, &cache, &cache).map_err(|e| e.0);
        match &status {
            Ok(b) => {
                if let verilate::Outcome::Built { reason, seconds } = &b.outcome {
                    println!("cargo:warning=Verilated {} ({}) in {seconds:.0} s: {reason}", spec.block, spec.config);
                }
            }
            Err(e) => {
                if ci {
                    panic!("Verilating {} ({}) failed:\n{e}", spec.block, spec.config);
                }
                let first = e.lines().take(6).collect::<Vec<_>>().join(" | ");
                println!(
                    "cargo:warning=Verilating {} ({}) failed; its co-simulation will fail: {first}",
                    spec.block, spec.config
                );
            }
        }
        rows.push(Row { spec, key, status });
    }

    let runtime = verilate::runtime_dir(&tc, &cache);
    if !runtime.join("BUILD_OK").exists() {
        // Nothing Verilated: no runtime to link against.
        write_designs(&out, &rows, false, "no design could be Verilated; see the build warnings");
        return;
    }

    let shim_dir = out.join("shim");
    fs::create_dir_all(&shim_dir).expect("creating OUT_DIR/shim");
    let mut files = vec![PathBuf::from("shim/sim.cpp")];
    let mut prefixes = Vec::new();
    let mut build = cxx_build::bridge("src/ffi.rs");
    for r in &rows {
        if let Ok(b) = &r.status {
            let f = shim_dir.join(format!("{}.cpp", b.prefix));
            write_if_changed(&f, &verilate::shim_cpp(&r.spec));
            files.push(f);
            prefixes.push(b.prefix.clone());
            build.include(&b.obj_dir);
        }
    }
    let reg = shim_dir.join("registry.cpp");
    write_if_changed(&reg, &verilate::registry_cpp(&prefixes));
    files.push(reg);
    build
        .files(&files)
        .includes(tc.include_dirs())
        .std("c++17")
        .opt_level(2)
        .flag_if_supported("-faligned-new")
        .flag_if_supported("-Wno-unused-parameter")
        .flag_if_supported("-Wno-sign-compare")
        .compile("mrnic_verif_shim");

    // The model archives and the runtime come after the shim that uses them.
    for r in &rows {
        if let Ok(b) = &r.status {
            println!("cargo:rustc-link-search=native={}", b.dir.display());
            println!("cargo:rustc-link-lib=static={}", b.lib);
        }
    }
    println!("cargo:rustc-link-search=native={}", runtime.display());
    println!("cargo:rustc-link-lib=static={}", verilate::RUNTIME_LIB);
    println!("cargo:rustc-link-lib=dylib=stdc++");
    println!("cargo:rustc-link-lib=dylib=pthread");
    println!("cargo:rustc-cfg=verilator");
    write_designs(&out, &rows, true, "");
}

/// `<target>/verilated`, shared by every profile of one target directory
/// (`OUT_DIR` is `<target>/<profile>/build/<pkg>-<hash>/out`).
fn cache_root(out: &Path) -> PathBuf {
    if let Ok(dir) = std::env::var("MRNIC_VERILATED_CACHE") {
        if !dir.is_empty() {
            return PathBuf::from(dir);
        }
    }
    out.ancestors().nth(4).unwrap_or(out).join("verilated")
}

fn write_if_changed(path: &Path, text: &str) {
    if fs::read_to_string(path).ok().as_deref() != Some(text) {
        fs::write(path, text).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    }
}

/// `OUT_DIR/designs.rs`: the table the library opens designs from.
fn write_designs(out: &Path, rows: &[Row], linked: bool, why_not: &str) {
    let mut s = String::from("// Generated by verif/build.rs.\n");
    let _ = writeln!(s, "pub(crate) const LINKED: bool = {linked};");
    let _ = writeln!(s, "pub(crate) const NOT_LINKED_REASON: &str = {why_not:?};");
    let _ = writeln!(s, "pub(crate) static DESIGNS: &[DesignInfo] = &[");
    for r in rows {
        let (prefix, status) = match &r.status {
            Ok(b) => (b.prefix.clone(), "Ok(())".to_string()),
            Err(e) => (r.spec.prefix(), format!("Err({e:?})")),
        };
        let _ = writeln!(
            s,
            "    DesignInfo {{ block: {:?}, config: {:?}, prefix: {:?}, key: {:?}, status: {status}, ports: &[",
            r.spec.block, r.spec.config, prefix, r.key
        );
        for p in &r.spec.ports {
            let _ = writeln!(s, "        PortInfo {{ name: {:?}, input: {}, width: {} }},", p.name, p.input, p.width);
        }
        let _ = writeln!(s, "    ] }},");
    }
    let _ = writeln!(s, "];");
    write_if_changed(&out.join("designs.rs"), &s);
}
