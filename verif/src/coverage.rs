//! Functional coverage counted during a co-simulation run.
//!
//! A [`Coverage`] is a list of named bins declared before the run (so a
//! bin never hit shows up as a hole rather than missing from the report)
//! and a counter per bin. Monitors resolve their bins to indices once and
//! count with [`Coverage::hit`] on the hot path: no string work per cycle.
//! [`crate::Traffic`] declares the bins every stream has (handshakes,
//! backpressure on each output, stalls on each input); each block adds its
//! own (opcodes, NACK codes, state transitions, ...) in `blocks/<block>.rs`.

use std::collections::HashMap;
use std::fmt;

/// Named bins and their hit counts.
#[derive(Clone, Debug, Default)]
pub struct Coverage {
    names: Vec<String>,
    hits: Vec<u64>,
    index: HashMap<String, usize>,
    /// Bins withdrawn after declaration (their index stays valid).
    retired: Vec<bool>,
}

impl Coverage {
    pub fn new() -> Coverage {
        Coverage::default()
    }

    /// Declares bin `name` (once; later calls return the same index).
    pub fn bin(&mut self, name: impl Into<String>) -> usize {
        let name = name.into();
        if let Some(&i) = self.index.get(&name) {
            return i;
        }
        let i = self.names.len();
        self.index.insert(name.clone(), i);
        self.names.push(name);
        self.hits.push(0);
        self.retired.push(false);
        i
    }

    /// Withdraws bin `name` (a stream another driver took over, say): it
    /// no longer counts, shows, or makes a hole.
    pub fn retire(&mut self, name: &str) {
        if let Some(&i) = self.index.get(name) {
            self.retired[i] = true;
        }
    }

    /// Counts one hit of the bin `i` from [`Coverage::bin`].
    #[inline]
    pub fn hit(&mut self, i: usize) {
        self.hits[i] += 1;
    }

    /// Hits of bin `name` (0 when it was never declared).
    pub fn count(&self, name: &str) -> u64 {
        self.index.get(name).map_or(0, |&i| self.hits[i])
    }

    /// Bins declared and never hit.
    pub fn holes(&self) -> Vec<&str> {
        self.bins().filter(|&(_, h)| h == 0).map(|(n, _)| n).collect()
    }

    /// (bins hit, bins declared).
    pub fn score(&self) -> (usize, usize) {
        (self.bins().filter(|&(_, h)| h > 0).count(), self.bins().count())
    }

    /// Every bin with its count, in declaration order.
    pub fn bins(&self) -> impl Iterator<Item = (&str, u64)> {
        self.names.iter().zip(&self.hits).zip(&self.retired).filter(|(_, &r)| !r).map(|((n, &h), _)| (n.as_str(), h))
    }

    /// Adds another run's counts (bins matched by name).
    pub fn merge(&mut self, other: &Coverage) {
        for (n, h) in other.bins() {
            let i = self.bin(n);
            self.hits[i] += h;
        }
    }

    /// Zeroes every count (after a reset, for example); bins stay declared.
    pub fn clear(&mut self) {
        self.hits.iter_mut().for_each(|h| *h = 0);
    }
}

impl fmt::Display for Coverage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (hit, all) = self.score();
        writeln!(f, "coverage: {hit} of {all} bins hit")?;
        let width = self.bins().map(|(n, _)| n.len()).max().unwrap_or(0);
        for (n, h) in self.bins() {
            let mark = if h == 0 { "  <- hole" } else { "" };
            writeln!(f, "  {n:<width$} {h:>10}{mark}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_count_and_holes_show() {
        let mut c = Coverage::new();
        let a = c.bin("a");
        let b = c.bin("b");
        assert_eq!(c.bin("a"), a);
        c.hit(a);
        c.hit(a);
        assert_eq!(c.count("a"), 2);
        assert_eq!(c.count("b"), 0);
        assert_eq!(c.holes(), vec!["b"]);
        assert_eq!(c.score(), (1, 2));
        let mut d = Coverage::new();
        let db = d.bin("b");
        d.hit(db);
        c.merge(&d);
        assert!(c.holes().is_empty());
        let _ = b;
        assert!(c.to_string().contains("2 of 2 bins hit"));
    }
}
