//! AXI4 write splitting shared by the cycle model's `dma_write_engine` and
//! the reference's `dma_write` golden vectors: one pure rule, so the two
//! cannot drift apart.
//!
//! A placement of `len > 0` bytes at `addr` on a bus of `beat_bytes` bytes
//! per beat (a power of 2) is written with INCR bursts of full-width beats:
//! the first burst starts at `addr` itself (unaligned allowed), every later
//! one on a beat boundary, and each ends at the first of: the end of the
//! placement, a 4 KiB boundary, `max_burst` beats. Byte strobes hold exactly
//! the placement's bytes. Addresses wrap at 2^64 like the engine's adders
//! (a placement the bounds check accepted never does).

/// Bytes of an AXI page no burst may cross.
pub const PAGE_BYTES: u64 = 4096;

/// One burst: its AW address and its beats (`awlen + 1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Burst {
    pub addr: u64,
    pub beats: u32,
}

impl Burst {
    /// `AWLEN`: beats minus 1.
    pub fn awlen(&self) -> u8 {
        (self.beats - 1) as u8
    }
}

/// Beats needed for `len` bytes starting at byte lane `addr % beat_bytes`.
pub fn write_beats(addr: u64, len: u64, beat_bytes: u32) -> u64 {
    let b = beat_bytes as u64;
    ((addr % b) + len).div_ceil(b)
}

/// The bursts of a placement of `len` bytes at `addr`, in order (none for
/// `len == 0`).
pub fn write_bursts(addr: u64, len: u64, beat_bytes: u32, max_burst: u32) -> Vec<Burst> {
    debug_assert!(beat_bytes.is_power_of_two() && beat_bytes as u64 <= PAGE_BYTES);
    let b = beat_bytes as u64;
    let page_beats = PAGE_BYTES / b;
    let mut rem = if len == 0 { 0 } else { write_beats(addr, len, beat_bytes) };
    let mut cur = addr;
    let mut out = Vec::new();
    while rem > 0 {
        let to_page = page_beats - (cur % PAGE_BYTES) / b;
        let beats = rem.min(to_page).min(max_burst as u64);
        out.push(Burst { addr: cur, beats: beats as u32 });
        cur = (cur & !(b - 1)).wrapping_add(beats * b);
        rem -= beats;
    }
    out
}

/// One W beat: `beat_bytes` data bytes, lane 0 first, and the strobe (bit i
/// = lane i). Lanes whose strobe is 0 carry 0 here; on the bus they are
/// don't-care.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WBeat {
    pub data: Vec<u8>,
    pub strb: u128,
}

/// The W beats of writing `data` at `addr`, in bus order (bursts split them
/// by [`write_bursts`]; the beats do not depend on the split).
pub fn write_data_beats(addr: u64, data: &[u8], beat_bytes: u32) -> Vec<WBeat> {
    let b = beat_bytes as usize;
    let n = if data.is_empty() { 0 } else { write_beats(addr, data.len() as u64, beat_bytes) as usize };
    let off = (addr % b as u64) as usize;
    let mut beats: Vec<WBeat> = (0..n).map(|_| WBeat { data: vec![0; b], strb: 0 }).collect();
    for (i, &byte) in data.iter().enumerate() {
        let pos = off + i;
        let w = &mut beats[pos / b];
        w.data[pos % b] = byte;
        w.strb |= 1u128 << (pos % b);
    }
    beats
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_at_pages_and_max_burst() {
        // 8-byte beats, 64-beat bursts (512 bytes).
        assert_eq!(write_bursts(0x1000, 0, 8, 64), vec![]);
        assert_eq!(write_bursts(0x1003, 2, 8, 64), vec![Burst { addr: 0x1003, beats: 1 }]);
        assert_eq!(
            write_bursts(0x1ffc, 8, 8, 64),
            vec![Burst { addr: 0x1ffc, beats: 1 }, Burst { addr: 0x2000, beats: 1 }]
        );
        assert_eq!(
            write_bursts(0x1004, 1024, 8, 64),
            vec![
                Burst { addr: 0x1004, beats: 64 },
                Burst { addr: 0x1200, beats: 64 },
                Burst { addr: 0x1400, beats: 1 }
            ]
        );
        // A whole page per burst at 64-byte beats.
        assert_eq!(
            write_bursts(0xfc0, 128, 64, 64),
            vec![Burst { addr: 0xfc0, beats: 1 }, Burst { addr: 0x1000, beats: 1 }]
        );
    }

    #[test]
    fn strobes_cover_exactly_the_bytes() {
        let beats = write_data_beats(0x13, &[1, 2, 3, 4, 5, 6, 7], 8);
        assert_eq!(beats.len(), 2);
        assert_eq!(beats[0].strb, 0b1111_1000);
        assert_eq!(beats[0].data, vec![0, 0, 0, 1, 2, 3, 4, 5]);
        assert_eq!(beats[1].strb, 0b11);
        assert_eq!(beats[1].data, vec![6, 7, 0, 0, 0, 0, 0, 0]);
    }
}
