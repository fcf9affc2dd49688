use crate::exclusive::Exclusive;
use crate::slots::{Held, Slots};
use crate::tracked::Tracked;
use crate::Connector;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

/// A connection on loan. Dropping it gives the connection back (or closes it
/// if it was marked broken); the capacity it held is freed either way.
pub struct Lease<C: Connector> {
    kind: Kind<C>,
    broken: bool,
    abandoned: bool,
    /// The holder's clock reading at the end of its use ([`Lease::done_at`]).
    done: Option<std::time::Instant>,
}

enum Kind<C: Connector> {
    Exclusive {
        owner: Arc<Exclusive<C>>,
        conn: Option<Box<Tracked<C::Conn>>>,
    },
    Slot {
        owner: Arc<Slots<C>>,
        held: Held<C::Conn>,
    },
}

impl<C: Connector> Lease<C> {
    pub(crate) fn exclusive(owner: Arc<Exclusive<C>>, conn: Box<Tracked<C::Conn>>) -> Self {
        Lease {
            kind: Kind::Exclusive {
                owner,
                conn: Some(conn),
            },
            broken: false,
            abandoned: false,
            done: None,
        }
    }

    pub(crate) fn slot(owner: Arc<Slots<C>>, held: Held<C::Conn>) -> Self {
        Lease {
            kind: Kind::Slot { owner, held },
            broken: false,
            abandoned: false,
            done: None,
        }
    }

    /// The connection failed: close it instead of giving it back.
    pub fn mark_broken(&mut self) {
        self.broken = true;
    }

    /// The holder gave up on a request (a timeout): the connection's state
    /// is unknown, so it is closed, and counted as closed by the client
    /// (`closed_abandoned`).
    pub fn mark_abandoned(&mut self) {
        self.broken = true;
        self.abandoned = true;
    }

    /// The holder's clock reading as it finished with the connection: the
    /// pool stamps the connection's return with it instead of reading the
    /// clock again (a clock read saved on every checkout).
    pub fn done_at(&mut self, at: std::time::Instant) {
        self.done = Some(at);
    }

    /// How long opening the connection took, if this checkout opened it
    /// (reported once: later calls, and later leases of it, give `None`).
    pub fn take_connect_time(&mut self) -> Option<std::time::Duration> {
        match &mut self.kind {
            Kind::Exclusive { conn, .. } => conn.as_mut().and_then(|t| t.fresh.take()),
            Kind::Slot { held, .. } => held.take_fresh(),
        }
    }

    /// When the connection was last given back (`None`: opened for this
    /// lease, or a shared connection): its idle time is the checkout's
    /// clock reading less this, with no clock read of its own. Read it
    /// right after the checkout, before [`Lease::take_connect_time`].
    pub fn returned_at(&self) -> Option<std::time::Instant> {
        match &self.kind {
            Kind::Exclusive { conn, .. } => conn
                .as_ref()
                .filter(|t| t.fresh.is_none())
                .map(|t| t.returned),
            Kind::Slot { .. } => None,
        }
    }

    fn conn(&self) -> &C::Conn {
        match &self.kind {
            Kind::Exclusive { conn, .. } => {
                &conn.as_ref().expect("a lease holds its connection").conn
            }
            Kind::Slot { held, .. } => held.conn(),
        }
    }

    fn conn_mut(&mut self) -> &mut C::Conn {
        match &mut self.kind {
            Kind::Exclusive { conn, .. } => {
                &mut conn.as_mut().expect("a lease holds its connection").conn
            }
            Kind::Slot { held, .. } => held.conn_mut(),
        }
    }
}

impl<C: Connector> Deref for Lease<C> {
    type Target = C::Conn;
    fn deref(&self) -> &C::Conn {
        self.conn()
    }
}

impl<C: Connector> DerefMut for Lease<C> {
    fn deref_mut(&mut self) -> &mut C::Conn {
        self.conn_mut()
    }
}

impl<C: Connector> Drop for Lease<C> {
    fn drop(&mut self) {
        match &mut self.kind {
            Kind::Exclusive { owner, conn } => {
                if self.abandoned {
                    owner.metrics.abandoned();
                }
                owner.checkin(conn.take(), self.broken, self.done)
            }
            Kind::Slot { owner, held } => {
                if self.abandoned {
                    owner.metrics.abandoned();
                }
                owner.checkin(held, self.broken)
            }
        }
    }
}
