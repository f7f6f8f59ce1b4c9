//! The generated `sack_gen` through the real tools: Verilator lint with every
//! warning on and no waivers and Icarus in Verilog-2005 mode for `small`,
//! `default` and a sweep of path counts and read latencies; Yosys
//! `synth_xilinx` with no latches for `small`; and an Icarus replay of the
//! model's port values, every output compared every cycle.
//!
//! A missing tool skips the test with a message, except under CI=true, where
//! it fails.

mod common;

use std::process::Command;

use common::{bench, have, hex, run, Scratch};
use mrnic_hdl::sack_gen::{generate, header, verilog, GenError};
use mrnic_hdl::{Dir, Module};
use mrnic_model::block::{zero_values, Bits, Block, Dir as ModelDir};
use mrnic_model::sack_gen::{ports, SackGen, SackGenParams};
use mrnic_proto::Config;

/// Writes `cfg`'s module into `dir`.
fn write(dir: &Scratch, cfg: &Config) -> std::path::PathBuf {
    dir.file("sack_gen.v", &verilog(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name)))
}

fn variant(paths: u32, latency: u32) -> Config {
    let mut cfg = Config::builtin("small").unwrap();
    cfg.name = format!("small_p{paths}_l{latency}");
    cfg.transport.paths_per_conn = paths;
    cfg.hardware.table_read_latency = latency;
    cfg
}

fn sweep() -> Vec<Config> {
    vec![
        Config::builtin("small").unwrap(),
        Config::builtin("default").unwrap(),
        variant(1, 1),
        variant(1, 2),
        variant(8, 2),
        variant(32, 1),
    ]
}

#[test]
fn ports_are_the_models_plus_clk() {
    for cfg in sweep() {
        let m: Module = generate(&cfg).unwrap();
        let p = SackGenParams::from_config(&cfg).unwrap();
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
        assert!(m.signature().comb_paths.is_empty(), "{}: {:?}", cfg.name, m.signature().comb_paths);
    }
}

#[test]
fn prints_deterministically_with_a_header() {
    let cfg = Config::builtin("small").unwrap();
    let a = verilog(&cfg).unwrap();
    assert_eq!(a, verilog(&cfg).unwrap());
    assert!(a.contains("module sack_gen"));
    assert!(a.contains("`default_nettype none"));
    assert!(a.contains(&header(&cfg).command));
    assert!(a.contains(r#"ram_style = "block""#));
}

#[test]
fn refuses_unsupported_configs() {
    let mut cfg = Config::builtin("small").unwrap();
    cfg.hardware.table_read_latency = 3;
    assert!(matches!(generate(&cfg), Err(GenError::Params(e)) if e.field == "hardware.table_read_latency"));
}

#[test]
fn verilator_lints_clean() {
    if !have("verilator", "--version") {
        return;
    }
    for cfg in sweep() {
        let dir = Scratch::new(&format!("sg-verilator-{}", cfg.name));
        let file = write(&dir, &cfg);
        let out = run(Command::new("verilator").args(["--lint-only", "-Wall", "--top-module", "sack_gen"]).arg(&file));
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
        let dir = Scratch::new(&format!("sg-iverilog-{}", cfg.name));
        let file = write(&dir, &cfg);
        let out = run(Command::new("iverilog").args(["-g2005", "-Wall", "-o", "/dev/null"]).arg(&file));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.trim().is_empty(), "{}: {stderr}", cfg.name);
    }
}

/// `small` only: `default` (65536 entries) is too slow for the test suite.
#[test]
fn yosys_synthesizes_small_without_latches() {
    if !have("yosys", "-V") {
        return;
    }
    let cfg = Config::builtin("small").unwrap();
    let dir = Scratch::new("sg-yosys-small");
    let file = write(&dir, &cfg);
    let (after_proc, after_synth) = (dir.0.join("proc.stat"), dir.0.join("synth.stat"));
    let script = format!(
        "read_verilog {}; hierarchy -check -top sack_gen; proc; check -assert; tee -q -o {} stat; \
         synth_xilinx -top sack_gen; tee -q -o {} stat",
        file.display(),
        after_proc.display(),
        after_synth.display()
    );
    run(Command::new("yosys").args(["-q", "-p", &script]));
    for stats in [std::fs::read_to_string(&after_proc).unwrap(), std::fs::read_to_string(&after_synth).unwrap()] {
        for latch in ["$dlatch", "$_DLATCH", "LDCE", "LDPE"] {
            assert!(!stats.contains(latch), "yosys inferred a latch ({latch})\n{stats}");
        }
    }
}

/// Icarus replays the model on the generated RTL: OPENs, DATA with psns
/// around cum_psn (accepts, holes, advances, duplicates), far psns, newer and
/// stale generations, CE, ACKREQ, refused packets, PROBEs, random idle and
/// backpressure on every output, and a reset mid-run.
#[test]
fn icarus_replays_model_vectors() {
    if !have("iverilog", "-V") || !have("vvp", "-V") {
        return;
    }
    for cfg in [Config::builtin("small").unwrap(), variant(1, 2), variant(8, 2)] {
        let dir = Scratch::new(&format!("sg-replay-{}", cfg.name));
        let rtl = write(&dir, &cfg);
        let p = SackGenParams::from_config(&cfg).unwrap();
        let mut dut = SackGen::new(p);
        let defs = dut.ports().to_vec();
        let seed = 777u64;
        let mut x = seed;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let idx = |n: &str| defs.iter().position(|d| d.name == n).unwrap();
        let mut ins = zero_values(&defs);
        let mut outs = zero_values(&defs);
        let mut lines = String::new();
        let cycles = 3000u32;
        let mut held = false;
        for cycle in 0..cycles {
            let set = |ins: &mut Vec<Bits>, n: &str, v: u64| {
                let i = idx(n);
                ins[i] = Bits::from_u64(defs[i].width, v);
            };
            set(&mut ins, "rst", (cycle == 0 || cycle == cycles / 2) as u64);
            set(&mut ins, "rate_hint", rnd() & 0xffff);
            if !held {
                let valid = rnd() % 100 < 75;
                set(&mut ins, "s_pkt_valid", valid as u64);
                let r = rnd();
                let op = match r % 40 {
                    0 => 1,
                    1 => 2,
                    2 => 3,
                    _ => 0,
                };
                let base = u64::from(cycle % (cycles / 2)) / 6;
                let psn = match (r >> 8) % 20 {
                    0 => base + 300 + (r >> 16) % 5000,
                    1 => (base + 0xff_fff0) & 0xff_ffff,
                    _ => base + (r >> 16) % 24,
                } & 0xff_ffff;
                set(&mut ins, "s_pkt_op", op);
                set(&mut ins, "s_pkt_conn", (r >> 40) % 2);
                set(&mut ins, "s_pkt_path_id", (r >> 42) % 2);
                set(&mut ins, "s_pkt_psn", if op == 2 { 0 } else { psn });
                set(&mut ins, "s_pkt_gen", (r >> 44) % 4);
                set(&mut ins, "s_pkt_ce", ((r >> 46) % 7 == 0) as u64);
                set(&mut ins, "s_pkt_ackreq", ((r >> 49) % 9 == 0) as u64);
                set(&mut ins, "s_pkt_bad", ((r >> 52) % 11 == 0) as u64);
                let r2 = rnd();
                set(&mut ins, "s_pkt_payload_len", r2 % 4096);
                set(&mut ins, "s_pkt_stream_id", (r2 >> 12) & 0xff);
                set(&mut ins, "s_pkt_msn", (r2 >> 20) & 0xff_ffff);
                set(&mut ins, "s_pkt_tx_ts", (r2 >> 44) & 0xffff);
                let r3 = rnd();
                set(&mut ins, "s_pkt_dst_conn", r3 & 0xff_ffff);
                set(&mut ins, "s_pkt_completed_msn", (r3 >> 24) & 0xff_ffff);
                set(&mut ins, "s_pkt_sport", (r3 >> 48) & 0xffff);
                set(&mut ins, "s_pkt_plane", rnd() & 7);
            }
            for ch in ["sack", "nack", "new"] {
                set(&mut ins, &format!("m_{ch}_ready"), (rnd() % 100 < 70) as u64);
            }
            dut.eval(&ins, &mut outs);
            let line: Vec<String> = defs
                .iter()
                .enumerate()
                .map(|(i, d)| match d.dir {
                    ModelDir::In => hex(&ins[i], d.width),
                    ModelDir::Out => hex(&outs[i], d.width),
                })
                .collect();
            lines += &line.join(" ");
            lines.push('\n');
            // AXI: a valid beat holds until taken.
            let valid = ins[idx("s_pkt_valid")].bit(0);
            held = valid && !outs[idx("s_pkt_ready")].bit(0) && !ins[idx("rst")].bit(0);
            dut.tick(&ins);
        }
        let vec = dir.0.join("vectors.txt");
        std::fs::write(&vec, lines).unwrap();
        let params = vec![
            ("CONNS".to_string(), p.conns),
            ("PATHS".to_string(), p.paths),
            ("READ_LATENCY".to_string(), p.read_latency),
            ("SACK_PKTS".to_string(), p.sack_pkts),
            ("SACK_BYTES".to_string(), p.sack_bytes),
        ];
        let tb = dir.0.join("tb.v");
        std::fs::write(&tb, bench("sack_gen", &defs, &params, &vec.display().to_string())).unwrap();
        let sim = dir.0.join("sim");
        run(Command::new("iverilog").args(["-g2005", "-o"]).arg(&sim).arg(&tb).arg(&rtl));
        let out = run(Command::new("vvp").arg("-n").arg(&sim));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(&format!("{cycles} cycles, 0 mismatches")), "{} (seed {seed}):\n{text}", cfg.name);
    }
}
