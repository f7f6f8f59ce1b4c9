//! `mrnic gen`: every block of a config as Verilog, with the files an FPGA
//! flow needs around it.
//!
//! [`BLOCKS`] is the table of block generators, one row per block, in
//! dependency order (a block after every block it instantiates; the top,
//! when there is one, last). A new block adds one line there and appears in
//! every output: its `.v`, `files.f`, `mrnic.core`.
//!
//! [`outputs`] builds every file in memory, so a config the hardware cannot
//! build is refused (the block, the config field and why) before anything
//! touches the disk. [`write()`] then puts them in place without ever leaving
//! a folder half-written: it writes a sibling temp folder and renames it
//! into place; on any error the old folder is left as it was. Output is
//! deterministic: the same config gives the same bytes.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use mrnic_model::csr::{regmap, resp, Access, CsrParams, RegDef};
use mrnic_proto::Config;

use crate::{CheckErrors, Header, Module};

/// Why the output could not be generated.
#[derive(Debug, thiserror::Error)]
pub enum GenError {
    /// The config asks for something a block cannot build.
    #[error("config {config}: block {block} cannot be built: {field} = {value}: {why}")]
    Config { config: String, block: &'static str, field: &'static str, value: u64, why: String },
    /// A generated module breaks a design rule: a generator bug.
    #[error("config {config}: block {block} failed its design-rule checks (a generator bug, please report): {source}")]
    Check { config: String, block: &'static str, source: CheckErrors },
    /// The top of a config that fits it could not be printed: a generator
    /// bug.
    #[error("config {config}: the top mrnic_core could not be printed (a generator bug, please report): {why}")]
    Top { config: String, why: String },
}

/// Why the output could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error(transparent)]
    Gen(#[from] GenError),
    #[error(
        "{0} exists and does not look like an mrnic gen output (no mrnic.core in it); \
         refusing to replace it: choose a new or empty folder"
    )]
    NotOurs(PathBuf),
    #[error("{path}: {source}; the output folder was left unchanged")]
    Io { path: PathBuf, source: std::io::Error },
}

/// One row of [`BLOCKS`].
pub struct BlockGen {
    /// Module and file name.
    pub name: &'static str,
    /// The block's generator, its errors made uniform.
    pub generate: fn(&Config) -> Result<Module, GenError>,
    /// The block's file header.
    pub header: fn(&Config) -> Header,
}

/// A [`BlockGen`] row for block module `$m` (which has `generate`,
/// `header` and a `GenError` of `Params(ParamError)` / `Check(CheckErrors)`).
macro_rules! block {
    ($m:ident) => {
        BlockGen {
            name: stringify!($m),
            generate: |cfg| {
                crate::$m::generate(cfg).map_err(|e| match e {
                    crate::$m::GenError::Params(p) => GenError::Config {
                        config: cfg.name.clone(),
                        block: stringify!($m),
                        field: p.field,
                        value: p.value,
                        why: p.why,
                    },
                    crate::$m::GenError::Check(source) => {
                        GenError::Check { config: cfg.name.clone(), block: stringify!($m), source }
                    }
                })
            },
            header: crate::$m::header,
        }
    };
}

/// Every block with a generator of its own, in dependency order. After
/// them, for the configs its assembly fits, [`outputs`] writes tx_engine
/// (a module of modules) and the top `mrnic_core`, printed from the
/// model's netlist ([`crate::mrnic_core::verilog`]).
pub const BLOCKS: &[BlockGen] = &[
    block!(rx_parser),
    block!(conn_table),
    block!(path_telemetry),
    block!(path_selector),
    block!(dma_write_engine),
    block!(recv_match),
    block!(sack_gen),
    block!(cpl_engine),
    // mrnic_core's glue blocks (model/src/mrnic_core.rs, GLUE).
    block!(enable_gate),
    block!(ts_counter),
    block!(rate_hint),
    block!(rx_drop_or),
    block!(cqe_merge),
    block!(op_map),
    // The store-and-forward buffer between rx_parser and the receive
    // controller, and the controller's parts (docs/architecture.md, mrnic_core).
    block!(rx_buffer),
    block!(probe_walk),
    block!(mr_check),
    block!(conn_search),
    block!(msg_check),
    block!(rx_ctl),
    block!(csr),
];

/// The top level of `cfg`'s output: `mrnic_core` where tx_engine's
/// assembly fits the config, else the last row of [`BLOCKS`] (with why).
pub fn top(cfg: &Config) -> (&'static str, Option<String>) {
    match crate::tx_engine::assembly::fits(cfg) {
        Ok(()) => (mrnic_model::mrnic_core::NAME, None),
        Err(why) => (BLOCKS.last().expect("at least one block").name, Some(why)),
    }
}

/// The generator version, as in `mrnic.core` and the `VERSION` register.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Timing constraints shipped with the output, under `constraints/`.
const CONSTRAINTS: &[(&str, &str)] = &[
    ("README.md", include_str!("../../constraints/README.md")),
    ("mrnic_core.xdc", include_str!("../../constraints/mrnic_core.xdc")),
    ("mrnic_core.sdc", include_str!("../../constraints/mrnic_core.sdc")),
    ("mrnic_core_ecp5.lpf", include_str!("../../constraints/mrnic_core_ecp5.lpf")),
];

/// The command that writes `cfg`'s output to `out`, for file headers.
pub fn command(cfg: &Config, out: &str) -> String {
    format!("mrnic gen --config {} --out {out}", cfg.name)
}

/// Every output file of `cfg`, by path relative to the output folder.
pub fn outputs(cfg: &Config) -> Result<BTreeMap<String, String>, GenError> {
    let mut files = BTreeMap::new();
    let mut names = Vec::new();
    for b in BLOCKS {
        let m = (b.generate)(cfg)?;
        let text = m.to_verilog(&(b.header)(cfg)).map_err(|source| GenError::Check {
            config: cfg.name.clone(),
            block: b.name,
            source,
        })?;
        files.insert(format!("{}.v", b.name), text);
        names.push(b.name.to_string());
    }
    // tx_engine's modules, then the top, where the assembly fits: the
    // units and its state before tx_engine, which instantiates them (a
    // flow reading files.f in order finds every module it needs).
    if top(cfg).1.is_none() {
        let whole = crate::mrnic_core::verilog(cfg).map_err(|why| GenError::Top { config: cfg.name.clone(), why })?;
        let mut whole = whole.into_iter();
        let (top_file, top_text) = whole.next().expect("the top first");
        let mut extra: Vec<(String, String)> = whole.filter(|(f, _)| !files.contains_key(f)).collect();
        let engine = format!("{}.v", crate::tx_engine::assembly::NAME);
        extra.sort_by_key(|(f, _)| *f == engine);
        for (f, text) in extra.into_iter().chain([(top_file, top_text)]) {
            names.push(f.trim_end_matches(".v").to_string());
            files.insert(f, text);
        }
    }
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let csr = CsrParams::from_config(cfg).map_err(|p| GenError::Config {
        config: cfg.name.clone(),
        block: "csr",
        field: p.field,
        value: p.value,
        why: p.why,
    })?;
    let map = regmap(&csr);
    files.insert("files.f".into(), names.iter().map(|n| format!("{n}.v\n")).collect());
    files.insert("mrnic.core".into(), core_file(cfg, &names));
    files.insert("regmap.md".into(), regmap_md(cfg, &csr, &map));
    files.insert("mrnic_regs.h".into(), c_header(cfg, &csr, &map));
    files.insert("README.md".into(), readme(cfg, &names));
    for (name, text) in CONSTRAINTS {
        files.insert(format!("constraints/{name}"), text.to_string());
    }
    Ok(files)
}

/// Generates `cfg` and writes it to `out`, replacing a previous output
/// there. Everything is generated before the disk is touched; the files go
/// to a temp folder beside `out`, which is then renamed into place (the old
/// folder is moved aside first and removed last, or moved back on error).
/// A folder that exists and has no `mrnic.core` is refused, so a mistyped
/// `--out` never deletes anything else. Returns the files written.
pub fn write(cfg: &Config, out: &Path) -> Result<Vec<String>, WriteError> {
    let files = outputs(cfg)?;
    if out.exists() {
        let empty = std::fs::read_dir(out).map(|mut d| d.next().is_none()).unwrap_or(false);
        if !empty && !out.join("mrnic.core").is_file() {
            return Err(WriteError::NotOurs(out.to_path_buf()));
        }
    }
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| WriteError::Io { path, source }
    };
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(io(&parent))?;
    let base = out.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "out".into());
    let tmp = parent.join(format!(".{base}.tmp-{}", std::process::id()));
    let old = parent.join(format!(".{base}.old-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let result = (|| {
        for (name, text) in &files {
            let path = tmp.join(name);
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(io(dir))?;
            }
            std::fs::write(&path, text).map_err(io(&path))?;
        }
        let had_old = out.exists();
        if had_old {
            std::fs::rename(out, &old).map_err(io(out))?;
        }
        if let Err(e) = std::fs::rename(&tmp, out) {
            if had_old {
                let _ = std::fs::rename(&old, out);
            }
            return Err(io(out)(e));
        }
        if had_old {
            let _ = std::fs::remove_dir_all(&old);
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    result.map(|()| files.into_keys().collect())
}

fn core_name(cfg: &Config) -> String {
    format!("mrnic:mrnic:mrnic_core_{}:{VERSION}", cfg.name.replace('-', "_"))
}

/// The FuseSoC CAPI2 core description.
fn core_file(cfg: &Config, names: &[&str]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "CAPI=2:");
    let _ = writeln!(s, "# Generated by mrnic-hdl {VERSION} from config {}; do not edit.", cfg.name);
    let _ = writeln!(s, "# Regenerate with: {}", command(cfg, "DIR"));
    let _ = writeln!(s);
    let _ = writeln!(s, "name: {}", core_name(cfg));
    let _ = writeln!(
        s,
        "description: mrnic RDMA transport core, config {} ({} connections x {} paths, {}-bit datapath at {} MHz)",
        cfg.name,
        cfg.transport.connections,
        cfg.transport.paths_per_conn,
        cfg.hardware.datapath_bits,
        cfg.hardware.clock_mhz
    );
    s += "\nfilesets:\n  rtl:\n    files:\n";
    for n in names {
        let _ = writeln!(s, "      - {n}.v");
    }
    s += "    file_type: verilogSource\n";
    s += "  constraints_vivado:\n    files:\n      - constraints/mrnic_core.xdc\n    file_type: xdc\n";
    s += "  constraints_quartus:\n    files:\n      - constraints/mrnic_core.sdc\n    file_type: SDC\n";
    s += "  constraints_ecp5:\n    files:\n      - constraints/mrnic_core_ecp5.lpf\n    file_type: LPF\n";
    s += "  headers:\n    files:\n      - mrnic_regs.h:\n          is_include_file: true\n    file_type: cSource\n";
    let (top, _) = top(cfg);
    let _ = write!(
        s,
        "\ntargets:\n  default:\n    filesets: [rtl]\n    toplevel: {top}\n\
         \n  lint:\n    default_tool: verilator\n    filesets: [rtl]\n    toplevel: {top}\n    tools:\n      verilator:\n        mode: lint-only\n        verilator_options: [-Wall]\n\
         \n  sim:\n    default_tool: icarus\n    filesets: [rtl]\n    toplevel: {top}\n    tools:\n      icarus:\n        iverilog_options: [-g2005]\n"
    );
    s
}

fn access_note(a: Access) -> &'static str {
    match a {
        Access::Rw => "read/write; bytes with wstrb set are written",
        Access::Ro => "read-only; writes are ignored (OKAY)",
        Access::W1c => "read; writing 1 clears a bit (write 0xFFFFFFFF to zero)",
        Access::WoPulse => "write-only; a 1 starts the action; reads 0",
    }
}

/// The register map as Markdown.
fn regmap_md(cfg: &Config, p: &CsrParams, map: &[RegDef]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "<!-- Generated by mrnic-hdl {VERSION}; regenerate with: {} -->", command(cfg, "DIR"));
    let _ = writeln!(s, "# mrnic register map, config `{}`\n", cfg.name);
    let _ = writeln!(
        s,
        "AXI4-Lite slave `s_axil_*` of module `csr`: 32-bit data, {} address bits, config hash `0x{:08x}`. \
         Accesses are 32-bit aligned (narrow writes use `wstrb` at the aligned address).\n",
        p.addr_bits(),
        p.config_hash
    );
    s += "Responses: a misaligned address gets SLVERR, an address with no register DECERR, an access \
          refused by `CONTROL`'s protection policy SLVERR; an erroring write changes nothing and an \
          erroring read returns 0. One write and one read may be outstanding; AW and W are independent. \
          A write to `MR_COMMIT` with `go` = 1 gets its response only once the memory-region table has \
          taken the entry. Counters count one per cycle their event input is high, saturate at \
          0xFFFFFFFF and are cleared by writing 1s (W1C), so reading never loses counts.\n\n";
    s += "| offset | name | access | reset | description |\n|---|---|---|---|---|\n";
    for r in map {
        let _ = writeln!(
            s,
            "| `0x{:03x}` | `{}` | {} | `0x{:08x}` | {} |",
            r.offset,
            r.name,
            r.access.as_str(),
            r.reset(),
            r.desc
        );
    }
    s += "\n## Fields\n";
    for r in map {
        let _ = writeln!(s, "\n### `{}` (`0x{:03x}`, {})\n", r.name, r.offset, r.access.as_str());
        let mut line = format!("{}: {}.", r.desc, access_note(r.access));
        if let Some(stat) = r.stat {
            let _ = write!(line, " Counts input `{stat}`.");
        }
        let _ = writeln!(s, "{line}\n");
        s += "| bits | field | reset | description |\n|---|---|---|---|\n";
        for f in &r.fields {
            let bits = if f.width == 1 { format!("{}", f.lsb) } else { format!("{}:{}", f.lsb + f.width - 1, f.lsb) };
            let _ = writeln!(s, "| {bits} | `{}` | `0x{:x}` | {} |", f.name, f.reset, f.desc);
        }
    }
    s
}

/// The register map as a C header.
fn c_header(cfg: &Config, p: &CsrParams, map: &[RegDef]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "/* mrnic register map, config \"{}\".", cfg.name);
    let _ = writeln!(s, " * Generated by mrnic-hdl {VERSION}; do not edit. Regenerate with:");
    let _ = writeln!(s, " *   {}", command(cfg, "DIR"));
    s += " * Offsets are bytes from the base of the csr block's AXI4-Lite slave; every\n";
    s += " * register is 32 bits. Field macros: _SHIFT (lowest bit) and _MASK (in place).\n */\n";
    s += "#ifndef MRNIC_REGS_H\n#define MRNIC_REGS_H\n\n";
    let _ = writeln!(s, "#define MRNIC_CONFIG_NAME \"{}\"", cfg.name);
    let _ = writeln!(s, "#define MRNIC_CONFIG_HASH 0x{:08x}u", p.config_hash);
    let _ = writeln!(s, "#define MRNIC_REGS_ADDR_BITS {}", p.addr_bits());
    s += "\n/* Access types */\n";
    for (i, a) in [Access::Rw, Access::Ro, Access::W1c, Access::WoPulse].iter().enumerate() {
        let _ = writeln!(s, "#define MRNIC_ACCESS_{} {i} /* {} */", a.as_str(), access_note(*a));
    }
    s += "\n/* AXI responses */\n";
    let _ = writeln!(s, "#define MRNIC_RESP_OKAY {} /* done */", resp::OKAY);
    let _ = writeln!(s, "#define MRNIC_RESP_SLVERR {} /* misaligned, or refused by CONTROL's policy */", resp::SLVERR);
    let _ = writeln!(s, "#define MRNIC_RESP_DECERR {} /* no register at the address */", resp::DECERR);
    for r in map {
        let _ = writeln!(s, "\n/* {} ({}): {} */", r.name, r.access.as_str(), r.desc);
        let _ = writeln!(s, "#define MRNIC_{}_OFFSET 0x{:03x}u", r.name, r.offset);
        let _ = writeln!(s, "#define MRNIC_{}_ACCESS MRNIC_ACCESS_{}", r.name, r.access.as_str());
        let _ = writeln!(s, "#define MRNIC_{}_RESET 0x{:08x}u", r.name, r.reset());
        for f in &r.fields {
            let field = f.name.to_ascii_uppercase();
            let _ = writeln!(s, "#define MRNIC_{}_{}_SHIFT {} /* {} */", r.name, field, f.lsb, f.desc);
            let _ = writeln!(s, "#define MRNIC_{}_{}_MASK 0x{:08x}u", r.name, field, f.mask());
        }
    }
    s += "\n#endif /* MRNIC_REGS_H */\n";
    s
}

/// The output folder's README.
fn readme(cfg: &Config, names: &[&str]) -> String {
    let h = &cfg.hardware;
    let t = &cfg.transport;
    let (top, why) = top(cfg);
    let mut s = String::new();
    let _ = writeln!(s, "<!-- Generated by mrnic-hdl {VERSION}; regenerate with: {} -->", command(cfg, "DIR"));
    let _ = writeln!(s, "# mrnic RTL, config `{}`\n", cfg.name);
    let _ = writeln!(
        s,
        "Generated Verilog-2005 of the mrnic RDMA transport for config `{}`: {} connections x {} paths, \
         {} planes, MTU {}, {}-bit datapath, {} MHz core clock, {} memory regions. Do not edit; \
         regenerate with `{}`.\n",
        cfg.name,
        t.connections,
        t.paths_per_conn,
        t.planes,
        t.mtu,
        h.datapath_bits,
        h.clock_mhz,
        h.mr_entries,
        command(cfg, "DIR")
    );
    s += "## What is here\n\n| file | what |\n|---|---|\n";
    for n in names {
        let _ = writeln!(s, "| `{n}.v` | module `{n}` |");
    }
    s += "| `files.f` | the Verilog files in dependency order, one per line |\n";
    s +=
        "| `mrnic.core` | FuseSoC CAPI2 core: fileset `rtl`, targets `default`, `lint` (Verilator), `sim` (Icarus) |\n";
    s += "| `regmap.md` | the register map of the `csr` block (AXI4-Lite) |\n";
    s += "| `mrnic_regs.h` | the same as a C header: offsets, field shifts and masks, access types |\n";
    s += "| `constraints/` | clock constraints: `mrnic_core.xdc` (Vivado), `mrnic_core.sdc` (Quartus), \
          `mrnic_core_ecp5.lpf` (nextpnr-ecp5); see `constraints/README.md` for the clock each assumes |\n";
    let _ = writeln!(
        s,
        "\nEvery module has one clock `clk` (rising edge) and a synchronous, active-high `rst`. \
         The constraint files assume one clock named `clk`; set its period to {} MHz \
         (`hardware.clock_mhz`) if you use another flow. The top is `{top}`{}.\n",
        h.clock_mhz,
        match &why {
            None => String::new(),
            Some(w) => format!(", the last block: this config has no tx_engine and no `mrnic_core` yet ({w})"),
        }
    );
    s += "The `parameter`s of each module (`CONNS`, `PATHS`, ...) state the sizes it was generated \
          for; the port widths read as expressions of them, but every internal width, depth and \
          unrolled loop is built in. An instance that overrides one to another value stops \
          elaboration (`illegal_parameter_combination_generated_values`) rather than build a \
          module with ports of one size and registers of another: for other sizes, write a config \
          and run `mrnic gen` again.\n\n";
    s += "## Use it\n\n";
    s += "- **Vivado:** `read_verilog [split [read -nonewline [open files.f]] \"\\n\"]` from this folder (or add \
          the files to a project), `read_xdc constraints/mrnic_core.xdc`, then \
          `synth_design -top <module> -mode out_of_context`.\n";
    s += "- **Quartus:** add each file of `files.f` as `VERILOG_FILE` and `constraints/mrnic_core.sdc` as \
          `SDC_FILE` in the `.qsf`.\n";
    s += "- **Yosys:** `yosys -p \"read_verilog $(cat files.f | tr '\\n' ' '); synth_xilinx -top <module>\"` \
          (or `synth_ice40`, `synth_ecp5`); the repository's `scripts/synth` does this per block with \
          resource tables.\n";
    s += "- **Verilator / Icarus:** `verilator --lint-only -Wall -F files.f --top-module <module>`; \
          `iverilog -g2005 -c files.f`.\n";
    s += "- **FuseSoC:** `fusesoc library add mrnic <this folder>`, then \
          `fusesoc run --target lint ";
    let _ = writeln!(s, "{}`.", core_name(cfg));
    s
}
