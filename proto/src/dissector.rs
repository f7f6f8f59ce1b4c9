//! The Wireshark Lua dissector, printed from the field table.
//!
//! Nothing here knows a field by hand: the ProtoFields, the per-opcode
//! layouts, the Write/Send views, the reserved-bit checks and the opcode and
//! NACK-code names all come from [`crate::layouts`] and the enums in
//! [`crate::headers`], so a layout change reaches Wireshark by regenerating.
//!
//! Field names: a field defined identically (same name, place, width and
//! meaning) in more than one transport header is one ProtoField
//! `mrnic.<field>`, so `mrnic.dst_conn == 7` filters every opcode; any other
//! field is `mrnic.<layout>.<field>` (`mrnic.sack.cum_psn`,
//! `mrnic.data.rkey`). Beside the header fields the dissector adds
//! `mrnic.payload.len`, `mrnic.payload`, `mrnic.icrc`, `mrnic.icrc.computed`
//! and `mrnic.icrc.status` (1 good, 0 bad, as Wireshark's own checksum status).

use std::fmt::Write as _;

use crate::field::{Field, Layout, Only, Rule};
use crate::headers::{Header, NackCode, Opcode, Placement};
use crate::layouts::{self, common, data, nack, probe, sack, ICRC_LEN};
use crate::packet::DEFAULT_UDP_PORT;

/// Names of the fields the dissector adds beside the header fields.
pub const PAYLOAD_LEN: &str = "mrnic.payload.len";
pub const PAYLOAD: &str = "mrnic.payload";
pub const ICRC: &str = "mrnic.icrc";
pub const ICRC_COMPUTED: &str = "mrnic.icrc.computed";
pub const ICRC_STATUS: &str = "mrnic.icrc.status";

/// Fields whose value goes into the packet list's Info column, when the
/// packet's layout has them (single bits show as their name when set).
const INFO_FIELDS: [&Field; 11] = [
    &common::DST_CONN,
    &common::PATH_ID,
    &data::PATH_PSN,
    &data::MSN,
    &data::RETX,
    &sack::CUM_PSN,
    &sack::ECN_CNT,
    &nack::CODE,
    &nack::PATH_PSN,
    &nack::MSN,
    &probe::PATH_PSN,
];

/// A header field's value as the Rust decoder sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Uint(u64),
    /// Fields wider than 64 bits, in wire order.
    Bytes(Vec<u8>),
}

/// The view of a layout an opcode uses: SEND packets read the rq_seq and
/// msg_offset overlay, every other opcode the WRITE one (control headers
/// have no overlay, so for them the choice does not matter).
pub fn view_of(op: Opcode) -> Only {
    match op {
        Opcode::Send | Opcode::SendImm => Only::Send,
        _ => Only::Write,
    }
}

/// The fields present in packets of `op`, in wire order.
pub fn fields_of(op: Opcode) -> impl Iterator<Item = &'static Field> {
    let view = view_of(op);
    op.layout().fields.iter().filter(move |f| f.only == Only::All || f.only == view)
}

/// The Wireshark field name of `f` in `layout` (see the module comment).
pub fn abbrev(layout: &Layout, f: &Field) -> String {
    if is_shared(f) {
        format!("mrnic.{}", f.name)
    } else {
        format!("mrnic.{}.{}", layout.name, f.name)
    }
}

/// Defined identically in at least two transport layouts, and no other
/// such definition claims the same name.
fn is_shared(f: &Field) -> bool {
    let uses = |g: &Field| layouts::TRANSPORT.iter().filter(|l| l.fields.contains(g)).count();
    if uses(f) < 2 {
        return false;
    }
    let rivals = layouts::TRANSPORT
        .iter()
        .flat_map(|l| l.fields.iter())
        .filter(|g| g.name == f.name && *g != f && uses(g) >= 2)
        .count();
    rivals == 0
}

/// Every distinct header field name the dissector declares, with one
/// (layout, field) that defines it, in table order.
pub fn header_field_names() -> Vec<(String, &'static Layout, &'static Field)> {
    let mut out: Vec<(String, &'static Layout, &'static Field)> = Vec::new();
    for l in layouts::TRANSPORT {
        for f in l.fields {
            let name = abbrev(l, f);
            if !out.iter().any(|(n, _, _)| *n == name) {
                out.push((name, l, f));
            }
        }
    }
    out
}

/// Every field of a decoded header, as (field, value) in wire order: what
/// the dissector must show for the packet. Reserved fields are 0 (the
/// decoder has checked them).
pub fn header_fields(h: &Header) -> Vec<(&'static Field, Value)> {
    let op = h.opcode();
    let u = |v: u64| Value::Uint(v);
    fields_of(op)
        .map(|f| {
            let v = if f.rule == Rule::Reserved {
                u(0)
            } else if *f == common::VER {
                u(crate::headers::VERSION as u64)
            } else if *f == common::OPCODE {
                u(op as u64)
            } else {
                match h {
                    Header::Data(d) => match (f.name, d.place) {
                        ("som", _) => u(d.flags.som as u64),
                        ("eom", _) => u(d.flags.eom as u64),
                        ("retx", _) => u(d.flags.retx as u64),
                        ("ackreq", _) => u(d.flags.ackreq as u64),
                        ("se", _) => u(d.flags.se as u64),
                        ("payload_len", _) => u(d.payload_len as u64),
                        ("dst_conn", _) => u(d.dst_conn as u64),
                        ("path_id", _) => u(d.path_id as u64),
                        ("path_psn", _) => u(d.path_psn as u64),
                        ("path_gen", _) => u(d.path_gen as u64),
                        ("stream_id", _) => u(d.stream_id as u64),
                        ("msn", _) => u(d.msn as u64),
                        ("msg_len", _) => u(d.msg_len as u64),
                        ("rkey", Placement::Write { rkey, .. }) => u(rkey as u64),
                        ("addr", Placement::Write { addr, .. }) => u(addr),
                        ("rq_seq", Placement::Send { rq_seq, .. }) => u(rq_seq as u64),
                        ("msg_offset", Placement::Send { msg_offset, .. }) => u(msg_offset as u64),
                        ("tx_ts", _) => u(d.tx_ts as u64),
                        ("imm", _) => u(d.imm.unwrap_or(0) as u64),
                        _ => unmapped(f),
                    },
                    Header::Sack(s) => match f.name {
                        "rate_hint" => u(s.rate_hint as u64),
                        "dst_conn" => u(s.dst_conn as u64),
                        "path_id" => u(s.path_id as u64),
                        "cum_psn" => u(s.cum_psn as u64),
                        "path_gen" => u(s.path_gen as u64),
                        "stream_id" => u(s.stream_id as u64),
                        "completed_msn" => u(s.completed_msn as u64),
                        "echo_ts" => u(s.echo_ts as u64),
                        "ecn_cnt" => u(s.ecn_cnt as u64),
                        "bitmap" => Value::Bytes(s.bitmap.to_be_bytes().to_vec()),
                        _ => unmapped(f),
                    },
                    Header::Nack(n) => match f.name {
                        "code" => u(n.code as u64),
                        "dst_conn" => u(n.dst_conn as u64),
                        "path_id" => u(n.path_id as u64),
                        "path_psn" => u(n.path_psn as u64),
                        "path_gen" => u(n.path_gen as u64),
                        "stream_id" => u(n.stream_id as u64),
                        "msn" => u(n.msn as u64),
                        "echo_ts" => u(n.echo_ts as u64),
                        _ => unmapped(f),
                    },
                    Header::Probe(p) => match f.name {
                        "tx_ts" => u(p.tx_ts as u64),
                        "dst_conn" => u(p.dst_conn as u64),
                        "path_id" => u(p.path_id as u64),
                        "path_psn" => u(p.path_psn as u64),
                        "path_gen" => u(p.path_gen as u64),
                        _ => unmapped(f),
                    },
                }
            };
            (f, v)
        })
        .collect()
}

/// A table field the typed header has no member for: the layouts gained a
/// field that `headers.rs` does not carry yet. Reaching this is a bug in
/// this crate, caught by the tests over every opcode, not bad input.
fn unmapped(f: &Field) -> Value {
    unreachable!("field {} has no typed counterpart in headers.rs", f.name)
}

/// The Lua dissector, registered on `udp_port` unless the user overrides it.
pub fn lua(udp_port: u16) -> String {
    let mut o = String::new();
    let w = &mut o;
    line(w, "-- mrnic transport dissector for Wireshark 4.x (Lua 5.2 or later).");
    line(w, "-- Auto-generated by `mrnic dissector` from the field table in proto/src/layouts.rs:");
    line(w, "-- do not edit; regenerate with `mrnic dissector > mrnic.lua`.");
    line(w, "--");
    line(w, "-- Load:  wireshark -X lua_script:mrnic.lua   (or copy it into the personal Lua plugins folder)");
    line(w, "-- Port:  Preferences > Protocols > MRNIC > UDP port, `-o mrnic.udp_port:N`,");
    line(w, "--        or `-X lua_script1:udp_port=N` to change the default of this file.");
    line(w, "-- Names: mrnic.<field> for a field defined identically in every transport header that has it,");
    line(w, "--        mrnic.<layout>.<field> otherwise; plus mrnic.payload.len, mrnic.payload, mrnic.icrc,");
    line(w, "--        mrnic.icrc.computed and mrnic.icrc.status (1 good, 0 bad).");
    line(w, "");
    line(w, "local mrnic = Proto(\"mrnic\", \"mrnic transport (MetaRoCE-style RDMA over lossy Ethernet)\")");
    line(w, "");
    let _ = writeln!(w, "local default_port = {udp_port}");
    line(w, "for _, arg in ipairs({ ... }) do");
    line(w, "  local p = tostring(arg):match(\"^udp_port=(%d+)$\")");
    line(w, "  if p then default_port = tonumber(p) end");
    line(w, "end");
    line(w, "mrnic.prefs.udp_port = Pref.uint(\"UDP port\", default_port, \"UDP destination port of the transport\")");
    line(w, "");
    let _ = writeln!(w, "local ICRC_LEN = {ICRC_LEN}");
    line(w, "");

    line(w, "-- Value names, from the Rust enums.");
    let opcode_names: Vec<(u64, &str)> = Opcode::ALL.iter().map(|o| (*o as u64, o.name())).collect();
    let code_names: Vec<(u64, &str)> = NackCode::ALL.iter().map(|c| (*c as u64, c.name())).collect();
    let _ = writeln!(w, "local opcode_names = {}", lua_valstring(&opcode_names));
    let _ = writeln!(w, "local nack_code_names = {}", lua_valstring(&code_names));
    line(w, "");

    line(w, "-- One ProtoField per distinct header field of the transport layouts.");
    line(w, "local pf = {}");
    for (name, _, f) in header_field_names() {
        let _ = writeln!(w, "pf[{}] = {}", lua_str(&name), proto_field(&name, f));
    }
    let _ = writeln!(w, "pf[{}] = ProtoField.uint32({}, \"payload length\", base.DEC, nil, nil, \"payload bytes present between the header and the ICRC\")", lua_str(PAYLOAD_LEN), lua_str(PAYLOAD_LEN));
    let _ = writeln!(w, "pf[{}] = ProtoField.bytes({}, \"payload\")", lua_str(PAYLOAD), lua_str(PAYLOAD));
    let _ = writeln!(w, "pf[{}] = ProtoField.uint32({}, \"icrc\", base.HEX, nil, nil, \"CRC-32/ISO-HDLC over the transport header and payload, big-endian\")", lua_str(ICRC), lua_str(ICRC));
    let _ = writeln!(
        w,
        "pf[{}] = ProtoField.uint32({}, \"icrc computed\", base.HEX)",
        lua_str(ICRC_COMPUTED),
        lua_str(ICRC_COMPUTED)
    );
    let _ = writeln!(
        w,
        "pf[{}] = ProtoField.uint8({}, \"icrc status\", base.DEC, {{ [0] = \"Bad\", [1] = \"Good\" }})",
        lua_str(ICRC_STATUS),
        lua_str(ICRC_STATUS)
    );
    line(w, "local pf_list = {}");
    line(w, "for _, f in pairs(pf) do pf_list[#pf_list + 1] = f end");
    line(w, "mrnic.fields = pf_list");
    line(w, "");
    line(w, "local ef = {");
    line(w, "  reserved = ProtoExpert.new(\"mrnic.reserved_set\", \"Reserved bits set (must be 0)\", expert.group.MALFORMED, expert.severity.ERROR),");
    line(w, "  version = ProtoExpert.new(\"mrnic.bad_version\", \"Unsupported protocol version\", expert.group.MALFORMED, expert.severity.ERROR),");
    line(w, "  opcode = ProtoExpert.new(\"mrnic.unknown_opcode\", \"Unknown opcode\", expert.group.MALFORMED, expert.severity.ERROR),");
    line(w, "  truncated = ProtoExpert.new(\"mrnic.truncated\", \"Shorter than header + ICRC\", expert.group.MALFORMED, expert.severity.ERROR),");
    line(w, "  length = ProtoExpert.new(\"mrnic.length_mismatch\", \"payload_len disagrees with the bytes present\", expert.group.MALFORMED, expert.severity.ERROR),");
    line(
        w,
        "  icrc = ProtoExpert.new(\"mrnic.bad_icrc\", \"Bad ICRC\", expert.group.CHECKSUM, expert.severity.ERROR),",
    );
    line(w, "}");
    line(w, "mrnic.experts = { ef.reserved, ef.version, ef.opcode, ef.truncated, ef.length, ef.icrc }");
    line(w, "");

    line(w, "-- The transport layouts: each field with its place (byte offset, bit offset from the MSB, width),");
    line(w, "-- the bytes it spans, the view it belongs to (all, write, send) and whether it is reserved.");
    line(w, "local layouts = {}");
    for l in layouts::TRANSPORT {
        let _ = writeln!(w, "layouts.{} = {{", l.name);
        let _ = writeln!(w, "  title = {},", lua_str(l.title));
        let _ = writeln!(w, "  len = {},", l.len);
        match l.field("payload_len") {
            Some(p) => {
                let _ = writeln!(w, "  payload_len = {{ off = {}, bit = {}, width = {} }},", p.offset, p.bit, p.width);
            }
            None => line(w, "  payload_len = nil,"),
        }
        line(w, "  fields = {");
        for f in l.fields {
            let view = match f.only {
                Only::All => "all",
                Only::Write => "write",
                Only::Send => "send",
            };
            let _ = writeln!(
                w,
                "    {{ name = {}, pf = pf[{}], off = {}, bit = {}, width = {}, span = {}, view = \"{view}\", reserved = {}, info = {}, names = {} }},",
                lua_str(f.name),
                lua_str(&abbrev(l, f)),
                f.offset,
                f.bit,
                f.width,
                f.end_byte() - f.offset,
                f.rule == Rule::Reserved,
                INFO_FIELDS.contains(&f),
                value_names(f),
            );
        }
        line(w, "  },");
        line(w, "}");
    }
    line(w, "");
    line(w, "local by_opcode = {");
    for op in Opcode::ALL {
        let view = if view_of(op) == Only::Send { "send" } else { "write" };
        let _ = writeln!(
            w,
            "  [{}] = {{ name = {}, layout = layouts.{}, view = \"{view}\" }},",
            op as u8,
            lua_str(op.name()),
            op.layout().name
        );
    }
    line(w, "}");
    let (v, op) = (&common::VER, &common::OPCODE);
    let _ = writeln!(
        w,
        "local VER = {{ pf = pf[{}], off = {}, bit = {}, width = {}, span = {}, value = {} }}",
        lua_str(&abbrev(&data::LAYOUT, v)),
        v.offset,
        v.bit,
        v.width,
        v.end_byte() - v.offset,
        crate::headers::VERSION
    );
    let _ = writeln!(
        w,
        "local OPCODE = {{ pf = pf[{}], off = {}, bit = {}, width = {}, span = {} }}",
        lua_str(&abbrev(&data::LAYOUT, op)),
        op.offset,
        op.bit,
        op.width,
        op.end_byte() - op.offset
    );
    line(w, "");
    w.push_str(LUA_RUNTIME);
    o
}

fn line(w: &mut String, s: &str) {
    w.push_str(s);
    w.push('\n');
}

/// The ProtoField constructor for one table field: booleans for single bits,
/// byte strings past 64 bits, else the smallest unsigned type spanning the
/// field's bytes with a mask when the field does not fill them.
fn proto_field(name: &str, f: &Field) -> String {
    let span = f.end_byte() - f.offset;
    let trailing = span * 8 - (f.bit as usize + f.width as usize);
    let mask = if f.width as usize == span * 8 {
        "nil".to_string()
    } else {
        format!("0x{:x}", (((1u128 << f.width) - 1) << trailing))
    };
    let desc = lua_str(f.meaning);
    let label = lua_str(f.name);
    let name = lua_str(name);
    if f.width > 64 {
        return format!("ProtoField.bytes({name}, {label}, base.NONE, {desc})");
    }
    if f.width == 1 {
        return format!("ProtoField.bool({name}, {label}, {}, nil, {mask}, {desc})", span * 8);
    }
    let ty = match span {
        1 => "uint8",
        2 => "uint16",
        3 => "uint24",
        4 => "uint32",
        _ => "uint64",
    };
    let values = value_names(f);
    let base = if f.rule == Rule::Reserved || f.width > 32 {
        "base.HEX"
    } else if f.width == 32 {
        "base.DEC_HEX"
    } else {
        "base.DEC"
    };
    format!("ProtoField.{ty}({name}, {label}, {base}, {values}, {mask}, {desc})")
}

/// The Lua table naming a field's values, for fields that hold an enum.
fn value_names(f: &Field) -> &'static str {
    if *f == common::OPCODE {
        "opcode_names"
    } else if *f == nack::CODE {
        "nack_code_names"
    } else {
        "nil"
    }
}

fn lua_valstring(names: &[(u64, &str)]) -> String {
    let items: Vec<String> = names.iter().map(|(v, n)| format!("[{v}] = {}", lua_str(n))).collect();
    format!("{{ {} }}", items.join(", "))
}

/// A Lua string literal.
fn lua_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if c.is_ascii() && !c.is_ascii_control() => out.push(c),
            c => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    let _ = write!(out, "\\{b:03}");
                }
            }
        }
    }
    out.push('"');
    out
}

/// The dissector's code: walks the tables above, so it holds no field of
/// its own. Plain Lua 5.2 that also runs on 5.3+ (where the bit operators
/// are native and `bit32` is gone).
const LUA_RUNTIME: &str = r#"-- Bit operations for the ICRC: bit32 on Lua 5.2, the native operators on 5.3 and later
-- (loaded from text so that Lua 5.2 can still parse this file).
local bxor, band, rshift
if bit32 then
  bxor, band, rshift = bit32.bxor, bit32.band, bit32.rshift
else
  bxor, band, rshift = load("return function(a, b) return a ~ b end, function(a, b) return a & b end, function(a, n) return a >> n end")()
end

-- CRC-32/ISO-HDLC (reflected 0x04C11DB7), as the Rust side's crc::CRC_32_ISO_HDLC.
local crc_table = {}
for i = 0, 255 do
  local c = i
  for _ = 1, 8 do
    if band(c, 1) == 1 then c = bxor(rshift(c, 1), 0xEDB88320) else c = rshift(c, 1) end
  end
  crc_table[i] = c
end

local function crc32(s)
  local c = 0xFFFFFFFF
  for i = 1, #s do
    c = bxor(crc_table[band(bxor(c, s:byte(i)), 0xFF)], rshift(c, 8))
  end
  return bxor(c, 0xFFFFFFFF)
end

-- The value of a field of at most 48 bits (exact in a Lua number), bit 0 being the MSB of byte off.
local function field_value(tvb, off, bit, width)
  local v = 0
  local first, last = bit, bit + width
  for i = math.floor(first / 8), math.floor((last - 1) / 8) do
    local byte = tvb(off + i, 1):uint()
    local lo = math.max(first, i * 8) - i * 8
    local hi = math.min(last, i * 8 + 8) - i * 8
    v = v * 2 ^ (hi - lo) + math.floor(byte / 2 ^ (8 - hi)) % 2 ^ (hi - lo)
  end
  return math.floor(v)
end

-- Whether every bit of a field (any width) is zero.
local function field_is_zero(tvb, off, bit, width)
  local first, last = bit, bit + width
  for i = math.floor(first / 8), math.floor((last - 1) / 8) do
    local byte = tvb(off + i, 1):uint()
    local lo = math.max(first, i * 8) - i * 8
    local hi = math.min(last, i * 8 + 8) - i * 8
    if math.floor(byte / 2 ^ (8 - hi)) % 2 ^ (hi - lo) ~= 0 then return false end
  end
  return true
end

function mrnic.dissector(tvb, pinfo, tree)
  local len = tvb:len()
  if len < 1 then return 0 end
  pinfo.cols.protocol = "MRNIC"
  local t = tree:add(mrnic, tvb())
  local ver_item = t:add(VER.pf, tvb(VER.off, VER.span))
  local op_item = t:add(OPCODE.pf, tvb(OPCODE.off, OPCODE.span))
  if field_value(tvb, VER.off, VER.bit, VER.width) ~= VER.value then
    ver_item:add_proto_expert_info(ef.version)
    pinfo.cols.info = "MRNIC unsupported version"
    return len
  end
  local op = field_value(tvb, OPCODE.off, OPCODE.bit, OPCODE.width)
  local entry = by_opcode[op]
  if not entry then
    op_item:add_proto_expert_info(ef.opcode)
    pinfo.cols.info = "MRNIC unknown opcode " .. op
    return len
  end
  local L = entry.layout
  t:append_text(", " .. entry.name)
  if len < L.len + ICRC_LEN then
    t:add_proto_expert_info(ef.truncated)
    pinfo.cols.info = "MRNIC " .. entry.name .. " truncated"
    return len
  end
  local h = t:add(tvb(0, L.len), L.title)
  local info = { entry.name }
  for _, f in ipairs(L.fields) do
    if (f.view == "all" or f.view == entry.view) and f.pf ~= VER.pf and f.pf ~= OPCODE.pf then
      local item = h:add(f.pf, tvb(f.off, f.span))
      if f.reserved and not field_is_zero(tvb, f.off, f.bit, f.width) then
        item:add_proto_expert_info(ef.reserved)
      end
      if f.info then
        local v = field_value(tvb, f.off, f.bit, f.width)
        if f.width == 1 then
          if v == 1 then info[#info + 1] = f.name:upper() end
        elseif f.names and f.names[v] then
          info[#info + 1] = f.names[v]
        else
          info[#info + 1] = f.name .. "=" .. v
        end
      end
    end
  end
  local plen = len - L.len - ICRC_LEN
  local pl_item = t:add(pf["mrnic.payload.len"], tvb(L.len, plen), plen)
  if L.payload_len and field_value(tvb, L.payload_len.off, L.payload_len.bit, L.payload_len.width) ~= plen then
    pl_item:add_proto_expert_info(ef.length)
  end
  if plen > 0 then t:add(pf["mrnic.payload"], tvb(L.len, plen)) end
  local found = tvb(len - ICRC_LEN, ICRC_LEN):uint()
  local computed = crc32(tvb(0, len - ICRC_LEN):raw())
  t:add(pf["mrnic.icrc"], tvb(len - ICRC_LEN, ICRC_LEN))
  t:add(pf["mrnic.icrc.computed"], tvb(len - ICRC_LEN, ICRC_LEN), computed):set_generated()
  local status = t:add(pf["mrnic.icrc.status"], tvb(len - ICRC_LEN, ICRC_LEN), found == computed and 1 or 0)
  status:set_generated()
  if found ~= computed then
    status:add_proto_expert_info(ef.icrc)
    info[#info + 1] = "[bad ICRC]"
  end
  if plen > 0 then info[#info + 1] = "len=" .. plen end
  pinfo.cols.info = table.concat(info, " ")
  return len
end

local registered_port = nil
local function register_port(port)
  local udp_table = DissectorTable.get("udp.port")
  if registered_port then udp_table:remove(registered_port, mrnic) end
  udp_table:add(port, mrnic)
  registered_port = port
end

function mrnic.prefs_changed()
  if mrnic.prefs.udp_port ~= registered_port then register_port(mrnic.prefs.udp_port) end
end

register_port(mrnic.prefs.udp_port)
"#;

/// The default port, for callers that do not take one.
pub fn lua_default() -> String {
    lua(DEFAULT_UDP_PORT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::headers::{Bitmap256, DataHeader, Flags, NackHeader, ProbeHeader, SackHeader};

    fn samples() -> Vec<Header> {
        let d = DataHeader {
            flags: Flags::default(),
            payload_len: 0,
            dst_conn: 1,
            path_id: 2,
            path_psn: 3,
            path_gen: 4,
            stream_id: 5,
            msn: 6,
            msg_len: 7,
            place: Placement::Write { rkey: 8, addr: 9 },
            tx_ts: 10,
            imm: None,
        };
        let send = DataHeader { place: Placement::Send { rq_seq: 1, msg_offset: 2 }, ..d };
        vec![
            Header::Data(d),
            Header::Data(DataHeader { imm: Some(1), ..d }),
            Header::Data(send),
            Header::Data(DataHeader { imm: Some(1), ..send }),
            Header::Sack(SackHeader { bitmap: Bitmap256([1, 0, 0, 0]), ..SackHeader::default() }),
            Header::Nack(NackHeader {
                code: NackCode::Rnr,
                dst_conn: 1,
                path_id: 2,
                path_gen: 3,
                path_psn: 4,
                stream_id: 5,
                msn: 6,
                echo_ts: 7,
            }),
            Header::Probe(ProbeHeader::default()),
        ]
    }

    /// Every field of every opcode's view has a typed value, so the tshark
    /// comparison covers all of them.
    #[test]
    fn header_fields_cover_every_view() {
        for h in samples() {
            let got: Vec<&str> = header_fields(&h).iter().map(|(f, _)| f.name).collect();
            let want: Vec<&str> = fields_of(h.opcode()).map(|f| f.name).collect();
            assert_eq!(got, want, "{}", h.opcode().name());
        }
        let ops: Vec<Opcode> = samples().iter().map(|h| h.opcode()).collect();
        assert_eq!(ops, Opcode::ALL);
    }

    #[test]
    fn shared_names_are_the_common_fields() {
        let shared: Vec<String> =
            header_field_names().into_iter().map(|(n, _, _)| n).filter(|n| n.matches('.').count() == 1).collect();
        assert_eq!(
            shared,
            [
                "mrnic.ver",
                "mrnic.opcode",
                "mrnic.dst_conn",
                "mrnic.path_id",
                "mrnic.path_gen",
                "mrnic.stream_id",
                "mrnic.flags_reserved"
            ]
        );
        assert_eq!(abbrev(&data::LAYOUT, &data::FLAGS_RESERVED), "mrnic.data.flags_reserved");
        assert_eq!(abbrev(&sack::LAYOUT, &sack::CUM_PSN), "mrnic.sack.cum_psn");
    }

    #[test]
    fn every_field_is_declared_once() {
        let text = lua_default();
        for (name, _, _) in header_field_names() {
            assert_eq!(text.matches(&format!("pf[\"{name}\"] = ProtoField")).count(), 1, "{name}");
        }
        assert!(text.contains("local default_port = 4797"));
        assert!(lua(1234).contains("local default_port = 1234"));
    }

    #[test]
    fn masks_follow_the_table() {
        assert_eq!(
            proto_field("x", &common::OPCODE),
            "ProtoField.uint8(\"x\", \"opcode\", base.DEC, opcode_names, 0xf, \"WRITE=0, WRITE_IMM=1, SEND=2, SEND_IMM=3, SACK=8, NACK=9, PROBE=10\")"
        );
        assert!(proto_field("x", &data::RETX).starts_with("ProtoField.bool(\"x\", \"retx\", 8, nil, 0x20,"));
        assert!(proto_field("x", &sack::BITMAP).starts_with("ProtoField.bytes("));
        assert!(proto_field("x", &data::ADDR).starts_with("ProtoField.uint64(\"x\", \"addr\", base.HEX, nil, nil,"));
    }
}
