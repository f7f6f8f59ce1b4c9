//! The blocks a lockstep session can run (`mrnic cosim --block NAME`):
//! for each, how to make its model for a config, what its random
//! transactions look like, and the functional coverage its monitor counts.
//! One file per block, at the block's name (`blocks/<block>.rs`).

use std::rc::Rc;

use mrnic_model::block::{port_index, Bits, Block, PortDef};
use mrnic_proto::Config;

use crate::coverage::Coverage;
use crate::designs::verif_fifo::{self, VerifFifo};
use crate::lockstep::ModelFactory;
use crate::rtl::designs;
use crate::stimulus::{Rng, Traffic, Txn};
use crate::verilate::fnv128;
use crate::VerifError;

pub mod conn_search;
pub mod conn_table;
pub mod cpl_engine;
pub mod cqe_merge;
pub mod csr;
pub mod dma_write_engine;
pub mod enable_gate;
pub mod mr_check;
pub mod msg_check;
pub mod path_selector;
pub mod path_telemetry;
pub mod probe_walk;
pub mod rate_hint;
pub mod recv_match;
pub mod rx_buffer;
pub mod rx_ctl;
pub mod rx_parser;
pub mod sack_gen;
pub mod ts_counter;

pub use path_selector::traffic as path_selector_traffic;

/// Everything a lockstep run of one block needs.
pub struct Session {
    pub make_model: ModelFactory,
    /// The config name the RTL was built for (the design table's).
    pub config: &'static str,
    pub traffic: Traffic,
    /// The block's output payloads are don't-care while their valid is low
    /// (the RTL shows its FIFO head, the model zero): compare them only
    /// with valid high ([`crate::Options::ignore_idle_payload`]). Valid
    /// and ready are compared every cycle regardless.
    pub idle_payload_dont_care: bool,
}

/// Blocks whose RTL drives output payloads straight from a FIFO head, so
/// they are don't-care while valid is low (the valid/ready contract says
/// no more). The others zero them, as their models do.
const IDLE_PAYLOAD_DONT_CARE: &[&str] = &["path_telemetry"];

/// Block names, as `--block` takes them.
pub fn names() -> &'static [&'static str] {
    &[
        "conn_search",
        "conn_table",
        "cpl_engine",
        "cqe_merge",
        "csr",
        "dma_write_engine",
        "enable_gate",
        "mr_check",
        "msg_check",
        "path_selector",
        "path_telemetry",
        "probe_walk",
        "rate_hint",
        "recv_match",
        "rx_buffer",
        "rx_ctl",
        "rx_parser",
        "sack_gen",
        "ts_counter",
        "verif_fifo",
    ]
}

/// The fingerprint of a config in the design table: its TOML, hashed.
pub fn config_fingerprint(cfg: &Config) -> String {
    format!("{:032x}", fnv128(cfg.to_toml().as_bytes()))
}

/// The config name of the built design of `block` whose config is `cfg`.
pub fn built_config(block: &str, cfg: &Config, label: &str) -> Result<&'static str, VerifError> {
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

/// Whether `block`'s idle output payloads are don't-care (see
/// [`Session::idle_payload_dont_care`]).
pub fn idle_payload_dont_care(block: &str) -> bool {
    IDLE_PAYLOAD_DONT_CARE.contains(&block)
}

/// A session of a pipeline block: its params from `cfg`, a model factory
/// and its traffic.
fn pipeline<P: Clone + 'static, E: std::fmt::Display, M: Block + 'static>(
    block: &str,
    cfg: &Config,
    label: &str,
    params: Result<P, E>,
    model: fn(P) -> M,
    traffic: fn(&P, u64) -> Traffic,
    seed: u64,
) -> Result<Session, VerifError> {
    let p = params.map_err(|e| VerifError::Config(e.to_string()))?;
    let config = built_config(block, cfg, label)?;
    let traffic = traffic(&p, seed);
    Ok(Session {
        make_model: Box::new(move || Box::new(model(p.clone()))),
        config,
        traffic,
        idle_payload_dont_care: idle_payload_dont_care(block),
    })
}

/// A session of `block` for `cfg` (named `label` in errors) with stimulus
/// from `seed`. `verif_fifo` has no config and ignores `cfg`.
pub fn session(block: &str, cfg: &Config, label: &str, seed: u64) -> Result<Session, VerifError> {
    // `pipe!(module, Params, Model, traffic)`: the block's model from its
    // params, as every pipeline block lays them out.
    macro_rules! pipe {
        ($m:ident, $params:ident, $model:ident, $traffic:expr) => {
            pipeline(
                block,
                cfg,
                label,
                mrnic_model::$m::$params::from_config(cfg),
                mrnic_model::$m::$model::new,
                $traffic,
                seed,
            )
        };
    }
    match block {
        "verif_fifo" => Ok(Session {
            make_model: Box::new(|| Box::new(VerifFifo::new())),
            config: "test",
            traffic: Traffic::new(&verif_fifo::ports(), seed).idle(30).backpressure(40).random_resets(1),
            idle_payload_dont_care: false,
        }),
        "path_selector" => pipe!(path_selector, PathSelectorParams, PathSelector, path_selector::traffic),
        "path_telemetry" => pipe!(path_telemetry, PathTelemetryParams, PathTelemetry, path_telemetry::traffic),
        "dma_write_engine" => {
            pipe!(dma_write_engine, DmaWriteEngineParams, DmaWriteEngine, |p, s| dma_write_engine::traffic(p, s).0)
        }
        "recv_match" => pipe!(recv_match, RecvMatchParams, RecvMatch, recv_match::traffic),
        "sack_gen" => pipe!(sack_gen, SackGenParams, SackGen, |p, s| sack_gen::traffic(p, s).0),
        "csr" => pipe!(csr, CsrParams, Csr, csr::traffic),
        "conn_table" => pipe!(conn_table, ConnTableParams, ConnTable, |p, s| conn_table::traffic(p, s).0),
        "cpl_engine" => pipe!(cpl_engine, CplEngineParams, CplEngine, |p, s| cpl_engine::traffic(p, s).0),
        "rx_parser" => pipe!(rx_parser, RxParserParams, RxParser, rx_parser::traffic),
        // The top's clocked glue blocks and its receive controller.
        "enable_gate" => pipe!(enable_gate, EnableGateParams, EnableGate, enable_gate::traffic),
        "ts_counter" => pipe!(ts_counter, TsCounterParams, TsCounter, ts_counter::traffic),
        "rate_hint" => pipe!(rate_hint, RateHintParams, RateHint, rate_hint::traffic),
        "cqe_merge" => pipe!(cqe_merge, CqeMergeParams, CqeMerge, cqe_merge::traffic),
        "rx_buffer" => pipe!(rx_buffer, RxBufferParams, RxBuffer, rx_buffer::traffic),
        "msg_check" => pipe!(msg_check, MsgCheckParams, MsgCheck, msg_check::traffic),
        "mr_check" => pipe!(mr_check, MrCheckParams, MrCheck, mr_check::traffic),
        "probe_walk" => pipe!(probe_walk, ProbeWalkParams, ProbeWalk, probe_walk::traffic),
        "conn_search" => pipe!(conn_search, ConnSearchParams, ConnSearch, conn_search::traffic),
        "rx_ctl" => pipe!(rx_ctl, RxCtlParams, RxCtl, rx_ctl::traffic),
        _ => Err(VerifError::UnknownBlock { block: block.into(), have: names().join(", ") }),
    }
}

/// Mid-run resets (per mille of cycles) for a block whose reset starts a
/// clear sweep of `sweep` cycles: one per mille only where the sweep is
/// short against the thousand cycles between resets; a longer sweep (a
/// `default` table, 65,536 entries and more) would be restarted before it
/// ends and no traffic would ever be taken.
pub(crate) fn sweep_resets(sweep: u64) -> u32 {
    u32::from(sweep <= 256)
}

/// Index of port `name`; the names come from the block's own port list,
/// so a miss is a bug in the monitor.
pub(crate) fn idx(ports: &[PortDef], name: &str) -> usize {
    port_index(ports, name).unwrap_or_else(|| panic!("no port `{name}`"))
}

/// A valid/ready handshake on (valid, ready) this cycle.
#[inline]
pub(crate) fn hs(v: &[Bits], valid: usize, ready: usize) -> bool {
    v[valid].bit(0) && v[ready].bit(0)
}

/// A source's generator that offers a transaction on `percent` of the
/// cycles the source is free (`fill` sets its fields), nothing on the rest.
pub(crate) fn at_rate(
    percent: u32,
    mut fill: impl FnMut(&mut Rng, &mut Txn) + 'static,
) -> impl FnMut(&mut Rng, &mut Txn) + 'static {
    move |rng, t| {
        if rng.percent(percent) {
            fill(rng, t);
        } else {
            t.skip();
        }
    }
}

/// Coverage of the answers on output channel `ch` by the code in its
/// field `field`: one bin per name in `names`, indexed by the code.
pub(crate) struct ByCode {
    ch: [usize; 3],
    bins: Vec<usize>,
}

impl ByCode {
    pub(crate) fn declare(ports: &[PortDef], ch: &str, field: &str, names: &[&str], c: &mut Coverage) -> ByCode {
        let i = |n: &str| idx(ports, &format!("{ch}_{n}"));
        ByCode {
            ch: [i("valid"), i("ready"), i(field)],
            bins: names.iter().map(|n| c.bin(format!("{ch}: {n}"))).collect(),
        }
    }

    pub(crate) fn observe(&mut self, v: &[Bits], in_reset: bool, c: &mut Coverage) {
        if !in_reset && hs(v, self.ch[0], self.ch[1]) {
            if let Some(&b) = self.bins.get(v[self.ch[2]].as_u64() as usize) {
                c.hit(b);
            }
        }
    }
}

/// A shared cell for state two generators (or a generator and a monitor)
/// of one traffic share: the traffic is single-threaded.
pub(crate) type Shared<T> = Rc<std::cell::RefCell<T>>;

pub(crate) fn shared<T>(t: T) -> Shared<T> {
    Rc::new(std::cell::RefCell::new(t))
}
