//! `rx_ctl`: the receive controller, the sequencer that ties the receive
//! side's parts together, one packet at a time (architecture.md,
//! `mrnic_core`, "The receive controller"), one of `mrnic_core`'s glue
//! blocks. Every channel to a part mirrors that part's own `ports()` (its
//! fields taken from the part's port list), so the netlist wires them by
//! name.
//!
//! # Function
//! A connection is opened on `s_open_*` (conn, paths, the first psn the
//! peer sends): cpl_engine `s_open` (`m_copen`), msg_check `s_open`
//! (`m_mopen`), then one sack_gen OPEN beat per path (`m_pkt`, generation
//! 0). An open is taken only between packets.
//!
//! Each header rx_buffer releases (`s_hdr_*`) is handled to its end before
//! the next is taken:
//! 1. A NACK with code NO_CONN goes to conn_search (`m_nc`): it names the
//!    peer's id, which conn_table cannot look up. Anything else is looked up
//!    in conn_table (`m_lk`, op from op_map on `m_opcode`; answer on
//!    `s_lkr`). Not `ok`: conn_table has counted and, for DATA on a bad
//!    path, sent a BAD_HDR NACK (`s_tnack`), which goes on to tx_engine's
//!    answer channel (`m_cnack`) with the connection the lookup found; a
//!    NO_CONN NACK of conn_table (DATA or a PROBE for no connection) goes
//!    there `direct`, back to the packet's IPv4 and Ethernet sources
//!    (`dst_ip`, `dst_mac`: no connection names them).
//! 2. SACK or NACK that passed: tx_engine's `s_sack` / `s_nack` (`m_sack`
//!    / `m_nack`) from the raw header (proto's SACK and NACK layouts), with
//!    `dport` = the frame's UDP destination port (the entropy of the path
//!    it answers, which tx_engine compares with the path's port).
//!    conn_search's resolved NACKs (`s_found`) share `m_nack`, first.
//! 3. PROBE that passed: probe_walk (`m_probe`); its beats (`s_walk`) go
//!    to sack_gen on `m_pkt` until probe_walk is ready again.
//! 4. DATA that passed: msg_check (`m_chk`, completed_msn of the stream
//!    from the lookup's `msns`); if OK, a WRITE with payload goes to
//!    mr_check (`m_mr`), a SEND to recv_match (`m_lookup`) and, on a hit
//!    with payload, to mr_check with the receive's lkey and `recv` = 1
//!    (the region must still allow receives). Then one
//!    sack_gen beat (`m_pkt`, `bad` = any refusal). `L + 1` cycles after
//!    its handshake sack_gen's pulses (`tap_stale_gen`, `tap_psn_window`,
//!    `tap_duplicate`) say whether it answered; if none did and the packet
//!    was refused, the controller's own NACK leaves on `m_cnack` (BAD_HDR
//!    for msg_check, ACCESS for mr_check, recv_match's code) with its
//!    counter (`stat_rx_bad_hdr`, `stat_rx_access`; RNR has none). If
//!    sack_gen's `m_new` came (`s_gnew`, always taken): msg_check `s_acc`
//!    (`m_acc`) and cpl_engine `s_new` (`m_new`, with a fresh tag), then
//!    dma_write_engine `s_req` (`m_req`) with the payload command
//!    (`m_pay`, drop = 0 when there is payload: rx_buffer streams it to the
//!    engine's `s_axis`).
//! 5. The SACK hold: from the DATA beat on, sack_gen's SACKs (`s_gsack`)
//!    are held; a duplicate's or a refused packet's goes at once; a new
//!    packet's waits until cpl_engine is `idle` (its DMA completion
//!    counted and drained), then leaves with the stream's completed_msn as
//!    cpl_engine's `m_st` last published it (`tap_st`). SACKs of PROBEs and
//!    FLUSHes are never held. A SACK already presented to tx_engine (an
//!    earlier beat's, stalled) stays presented through the hold, and the
//!    release waits until no SACK is presented, so the replaced
//!    completed_msn starts on a SACK not yet shown.
//! 6. Ack clocking: after a new packet with ACKREQ, one FLUSH beat per
//!    other path of the connection, in path order, with the packet's
//!    stream and that completed_msn, sent after the packet's own SACK left
//!    (so they carry the counted value; the reference sends them in the
//!    same order, at the same time).
//!
//! Every header ends with its payload command (`m_pay`: drop = 1 unless
//! placed). sack_gen's NACKs (`s_gnack`) go to `m_cnack` at once, before
//! the controller's own. conn_search's and conn_table's `stat_ack_no_conn`
//! are ORed into the one counter pulse (`tap_ack_no_conn_*` to
//! `stat_ack_no_conn`).
//!
//! A DATA beat waits until `L + 1` cycles have passed since the last beat
//! to sack_gen and its SACK FIFO is empty, so every SACK held belongs to
//! the packet and every pulse seen in the verdict window is its own.
//!
//! # Timing
//! Outputs are registers, except the pass-through channels, which are
//! muxes selected by registers: `m_pkt` from `s_walk` during a PROBE walk,
//! `m_csack` from `s_gsack` (its `completed_msn` replaced on release, held
//! by a register), `m_cnack` from `s_gnack` and `m_nack` from `s_found`
//! before the controller's own entries, unless the own entry was presented
//! and stalled the cycle before (`shown`: an entry on a channel stays there
//! until taken, as AXI requires; `hdl/src/rx_ctl.rs` proves it); every
//! ready toward a part is such a mux of the downstream ready, never a
//! function of the same channel's valid. The pass-through channels are not
//! gated by reset: the parts reset at the same edge. Each step offers its request in the cycle after the previous
//! answer, so with every part answering at its documented latency a DATA
//! WRITE with payload, from its header handshake at 0, has its lookup
//! offered at 1 (answered `L + 2`), msg_check at `L + 3` (answered
//! `2L + 4`), mr_check at `2L + 5` (answered `3L + 6`; a SEND with
//! payload asks recv_match first and mr_check after its answer, so its
//! later steps come one recv_match round trip later), its sack_gen beat at `3L + 8`, the verdict at
//! `4L + 9`, cpl_engine's `s_new` and msg_check's `s_acc` at `4L + 10` and
//! the placement request with its payload command at `4L + 11` (15 / 19),
//! plus up to `L + 1` for a beat that must wait on the previous one; then
//! the payload, the AXI write response and cpl_engine's drain before the
//! SACK leaves and the next header is taken. A SACK or NACK is offered to
//! tx_engine `L + 3` cycles after its header, a PROBE to probe_walk
//! likewise; a NO_CONN NACK to conn_search after 1. One packet at a time: throughput is
//! one packet per its control time plus, for a placed packet, its payload
//! beats and the host's write response (architecture.md, "Cost of one
//! packet at a time").
//!
//! # Memories
//! None: the packet in hand and a tag counter in registers.

use mrnic_proto::layouts::{common, data, nack, probe, sack};
use mrnic_proto::{Bitmap256, Config};

use crate::block::{port_index, Bits, Block, Dir, PortDef};
use crate::netlist::slice_bits;

/// Module name, shared with the Verilog.
pub const NAME: &str = "rx_ctl";

/// Transport opcodes the controller routes by.
pub const OPC_SEND: u64 = 2;
pub const OPC_SEND_IMM: u64 = 3;
pub const OPC_WRITE_IMM: u64 = 1;
pub const OPC_SACK: u64 = 8;
pub const OPC_NACK: u64 = 9;
pub const OPC_PROBE: u64 = 10;
/// NACK codes.
pub const NACK_RNR: u64 = 1;
pub const NACK_ACCESS: u64 = 2;
pub const NACK_NO_CONN: u64 = 3;
pub const NACK_BAD_HDR: u64 = 4;
/// IPv4 ECN CE.
pub const ECN_CE: u64 = 3;

/// A config the block cannot be built for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("rx_ctl: {field} = {value}: {why}")]
pub struct ParamError {
    /// The config field at fault (dotted, as in the TOML).
    pub field: &'static str,
    pub value: u64,
    pub why: String,
}

/// One channel to or from a part: `(our prefix, the part's ports, the
/// part's prefix, we consume it)`. Our ports are the part's with the
/// direction turned.
type Mirror = (&'static str, Vec<PortDef>, &'static str, bool);

/// Sizes of one `rx_ctl`, and the parts' port lists its channels mirror.
#[derive(Debug, Clone)]
pub struct RxCtlParams {
    pub conn_bits: u32,
    pub stream_bits: u32,
    pub streams: u32,
    pub read_latency: u32,
    mirrors: Vec<Mirror>,
}

impl RxCtlParams {
    pub fn from_config(cfg: &Config) -> Result<RxCtlParams, ParamError> {
        // A part's sizes, or the config fault that part found, named after it.
        macro_rules! part {
            ($m:ident, $params:ident) => {
                crate::$m::$params::from_config(cfg).map_err(|e| ParamError {
                    field: e.field,
                    value: e.value,
                    why: format!("{}: {}", stringify!($m), e.why),
                })?
            };
        }
        use crate as m;
        let rxb = m::rx_buffer::ports(&part!(rx_buffer, RxBufferParams));
        let ct = part!(conn_table, ConnTableParams);
        let ctp = m::conn_table::ports(&ct);
        let sg = m::sack_gen::ports(&part!(sack_gen, SackGenParams));
        let mc = m::msg_check::ports(&part!(msg_check, MsgCheckParams));
        let mr = m::mr_check::ports(&part!(mr_check, MrCheckParams));
        let pw = m::probe_walk::ports(&part!(probe_walk, ProbeWalkParams));
        let cs = m::conn_search::ports(&part!(conn_search, ConnSearchParams));
        let rm = m::recv_match::ports(&part!(recv_match, RecvMatchParams));
        let dma = m::dma_write_engine::ports(&part!(dma_write_engine, DmaWriteEngineParams));
        let cpl = m::cpl_engine::ports(&part!(cpl_engine, CplEngineParams));
        let tx = m::tx_engine::ports(&part!(tx_engine, TxEngineParams));
        let mirrors: Vec<Mirror> = vec![
            ("s_hdr", rxb.clone(), "m_hdr", true),
            ("m_pay", rxb, "s_pay", false),
            ("m_lk", ctp.clone(), "s_lk", false),
            ("s_lkr", ctp.clone(), "m_lk", true),
            ("s_tnack", ctp, "m_nack", true),
            ("m_nc", cs.clone(), "s_nc", false),
            ("s_found", cs, "m_nack", true),
            ("m_probe", pw.clone(), "s_probe", false),
            ("s_walk", pw, "m_pkt", true),
            ("m_chk", mc.clone(), "s_chk", false),
            ("s_chkr", mc.clone(), "m_chk", true),
            ("m_acc", mc.clone(), "s_acc", false),
            ("m_mopen", mc, "s_open", false),
            ("m_mr", mr.clone(), "s_chk", false),
            ("s_mrr", mr, "m_chk", true),
            ("m_lookup", rm.clone(), "s_lookup", false),
            ("s_match", rm, "m_match", true),
            ("m_pkt", sg.clone(), "s_pkt", false),
            ("s_gsack", sg.clone(), "m_sack", true),
            ("s_gnack", sg.clone(), "m_nack", true),
            ("s_gnew", sg, "m_new", true),
            ("m_req", dma, "s_req", false),
            ("m_new", cpl.clone(), "s_new", false),
            ("m_copen", cpl, "s_open", false),
            ("m_sack", tx.clone(), "s_sack", false),
            ("m_nack", tx.clone(), "s_nack", false),
            ("m_csack", tx.clone(), "s_csack", false),
            ("m_cnack", tx, "s_cnack", false),
        ];
        Ok(RxCtlParams {
            conn_bits: ct.conn_bits,
            stream_bits: ct.stream_bits,
            streams: ct.streams,
            read_latency: cfg.hardware.table_read_latency,
            mirrors,
        })
    }
}

/// The fields of `prefix`'s channel in `ports` (valid and ready left out):
/// (field name, width, comment).
pub fn channel_fields(ports: &[PortDef], prefix: &str) -> Vec<(String, u32, String)> {
    ports
        .iter()
        .filter_map(|p| {
            let f = p.name.strip_prefix(prefix)?.strip_prefix('_')?;
            (f != "valid" && f != "ready").then(|| (f.to_string(), p.width, p.comment.clone()))
        })
        .collect()
}

/// Fields of a part's channel the controller never reads, left off its
/// ports so that the RTL has no input it ignores: conn_table's answer
/// carries the op, the hit and the peer's address for its own checks;
/// sack_gen's `m_new` is only the beat's verdict here (cpl_engine's
/// `s_new` takes the message from the header in hand); the header's flags
/// are read from its raw bytes (ACKREQ).
fn unread(mine: &str, field: &str) -> bool {
    mine == "s_gnew"
        || (mine == "s_lkr" && ["op", "hit", "remote_addr"].contains(&field))
        || (mine == "s_hdr" && field == "flags")
}

/// The ports, in declaration order.
pub fn ports(p: &RxCtlParams) -> Vec<PortDef> {
    let mut v = vec![PortDef::input("rst", 1, "Clock and reset", "synchronous reset, active high")];
    v.push(PortDef::input("s_open_valid", 1, "Connection opened", "a connection's receive side is opened"));
    v.push(PortDef::output("s_open_ready", 1, "Connection opened", "taken this cycle if valid"));
    v.push(PortDef::input("s_open_conn", p.conn_bits, "Connection opened", "connection slot"));
    v.push(PortDef::input("s_open_paths", 8, "Connection opened", "paths of the connection"));
    v.push(PortDef::input("s_open_psn", 24, "Connection opened", "first psn the peer sends on every path"));
    for (mine, theirs, prefix, input) in &p.mirrors {
        let group = "Part channel";
        let (data, ready) = if *input { (Dir::In, Dir::Out) } else { (Dir::Out, Dir::In) };
        let mk = |name: String, dir, width, comment: String| PortDef { name, dir, width, group, comment };
        v.push(mk(format!("{mine}_valid"), data, 1, format!("{prefix}_valid of the part")));
        v.push(mk(format!("{mine}_ready"), ready, 1, format!("{prefix}_ready of the part")));
        for (f, w, c) in channel_fields(theirs, prefix) {
            if *mine == "m_lk" && f == "op" {
                // op_map makes conn_table's op from `m_opcode`.
                continue;
            }
            if unread(mine, &f) {
                continue;
            }
            v.push(mk(format!("{mine}_{f}"), data, w, c));
        }
    }
    v.push(PortDef::output("m_opcode", 4, "Part channel", "the looked-up header's opcode (op_map opcode)"));
    const T: &str = "Observed";
    v.push(PortDef::input("cpl_idle", 1, T, "cpl_engine idle"));
    for (n, w) in [("valid", 1), ("ready", 1), ("conn", p.conn_bits), ("stream", p.stream_bits), ("clear", 1)] {
        v.push(PortDef::input(format!("tap_st_{n}"), w, T, format!("cpl_engine m_st_{n}")));
    }
    v.push(PortDef::input("tap_st_completed_msn", 24, T, "cpl_engine m_st_completed_msn"));
    for n in ["stale_gen", "psn_window", "duplicate"] {
        v.push(PortDef::input(format!("tap_{n}"), 1, T, format!("sack_gen stat_{n}: it answered the beat")));
    }
    v.push(PortDef::input("tap_ack_no_conn_table", 1, T, "conn_table stat_ack_no_conn"));
    v.push(PortDef::input("tap_ack_no_conn_search", 1, T, "conn_search stat_ack_no_conn"));
    const C: &str = "Counters";
    v.push(PortDef::output("stat_rx_bad_hdr", 1, C, "pulse: the controller's BAD_HDR NACK (msg_check, recv_match)"));
    v.push(PortDef::output("stat_rx_access", 1, C, "pulse: the controller's ACCESS NACK (mr_check, recv_match)"));
    v.push(PortDef::output("stat_ack_no_conn", 1, C, "pulse: conn_table's or conn_search's ack_no_conn"));
    v
}

/// One channel's ports by index.
#[derive(Debug, Clone)]
struct Chan {
    valid: usize,
    ready: usize,
    names: Vec<String>,
    ids: Vec<usize>,
}

impl Chan {
    fn new(ports: &[PortDef], prefix: &str) -> Chan {
        let at = |n: &str| port_index(ports, n).unwrap_or_else(|| panic!("rx_ctl: no port {n}"));
        let names: Vec<String> = channel_fields(ports, prefix).into_iter().map(|(f, _, _)| f).collect();
        Chan {
            valid: at(&format!("{prefix}_valid")),
            ready: at(&format!("{prefix}_ready")),
            ids: names.iter().map(|f| at(&format!("{prefix}_{f}"))).collect(),
            names,
        }
    }

    fn field(&self, name: &str) -> usize {
        let k = self.names.iter().position(|n| n == name);
        self.ids[k.unwrap_or_else(|| panic!("rx_ctl: no field {name}"))]
    }
}

/// An output channel's registered entry: the values of its fields.
#[derive(Debug, Clone)]
struct Offer {
    chan: Chan,
    vals: Vec<Bits>,
    on: bool,
    /// A part's channel passes through first: taken only when it is idle.
    shared: bool,
}

impl Offer {
    fn new(ports: &[PortDef], prefix: &str) -> Offer {
        let chan = Chan::new(ports, prefix);
        let vals = chan.ids.iter().map(|&i| Bits::zero(ports[i].width)).collect();
        let shared = ["m_pkt", "m_cnack", "m_nack"].contains(&prefix);
        Offer { chan, vals, on: false, shared }
    }

    /// Offers an entry: every field 0 but `set`.
    fn offer(&mut self, ports: &[PortDef], set: &[(&str, u64)]) {
        for (k, &i) in self.chan.ids.iter().enumerate() {
            self.vals[k] = Bits::zero(ports[i].width);
        }
        for (n, x) in set {
            self.put(ports, n, Bits::from_u64(64, *x));
        }
        self.on = true;
    }

    fn put(&mut self, ports: &[PortDef], name: &str, mut v: Bits) {
        let k = self.chan.names.iter().position(|n| n == name).unwrap_or_else(|| panic!("rx_ctl: no field {name}"));
        v.truncate(ports[self.chan.ids[k]].width);
        self.vals[k] = v;
    }

    fn drive(&self, outputs: &mut [Bits]) {
        outputs[self.chan.valid].set_u64(1, self.on as u64);
        for (k, &i) in self.chan.ids.iter().enumerate() {
            outputs[i].clone_from(&self.vals[k]);
        }
    }

    /// Whether the entry was taken this cycle (and clears it).
    fn fired(&mut self, inputs: &[Bits]) -> bool {
        let f = self.on && inputs[self.chan.ready].bit(0);
        if f {
            self.on = false;
        }
        f
    }
}

/// The header in hand.
#[derive(Debug, Clone, Default)]
struct Hdr {
    opcode: u64,
    payload_len: u64,
    dst_conn: u64,
    path_id: u64,
    psn: u64,
    gen: u64,
    stream: u64,
    msn: u64,
    msg_len: u64,
    rkey: u64,
    addr: u64,
    tx_ts: u64,
    imm: u64,
    ce: bool,
    sport: u64,
    dport: u64,
    ip_src: u64,
    eth_src: u64,
    plane: u64,
    raw: Vec<u8>,
}

impl Hdr {
    fn send(&self) -> bool {
        self.opcode == OPC_SEND || self.opcode == OPC_SEND_IMM
    }

    fn imm_valid(&self) -> bool {
        self.opcode == OPC_WRITE_IMM || self.opcode == OPC_SEND_IMM
    }

    fn raw(&self, f: &mrnic_proto::field::Field) -> u64 {
        f.get(&self.raw)
    }
}

/// The lookup's answer.
#[derive(Debug, Clone, Default)]
struct Lk {
    conn: u64,
    remote_id: u64,
    paths: u64,
    active: Bits,
    msns: Bits,
}

/// Where the controller is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    Idle,
    /// cpl_engine's and msg_check's opens, then the OPEN beat of each path.
    Open(u64),
    Lookup,
    Nc,
    /// A SACK or NACK to tx_engine.
    Ack,
    Probe,
    Walk,
    MsgChk,
    MrChk,
    Match,
    Beat,
    /// Cycles left until the verdict.
    Verdict(u32),
    Accept,
    Place,
    Hold,
    Release,
    /// The next path to FLUSH.
    Flush(u64),
    /// The payload command (drop), then Idle.
    Pay,
}

/// The cycle model.
#[derive(Debug, Clone)]
pub struct RxCtl {
    p: RxCtlParams,
    ports: std::rc::Rc<[PortDef]>,
    ix: Ix,
    st: St,
    h: Hdr,
    lk: Lk,
    /// Open being applied: conn, paths, psn.
    open: (u64, u64, u64),
    /// The refusal's NACK code (0: none), the placement's address and
    /// key (the WRITE's rkey, or the SEND's receive's lkey).
    code: u64,
    place_addr: u64,
    place_key: u64,
    /// sack_gen answered the beat; its m_new came; a SACK came for it.
    answered: bool,
    new: bool,
    held: bool,
    /// The stream's completed_msn as last published.
    cmsn: u64,
    /// sack_gen's SACKs are held; the next one's completed_msn replaced.
    hold: bool,
    replace: Option<u64>,
    /// Cycles since the last beat to sack_gen (saturating).
    since_pkt: u32,
    tag: u64,
    stat_bad_hdr: bool,
    stat_access: bool,
    /// Entries presented and stalled last cycle, which must stay on their
    /// channel until taken (AXI): the own entries of `m_pkt`, `m_cnack` and
    /// `m_nack` (a part's entry does not overtake them), and a SACK on
    /// `m_csack` (the SACK hold does not withdraw it, nor does the
    /// completed_msn replacement change it).
    shown: Shown,
    o: Offers,
}

/// See [`RxCtl::shown`].
#[derive(Debug, Clone, Copy, Default)]
struct Shown {
    pkt: bool,
    cnack: bool,
    nack: bool,
    csack: bool,
}

/// Every registered output channel.
#[derive(Debug, Clone)]
struct Offers {
    pay: Offer,
    lk: Offer,
    nc: Offer,
    probe: Offer,
    chk: Offer,
    acc: Offer,
    mopen: Offer,
    mr: Offer,
    lookup: Offer,
    pkt: Offer,
    req: Offer,
    new: Offer,
    copen: Offer,
    sack: Offer,
    nack: Offer,
    cnack: Offer,
}

impl Offers {
    fn all(&mut self) -> [&mut Offer; 16] {
        [
            &mut self.pay,
            &mut self.lk,
            &mut self.nc,
            &mut self.probe,
            &mut self.chk,
            &mut self.acc,
            &mut self.mopen,
            &mut self.mr,
            &mut self.lookup,
            &mut self.pkt,
            &mut self.req,
            &mut self.new,
            &mut self.copen,
            &mut self.sack,
            &mut self.nack,
            &mut self.cnack,
        ]
    }
}

/// Input channels and single ports by index.
#[derive(Debug, Clone)]
struct Ix {
    hdr: Chan,
    lkr: Chan,
    tnack: Chan,
    found: Chan,
    walk: Chan,
    chkr: Chan,
    mrr: Chan,
    matchr: Chan,
    gsack: Chan,
    gnack: Chan,
    gnew: Chan,
    open: Chan,
    csack: Chan,
    rst: usize,
    opcode: usize,
    idle: usize,
    st: [usize; 6],
    taps: [usize; 3],
    no_conn: [usize; 2],
    stats: [usize; 3],
}

impl RxCtl {
    pub fn new(p: RxCtlParams) -> RxCtl {
        let ports = ports(&p);
        let at = |n: &str| port_index(&ports, n).unwrap_or_else(|| panic!("rx_ctl: no port {n}"));
        let c = |n: &str| Chan::new(&ports, n);
        let ix = Ix {
            hdr: c("s_hdr"),
            lkr: c("s_lkr"),
            tnack: c("s_tnack"),
            found: c("s_found"),
            walk: c("s_walk"),
            chkr: c("s_chkr"),
            mrr: c("s_mrr"),
            matchr: c("s_match"),
            gsack: c("s_gsack"),
            gnack: c("s_gnack"),
            gnew: c("s_gnew"),
            open: c("s_open"),
            csack: c("m_csack"),
            rst: at("rst"),
            opcode: at("m_opcode"),
            idle: at("cpl_idle"),
            st: ["valid", "ready", "conn", "stream", "clear", "completed_msn"].map(|n| at(&format!("tap_st_{n}"))),
            taps: ["stale_gen", "psn_window", "duplicate"].map(|n| at(&format!("tap_{n}"))),
            no_conn: [at("tap_ack_no_conn_table"), at("tap_ack_no_conn_search")],
            stats: [at("stat_rx_bad_hdr"), at("stat_rx_access"), at("stat_ack_no_conn")],
        };
        let f = |n: &str| Offer::new(&ports, n);
        let o = Offers {
            pay: f("m_pay"),
            lk: f("m_lk"),
            nc: f("m_nc"),
            probe: f("m_probe"),
            chk: f("m_chk"),
            acc: f("m_acc"),
            mopen: f("m_mopen"),
            mr: f("m_mr"),
            lookup: f("m_lookup"),
            pkt: f("m_pkt"),
            req: f("m_req"),
            new: f("m_new"),
            copen: f("m_copen"),
            sack: f("m_sack"),
            nack: f("m_nack"),
            cnack: f("m_cnack"),
        };
        RxCtl {
            p,
            ports: ports.into(),
            ix,
            st: St::Idle,
            h: Hdr::default(),
            lk: Lk::default(),
            open: (0, 0, 0),
            code: 0,
            place_addr: 0,
            place_key: 0,
            answered: false,
            new: false,
            held: false,
            cmsn: 0,
            hold: false,
            replace: None,
            since_pkt: u32::MAX,
            tag: 0,
            stat_bad_hdr: false,
            stat_access: false,
            shown: Shown::default(),
            o,
        }
    }

    fn reset(&mut self) {
        let p = self.p.clone();
        *self = RxCtl::new(p);
    }

    fn get(inputs: &[Bits], c: &Chan, name: &str) -> u64 {
        inputs[c.field(name)].as_u64()
    }

    /// Nothing of the previous packet is still offered on a shared channel.
    fn free(&self) -> bool {
        !self.o.cnack.on && !self.o.nack.on && !self.o.sack.on && !self.o.pkt.on && !self.o.pay.on
    }

    /// A header was taken: where it goes first.
    fn start(&mut self) {
        self.code = 0;
        self.answered = false;
        self.new = false;
        self.held = false;
        let h = self.h.clone();
        let ports = self.ports.clone();
        if h.opcode == OPC_NACK && h.raw(&nack::CODE) == NACK_NO_CONN {
            let set = [
                ("dst_conn", h.dst_conn),
                ("src_addr", h.ip_src),
                ("path_id", h.path_id),
                ("code", NACK_NO_CONN),
                ("psn", h.raw(&nack::PATH_PSN)),
            ];
            self.o.nc.offer(&ports, &set);
            self.st = St::Nc;
        } else {
            let probe = h.opcode == OPC_PROBE;
            let set = [
                ("dst_conn", h.dst_conn),
                ("path_id", h.path_id),
                ("path_gen", h.gen),
                ("psn", h.psn),
                ("stream_id", if probe { 0 } else { h.stream }),
                ("msn", if probe { 0 } else { h.msn }),
                ("tx_ts", if probe { h.raw(&probe::TX_TS) } else { h.tx_ts }),
                ("sport", h.sport),
                ("plane", h.plane),
                ("src_addr", h.ip_src),
            ];
            self.o.lk.offer(&ports, &set);
            self.st = St::Lookup;
        }
    }

    /// The walk's beats pass to sack_gen.
    fn walking(&self) -> bool {
        self.st == St::Walk
    }

    /// Whether each pass-through channel (`m_pkt` from `s_walk`, `m_cnack`
    /// from `s_gnack`, `m_nack` from `s_found`) is open to the part this
    /// cycle: its valid entry goes first, unless the controller's own entry
    /// is already presented and stalled. Not gated by reset: the channel is
    /// a wire from the part's registers, which reset at the same edge as
    /// ours (gating it would drop a stalled valid in the reset cycle).
    fn pass_on(&self) -> [bool; 3] {
        [self.walking() && !self.shown.pkt, !self.shown.cnack, !self.shown.nack]
    }

    /// The part's entry is on each pass-through channel ([`Self::pass_on`]).
    fn passing(&self, inputs: &[Bits]) -> [bool; 3] {
        let on = self.pass_on();
        let v = [&self.ix.walk, &self.ix.gnack, &self.ix.found].map(|c| inputs[c.valid].bit(0));
        [on[0] && v[0], on[1] && v[1], on[2] && v[2]]
    }

    /// sack_gen's SACKs pass to tx_engine: not while held, except one
    /// already presented (not gated by reset, as [`Self::pass_on`]).
    fn csack_on(&self) -> bool {
        !self.hold || self.shown.csack
    }

    fn take_hdr(&mut self, inputs: &[Bits]) {
        let c = self.ix.hdr.clone();
        let g = |n: &str| Self::get(inputs, &c, n);
        let raw_bits = &inputs[c.field("raw")];
        let n = raw_bits.0.len() * 8;
        let width = self.ports[c.field("raw")].width as usize;
        let mut raw = vec![0u8; width / 8];
        for (i, b) in raw.iter_mut().enumerate() {
            let lsb = width - 8 * (i + 1);
            if lsb / 8 < n {
                *b = (raw_bits.0[lsb / 64] >> (lsb % 64)) as u8;
            }
        }
        self.h = Hdr {
            opcode: g("opcode"),
            payload_len: g("payload_len"),
            dst_conn: g("dst_conn"),
            path_id: g("path_id"),
            psn: g("path_psn"),
            gen: g("path_gen"),
            stream: g("stream_id"),
            msn: g("msn"),
            msg_len: g("msg_len"),
            rkey: g("rkey"),
            addr: g("addr"),
            tx_ts: g("tx_ts"),
            imm: g("imm"),
            ce: g("ecn") == ECN_CE,
            sport: g("udp_sport"),
            dport: g("udp_dport"),
            ip_src: g("ip_src"),
            eth_src: g("eth_src"),
            plane: g("plane"),
            raw,
        };
    }

    /// The stream's completed_msn in the lookup's answer.
    fn msn_of(&self, stream: u64) -> u64 {
        if stream >= self.p.streams as u64 {
            return 0;
        }
        slice_bits(&self.lk.msns, 24 * stream as u32, 24).as_u64()
    }

    /// The sack_gen beat of the packet in hand (`op` DATA or FLUSH).
    fn beat(&mut self, op: u64, path: u64) {
        let h = &self.h;
        let data = op == crate::sack_gen::OP_DATA as u64;
        let mut set = vec![
            ("op", op),
            ("conn", self.lk.conn),
            ("path_id", path),
            ("stream_id", h.stream),
            ("dst_conn", self.lk.remote_id),
            ("completed_msn", if data { self.msn_of(h.stream) } else { self.cmsn }),
        ];
        if data {
            set.extend([
                ("psn", h.psn),
                ("gen", h.gen),
                ("ce", h.ce as u64),
                ("ackreq", h.raw(&data::ACKREQ)),
                ("bad", (self.code != 0) as u64),
                ("payload_len", h.payload_len),
                ("msn", h.msn),
                ("tx_ts", h.tx_ts),
                ("sport", h.sport),
                ("plane", h.plane),
            ]);
        }
        self.o.pkt.offer(&self.ports, &set);
    }

    /// The controller's own NACK for the packet in hand.
    fn own_nack(&mut self) {
        let h = &self.h;
        let set = [
            ("conn", self.lk.conn),
            ("path_id", h.path_id),
            ("dst_conn", self.lk.remote_id),
            ("path_gen", h.gen),
            ("code", self.code),
            ("psn", h.psn),
            ("stream_id", h.stream),
            ("msn", h.msn),
            ("echo_ts", h.tx_ts),
            ("sport", h.sport),
            ("plane", h.plane),
        ];
        self.o.cnack.offer(&self.ports, &set);
        self.stat_bad_hdr = self.code == NACK_BAD_HDR;
        self.stat_access = self.code == NACK_ACCESS;
    }

    fn pay(&mut self, drop: bool) {
        self.o.pay.offer(&self.ports, &[("drop", drop as u64)]);
    }

    /// The lookup answered: where the packet goes.
    fn after_lookup(&mut self, inputs: &[Bits]) {
        let c = self.ix.lkr.clone();
        let g = |n: &str| Self::get(inputs, &c, n);
        let ok = g("ok") == 1;
        self.lk = Lk {
            conn: g("conn"),
            remote_id: g("remote_id"),
            paths: g("paths"),
            active: inputs[c.field("active")].clone(),
            msns: inputs[c.field("msns")].clone(),
        };
        let t = &self.ix.tnack.clone();
        // Only with a refusal (conn_table sends none otherwise): the NACK
        // channel is then free, and the packet ends here.
        if inputs[t.valid].bit(0) && !ok {
            // conn_table refused DATA on a path the connection lacks
            // (BAD_HDR, by the connection's addresses), or DATA or a PROBE
            // for no connection (NO_CONN, back to where it came from).
            let code = Self::get(inputs, t, "code");
            let fields: Vec<(String, u64)> =
                ["dst_conn", "path_id", "path_gen", "psn", "stream_id", "msn", "echo_ts", "sport", "plane"]
                    .iter()
                    .map(|n| (n.to_string(), Self::get(inputs, t, n)))
                    .collect();
            let mut set: Vec<(&str, u64)> = fields.iter().map(|(n, v)| (n.as_str(), *v)).collect();
            set.push(("code", code));
            if code == NACK_NO_CONN {
                set.extend([("direct", 1), ("dst_ip", Self::get(inputs, t, "dst_addr")), ("dst_mac", self.h.eth_src)]);
            } else {
                set.push(("conn", self.lk.conn));
            }
            let ports = self.ports.clone();
            self.o.cnack.offer(&ports, &set);
        }
        self.cmsn = self.msn_of(self.h.stream);
        if !ok {
            self.pay(true);
            self.st = St::Pay;
            return;
        }
        let h = &self.h;
        match h.opcode {
            OPC_SACK => {
                let bitmap = Bitmap256::from_be_bytes(sack::BITMAP.bytes(&h.raw));
                let set = [
                    ("conn", self.lk.conn),
                    ("path_id", h.path_id),
                    ("cum_psn", h.raw(&sack::CUM_PSN)),
                    ("ecn_cnt", h.raw(&sack::ECN_CNT)),
                    ("echo_ts", h.raw(&sack::ECHO_TS)),
                    ("rate_hint", h.raw(&sack::RATE_HINT)),
                    ("stream_id", h.raw(&common::STREAM_ID)),
                    ("completed_msn", h.raw(&sack::COMPLETED_MSN)),
                    ("dport", h.dport),
                ];
                let ports = self.ports.clone();
                self.o.sack.offer(&ports, &set);
                self.o.sack.put(&ports, "bitmap", Bits(bitmap.0.to_vec()));
                self.st = St::Ack;
            }
            OPC_NACK => {
                let set = [
                    ("conn", self.lk.conn),
                    ("path_id", h.path_id),
                    ("code", h.raw(&nack::CODE)),
                    ("psn", h.raw(&nack::PATH_PSN)),
                ];
                let ports = self.ports.clone();
                self.o.nack.offer(&ports, &set);
                self.st = St::Ack;
            }
            OPC_PROBE => {
                let set = [
                    ("conn", self.lk.conn),
                    ("remote_id", self.lk.remote_id),
                    ("path_id", h.path_id),
                    ("psn", h.raw(&probe::PATH_PSN)),
                    ("gen", h.gen),
                    ("tx_ts", h.raw(&probe::TX_TS)),
                    ("sport", h.sport),
                    ("plane", h.plane),
                ];
                let ports = self.ports.clone();
                self.o.probe.offer(&ports, &set);
                self.o.probe.put(&ports, "active", self.lk.active.clone());
                self.o.probe.put(&ports, "msns", self.lk.msns.clone());
                self.st = St::Probe;
            }
            0..=3 => {
                let set = [
                    ("conn", self.lk.conn),
                    ("stream", h.stream),
                    ("msn", h.msn),
                    ("send", h.send() as u64),
                    ("msg_len", h.msg_len),
                    ("imm_valid", h.imm_valid() as u64),
                    ("imm", h.imm),
                    ("rq_seq", h.raw(&data::RQ_SEQ)),
                    ("len", h.payload_len),
                    ("msg_offset", h.raw(&data::MSG_OFFSET)),
                    ("completed_msn", self.msn_of(h.stream)),
                ];
                let ports = self.ports.clone();
                self.o.chk.offer(&ports, &set);
                self.st = St::MsgChk;
            }
            _ => {
                self.pay(true);
                self.st = St::Pay;
            }
        }
    }

    /// msg_check passed: the placement check, or straight to the beat.
    fn after_msg_check(&mut self) {
        let h = self.h.clone();
        let ports = self.ports.clone();
        if h.send() {
            let set = [
                ("conn", self.lk.conn),
                ("stream", h.stream),
                ("rq_seq", h.raw(&data::RQ_SEQ)),
                ("msg_offset", h.raw(&data::MSG_OFFSET)),
                ("payload_len", h.payload_len),
                ("msg_len", h.msg_len),
            ];
            self.o.lookup.offer(&ports, &set);
            self.st = St::Match;
        } else if h.payload_len > 0 {
            let set = [("rkey", h.rkey), ("addr", h.addr), ("len", h.payload_len), ("msg_len", h.msg_len), ("recv", 0)];
            self.o.mr.offer(&ports, &set);
            self.place_addr = h.addr;
            self.place_key = h.rkey;
            self.st = St::MrChk;
        } else {
            self.place_addr = h.addr;
            self.place_key = h.rkey;
            self.st = St::Beat;
        }
    }

    /// The verdict cycle: what becomes of the packet.
    fn verdict(&mut self) {
        let ports = self.ports.clone();
        if self.code != 0 && !self.answered {
            self.own_nack();
            self.hold = false;
            self.pay(true);
            self.st = St::Pay;
        } else if self.new {
            let h = self.h.clone();
            self.tag = (self.tag + 1) & 0xffff;
            let msg = [
                ("conn", self.lk.conn),
                ("stream", h.stream),
                ("msn", h.msn),
                ("send", h.send() as u64),
                ("msg_len", h.msg_len),
                ("imm_valid", h.imm_valid() as u64),
                ("imm", h.imm),
                ("rq_seq", h.raw(&data::RQ_SEQ)),
            ];
            let mut acc = msg.to_vec();
            acc.push(("len", h.payload_len));
            self.o.acc.offer(&ports, &acc);
            let mut new = msg.to_vec();
            new.extend([("payload_len", h.payload_len), ("tag", self.tag), ("conn_id", h.dst_conn)]);
            self.o.new.offer(&ports, &new);
            self.st = St::Accept;
        } else {
            self.hold = false;
            self.pay(true);
            self.st = St::Pay;
        }
    }

    /// The FLUSH beats after `from`, or the end of the packet.
    fn flush_from(&mut self, from: u64) {
        let mut p = from;
        if p == self.h.path_id {
            p += 1;
        }
        if self.h.raw(&data::ACKREQ) == 1 && p < self.lk.paths {
            self.beat(crate::sack_gen::OP_FLUSH as u64, p);
            self.st = St::Flush(p);
        } else {
            self.st = St::Idle;
        }
    }
}

impl Block for RxCtl {
    fn name(&self) -> &'static str {
        NAME
    }

    fn ports(&self) -> &[PortDef] {
        &self.ports
    }

    fn eval(&mut self, inputs: &[Bits], outputs: &mut [Bits]) {
        let rst = inputs[self.ix.rst].bit(0);
        for o in self.o.all() {
            o.drive(outputs);
        }
        let ix = &self.ix;
        let set = |outputs: &mut [Bits], i: usize, v: bool| outputs[i].set_u64(1, v as u64);
        let idle = !rst && self.st == St::Idle && self.free();
        let open = inputs[ix.open.valid].bit(0);
        set(outputs, ix.hdr.ready, idle && !open);
        set(outputs, ix.open.ready, idle);
        set(outputs, ix.lkr.ready, !rst);
        set(outputs, ix.tnack.ready, !rst);
        set(outputs, ix.chkr.ready, !rst);
        set(outputs, ix.mrr.ready, !rst);
        set(outputs, ix.matchr.ready, !rst);
        set(outputs, ix.gnew.ready, !rst);
        outputs[ix.opcode].set_u64(4, self.h.opcode);
        // Pass-through channels, each ahead of the controller's own entry.
        let pass = |outputs: &mut [Bits], from: &Chan, to: &Offer, on: bool| {
            let v = on && inputs[from.valid].bit(0);
            if v {
                outputs[to.chan.valid].set_u64(1, 1);
                // A field the part does not have is 0 (tx_engine's
                // `s_cnack_direct` for sack_gen's NACKs).
                for (j, n) in to.chan.names.iter().enumerate() {
                    let id = to.chan.ids[j];
                    match from.names.iter().position(|m| m == n) {
                        Some(k) => outputs[id].clone_from(&inputs[from.ids[k]]),
                        None => outputs[id] = Bits::zero(self.ports[id].width),
                    }
                }
            }
            let ready = on && inputs[to.chan.ready].bit(0);
            outputs[from.ready].set_u64(1, ready as u64);
        };
        let [pkt_on, cnack_on, nack_on] = self.pass_on();
        pass(outputs, &ix.walk, &self.o.pkt, pkt_on);
        pass(outputs, &ix.gnack, &self.o.cnack, cnack_on);
        pass(outputs, &ix.found, &self.o.nack, nack_on);
        // SACKs from sack_gen: held, or passed with completed_msn replaced.
        let on = self.csack_on();
        let v = on && inputs[ix.gsack.valid].bit(0);
        outputs[ix.csack.valid].set_u64(1, v as u64);
        for (k, n) in ix.gsack.names.iter().enumerate() {
            if let Some(j) = ix.csack.names.iter().position(|m| m == n) {
                if let (true, Some(msn)) = (n == "completed_msn", self.replace) {
                    outputs[ix.csack.ids[j]].set_u64(24, msn);
                } else {
                    outputs[ix.csack.ids[j]].clone_from(&inputs[ix.gsack.ids[k]]);
                }
            }
        }
        outputs[ix.gsack.ready].set_u64(1, (on && inputs[ix.csack.ready].bit(0)) as u64);
        outputs[ix.stats[0]].set_u64(1, self.stat_bad_hdr as u64);
        outputs[ix.stats[1]].set_u64(1, self.stat_access as u64);
        let nc = inputs[ix.no_conn[0]].bit(0) || inputs[ix.no_conn[1]].bit(0);
        outputs[ix.stats[2]].set_u64(1, nc as u64);
    }

    fn tick(&mut self, inputs: &[Bits]) {
        if inputs[self.ix.rst].bit(0) {
            self.reset();
            return;
        }
        self.stat_bad_hdr = false;
        self.stat_access = false;
        // As eval saw it: the header and open channels' ready.
        let was_free = self.free();
        // Entries taken this cycle: a part's entry on a pass-through
        // channel goes first, unless the own entry was already presented.
        let [p_pkt, p_cnack, p_nack] = self.passing(inputs);
        let gsack_valid = inputs[self.ix.gsack.valid].bit(0);
        let csack_ready = inputs[self.ix.csack.ready].bit(0);
        let stalled = |o: &Offer, pass: bool| o.on && !pass && !inputs[o.chan.ready].bit(0);
        let shown_now = self.shown.csack;
        let csack_presented = self.csack_on() && gsack_valid;
        let shown = Shown {
            pkt: stalled(&self.o.pkt, p_pkt),
            cnack: stalled(&self.o.cnack, p_cnack),
            nack: stalled(&self.o.nack, p_nack),
            csack: csack_presented && !csack_ready,
        };
        let pkt_fired = if p_pkt { inputs[self.o.pkt.chan.ready].bit(0) } else { self.o.pkt.fired(inputs) };
        if !p_cnack {
            self.o.cnack.fired(inputs);
        }
        if !p_nack {
            self.o.nack.fired(inputs);
        }
        for o in self.o.all() {
            if !o.shared {
                o.fired(inputs);
            }
        }
        if self.replace.is_some() && csack_presented && csack_ready {
            self.replace = None;
        }
        self.shown = shown;
        self.since_pkt = if pkt_fired { 0 } else { self.since_pkt.saturating_add(1) };
        let ports = self.ports.clone();
        let l = self.p.read_latency;
        match self.st {
            St::Idle => {
                let open = inputs[self.ix.open.valid].bit(0);
                let hdr = inputs[self.ix.hdr.valid].bit(0);
                if !was_free {
                } else if open {
                    let c = self.ix.open.clone();
                    let g = |n: &str| Self::get(inputs, &c, n);
                    self.open = (g("conn"), g("paths"), g("psn"));
                    self.o.copen.offer(&ports, &[("conn", self.open.0)]);
                    self.o.mopen.offer(&ports, &[("conn", self.open.0)]);
                    self.st = St::Open(0);
                } else if hdr {
                    self.take_hdr(inputs);
                    self.start();
                }
            }
            St::Open(path) => {
                if !self.o.copen.on && !self.o.mopen.on && !self.o.pkt.on {
                    let (conn, paths, psn) = self.open;
                    if path < paths {
                        let op = crate::sack_gen::OP_OPEN as u64;
                        self.o.pkt.offer(&ports, &[("op", op), ("conn", conn), ("path_id", path), ("psn", psn)]);
                        self.st = St::Open(path + 1);
                    } else {
                        self.st = St::Idle;
                    }
                }
            }
            St::Lookup => {
                if !self.o.lk.on && inputs[self.ix.lkr.valid].bit(0) {
                    self.after_lookup(inputs);
                }
            }
            St::Nc => {
                if !self.o.nc.on {
                    self.pay(true);
                    self.st = St::Pay;
                }
            }
            St::Ack => {
                if !self.o.sack.on && !self.o.nack.on {
                    self.pay(true);
                    self.st = St::Pay;
                }
            }
            St::Probe => {
                if !self.o.probe.on {
                    self.st = St::Walk;
                }
            }
            St::Walk => {
                // probe_walk is ready again once its last beat is taken
                // (its beats and its ready never overlap; both are checked
                // so that a beat on m_pkt is never withdrawn).
                if inputs[self.o.probe.chan.ready].bit(0) && !inputs[self.ix.walk.valid].bit(0) {
                    self.pay(true);
                    self.st = St::Pay;
                }
            }
            St::MsgChk => {
                if !self.o.chk.on && inputs[self.ix.chkr.valid].bit(0) {
                    if Self::get(inputs, &self.ix.chkr, "status") != 0 {
                        self.code = NACK_BAD_HDR;
                        self.st = St::Beat;
                    } else {
                        self.after_msg_check();
                    }
                }
            }
            St::MrChk => {
                if !self.o.mr.on && inputs[self.ix.mrr.valid].bit(0) {
                    if Self::get(inputs, &self.ix.mrr, "status") != 0 {
                        self.code = NACK_ACCESS;
                    }
                    self.st = St::Beat;
                }
            }
            St::Match => {
                if !self.o.lookup.on && inputs[self.ix.matchr.valid].bit(0) {
                    let code = Self::get(inputs, &self.ix.matchr, "code");
                    if code != 0 {
                        self.code = match code {
                            NACK_RNR | NACK_ACCESS => code,
                            _ => NACK_BAD_HDR,
                        };
                    }
                    self.place_addr = Self::get(inputs, &self.ix.matchr, "addr");
                    self.place_key = Self::get(inputs, &self.ix.matchr, "lkey");
                    let h = &self.h;
                    if code == 0 && h.payload_len > 0 {
                        // The receive's region, checked again by its key:
                        // one deregistered since the post takes nothing
                        // (the reference's `RxConn::check`, ACCESS).
                        let set = [
                            ("rkey", self.place_key),
                            ("addr", self.place_addr),
                            ("len", h.payload_len),
                            ("msg_len", h.msg_len),
                            ("recv", 1),
                        ];
                        let ports = self.ports.clone();
                        self.o.mr.offer(&ports, &set);
                        self.st = St::MrChk;
                    } else {
                        self.st = St::Beat;
                    }
                }
            }
            St::Beat => {
                if pkt_fired {
                    self.hold = true;
                    self.st = St::Verdict(l + 1);
                } else if !self.o.pkt.on && self.since_pkt > l && !gsack_valid {
                    self.beat(crate::sack_gen::OP_DATA as u64, self.h.path_id);
                }
            }
            St::Verdict(n) => {
                self.answered |= self.ix.taps.iter().any(|&i| inputs[i].bit(0));
                if inputs[self.ix.gnew.valid].bit(0) {
                    self.new = true;
                }
                if n <= 1 {
                    // A SACK already presented is an earlier packet's.
                    self.held = gsack_valid && !shown_now;
                    self.verdict();
                } else {
                    self.st = St::Verdict(n - 1);
                }
            }
            St::Accept => {
                if !self.o.acc.on && !self.o.new.on {
                    let h = &self.h;
                    let set = [
                        ("tag", self.tag),
                        ("rkey", self.place_key),
                        ("addr", self.place_addr),
                        ("len", h.payload_len),
                        ("recv", h.send() as u64),
                    ];
                    let drop = h.payload_len == 0;
                    self.o.req.offer(&ports, &set);
                    self.pay(drop);
                    self.st = St::Place;
                }
            }
            St::Place => {
                if !self.o.req.on && !self.o.pay.on {
                    self.st = St::Hold;
                }
            }
            St::Hold => {
                // Not while a SACK is presented: the replacement starts on
                // a SACK not yet shown, so it never changes one stalled.
                if inputs[self.ix.idle].bit(0) && !csack_presented {
                    self.hold = false;
                    if self.held {
                        self.replace = Some(self.cmsn);
                    }
                    self.st = St::Release;
                }
            }
            St::Release => {
                if self.replace.is_none() {
                    self.flush_from(0);
                }
            }
            St::Flush(p) => {
                if !self.o.pkt.on {
                    self.flush_from(p + 1);
                }
            }
            St::Pay => {
                if !self.o.pay.on {
                    self.st = St::Idle;
                }
            }
        }
        // The stream's completed_msn as cpl_engine publishes it, newer
        // than the lookup's.
        let st = self.ix.st;
        if inputs[st[0]].bit(0)
            && inputs[st[1]].bit(0)
            && !inputs[st[4]].bit(0)
            && inputs[st[2]].as_u64() == self.lk.conn
            && inputs[st[3]].as_u64() == self.h.stream
        {
            self.cmsn = inputs[st[5]].as_u64();
        }
    }
}
