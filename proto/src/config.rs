//! The configuration: every size the protocol and the hardware need, read
//! from TOML and checked before anything is built from it.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

use crate::layouts::{common, data};
use crate::tables::path as pt;

/// Most paths per connection the path selector supports: its pick is a
/// comparison tree over this many credits, one decision per cycle.
pub const MAX_PATHS_PER_CONN: u32 = 32;
/// Planes a NIC port set can span (the 3-bit plane field of the path table).
pub const MAX_PLANES: u32 = 8;

/// PROBEs a path answers per `timers.rto_min_us`. A sender has at most one
/// PROBE outstanding per path and sends the next one on its answer (SUSPECT
/// recovery, `good_after_probes` in a row) or on a timeout (never sooner
/// than `rto_min`), so an honest path needs about `good_after_probes + 1`
/// per `rto_min`, twice that when the fabric duplicates; 8 leaves room and
/// bounds what a flood makes the NIC send (each answer is one SACK per
/// active stream). The receive state keeps the count in 4 bits.
pub const PROBE_ANSWERS_PER_RTO_MIN: u8 = 8;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Name used in generated file headers and reports.
    pub name: String,
    pub transport: Transport,
    pub hardware: Hardware,
    pub timers: Timers,
    pub cc: Cc,
}

/// Protocol sizes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Transport {
    /// Connection contexts (power of 2, at most 2^24: the dst_conn field).
    pub connections: u32,
    /// Paths per connection (power of 2, at most MAX_PATHS_PER_CONN).
    pub paths_per_conn: u32,
    /// Fabric planes (1..=8).
    pub planes: u32,
    /// Ordered streams per connection (1..=256: the stream_id field).
    pub streams_per_conn: u32,
    /// Packets in flight per path (power of 2, at most 256: the SACK bitmap).
    pub window: u32,
    /// Payload bytes per packet (power of 2, 1024..=8192).
    pub mtu: u32,
    /// UDP destination port.
    pub udp_port: u16,
}

/// Hardware sizes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hardware {
    /// AXI4-Stream and AXI4 data width in bits (power of 2, 64..=1024).
    pub datapath_bits: u32,
    /// Core clock the constraints and timers assume.
    pub clock_mhz: u32,
    /// Memory-region table entries (power of 2).
    pub mr_entries: u32,
    /// Posted receives tracked per (connection, stream) (power of 2).
    pub recv_queue_depth: u32,
    /// Messages in progress tracked per (connection, stream) (power of 2).
    pub msg_table_depth: u32,
    /// Read latency of the table memories in cycles (1 or 2).
    pub table_read_latency: u32,
    /// AXI4 address width (32..=64).
    pub axi_addr_bits: u32,
    /// AXI4 ID width.
    pub axi_id_bits: u32,
    /// Longest AXI4 write burst in beats (1..=256).
    pub axi_max_burst: u32,
    /// Write bursts in flight before the engine waits for responses.
    pub axi_outstanding: u32,
    /// Slots of the transmit side's retransmit ring per path (power of 2,
    /// at most `transport.window`): packets a path may have unacknowledged.
    /// A full ring makes the path ineligible for new data.
    #[serde(default = "default_tx_ring_depth")]
    pub tx_ring_depth: u32,
    /// Work requests a (connection, stream) may have posted and not yet
    /// completed (power of 2, at most 2^12: the ring slot's 16-bit wr_id
    /// holds the stream and this index).
    #[serde(default = "default_tx_wq_depth")]
    pub tx_wq_depth: u32,
}

fn default_tx_ring_depth() -> u32 {
    64
}

fn default_tx_wq_depth() -> u32 {
    8
}

/// Timers. Durations are in microseconds unless named otherwise.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Timers {
    /// Timestamp unit of tx_ts and echo_ts in nanoseconds.
    pub ts_unit_ns: u32,
    /// RTT assumed before the first sample.
    pub initial_rtt_us: u32,
    /// RTO floor and ceiling.
    pub rto_min_us: u32,
    pub rto_max_us: u32,
    /// RTOs in a row that make a path SUSPECT.
    pub suspect_after_rtos: u32,
    /// Clean probes that bring a SUSPECT path back to GOOD.
    pub good_after_probes: u32,
    /// Failed probes that make a SUSPECT path DEAD.
    pub dead_after_failures: u32,
    /// Interval between probes of a DEAD path (it may come back).
    pub dead_probe_interval_us: u32,
    /// A SACK at least every this many packets per path.
    pub sack_every_packets: u32,
    /// A SACK at least every this many bytes per path.
    pub sack_every_bytes: u32,
}

/// Congestion control constants.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cc {
    /// Line rate of the port in Gbit/s.
    pub line_rate_gbps: u32,
    /// Initial, least and largest per-path congestion window in bytes.
    pub init_cwnd_bytes: u32,
    pub min_cwnd_bytes: u32,
    pub max_cwnd_bytes: u32,
    /// Largest connection window in bytes.
    pub conn_max_cwnd_bytes: u64,
    /// EWMA gains as right shifts: srtt 1/8, rttvar 1/4, ecn 1/16.
    pub srtt_shift: u32,
    pub rttvar_shift: u32,
    pub ecn_shift: u32,
}

/// One thing wrong with a config: the dotted field name and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigIssue {
    pub field: &'static str,
    pub why: String,
}

impl fmt::Display for ConfigIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.why)
    }
}

/// Why a config could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("{path}: {message}")]
    Parse { path: String, message: String },
    #[error("{path}: {} problem(s):\n{}", .issues.len(), .issues.iter().map(|i| format!("  {i}")).collect::<Vec<_>>().join("\n"))]
    Invalid { path: String, issues: Vec<ConfigIssue> },
    #[error("unknown built-in config '{0}' (built in: small, default)")]
    UnknownBuiltin(String),
}

pub const SMALL_TOML: &str = include_str!("../configs/small.toml");
pub const DEFAULT_TOML: &str = include_str!("../configs/default.toml");

impl Config {
    /// Parses and checks TOML text. `origin` names it in errors.
    pub fn from_toml(text: &str, origin: &str) -> Result<Config, ConfigError> {
        let cfg: Config = toml::from_str(text)
            .map_err(|e| ConfigError::Parse { path: origin.to_string(), message: e.to_string() })?;
        let issues = cfg.check();
        if issues.is_empty() {
            Ok(cfg)
        } else {
            Err(ConfigError::Invalid { path: origin.to_string(), issues })
        }
    }

    /// A shipped config by name (`small`, `default`).
    pub fn builtin(name: &str) -> Result<Config, ConfigError> {
        match name {
            "small" => Config::from_toml(SMALL_TOML, "built-in small"),
            "default" => Config::from_toml(DEFAULT_TOML, "built-in default"),
            _ => Err(ConfigError::UnknownBuiltin(name.to_string())),
        }
    }

    /// A config file, or a built-in name when no such file exists.
    pub fn load(path_or_name: &str) -> Result<Config, ConfigError> {
        let p = Path::new(path_or_name);
        if !p.exists() && !path_or_name.contains(['/', '.']) {
            return Config::builtin(path_or_name);
        }
        let text = std::fs::read_to_string(p)
            .map_err(|source| ConfigError::Read { path: path_or_name.to_string(), source })?;
        Config::from_toml(&text, path_or_name)
    }

    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a config always serializes")
    }

    /// Every rule a config must meet, each failure naming its field.
    pub fn check(&self) -> Vec<ConfigIssue> {
        let mut c = Checker(Vec::new());
        let t = &self.transport;
        let h = &self.hardware;
        let tm = &self.timers;
        let cc = &self.cc;
        if self.name.is_empty() || !self.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            // The name lands in file names and Verilog comments.
            c.bad("name", format!("{:?} must be non-empty ASCII letters, digits, '-' or '_'", self.name));
        }
        c.range(
            "transport.connections",
            t.connections as u64,
            1,
            common::DST_CONN.max() + 1,
            true,
            "indexes the connection table; dst_conn is 24 bits",
        );
        c.range(
            "transport.paths_per_conn",
            t.paths_per_conn as u64,
            1,
            MAX_PATHS_PER_CONN as u64,
            true,
            "the path selector picks among at most 32 paths per cycle",
        );
        c.range(
            "transport.planes",
            t.planes as u64,
            1,
            MAX_PLANES as u64,
            false,
            "the path table's plane field is 3 bits",
        );
        c.range(
            "transport.streams_per_conn",
            t.streams_per_conn as u64,
            1,
            data::STREAM_ID.max() + 1,
            true,
            "stream_id is 8 bits",
        );
        c.range("transport.window", t.window as u64, 1, 256, true, "the SACK bitmap holds 256 packets per path");
        c.range("transport.mtu", t.mtu as u64, 1024, 8192, true, "payload MTU");
        if t.udp_port == 0 {
            c.bad("transport.udp_port", "0 is not a usable UDP port".into());
        }
        c.range("hardware.datapath_bits", h.datapath_bits as u64, 64, 1024, true, "AXI data widths");
        if h.datapath_bits >= 64 && t.mtu % (h.datapath_bits / 8) != 0 {
            c.bad("transport.mtu", format!("{} is not a whole number of {}-bit beats", t.mtu, h.datapath_bits));
        }
        c.range("hardware.clock_mhz", h.clock_mhz as u64, 1, 1000, false, "core clock");
        c.range("hardware.mr_entries", h.mr_entries as u64, 1, 1 << 20, true, "memory-region table depth");
        c.range("hardware.recv_queue_depth", h.recv_queue_depth as u64, 1, 1 << 16, true, "posted receives per stream");
        c.range("hardware.msg_table_depth", h.msg_table_depth as u64, 1, 1 << 16, true, "messages per stream");
        c.range("hardware.table_read_latency", h.table_read_latency as u64, 1, 2, false, "block RAM read latency");
        c.range("hardware.axi_addr_bits", h.axi_addr_bits as u64, 32, 64, false, "AXI4 address width");
        c.range("hardware.axi_id_bits", h.axi_id_bits as u64, 1, 16, false, "AXI4 ID width");
        c.range("hardware.axi_max_burst", h.axi_max_burst as u64, 1, 256, true, "AXI4 INCR bursts are 1..=256 beats");
        if h.datapath_bits >= 64 && (h.axi_max_burst as u64) * (h.datapath_bits as u64 / 8) > 4096 {
            c.bad(
                "hardware.axi_max_burst",
                format!(
                    "{} beats of {} bytes exceed the 4 KiB an AXI burst may span",
                    h.axi_max_burst,
                    h.datapath_bits / 8
                ),
            );
        }
        c.range(
            "hardware.axi_outstanding",
            h.axi_outstanding as u64,
            1,
            1 << h.axi_id_bits.min(16),
            false,
            "needs an ID each",
        );
        c.range(
            "hardware.tx_ring_depth",
            h.tx_ring_depth as u64,
            2,
            t.window as u64,
            true,
            "retransmit slots per path",
        );
        c.range("hardware.tx_wq_depth", h.tx_wq_depth as u64, 1, 1 << 12, true, "work requests per stream");
        let table_entries = t.connections as u64 * t.paths_per_conn as u64;
        if table_entries > 1 << 20 {
            c.bad(
                "transport.paths_per_conn",
                format!("connections x paths = {table_entries} entries: the path table is limited to 2^20"),
            );
        }
        c.range("timers.ts_unit_ns", tm.ts_unit_ns as u64, 1, 1024, false, "timestamp unit");
        c.range("timers.initial_rtt_us", tm.initial_rtt_us as u64, 1, 1_000_000, false, "first RTT guess");
        c.range("timers.rto_min_us", tm.rto_min_us as u64, 1, 10_000_000, false, "RTO floor");
        if tm.rto_max_us < tm.rto_min_us {
            c.bad("timers.rto_max_us", format!("{} is below rto_min_us {}", tm.rto_max_us, tm.rto_min_us));
        }
        let ts_span_us = (1u64 << 16) * tm.ts_unit_ns as u64 / 1000;
        if (tm.rto_max_us as u64) >= ts_span_us {
            c.bad(
                "timers.rto_max_us",
                format!(
                    "{} us reaches the 16-bit timestamp's wrap ({ts_span_us} us): RTT samples would alias",
                    tm.rto_max_us
                ),
            );
        }
        c.range(
            "timers.suspect_after_rtos",
            tm.suspect_after_rtos as u64,
            1,
            pt::RETRIES.max(),
            false,
            "retries counter",
        );
        c.range("timers.good_after_probes", tm.good_after_probes as u64, 1, pt::RETRIES.max(), false, "probe counter");
        c.range(
            "timers.dead_after_failures",
            tm.dead_after_failures as u64,
            1,
            pt::RETRIES.max(),
            false,
            "probe counter",
        );
        c.range(
            "timers.dead_probe_interval_us",
            tm.dead_probe_interval_us as u64,
            1,
            100_000_000,
            false,
            "probe period",
        );
        c.range(
            "timers.sack_every_packets",
            tm.sack_every_packets as u64,
            1,
            t.window as u64,
            false,
            "at most a window",
        );
        c.range("timers.sack_every_bytes", tm.sack_every_bytes as u64, 1, 1 << 24, false, "SACK byte interval");
        c.range("cc.line_rate_gbps", cc.line_rate_gbps as u64, 1, 1600, false, "port line rate");
        let cwnd_max = pt::CWND.max();
        c.range(
            "cc.max_cwnd_bytes",
            cc.max_cwnd_bytes as u64,
            t.mtu as u64,
            cwnd_max,
            false,
            "the path table's cwnd is 20 bits and must hold an MTU",
        );
        c.range(
            "cc.min_cwnd_bytes",
            cc.min_cwnd_bytes as u64,
            t.mtu as u64,
            cc.max_cwnd_bytes as u64,
            false,
            "at least one MTU, at most max_cwnd_bytes",
        );
        c.range(
            "cc.init_cwnd_bytes",
            cc.init_cwnd_bytes as u64,
            cc.min_cwnd_bytes as u64,
            cc.max_cwnd_bytes as u64,
            false,
            "between min and max cwnd",
        );
        if (cc.max_cwnd_bytes as u64).div_ceil(t.mtu as u64) > t.window as u64 {
            c.bad(
                "cc.max_cwnd_bytes",
                format!("{} bytes is more than window ({}) packets of {} bytes", cc.max_cwnd_bytes, t.window, t.mtu),
            );
        }
        if cc.conn_max_cwnd_bytes < cc.max_cwnd_bytes as u64 {
            c.bad("cc.conn_max_cwnd_bytes", "below one path's max_cwnd_bytes".into());
        }
        c.range("cc.srtt_shift", cc.srtt_shift as u64, 1, 8, false, "EWMA gain 1/2^shift");
        c.range("cc.rttvar_shift", cc.rttvar_shift as u64, 1, 8, false, "EWMA gain 1/2^shift");
        c.range("cc.ecn_shift", cc.ecn_shift as u64, 1, 8, false, "EWMA gain 1/2^shift");
        c.0
    }

    /// log2 of a power-of-2 size, as an index width (at least 1 bit, so a
    /// one-entry table still has an address port).
    pub fn index_bits(entries: u32) -> u32 {
        entries.next_power_of_two().trailing_zeros().max(1)
    }

    /// Timer ticks of `ts_unit_ns` in one microsecond's worth of `us`.
    pub fn us_to_ts(&self, us: u32) -> u64 {
        us as u64 * 1000 / self.timers.ts_unit_ns as u64
    }

    /// Clock cycles per timestamp unit (the hardware's timestamp prescaler).
    pub fn cycles_per_ts(&self) -> u64 {
        (self.hardware.clock_mhz as u64 * self.timers.ts_unit_ns as u64).div_ceil(1000).max(1)
    }
}

struct Checker(Vec<ConfigIssue>);

impl Checker {
    fn bad(&mut self, field: &'static str, why: String) {
        self.0.push(ConfigIssue { field, why });
    }

    fn range(&mut self, field: &'static str, v: u64, lo: u64, hi: u64, pow2: bool, why: &str) {
        if v < lo || v > hi {
            self.bad(field, format!("{v} is outside {lo}..={hi} ({why})"));
        } else if pow2 && !v.is_power_of_two() {
            self.bad(field, format!("{v} is not a power of 2 ({why})"));
        }
    }
}
