//! The layouts of every header on the wire. This file is the protocol's
//! field table: `docs/spec.md`, the Wireshark dissector and the RTL's header
//! slices are printed from it. See `docs/spec.md` for the prose.

use crate::field::{Field, Layout, Only};

const fn f(name: &'static str, offset: usize, bit: u32, width: u32, meaning: &'static str) -> Field {
    Field::new(name, offset, bit, width, meaning)
}

const fn r(name: &'static str, offset: usize, bit: u32, width: u32) -> Field {
    Field::reserved(name, offset, bit, width)
}

pub mod eth {
    use super::*;
    pub const DST_MAC: Field = f("dst_mac", 0, 0, 48, "destination MAC address");
    pub const SRC_MAC: Field = f("src_mac", 6, 0, 48, "source MAC address");
    pub const ETHERTYPE: Field = f("ethertype", 12, 0, 16, "0x0800, IPv4 (VLAN tags are not carried)");
    pub const LAYOUT: Layout =
        Layout { name: "eth", title: "Ethernet II", len: 14, fields: &[DST_MAC, SRC_MAC, ETHERTYPE] };
}

pub mod ipv4 {
    use super::*;
    pub const VERSION: Field = f("version", 0, 0, 4, "4");
    pub const IHL: Field = f("ihl", 0, 4, 4, "5: header length in 32-bit words; options are not used");
    pub const DSCP: Field = f("dscp", 1, 0, 6, "traffic class, configurable");
    pub const ECN: Field = f("ecn", 1, 6, 2, "ECT(0)=2 on transmit; CE=3 set by a congested switch");
    pub const TOTAL_LEN: Field = f("total_len", 2, 0, 16, "IPv4 header + UDP datagram bytes");
    pub const IDENT: Field = f("ident", 4, 0, 16, "identification (packets are never fragmented)");
    pub const FLAG_RESERVED: Field = r("flag_reserved", 6, 0, 1);
    pub const DF: Field = f("df", 6, 1, 1, "don't fragment: always 1");
    pub const MF: Field = f("mf", 6, 2, 1, "more fragments: must be 0");
    pub const FRAG_OFFSET: Field = f("frag_offset", 6, 3, 13, "must be 0: fragments are not accepted");
    pub const TTL: Field = f("ttl", 8, 0, 8, "time to live, 64 on transmit");
    pub const PROTOCOL: Field = f("protocol", 9, 0, 8, "17, UDP");
    pub const CHECKSUM: Field = f("checksum", 10, 0, 16, "IPv4 header checksum (RFC 791)");
    pub const SRC_IP: Field = f("src_ip", 12, 0, 32, "source address");
    pub const DST_IP: Field = f("dst_ip", 16, 0, 32, "destination address");
    pub const LAYOUT: Layout = Layout {
        name: "ipv4",
        title: "IPv4",
        len: 20,
        fields: &[
            VERSION,
            IHL,
            DSCP,
            ECN,
            TOTAL_LEN,
            IDENT,
            FLAG_RESERVED,
            DF,
            MF,
            FRAG_OFFSET,
            TTL,
            PROTOCOL,
            CHECKSUM,
            SRC_IP,
            DST_IP,
        ],
    };
}

pub mod udp {
    use super::*;
    pub const SRC_PORT: Field =
        f("src_port", 0, 0, 16, "path entropy: one source port per path, changed on re-entropy");
    pub const DST_PORT: Field = f("dst_port", 2, 0, 16, "transport port, 4797 unless configured");
    pub const LENGTH: Field = f("length", 4, 0, 16, "UDP header + transport header + payload + ICRC bytes");
    pub const CHECKSUM: Field = f("checksum", 6, 0, 16, "UDP checksum over the IPv4 pseudo-header (RFC 768)");
    pub const LAYOUT: Layout =
        Layout { name: "udp", title: "UDP", len: 8, fields: &[SRC_PORT, DST_PORT, LENGTH, CHECKSUM] };
}

/// Fields at the same place in every transport header: the parser reads the
/// version and opcode before it knows which header it holds.
pub mod common {
    use super::*;
    pub const VER: Field = f("ver", 0, 0, 4, "protocol version, 0");
    pub const OPCODE: Field =
        f("opcode", 0, 4, 4, "WRITE=0, WRITE_IMM=1, SEND=2, SEND_IMM=3, SACK=8, NACK=9, PROBE=10");
    /// The receiver's connection id sits at the same place in every header.
    pub const DST_CONN: Field = f("dst_conn", 4, 0, 24, "connection id at the receiver of this packet");
    pub const PATH_ID: Field = f("path_id", 7, 0, 8, "logical path index within the connection");
    pub const PATH_GEN: Field = f("path_gen", 11, 0, 8, "path generation, bumped when the path is re-entropied");
    pub const STREAM_ID: Field = f("stream_id", 12, 0, 8, "ordered stream within the connection");
    pub const FLAGS_RESERVED: Field = r("flags_reserved", 1, 0, 8);
}

pub mod data {
    use super::*;
    pub use common::{DST_CONN, OPCODE, PATH_GEN, PATH_ID, STREAM_ID, VER};
    pub const SOM: Field = f("som", 1, 0, 1, "first packet of the message");
    pub const EOM: Field = f("eom", 1, 1, 1, "last packet of the message");
    pub const RETX: Field = f("retx", 1, 2, 1, "retransmission: its echoed timestamp gives no RTT sample");
    pub const ACKREQ: Field = f("ackreq", 1, 3, 1, "receiver must answer with a SACK at once");
    pub const SE: Field = f("se", 1, 4, 1, "solicited event for the receive completion");
    pub const FLAGS_RESERVED: Field = r("flags_reserved", 1, 5, 3);
    pub const PAYLOAD_LEN: Field = f("payload_len", 2, 0, 16, "payload bytes in this packet");
    pub const PATH_PSN: Field = f("path_psn", 8, 0, 24, "per-path packet sequence number");
    pub const MSN: Field = f("msn", 13, 0, 24, "message sequence number within the stream");
    pub const MSG_LEN: Field = f("msg_len", 16, 0, 32, "total bytes of the message");
    pub const RKEY: Field = f("rkey", 20, 0, 32, "memory region key").only(Only::Write);
    pub const RQ_SEQ: Field = f("rq_seq", 20, 0, 24, "posted receive sequence within the stream").only(Only::Send);
    pub const RQ_RESERVED: Field = r("rq_reserved", 23, 0, 8).only(Only::Send);
    pub const ADDR: Field =
        f("addr", 24, 0, 64, "virtual address of this packet's first payload byte").only(Only::Write);
    pub const OFFSET_RESERVED: Field = r("offset_reserved", 24, 0, 32).only(Only::Send);
    pub const MSG_OFFSET: Field =
        f("msg_offset", 28, 0, 32, "byte offset of this packet's payload within the message").only(Only::Send);
    pub const TX_TS: Field = f("tx_ts", 32, 0, 16, "sender timestamp, units of 64 ns, wrapping; echoed for RTT");
    pub const RESERVED: Field = r("reserved", 34, 0, 16);
    pub const IMM: Field = f("imm", 36, 0, 32, "immediate data for WRITE_IMM and SEND_IMM, else 0");
    pub const LAYOUT: Layout = Layout {
        name: "data",
        title: "Data header (WRITE, WRITE_IMM, SEND, SEND_IMM)",
        len: 40,
        fields: &[
            VER,
            OPCODE,
            SOM,
            EOM,
            RETX,
            ACKREQ,
            SE,
            FLAGS_RESERVED,
            PAYLOAD_LEN,
            DST_CONN,
            PATH_ID,
            PATH_PSN,
            PATH_GEN,
            STREAM_ID,
            MSN,
            MSG_LEN,
            RKEY,
            RQ_SEQ,
            RQ_RESERVED,
            ADDR,
            OFFSET_RESERVED,
            MSG_OFFSET,
            TX_TS,
            RESERVED,
            IMM,
        ],
    };
}

pub mod sack {
    use super::*;
    pub use common::{DST_CONN, FLAGS_RESERVED, OPCODE, PATH_GEN, PATH_ID, STREAM_ID, VER};
    pub const RATE_HINT: Field = f("rate_hint", 2, 0, 16, "receiver's fair share for this sender, Q0.16 of line rate");
    pub const CUM_PSN: Field = f("cum_psn", 8, 0, 24, "every psn below this one was received; this one was not");
    pub const COMPLETED_MSN: Field =
        f("completed_msn", 13, 0, 24, "every message of stream_id below this msn has completed");
    pub const ECHO_TS: Field = f("echo_ts", 16, 0, 16, "tx_ts of the packet that triggered this SACK");
    pub const ECN_CNT: Field = f("ecn_cnt", 18, 0, 8, "CE-marked packets on this path since the last SACK");
    pub const RESERVED: Field = r("reserved", 19, 0, 8);
    pub const BITMAP: Field = f("bitmap", 20, 0, 256, "bit i (weight 2^i) = psn cum_psn+1+i received");
    pub const LAYOUT: Layout = Layout {
        name: "sack",
        title: "SACK, one per (connection, path)",
        len: 52,
        fields: &[
            VER,
            OPCODE,
            FLAGS_RESERVED,
            RATE_HINT,
            DST_CONN,
            PATH_ID,
            CUM_PSN,
            PATH_GEN,
            STREAM_ID,
            COMPLETED_MSN,
            ECHO_TS,
            ECN_CNT,
            RESERVED,
            BITMAP,
        ],
    };
}

pub mod nack {
    use super::*;
    pub use common::{DST_CONN, FLAGS_RESERVED, OPCODE, PATH_GEN, PATH_ID, STREAM_ID, VER};
    pub const CODE: Field = f("code", 2, 0, 8, "RNR=1, ACCESS=2, NO_CONN=3, BAD_HDR=4");
    pub const RESERVED1: Field = r("reserved1", 3, 0, 8);
    pub const PATH_PSN: Field = f("path_psn", 8, 0, 24, "psn of the packet this NACK answers");
    pub const MSN: Field = f("msn", 13, 0, 24, "message of the packet this NACK answers");
    pub const ECHO_TS: Field = f("echo_ts", 16, 0, 16, "tx_ts of the packet this NACK answers");
    pub const RESERVED2: Field = r("reserved2", 18, 0, 16);
    pub const LAYOUT: Layout = Layout {
        name: "nack",
        title: "NACK",
        len: 20,
        fields: &[
            VER,
            OPCODE,
            FLAGS_RESERVED,
            CODE,
            RESERVED1,
            DST_CONN,
            PATH_ID,
            PATH_PSN,
            PATH_GEN,
            STREAM_ID,
            MSN,
            ECHO_TS,
            RESERVED2,
        ],
    };
}

pub mod probe {
    use super::*;
    pub use common::{DST_CONN, FLAGS_RESERVED, OPCODE, PATH_GEN, PATH_ID, VER};
    pub const TX_TS: Field = f("tx_ts", 2, 0, 16, "sender timestamp, echoed in the SACK it elicits");
    pub const PATH_PSN: Field = f("path_psn", 8, 0, 24, "next psn the sender will use on this path (not consumed)");
    pub const RESERVED: Field = r("reserved", 12, 0, 32);
    pub const LAYOUT: Layout = Layout {
        name: "probe",
        title: "PROBE",
        len: 16,
        fields: &[VER, OPCODE, FLAGS_RESERVED, TX_TS, DST_CONN, PATH_ID, PATH_PSN, PATH_GEN, RESERVED],
    };
}

/// Every layout, outermost first.
pub const ALL: [&Layout; 7] =
    [&eth::LAYOUT, &ipv4::LAYOUT, &udp::LAYOUT, &data::LAYOUT, &sack::LAYOUT, &nack::LAYOUT, &probe::LAYOUT];

/// The transport layouts (what the ICRC covers, with the payload).
pub const TRANSPORT: [&Layout; 4] = [&data::LAYOUT, &sack::LAYOUT, &nack::LAYOUT, &probe::LAYOUT];

/// Bytes of ICRC after the payload.
pub const ICRC_LEN: usize = 4;

#[cfg(test)]
mod tests {
    #[test]
    fn every_layout_tiles_its_header() {
        for l in super::ALL {
            l.check_tiling().unwrap();
        }
    }
}
