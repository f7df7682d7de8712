//! The runner's fork server: one contained `python3` per world server, started once, that forks
//! a clean runner for each episode — an episode then costs a fork (about a millisecond) instead
//! of a sandbox set-up and an interpreter start with its imports (about 35 ms of CPU).
//!
//! Isolation is kept: the fork server lives in the same sandbox an episode's runner had (no host
//! files, no network, its own PID namespace, kernel limits) and dies with its [`Lifeline`]. Each
//! runner it forks gets mount and IPC namespaces of its own, with a fresh `/tmp` and `/dev/shm`,
//! and no capability (see `private_scratch` in `driver.py`): nothing one episode leaves in a file
//! or an IPC object reaches the next. A
//! world server holds one episode at a time, so one sandbox never holds two episodes' code; when
//! an episode ends, or a cell runs past its time, the fork server kills every process in the
//! sandbox that was not there when it started ("sweep"), so nothing an episode started outlives
//! it. The control channel is a `SOCK_SEQPACKET` socket on the fork server's standard input; an
//! episode's channel is a socket pair whose far end travels with the `spawn` message
//! (`SCM_RIGHTS`).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::{UnixDatagram, UnixStream};
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use super::python::{contained_fork_server, RunnerError, DRIVER};
use crate::sandbox::Lifeline;

/// How long the fork server may take to start, and to answer a control message.
const START_TIMEOUT: Duration = Duration::from_secs(20);
const REPLY_TIMEOUT: Duration = Duration::from_secs(10);

/// A world server's fork server: started on first use, restarted once when it fails, and given
/// up on (one runner process per episode instead) when it cannot run here.
pub struct ForkSlot {
    python: String,
    driver: String,
    server: Mutex<Option<ForkServer>>,
    /// The fork server could not start here (the reason was logged once).
    unavailable: AtomicBool,
}

impl ForkSlot {
    /// A slot whose fork servers run `driver` (normally [`DRIVER`]) on `python`.
    pub fn new(python: &str, driver: &str) -> ForkSlot {
        ForkSlot { python: python.to_string(), driver: driver.to_string(), server: Mutex::new(None), unavailable: AtomicBool::new(false) }
    }

    /// A fresh runner's channel, or `None` when the fork server cannot run here.
    pub fn spawn(&self) -> Option<UnixStream> {
        if self.unavailable.load(Ordering::Relaxed) {
            return None;
        }
        let mut server = self.server.lock().unwrap_or_else(|p| p.into_inner());
        for _ in 0..2 {
            if server.is_none() {
                match ForkServer::start_serving(&self.python, &self.driver) {
                    Ok(s) => *server = Some(s),
                    Err(e) => {
                        tracing::info!("the bundled world starts one runner per episode: {e}");
                        self.unavailable.store(true, Ordering::Relaxed);
                        return None;
                    }
                }
            }
            match server.as_mut().map(ForkServer::spawn) {
                Some(Ok(stream)) => return Some(stream),
                // a dead or confused fork server is replaced (dropping it ends its sandbox)
                _ => *server = None,
            }
        }
        None
    }

    /// Kill what an episode started; a fork server that does not answer is replaced.
    pub fn sweep(&self) {
        let mut server = self.server.lock().unwrap_or_else(|p| p.into_inner());
        if server.as_mut().is_some_and(|s| s.sweep().is_err()) {
            *server = None;
        }
    }
}

/// A running fork server.
pub struct ForkServer {
    child: Child,
    control: UnixDatagram,
    _lifeline: Lifeline,
}

impl ForkServer {
    /// Start a fork server in a sandbox. Errors when bubblewrap is not usable (a sweep without a
    /// PID namespace of its own could reach the user's processes) or the interpreter cannot
    /// serve (no `socket.recv_fds`, before Python 3.9); the caller then starts one runner per
    /// episode as before.
    pub fn start(python: &str) -> Result<ForkServer, RunnerError> {
        Self::start_serving(python, DRIVER)
    }

    /// [`ForkServer::start`] with another runner program (`driver`, run with `--zygote`; it
    /// must speak the same control protocol) — the containment tests use a runner that starts
    /// a detached process of its own, as code past the cell filter could.
    pub fn start_serving(python: &str, driver: &str) -> Result<ForkServer, RunnerError> {
        if !crate::sandbox::availability().usable() {
            return Err(RunnerError::ForkServerNeedsSandbox);
        }
        let (ours, theirs) = seqpacket_pair().map_err(RunnerError::os("a control socket for the fork server"))?;
        let (mut cmd, lifeline) = contained_fork_server(python, &["-I", "-c", driver, "--zygote"])?;
        cmd.stdin(Stdio::from(theirs)).stdout(Stdio::null()).stderr(Stdio::null());
        // the fork server lives as long as its world server, longer than the thread that asks
        let child = crate::sandbox::spawn_long_lived(cmd).map_err(RunnerError::os(format!("cannot start `{python}`")))?;
        let mut server = ForkServer { child, control: UnixDatagram::from(ours), _lifeline: lifeline };
        match server.reply(START_TIMEOUT) {
            Ok(r) if r == "ready" => Ok(server),
            Ok(r) => Err(RunnerError::ForkServer(format!("answered `{r}` instead of `ready`"))),
            Err(e) => {
                let status = server.child.try_wait().ok().flatten();
                Err(RunnerError::ForkServer(format!("did not start ({e}{})", status.map(|s| format!("; {s}")).unwrap_or_default())))
            }
        }
    }

    /// A fresh runner for one episode: the workbench's end of its line channel.
    pub fn spawn(&mut self) -> Result<UnixStream, RunnerError> {
        let (ours, theirs) = UnixStream::pair().map_err(RunnerError::os("a socket for the runner"))?;
        send_with_fd(&self.control, b"spawn", theirs.as_raw_fd()).map_err(RunnerError::os("the fork server is gone"))?;
        drop(theirs);
        let reply = self.reply(REPLY_TIMEOUT)?;
        match reply.parse::<u32>() {
            Ok(_) => Ok(ours),
            Err(_) => Err(RunnerError::ForkServer(format!("answered `{reply}` instead of a process id"))),
        }
    }

    /// Kill every process an episode started in this sandbox.
    pub fn sweep(&mut self) -> Result<(), RunnerError> {
        self.control.send(b"sweep").map_err(RunnerError::os("the fork server is gone"))?;
        match self.reply(REPLY_TIMEOUT)? {
            r if r == "ok" => Ok(()),
            r => Err(RunnerError::ForkServer(format!("answered `{r}` to a sweep"))),
        }
    }

    fn reply(&mut self, timeout: Duration) -> Result<String, RunnerError> {
        self.control.set_read_timeout(Some(timeout)).map_err(RunnerError::os("a timeout on the fork server's socket"))?;
        let mut buf = [0u8; 64];
        let n = self.control.recv(&mut buf).map_err(RunnerError::os("no answer from the fork server"))?;
        if n == 0 {
            return Err(RunnerError::ForkServer("closed its control socket".into()));
        }
        Ok(String::from_utf8_lossy(&buf[..n]).into_owned())
    }
}

impl Drop for ForkServer {
    fn drop(&mut self) {
        // killing bwrap's process group takes down the sandbox's PID namespace and all in it
        crate::sandbox::end(&mut self.child);
    }
}

/// A connected pair of `SOCK_SEQPACKET` Unix sockets (message boundaries kept), close-on-exec.
fn seqpacket_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: socketpair(2) fills two descriptors this function then owns.
    if unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC, 0, fds.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Send `message` with one descriptor attached (`SCM_RIGHTS`).
fn send_with_fd(socket: &UnixDatagram, message: &[u8], fd: RawFd) -> io::Result<()> {
    let fd_len = std::mem::size_of::<RawFd>() as libc::c_uint;
    // SAFETY: CMSG_SPACE only computes a size.
    let space = unsafe { libc::CMSG_SPACE(fd_len) } as usize;
    // u64 elements keep the control buffer aligned for cmsghdr
    let mut control = vec![0u64; space.div_ceil(8)];
    let mut iov = libc::iovec { iov_base: message.as_ptr() as *mut libc::c_void, iov_len: message.len() };
    // SAFETY: an all-zero msghdr is a valid empty header; the fields set below point at buffers
    // that live until sendmsg returns.
    let mut header: libc::msghdr = unsafe { std::mem::zeroed() };
    header.msg_iov = &mut iov;
    header.msg_iovlen = 1;
    header.msg_control = control.as_mut_ptr() as *mut libc::c_void;
    header.msg_controllen = space as _;
    // SAFETY: the control buffer holds CMSG_SPACE(one fd) bytes, so the first header and its
    // data fit; the descriptor is written unaligned-safely.
    unsafe {
        let cmsg = libc::CMSG_FIRSTHDR(&header);
        if cmsg.is_null() {
            return Err(io::Error::other("no room for the descriptor"));
        }
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(fd_len) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg) as *mut RawFd, fd);
    }
    // SAFETY: the header and everything it points at are valid for the call.
    let sent = unsafe { libc::sendmsg(socket.as_raw_fd(), &header, libc::MSG_NOSIGNAL) };
    if sent < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}
