//! Classic libpcap capture files (not pcapng): the format every packet tool
//! reads, written with microsecond timestamps and LINKTYPE_ETHERNET.
//!
//! Hand-written because the format is 24 bytes of file header and 16 bytes
//! per record; a crate would cost more than it saves. The reader takes both
//! byte orders and both timestamp resolutions, and turns every way a file can
//! be damaged into a [`PcapError`] instead of a panic or a huge allocation.

use std::io::{self, Read, Write};

/// Magic of a microsecond file, as the writer's native order stores it.
pub const MAGIC_USEC: u32 = 0xa1b2_c3d4;
/// Magic of a nanosecond file.
pub const MAGIC_NSEC: u32 = 0xa1b2_3c4d;
pub const VERSION_MAJOR: u16 = 2;
pub const VERSION_MINOR: u16 = 4;
/// Ethernet II frames without FCS.
pub const LINKTYPE_ETHERNET: u32 = 1;
/// What the writer declares by default: larger than any frame we make
/// (an 8192-byte MTU plus headers) and the value tcpdump uses.
pub const DEFAULT_SNAPLEN: u32 = 262_144;
const FILE_HEADER_LEN: usize = 24;
const RECORD_HEADER_LEN: usize = 16;

/// Why a capture file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum PcapError {
    #[error("not a pcap file: magic {found:#010x} is neither {MAGIC_USEC:#010x} nor {MAGIC_NSEC:#010x} in either byte order (pcapng files must be converted with editcap -F pcap)")]
    BadMagic { found: u32 },
    #[error("pcap file header truncated: {have} of {FILE_HEADER_LEN} bytes")]
    TruncatedFileHeader { have: usize },
    #[error("unsupported pcap version {major}.{minor} (only 2.x is read)")]
    Version { major: u16, minor: u16 },
    #[error("record {index} at byte {offset}: truncated {what}: needs {need} bytes, file has {have}")]
    TruncatedRecord { index: u64, offset: u64, what: &'static str, need: u64, have: u64 },
    #[error("record {index} at byte {offset}: captured length {incl_len} exceeds the file's snaplen {snaplen}")]
    Snaplen { index: u64, offset: u64, incl_len: u32, snaplen: u32 },
    #[error("record {index} at byte {offset}: captured length {incl_len} exceeds the original length {orig_len}")]
    LongerThanOriginal { index: u64, offset: u64, incl_len: u32, orig_len: u32 },
    #[error("record {index} at byte {offset}: timestamp fraction {frac} is not below one second")]
    Timestamp { index: u64, offset: u64, frac: u32 },
    #[error("frame of {len} bytes exceeds the writer's snaplen {snaplen}")]
    WriteTooLong { len: usize, snaplen: u32 },
    #[error("pcap i/o: {0}")]
    Io(#[from] io::Error),
}

/// What the file header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileHeader {
    /// The file was written in the other byte order than this machine's.
    pub swapped: bool,
    /// Timestamps are in nanoseconds (else microseconds).
    pub nanos: bool,
    pub version: (u16, u16),
    pub snaplen: u32,
    pub linktype: u32,
}

/// One captured packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub ts_sec: u32,
    /// Sub-second part in nanoseconds, whatever the file's resolution.
    pub ts_nsec: u32,
    /// Length of the packet on the wire; `data` may be shorter (snaplen).
    pub orig_len: u32,
    pub data: Vec<u8>,
}

impl Record {
    /// Timestamp in microseconds since the epoch.
    pub fn ts_micros(&self) -> u64 {
        self.ts_sec as u64 * 1_000_000 + (self.ts_nsec / 1000) as u64
    }
}

/// Writes a microsecond, Ethernet pcap in little-endian order (what
/// tcpdump on x86 and ARM writes).
pub struct PcapWriter<W: Write> {
    out: W,
    snaplen: u32,
}

impl<W: Write> PcapWriter<W> {
    pub fn new(out: W) -> Result<Self, PcapError> {
        Self::with_snaplen(out, DEFAULT_SNAPLEN)
    }

    pub fn with_snaplen(mut out: W, snaplen: u32) -> Result<Self, PcapError> {
        let mut h = [0u8; FILE_HEADER_LEN];
        h[0..4].copy_from_slice(&MAGIC_USEC.to_le_bytes());
        h[4..6].copy_from_slice(&VERSION_MAJOR.to_le_bytes());
        h[6..8].copy_from_slice(&VERSION_MINOR.to_le_bytes());
        // thiszone and sigfigs stay 0: timestamps are UTC.
        h[16..20].copy_from_slice(&snaplen.to_le_bytes());
        h[20..24].copy_from_slice(&LINKTYPE_ETHERNET.to_le_bytes());
        out.write_all(&h)?;
        Ok(PcapWriter { out, snaplen })
    }

    /// Appends one whole frame stamped `ts_micros` microseconds after the
    /// epoch. Frames are never cut to the snaplen: a frame that does not fit
    /// is an error, because a truncated frame would fail its checksums.
    pub fn write(&mut self, ts_micros: u64, frame: &[u8]) -> Result<(), PcapError> {
        if frame.len() > self.snaplen as usize {
            return Err(PcapError::WriteTooLong { len: frame.len(), snaplen: self.snaplen });
        }
        let sec = u32::try_from(ts_micros / 1_000_000)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "timestamp past 2106"))?;
        let mut h = [0u8; RECORD_HEADER_LEN];
        h[0..4].copy_from_slice(&sec.to_le_bytes());
        h[4..8].copy_from_slice(&((ts_micros % 1_000_000) as u32).to_le_bytes());
        h[8..12].copy_from_slice(&(frame.len() as u32).to_le_bytes());
        h[12..16].copy_from_slice(&(frame.len() as u32).to_le_bytes());
        self.out.write_all(&h)?;
        self.out.write_all(frame)?;
        Ok(())
    }

    pub fn into_inner(mut self) -> Result<W, PcapError> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Reads records one by one. After the first error the iterator ends, since
/// nothing after a damaged record header can be trusted.
pub struct PcapReader<R: Read> {
    input: R,
    header: FileHeader,
    index: u64,
    offset: u64,
    done: bool,
}

impl<R: Read> PcapReader<R> {
    pub fn new(mut input: R) -> Result<Self, PcapError> {
        let mut h = [0u8; FILE_HEADER_LEN];
        let have = read_full(&mut input, &mut h)?;
        if have >= 4 {
            check_magic(&h[..4])?;
        }
        if have < FILE_HEADER_LEN {
            return Err(PcapError::TruncatedFileHeader { have });
        }
        let (swapped, nanos) = check_magic(&h[..4])?;
        let u16_at = |i: usize| {
            let b = [h[i], h[i + 1]];
            if swapped {
                u16::from_be_bytes(b)
            } else {
                u16::from_le_bytes(b)
            }
        };
        let u32_at = |i: usize| word(&h[i..i + 4], swapped);
        let version = (u16_at(4), u16_at(6));
        if version.0 != VERSION_MAJOR {
            return Err(PcapError::Version { major: version.0, minor: version.1 });
        }
        let header = FileHeader { swapped, nanos, version, snaplen: u32_at(16), linktype: u32_at(20) };
        Ok(PcapReader { input, header, index: 0, offset: FILE_HEADER_LEN as u64, done: false })
    }

    pub fn header(&self) -> &FileHeader {
        &self.header
    }

    fn next_record(&mut self) -> Result<Option<Record>, PcapError> {
        let (index, offset) = (self.index, self.offset);
        let mut h = [0u8; RECORD_HEADER_LEN];
        let have = read_full(&mut self.input, &mut h)?;
        if have == 0 {
            return Ok(None);
        }
        if have < RECORD_HEADER_LEN {
            return Err(PcapError::TruncatedRecord {
                index,
                offset,
                what: "record header",
                need: RECORD_HEADER_LEN as u64,
                have: have as u64,
            });
        }
        let sw = self.header.swapped;
        let (ts_sec, frac, incl_len, orig_len) =
            (word(&h[0..4], sw), word(&h[4..8], sw), word(&h[8..12], sw), word(&h[12..16], sw));
        let limit = if self.header.nanos { 1_000_000_000 } else { 1_000_000 };
        if frac >= limit {
            return Err(PcapError::Timestamp { index, offset, frac });
        }
        // A snaplen of 0 appears in some old writers' files and means "no limit".
        let snaplen = self.header.snaplen;
        if snaplen != 0 && incl_len > snaplen {
            return Err(PcapError::Snaplen { index, offset, incl_len, snaplen });
        }
        if incl_len > orig_len {
            return Err(PcapError::LongerThanOriginal { index, offset, incl_len, orig_len });
        }
        // `take` grows the buffer as bytes arrive, so a corrupted length
        // cannot make us allocate gigabytes up front.
        let mut data = Vec::new();
        (&mut self.input).take(incl_len as u64).read_to_end(&mut data)?;
        if data.len() < incl_len as usize {
            return Err(PcapError::TruncatedRecord {
                index,
                offset,
                what: "packet data",
                need: incl_len as u64,
                have: data.len() as u64,
            });
        }
        self.index += 1;
        self.offset += (RECORD_HEADER_LEN + data.len()) as u64;
        let ts_nsec = if self.header.nanos { frac } else { frac * 1000 };
        Ok(Some(Record { ts_sec, ts_nsec, orig_len, data }))
    }
}

impl<R: Read> Iterator for PcapReader<R> {
    type Item = Result<Record, PcapError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let r = self.next_record().transpose();
        if !matches!(r, Some(Ok(_))) {
            self.done = true;
        }
        r
    }
}

/// Reads a whole capture held in memory.
pub fn read_all(bytes: &[u8]) -> Result<(FileHeader, Vec<Record>), PcapError> {
    let r = PcapReader::new(bytes)?;
    let header = *r.header();
    Ok((header, r.collect::<Result<_, _>>()?))
}

/// (swapped, nanos) from the first four bytes, read little-endian.
fn check_magic(b: &[u8]) -> Result<(bool, bool), PcapError> {
    let m = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    match (m, m.swap_bytes()) {
        (MAGIC_USEC, _) => Ok((false, false)),
        (MAGIC_NSEC, _) => Ok((false, true)),
        (_, MAGIC_USEC) => Ok((true, false)),
        (_, MAGIC_NSEC) => Ok((true, true)),
        _ => Err(PcapError::BadMagic { found: u32::from_be_bytes([b[0], b[1], b[2], b[3]]) }),
    }
}

/// A header word: files are little-endian unless the magic said otherwise.
fn word(b: &[u8], swapped: bool) -> u32 {
    let b = [b[0], b[1], b[2], b[3]];
    if swapped {
        u32::from_be_bytes(b)
    } else {
        u32::from_le_bytes(b)
    }
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_full(input: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        w.write(1_700_000_000_123_456, &[1, 2, 3]).unwrap();
        w.write(1_700_000_001_000_000, &[4; 60]).unwrap();
        w.into_inner().unwrap()
    }

    #[test]
    fn round_trip() {
        let (h, recs) = read_all(&sample()).unwrap();
        assert_eq!((h.swapped, h.nanos, h.linktype, h.snaplen), (false, false, LINKTYPE_ETHERNET, DEFAULT_SNAPLEN));
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[0].ts_micros(), 1_700_000_000_123_456);
        assert_eq!(recs[0].data, [1, 2, 3]);
        assert_eq!(recs[1].data, [4; 60]);
        assert_eq!(recs[1].orig_len, 60);
    }

    /// A file written on a big-endian machine: every header word swapped.
    #[test]
    fn reads_the_other_byte_order() {
        let le = sample();
        let mut be = le.clone();
        let swap4 = |b: &mut [u8], at: usize| b[at..at + 4].reverse();
        let swap2 = |b: &mut [u8], at: usize| b[at..at + 2].reverse();
        swap4(&mut be, 0);
        swap2(&mut be, 4);
        swap2(&mut be, 6);
        for at in [8, 12, 16, 20] {
            swap4(&mut be, at);
        }
        let mut at = FILE_HEADER_LEN;
        while at < be.len() {
            let len = u32::from_le_bytes(le[at + 8..at + 12].try_into().unwrap()) as usize;
            for k in 0..4 {
                swap4(&mut be, at + 4 * k);
            }
            at += RECORD_HEADER_LEN + len;
        }
        let (h, recs) = read_all(&be).unwrap();
        assert!(h.swapped);
        assert_eq!(recs, read_all(&le).unwrap().1);
    }

    #[test]
    fn nanosecond_files_keep_their_resolution() {
        let mut f = sample();
        f[0..4].copy_from_slice(&MAGIC_NSEC.to_le_bytes());
        let (h, recs) = read_all(&f).unwrap();
        assert!(h.nanos);
        assert_eq!(recs[0].ts_nsec, 123_456);
    }

    #[test]
    fn damage_is_a_typed_error() {
        let good = sample();
        assert!(matches!(read_all(b"\x0a\x0d\x0d\x0a....").unwrap_err(), PcapError::BadMagic { found: 0x0a0d0d0a }));
        assert!(matches!(read_all(&good[..10]).unwrap_err(), PcapError::TruncatedFileHeader { have: 10 }));
        assert!(matches!(read_all(&good[..2]).unwrap_err(), PcapError::TruncatedFileHeader { have: 2 }));
        assert!(matches!(
            read_all(&good[..30]).unwrap_err(),
            PcapError::TruncatedRecord { index: 0, offset: 24, what: "record header", .. }
        ));
        assert!(matches!(
            read_all(&good[..good.len() - 1]).unwrap_err(),
            PcapError::TruncatedRecord { index: 1, what: "packet data", need: 60, have: 59, .. }
        ));
        let mut big = good.clone();
        big[24 + 8..24 + 12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(read_all(&big).unwrap_err(), PcapError::Snaplen { index: 0, incl_len: u32::MAX, .. }));
        let mut longer = good.clone();
        longer[24 + 12..24 + 16].copy_from_slice(&2u32.to_le_bytes());
        assert!(matches!(read_all(&longer).unwrap_err(), PcapError::LongerThanOriginal { .. }));
        let mut ts = good.clone();
        ts[24 + 4..24 + 8].copy_from_slice(&1_000_000u32.to_le_bytes());
        assert!(matches!(read_all(&ts).unwrap_err(), PcapError::Timestamp { .. }));
        let mut ver = good;
        ver[4] = 1;
        assert!(matches!(read_all(&ver).unwrap_err(), PcapError::Version { major: 1, minor: 4 }));
    }

    #[test]
    fn writer_refuses_frames_past_its_snaplen() {
        let mut w = PcapWriter::with_snaplen(Vec::new(), 10).unwrap();
        assert!(matches!(w.write(0, &[0; 11]), Err(PcapError::WriteTooLong { len: 11, snaplen: 10 })));
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        let good = sample();
        // Every prefix and every single-byte corruption of a valid file.
        for n in 0..=good.len() {
            let _ = read_all(&good[..n]);
        }
        for i in 0..good.len() {
            for v in [0x00, 0xff, 0x80] {
                let mut f = good.clone();
                f[i] = v;
                let _ = read_all(&f);
            }
        }
    }
}
