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
use mrnic_proto::Config;

#[path = "src/designs/verif_fifo.rs"]
#[allow(dead_code)]
mod verif_fifo;
#[path = "src/verilate.rs"]
mod verilate;

use verilate::{DesignSpec, PortSpec, Toolchain};

/// One row of the design table: `row!(block, "config")` for a block whose
/// generator is `mrnic_hdl::<block>::verilog`, with the ports of its model
/// as `mrnic_model::netlist::model_block` makes it (every clocked block of
/// the top follows that layout).
macro_rules! row {
    ($block:ident, $config:literal) => {
        block(stringify!($block), $config, mrnic_hdl::$block::verilog, |c: &Config| {
            mrnic_model::netlist::model_block(stringify!($block), c).map(|b| b.ports().to_vec())
        })
    };
}

/// The designs built into the crate: one row per (block, config). A row
/// gives the block name (= Verilog top), the config name, the Verilog files
/// and the model's port list; lint waivers go in `waivers`, each with a
/// reason. A row whose generator fails is recorded as a failed design.
fn designs() -> Vec<Design> {
    vec![
        // The harness's own test design (no config).
        Design::new("verif_fifo", "test", None, || Ok((verif_fifo::verilog()?, verif_fifo::ports()))),
        row!(path_selector, "small"),
        row!(path_selector, "default"),
        // 64-bit only: the 512-bit parser is covered by the Icarus replay in
        // hdl/tests/rx_parser.rs, and would add minutes to every verif build.
        row!(rx_parser, "small"),
        row!(path_telemetry, "small"),
        row!(dma_write_engine, "small"),
        row!(recv_match, "small"),
        row!(sack_gen, "small"),
        row!(csr, "small"),
        row!(conn_table, "small"),
        row!(cpl_engine, "small"),
        // The top's clocked glue blocks and its receive controller. The two
        // combinational ones (op_map, rx_drop_or) have no clock for the
        // harness to step; Icarus compares them with their models.
        row!(enable_gate, "small"),
        row!(ts_counter, "small"),
        row!(rate_hint, "small"),
        row!(cqe_merge, "small"),
        row!(rx_buffer, "small"),
        row!(msg_check, "small"),
        row!(mr_check, "small"),
        row!(probe_walk, "small"),
        row!(conn_search, "small"),
        row!(rx_ctl, "small"),
        // `default` for every block whose build is cheap enough for CI
        // (not rx_parser, above). Their sessions turn mid-run resets off
        // where the reset sweep is long (`blocks::sweep_resets`).
        row!(cqe_merge, "default"),
        row!(mr_check, "default"),
        row!(conn_search, "default"),
        row!(probe_walk, "default"),
        row!(dma_write_engine, "default"),
        row!(csr, "default"),
        row!(conn_table, "default"),
        row!(rx_buffer, "default"),
        row!(ts_counter, "default"),
        row!(path_telemetry, "default"),
        row!(rate_hint, "default"),
        row!(rx_ctl, "default"),
        row!(enable_gate, "default"),
        // Up to 65,536 cycles of reset sweep before the first transaction.
        row!(sack_gen, "default"),
        row!(recv_match, "default"),
        row!(cpl_engine, "default"),
        row!(msg_check, "default"),
        // The top's receive side, and the whole top (tx_engine's assembly
        // builds `small` only).
        rx_core("small"),
        core("small"),
    ]
}

/// The whole `mrnic_core` for a built-in config.
fn core(config: &'static str) -> Design {
    with_builtin(mrnic_model::mrnic_core::NAME, config, |cfg| {
        Ok((mrnic_hdl::mrnic_core::verilog(cfg)?, mrnic_model::mrnic_core::netlist(cfg)?.ports))
    })
}

/// `mrnic_core`'s receive side for a built-in config: every module of
/// the part, and the ports of the model's netlist.
fn rx_core(config: &'static str) -> Design {
    with_builtin(mrnic_model::mrnic_core::RX_NAME, config, |cfg| {
        Ok((mrnic_hdl::mrnic_core::rx_verilog(cfg)?, mrnic_model::mrnic_core::rx_netlist(cfg)?.ports))
    })
}

/// A pipeline block for a built-in config: its generator's Verilog and its
/// model's ports.
fn block<E1: std::fmt::Display, E2: std::fmt::Display>(
    name: &'static str,
    config: &'static str,
    verilog: fn(&Config) -> Result<String, E1>,
    ports: fn(&Config) -> Result<Vec<PortDef>, E2>,
) -> Design {
    with_builtin(name, config, |cfg| {
        let v = verilog(cfg).map_err(|e| e.to_string())?;
        let p = ports(cfg).map_err(|e| e.to_string())?;
        Ok((vec![(format!("{name}.v"), v)], p))
    })
}

/// A design of built-in config `config` made by `gen`; an unknown config
/// is a failed design.
fn with_builtin(name: &'static str, config: &'static str, gen: impl FnOnce(&Config) -> Generated) -> Design {
    match Config::builtin(config) {
        Ok(cfg) => Design::new(name, config, Some(&cfg), || gen(&cfg)),
        Err(e) => Design::new(name, config, None, || Err(format!("config {config}: {e}"))),
    }
}

/// A row of the table, before Verilating.
struct Design {
    block: &'static str,
    config: &'static str,
    /// Hash of the config's TOML, so `mrnic cosim --config FILE` finds the
    /// row built for that config ("" for designs without a config).
    fingerprint: String,
    spec: Result<DesignSpec, String>,
}

type Generated = Result<(Vec<(String, String)>, Vec<PortDef>), String>;

impl Design {
    fn new(block: &'static str, config: &'static str, cfg: Option<&Config>, gen: impl FnOnce() -> Generated) -> Design {
        let fingerprint = cfg.map(|c| format!("{:032x}", verilate::fnv128(c.to_toml().as_bytes()))).unwrap_or_default();
        let spec = gen().map(|(verilog, ports)| DesignSpec {
            block: block.into(),
            config: config.into(),
            verilog,
            ports: ports
                .iter()
                .map(|p| PortSpec { name: p.name.clone(), input: p.dir == Dir::In, width: p.width })
                .collect(),
            waivers: Vec::new(),
        });
        Design { block, config, fingerprint, spec }
    }
}

/// One design's result, written into `designs.rs` for the library.
struct Row {
    design: Design,
    key: String,
    status: Result<verilate::Built, String>,
}

fn main() {
    println!("cargo:rustc-check-cfg=cfg(verilator)");
    for p in ["build.rs", "src/verilate.rs", "src/designs", "src/ffi.rs", "shim"] {
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
    for design in designs() {
        let (key, status) = match &design.spec {
            Ok(spec) => {
                (verilate::cache_key(&tc, spec), verilate::build_design(&tc, spec, &cache, &cache).map_err(|e| e.0))
            }
            Err(e) => (String::new(), Err(format!("generating the Verilog failed: {e}"))),
        };
        let (block, config) = (design.block, design.config);
        match &status {
            Ok(b) => {
                if let verilate::Outcome::Built { reason, seconds } = &b.outcome {
                    println!("cargo:warning=Verilated {block} ({config}) in {seconds:.0} s: {reason}");
                }
            }
            Err(e) => {
                if ci {
                    panic!("Verilating {block} ({config}) failed:\n{e}");
                }
                let first = e.lines().take(6).collect::<Vec<_>>().join(" | ");
                println!("cargo:warning=Verilating {block} ({config}) failed; its co-simulation will fail: {first}");
            }
        }
        rows.push(Row { design, key, status });
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
        if let (Ok(b), Ok(spec)) = (&r.status, &r.design.spec) {
            let f = shim_dir.join(format!("{}.cpp", b.prefix));
            write_if_changed(&f, &verilate::shim_cpp(spec));
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
        let d = &r.design;
        let prefix = match &d.spec {
            Ok(spec) => spec.prefix(),
            Err(_) => String::new(),
        };
        let status = match &r.status {
            Ok(_) => "Ok(())".to_string(),
            Err(e) => format!("Err({e:?})"),
        };
        let _ = writeln!(
            s,
            "    DesignInfo {{ block: {:?}, config: {:?}, config_fingerprint: {:?}, prefix: {prefix:?}, key: {:?}, status: {status}, ports: &[",
            d.block, d.config, d.fingerprint, r.key
        );
        for p in d.spec.as_ref().map(|s| s.ports.as_slice()).unwrap_or(&[]) {
            let _ = writeln!(s, "        PortInfo {{ name: {:?}, input: {}, width: {} }},", p.name, p.input, p.width);
        }
        let _ = writeln!(s, "    ] }},");
    }
    let _ = writeln!(s, "];");
    write_if_changed(&out.join("designs.rs"), &s);
}
