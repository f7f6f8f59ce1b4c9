//! Integer fixed-point helpers shared by the blocks whose behaviour the
//! hardware must reproduce bit for bit (path selector, telemetry, rx, tx).
//! No floating point anywhere in them: every value has the width of its
//! `proto::tables` field and wraps or saturates as a register would.

use mrnic_proto::tables::TableField;

/// Sequence numbers (path_psn, msn, rq_seq) are 24 bits and wrap.
pub const SEQ_BITS: u32 = 24;
pub const SEQ_MASK: u32 = (1 << SEQ_BITS) - 1;
/// Half the sequence space: a distance at or above it means "behind".
pub const SEQ_HALF: u32 = 1 << (SEQ_BITS - 1);

/// `a + n` in 24-bit sequence space.
pub fn seq_add(a: u32, n: u32) -> u32 {
    a.wrapping_add(n) & SEQ_MASK
}

/// `a - b` in 24-bit sequence space, in `0..2^24`.
pub fn seq_diff(a: u32, b: u32) -> u32 {
    a.wrapping_sub(b) & SEQ_MASK
}

/// `a` is strictly before `b` (serial-number arithmetic, RFC 1982 style).
pub fn seq_before(a: u32, b: u32) -> bool {
    let d = seq_diff(b, a);
    d != 0 && d < SEQ_HALF
}

/// 32-bit timestamps (timers, deadlines) wrap; `a` is at or after `b`.
pub fn ts_reached(now: u32, deadline: u32) -> bool {
    (now.wrapping_sub(deadline) as i32) >= 0
}

/// The reciprocal ROM: `floor(65536 / n)` for `n` in 1..=256 (17 bits).
/// Hardware holds it as a 256-entry table; it replaces every division the
/// telemetry block would otherwise need (ECN fraction, weight, fair share).
pub fn recip16(n: u32) -> u32 {
    65536 / n.clamp(1, 256)
}

/// One EWMA step with gain 2^-shift: `avg + ((sample - avg) >> shift)`,
/// the difference taken signed and shifted arithmetically (rounds toward
/// minus infinity), as a subtract-shift-add datapath computes it.
pub fn ewma(avg: u32, sample: u32, shift: u32) -> u32 {
    let d = sample as i64 - avg as i64;
    (avg as i64 + (d >> shift)).max(0) as u32
}

/// Clamps a value into a table field's width (saturating register).
pub fn sat(v: u64, field: &TableField) -> u32 {
    v.min(field.max()) as u32
}

/// Bits needed to hold `v` (0 for 0).
pub fn bit_len(v: u64) -> u32 {
    64 - v.leading_zeros()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_arithmetic_wraps_at_24_bits() {
        assert_eq!(seq_add(SEQ_MASK, 1), 0);
        assert_eq!(seq_diff(2, SEQ_MASK), 3);
        assert!(seq_before(SEQ_MASK, 1));
        assert!(!seq_before(1, SEQ_MASK));
        assert!(!seq_before(5, 5));
    }

    #[test]
    fn timestamps_compare_across_the_wrap() {
        assert!(ts_reached(3, u32::MAX - 2));
        assert!(!ts_reached(u32::MAX - 2, 3));
        assert!(ts_reached(9, 9));
    }

    #[test]
    fn ewma_moves_toward_the_sample_and_settles() {
        assert_eq!(ewma(80, 160, 3), 90);
        assert_eq!(ewma(80, 0, 3), 70);
        let mut a = 0;
        for _ in 0..200 {
            a = ewma(a, 1000, 3);
        }
        assert!((993..=1000).contains(&a));
    }

    #[test]
    fn reciprocal_rom_edges() {
        assert_eq!(recip16(1), 65536);
        assert_eq!(recip16(256), 256);
        assert_eq!(recip16(3), 21845);
        assert_eq!(recip16(0), 65536);
    }
}
