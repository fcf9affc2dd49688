//! One plan run as three shards, each in its own network namespace with a
//! veth pair to a bridge in the server's namespace (as pods reach a
//! service), then
//! merged: the merged result must be the plan's, and what the server saw
//! must be what the shards sent. Where network namespaces cannot be made
//! (no root, no `ip`), the shards run as plain processes on loopback, and
//! the test says so.
use crate::turns::ONE_AT_A_TIME;
use base64::Engine;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, SystemTime};

const BIN: &str = env!("CARGO_BIN_EXE_poolbench");
const SHARDS: usize = 3;

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("ip: {e}"))?;
    match out.status.success() {
        true => Ok(()),
        false => Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )),
    }
}

/// The server's namespace and one per shard, wired by veth pairs; all
/// removed when dropped (a namespace takes its interfaces with it).
struct Net {
    server_ns: String,
    shard_ns: Vec<String>,
}

impl Net {
    /// Shard k reaches the server at 10.213.0.1 from 10.213.0.(k+2); the
    /// test itself reads the server's counters at 10.213.250.2.
    fn create() -> Result<Net, String> {
        let id = std::process::id();
        let mut net = Net {
            server_ns: format!("pbsrv{id}"),
            shard_ns: Vec::new(),
        };
        ip(&["netns", "add", &net.server_ns])?;
        let s = net.server_ns.clone();
        ip(&["-n", &s, "link", "set", "lo", "up"])?;
        // The control link from this namespace to the server's.
        let (host, far) = (format!("pbc{id}a"), format!("pbc{id}b"));
        ip(&["link", "add", &host, "type", "veth", "peer", "name", &far])?;
        let wire = |ours: &str, theirs: &str, ns: &str, our_ip: &str, their_ip: &str| {
            ip(&["link", "set", theirs, "netns", ns])?;
            ip(&["addr", "add", our_ip, "dev", ours])?;
            ip(&["link", "set", ours, "up"])?;
            ip(&["-n", ns, "addr", "add", their_ip, "dev", theirs])?;
            ip(&["-n", ns, "link", "set", theirs, "up"])
        };
        let control = wire(&host, &far, &s, "10.213.250.1/30", "10.213.250.2/30");
        if let Err(e) = control {
            let _ = ip(&["link", "del", &host]);
            return Err(e);
        }
        // One bridge in the server's namespace: every shard reaches the
        // server at one address, as pods reach a service.
        ip(&["-n", &s, "link", "add", "br0", "type", "bridge"])?;
        ip(&["-n", &s, "addr", "add", "10.213.0.1/24", "dev", "br0"])?;
        ip(&["-n", &s, "link", "set", "br0", "up"])?;
        for k in 0..SHARDS {
            let ns = format!("pbsh{k}x{id}");
            ip(&["netns", "add", &ns])?;
            net.shard_ns.push(ns.clone());
            let (a, b) = (format!("pbs{k}x{id}a"), format!("pbs{k}x{id}b"));
            ip(&[
                "-n", &ns, "link", "add", &a, "type", "veth", "peer", "name", &b,
            ])?;
            ip(&["-n", &ns, "link", "set", &b, "netns", &s])?;
            ip(&[
                "-n",
                &ns,
                "addr",
                "add",
                &format!("10.213.0.{}/24", k + 2),
                "dev",
                &a,
            ])?;
            ip(&["-n", &ns, "link", "set", &a, "up"])?;
            ip(&["-n", &s, "link", "set", &b, "master", "br0"])?;
            ip(&["-n", &s, "link", "set", &b, "up"])?;
        }
        Ok(net)
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        for ns in self.shard_ns.iter().chain([&self.server_ns]) {
            let _ = ip(&["netns", "del", ns]);
        }
        let _ = ip(&["link", "del", &format!("pbc{}a", std::process::id())]);
    }
}

/// A command, inside `ns` when there is one.
fn command(ns: Option<&str>, args: &[&str]) -> Command {
    match ns {
        Some(ns) => {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", ns, BIN]).args(args);
            c
        }
        None => {
            let mut c = Command::new(BIN);
            c.args(args);
            c
        }
    }
}

/// A process stopped by its PID when dropped.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `poolbench serve` (in `ns`), and the port it listens on.
fn serve(ns: Option<&str>, listen: &str) -> (Proc, u16) {
    let mut child = command(ns, &["serve", "--listen", listen, "--delay", "2ms"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .trim()
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {line:?}"));
    (Proc(child), port)
}

/// The server's counters, over one connection of their own.
fn stats(addr: &str) -> Value {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "GET /_poolbench/stats HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let body = text.split("\r\n\r\n").nth(1).unwrap();
    serde_json::from_str(body).unwrap()
}

fn out_file(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("poolbench-{}-{name}", std::process::id()))
}

fn histogram(encoded: &str) -> hdrhistogram::Histogram<u64> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .unwrap();
    let mut h: hdrhistogram::Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut &bytes[..])
        .unwrap();
    h.auto(true);
    h
}

#[test]
fn three_shards_in_their_own_namespaces_merge_into_the_plan() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let net = match Net::create() {
        Ok(net) => Some(net),
        Err(why) => {
            eprintln!(
                "network namespaces unavailable ({why}): the shards run as plain processes on loopback"
            );
            None
        }
    };
    let (server, port) = match &net {
        Some(n) => serve(Some(&n.server_ns), "0.0.0.0:0"),
        None => serve(None, "127.0.0.1:0"),
    };
    let stats_addr = match &net {
        Some(_) => format!("10.213.250.2:{port}"),
        None => format!("127.0.0.1:{port}"),
    };
    // Far enough ahead for every shard to start and check its target.
    let start = SystemTime::now() + Duration::from_secs(3);
    let start_at = humantime::format_rfc3339_seconds(start + Duration::from_secs(1)).to_string();
    let outputs: Vec<PathBuf> = (0..SHARDS)
        .map(|k| out_file(&format!("shard{k}.json")))
        .collect();
    let shards: Vec<Proc> = (0..SHARDS)
        .map(|k| {
            let target = match &net {
                Some(_) => format!("http://10.213.0.1:{port}/"),
                None => format!("http://127.0.0.1:{port}/"),
            };
            let shard = format!("{k}/{SHARDS}");
            let out = outputs[k].to_str().unwrap().to_string();
            let args = [
                "run",
                &target,
                "-s",
                "pool:6",
                "-c",
                "6",
                "-c",
                "13",
                "-d",
                "1s",
                "--warmup",
                "500ms",
                "--shard",
                &shard,
                "--start-at",
                &start_at,
                "--slot",
                "2500ms",
                "-o",
                &out,
                "-q",
            ];
            let ns = net.as_ref().map(|n| n.shard_ns[k].as_str());
            Proc(
                command(ns, &args)
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap(),
            )
        })
        .collect();
    for mut p in shards {
        let status = p.0.wait().unwrap();
        let mut err = String::new();
        p.0.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        assert!(status.success(), "a shard failed: {err}");
    }
    let seen = stats(&stats_addr);
    drop(server);

    let parts: Vec<Value> = outputs
        .iter()
        .map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap())
        .collect();
    let merged_file = out_file("merged.json");
    let mut args: Vec<&str> = vec!["merge"];
    args.extend(outputs.iter().map(|p| p.to_str().unwrap()));
    args.extend(["-o", merged_file.to_str().unwrap()]);
    let out = Command::new(BIN).args(&args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("merged from 3 shards"), "{text}");
    let merged: Value =
        serde_json::from_str(&std::fs::read_to_string(&merged_file).unwrap()).unwrap();
    for p in outputs.iter().chain([&merged_file]) {
        let _ = std::fs::remove_file(p);
    }

    // Each shard ran its share; 13 workers split 5 + 4 + 4, with a note.
    let hash = &parts[0]["shard"]["plan_hash"];
    for (k, p) in parts.iter().enumerate() {
        assert_eq!(p["shard"]["index"], k);
        assert_eq!(&p["shard"]["plan_hash"], hash);
        let c: Vec<u64> = p["cells"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["concurrency"].as_u64().unwrap())
            .collect();
        assert_eq!(c, [2, if k == 0 { 5 } else { 4 }]);
        assert_eq!(p["cells"][0]["strategy"], "pool:2");
        assert_eq!(p["cells"][0]["errors"]["total"], 0);
    }
    let notes = parts[0]["shard"]["notes"].to_string();
    assert!(notes.contains("c=13 splits 5+4+4 over 3 shards"), "{notes}");

    // The merge is the plan: its cells, their sizes, every shard's counts.
    assert_eq!(merged["merged_shards"], SHARDS);
    assert!(merged.get("shard").is_none());
    let cells = merged["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2);
    for (i, (cell, c)) in cells.iter().zip([6, 13]).enumerate() {
        assert_eq!(cell["strategy"], "pool:6");
        assert_eq!(cell["concurrency"], c);
        assert_eq!(cell["connection_cap"], 6);
        let sum = |key: &str| -> u64 {
            parts
                .iter()
                .map(|p| p["cells"][i][key].as_u64().unwrap())
                .sum()
        };
        assert_eq!(cell["requests"].as_u64().unwrap(), sum("requests"));
        assert_eq!(cell["ok"].as_u64().unwrap(), sum("ok"));
        // Percentiles from the merged histograms: the shards' added.
        let mut h = histogram(
            parts[0]["cells"][i]["histograms"]["latency_ns"]
                .as_str()
                .unwrap(),
        );
        for p in &parts[1..] {
            h.add(histogram(
                p["cells"][i]["histograms"]["latency_ns"].as_str().unwrap(),
            ))
            .unwrap();
        }
        assert_eq!(h.len(), cell["ok"].as_u64().unwrap());
        let p99 = h.value_at_quantile(0.99) as f64 / 1000.0;
        let merged_p99 = cell["latency_us"]["p99"].as_f64().unwrap();
        assert!((merged_p99 - p99).abs() < 1.0, "{merged_p99} against {p99}");
        // The same windows: every shard started the cell within 100 ms of
        // its slot (the first at --start-at, the second 2.5 s later).
        let slot = start_at_unix(&start_at) + 2.5 * i as f64;
        for part in cell["shards"].as_array().unwrap() {
            let t = part["started_unix_s"].as_f64().unwrap();
            assert!(
                (t - slot).abs() < 0.1,
                "shard {} started {:.3} s off its slot",
                part["shard"],
                t - slot
            );
        }
        // The timeline is the shards' added: its measured buckets hold
        // the successes.
        let t = &cell["timeline"];
        let from = t["measure_from_bucket"].as_u64().unwrap() as usize;
        let in_window: u64 = t["ok"].as_array().unwrap()[from..]
            .iter()
            .map(|n| n.as_u64().unwrap())
            .sum();
        let ok = cell["ok"].as_u64().unwrap();
        assert!(
            in_window >= ok && in_window <= ok + ok / 10,
            "{in_window} in the window, {ok} ok"
        );
    }

    // What the server saw is what the shards sent: each shard's preflight
    // (one connection, one request) and its cells'; the stats read is one
    // more connection.
    let sum_cells = |f: &dyn Fn(&Value) -> u64| -> u64 {
        parts
            .iter()
            .flat_map(|p| p["cells"].as_array().unwrap().iter())
            .map(f)
            .sum()
    };
    let n = SHARDS as u64;
    let opened = sum_cells(&|c| c["connections"]["opened"].as_u64().unwrap());
    assert_eq!(
        seen["connections_accepted"].as_u64().unwrap(),
        opened + n + 1,
        "{seen}"
    );
    let sent = sum_cells(&|c| {
        ["warmup_requests", "requests", "after_end", "unfinished"]
            .iter()
            .map(|k| c[*k].as_u64().unwrap())
            .sum()
    });
    assert_eq!(seen["requests"].as_u64().unwrap(), sent + n, "{seen}");
}

fn start_at_unix(s: &str) -> f64 {
    humantime::parse_rfc3339_weak(s)
        .unwrap()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}
