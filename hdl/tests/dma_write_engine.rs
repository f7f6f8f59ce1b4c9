//! The generated `dma_write_engine` through the real tools, for the `small`
//! and `default` configs and a sweep of read latencies, burst limits and
//! table depths: Verilator lint with every warning on and no waivers, Icarus
//! in Verilog-2005 mode, and Yosys `synth_xilinx` with no latches and the MR
//! table in the RAM resource the params choose.
//!
//! A missing tool skips the test with a message, except under CI=true, where
//! it fails.

use std::path::PathBuf;
use std::process::{Command, Output};

use mrnic_hdl::dma_write_engine::{generate, header, verilog, GenError};
use mrnic_hdl::{Dir, Module};
use mrnic_model::block::Dir as ModelDir;
use mrnic_model::dma_write_engine::{ports, DmaWriteEngineParams};
use mrnic_proto::Config;

fn have(tool: &str, version_flag: &str) -> bool {
    if Command::new(tool).arg(version_flag).output().is_ok() {
        return true;
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{tool} is not installed but CI=true requires it: apt-get install -y verilator iverilog yosys");
    }
    eprintln!("skipped: {tool} not installed (apt-get install -y {tool})");
    false
}

struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("mrnic-hdl-dwe-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn write(&self, cfg: &Config) -> PathBuf {
        let path = self.0.join("dma_write_engine.v");
        std::fs::write(&path, verilog(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name))).unwrap();
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} exited with {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `small` with another read latency, burst limit and datapath.
fn variant(latency: u32, burst: u32, data_bits: u32, outstanding: u32) -> Config {
    let mut cfg = Config::builtin("small").unwrap();
    cfg.name = format!("small_l{latency}_b{burst}_d{data_bits}_o{outstanding}");
    cfg.hardware.table_read_latency = latency;
    cfg.hardware.axi_max_burst = burst;
    cfg.hardware.datapath_bits = data_bits;
    cfg.hardware.axi_outstanding = outstanding;
    cfg
}

fn sweep() -> Vec<Config> {
    vec![
        Config::builtin("small").unwrap(),
        Config::builtin("default").unwrap(),
        variant(2, 1, 64, 2),
        variant(1, 256, 128, 16),
        variant(2, 32, 1024, 4),
    ]
}

#[test]
fn ports_are_the_models_plus_clk() {
    for cfg in sweep() {
        let m: Module = generate(&cfg).unwrap();
        let p = DmaWriteEngineParams::from_config(&cfg).unwrap();
        let rtl = m.ports();
        assert_eq!(rtl[0].name, "clk");
        let model = ports(&p);
        assert_eq!(rtl.len(), model.len() + 1, "{}", cfg.name);
        for (r, d) in rtl[1..].iter().zip(&model) {
            assert_eq!(r.name, d.name, "{}", cfg.name);
            assert_eq!(r.width, d.width, "{}: {}", cfg.name, d.name);
            let dir = match d.dir {
                ModelDir::In => Dir::Input,
                ModelDir::Out => Dir::Output,
            };
            assert_eq!(r.dir, dir, "{}: {}", cfg.name, d.name);
        }
        // Every output is a register or a function of registers, as the
        // model's eval() ignoring its inputs says.
        assert!(m.signature().comb_paths.is_empty(), "{}: {:?}", cfg.name, m.signature().comb_paths);
    }
}

#[test]
fn prints_deterministically_with_a_header_and_the_chosen_ram() {
    let small = Config::builtin("small").unwrap();
    let a = verilog(&small).unwrap();
    assert_eq!(a, verilog(&small).unwrap());
    assert!(a.contains("module dma_write_engine"));
    assert!(a.contains("`default_nettype none"));
    assert!(a.contains(&header(&small).command));
    assert!(a.contains(r#"ram_style = "distributed""#), "16 MR entries go to LUT RAM");
    let default = verilog(&Config::builtin("default").unwrap()).unwrap();
    assert!(default.contains(r#"ram_style = "block""#), "1024 MR entries go to block RAM");
}

#[test]
fn refuses_unsupported_configs() {
    let mut cfg = Config::builtin("small").unwrap();
    cfg.hardware.axi_outstanding = 6;
    match generate(&cfg) {
        Err(GenError::Params(e)) => assert_eq!(e.field, "hardware.axi_outstanding"),
        other => panic!("expected a parameter error, got {other:?}"),
    }
    cfg.hardware.axi_outstanding = 8;
    cfg.hardware.table_read_latency = 3;
    assert!(matches!(generate(&cfg), Err(GenError::Params(e)) if e.field == "hardware.table_read_latency"));
}

#[test]
fn verilator_lints_clean() {
    if !have("verilator", "--version") {
        return;
    }
    for cfg in sweep() {
        let dir = Scratch::new(&format!("verilator-{}", cfg.name));
        let file = dir.write(&cfg);
        let out = run(Command::new("verilator")
            .args(["--lint-only", "-Wall", "--top-module", "dma_write_engine"])
            .arg(&file));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.trim().is_empty(), "{}: {stderr}", cfg.name);
    }
}

#[test]
fn iverilog_compiles_as_verilog_2005() {
    if !have("iverilog", "-V") {
        return;
    }
    for cfg in sweep() {
        let dir = Scratch::new(&format!("iverilog-{}", cfg.name));
        let file = dir.write(&cfg);
        let out = run(Command::new("iverilog").args(["-g2005", "-Wall", "-o", "/dev/null"]).arg(&file));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.trim().is_empty(), "{}: {stderr}", cfg.name);
    }
}

#[test]
fn yosys_synthesizes_without_latches_in_the_chosen_ram() {
    if !have("yosys", "-V") {
        return;
    }
    for cfg in [Config::builtin("small").unwrap(), Config::builtin("default").unwrap()] {
        let p = DmaWriteEngineParams::from_config(&cfg).unwrap();
        let dir = Scratch::new(&format!("yosys-{}", cfg.name));
        let file = dir.write(&cfg);
        let (after_proc, after_synth) = (dir.0.join("proc.stat"), dir.0.join("synth.stat"));
        let script = format!(
            "read_verilog {}; hierarchy -check -top dma_write_engine; proc; check -assert; \
             tee -q -o {} stat; synth_xilinx -top dma_write_engine; tee -q -o {} stat",
            file.display(),
            after_proc.display(),
            after_synth.display()
        );
        run(Command::new("yosys").args(["-q", "-p", &script]));
        let proc_stats = std::fs::read_to_string(&after_proc).unwrap();
        let final_stats = std::fs::read_to_string(&after_synth).unwrap();
        for latch in ["$dlatch", "$_DLATCH", "LDCE", "LDPE"] {
            for stats in [&proc_stats, &final_stats] {
                assert!(!stats.contains(latch), "{}: yosys inferred a latch ({latch})\n{stats}", cfg.name);
            }
        }
        let bram = final_stats.contains("RAMB18E1") || final_stats.contains("RAMB36E1");
        let lutram =
            final_stats.contains("RAM32M") || final_stats.contains("RAM64M") || final_stats.contains("RAM32X1D");
        if p.mr_block_ram() {
            assert!(bram, "{}: the MR table did not map to block RAM\n{final_stats}", cfg.name);
        } else {
            assert!(lutram && !bram, "{}: the MR table did not map to LUT RAM\n{final_stats}", cfg.name);
        }
    }
}
