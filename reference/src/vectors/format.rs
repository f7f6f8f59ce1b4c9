//! The vector file format (`docs/vectors.md`): JSON Lines, one file per
//! block boundary. Line 1 is a [`FileHeader`]; every further line is one
//! vector of the file's block, an object with `"block"` naming it. Readers
//! check the format name, the version, the block of every line and every
//! field, and report the file and line of the first problem.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use mrnic_proto::Config;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// `format` of every header.
pub const FORMAT: &str = "mrnic-vectors";
/// Version of the format. Readers refuse any other.
pub const VERSION: u32 = 1;
/// `generator` of files this crate writes.
pub const GENERATOR: &str = concat!("mrnic-reference ", env!("CARGO_PKG_VERSION"), " vectors::generate");

/// The block boundaries that have a vector file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BlockKind {
    PathSelector,
    Telemetry,
    DmaWrite,
    Rx,
    Tx,
    /// Last, so that adding it left the other files' vector seeds alone.
    RxParser,
}

impl BlockKind {
    pub const ALL: [BlockKind; 6] = [
        BlockKind::PathSelector,
        BlockKind::Telemetry,
        BlockKind::DmaWrite,
        BlockKind::RxParser,
        BlockKind::Rx,
        BlockKind::Tx,
    ];

    /// The name in headers and records.
    pub fn name(self) -> &'static str {
        match self {
            BlockKind::PathSelector => "path_selector",
            BlockKind::Telemetry => "telemetry",
            BlockKind::DmaWrite => "dma_write",
            BlockKind::Rx => "rx",
            BlockKind::Tx => "tx",
            BlockKind::RxParser => "rx_parser",
        }
    }

    pub fn from_name(s: &str) -> Option<BlockKind> {
        BlockKind::ALL.into_iter().find(|b| b.name() == s)
    }

    /// The file that holds this block's vectors.
    pub fn file_name(self) -> String {
        format!("{}.jsonl", self.name())
    }
}

impl fmt::Display for BlockKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Line 1 of every vector file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileHeader {
    /// Always [`FORMAT`].
    pub format: String,
    /// Always [`VERSION`].
    pub version: u32,
    /// The block boundary of every vector in the file.
    pub block: String,
    /// The config's name.
    pub config_name: String,
    /// The whole config the vectors were generated for.
    pub config: Config,
    /// The seed given to the generator; each vector carries its own, derived.
    pub seed: u64,
    /// What wrote the file.
    pub generator: String,
    /// Vectors that follow (a truncated file is refused).
    pub vectors: usize,
}

/// What went wrong reading vectors, with the place it went wrong.
#[derive(Debug, thiserror::Error)]
pub enum VectorError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}:{line}: {msg}", path.display())]
    Bad { path: PathBuf, line: usize, msg: String },
}

/// A file read and checked: its header and its vectors with their line
/// numbers (1-based).
#[derive(Debug, Clone)]
pub struct VectorFile<V> {
    pub path: PathBuf,
    pub header: FileHeader,
    pub vectors: Vec<(usize, V)>,
}

/// Writes a file: the header line, then one line per vector.
pub fn write_file<V: Serialize>(
    path: &Path,
    block: BlockKind,
    cfg: &Config,
    seed: u64,
    vectors: &[V],
) -> Result<(), VectorError> {
    let mut text = String::new();
    let header = FileHeader {
        format: FORMAT.to_string(),
        version: VERSION,
        block: block.name().to_string(),
        config_name: cfg.name.clone(),
        config: cfg.clone(),
        seed,
        generator: GENERATOR.to_string(),
        vectors: vectors.len(),
    };
    text.push_str(&serde_json::to_string(&header).expect("headers serialize"));
    text.push('\n');
    for v in vectors {
        let mut value = serde_json::to_value(v).expect("vectors serialize");
        let obj = value.as_object_mut().expect("a vector is an object");
        // `block` first, so a line says what it is at a glance.
        let mut line = serde_json::Map::new();
        line.insert("block".into(), block.name().into());
        line.extend(std::mem::take(obj));
        text.push_str(&serde_json::to_string(&line).expect("vectors serialize"));
        text.push('\n');
    }
    std::fs::write(path, text).map_err(|source| VectorError::Io { path: path.to_path_buf(), source })
}

/// Reads the header line of a file (to learn its block).
pub fn read_header(path: &Path) -> Result<FileHeader, VectorError> {
    let text = std::fs::read_to_string(path).map_err(|source| VectorError::Io { path: path.to_path_buf(), source })?;
    parse_header(path, text.lines().next().unwrap_or(""))
}

fn parse_header(path: &Path, line: &str) -> Result<FileHeader, VectorError> {
    let bad = |msg: String| VectorError::Bad { path: path.to_path_buf(), line: 1, msg };
    let v: serde_json::Value =
        serde_json::from_str(line).map_err(|e| bad(format!("the header line is not JSON: {e}")))?;
    // Format and version first, so that a newer file says so rather than
    // failing on a field this reader does not know.
    match v.get("format").and_then(|f| f.as_str()) {
        Some(FORMAT) => {}
        other => return Err(bad(format!("format is {other:?}, expected \"{FORMAT}\": not a vector file"))),
    }
    match v.get("version").and_then(|f| f.as_u64()) {
        Some(n) if n == VERSION as u64 => {}
        other => {
            return Err(bad(format!(
                "version {other:?}: this reader understands version {VERSION} only; regenerate the vectors \
                 (`mrnic vectors gen`) or use the mrnic that wrote them"
            )))
        }
    }
    let h: FileHeader = serde_json::from_value(v).map_err(|e| bad(format!("bad header: {e}")))?;
    if BlockKind::from_name(&h.block).is_none() {
        return Err(bad(format!("unknown block {:?}", h.block)));
    }
    let issues = h.config.check();
    if !issues.is_empty() {
        let list: Vec<String> = issues.iter().map(|i| i.to_string()).collect();
        return Err(bad(format!("the header's config is invalid: {}", list.join("; "))));
    }
    Ok(h)
}

/// Reads and checks a whole file of `block` vectors.
pub fn read_file<V: DeserializeOwned>(path: &Path, block: BlockKind) -> Result<VectorFile<V>, VectorError> {
    let text = std::fs::read_to_string(path).map_err(|source| VectorError::Io { path: path.to_path_buf(), source })?;
    let mut lines = text.lines().enumerate();
    let header = parse_header(path, lines.next().map(|(_, l)| l).unwrap_or(""))?;
    if header.block != block.name() {
        return Err(VectorError::Bad {
            path: path.to_path_buf(),
            line: 1,
            msg: format!("the header says block {:?}, expected {:?}", header.block, block.name()),
        });
    }
    let mut vectors = Vec::new();
    for (i, line) in lines {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let bad = |msg: String| VectorError::Bad { path: path.to_path_buf(), line: n, msg };
        let mut v: serde_json::Value = serde_json::from_str(line).map_err(|e| bad(format!("malformed JSON: {e}")))?;
        let obj = v.as_object_mut().ok_or_else(|| bad("a vector must be a JSON object".into()))?;
        match obj.remove("block") {
            Some(serde_json::Value::String(b)) if b == block.name() => {}
            Some(b) => return Err(bad(format!("a record for block {b} in a {} file", block.name()))),
            None => return Err(bad("missing field `block`".into())),
        }
        let rec: V = serde_json::from_value(v).map_err(|e| bad(format!("bad {} vector: {e}", block.name())))?;
        vectors.push((n, rec));
    }
    if vectors.len() != header.vectors {
        return Err(VectorError::Bad {
            path: path.to_path_buf(),
            line: text.lines().count(),
            msg: format!("the header announces {} vectors, the file has {}: truncated?", header.vectors, vectors.len()),
        });
    }
    Ok(VectorFile { path: path.to_path_buf(), header, vectors })
}

/// Fields of `after` that differ from `before`, by name, as JSON values
/// (a sorted map, so files are byte-stable).
pub fn changes<T: Serialize>(before: &T, after: &T) -> BTreeMap<String, serde_json::Value> {
    let b = serde_json::to_value(before).expect("serializes");
    let a = serde_json::to_value(after).expect("serializes");
    let (Some(b), Some(a)) = (b.as_object(), a.as_object()) else { return BTreeMap::new() };
    a.iter().filter(|(k, v)| b.get(*k) != Some(*v)).map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// Byte strings as lower-case hex in JSON.
pub mod hex {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn encode(b: &[u8]) -> String {
        let mut s = String::with_capacity(b.len() * 2);
        for x in b {
            s.push_str(&format!("{x:02x}"));
        }
        s
    }

    pub fn decode(s: &str) -> Result<Vec<u8>, String> {
        if s.len() % 2 != 0 {
            return Err(format!("hex string of odd length {}", s.len()));
        }
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(|_| format!("not hex: {:?}", &s[i..i + 2])))
            .collect()
    }

    pub fn serialize<S: Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&encode(b))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let s = String::deserialize(d)?;
        decode(&s).map_err(serde::de::Error::custom)
    }
}

/// A 128-bit strobe as hex (JSON numbers stop at 64 bits).
pub mod hex128 {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &u128, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{v:x}"))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u128, D::Error> {
        let s = String::deserialize(d)?;
        u128::from_str_radix(&s, 16).map_err(serde::de::Error::custom)
    }
}

/// The seed of vector `index` of a file generated with `seed`.
pub fn vector_seed(seed: u64, block: BlockKind, index: usize) -> u64 {
    let mut s = seed ^ ((block as u64) << 56) ^ (index as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    crate::rng::splitmix64(&mut s)
}
