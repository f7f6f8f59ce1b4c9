//! The printed example design through the real tools: Verilator lint with
//! every warning on and no waivers, Icarus in Verilog-2005 mode, and Yosys
//! synthesis with no latches and the RAM style honoured.
//!
//! A missing tool skips the test with a message, except under CI=true, where
//! it fails: CI must install verilator, iverilog and yosys.

use std::path::{Path, PathBuf};
use std::process::Command;

use mrnic_hdl::example::{event_log_design, tour, EventLog};
use mrnic_hdl::{Header, MemStyle, Module};

mod common;
use common::{have, run, yosys_proc_check, Scratch, LATCHES};

/// Writes each module to `<name>.v`, as Verilator expects, and returns the paths.
fn write(dir: &Path, modules: &[Module]) -> Vec<PathBuf> {
    let header = Header::new("mrnic-hdl tools test", "cargo test -p mrnic-hdl --test tools");
    modules
        .iter()
        .map(|m| {
            let path = dir.join(format!("{}.v", m.name()));
            std::fs::write(&path, m.to_verilog(&header).unwrap_or_else(|e| panic!("{e}"))).unwrap();
            path
        })
        .collect()
}

/// A design to run through the tools: its modules (children first; the last
/// is the top) and the RAM resource its memory must map to, if it has one.
struct Design {
    modules: Vec<Module>,
    ram: Option<MemStyle>,
}

impl Design {
    fn top(&self) -> &str {
        self.modules.last().unwrap().name()
    }
}

fn designs() -> Vec<Design> {
    let configs = [
        EventLog::default(),
        EventLog { width: 16, depth: 64, sync_stages: 3, style: MemStyle::Distributed },
        EventLog { width: 1, depth: 2, sync_stages: 2, style: MemStyle::Registers },
    ];
    let mut out: Vec<Design> =
        configs.iter().map(|cfg| Design { modules: event_log_design(cfg).unwrap(), ram: Some(cfg.style) }).collect();
    for w in [8, 13] {
        out.push(Design { modules: vec![tour(w)], ram: None });
    }
    out
}

#[test]
fn verilator_lints_clean() {
    if !have("verilator", "--version") {
        return;
    }
    for (k, d) in designs().iter().enumerate() {
        let dir = Scratch::new(&format!("verilator{k}"));
        let files = write(&dir.0, &d.modules);
        // Each module as its own top too, so a child's own defaults are linted.
        for (i, m) in d.modules.iter().enumerate() {
            let out = run(Command::new("verilator")
                .args(["--lint-only", "-Wall", "--top-module", m.name()])
                .args(&files[..=i]));
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.trim().is_empty(), "{}: {stderr}", m.name());
        }
    }
}

#[test]
fn iverilog_compiles_as_verilog_2005() {
    if !have("iverilog", "-V") {
        return;
    }
    for (k, d) in designs().iter().enumerate() {
        let dir = Scratch::new(&format!("iverilog{k}"));
        let files = write(&dir.0, &d.modules);
        let out = run(Command::new("iverilog").args(["-g2005", "-Wall", "-o", "/dev/null"]).args(&files));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.trim().is_empty(), "{}: {stderr}", d.top());
    }
}

#[test]
fn yosys_synthesizes_without_latches() {
    if !have("yosys", "-V") {
        return;
    }
    for (k, d) in designs().iter().enumerate() {
        let dir = Scratch::new(&format!("yosys{k}"));
        let files = write(&dir.0, &d.modules);
        let top = d.top();
        let after_synth = dir.0.join("synth.stat");
        let more = format!(
            "; synth_xilinx -top {top}; select -assert-none {LATCHES}; tee -q -o {} stat",
            after_synth.display()
        );
        yosys_proc_check(&files, top, &more);
        let final_stats = std::fs::read_to_string(&after_synth).unwrap();
        let has = |cells: &[&str]| cells.iter().any(|c| final_stats.contains(c));
        let (resource, mapped) = match d.ram {
            None => continue,
            Some(MemStyle::Block) => ("block RAM", has(&["RAMB18E1", "RAMB36E1"])),
            Some(MemStyle::Distributed) => ("LUT RAM", has(&["RAM32M", "RAM64M", "RAM32X1D", "RAM64X1D"])),
            Some(MemStyle::Registers) => ("flip-flops", !final_stats.contains("RAM")),
        };
        assert!(mapped, "{top}: the memory did not map to {resource}\n{final_stats}");
    }
}

/// The Verilog-2005 parameter guards: overriding a child into an illegal
/// combination, or to any value other than the one it was generated for,
/// must stop elaboration in every tool, naming the rule.
#[test]
fn parameter_override_stops_elaboration() {
    let tools = [("verilator", "--version"), ("iverilog", "-V"), ("yosys", "-V")];
    if !tools.iter().all(|(t, f)| have(t, f)) {
        return;
    }
    let generated = EventLog::default().sync_stages;
    let (own, pinned) =
        ("illegal_parameter_combination_sync_stages_min", "illegal_parameter_combination_generated_values");
    // Breaks both rules; Yosys stops at the first missing module it meets.
    override_refused(1, &[own, pinned]);
    // Legal by the block's own rule, but the body was built for another value.
    override_refused(generated + 1, &[pinned]);
}

/// Instantiates `edge_sync` with `SYNC_STAGES` overridden to `stages` and
/// checks that Verilator, Icarus and Yosys all refuse it, naming one of
/// `rules`.
fn override_refused(stages: u32, rules: &[&str]) {
    let dir = Scratch::new(&format!("guard{stages}"));
    let files = write(&dir.0, &event_log_design(&EventLog::default()).unwrap());
    let wrapper = dir.0.join("bad_top.v");
    std::fs::write(
        &wrapper,
        format!(
            "`default_nettype none\n\
             module bad_top (input wire clk, input wire rst, input wire level, output wire rise, output wire fall);\n\
             \x20 edge_sync #(.SYNC_STAGES({stages})) u_edge (.clk(clk), .rst(rst), .level(level), .rise(rise), .fall(fall));\n\
             endmodule\n"
        ),
    )
    .unwrap();
    let edge = &files[0];
    let attempts: [(&str, Command); 3] = [
        ("verilator", {
            let mut c = Command::new("verilator");
            c.args(["--lint-only", "--top-module", "bad_top"]).arg(edge).arg(&wrapper);
            c
        }),
        ("iverilog", {
            let mut c = Command::new("iverilog");
            c.args(["-g2005", "-o", "/dev/null"]).arg(edge).arg(&wrapper);
            c
        }),
        ("yosys", {
            let mut c = Command::new("yosys");
            let script =
                format!("read_verilog {} {}; hierarchy -check -top bad_top", edge.display(), wrapper.display());
            c.args(["-p", &script]);
            c
        }),
    ];
    for (tool, mut cmd) in attempts {
        let out = cmd.output().unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(!out.status.success(), "{tool} accepted SYNC_STAGES={stages}:\n{text}");
        assert!(rules.iter().any(|r| text.contains(r)), "{tool} failed without naming {rules:?}:\n{text}");
    }
}
