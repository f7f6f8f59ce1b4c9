//! Golden test vectors: generation from the reference's own code paths, a
//! versioned file format (JSON Lines, `docs/vectors.md`) and the checker
//! that re-runs a target on them.
//!
//! One file per block boundary the hardware has:
//! - [`path_selector`]: path table + request -> chosen path and credits
//!   ([`crate::selector::select`]);
//! - [`telemetry`]: entry + timestamped events -> new entry and action
//!   ([`crate::path::apply`]);
//! - [`dma_write`]: memory-region table + placements -> AXI write bursts or
//!   ACCESS ([`crate::memory::Memory::check`] and
//!   [`mrnic_proto::axi::write_bursts`]);
//! - [`rx_parser`]: frames on the MAC's stream (bytes, `tkeep` holes,
//!   `tuser`) -> parsed header and payload, or the drop reason
//!   ([`mrnic_proto::drop::stream_verdict`]);
//! - [`rx`] and [`tx`]: a NIC's packet boundary, recorded from runs of the
//!   reference [`crate::Nic`]: packets, verbs and timers in; packets,
//!   memory writes and completions out; the `rx` file ends with the
//!   [`adversarial`] vectors.
//!
//! A target (the reference itself, the cycle model, the RTL) implements
//! [`VectorTarget`]; [`check_dir`] runs it over every file of a directory.

pub mod adversarial;
pub mod dma_write;
pub mod format;
pub mod path_selector;
pub mod rx;
pub mod rx_parser;
pub mod telemetry;
pub mod tx;

use std::fmt::Write as _;
use std::path::Path;

use mrnic_proto::Config;

pub use format::{BlockKind, FileHeader, VectorError, VectorFile};

/// The vectors of one file, typed by block.
#[derive(Debug, Clone)]
pub enum AnyFile {
    PathSelector(VectorFile<path_selector::SelectorVector>),
    Telemetry(VectorFile<telemetry::TelemetryVector>),
    DmaWrite(VectorFile<dma_write::DmaVector>),
    RxParser(VectorFile<rx_parser::RxParserVector>),
    Rx(VectorFile<rx::NicVector>),
    Tx(VectorFile<rx::NicVector>),
}

impl AnyFile {
    /// Reads a file of the given block.
    pub fn read(path: &Path, block: BlockKind) -> Result<AnyFile, VectorError> {
        Ok(match block {
            BlockKind::PathSelector => AnyFile::PathSelector(format::read_file(path, block)?),
            BlockKind::Telemetry => AnyFile::Telemetry(format::read_file(path, block)?),
            BlockKind::DmaWrite => AnyFile::DmaWrite(format::read_file(path, block)?),
            BlockKind::RxParser => AnyFile::RxParser(format::read_file(path, block)?),
            BlockKind::Rx => AnyFile::Rx(format::read_file(path, block)?),
            BlockKind::Tx => AnyFile::Tx(format::read_file(path, block)?),
        })
    }

    pub fn block(&self) -> BlockKind {
        match self {
            AnyFile::PathSelector(_) => BlockKind::PathSelector,
            AnyFile::Telemetry(_) => BlockKind::Telemetry,
            AnyFile::DmaWrite(_) => BlockKind::DmaWrite,
            AnyFile::RxParser(_) => BlockKind::RxParser,
            AnyFile::Rx(_) => BlockKind::Rx,
            AnyFile::Tx(_) => BlockKind::Tx,
        }
    }

    pub fn header(&self) -> &FileHeader {
        match self {
            AnyFile::PathSelector(f) => &f.header,
            AnyFile::Telemetry(f) => &f.header,
            AnyFile::DmaWrite(f) => &f.header,
            AnyFile::RxParser(f) => &f.header,
            AnyFile::Rx(f) => &f.header,
            AnyFile::Tx(f) => &f.header,
        }
    }

    /// Number of vectors.
    pub fn len(&self) -> usize {
        self.header().vectors
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `(line, id)` of every vector, in file order.
    pub fn ids(&self) -> Vec<(usize, String)> {
        fn ids<V>(f: &VectorFile<V>, id: impl Fn(&V) -> &str) -> Vec<(usize, String)> {
            f.vectors.iter().map(|(l, v)| (*l, id(v).to_string())).collect()
        }
        match self {
            AnyFile::PathSelector(f) => ids(f, |v| &v.id),
            AnyFile::Telemetry(f) => ids(f, |v| &v.id),
            AnyFile::DmaWrite(f) => ids(f, |v| &v.id),
            AnyFile::RxParser(f) => ids(f, |v| &v.id),
            AnyFile::Rx(f) | AnyFile::Tx(f) => ids(f, |v| &v.id),
        }
    }
}

/// What a target made of one vector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Pass,
    /// The first difference, in words.
    Fail(String),
    /// The target cannot run this vector (why, in words): counted apart
    /// with the not-modelled ones, never as passed or failed.
    NotCovered(String),
}

/// What a target made of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOutcome {
    /// One outcome per vector, in file order.
    Checked(Vec<Outcome>),
    /// The target has no model of this block yet: counted apart, never as
    /// passed.
    NotModelled,
}

/// Something that can run vectors: the reference, the cycle model, the RTL.
/// `--target rtl` plugs in here.
pub trait VectorTarget {
    /// Its name in reports (`reference`, `model`, `rtl`).
    fn name(&self) -> &str;
    /// Runs every vector of a file.
    fn check_file(&mut self, file: &AnyFile) -> FileOutcome;
}

/// The reference re-run on the vectors' inputs.
pub struct ReferenceTarget;

impl VectorTarget for ReferenceTarget {
    fn name(&self) -> &str {
        "reference"
    }

    fn check_file(&mut self, file: &AnyFile) -> FileOutcome {
        let cfg = &file.header().config;
        FileOutcome::Checked(match file {
            AnyFile::PathSelector(f) => f.vectors.iter().map(|(_, v)| path_selector::check(cfg, v)).collect(),
            AnyFile::Telemetry(f) => f.vectors.iter().map(|(_, v)| telemetry::check(cfg, v)).collect(),
            AnyFile::DmaWrite(f) => f.vectors.iter().map(|(_, v)| dma_write::check(cfg, v)).collect(),
            AnyFile::RxParser(f) => f.vectors.iter().map(|(_, v)| rx_parser::check(cfg, v)).collect(),
            AnyFile::Rx(f) | AnyFile::Tx(f) => f.vectors.iter().map(|(_, v)| rx::check(cfg, v)).collect(),
        })
    }
}

/// Writes every vector file for `cfg` and `seed` into `out` (created if
/// needed). Deterministic: the same inputs give the same bytes.
pub fn generate(cfg: &Config, seed: u64, out: &Path) -> Result<Vec<(BlockKind, usize)>, VectorError> {
    std::fs::create_dir_all(out).map_err(|source| VectorError::Io { path: out.to_path_buf(), source })?;
    let path = |b: BlockKind| out.join(b.file_name());
    let mut made = Vec::new();
    let ps = path_selector::generate(cfg, seed);
    format::write_file(&path(BlockKind::PathSelector), BlockKind::PathSelector, cfg, seed, &ps)?;
    made.push((BlockKind::PathSelector, ps.len()));
    let tl = telemetry::generate(cfg, seed);
    format::write_file(&path(BlockKind::Telemetry), BlockKind::Telemetry, cfg, seed, &tl)?;
    made.push((BlockKind::Telemetry, tl.len()));
    let dw = dma_write::generate(cfg, seed);
    format::write_file(&path(BlockKind::DmaWrite), BlockKind::DmaWrite, cfg, seed, &dw)?;
    made.push((BlockKind::DmaWrite, dw.len()));
    let rp = rx_parser::generate(cfg, seed);
    format::write_file(&path(BlockKind::RxParser), BlockKind::RxParser, cfg, seed, &rp)?;
    made.push((BlockKind::RxParser, rp.len()));
    let (pair_rx, txv) = tx::generate(cfg, seed);
    let mut rxv = rx::generate(cfg, seed);
    rxv.extend(pair_rx);
    let (adv, problems) = adversarial::generate_checked(cfg, seed, rxv.len());
    if !problems.is_empty() {
        return Err(VectorError::Bad {
            path: out.to_path_buf(),
            line: 0,
            msg: format!("the reference breaks adversarial claims:\n{}", problems.join("\n")),
        });
    }
    rxv.extend(adv);
    format::write_file(&path(BlockKind::Rx), BlockKind::Rx, cfg, seed, &rxv)?;
    made.push((BlockKind::Rx, rxv.len()));
    format::write_file(&path(BlockKind::Tx), BlockKind::Tx, cfg, seed, &txv)?;
    made.push((BlockKind::Tx, txv.len()));
    Ok(made)
}

/// Totals of a check run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    pub passed: usize,
    pub failed: usize,
    /// Vectors of blocks the target does not model yet.
    pub not_modelled: usize,
    /// Per-file lines, then one line per failure, ready to print.
    pub text: String,
}

impl Report {
    /// The last line: exactly `N passed, N failed`.
    pub fn summary(&self) -> String {
        format!("{} passed, {} failed", self.passed, self.failed)
    }
}

/// Runs `target` over every vector file in `dir` (files named
/// `<block>.jsonl`; at least one must exist). A bad file is an error naming
/// its path and line.
pub fn check_dir(dir: &Path, target: &mut dyn VectorTarget) -> Result<Report, VectorError> {
    let mut files = Vec::new();
    for b in BlockKind::ALL {
        let p = dir.join(b.file_name());
        if p.exists() {
            files.push(AnyFile::read(&p, b)?);
        }
    }
    if files.is_empty() {
        return Err(VectorError::Bad {
            path: dir.to_path_buf(),
            line: 0,
            msg: format!(
                "no vector files here (expected some of {}); write them with `mrnic vectors gen`",
                BlockKind::ALL.map(|b| b.file_name()).join(", ")
            ),
        });
    }
    let mut r = Report::default();
    for f in &files {
        let name = f.block().file_name();
        match target.check_file(f) {
            FileOutcome::NotModelled => {
                r.not_modelled += f.len();
                let _ = writeln!(r.text, "{name}: {} vectors not yet modelled by {}", f.len(), target.name());
            }
            FileOutcome::Checked(outcomes) => {
                let ids = f.ids();
                let pass = outcomes.iter().filter(|o| **o == Outcome::Pass).count();
                let skip = outcomes.iter().filter(|o| matches!(o, Outcome::NotCovered(_))).count();
                let fail = outcomes.len() - pass - skip;
                r.passed += pass;
                r.failed += fail;
                r.not_modelled += skip;
                let also = if skip > 0 { format!(", {skip} not covered") } else { String::new() };
                let _ = writeln!(r.text, "{name}: {pass} passed, {fail} failed{also} ({})", target.name());
                for ((line, id), o) in ids.iter().zip(&outcomes) {
                    match o {
                        Outcome::Fail(why) => {
                            let _ = writeln!(r.text, "  FAIL {name}:{line} {id}: {why}");
                        }
                        Outcome::NotCovered(why) => {
                            let _ = writeln!(r.text, "  not covered {name}:{line} {id}: {why}");
                        }
                        Outcome::Pass => {}
                    }
                }
            }
        }
    }
    if r.not_modelled > 0 {
        let _ = writeln!(r.text, "{} vectors not yet modelled or not covered (not counted as passed)", r.not_modelled);
    }
    Ok(r)
}
