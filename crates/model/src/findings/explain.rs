//! What each finding means, why it matters and what to do about it, as
//! `poolbench explain ID` prints it and docs/findings.md lists it.
use super::id::Id;

/// One finding's explanation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Explanation {
    /// What it means: when poolbench raises it, with the thresholds.
    pub means: &'static str,
    /// Why it matters for the answer a run or tune gives.
    pub matters: &'static str,
    /// What to do about it.
    pub fix: &'static str,
}

/// The explanation of `id` (`None`: an id this version does not know).
pub fn explain(id: &Id) -> Option<Explanation> {
    EXPLANATIONS
        .iter()
        .find(|(known, _)| known == id)
        .map(|(_, e)| *e)
}

/// Every known id's explanation, in the order of the ids' names.
const EXPLANATIONS: &[(Id, Explanation)] = &[
    (
        Id::BatchingServer,
        Explanation {
            means: "The pipelining probe (`--pipeline D`) sent D requests ahead on one HTTP/1.1 \
                connection, and the server answered them in batches: 1.5 responses or more \
                per read on average, and at least half of the reads carried more than one \
                response.",
            matters: "A server that answers pipelined requests in one write looks much faster \
                  under pipelining than it is for clients that send a request and wait for \
                  its answer, as real API clients do. Pipelined throughput against it says \
                  nothing about a real API.",
            fix: "Judge this server by runs without pipelining, with the strategy your clients \
              use. Do not trust benchmarks of it that pipeline.",
        },
    ),
    (
        Id::ClientChurn,
        Explanation {
            means: "Found by `serve --check-client`: over at least 20 requests, the client opened \
                a connection for every two requests or more often, and the client closed or \
                reset at least half of the connections that ended. The usual causes are no \
                keep-alive, a process per request (curl in a loop), or an idle cap below the \
                client's concurrency (Go's `net/http` keeps 2 idle connections per host by \
                default).",
            matters: "Each new connection adds a connect (and a TLS handshake, if any) to the \
                  request's latency and work to the server. At high rates the closed \
                  connections use up the client's ephemeral ports.",
            fix: "Keep connections alive, and let the client keep as many idle connections as \
              it has requests in flight at its peak (in Go, `MaxIdleConnsPerHost`). Name \
              the library with `--client` and the finding gives its setting.",
        },
    ),
    (
        Id::ClientHiddenCap,
        Explanation {
            means: "Found by `serve --check-client`: the client's requests in flight never went \
                above one count (2 or more) and sat at exactly that count for at least 30% \
                of the busy time, over at least 0.3 s of busy time. It is named when that \
                count is the default limit of the library given with `--client` (of any \
                library poolbench knows, without `--client`) or is below an `--expect \
                in-flight>=N`, and not when `--expect in-flight=N` or `pool=N` names that \
                count or one HTTP/2 connection at its streams limit explains it.",
            matters: "The requests past the limit queue inside the client, where the server and \
                  its metrics do not see them: the service looks idle while callers wait. \
                  Common defaults are 100 (aiohttp, httpx), 50 (hackney, Finch) and 5 per \
                  host (OkHttp).",
            fix: "Raise the library's limit to the concurrency you need; name the library with \
              `--client` and the finding gives its setting. If the limit is yours, say so \
              with `--expect in-flight=N`.",
        },
    ),
    (
        Id::ClientIdleRace,
        Explanation {
            means: "Found by `serve --check-client` with a keep-alive timeout on the server \
                (`--keepalive-timeout`): the server closed a connection for idleness and the \
                client sent more requests after that, or a request reused a connection that \
                had been idle for 90% of the timeout or more.",
            matters: "A client that keeps connections idle longer than the server does will \
                  sometimes send a request just as the server closes the connection. On a \
                  real network that request meets a reset, which the client reports as a \
                  failed request or retries.",
            fix: "Close idle connections in the client before the server does (at about 90% of \
              the server's keep-alive timeout), or retry an idempotent request once on a \
              reset. Name the library with `--client` and the finding gives its setting.",
        },
    ),
    (
        Id::ClientSingleConnection,
        Explanation {
            means: "Found by `serve --check-client`: the client sent every HTTP/2 request (gRPC \
                included) on one connection at a time, and that connection had every stream \
                the server allows open for at least 25% of the busy time. The built-in \
                server's limit is `--max-concurrent-streams`, 200 by default.",
            matters: "The requests past the streams limit wait in the client for a stream, \
                  whatever the server could take. A gRPC channel with more calls at once \
                  than the limit does this.",
            fix: "Open more connections: at least the concurrent requests ÷ the streams limit, \
              rounded up (for grpcio, several channels, each with its own subchannel pool). \
              Name the library with `--client` and the finding gives its setting.",
        },
    ),
    (
        Id::ClosedLoopCeiling,
        Explanation {
            means: "In a closed loop, c workers that each wait for their answer cannot exceed c ÷ \
                the service time requests per second; a cell whose throughput is at least \
                90% of that ceiling is at it. The service time is the server's own mean (the \
                built-in server or a remote `poolbench serve`), else the fastest mean \
                request time of any cell in the run.",
            matters: "Throughput at the ceiling measures the load's concurrency, not the strategy \
                  or the pool, so cells at it cannot be ranked. When every cell the \
                  recommendation could pick is at the ceiling, `run` recommends none.",
            fix: "Raise `-c` (`--concurrency`) until throughput stops growing, so that the \
              strategies rather than the load set it, or use an open loop with `--rate`.",
        },
    ),
    (
        Id::PipelineRefused,
        Explanation {
            means: "On a pipelined strategy (`pipeline:NxD`) the server answered about one \
                request per connection (fewer than 2 answers a connection opened), and the \
                requests written behind that answer went unanswered: failed as resets when the \
                server closed the connection (it answers one request per connection, \
                `Connection: close`, or drops what was sent ahead), or timed out when it kept \
                the connection open and stopped reading or answering.",
            matters: "Pipelining needs a server that keeps the connection and answers every \
                  request written on it in order. Against one that does not, every connection \
                  carries one request and fails the rest: the cell measures reconnects and \
                  failures, not pipelining.",
            fix: "Use a pool (`pool:N`) against this server, or enable keep-alive on it. \
              `tune -s pipeline` checks this before any load and skips the family with the \
              reason.",
        },
    ),
    (
        Id::HeadOfLine,
        Explanation {
            means: "On a pipelined strategy (`pipeline:NxD`) requests waited behind earlier \
                answers on their connection: HTTP/1.1 answers come in the order of the \
                requests, so a request written behind a slow one waits for it. Its share is \
                the mean wait behind the answer before it (from the request's write until \
                that answer was whole) over the mean request time; named from 10%.",
            matters: "Pipelining keeps few connections busy, but every slow answer holds up \
                  the D − 1 written behind it: the tail of the service becomes the tail of \
                  every request on that connection. Most servers also process pipelined \
                  requests one at a time, so a connection serves no faster than one \
                  request at a time would.",
            fix: "Pipeline less deep (a smaller D) over more connections, or use a pool \
              (`pool:N`) or HTTP/2, whose streams do not wait for each other's answers. \
              Compare `pipeline:NxD` with `pool:N×D` at the same load to see what the \
              blocking costs.",
        },
    ),
    (
        Id::DelayedAck,
        Explanation {
            means: "The first byte of the answer came quickly and the last much later: a median \
                gap of 30 to 250 ms between them, at least 80% of the median request time, \
                the median time to the first byte at most a quarter of the gap, on answers \
                of at most 64 KiB on average. It is the pattern of a server that writes its \
                answer in two writes with Nagle's algorithm on, while the client delays its \
                ACK (40 ms on Linux).",
            matters: "The latency measured is the delayed-ACK timer, not the service: each \
                  request waits for it whatever the service's own time. Comparisons of \
                  strategies then measure the timer, and `tune` does not say how many \
                  requests the service serves at once.",
            fix: "Fix the server: write each answer in one write, or set `TCP_NODELAY` on its \
              sockets. A client that sets `TCP_QUICKACK` does not wait either.",
        },
    ),
    (
        Id::Errors,
        Explanation {
            means: "Requests failed in the cell. The evidence gives the error rate, the count of \
                each kind (`refused`, `reset`, `timeout`, `checkout_timeout`, \
                `nested_checkout`, `status`, `protocol`) and, when the errors all fall \
                within less than 80% of the measurement (in the cell's first run), the \
                stretch when they came.",
            matters: "Failed requests are not in the latency figures, so a cell with errors can \
                  look faster than it was. The recommendation leaves out cells that failed \
                  more than 1% of their requests.",
            fix: "Read the kinds: `timeout` points to a slow or frozen target or a short \
              `--timeout`, `checkout_timeout` to a pool too small for the load \
              (`--checkout-timeout`), `refused` and `reset` to a target that went away or \
              cut connections, `status` to the service itself. Fix the cause, or lower the \
              load, and run again.",
        },
    ),
    (
        Id::FewSamples,
        Explanation {
            means: "A cell had fewer than 3 samples, or its samples all had the same throughput \
                (a 95% confidence interval of zero). The samples are the cell's repetitions \
                (`--reps`), or its batch samples with `--batch K`.",
            matters: "Without a spread there is no confidence interval, so a difference between \
                  two cells may be noise. The report cannot tell a tie from a win, and \
                  `compare` needs 3 repetitions or more on both sides to test a change.",
            fix: "Run each cell at least 3 times with `--reps 3`, or time batches of requests \
              with `--batch K` (at least `--samples` batches per cell, 5 by default).",
        },
    ),
    (
        Id::FleetOvercommit,
        Explanation {
            means: "Raised by `tune --replicas`: the most replicas that run at once, a rolling \
                update's surge included (`--surge`, 25% by default), times the pool per \
                replica exceed the fleet's connection limit. That limit is the lower of the \
                service's healthy in-flight level (its knee, or how many it serves at once, \
                below its cliff) and the server's own connection limit where poolbench can \
                read it. A `run` is one process and never raises it.",
            matters: "Every replica opening the single-process pick multiplies the connections by \
                  the replica count. Together they push the service past its knee or the \
                  server past its connection limit, where connections are refused or \
                  requests queue.",
            fix: "Set the pool per replica the finding gives, which fits the fleet's connection \
              limit. If even one connection per replica is over it, run fewer replicas or \
              raise the server's limit.",
        },
    ),
    (
        Id::GeneratorHiccups,
        Explanation {
            means: "poolbench's hiccup meter, a thread that sleeps 1 ms in a loop, woke late: its \
                p99.9 delay was above 1 ms and above 10% of the cell's measured p99. The \
                load threads were held up the same way.",
            matters: "Part of the reported tail latency may be the generator's own stalls, not \
                  the target's. In `tune`, hiccups of 20 ms or more at their p99 that are \
                  also at least half the measured p99 mark the generator's limit, and the \
                  search stops raising the load there.",
            fix: "Run poolbench on a quieter machine, or one with more cores, apart from the \
              target. When one machine cannot carry the load, split it over several with \
              `--shard` and `poolbench merge`.",
        },
    ),
    (
        Id::GeneratorSaturated,
        Explanation {
            means: "The CPU was saturated while the cell ran and poolbench was a cause: poolbench \
                (with the built-in server, when it runs in the same process) used at least \
                90% of the cores, or the machine was at least 90% busy with poolbench using \
                at least 25% of the cores. In merged results each shard is judged on its \
                own machine, and the evidence names it.",
            matters: "A saturated generator sends late and times late, so the figures may measure \
                  poolbench rather than the target: throughput capped, latency inflated. In \
                  `tune`, a point where poolbench used 90% of the cores or more stops the \
                  search from raising the load.",
            fix: "Run poolbench on its own machine, apart from the target, or on one with more \
              cores. When one machine cannot carry the load, split it over several with \
              `--shard` and `poolbench merge`.",
        },
    ),
    (
        Id::IdleHoard,
        Explanation {
            means: "Found by `poolbench census`: at least 5 client connections had been idle \
                longer than `--idle-after` (60 s by default), and they were at least 10% of \
                the connections the server allows clients (of those held, where the limit \
                is unknown).",
            matters: "Idle connections hold slots of the server's connection limit that other \
                  clients, a deploy's surge or a restarting replica could use. The server \
                  can refuse new connections while many of its slots sit idle.",
            fix: "In the pools of the clients the evidence names, set an idle timeout below the \
              `--idle-after` time, or a smaller minimum of idle connections, so that they \
              give the slots back.",
        },
    ),
    (
        Id::IdleReuseRace,
        Explanation {
            means: "The server closed connections while they sat idle in the client's pool, \
                after at least 250 ms idle, and the run met them: the pool found them closed \
                at checkout and opened new ones, or a request was sent on one and was sent \
                again on a new connection or failed. The evidence gives how long they had \
                idled and the longest idle after which a connection still worked: the \
                server's idle close lies between.",
            matters: "The client keeps idle connections longer than the server does. Each such \
                  connection costs a reconnect inside the measurement, and on a real network \
                  some requests sent on one fail with a reset or an end of stream.",
            fix: "Set the client's idle timeout below the server's (the evidence names the \
              settings of common clients for the target's protocol), or raise the server's. \
              `run --think-time D` reproduces the race, and `tune` measures the server's \
              idle close and gives the value to set.",
        },
    ),
    (
        Id::MachineBusy,
        Explanation {
            means: "The machine was at least 90% busy while the cell ran and poolbench used less \
                than 25% of the cores: other processes kept the CPU saturated. Cells merged \
                from shards are not judged by it.",
            matters: "poolbench, and the target if it runs on the same machine, competed with \
                  other processes for the CPU, so the figures show that contention as well \
                  as the strategy and the service. When poolbench itself is a cause, the \
                  finding is `generator-saturated` instead.",
            fix: "Stop the other load, or move to a quiet machine, and run the cell again. A \
              target on the same machine counts as other load: give it a machine of its \
              own.",
        },
    ),
    (
        Id::NestedCheckout,
        Explanation {
            means: "A task that held a connection from the pool waited for a second one from the \
                same pool, or was refused one at once with `--fail-on-nested` (error kind \
                `nested_checkout`). `--nested` makes every request do this.",
            matters: "When every connection is held by a task waiting for its second, no task can \
                  go on: the pool deadlocks until the checkout timeout fails the waits. A \
                  pool free of that deadlock needs at least c×(2−1)+1 = c+1 connections for \
                  c tasks holding two each.",
            fix: "Do not take a second connection while holding one: pass the held connection \
              down, or release it first. Otherwise size the pool to at least c+1 (`--pool`).",
        },
    ),
    (
        Id::NestedCheckoutStarvation,
        Explanation {
            means: "In a poolbench service (`serve --db`, read from the server's counters), \
                handlers that take more than one database connection per request waited for \
                another from the same pool, and either some waits hit the pool's timeout \
                (`--db-timeout`) or the pool (`--db-pool` plus `--db-overflow`) was smaller \
                than T×(C−1)+1 for T concurrent requests holding C connections each.",
            matters: "Once every connection is held by a handler waiting for its next one, the \
                  pool deadlocks until the timeout and the requests fail with 503. What looks \
                  like a slow or failing service is its own pool.",
            fix: "Take one connection per request and pass it down, which removes the deadlock. \
              Otherwise size the pool to at least T×(C−1)+1 (`--db-pool`, `--db-overflow`), \
              which the evidence computes.",
        },
    ),
    (
        Id::NotAchieved,
        Explanation {
            means: "The load did not reach what was asked, in a cell without a ramp: a strategy \
                that fills its cap (`pool`, `round-robin`, `least-loaded`, `shared`, \
                `partitioned`) opened fewer connections than the cap in a closed loop with \
                at least as many workers, the server saw fewer connections than the client \
                had open, the achieved rate was below 95% of `--rate`, or in a closed loop \
                Little's law (throughput × mean latency) gave fewer than 90% of the c \
                workers in flight.",
            matters: "The cell measured a lighter load than its label says, so comparing it with \
                  other cells at the same c, pool size or rate compares different loads.",
            fix: "Read which shortfall it was. Connections not opened, or not seen by the \
              server, point to a limit on the way (file descriptors, a proxy, the server's \
              connection limit); a rate not kept points to `--max-inflight` or a slow or \
              saturated generator; workers not all in flight point to time outside \
              successful requests, such as failures or `--think-time`.",
        },
    ),
    (
        Id::Outage,
        Explanation {
            means: "The target stopped answering: for at least 3 consecutive 100 ms buckets of \
                the cell's timeline (its first run), every attempt failed and none \
                succeeded, in a cell where connections were refused or reset. The evidence \
                gives the window and when the target answered again, if it did.",
            matters: "The cell's figures mix the time the target was down with the time it \
                  served, and the window's errors are not the strategy's. A target that \
                  freezes without refusing or cutting connections is a `stall` instead.",
            fix: "Find why the target went away in that window (a restart, a crash, a deploy) \
              in its own logs. The window also shows how long the pool took to recover; run \
              again for figures of a healthy target.",
        },
    ),
    (
        Id::NearConnectionLimit,
        Explanation {
            means: "Found by `poolbench census`: the server already holds 90% or more of the \
                connections clients may use (its connection limit less its reserved \
                slots).",
            matters: "What is left is less than a deploy's surge or a restarting replica may \
                  open, and those connections will be refused. Any pool size a `run` or \
                  `tune` suggests has to fit in what is left.",
            fix: "Lower the pools of the clients that hold the connections (the census groups \
              them by address, user and application), give idle ones back with an idle \
              timeout, or raise the server's limit. A pooler in front, such as PgBouncer, \
              lets many clients share fewer server connections.",
        },
    ),
    (
        Id::PoolBeyondClient,
        Explanation {
            means: "In a closed loop at one concurrency, a larger exclusive pool of one kind \
                served no more than a smaller one: at most 20% more throughput (and at most \
                a quarter of its growth in connections), with at most 10% of its latency \
                waiting for a client connection, while each request took at least 1.5 times \
                as long once it had a connection.",
            matters: "The requests queue beyond the client: a pool in between (a proxy's, such \
                  as PgBouncer's `default_pool_size`) or the server's own limit sets the \
                  throughput, serving about throughput × the smaller pool's request time at \
                  once. A larger client pool only moves the wait into that pool, where it \
                  shows as request time, and `pool-bound` is not raised for the smaller \
                  pool.",
            fix: "Keep the client pool at the smaller size, which served as much. To serve more, \
              raise the limit beyond the client: the proxy's pool or the server's.",
        },
    ),
    (
        Id::PoolBound,
        Explanation {
            means: "In a closed loop with more workers than the exclusive pool has connections, \
                throughput was within 15% of pool size ÷ mean request time and at least 30% \
                of the latency was spent waiting for a connection. It is not raised when the \
                run tried a larger pool of the same kind at the same concurrency that served \
                no more: the limit is then beyond the client, the case \
                `pool-beyond-client` looks at.",
            matters: "The pool, not the service, set the throughput: a larger pool would serve \
                  more. When the best cell is pool-bound at the largest pool size the run \
                  tried, `run` recommends none, since the larger pool was never tried.",
            fix: "Raise `--pool` and run again, or let `poolbench tune` search the size.",
        },
    ),
    (
        Id::PoolQueueing,
        Explanation {
            means: "More requests were in flight than the pool has connections (the c workers in \
                a closed loop, the achieved concurrency in an open one), and at least 5% of \
                the mean latency was spent waiting for a connection. It is not raised for a \
                cell that `streams-capped` explains.",
            matters: "Part of the latency is the wait for a connection in the client, not the \
                  service's time. That is expected when the pool is smaller than the load on \
                  purpose, but the latency then depends on the pool size as much as on the \
                  service.",
            fix: "If the wait is not wanted, raise `--pool` towards the load, or let `poolbench \
              tune` find the smallest pool that meets the SLO (`--slo`). The evidence gives \
              the wait and the latency to compare.",
        },
    ),
    (
        Id::Reconnects,
        Explanation {
            means: "A strategy that keeps its connections (any but `per-request` and \
                `take-or-create`) reopened connections while measuring. The evidence says \
                who closed them: the client after its own request timeouts, the server (end \
                of stream or reset), or the pool's idle timeout or maximum lifetime.",
            matters: "Each reopen puts a connect (and a TLS handshake, if any) inside the \
                  measurement, time the steady state would not pay. Connections the server \
                  closes point to a limit of its own the client does not follow.",
            fix: "Closed after the client's timeouts: the target was slow or froze, or \
              `--timeout` is too short. Closed by the server: check its keep-alive timeout \
              and its limit of requests per connection. Closed by the pool's limits: they \
              are shorter than the measurement.",
        },
    ),
    (
        Id::Stall,
        Explanation {
            means: "Requests were in flight and none succeeded for at least 2 s or 20 times the \
                cell's median latency, whichever is longer. The evidence gives when it began, \
                how long it lasted and how many requests timed out.",
            matters: "A frozen target holds the pool's connections without answering, so the \
                  cell's figures mix the freeze with normal service. The recommendation \
                  leaves out cells that stalled.",
            fix: "Find what froze the target at that time (a lock, a pause, a full listen queue, \
              a half-open connection). A request timeout (`--timeout`) is what gets the \
              connections back; run again for figures of a healthy target.",
        },
    ),
    (
        Id::StreamsCapped,
        Explanation {
            means: "A multiplexed strategy (`shared`, `round-robin`, `least-loaded`) had more \
                requests in flight than its connections × the streams the server allows per \
                connection (HTTP/2 and gRPC: `SETTINGS_MAX_CONCURRENT_STREAMS`), and at \
                least 5% of the mean latency was spent waiting for a stream.",
            matters: "The requests past the limit wait in the client, whatever the service could \
                  take, so the server's stream setting limits the strategy. The wait shows \
                  as latency, and `pool-queueing` is not raised for the cell.",
            fix: "Use more connections: at least the requests in flight ÷ the streams per \
              connection, rounded up, which the evidence computes (`round-robin:N` with \
              that N). Or raise the server's stream limit (`serve --max-concurrent-streams` \
              for the built-in server).",
        },
    ),
    (
        Id::TargetSaturated,
        Explanation {
            means: "In a closed loop, along one strategy's concurrency grid, the first step \
                where throughput grew by less than 5% while mean latency grew by more than \
                20%, with neither cell spending 10% or more of its latency waiting for a \
                client connection: the target is saturated from that concurrency on. The \
                evidence gives that concurrency, the plateau's throughput and how latency \
                grew up to the largest c.",
            matters: "Past saturation the target is the limit: more concurrency or more \
                  connections add queueing and latency, not throughput. A pool larger than \
                  that concurrency buys nothing.",
            fix: "Size the pool at or below that concurrency, or let `poolbench tune` find the \
              knee (the fewest requests in flight at which the fitted capacity curve \
              reaches 95% of its peak) and the pool from it. To serve more, the target itself needs more \
              capacity.",
        },
    ),
    (
        Id::TlsHandshakeBound,
        Explanation {
            means: "On a TLS target, time spent connecting (TCP and the TLS handshake) was 20% or \
                more of all the cell's request latency. The evidence counts full and resumed \
                handshakes and compares with a strategy in the same run that kept its \
                connections (more than 10 requests per connection), or says what a pool \
                would save per request.",
            matters: "The cell measures handshakes more than the service: a strategy that opens \
                  connections often pays for them in latency, and in CPU on both sides.",
            fix: "Use a strategy that keeps its connections (a pool, or `shared` on HTTP/2), and \
              keep `--tls-resume on` (the default) so that new connections resume a \
              session instead of a full handshake.",
        },
    ),
    (
        Id::TransactionPooler,
        Explanation {
            means: "PostgreSQL prepared statements failed as they do only through a proxy that \
                hands each transaction to any server connection (PgBouncer's transaction \
                mode and the like): SQLSTATE 26000 (the statement does not exist on this \
                server connection), 42P05 (another client prepared the same name on it), or \
                the proxy's own message saying so.",
            matters: "The run's figures mix failures of the protocol with the service's own, so \
                  `run` recommends no strategy for it.",
            fix: "Use `--query-mode extended` (the unnamed statement, parsed each time) or \
              `simple`, which work through a transaction-pooling proxy. To keep \
              `prepared`, connect to the database directly or through the proxy in session \
              mode.",
        },
    ),
    (
        Id::UnequalCaps,
        Explanation {
            means: "At one concurrency, different kinds of strategy (the part of the name before \
                `:`) were compared with different effective connection caps: each cell's \
                cap, or c where it has none or a larger one (`per-request` and \
                `take-or-create` count as c).",
            matters: "A strategy with more connections can win only because it has more, so the \
                  ranking at that concurrency compares caps, not strategies.",
            fix: "Give the strategies the same number of connections at each concurrency (for \
              example `pool:16` against `round-robin:16`), or compare sizes of one \
              strategy at a time.",
        },
    ),
];

#[cfg(test)]
mod tests {
    use super::{explain, Id};

    #[test]
    fn every_known_id_is_explained_in_sentences() {
        for id in &Id::ALL {
            let e = explain(id).unwrap_or_else(|| panic!("{id} has no explanation"));
            for text in [e.means, e.matters, e.fix] {
                assert!(!text.trim().is_empty(), "{id}: an empty text");
                assert!(
                    text.ends_with('.'),
                    "{id}: {text:?} does not end with a period"
                );
            }
        }
    }

    #[test]
    fn an_unknown_id_has_no_explanation() {
        assert_eq!(explain(&Id::Other("x".into())), None);
    }
}
