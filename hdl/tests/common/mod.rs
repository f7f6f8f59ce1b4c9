//! Helpers the block tests share: tool detection, scratch folders, running
//! a tool, and an Icarus bench that replays the model's port values cycle by
//! cycle and compares every output.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

use mrnic_hdl::gen::BLOCKS;
use mrnic_model::block::{zero_values, Bits, Block, Dir as ModelDir, PortDef};
use mrnic_proto::Config;

/// True when `tool` runs; otherwise skips (or fails under CI=true).
pub fn have(tool: &str, version_flag: &str) -> bool {
    if Command::new(tool).arg(version_flag).output().is_ok() {
        return true;
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{tool} is not installed but CI=true requires it: apt-get install -y verilator iverilog yosys");
    }
    eprintln!("skipped: {tool} not installed (apt-get install -y {tool})");
    false
}

/// A fresh directory for one test's files, removed when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("mrnic-hdl-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    pub fn file(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// Writes `block`'s Verilog for `cfg` to `<block>.v` and returns the path.
    pub fn write(&self, block: &str, cfg: &Config) -> PathBuf {
        self.file(&format!("{block}.v"), &verilog(block, cfg))
    }

    /// Writes `block` and every block listed before it in [`BLOCKS`] (its
    /// possible children), in that order, and returns the paths.
    pub fn write_with_children(&self, block: &str, cfg: &Config) -> Vec<PathBuf> {
        let upto = BLOCKS.iter().position(|b| b.name == block).unwrap_or_else(|| panic!("no block {block}"));
        BLOCKS[..=upto].iter().map(|b| self.write(b.name, cfg)).collect()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs a command and fails the test with its output when it fails.
pub fn run(cmd: &mut Command) -> Output {
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

/// Verilator with every warning and no waivers: no output at all.
pub fn verilator_lint(file: &std::path::Path, top: &str) {
    let out = run(Command::new("verilator").args(["--lint-only", "-Wall", "--top-module", top]).arg(file));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.trim().is_empty(), "{}: {stderr}", file.display());
}

/// Icarus in Verilog-2005 mode with every warning: no output at all.
pub fn iverilog_compile(file: &std::path::Path) {
    let out = run(Command::new("iverilog").args(["-g2005", "-Wall", "-o", "/dev/null"]).arg(file));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.trim().is_empty(), "{}: {stderr}", file.display());
}

/// Yosys: proc + `check -assert`, then `synth_xilinx`; no latch anywhere.
pub fn yosys_no_latches(file: &std::path::Path, top: &str) {
    let synth = format!("; synth_xilinx -top {top}; select -assert-none {LATCHES}");
    yosys_proc_check(&[file.to_path_buf()], top, &synth);
}

/// Yosys up to `proc` and `check -assert` only: where a latch would first
/// appear (`proc_dlatch`), without the minutes `synth_xilinx` takes on a
/// wide unit; the mapping itself is left to [`yosys_no_latches`].
pub fn yosys_proc_no_latches(file: &std::path::Path, top: &str) {
    yosys_proc_check(&[file.to_path_buf()], top, "");
}

pub fn hex(b: &Bits, width: u32) -> String {
    let digits = width.div_ceil(4) as usize;
    let mut s = String::new();
    for w in b.0.iter().rev() {
        s += &format!("{w:016x}");
    }
    s[s.len() - digits..].to_string()
}

/// A bench that reads one line per cycle (every port, in port order, hex),
/// drives the inputs, and compares every output before the edge.
pub fn bench(top: &str, defs: &[PortDef], params: &[(String, u32)], vec: &str) -> String {
    bench_clocked(top, defs, params, vec, true)
}

/// [`bench`]; `has_clk` false for a combinational module (no `clk` port).
pub fn bench_clocked(top: &str, defs: &[PortDef], params: &[(String, u32)], vec: &str, has_clk: bool) -> String {
    let mut t = String::from("`timescale 1ns/1ps\nmodule tb;\n  reg clk = 0;\n");
    for d in defs {
        match d.dir {
            ModelDir::In => t += &format!("  reg [{}:0] {};\n", d.width - 1, d.name),
            ModelDir::Out => t += &format!("  wire [{0}:0] {1};\n  reg [{0}:0] e_{1};\n", d.width - 1, d.name),
        }
    }
    let ps: Vec<String> = params.iter().map(|(n, v)| format!(".{n}({v})")).collect();
    let conns: Vec<String> = std::iter::once(".clk(clk)".to_string())
        .filter(|_| has_clk)
        .chain(defs.iter().map(|d| format!(".{0}({0})", d.name)))
        .collect();
    t += &format!("  {top} #({}) dut ({});\n", ps.join(", "), conns.join(", "));
    // MRNIC_REPLAY_VCD=FILE: the replay's waves, every net of the design,
    // for the cycle a mismatch names (a debugging aid; off by default).
    if let Ok(vcd) = std::env::var("MRNIC_REPLAY_VCD") {
        t += &format!("  initial begin $dumpfile(\"{vcd}\"); $dumpvars(0, tb); end\n");
    }
    t += "  integer f, r, cycle, errors;\n  initial begin\n";
    t += &format!("    f = $fopen(\"{vec}\", \"r\"); cycle = 0; errors = 0;\n");
    t += "    while (!$feof(f)) begin\n";
    let fmt: Vec<&str> = defs.iter().map(|_| "%h").collect();
    let args: Vec<String> = defs
        .iter()
        .map(|d| match d.dir {
            ModelDir::In => d.name.clone(),
            ModelDir::Out => format!("e_{}", d.name),
        })
        .collect();
    t += &format!("      r = $fscanf(f, \"{}\\n\", {});\n      #1;\n", fmt.join(" "), args.join(", "));
    for d in defs.iter().filter(|d| d.dir == ModelDir::Out) {
        t += &format!(
            "      if (cycle > 0 && {0} !== e_{0}) begin errors = errors + 1; if (errors < 20) $display(\"cycle %0d: \
             {0} rtl %h model %h\", cycle, {0}, e_{0}); end\n",
            d.name
        );
    }
    t += "      clk = 1; #1; clk = 0; cycle = cycle + 1;\n    end\n";
    t += "    $display(\"%0d cycles, %0d mismatches\", cycle, errors);\n    $finish;\n  end\nendmodule\n";
    t
}

/// Runs `dut` for `cycles` cycles with inputs from `stimulus(cycle, inputs,
/// outputs of the previous cycle)`, records every port, and replays the
/// record on the RTL `rtl` under Icarus: every output must match every cycle.
pub fn replay(
    dir: &Scratch,
    rtl: &std::path::Path,
    dut: &mut dyn Block,
    params: &[(String, u32)],
    cycles: u32,
    stimulus: impl FnMut(u32, &mut Vec<Bits>, &[Bits]),
) {
    replay_clocked(dir, rtl, dut, params, cycles, true, stimulus)
}

/// [`replay`]; `has_clk` false for a combinational module (no `clk` port).
pub fn replay_clocked(
    dir: &Scratch,
    rtl: &std::path::Path,
    dut: &mut dyn Block,
    params: &[(String, u32)],
    cycles: u32,
    has_clk: bool,
    mut stimulus: impl FnMut(u32, &mut Vec<Bits>, &[Bits]),
) {
    let defs = dut.ports().to_vec();
    let mut ins = zero_values(&defs);
    let mut outs = zero_values(&defs);
    let mut lines = String::new();
    for cycle in 0..cycles {
        stimulus(cycle, &mut ins, &outs);
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
    let vec = dir.file("vectors.txt", &lines);
    let tb = dir.file("tb.v", &bench_clocked(dut.name(), &defs, params, &vec.display().to_string(), has_clk));
    let sim = dir.0.join("sim");
    run(Command::new("iverilog").args(["-g2005", "-o"]).arg(&sim).arg(&tb).arg(rtl));
    let out = run(Command::new("vvp").arg("-n").arg(&sim));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("{cycles} cycles, 0 mismatches")), "{}:\n{text}", dut.name());
}

/// Sets input `name` of `defs` in `ins`.
pub fn set(defs: &[PortDef], ins: &mut [Bits], name: &str, v: u64) {
    let i = defs.iter().position(|d| d.name == name).unwrap_or_else(|| panic!("no port {name}"));
    ins[i] = Bits::from_u64(defs[i].width, v);
}

/// Reads bit 0 of port `name`.
pub fn bit(defs: &[PortDef], vals: &[Bits], name: &str) -> bool {
    let i = defs.iter().position(|d| d.name == name).unwrap_or_else(|| panic!("no port {name}"));
    vals[i].bit(0)
}

/// The model's ports against the generated module's: `clk` first, then the
/// same names, widths and directions in the same order.
pub fn same_ports(rtl: &[mrnic_hdl::PortSig], model: &[PortDef], what: &str) {
    assert_eq!(rtl[0].name, "clk");
    assert_eq!(rtl.len(), model.len() + 1, "{what}");
    for (r, d) in rtl[1..].iter().zip(model) {
        assert_eq!(r.name, d.name, "{what}");
        assert_eq!(r.width, d.width, "{what}: {}", d.name);
        let dir = match d.dir {
            ModelDir::In => mrnic_hdl::Dir::Input,
            ModelDir::Out => mrnic_hdl::Dir::Output,
        };
        assert_eq!(r.dir, dir, "{what}: {}", d.name);
    }
}

/// A seeded xorshift generator for stimulus.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Uniform-enough in `0..n` for stimulus.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// `block`'s Verilog for `cfg`, through the same table `mrnic gen` uses.
pub fn verilog(block: &str, cfg: &Config) -> String {
    let row = BLOCKS.iter().find(|b| b.name == block).unwrap_or_else(|| panic!("no block {block} in gen::BLOCKS"));
    let m = (row.generate)(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name));
    m.to_verilog(&(row.header)(cfg)).unwrap_or_else(|e| panic!("{}: {block}: {e}", cfg.name))
}

/// The two configs every block is built for.
pub fn configs() -> Vec<Config> {
    vec![Config::builtin("small").unwrap(), Config::builtin("default").unwrap()]
}

/// Blocks whose `default` synthesis is too slow for every `cargo test` on
/// 2 cores: the 512-bit parser's CRC, the 65536-entry receive rings and
/// SACK tables, rate_hint's 4096 `recent` flip-flops with their decoders
/// (minutes in ABC), and msg_check's 1M-slot message table (1.5 minutes).
/// `MRNIC_SYNTH_DEFAULT=1` adds them; `scripts/synth` always runs them.
const SLOW_DEFAULT: &[&str] = &["rx_parser", "recv_match", "sack_gen", "rate_hint", "msg_check"];

/// The configs `block` is synthesized for in `cargo test`: both, except
/// `default` for the [`SLOW_DEFAULT`] blocks unless `MRNIC_SYNTH_DEFAULT=1`.
pub fn synth_configs(block: &str) -> Vec<Config> {
    let all = synth_default();
    configs().into_iter().filter(|c| all || c.name != "default" || !SLOW_DEFAULT.contains(&block)).collect()
}

/// `MRNIC_SYNTH_DEFAULT=1`: the slow `default` syntheses run too.
pub fn synth_default() -> bool {
    std::env::var("MRNIC_SYNTH_DEFAULT").is_ok_and(|v| v == "1")
}

/// `MRNIC_SYNTH_FULL=1`: tx_engine's units through `synth_xilinx` too.
/// Yosys takes minutes per unit and config, too long for every test run,
/// and the latch and driver checks already run after `proc`.
pub fn synth_full() -> bool {
    std::env::var("MRNIC_SYNTH_FULL").is_ok_and(|v| v == "1")
}

/// `f` for each config, the configs side by side on their own threads:
/// Yosys is single-threaded, and a block's synthesis for `default` took as
/// long as the rest of its tests, with the other core idle.
pub fn per_config<T: Send>(cfgs: Vec<Config>, f: impl Fn(&Config) -> T + Sync) -> Vec<(Config, T)> {
    std::thread::scope(|s| {
        let jobs: Vec<_> = cfgs
            .into_iter()
            .map(|c| {
                s.spawn(|| {
                    let t = f(&c);
                    (c, t)
                })
            })
            .collect();
        jobs.into_iter().map(|j| j.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    })
}

/// [`yosys_synthesizes`] for each of `block`'s [`synth_configs`], side by
/// side; the `stat` reports.
pub fn yosys_synthesizes_each(block: &str) -> Vec<(Config, String)> {
    per_config(synth_configs(block), |cfg| yosys_synthesizes(block, cfg))
}

/// `verilator --lint-only -Wall` prints nothing for `block` under each config.
pub fn verilator_lints_clean(block: &str, cfgs: &[Config]) {
    if !have("verilator", "--version") {
        return;
    }
    for cfg in cfgs {
        let dir = Scratch::new(&format!("{block}-verilator-{}", cfg.name));
        let files = dir.write_with_children(block, cfg);
        let out = run(Command::new("verilator").args(["--lint-only", "-Wall", "--top-module", block]).args(&files));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.trim().is_empty(), "{block} {}: {stderr}", cfg.name);
    }
}

/// `iverilog -g2005 -Wall` compiles `block` silently under each config.
pub fn iverilog_compiles(block: &str, cfgs: &[Config]) {
    if !have("iverilog", "-V") {
        return;
    }
    for cfg in cfgs {
        let dir = Scratch::new(&format!("{block}-iverilog-{}", cfg.name));
        let files = dir.write_with_children(block, cfg);
        let out = run(Command::new("iverilog").args(["-g2005", "-Wall", "-o", "/dev/null", "-s", block]).args(&files));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.trim().is_empty(), "{block} {}: {stderr}", cfg.name);
    }
}

/// Latch cells, generic and Xilinx, that must not appear after `proc` nor
/// after synthesis.
pub const LATCHES: &str = "t:$dlatch t:$adlatch t:$dlatchsr t:$_DLATCH_* t:$_DLATCHSR_* t:LDCE t:LDPE";

/// Yosys up to `proc` on `files` under `top`: no latch, and `check
/// -assert` (no undriven net, no second driver, no loop), then `more`
/// (Yosys commands, each starting with `; `).
pub fn yosys_proc_check(files: &[PathBuf], top: &str, more: &str) {
    let files: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let script = format!(
        "read_verilog {}; hierarchy -check -top {top}; proc; select -assert-none {LATCHES}; check -assert{more}",
        files.join(" ")
    );
    run(Command::new("yosys").args(["-q", "-p", &script]));
}

/// Yosys on `block` (with its children) for `cfg`: `check -assert` after
/// `proc` and after synthesis (no undriven nets, no multiple drivers, no
/// combinational loops), no latch at either point, and no error. Returns
/// the `stat` after synthesis, for checks of the cells the block maps to.
///
/// The synthesis is `synth_xilinx -flatten` (7-series cells, so the block
/// and LUT RAM checks have names to look for); docs/synthesis.md has the
/// times measured. `scripts/synth` runs the UltraScale+, iCE40 and ECP5
/// flows with place and route on top.
pub fn yosys_synthesizes(block: &str, cfg: &Config) -> String {
    let dir = Scratch::new(&format!("{block}-yosys-{}", cfg.name));
    let files = dir.write_with_children(block, cfg);
    yosys_synthesizes_files(&dir, block, &files)
}

/// [`yosys_synthesizes`] on the given files.
pub fn yosys_synthesizes_files(dir: &Scratch, block: &str, files: &[PathBuf]) -> String {
    let stat = dir.0.join("synth.stat");
    let synth = format!(
        "; synth_xilinx -flatten -top {block}; select -assert-none {LATCHES}; check -assert; tee -q -o {} stat",
        stat.display()
    );
    yosys_proc_check(files, block, &synth);
    std::fs::read_to_string(&stat).unwrap()
}

/// Every tool check of a block that instantiates nothing (a glue block),
/// on its own file: `verilator --lint-only -Wall` and `iverilog -g2005
/// -Wall` silent for both configs, and [`yosys_synthesizes`]'s checks for
/// [`synth_configs`].
pub fn standalone_tools_accept(block: &str) {
    per_config(configs(), |cfg| {
        let dir = Scratch::new(&format!("{block}-tools-{}", cfg.name));
        let file = dir.write(block, cfg);
        if have("verilator", "--version") {
            verilator_lint(&file, block);
        }
        if have("iverilog", "-V") {
            iverilog_compile(&file);
        }
        if have("yosys", "-V") && synth_configs(block).iter().any(|c| c.name == cfg.name) {
            yosys_synthesizes_files(&dir, block, &[file]);
        }
    });
}

/// [`replay`] of a glue block's model (`netlist::model_block`) for both
/// configs: `stimulus(cfg, cycle, rng, ports, inputs, outputs of the
/// previous cycle)` sets this cycle's inputs. Returns the cycles replayed
/// (0 when Icarus is missing).
pub fn replay_configs(
    block: &str,
    cycles: u32,
    mut stimulus: impl FnMut(&Config, u32, &mut Rng, &[PortDef], &mut Vec<Bits>, &[Bits]),
) -> u32 {
    if !have("iverilog", "-V") || !have("vvp", "-V") {
        return 0;
    }
    let mut total = 0;
    for cfg in configs() {
        let dir = Scratch::new(&format!("{block}-replay-{}", cfg.name));
        let rtl = dir.write(block, &cfg);
        let has_clk = generated_has_clk(block, &cfg);
        let mut dut = mrnic_model::netlist::model_block(block, &cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name));
        let defs = dut.ports().to_vec();
        let mut rng = Rng::new(7);
        replay_clocked(&dir, &rtl, dut.as_mut(), &[], cycles, has_clk, |cycle, ins, outs| {
            stimulus(&cfg, cycle, &mut rng, &defs, ins, outs)
        });
        total += cycles;
    }
    total
}

/// Reads port `name` as a number.
pub fn get(defs: &[PortDef], vals: &[Bits], name: &str) -> u64 {
    let i = defs.iter().position(|d| d.name == name).unwrap_or_else(|| panic!("no port {name}"));
    vals[i].as_u64()
}

/// `block`'s generated ports are its model's (`netlist::model_block`) for
/// both configs: `clk` first, then the same names, widths and directions
/// in order; a combinational block (no register) exactly the model's.
pub fn ports_match_model(block: &str) {
    let row = BLOCKS.iter().find(|b| b.name == block).unwrap_or_else(|| panic!("no block {block} in gen::BLOCKS"));
    for cfg in configs() {
        let m = (row.generate)(&cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name));
        let model = mrnic_model::netlist::model_block(block, &cfg).unwrap();
        let rtl = m.ports();
        if generated_has_clk(block, &cfg) {
            same_ports(&rtl, model.ports(), &cfg.name);
        } else {
            let mut with_clk = vec![mrnic_hdl::PortSig { name: "clk".into(), width: 1, dir: mrnic_hdl::Dir::Input }];
            with_clk.extend(rtl);
            same_ports(&with_clk, model.ports(), &cfg.name);
        }
    }
}

/// True when `block`'s module for `cfg` has a `clk` port (every block but
/// the combinational glue blocks).
pub fn generated_has_clk(block: &str, cfg: &Config) -> bool {
    let row = BLOCKS.iter().find(|b| b.name == block).unwrap_or_else(|| panic!("no block {block} in gen::BLOCKS"));
    let m = (row.generate)(cfg).unwrap_or_else(|e| panic!("{}: {e}", cfg.name));
    m.ports().first().is_some_and(|p| p.name == "clk")
}

/// The low `width` bits set: the values a port of `width` bits can take.
pub fn mask(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1 << width) - 1
    }
}
