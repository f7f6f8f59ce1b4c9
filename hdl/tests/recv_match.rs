//! The generated `recv_match` through the real tools: Verilator lint with
//! every warning on and no waivers and Icarus in Verilog-2005 mode for
//! `small`, `default` and a sweep of ring depths and read latencies; Yosys
//! `synth_xilinx` with no latches for `small`; and an Icarus replay of the
//! model's port values, every output compared every cycle.
//!
//! A missing tool skips the test with a message, except under CI=true, where
//! it fails.

mod common;

use std::process::Command;

use common::{bench, have, hex, run, Scratch};
use mrnic_hdl::recv_match::{generate, header, verilog, GenError};
use mrnic_hdl::{Dir, Module};
use mrnic_model::block::{zero_values, Bits, Block, Dir as ModelDir};
use mrnic_model::recv_match::{ports, RecvMatch, RecvMatchParams};
use mrnic_proto::Config;

/// Writes `cfg`'s module into `dir`.
fn write(dir: &Scratch, cfg: &Config) -> std::path::PathBuf {
    dir.file("recv_match.v", &verilog(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name)))
}

fn variant(depth: u32, latency: u32) -> Config {
    let mut cfg = Config::builtin("small").unwrap();
    cfg.name = format!("small_d{depth}_l{latency}");
    cfg.hardware.recv_queue_depth = depth;
    cfg.hardware.table_read_latency = latency;
    cfg
}

fn sweep() -> Vec<Config> {
    vec![
        Config::builtin("small").unwrap(),
        Config::builtin("default").unwrap(),
        variant(2, 1),
        variant(2, 2),
        variant(64, 2),
        variant(256, 1),
    ]
}

#[test]
fn ports_are_the_models_plus_clk() {
    for cfg in sweep() {
        let m: Module = generate(&cfg).unwrap();
        let p = RecvMatchParams::from_config(&cfg).unwrap();
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
    }
}

#[test]
fn prints_deterministically_with_a_header() {
    let cfg = Config::builtin("small").unwrap();
    let a = verilog(&cfg).unwrap();
    assert_eq!(a, verilog(&cfg).unwrap());
    assert!(a.contains("module recv_match"));
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
        let dir = Scratch::new(&format!("rm-verilator-{}", cfg.name));
        let file = write(&dir, &cfg);
        let out =
            run(Command::new("verilator").args(["--lint-only", "-Wall", "--top-module", "recv_match"]).arg(&file));
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
        let dir = Scratch::new(&format!("rm-iverilog-{}", cfg.name));
        let file = write(&dir, &cfg);
        let out = run(Command::new("iverilog").args(["-g2005", "-Wall", "-o", "/dev/null"]).arg(&file));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.trim().is_empty(), "{}: {stderr}", cfg.name);
    }
}

/// `small` only: `default` (65536 rings) is too slow for the test suite.
#[test]
fn yosys_synthesizes_small_without_latches() {
    if !have("yosys", "-V") {
        return;
    }
    let cfg = Config::builtin("small").unwrap();
    let dir = Scratch::new("rm-yosys-small");
    let file = write(&dir, &cfg);
    let (after_proc, after_synth) = (dir.0.join("proc.stat"), dir.0.join("synth.stat"));
    let script = format!(
        "read_verilog {}; hierarchy -check -top recv_match; proc; check -assert; tee -q -o {} stat; \
         synth_xilinx -top recv_match; tee -q -o {} stat",
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

/// Icarus replays the model on the generated RTL: all three channels valid
/// at random (arbitration), posts filling rings, lookups and consumes around
/// the posted range, random backpressure, a reset mid-run.
#[test]
fn icarus_replays_model_vectors() {
    if !have("iverilog", "-V") || !have("vvp", "-V") {
        return;
    }
    for cfg in [Config::builtin("small").unwrap(), variant(2, 2), variant(4, 1)] {
        let dir = Scratch::new(&format!("rm-replay-{}", cfg.name));
        let rtl = write(&dir, &cfg);
        let p = RecvMatchParams::from_config(&cfg).unwrap();
        let mut dut = RecvMatch::new(p);
        let defs = dut.ports().to_vec();
        let seed = 4242u64;
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
        for cycle in 0..cycles {
            let set = |ins: &mut Vec<Bits>, n: &str, v: u64| {
                let i = idx(n);
                ins[i] = Bits::from_u64(defs[i].width, v);
            };
            set(&mut ins, "rst", (cycle == 0 || cycle == cycles / 2) as u64);
            let base = u64::from(cycle % (cycles / 2)) / 12;
            for ch in ["s_post", "s_lookup", "s_consume"] {
                set(&mut ins, &format!("{ch}_valid"), (rnd() % 100 < 40) as u64);
                set(&mut ins, &format!("{ch}_conn"), rnd() % 2);
                set(&mut ins, &format!("{ch}_stream"), rnd() % 2);
            }
            set(&mut ins, "s_post_addr", rnd());
            set(&mut ins, "s_post_len", rnd() % 3000);
            set(&mut ins, "s_post_wr_id", rnd());
            set(&mut ins, "s_lookup_rq_seq", (base + rnd() % 8) & 0xff_ffff);
            set(&mut ins, "s_lookup_msg_offset", rnd() % 2000);
            set(&mut ins, "s_lookup_payload_len", rnd() % 2000);
            set(&mut ins, "s_lookup_msg_len", rnd() % 4000);
            set(&mut ins, "s_consume_imm", rnd() % 2);
            set(&mut ins, "s_consume_rq_seq", (base + rnd() % 6) & 0xff_ffff);
            for ch in ["post", "match", "cons"] {
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
            dut.tick(&ins);
        }
        let vec = dir.0.join("vectors.txt");
        std::fs::write(&vec, lines).unwrap();
        let params = vec![
            ("CONNS".to_string(), p.conns),
            ("STREAMS".to_string(), p.streams),
            ("RQ_DEPTH".to_string(), p.depth),
            ("READ_LATENCY".to_string(), p.read_latency),
        ];
        let tb = dir.0.join("tb.v");
        std::fs::write(&tb, bench("recv_match", &defs, &params, &vec.display().to_string())).unwrap();
        let sim = dir.0.join("sim");
        run(Command::new("iverilog").args(["-g2005", "-o"]).arg(&sim).arg(&tb).arg(&rtl));
        let out = run(Command::new("vvp").arg("-n").arg(&sim));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(&format!("{cycles} cycles, 0 mismatches")), "{} (seed {seed}):\n{text}", cfg.name);
    }
}
