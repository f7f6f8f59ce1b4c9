//! The host memory model: registered memory regions as byte buffers, and
//! the memory-region table the receiver checks every placement against.
//!
//! Memory exists only inside registered regions, so a write outside every
//! region cannot happen by construction: every access goes through
//! [`Memory::check`], which refuses unknown keys, missing permissions and
//! ranges that leave the region or wrap the 64-bit address space.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Access bits of a region, as in `proto::tables::mr::ACCESS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Access(pub u8);

impl Access {
    /// Local use only (source of sends and writes).
    pub const LOCAL: Access = Access(0);
    /// Bit 0: remote peers may WRITE into it by rkey.
    pub const REMOTE_WRITE: Access = Access(1);
    /// Bit 1: receive buffers of posted receives may lie in it.
    pub const RECV: Access = Access(2);
    pub const ALL: Access = Access(3);

    pub fn contains(self, other: Access) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for Access {
    type Output = Access;
    fn bitor(self, o: Access) -> Access {
        Access(self.0 | o.0)
    }
}

/// One registered region.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    pub key: u32,
    pub base: u64,
    pub access: Access,
    pub bytes: Vec<u8>,
}

impl Region {
    pub fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Byte index of `[addr, addr+len)` inside the region, or None when the
    /// range wraps or leaves it.
    fn span(&self, addr: u64, len: u64) -> Option<usize> {
        let end = addr.checked_add(len)?;
        let region_end = self.base + self.len();
        (addr >= self.base && end <= region_end).then(|| (addr - self.base) as usize)
    }
}

/// Why an access was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub enum MemError {
    #[error("no region has this key")]
    BadKey,
    #[error("the region does not allow this access")]
    NoAccess,
    #[error("the range leaves the region or wraps the address space")]
    OutOfBounds,
    #[error("no registered region holds this range")]
    Unmapped,
    #[error("the range overlaps a registered region")]
    Overlap,
    #[error("the memory-region table is full")]
    TableFull,
    #[error("a region must have a length, and base+len must not wrap")]
    BadRange,
}

/// Registered memory of one host, with its region table.
#[derive(Debug, Clone, Default)]
pub struct Memory {
    /// By key.
    regions: BTreeMap<u32, Region>,
    /// Table slots (`mr_entries`): the low bits of a key index the table, the
    /// high bits are a tag that changes on every registration, so that a key
    /// of a deregistered region does not match its successor.
    slots: Vec<Option<u32>>,
    index_bits: u32,
    next_tag: u32,
    /// Every [`Memory::write`] while tracing is on (the golden vectors
    /// record a NIC's memory writes through it).
    trace: Option<Vec<(u64, Vec<u8>)>>,
}

impl Memory {
    pub fn new(mr_entries: u32) -> Memory {
        let entries = mr_entries.max(1);
        Memory {
            regions: BTreeMap::new(),
            slots: vec![None; entries as usize],
            index_bits: entries.next_power_of_two().trailing_zeros(),
            next_tag: 1,
            trace: None,
        }
    }

    /// Registers `len` bytes at `base`, zero filled. Regions must not
    /// overlap: one address has one byte.
    pub fn register(&mut self, base: u64, len: u64, access: Access) -> Result<u32, MemError> {
        let end = base.checked_add(len).ok_or(MemError::BadRange)?;
        if len == 0 || len > (1 << 32) {
            return Err(MemError::BadRange);
        }
        if self.regions.values().any(|r| base < r.base + r.len() && r.base < end) {
            return Err(MemError::Overlap);
        }
        let slot = self.slots.iter().position(Option::is_none).ok_or(MemError::TableFull)?;
        let tag = self.next_tag;
        self.next_tag = self.next_tag.wrapping_add(1).max(1);
        let key = (tag << self.index_bits) | slot as u32;
        self.slots[slot] = Some(key);
        self.regions.insert(key, Region { key, base, access, bytes: vec![0; len as usize] });
        Ok(key)
    }

    pub fn deregister(&mut self, key: u32) -> Result<(), MemError> {
        self.regions.remove(&key).ok_or(MemError::BadKey)?;
        let slot = (key & ((1 << self.index_bits) - 1)) as usize;
        self.slots[slot] = None;
        Ok(())
    }

    pub fn region(&self, key: u32) -> Option<&Region> {
        self.regions.get(&key)
    }

    pub fn regions(&self) -> impl Iterator<Item = &Region> {
        self.regions.values()
    }

    /// The remote check of a WRITE: the key names a region that allows
    /// `need`, and `[addr, addr+len)` lies inside it.
    pub fn check(&self, key: u32, addr: u64, len: u64, need: Access) -> Result<(), MemError> {
        let r = self.regions.get(&key).ok_or(MemError::BadKey)?;
        if !r.access.contains(need) {
            return Err(MemError::NoAccess);
        }
        r.span(addr, len).map(|_| ()).ok_or(MemError::OutOfBounds)
    }

    /// The region (by key) that holds a local range with the `need` access.
    pub fn find(&self, addr: u64, len: u64, need: Access) -> Result<u32, MemError> {
        let r = self.regions.values().find(|r| r.span(addr, len).is_some()).ok_or(MemError::Unmapped)?;
        if r.access.contains(need) {
            Ok(r.key)
        } else {
            Err(MemError::NoAccess)
        }
    }

    /// Writes into registered memory; the whole range must lie in one region.
    pub fn write(&mut self, addr: u64, data: &[u8]) -> Result<(), MemError> {
        let r = self.regions.values_mut().find(|r| r.span(addr, data.len() as u64).is_some());
        let r = r.ok_or(MemError::Unmapped)?;
        let at = r.span(addr, data.len() as u64).expect("found by span");
        r.bytes[at..at + data.len()].copy_from_slice(data);
        if let Some(t) = &mut self.trace {
            t.push((addr, data.to_vec()));
        }
        Ok(())
    }

    /// Starts (or stops) recording every write: (address, bytes).
    pub fn set_write_trace(&mut self, on: bool) {
        self.trace = on.then(Vec::new);
    }

    /// The writes recorded since the last call, oldest first.
    pub fn take_write_trace(&mut self) -> Vec<(u64, Vec<u8>)> {
        self.trace.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Reads from registered memory; the whole range must lie in one region.
    pub fn read(&self, addr: u64, len: u64) -> Result<&[u8], MemError> {
        let r = self.regions.values().find(|r| r.span(addr, len).is_some()).ok_or(MemError::Unmapped)?;
        let at = r.span(addr, len).expect("found by span");
        Ok(&r.bytes[at..at + len as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_wrap_keys_and_access_are_checked() {
        let mut m = Memory::new(4);
        let k = m.register(0x1000, 0x100, Access::REMOTE_WRITE).unwrap();
        assert_eq!(m.check(k, 0x1000, 0x100, Access::REMOTE_WRITE), Ok(()));
        assert_eq!(m.check(k, 0x1100, 0, Access::REMOTE_WRITE), Ok(()));
        assert_eq!(m.check(k, 0x10ff, 2, Access::REMOTE_WRITE), Err(MemError::OutOfBounds));
        assert_eq!(m.check(k, 0xfff, 1, Access::REMOTE_WRITE), Err(MemError::OutOfBounds));
        assert_eq!(m.check(k, u64::MAX, 2, Access::REMOTE_WRITE), Err(MemError::OutOfBounds));
        assert_eq!(m.check(k ^ 0x100, 0x1000, 1, Access::REMOTE_WRITE), Err(MemError::BadKey));
        assert_eq!(m.check(k, 0x1000, 1, Access::RECV), Err(MemError::NoAccess));
        assert_eq!(m.register(0x10f0, 0x20, Access::LOCAL), Err(MemError::Overlap));
        assert_eq!(m.register(u64::MAX - 1, 4, Access::LOCAL), Err(MemError::BadRange));
    }

    #[test]
    fn a_stale_key_does_not_open_the_next_region_in_its_slot() {
        let mut m = Memory::new(1);
        let k1 = m.register(0, 16, Access::ALL).unwrap();
        m.deregister(k1).unwrap();
        let k2 = m.register(0, 16, Access::ALL).unwrap();
        assert_ne!(k1, k2);
        assert_eq!(m.check(k1, 0, 1, Access::REMOTE_WRITE), Err(MemError::BadKey));
        assert_eq!(m.register(100, 1, Access::ALL), Err(MemError::TableFull));
    }

    #[test]
    fn reads_and_writes_stay_in_one_region() {
        let mut m = Memory::new(4);
        m.register(0, 8, Access::ALL).unwrap();
        m.register(8, 8, Access::ALL).unwrap();
        m.write(6, &[1, 2]).unwrap();
        assert_eq!(m.write(7, &[1, 2]), Err(MemError::Unmapped));
        assert_eq!(m.read(6, 2).unwrap(), &[1, 2]);
    }
}
