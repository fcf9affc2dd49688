use crate::config::PoolConfig;
use crate::error::{AcquireError, BuildError};
use crate::exclusive::Exclusive;
use crate::lease::Lease;
use crate::metrics::{Metrics, MetricsSnapshot};
use crate::slots::Slots;
use crate::spec::StrategySpec;
use crate::Connector;
use std::sync::{Arc, Weak};
use std::time::Duration;

/// Connections from one connector, shared among callers as a
/// [`StrategySpec`] says. Cheap to clone; clones share the connections.
pub struct Strategy<C: Connector> {
    inner: Inner<C>,
    spec: StrategySpec,
    checkout_timeout: Duration,
}

enum Inner<C: Connector> {
    Exclusive(Arc<Exclusive<C>>),
    Slots(Arc<Slots<C>>),
}

impl<C: Connector> Clone for Strategy<C> {
    fn clone(&self) -> Self {
        let inner = match &self.inner {
            Inner::Exclusive(e) => Inner::Exclusive(e.clone()),
            Inner::Slots(s) => Inner::Slots(s.clone()),
        };
        Strategy {
            inner,
            spec: self.spec,
            checkout_timeout: self.checkout_timeout,
        }
    }
}

impl<C: Connector> Strategy<C> {
    /// Build the strategy `spec` names over `connector`. Sized strategies
    /// must carry their size ([`StrategySpec::with_size`]).
    pub fn new(spec: &StrategySpec, connector: C, config: PoolConfig) -> Result<Self, BuildError> {
        if spec.needs_size() {
            return Err(BuildError::MissingSize(spec.kind().to_string()));
        }
        let checkout_timeout = config.checkout_timeout;
        // (limit on leased, most kept idle, core size) for exclusive kinds.
        let shape = match *spec {
            StrategySpec::PerRequest => Ok((None, 0, 0)),
            StrategySpec::Shared => Err(1),
            StrategySpec::RoundRobin(n) => Err(n.unwrap_or(1)),
            StrategySpec::Pool(n) => {
                let n = n.unwrap_or(1);
                Ok((Some(n), n, n))
            }
            StrategySpec::Elastic(n, m) => {
                let (n, m) = (n.unwrap_or(1), m.unwrap_or(0));
                Ok((Some(n + m), n + m, n))
            }
            StrategySpec::TakeOrCreate(n) => {
                let n = n.unwrap_or(1);
                Ok((None, n, n))
            }
        };
        let inner = match shape {
            Ok((limit, max_idle, core)) => Inner::Exclusive(Arc::new(Exclusive::new(
                connector, limit, max_idle, core, config,
            ))),
            Err(slots) => Inner::Slots(Arc::new(Slots::new(connector, slots, config))),
        };
        let strategy = Strategy {
            inner,
            spec: *spec,
            checkout_timeout,
        };
        strategy.spawn_reaper();
        Ok(strategy)
    }

    /// Lease a connection: wait (in arrival order) for one to come free,
    /// or open one, within the checkout timeout.
    pub async fn acquire(&self) -> Result<Lease<C>, AcquireError<C::Error>> {
        match &self.inner {
            Inner::Exclusive(e) => {
                if let Some(c) = e.try_checkout() {
                    return Ok(Lease::exclusive(e.clone(), c));
                }
                match tokio::time::timeout(self.checkout_timeout, e.checkout()).await {
                    Ok(c) => Ok(Lease::exclusive(e.clone(), c?)),
                    Err(_) => Err(self.timed_out()),
                }
            }
            Inner::Slots(s) => {
                match tokio::time::timeout(self.checkout_timeout, s.checkout()).await {
                    Ok(g) => Ok(Lease::slot(s.clone(), g?)),
                    Err(_) => Err(self.timed_out()),
                }
            }
        }
    }

    fn timed_out(&self) -> AcquireError<C::Error> {
        self.raw_metrics().timeout();
        AcquireError::Timeout(self.checkout_timeout)
    }

    fn raw_metrics(&self) -> &Metrics {
        match &self.inner {
            Inner::Exclusive(e) => &e.metrics,
            Inner::Slots(s) => &s.metrics,
        }
    }

    /// The counters as they are now.
    pub fn metrics(&self) -> MetricsSnapshot {
        self.raw_metrics().snapshot()
    }

    /// What this strategy is.
    pub fn spec(&self) -> StrategySpec {
        self.spec
    }

    /// Connections open and not leased.
    pub fn idle(&self) -> usize {
        match &self.inner {
            Inner::Exclusive(e) => e.idle_count(),
            Inner::Slots(s) => s.idle_count(),
        }
    }

    /// Close every connection not leased now.
    pub fn close_idle(&self) {
        match &self.inner {
            Inner::Exclusive(e) => e.close_idle(),
            Inner::Slots(s) => s.close_idle(),
        }
    }

    /// Close expired and surplus idle connections in the background while
    /// the strategy lives (when built inside a tokio runtime).
    fn spawn_reaper(&self) {
        let Inner::Exclusive(e) = &self.inner else {
            return;
        };
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let c = &e.config;
        let every = [c.idle_timeout, Some(c.overflow_grace)]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(Duration::from_secs(1))
            .clamp(Duration::from_millis(10), Duration::from_secs(1))
            / 2;
        let weak: Weak<Exclusive<C>> = Arc::downgrade(e);
        handle.spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                match weak.upgrade() {
                    Some(e) => e.reap(),
                    None => return,
                }
            }
        });
    }
}
