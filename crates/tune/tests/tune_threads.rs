//! The load threads the search chooses (searcher/threads.rs), on
//! simulated services whose generator has 2 cores: one thread kept when a
//! second takes the service's cores, one per core when one thread holds
//! the load back, at a low level or only at the client's load; never
//! chosen at one or two requests in flight.
use crate::tune_loop::{trail, tune_seeded, Service};
use poolbench_model::{GeneratorThreads, TunePhase, TuneResult};
use std::time::Duration;

fn search(service: Service) -> TuneResult {
    tune_seeded(service, 64, &["pool"], Duration::from_secs(60), 7)
}

/// The comparison the search made (it must have made one).
fn compared(r: &TuneResult) -> GeneratorThreads {
    r.generator_threads
        .clone()
        .unwrap_or_else(|| panic!("the threads were not compared\n{}", trail(r)))
}

/// The search measured the service, not one thread's ceiling: its best
/// capacity point and its pick both near the service's 150,000 req/s.
fn carried_the_service(r: &TuneResult) {
    assert!(best_capacity(r) > 140_000.0, "{}", trail(r));
    let x = r.recommendation.as_ref().expect("a pool").throughput_rps;
    assert!(x > 135_000.0, "{x}\n{}", trail(r));
}

/// The best capacity point's throughput.
fn best_capacity(r: &TuneResult) -> f64 {
    r.points
        .iter()
        .filter(|p| p.phase == TunePhase::Capacity)
        .map(|p| p.throughput_rps)
        .fold(0.0, f64::max)
}

#[test]
fn a_second_thread_that_takes_the_services_cores_is_not_kept() {
    // 150,000 req/s at most (8 at once, 53 µs each); one thread could
    // carry 200,000, two carry 0.7× what the service gives.
    let service = Service {
        noise: 0.03,
        generator: Some((200_000.0, 0.7)),
        ..Service::new(8, 0.053)
    };
    let r = search(service);
    let g = compared(&r);
    assert_eq!(g.threads, 1, "{g:?}\n{}", trail(&r));
    assert!(g.in_flight >= 4, "compared at {} in flight", g.in_flight);
    assert!(g.many_rps < 0.8 * g.one_rps, "{g:?}");
    // The search went on with one thread: the service's own capacity.
    carried_the_service(&r);
}

#[test]
fn one_thread_that_holds_the_load_back_gives_way_to_one_per_core() {
    // The service gives 150,000 req/s; one thread carries 60,000.
    let service = Service {
        noise: 0.03,
        generator: Some((60_000.0, 1.0)),
        ..Service::new(8, 0.053)
    };
    let r = search(service);
    let g = compared(&r);
    assert_eq!(g.threads, 2, "{g:?}\n{}", trail(&r));
    assert!(g.many_rps > 1.2 * g.one_rps, "{g:?}");
    // The level compared was measured again with both threads, and the
    // capacity read past one thread's ceiling.
    carried_the_service(&r);
}

#[test]
fn an_idle_generator_is_not_compared() {
    // 8 at once, 5 ms each: 1,600 req/s, far below one thread's 60,000.
    let service = Service {
        generator: Some((60_000.0, 1.0)),
        ..Service::new(8, 5.0)
    };
    let r = search(service);
    assert!(r.generator_threads.is_none(), "{:?}", r.generator_threads);
    assert!(r.recommendation.is_some(), "{}", trail(&r));
}

#[test]
fn one_thread_that_lags_at_the_clients_load_gives_way_without_being_busy() {
    // 64 at once, 5 ms each: 12,800 req/s. From 32 in flight one thread
    // carries 0.8x, at a fifth of a core (PostgreSQL `pg_sleep` at 64).
    let service = Service {
        noise: 0.02,
        generator: Some((1e9, 1.0)),
        lag: Some((32, 0.8)),
        ..Service::new(64, 5.0)
    };
    let r = search(service);
    let g = compared(&r);
    assert_eq!((g.threads, g.in_flight), (2, 64), "{g:?}\n{}", trail(&r));
    let x = r.recommendation.as_ref().expect("a pool").throughput_rps;
    assert!(x > 0.9 * 12_800.0, "{x}\n{}", trail(&r));
}

#[test]
fn one_thread_kept_at_a_low_level_is_compared_again_at_the_clients_load() {
    // nginx at c=100 on 2 cores: 150,000 req/s from 8 at once. One thread
    // keeps up at 8 in flight (busy there, so compared and kept), and
    // from 32 carries 0.7x what two do.
    let service = Service {
        noise: 0.02,
        generator: Some((200_000.0, 1.0)),
        lag: Some((32, 0.7)),
        ..Service::new(8, 0.053)
    };
    let r = search(service);
    let g = compared(&r);
    assert_eq!((g.threads, g.in_flight), (2, 64), "{g:?}\n{}", trail(&r));
    // Compared at 8 first: the levels above it were measured again with
    // two threads, so no level reads one thread's lag.
    let lagging = r
        .points
        .iter()
        .filter(|p| p.phase == TunePhase::Capacity && p.in_flight >= 32)
        .filter(|p| p.throughput_rps < 0.85 * 150_000.0)
        .count();
    assert_eq!(lagging, 0, "{}", trail(&r));
    carried_the_service(&r);
}
