//! A scenario file: a named experiment of one or more steps, each a server
//! to start (or a URL), a `run` of a grid against it, and what the step is
//! expected to show. Keys are those of `poolbench serve` and `poolbench
//! run`, spelled with underscores; an unknown key is an error with its
//! line and column.
use poolbench_model::findings::Id;
use serde::{Deserialize, Deserializer};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Scenario {
    /// Short name, as `scenario run NAME` takes it.
    pub(crate) name: String,
    /// One line: the question the experiment answers.
    pub(crate) title: String,
    /// What this shows: printed at the end of the report.
    pub(crate) shows: String,
    /// The services the steps need, started by the project's services
    /// script (`postgres`, `mysql`, `redis`, `pgbouncer`); their URLs come
    /// from `POOLBENCH_PG_URL`, `POOLBENCH_MYSQL_URL`, `POOLBENCH_REDIS_URL`,
    /// and `POOLBENCH_PGBOUNCER_SESSION_URL` and `POOLBENCH_PGBOUNCER_TX_URL`.
    #[serde(default)]
    pub(crate) needs: Vec<String>,
    /// Files to write each step's result to, as `-o` (which adds to them).
    #[serde(default)]
    pub(crate) output: Vec<std::path::PathBuf>,
    #[serde(rename = "step")]
    pub(crate) steps: Vec<Step>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Step {
    pub(crate) title: String,
    /// The built-in server to start for this step (`poolbench serve`);
    /// absent: `target` is an external URL.
    pub(crate) serve: Option<Serve>,
    /// The URL; `{http}` and `{grpc}` stand for the started server's
    /// listeners (`http://{http}/`, `grpc://{grpc}/`); `{postgres}`,
    /// `{pgbouncer_session}` and `{pgbouncer_tx}` for the services' URLs.
    pub(crate) target: String,
    pub(crate) run: Run,
    #[serde(default)]
    pub(crate) expect: Expect,
}

/// `poolbench serve` flags.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Serve {
    pub(crate) delay: Option<String>,
    pub(crate) cpu: Option<String>,
    pub(crate) max_inflight: Option<usize>,
    pub(crate) fail_rate: Option<f64>,
    pub(crate) stall: Option<String>,
    pub(crate) stall_every: Option<String>,
    #[serde(default)]
    pub(crate) batching: bool,
    #[serde(default)]
    pub(crate) grpc: bool,
    #[serde(default)]
    pub(crate) http1_only: bool,
    /// Service mode: serve /authors/{id} from a database: `true` or
    /// `"postgres"`, the PostgreSQL of `POOLBENCH_PG_URL`; `"mysql"`, the
    /// MySQL (MariaDB) of `POOLBENCH_MYSQL_URL`.
    #[serde(default)]
    pub(crate) db: Db,
    pub(crate) db_pool: Option<usize>,
    pub(crate) db_overflow: Option<usize>,
    pub(crate) db_timeout: Option<String>,
    pub(crate) db_delay: Option<String>,
    /// A Redis read-through cache (`POOLBENCH_REDIS_URL`).
    #[serde(default)]
    pub(crate) cache: bool,
    #[serde(default)]
    pub(crate) nested: bool,
}

/// The database of a service-mode step.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(untagged)]
pub(crate) enum Db {
    /// `true`: PostgreSQL; `false`: none.
    On(bool),
    /// `"postgres"` or `"mysql"`.
    Named(String),
}

impl Default for Db {
    fn default() -> Self {
        Db::On(false)
    }
}

impl Db {
    /// The database's name as `needs` spells it; `None` without one.
    pub(crate) fn name(&self) -> Option<&str> {
        match self {
            Db::On(false) => None,
            Db::On(true) => Some("postgres"),
            Db::Named(n) => Some(n),
        }
    }
}

/// The URLs of the services a scenario uses (from the environment).
#[derive(Debug, Default)]
pub(crate) struct Services {
    pub(crate) postgres: Option<String>,
    pub(crate) mysql: Option<String>,
    pub(crate) redis: Option<String>,
    /// PgBouncer in session mode, and in transaction mode.
    pub(crate) pgbouncer_session: Option<String>,
    pub(crate) pgbouncer_tx: Option<String>,
    /// nginx's HTTP/1.1 URL (OS package, one worker).
    pub(crate) nginx: Option<String>,
}

impl Services {
    /// `target` with the services' placeholders replaced by their URLs.
    pub(crate) fn fill(&self, target: &str) -> String {
        let mut t = target.to_string();
        for (key, url) in [
            ("{postgres}", &self.postgres),
            ("{pgbouncer_session}", &self.pgbouncer_session),
            ("{pgbouncer_tx}", &self.pgbouncer_tx),
            ("{nginx}", &self.nginx),
        ] {
            if let Some(url) = url {
                t = t.replace(key, url);
            }
        }
        t
    }
}

/// `poolbench run` flags.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Run {
    #[serde(default)]
    pub(crate) strategies: Vec<String>,
    #[serde(default)]
    pub(crate) concurrency: Vec<usize>,
    #[serde(default)]
    pub(crate) pool: Vec<usize>,
    pub(crate) duration: Option<String>,
    pub(crate) warmup: Option<String>,
    pub(crate) reps: Option<usize>,
    pub(crate) requests: Option<u64>,
    pub(crate) rate: Option<f64>,
    pub(crate) timeout: Option<String>,
    pub(crate) checkout_timeout: Option<String>,
    pub(crate) pipeline: Option<usize>,
    /// `--ramp`, as a string (`4..16/4s,16/2s`).
    pub(crate) ramp: Option<String>,
    /// The ramp's stages, from `concurrency`'s one value: each a target
    /// and how long it takes to get there.
    #[serde(default)]
    pub(crate) stages: Vec<RampStage>,
    pub(crate) slo: Option<String>,
    /// Any other `run` flags, as written on the command line.
    #[serde(default)]
    pub(crate) args: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RampStage {
    pub(crate) to: usize,
    pub(crate) over: String,
}

/// What the step should show; each is checked and the scenario exits 1
/// when one fails.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Expect {
    /// Findings the report must name (`pitfall` in older files).
    #[serde(default, alias = "pitfall", deserialize_with = "known_ids")]
    pub(crate) finding: Vec<Id>,
    /// Findings it must not name (`no_pitfall` in older files).
    #[serde(default, alias = "no_pitfall", deserialize_with = "known_ids")]
    pub(crate) no_finding: Vec<Id>,
    /// The strategy with the most throughput (or tied with it) at the
    /// step's highest concurrency.
    pub(crate) best: Option<String>,
    /// The recommended strategy (`pool:60`), or `none`.
    pub(crate) recommend: Option<String>,
    /// Some cell stalled (or none did).
    pub(crate) stall: Option<bool>,
    /// Some request failed (or none did).
    pub(crate) errors: Option<bool>,
    /// Every cell's throughput within this share (0.1 = 10%) of one value:
    /// the strategies measured nothing but the load's concurrency.
    pub(crate) same_throughput: Option<f64>,
}

/// Finding ids as an expectation names them: only those this version
/// finds, so a misspelt one is an error rather than an expectation met.
fn known_ids<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Id>, D::Error> {
    Vec::<String>::deserialize(d)?
        .iter()
        .map(|s| s.parse().map_err(serde::de::Error::custom))
        .collect()
}

/// Parse a scenario; errors name the line and column.
pub(crate) fn parse(text: &str, origin: &str) -> Result<Scenario, String> {
    let s: Scenario = toml::from_str(text).map_err(|e| {
        let at = e
            .span()
            .map(|span| {
                let before = &text[..span.start.min(text.len())];
                let line = before.matches('\n').count() + 1;
                let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
                format!(" at line {line}, column {column}")
            })
            .unwrap_or_default();
        format!(
            "{origin}{at}: {}",
            e.message().lines().next().unwrap_or("invalid scenario")
        )
    })?;
    if s.steps.is_empty() {
        return Err(format!("{origin}: no [[step]]"));
    }
    for n in &s.needs {
        if !matches!(
            n.as_str(),
            "postgres" | "mysql" | "redis" | "pgbouncer" | "nginx"
        ) {
            return Err(format!(
                "{origin}: needs = \"{n}\": postgres, mysql, redis, pgbouncer or nginx"
            ));
        }
    }
    for step in &s.steps {
        if let Some(Db::Named(n)) = step.serve.as_ref().map(|v| &v.db) {
            if !matches!(n.as_str(), "postgres" | "mysql") {
                return Err(format!(
                    "{origin}: step \"{}\": db = \"{n}\": true, \"postgres\" or \"mysql\"",
                    step.title
                ));
            }
        }
    }
    Ok(s)
}

impl Serve {
    /// The `poolbench serve` flags, with the service URLs given.
    pub(crate) fn args(&self, urls: &Services) -> Vec<String> {
        let db = match self.db.name() {
            Some("mysql") => Some(urls.mysql.clone().unwrap_or_default()),
            Some(_) => Some(urls.postgres.clone().unwrap_or_default()),
            None => None,
        };
        let mut a: Vec<String> = vec!["--listen".into(), "127.0.0.1:0".into()];
        let mut opt = |flag: &str, v: Option<String>| {
            if let Some(v) = v {
                a.push(flag.into());
                a.push(v);
            }
        };
        opt("--delay", self.delay.clone());
        opt("--cpu", self.cpu.clone());
        opt("--max-inflight", self.max_inflight.map(|n| n.to_string()));
        opt("--fail-rate", self.fail_rate.map(|n| n.to_string()));
        opt("--stall", self.stall.clone());
        opt("--stall-every", self.stall_every.clone());
        opt("--grpc-listen", self.grpc.then(|| "127.0.0.1:0".into()));
        opt("--db", db);
        opt("--db-pool", self.db_pool.map(|n| n.to_string()));
        opt("--db-overflow", self.db_overflow.map(|n| n.to_string()));
        opt("--db-timeout", self.db_timeout.clone());
        opt("--db-delay", self.db_delay.clone());
        opt(
            "--cache",
            self.cache.then(|| urls.redis.clone().unwrap_or_default()),
        );
        for (on, flag) in [
            (self.batching, "--batching"),
            (self.http1_only, "--http1-only"),
            (self.nested, "--nested"),
        ] {
            if on {
                a.push(flag.into());
            }
        }
        a
    }
}

impl Run {
    /// The `poolbench run` flags after the target.
    pub(crate) fn args(&self) -> Vec<String> {
        let mut a: Vec<String> = Vec::new();
        let mut opt = |flag: &str, v: Option<String>| {
            if let Some(v) = v {
                a.push(flag.into());
                a.push(v);
            }
        };
        let list = |v: &[String]| (!v.is_empty()).then(|| v.join(","));
        let nums = |v: &[usize]| {
            (!v.is_empty()).then(|| {
                v.iter()
                    .map(|n| n.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            })
        };
        opt("-s", list(&self.strategies));
        let stages = (!self.stages.is_empty()).then(|| {
            let start = self.concurrency.first().copied().unwrap_or(1);
            let rest: Vec<String> = self
                .stages
                .iter()
                .map(|s| format!("{}/{}", s.to, s.over))
                .collect();
            format!("{start}..{}", rest.join(","))
        });
        match stages.or_else(|| self.ramp.clone()) {
            Some(ramp) => opt("--ramp", Some(ramp)),
            None => opt("-c", nums(&self.concurrency)),
        }
        opt("--pool", nums(&self.pool));
        opt("-d", self.duration.clone());
        opt("--warmup", self.warmup.clone());
        opt("--reps", self.reps.map(|n| n.to_string()));
        opt("-n", self.requests.map(|n| n.to_string()));
        opt("--rate", self.rate.map(|n| n.to_string()));
        opt("--timeout", self.timeout.clone());
        opt("--checkout-timeout", self.checkout_timeout.clone());
        opt("--pipeline", self.pipeline.map(|n| n.to_string()));
        opt("--slo", self.slo.clone());
        a.extend(self.args.iter().cloned());
        a
    }
}
