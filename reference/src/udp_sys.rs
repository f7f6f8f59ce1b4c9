//! The few socket calls `std::net::UdpSocket` does not offer, for the UDP
//! driver ([`crate::udp`]): socket buffer sizes, one wait on several sockets
//! with a sub-millisecond timeout (`ppoll`), batched receive and send
//! (`recvmmsg`, `sendmmsg`), and CPU time (`getrusage`) for the bench. This
//! file holds the crate's only `unsafe`; every block says why it is sound.
//! Linux only, like the driver.

use std::io;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

/// `SO_SNDBUFFORCE` / `SO_RCVBUFFORCE` (asm-generic/socket.h; the libc crate
/// exports them only for some targets): like `SO_SNDBUF` / `SO_RCVBUF` but
/// past `net.core.[rw]mem_max`, for a process with CAP_NET_ADMIN.
const SO_SNDBUFFORCE: libc::c_int = 32;
const SO_RCVBUFFORCE: libc::c_int = 33;

fn setsockopt_int(fd: RawFd, level: libc::c_int, name: libc::c_int, value: libc::c_int) -> io::Result<()> {
    // SAFETY: `value` lives across the call and its size is passed with it;
    // the kernel only reads it. A bad fd or option is reported as an error.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            &value as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

fn getsockopt_int(fd: RawFd, level: libc::c_int, name: libc::c_int) -> io::Result<libc::c_int> {
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `value` and `len` are valid for writes of the sizes given and
    // outlive the call.
    let r = unsafe { libc::getsockopt(fd, level, name, &mut value as *mut libc::c_int as *mut libc::c_void, &mut len) };
    if r == 0 {
        Ok(value)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Asks for `bytes` of send and receive buffer: forced past the sysctl
/// ceiling when the process may, else as much as the ceiling allows.
/// Returns the receive buffer the kernel granted (it doubles the request for
/// its bookkeeping).
pub fn set_buffers(sock: &impl AsRawFd, bytes: usize) -> io::Result<usize> {
    let fd = sock.as_raw_fd();
    let v = bytes.min(i32::MAX as usize / 2) as libc::c_int;
    if setsockopt_int(fd, libc::SOL_SOCKET, SO_RCVBUFFORCE, v).is_err() {
        setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, v)?;
    }
    if setsockopt_int(fd, libc::SOL_SOCKET, SO_SNDBUFFORCE, v).is_err() {
        setsockopt_int(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, v)?;
    }
    Ok(getsockopt_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUF)? as usize)
}

/// Waits until one of `read` is readable, `write` (if any) is writable, or
/// `timeout` passes. Interrupted waits return early without error.
pub fn wait(read: &[RawFd], write: Option<RawFd>, timeout: Duration) -> io::Result<()> {
    let mut fds: Vec<libc::pollfd> =
        read.iter().map(|&fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 }).collect();
    if let Some(fd) = write {
        fds.push(libc::pollfd { fd, events: libc::POLLOUT, revents: 0 });
    }
    let ts = libc::timespec {
        tv_sec: timeout.as_secs().min(i32::MAX as u64) as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: `fds` is a valid array of `fds.len()` pollfd the kernel writes
    // `revents` into; `ts` outlives the call; a null signal mask keeps the
    // current one.
    let r = unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, &ts, std::ptr::null()) };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    Ok(())
}

/// Receive buffers for [`recv_batch`]: `n` slots of `size` bytes with their
/// headers, allocated once and reused.
pub struct RecvBatch {
    bufs: Vec<u8>,
    size: usize,
    addrs: Vec<libc::sockaddr_in>,
    iovs: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
    /// Datagrams in the batch after the last [`recv_batch`].
    pub len: usize,
}

// The raw pointers inside point into the struct's own heap buffers, which
// move with it.
unsafe impl Send for RecvBatch {}

impl RecvBatch {
    pub fn new(n: usize, size: usize) -> RecvBatch {
        // SAFETY: sockaddr_in, iovec and mmsghdr are plain C structs for
        // which all-zero bytes are a valid value.
        let zero_addr: libc::sockaddr_in = unsafe { std::mem::zeroed() };
        let zero_iov: libc::iovec = unsafe { std::mem::zeroed() };
        let zero_hdr: libc::mmsghdr = unsafe { std::mem::zeroed() };
        RecvBatch {
            bufs: vec![0; n * size],
            size,
            addrs: vec![zero_addr; n],
            iovs: vec![zero_iov; n],
            hdrs: vec![zero_hdr; n],
            len: 0,
        }
    }

    /// Datagram `i` of the last batch and its sender.
    pub fn get(&self, i: usize) -> (&[u8], SocketAddrV4) {
        let n = self.hdrs[i].msg_len as usize;
        let a = &self.addrs[i];
        let ip = Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr));
        (&self.bufs[i * self.size..i * self.size + n.min(self.size)], SocketAddrV4::new(ip, u16::from_be(a.sin_port)))
    }
}

/// Receives up to the batch's capacity of datagrams from a non-blocking IPv4
/// socket in one call. Ok(0) when none is waiting.
pub fn recv_batch(sock: &impl AsRawFd, b: &mut RecvBatch) -> io::Result<usize> {
    let n = b.hdrs.len();
    for i in 0..n {
        b.iovs[i] = libc::iovec { iov_base: b.bufs[i * b.size..].as_mut_ptr() as *mut libc::c_void, iov_len: b.size };
        let h = &mut b.hdrs[i];
        h.msg_hdr.msg_name = &mut b.addrs[i] as *mut libc::sockaddr_in as *mut libc::c_void;
        h.msg_hdr.msg_namelen = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        h.msg_hdr.msg_iov = &mut b.iovs[i];
        h.msg_hdr.msg_iovlen = 1;
        h.msg_hdr.msg_control = std::ptr::null_mut();
        h.msg_hdr.msg_controllen = 0;
        h.msg_hdr.msg_flags = 0;
        h.msg_len = 0;
    }
    // SAFETY: every header points at this batch's own address slot and iovec,
    // each iovec at a distinct `size`-byte slice of `bufs`; all outlive the
    // call and the kernel writes within the lengths given. The timeout is
    // null (the socket is non-blocking).
    let r =
        unsafe { libc::recvmmsg(sock.as_raw_fd(), b.hdrs.as_mut_ptr(), n as libc::c_uint, 0, std::ptr::null_mut()) };
    if r < 0 {
        b.len = 0;
        let e = io::Error::last_os_error();
        return match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(0),
            _ => Err(e),
        };
    }
    b.len = r as usize;
    Ok(b.len)
}

fn sockaddr(a: SocketAddrV4) -> libc::sockaddr_in {
    // SAFETY: all-zero bytes are a valid sockaddr_in (padding included).
    let mut s: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    s.sin_family = libc::AF_INET as libc::sa_family_t;
    s.sin_port = a.port().to_be();
    s.sin_addr = libc::in_addr { s_addr: u32::from(*a.ip()).to_be() };
    s
}

/// Scratch space for [`SendBatch::send`]: the addresses, iovecs and message
/// headers of one `sendmmsg`, allocated once and reused, so that sending
/// allocates nothing per batch.
pub struct SendBatch {
    addrs: Vec<libc::sockaddr_in>,
    iovs: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
}

// The raw pointers inside are only set and used during one `send` call,
// while the datagrams they point at are borrowed.
unsafe impl Send for SendBatch {}

impl SendBatch {
    /// Room for `n` datagrams per call.
    pub fn new(n: usize) -> SendBatch {
        let n = n.max(1);
        SendBatch { addrs: Vec::with_capacity(n), iovs: Vec::with_capacity(n), hdrs: Vec::with_capacity(n) }
    }

    /// Datagrams one call sends at most.
    pub fn capacity(&self) -> usize {
        self.hdrs.capacity()
    }

    /// Sends the first [`SendBatch::capacity`] of `msgs` (datagram,
    /// destination) from an IPv4 socket in one `sendmmsg` call. Returns how
    /// many left (in order); Ok(0) when a non-blocking socket's buffer is
    /// full for the first one.
    pub fn send<'a>(
        &mut self,
        sock: &impl AsRawFd,
        msgs: impl IntoIterator<Item = (&'a [u8], SocketAddrV4)>,
    ) -> io::Result<usize> {
        let cap = self.capacity();
        self.addrs.clear();
        self.iovs.clear();
        self.hdrs.clear();
        for (b, a) in msgs.into_iter().take(cap) {
            self.addrs.push(sockaddr(a));
            self.iovs.push(libc::iovec { iov_base: b.as_ptr() as *mut libc::c_void, iov_len: b.len() });
        }
        if self.iovs.is_empty() {
            return Ok(0);
        }
        for i in 0..self.iovs.len() {
            // SAFETY: all-zero bytes are a valid mmsghdr (null pointers, zero
            // lengths).
            let mut h: libc::mmsghdr = unsafe { std::mem::zeroed() };
            h.msg_hdr.msg_name = &mut self.addrs[i] as *mut libc::sockaddr_in as *mut libc::c_void;
            h.msg_hdr.msg_namelen = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
            h.msg_hdr.msg_iov = &mut self.iovs[i];
            h.msg_hdr.msg_iovlen = 1;
            self.hdrs.push(h);
        }
        // SAFETY: the vectors were filled to at most their capacity, so
        // nothing moved after the pointers were taken; each header points at
        // its own address and iovec, each iovec at a caller's datagram
        // borrowed for 'a, which outlives the call. The kernel only reads
        // them (and writes msg_len into the headers, which are ours).
        let r = unsafe { libc::sendmmsg(sock.as_raw_fd(), self.hdrs.as_mut_ptr(), self.hdrs.len() as libc::c_uint, 0) };
        if r < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(0),
                _ => Err(e),
            };
        }
        Ok(r as usize)
    }
}

/// CPU time (user + system) this process has used so far.
pub fn cpu_time() -> Duration {
    // SAFETY: all-zero bytes are a valid rusage.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is valid for writes and outlives the call.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return Duration::ZERO;
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// CPU time (user + system) the calling thread has used so far.
pub fn thread_cpu_time() -> Duration {
    // SAFETY: all-zero bytes are a valid rusage.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is valid for writes and outlives the call.
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) } != 0 {
        return Duration::ZERO;
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}
