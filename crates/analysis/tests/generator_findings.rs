//! Findings about the generator and its machine: CPU saturation, a busy
//! machine, hiccups; and the batching server the pipelining probe found.
use crate::support::{cell, evidence, finding, ids, run};
use poolbench_model::{PipelineProbe, RunResult, ShardPart};

fn cpu(own: f64, machine: f64) -> RunResult {
    run(vec![cell("pool:4", 4)
        .throughput(400.0)
        .cpu(own, machine)
        .build()])
}

fn has(r: &RunResult, id: &str) -> bool {
    ids(r).iter().any(|i| i == id)
}

#[test]
fn generator_saturated_or_machine_busy() {
    // poolbench alone at 92% of the cores.
    assert_eq!(
        evidence(&cpu(0.92, 0.95), "generator-saturated"),
        ["pool:4 c=4: poolbench used 92% of the cores, the machine was 95% busy"]
    );
    // A saturated machine with poolbench a quarter of it: its cause too.
    assert!(has(&cpu(0.3, 0.95), "generator-saturated"));
    assert!(!has(&cpu(0.3, 0.95), "machine-busy"));
    // With poolbench below a quarter, the others saturated it.
    assert!(!has(&cpu(0.2, 0.95), "generator-saturated"));
    assert_eq!(
        evidence(&cpu(0.2, 0.95), "machine-busy"),
        ["pool:4 c=4: poolbench used 20% of the cores, the machine was 95% busy"]
    );
    // Below 90% busy, neither.
    for r in [cpu(0.3, 0.85), cpu(0.85, 0.89), cpu(0.1, 0.89)] {
        assert!(!has(&r, "generator-saturated") && !has(&r, "machine-busy"));
    }
    // Unknown CPU (another OS): nothing to say.
    let mut unknown = cpu(0.1, 0.1);
    unknown.cells[0].generator_cpu = None;
    unknown.cells[0].machine_cpu = None;
    assert!(!has(&unknown, "generator-saturated") && !has(&unknown, "machine-busy"));
}

#[test]
fn generator_saturated_names_the_shard_of_a_merge() {
    let part = |shard: usize, own: f64| ShardPart {
        shard,
        cell: "pool:2 c=2".into(),
        started_unix_s: None,
        requests: 200,
        throughput_rps: 200.0,
        p99_us: 5000.0,
        connections_opened: 2,
        generator_cpu: Some(own),
        machine_cpu: Some(0.95),
    };
    // The merged cell's own figures say nothing; its shards' do.
    let mut r = cpu(0.1, 0.1);
    r.cells[0].shards = vec![part(0, 0.1), part(1, 0.5)];
    assert_eq!(
        evidence(&r, "generator-saturated"),
        ["pool:4 c=4: shard 1 (pool:2 c=2): poolbench used 50% of its cores, its machine was 95% busy"]
    );
    // machine-busy reads no shards.
    assert!(!has(&r, "machine-busy"));
}

#[test]
fn hiccups_above_a_millisecond_and_a_tenth_of_the_p99() {
    let r = |p99_ms: f64, hiccup_ms: f64| {
        run(vec![cell("pool:4", 4)
            .throughput(400.0)
            .p99_ms(p99_ms)
            .hiccup_p999_ms(hiccup_ms)
            .build()])
    };
    // p99 20 ms: a tenth is 2 ms.
    assert_eq!(
        evidence(&r(20.0, 2.5), "generator-hiccups"),
        ["pool:4 c=4: hiccup p99.9 2.5 ms and max 2.5 ms (a 1 ms sleep woke that late) against a measured p99 of 20.0 ms"]
    );
    assert!(finding(&r(20.0, 1.9), "generator-hiccups").is_none());
    // p99 5 ms: the floor, 1 ms, is the bound.
    assert!(finding(&r(5.0, 1.1), "generator-hiccups").is_some());
    assert!(finding(&r(5.0, 0.9), "generator-hiccups").is_none());
    // No meter readings: nothing.
    let mut none = r(5.0, 3.0);
    none.cells[0].generator_hiccups_us.count = 0;
    assert!(finding(&none, "generator-hiccups").is_none());
}

fn probe(reads: u64, batched: u64, responses: u64) -> RunResult {
    let mut r = run(vec![cell("pool:4", 4).throughput(400.0).build()]);
    r.pipeline = Some(PipelineProbe {
        depth: 16,
        rounds: 10,
        reads,
        responses,
        batched_reads: batched,
        mean_per_read: responses as f64 / reads as f64,
    });
    r
}

#[test]
fn batching_server_from_the_pipeline_probe() {
    // 160 responses in 20 reads, each carrying several.
    let p = finding(&probe(20, 20, 160), "batching-server").expect("8 responses per read");
    assert!(p.cells.is_empty());
    assert_eq!(
        p.evidence,
        ["16 pipelined requests per round: 8.0 responses per read on average, 20 of 20 reads carried several"]
    );
    // One response per read: an honest server.
    assert!(finding(&probe(160, 0, 160), "batching-server").is_none());
    // 1.5 per read and half the reads batched is the bound.
    assert!(finding(&probe(20, 10, 30), "batching-server").is_some());
    assert!(finding(&probe(20, 9, 30), "batching-server").is_none());
    assert!(finding(&probe(20, 20, 29), "batching-server").is_none());
    // No probe, no finding.
    let mut none = probe(20, 20, 160);
    none.pipeline = None;
    assert!(finding(&none, "batching-server").is_none());
}
