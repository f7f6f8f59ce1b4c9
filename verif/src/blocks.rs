//! The blocks a lockstep session can run (`mrnic cosim --block NAME`):
//! for each, how to make its model for a config and what its random
//! transactions look like.

use mrnic_model::path_selector::{self, PathSelector, PathSelectorParams};
use mrnic_proto::Config;

use crate::designs::verif_fifo::{self, VerifFifo};
use crate::lockstep::ModelFactory;
use crate::rtl::designs;
use crate::stimulus::Traffic;
use crate::verilate::fnv128;
use crate::VerifError;

/// Everything a lockstep run of one block needs.
pub struct Session {
    pub make_model: ModelFactory,
    /// The config name the RTL was built for (the design table's).
    pub config: &'static str,
    pub traffic: Traffic,
}

/// Block names, as `--block` takes them.
pub fn names() -> &'static [&'static str] {
    &["path_selector", "verif_fifo"]
}

/// The fingerprint of a config in the design table: its TOML, hashed.
pub fn config_fingerprint(cfg: &Config) -> String {
    format!("{:032x}", fnv128(cfg.to_toml().as_bytes()))
}

/// The config name of the built design of `block` whose config is `cfg`.
fn built_config(block: &str, cfg: &Config, label: &str) -> Result<&'static str, VerifError> {
    let fp = config_fingerprint(cfg);
    let rows: Vec<_> = designs().iter().filter(|d| d.block == block).collect();
    if let Some(d) = rows.iter().find(|d| d.config_fingerprint == fp) {
        return Ok(d.config);
    }
    Err(VerifError::UnknownDesign {
        block: block.into(),
        config: label.into(),
        have: if rows.is_empty() {
            "none for this block".into()
        } else {
            rows.iter().map(|d| d.config).collect::<Vec<_>>().join(", ")
        },
    })
}

/// A session of `block` for `cfg` (named `label` in errors) with stimulus
/// from `seed`. `verif_fifo` has no config and ignores `cfg`.
pub fn session(block: &str, cfg: &Config, label: &str, seed: u64) -> Result<Session, VerifError> {
    match block {
        "verif_fifo" => Ok(Session {
            make_model: Box::new(|| Box::new(VerifFifo::new())),
            config: "test",
            traffic: Traffic::new(&verif_fifo::ports(), seed).idle(30).backpressure(40).random_resets(1),
        }),
        "path_selector" => {
            let p = PathSelectorParams::from_config(cfg).map_err(|e| VerifError::Config(e.to_string()))?;
            let config = built_config(block, cfg, label)?;
            Ok(Session {
                make_model: Box::new(move || Box::new(PathSelector::new(p))),
                config,
                traffic: path_selector_traffic(&p, seed),
            })
        }
        _ => Err(VerifError::UnknownBlock { block: block.into(), have: names().join(", ") }),
    }
}

/// Requests that stress the selector: half of them on connections 0 and 1
/// (back-to-back picks on one connection exercise the forwarding), one in
/// eight with no eligible path, weights from 0 to 255, one in twenty
/// clearing a random path's credit, and (small tables only) a reset in one
/// cycle of a thousand.
pub fn path_selector_traffic(p: &PathSelectorParams, seed: u64) -> Traffic {
    let (conns, paths) = (p.conns as u64, p.paths);
    // A reset restarts the clear sweep (one cycle per connection): mid-run
    // resets only where the sweep is short.
    let resets = if conns <= 256 { 1 } else { 0 };
    Traffic::new(&path_selector::ports(p), seed).idle(20).backpressure(30).random_resets(resets).source(
        "s_req_",
        move |rng, t| {
            let conn = if rng.percent(50) { rng.below(2.min(conns)) } else { rng.below(conns) };
            t.set_u64("conn", conn);
            let elig = if rng.percent(12) { 0 } else { rng.next_u64() };
            t.set_u64("elig", elig & ((1u64 << paths) - 1));
            let clr = if rng.percent(5) { 1u64 << rng.below(paths as u64) } else { 0 };
            t.set_u64("clr", clr);
            // Weights stay random bits (the field is left unset).
        },
    )
}
