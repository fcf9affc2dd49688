//! Local addresses a target's connections are bound to (`--source`), taken
//! in turn: each bound with the port left to `connect` (Linux's
//! `IP_BIND_ADDRESS_NO_PORT`), so ports are limited per 4-tuple, not per
//! bind, and N addresses give N times one address's ephemeral ports.
use crate::TargetOptions;
use poolbench_model::expand_sources;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use tokio::net::{TcpSocket, TcpStream};

/// The source addresses of one target, shared by its clones; empty when
/// the kernel picks (the default).
#[derive(Clone, Debug, Default)]
pub struct Sources(Option<Arc<Ring>>);

#[derive(Debug)]
struct Ring {
    addrs: Vec<IpAddr>,
    next: AtomicUsize,
}

impl Sources {
    /// `addrs` (expanded `--source`), checked for `target`: the same
    /// address family, and each one can be bound here. A one-line error
    /// otherwise.
    pub fn new(addrs: Vec<IpAddr>, target: SocketAddr) -> Result<Sources, String> {
        if addrs.is_empty() {
            return Ok(Sources::default());
        }
        for &ip in &addrs {
            if ip.is_ipv4() != target.is_ipv4() {
                return Err(format!(
                    "--source {ip}: another address family than the target {target}"
                ));
            }
            socket_at(ip).map_err(|e| format!("--source {ip}: cannot bind to it here: {e}"))?;
        }
        Ok(Sources(Some(Arc::new(Ring {
            addrs,
            next: AtomicUsize::new(0),
        }))))
    }

    /// The addresses `options.source` names, checked for connections to
    /// `target` (each can be bound, of the target's family).
    pub fn of_options(options: &TargetOptions, target: SocketAddr) -> Result<Sources, String> {
        Sources::new(expand_sources(&options.source)?, target)
    }

    /// The addresses, in turn order (empty: the kernel picks).
    pub fn addrs(&self) -> &[IpAddr] {
        self.0.as_ref().map_or(&[], |r| &r.addrs)
    }

    /// A TCP connection to `addr` from the next source address (or from
    /// where the kernel picks), not yet timed out or tuned.
    pub(crate) async fn connect(&self, addr: SocketAddr) -> io::Result<TcpStream> {
        let Some(ring) = &self.0 else {
            return TcpStream::connect(addr).await;
        };
        let turn = ring.next.fetch_add(1, Relaxed) % ring.addrs.len();
        socket_at(ring.addrs[turn])?.connect(addr).await
    }
}

/// A socket bound to `ip`, its port chosen at connect.
fn socket_at(ip: IpAddr) -> io::Result<TcpSocket> {
    let socket = match ip {
        IpAddr::V4(_) => TcpSocket::new_v4()?,
        IpAddr::V6(_) => TcpSocket::new_v6()?,
    };
    #[cfg(target_os = "linux")]
    if ip.is_ipv4() {
        use nix::sys::socket::{setsockopt, sockopt::IpBindAddressNoPort};
        setsockopt(&socket, IpBindAddressNoPort, &true).map_err(io::Error::from)?;
    }
    socket.bind(SocketAddr::new(ip, 0))?;
    Ok(socket)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn connections_take_the_sources_in_turn() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let to = listener.local_addr().unwrap();
            let addrs = vec![v4("127.0.0.2"), v4("127.0.0.3"), v4("127.0.0.4")];
            let sources = Sources::new(addrs.clone(), to).unwrap();
            let mut seen = Vec::new();
            let mut held = Vec::new();
            for _ in 0..6 {
                let s = sources.connect(to).await.unwrap();
                seen.push(s.local_addr().unwrap().ip());
                held.push(s);
            }
            let (_, peer) = listener.accept().await.unwrap();
            assert_eq!(peer.ip(), addrs[0]);
            assert_eq!(seen, [&addrs[..], &addrs[..]].concat());
        });
    }

    #[test]
    fn sources_that_cannot_serve_the_target_are_refused() {
        let to: SocketAddr = "127.0.0.1:80".parse().unwrap();
        let err = Sources::new(vec![v4("::1")], to).unwrap_err();
        assert_eq!(
            err,
            "--source ::1: another address family than the target 127.0.0.1:80"
        );
        // TEST-NET-1 is never this machine's.
        let err = Sources::new(vec![v4("192.0.2.1")], to).unwrap_err();
        assert!(
            err.starts_with("--source 192.0.2.1: cannot bind to it here: "),
            "{err}"
        );
        assert!(Sources::new(vec![], to).unwrap().addrs().is_empty());
    }
}
