//! Verilating a design and caching the result: used by `build.rs` (through
//! `#[path]`) and by the cache test. Only `std` here, so the build script
//! can include it.
//!
//! A design is Verilated into `<cache>/<prefix>-<key>/`, where the key is a
//! hash of everything that decides the compiled model: the Verilog text, the
//! parameters (config name, top, prefix, port table), the Verilator and make
//! flags, `verilator --version` and the C++ compiler's `--version`. A
//! directory with a `BUILD_OK` marker is complete and never rebuilt; a
//! changed input gives a new key, so it is built beside the old one, and the
//! builder says which input changed. Builds go to a temporary directory
//! that is renamed into place, so two builders racing on one key both end
//! with a complete entry.
//!
//! The Verilator runtime (`verilated.o`, `verilated_vcd_c.o`,
//! `verilated_threads.o`) depends only on the toolchain and flags; it is
//! archived once per key into `<cache>/runtime-<key>/`.

#![allow(dead_code)]

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Bump when the layout of a cache entry or the way it is built changes.
const BUILDER_VERSION: &str = "mrnic-verif builder 1";

/// Verilator flags of every design (no `--exe`, no `--threads`).
pub const VERILATOR_FLAGS: &[&str] = &["--cc", "-O3", "--x-assign", "fast", "--x-initial", "fast", "--trace", "-Wall"];

/// Make variables for the C++ compile of the model and the runtime.
pub const MAKE_VARS: &[&str] = &["CXXFLAGS=-fPIC"];

/// The runtime objects every Verilated model links against.
pub const RUNTIME_OBJS: &[&str] = &["verilated.o", "verilated_vcd_c.o", "verilated_threads.o"];

/// Name of the runtime archive, linked as `-l static=<RUNTIME_LIB>`.
pub const RUNTIME_LIB: &str = "mrnic_verilated_rt";

/// One port of a design, as the shim's table needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortSpec {
    pub name: String,
    pub input: bool,
    pub width: u32,
}

/// Everything needed to Verilate one block for one config.
#[derive(Debug, Clone)]
pub struct DesignSpec {
    /// Block name, which is also the Verilog top module.
    pub block: String,
    /// Config the Verilog was generated for (`small`, `default`, `test`).
    pub config: String,
    /// Verilog files: (file name, text). The first holds the top module.
    pub verilog: Vec<(String, String)>,
    /// Every port except `clk`, in the model's order.
    pub ports: Vec<PortSpec>,
    /// Lint waivers (`-Wno-<RULE>`), each with a reason in the table.
    pub waivers: Vec<String>,
}

impl DesignSpec {
    /// The Verilated class name: `V<block>_<config>`, so one block can be
    /// built for several configs in one binary.
    pub fn prefix(&self) -> String {
        let clean = |s: &str| s.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect::<String>();
        format!("V{}_{}", clean(&self.block), clean(&self.config))
    }
}

/// The tools found on this machine.
#[derive(Debug, Clone)]
pub struct Toolchain {
    pub verilator: PathBuf,
    /// `verilator --version`, trimmed.
    pub version: String,
    /// `VERILATOR_ROOT`: its `include/` holds the runtime sources.
    pub root: PathBuf,
    pub cxx: String,
    /// `$CXX --version`, first line.
    pub cxx_version: String,
    pub make: String,
    /// Parallel jobs for make.
    pub jobs: usize,
}

impl Toolchain {
    /// Finds Verilator (`$VERILATOR`, else `verilator` on the `PATH`).
    /// `Ok(None)` when it is not installed; `Err` when it is there but broken.
    pub fn detect() -> Result<Option<Toolchain>, String> {
        let verilator = PathBuf::from(std::env::var("VERILATOR").unwrap_or_else(|_| "verilator".into()));
        let version = match Command::new(&verilator).arg("--version").output() {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
            Ok(o) => {
                return Err(format!(
                    "`{} --version` failed: {}",
                    verilator.display(),
                    String::from_utf8_lossy(&o.stderr).trim()
                ))
            }
            Err(_) => return Ok(None),
        };
        let root = match std::env::var("VERILATOR_ROOT") {
            Ok(r) if !r.is_empty() => PathBuf::from(r),
            _ => {
                let o = Command::new(&verilator)
                    .args(["--getenv", "VERILATOR_ROOT"])
                    .output()
                    .map_err(|e| format!("`verilator --getenv VERILATOR_ROOT`: {e}"))?;
                PathBuf::from(String::from_utf8_lossy(&o.stdout).trim())
            }
        };
        if !root.join("include/verilated.h").exists() {
            return Err(format!(
                "Verilator's runtime headers are not in {}/include; set VERILATOR_ROOT",
                root.display()
            ));
        }
        let cxx = std::env::var("CXX").ok().filter(|c| !c.is_empty()).unwrap_or_else(|| "g++".into());
        let cxx_version = Command::new(&cxx)
            .arg("--version")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).lines().next().unwrap_or("").to_string())
            .map_err(|e| format!("C++ compiler `{cxx}` not runnable: {e}"))?;
        let jobs = std::env::var("NUM_JOBS")
            .ok()
            .and_then(|j| j.parse().ok())
            .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
        Ok(Some(Toolchain { verilator, version, root, cxx, cxx_version, make: "make".into(), jobs }))
    }

    pub fn include_dirs(&self) -> Vec<PathBuf> {
        vec![self.root.join("include"), self.root.join("include/vltstd")]
    }
}

/// 128-bit FNV-1a: stable across Rust releases (unlike `DefaultHasher`),
/// and plenty for a cache key.
pub fn fnv128(data: &[u8]) -> u128 {
    let mut h: u128 = 0x6c62272e07bb014262b821756295c58d;
    for &b in data {
        h ^= b as u128;
        h = h.wrapping_mul(0x0000000001000000000000000000013B);
    }
    h
}

fn hex(h: u128) -> String {
    format!("{h:032x}")
}

/// The inputs of the key, each hashed on its own so a rebuild can say which
/// one changed.
pub fn key_components(tc: &Toolchain, spec: &DesignSpec) -> Vec<(&'static str, String)> {
    let mut verilog = String::new();
    for (name, text) in &spec.verilog {
        let _ = write!(verilog, "{name}\0{text}\0");
    }
    let mut params = format!("config={}\0top={}\0prefix={}\0", spec.config, spec.block, spec.prefix());
    for p in &spec.ports {
        let _ = write!(params, "{}:{}:{}\0", p.name, if p.input { "in" } else { "out" }, p.width);
    }
    let flags =
        [VERILATOR_FLAGS, MAKE_VARS, &spec.waivers.iter().map(String::as_str).collect::<Vec<_>>()].concat().join(" ");
    vec![
        ("Verilog", hex(fnv128(verilog.as_bytes()))),
        ("parameters", hex(fnv128(params.as_bytes()))),
        ("flags", hex(fnv128(flags.as_bytes()))),
        ("verilator --version", hex(fnv128(tc.version.as_bytes()))),
        ("C++ compiler", hex(fnv128(tc.cxx_version.as_bytes()))),
        ("builder", hex(fnv128(BUILDER_VERSION.as_bytes()))),
    ]
}

/// The cache key of `spec`: 16 hex digits over all key components.
pub fn cache_key(tc: &Toolchain, spec: &DesignSpec) -> String {
    combine(&key_components(tc, spec))
}

fn combine(components: &[(&'static str, String)]) -> String {
    let mut all = String::new();
    for (name, h) in components {
        let _ = writeln!(all, "{name}={h}");
    }
    hex(fnv128(all.as_bytes()))[..16].to_string()
}

/// What `build_design` did.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A complete entry for this key existed; nothing ran.
    Cached,
    /// Verilated and compiled; the reason says which input changed.
    Built { reason: String, seconds: f64 },
}

/// A complete cache entry.
#[derive(Debug, Clone)]
pub struct Built {
    pub prefix: String,
    pub key: String,
    /// The entry: `lib<prefix>.a` and `obj/` (the generated headers).
    pub dir: PathBuf,
    pub obj_dir: PathBuf,
    /// Archive name for `rustc-link-lib=static=`.
    pub lib: String,
    pub outcome: Outcome,
}

/// A build step that failed, with the tool's output.
#[derive(Debug, Clone)]
pub struct BuildError(pub String);

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn run(cmd: &mut Command, what: &str) -> Result<(), BuildError> {
    let out = cmd.output().map_err(|e| BuildError(format!("{what}: could not start {:?}: {e}", cmd.get_program())))?;
    if !out.status.success() {
        return Err(BuildError(format!(
            "{what} failed ({}):\n{:?}\n{}{}",
            out.status,
            cmd,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    Ok(())
}

fn io<'a>(what: &str, path: &'a Path) -> impl Fn(std::io::Error) -> BuildError + 'a {
    let what = what.to_string();
    move |e| BuildError(format!("{what} {}: {e}", path.display()))
}

/// Appends one line to `<cache>/build.log`.
fn log(cache: &Path, line: &str) {
    use std::io::Write;
    if let Ok(mut f) = fs::OpenOptions::new().create(true).append(true).open(cache.join("build.log")) {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
        let _ = writeln!(f, "{now} {line}");
    }
}

/// The most recent complete entry of `prefix` other than `key`, for the
/// "what changed" message.
fn previous_entry(cache: &Path, prefix: &str, key: &str) -> Option<PathBuf> {
    let mut best: Option<(std::time::SystemTime, PathBuf)> = None;
    for e in fs::read_dir(cache).ok()?.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(rest) = name.strip_prefix(prefix).and_then(|r| r.strip_prefix('-')) else { continue };
        if rest == key || rest.contains('.') || rest.contains('-') {
            continue;
        }
        let marker = e.path().join("BUILD_OK");
        if let Ok(t) = fs::metadata(&marker).and_then(|m| m.modified()) {
            if best.as_ref().is_none_or(|(bt, _)| t > *bt) {
                best = Some((t, e.path()));
            }
        }
    }
    best.map(|(_, p)| p)
}

fn change_reason(cache: &Path, prefix: &str, key: &str, components: &[(&'static str, String)]) -> String {
    let Some(prev) = previous_entry(cache, prefix, key) else { return "no cached build".into() };
    let Ok(text) = fs::read_to_string(prev.join("inputs.txt")) else { return "no cached build".into() };
    let changed: Vec<&str> = components
        .iter()
        .filter(|(name, h)| !text.lines().any(|l| l == format!("{name}={h}")))
        .map(|(name, _)| *name)
        .collect();
    let old = prev.file_name().map(|n| n.to_string_lossy().rsplit('-').next().unwrap_or("").to_string());
    format!("{} changed (key {} -> {key})", changed.join(", "), old.unwrap_or_default())
}

/// Keeps the newest `keep` complete entries of `prefix`, removes older ones
/// (best effort; an entry is only a cache).
fn prune(cache: &Path, prefix: &str, keep: usize) {
    let Ok(rd) = fs::read_dir(cache) else { return };
    let mut entries: Vec<(std::time::SystemTime, PathBuf)> = rd
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().to_string();
            n.strip_prefix(prefix)
                .and_then(|r| r.strip_prefix('-'))
                .is_some_and(|r| !r.contains('.') && !r.contains('-'))
        })
        .filter_map(|e| fs::metadata(e.path().join("BUILD_OK")).and_then(|m| m.modified()).ok().map(|t| (t, e.path())))
        .collect();
    entries.sort_by_key(|e| std::cmp::Reverse(e.0));
    for (_, p) in entries.into_iter().skip(keep) {
        let _ = fs::remove_dir_all(p);
    }
}

/// Ports Verilator declared in `V<prefix>.h` (`VL_IN8(&name,msb,lsb);`...):
/// (name, input, width), `clk` included.
pub fn header_ports(header: &str) -> Vec<(String, bool, u32)> {
    let mut ports = Vec::new();
    for line in header.lines() {
        let l = line.trim();
        let input = if l.starts_with("VL_IN") {
            true
        } else if l.starts_with("VL_OUT") {
            false
        } else {
            continue;
        };
        let Some(args) = l.split_once("(&").and_then(|(_, r)| r.split_once(')')).map(|(a, _)| a) else { continue };
        let parts: Vec<&str> = args.split(',').map(str::trim).collect();
        if parts.len() < 3 {
            continue;
        }
        let (Ok(msb), Ok(lsb)) = (parts[1].parse::<u32>(), parts[2].parse::<u32>()) else { continue };
        ports.push((parts[0].to_string(), input, msb.abs_diff(lsb) + 1));
    }
    ports
}

/// Compares the model's ports with what Verilator found in the Verilog;
/// `Err` lists every difference.
pub fn check_ports(spec: &DesignSpec, header: &str) -> Result<(), BuildError> {
    let rtl = header_ports(header);
    if rtl.is_empty() {
        // An unknown header layout (a future Verilator): the shim's
        // compile-time and run-time checks still catch a wrong width class.
        return Ok(());
    }
    let mut problems = Vec::new();
    for p in &spec.ports {
        match rtl.iter().find(|(n, _, _)| *n == p.name) {
            None => problems.push(format!("port `{}` of the model is missing from the Verilog", p.name)),
            Some((_, input, width)) => {
                if *input != p.input || *width != p.width {
                    let d = |i: bool| if i { "input" } else { "output" };
                    problems.push(format!(
                        "port `{}`: the model says {} [{}], the Verilog says {} [{}]",
                        p.name,
                        d(p.input),
                        p.width,
                        d(*input),
                        width
                    ));
                }
            }
        }
    }
    for (name, _, _) in &rtl {
        if name != "clk" && !spec.ports.iter().any(|p| p.name == *name) {
            problems.push(format!("port `{name}` of the Verilog is not in the model's port list"));
        }
    }
    if !rtl.iter().any(|(n, i, w)| n == "clk" && *i && *w == 1) {
        problems.push("the Verilog has no 1-bit input `clk`".into());
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(BuildError(format!(
            "{} ({}): the model and the Verilog disagree on ports:\n  {}",
            spec.block,
            spec.config,
            problems.join("\n  ")
        )))
    }
}

fn make(tc: &Toolchain, obj: &Path, prefix: &str, targets: &[&str]) -> Result<(), BuildError> {
    let mut cmd = Command::new(&tc.make);
    cmd.arg("-C")
        .arg(obj)
        .arg("-f")
        .arg(format!("{prefix}.mk"))
        .arg(format!("-j{}", tc.jobs.max(1)))
        .arg(format!("CXX={}", tc.cxx))
        .args(MAKE_VARS)
        .args(targets)
        .env_remove("MAKEFLAGS")
        .env_remove("MFLAGS");
    run(&mut cmd, &format!("make {}", targets.join(" ")))
}

/// Verilates and compiles `spec` into `cache`, unless a complete entry for
/// its key exists. The runtime objects are built in the same make run when
/// `runtime` has no entry yet.
pub fn build_design(tc: &Toolchain, spec: &DesignSpec, cache: &Path, runtime: &Path) -> Result<Built, BuildError> {
    let prefix = spec.prefix();
    let components = key_components(tc, spec);
    let key = combine(&components);
    let dir = cache.join(format!("{prefix}-{key}"));
    let built = |outcome| Built {
        prefix: prefix.clone(),
        key: key.clone(),
        dir: dir.clone(),
        obj_dir: dir.join("obj"),
        lib: prefix.clone(),
        outcome,
    };
    let runtime_dir = runtime_dir(tc, runtime);
    let need_runtime = !runtime_dir.join("BUILD_OK").exists();
    if dir.join("BUILD_OK").exists() && !need_runtime {
        log(cache, &format!("cached {prefix} key={key}"));
        return Ok(built(Outcome::Cached));
    }

    let start = Instant::now();
    let reason = if dir.join("BUILD_OK").exists() {
        "runtime missing".to_string()
    } else {
        change_reason(cache, &prefix, &key, &components)
    };
    fs::create_dir_all(cache).map_err(io("creating", cache))?;
    let tmp = cache.join(format!("{prefix}-{key}.tmp{}", std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    let obj = tmp.join("obj");
    let src = tmp.join("src");
    fs::create_dir_all(&src).map_err(io("creating", &src))?;
    let mut files = Vec::new();
    for (name, text) in &spec.verilog {
        let f = src.join(name);
        fs::write(&f, text).map_err(io("writing", &f))?;
        files.push(f);
    }

    let mut cmd = Command::new(&tc.verilator);
    cmd.args(VERILATOR_FLAGS)
        .args(&spec.waivers)
        .arg("--top-module")
        .arg(&spec.block)
        .arg("--prefix")
        .arg(&prefix)
        .arg("-Mdir")
        .arg(&obj)
        .args(&files);
    run(&mut cmd, &format!("verilator ({} for config {})", spec.block, spec.config))?;
    let header = fs::read_to_string(obj.join(format!("{prefix}.h"))).map_err(io("reading", &obj))?;
    check_ports(spec, &header)?;

    let all = format!("{prefix}__ALL.a");
    let mut targets = vec![all.as_str()];
    if need_runtime {
        targets.extend_from_slice(RUNTIME_OBJS);
    }
    make(tc, &obj, &prefix, &targets)?;
    let lib = tmp.join(format!("lib{prefix}.a"));
    fs::copy(obj.join(&all), &lib).map_err(io("copying", &lib))?;

    if need_runtime {
        install_runtime(tc, &obj, &runtime_dir)?;
    }

    let mut inputs = String::new();
    for (name, h) in &components {
        let _ = writeln!(inputs, "{name}={h}");
    }
    let _ = writeln!(inputs, "# {} ({}), {}, {}", spec.block, spec.config, tc.version, tc.cxx_version);
    fs::write(tmp.join("inputs.txt"), inputs).map_err(io("writing", &tmp))?;
    fs::write(tmp.join("BUILD_OK"), format!("{key}\n")).map_err(io("writing", &tmp))?;
    if dir.join("BUILD_OK").exists() {
        // Runtime-only rebuild, or another builder won the race.
        let _ = fs::remove_dir_all(&tmp);
    } else {
        let _ = fs::remove_dir_all(&dir);
        if fs::rename(&tmp, &dir).is_err() && !dir.join("BUILD_OK").exists() {
            return Err(BuildError(format!("could not move {} to {}", tmp.display(), dir.display())));
        }
        let _ = fs::remove_dir_all(&tmp);
    }
    let seconds = start.elapsed().as_secs_f64();
    log(cache, &format!("built {prefix} key={key} in {seconds:.1}s: {reason}"));
    prune(cache, &prefix, 3);
    Ok(built(Outcome::Built { reason, seconds }))
}

/// `<runtime>/runtime-<key>`: keyed on the toolchain and flags only.
pub fn runtime_dir(tc: &Toolchain, runtime: &Path) -> PathBuf {
    let text = format!(
        "{BUILDER_VERSION}\0{}\0{}\0{}\0{}",
        tc.version,
        tc.cxx_version,
        VERILATOR_FLAGS.join(" "),
        MAKE_VARS.join(" ")
    );
    runtime.join(format!("runtime-{}", &hex(fnv128(text.as_bytes()))[..16]))
}

fn install_runtime(tc: &Toolchain, obj: &Path, dir: &Path) -> Result<(), BuildError> {
    let parent = dir.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(parent).map_err(io("creating", parent))?;
    let tmp = PathBuf::from(format!("{}.tmp{}", dir.display(), std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(&tmp).map_err(io("creating", &tmp))?;
    let lib = tmp.join(format!("lib{RUNTIME_LIB}.a"));
    let mut cmd = Command::new("ar");
    cmd.arg("rcs").arg(&lib).args(RUNTIME_OBJS.iter().map(|o| obj.join(o)));
    run(&mut cmd, "ar (Verilator runtime)")?;
    fs::write(tmp.join("BUILD_OK"), format!("{}\n{}\n", tc.version, tc.cxx_version)).map_err(io("writing", &tmp))?;
    if !dir.join("BUILD_OK").exists() {
        let _ = fs::remove_dir_all(dir);
        let _ = fs::rename(&tmp, dir);
    }
    let _ = fs::remove_dir_all(&tmp);
    if dir.join("BUILD_OK").exists() {
        Ok(())
    } else {
        Err(BuildError(format!("could not install the Verilator runtime into {}", dir.display())))
    }
}

/// The C++ that binds one design's ports to the generic shim: a table from
/// port index to the Verilated model's member, plus a factory.
pub fn shim_cpp(spec: &DesignSpec) -> String {
    let prefix = spec.prefix();
    let mut s = String::new();
    let _ = writeln!(s, "// Generated by verif/build.rs for {} (config {}). Do not edit.", spec.block, spec.config);
    let _ = writeln!(s, "#include \"mrnic-verif/shim/sim.h\"");
    let _ = writeln!(s, "#include \"{prefix}.h\"\n");
    let _ = writeln!(s, "namespace mrnic_verif {{\n");
    let _ = writeln!(s, "static void bind_{prefix}({prefix}& m, Sim& s) {{");
    let _ = writeln!(s, "    s.bind_clock(m.clk);");
    for p in &spec.ports {
        let _ = writeln!(s, "    s.bind(\"{0}\", m.{0}, {1}, {2});", p.name, p.width, p.input);
    }
    let _ = writeln!(s, "}}\n");
    let _ = writeln!(s, "std::unique_ptr<Sim> new_{prefix}() {{");
    let _ = writeln!(s, "    return std::unique_ptr<Sim>(new VerilatedSim<{prefix}>(&bind_{prefix}));");
    let _ = writeln!(s, "}}\n");
    let _ = writeln!(s, "}}  // namespace mrnic_verif");
    s
}

/// The factory that picks a design by prefix.
pub fn registry_cpp(prefixes: &[String]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "// Generated by verif/build.rs: every Verilated design of this build. Do not edit.");
    let _ = writeln!(s, "#include \"mrnic-verif/shim/sim.h\"\n#include <string>\n");
    let _ = writeln!(s, "namespace mrnic_verif {{\n");
    for p in prefixes {
        let _ = writeln!(s, "std::unique_ptr<Sim> new_{p}();");
    }
    let _ = writeln!(s, "\nstd::unique_ptr<Sim> new_sim(rust::Str prefix) {{");
    let _ = writeln!(s, "    std::string name(prefix);");
    for p in prefixes {
        let _ = writeln!(s, "    if (name == \"{p}\") return new_{p}();");
    }
    let _ = writeln!(s, "    throw std::runtime_error(\"no Verilated design \" + name + \" in this build\");");
    let _ = writeln!(s, "}}\n\n}}  // namespace mrnic_verif");
    s
}
