//! EmbeddedServer: own runtime, port 0, stops on drop.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use poolbench_server::{EmbeddedServer, ServerConfig};

fn fetch(addr: SocketAddr) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    stream
        .write_all(b"GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
        .unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    text
}

fn loopback_port0() -> ServerConfig {
    ServerConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        ..ServerConfig::default()
    }
}

#[test]
fn starts_on_a_free_port_and_stops_on_drop() {
    let server = EmbeddedServer::start(loopback_port0(), 2).unwrap();
    let addr = server.addr();
    assert_ne!(addr.port(), 0);
    let text = fetch(addr);
    assert!(text.starts_with("HTTP/1.1 200 OK"), "{text}");
    assert!(text.ends_with("Hello, World!"), "{text}");
    let stats = server.stats();
    assert_eq!(stats.snapshot().requests, 1);
    drop(server);
    assert!(
        TcpStream::connect(addr).is_err(),
        "still listening after drop"
    );
}

#[test]
fn shutdown_and_bind_errors() {
    let first = EmbeddedServer::start(loopback_port0(), 1).unwrap();
    let addr = first.addr();
    let taken = ServerConfig {
        listen: addr,
        ..ServerConfig::default()
    };
    let err = EmbeddedServer::start(taken, 1).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::AddrInUse, "{err}");
    first.shutdown();
    assert!(TcpStream::connect(addr).is_err());

    let invalid = ServerConfig {
        fail_rate: 2.0,
        ..loopback_port0()
    };
    let err = EmbeddedServer::start(invalid, 1).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
}

#[test]
fn works_when_started_and_dropped_inside_a_runtime() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let server = EmbeddedServer::start(loopback_port0(), 1).unwrap();
        let addr = server.addr();
        let text = tokio::task::spawn_blocking(move || fetch(addr))
            .await
            .unwrap();
        assert!(text.contains("200 OK"));
        drop(server);
    });
}
