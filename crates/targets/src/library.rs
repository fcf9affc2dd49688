//! A protocol client's own pool run as a baseline strategy
//! (`mysql-async:N`): the engine checks connections out of it as it does
//! out of ours, so its checkout wait is measured the same way.
use crate::RequestError;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// What a client pool's checkout gives back.
pub type Checkout<'a, C> = Pin<Box<dyn Future<Output = Result<C, RequestError>> + Send + 'a>>;

/// What a client library's pool tells of itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClientPoolCounts {
    /// Connections it opened.
    pub opened: u64,
    /// Connections open now (in the pool and lent out).
    pub open: u64,
    /// Connections it failed to open.
    pub connect_errors: u64,
    /// Connections idle in the pool now.
    pub idle: u64,
}

/// A client library's pool of connections of type `C`: a checkout gives a
/// connection that goes back to that pool when dropped.
pub trait ClientPool<C>: Send + Sync {
    /// Wait for a connection (no timeout of its own: the caller's).
    fn get(&self) -> Checkout<'_, C>;

    /// Its counts now.
    fn counts(&self) -> ClientPoolCounts;
}

/// A client pool whose connections are wrapped (into `AnyConn`).
pub(crate) struct Wrapped<C, W> {
    pub(crate) inner: Arc<dyn ClientPool<C>>,
    pub(crate) wrap: fn(C) -> W,
}

impl<C: Send + 'static, W: Send + 'static> ClientPool<W> for Wrapped<C, W> {
    fn get(&self) -> Checkout<'_, W> {
        let wrap = self.wrap;
        let get = self.inner.get();
        Box::pin(async move { get.await.map(wrap) })
    }

    fn counts(&self) -> ClientPoolCounts {
        self.inner.counts()
    }
}
